"""Shared fixtures. `make_metadata` builds a valid rigid layout: taxels spread over the five distal
segments, each taxel's frame turned a little so orientation errors cannot hide."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from wuji_tactile_device import HandJoint, TactileMetadata
from wuji_tactile_device.contract.geometry import matrix_to_quat, rpy_to_matrix

DISTAL_JOINTS = (HandJoint.THUMB_DISTAL, HandJoint.INDEX_DISTAL, HandJoint.MIDDLE_DISTAL,
                 HandJoint.RING_DISTAL, HandJoint.LITTLE_DISTAL)


def make_metadata(num_taxels: int = 20, joint_ids=DISTAL_JOINTS, seed: int = 0) -> TactileMetadata:
    rng = np.random.default_rng(seed)
    J = len(joint_ids)
    seg = np.zeros((J, 7))
    seg[:, :3] = rng.uniform(-0.08, 0.08, (J, 3))
    seg[:, 3:] = matrix_to_quat(rpy_to_matrix(rng.uniform(-1, 1, (J, 3))))
    tax = np.zeros((num_taxels, 7))
    tax[:, :3] = rng.uniform(-0.1, 0.1, (num_taxels, 3))
    tax[:, 3:] = matrix_to_quat(rpy_to_matrix(rng.uniform(-1, 1, (num_taxels, 3))))
    return TactileMetadata.rigid(joint_ids, seg, tax, np.arange(num_taxels) % J)


def free_zenoh_port() -> str:
    """A loopback TCP port free now, for `WUJI_TACTILE_ZENOH_PORT`: a test's processes find each
    other on it and nothing else. On the default port every process of the machine meets — the
    other xdist worker's producers, a user's running sim — and a README command that expects no
    producer on tactile/right then hears one (seen beside a second suite)."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


@pytest.fixture
def metadata() -> TactileMetadata:
    return make_metadata()


# -- Recordings several test files read: made once per session by a real `wuji-tactile` process ----
# The full press scenario takes seconds of CPU; the files that only READ it (validate, load, compare)
# share one run. A test never writes into these files: each fixture checks at the end of the session
# that its file is byte-for-byte what the run wrote, so a test that modified it fails loudly.

def _wuji_tactile(*argv: str) -> subprocess.CompletedProcess:
    script = shutil.which("wuji-tactile", path=str(Path(sys.executable).parent))
    command = [script] if script else [sys.executable, "-m", "wuji_tactile_device.cli"]
    env = dict(os.environ, WUJI_TELEMETRY_DISABLE="1")
    return subprocess.run([*command, *argv], capture_output=True, text=True, timeout=300, env=env)


def _shared_run(tmp_path_factory, name: str, *argv: str):
    path = tmp_path_factory.mktemp("shared") / name
    result = _wuji_tactile(*argv, "--record", str(path))
    digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None
    yield path, result
    after = hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None
    assert after == digest, f"{path}: a test modified the shared recording (copy it before writing)"


@pytest.fixture(scope="session")
def sim_press_run(tmp_path_factory):
    """(path, result) of `wuji-tactile sim --scenario press --record press.mcap --quiet`: the whole
    13 s press, recorded by a real process once per session. Read-only."""
    yield from _shared_run(tmp_path_factory, "press.mcap", "sim", "--scenario", "press", "--quiet")


@pytest.fixture(scope="session")
def hw_emulate_run(tmp_path_factory):
    """(path, result) of `wuji-tactile hw --emulate --fast --record hw.mcap` (the default scenario,
    press), by a real process once per session. Read-only."""
    yield from _shared_run(tmp_path_factory, "hw.mcap", "hw", "--emulate", "--fast")
