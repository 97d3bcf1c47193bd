"""`wuji-tactile replay` prints several collections strictly in log-time order, whatever their
rates (it follows `McapReplay.next_collection()`; round-robin over the trackers interleaved the
hands by count: 0.1046 left, 0.2307 right, 0.1098 left, …), as fast as possible and paced."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from wuji_tactile_device.contract.metadata import encode_metadata_record
from wuji_tactile_device.contract.naming import Stream
from wuji_tactile_device.contract.records import DeviceDataTimestamp, encode_tactile_record
from wuji_tactile_device.producers.sim.layout_metadata import sim_metadata
from wuji_tactile_device.recording import McapRecorder

SCRIPT = shutil.which("wuji-tactile", path=str(Path(sys.executable).parent)) or "wuji-tactile"
T0 = 1_000_000_000


def two_hands(path: Path) -> list[tuple[float, str]]:
    """Left at 100 Hz for 0.6 s, right at 37 Hz, written in arrival order; returns the expected
    (t [s] after the first message, collection) of every frame in log-time order."""
    events = sorted([(T0 + 10_000_000 * k + 5_000_000, "tactile/left") for k in range(60)]
                    + [(T0 + 27_027_027 * k + 3_000_000, "tactile/right") for k in range(22)])
    with McapRecorder(path) as rec:
        for cid, side in (("tactile/left", "left"), ("tactile/right", "right")):
            rec.write(cid, Stream.METADATA, encode_metadata_record(sim_metadata(side), DeviceDataTimestamp(T0, T0, 0)), 1, 0)
        seq = {"tactile/left": 0, "tactile/right": 0}
        forces = np.zeros((176, 3), np.float32)
        for t, cid in events:
            forces[0, 2] = -0.001 * seq[cid]  # a per-collection counter the printed line shows
            rec.write(cid, Stream.DATA, encode_tactile_record(forces, DeviceDataTimestamp(t, t, t)), 1, seq[cid])
            seq[cid] += 1
    return [((t - T0) / 1e9, cid) for t, cid in events]


def printed(path: Path, *extra: str) -> list[tuple[float, str]]:
    r = subprocess.run([SCRIPT, "replay", str(path), *extra], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, WUJI_TELEMETRY_DISABLE="1"))
    assert r.returncode == 0, r.stderr
    return [(float(line.split()[0]), line.split()[2]) for line in r.stdout.splitlines()]


@pytest.mark.parametrize("extra", [(), ("--speed", "4")], ids=["fast", "paced"])
def test_replay_prints_two_hands_at_different_rates_in_log_time_order(tmp_path, extra):
    path = tmp_path / "two.mcap"
    expected = two_hands(path)
    got = printed(path, *extra)
    assert [c for _, c in got] == [c for _, c in expected]
    np.testing.assert_allclose([t for t, _ in got], [t for t, _ in expected], atol=1e-4)
