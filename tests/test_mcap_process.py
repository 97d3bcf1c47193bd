"""Real processes: kill -9 of a recorder loses at most the last second, SIGINT leaves a complete
file, and Foxglove's FlatBuffers decoder (the shared checker) reads every recorded topic."""
from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from mcap.reader import make_reader

from mcap_helpers import record
from wuji_tactile_device.errors import RecordingWarning
from wuji_tactile_device.recording import McapReplay
from wuji_tactile_device.recording.inspect import inspect_file
from wuji_tactile_device.tracker import TactileTracker

HERE = Path(__file__).parent
CHILD = HERE / "record_child.py"
FOXGLOVE_CHECK = HERE.parent.parent / "shared" / "tools" / "foxglove_check" / "check.py"


def _start_child(out: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, str(CHILD), str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    line = proc.stdout.readline()
    if line.strip() != "ready":
        proc.kill()
        raise AssertionError(f"recorder child did not start: {line!r} {proc.stderr.read()}")
    return proc


def _replay(path: Path):
    with McapReplay(path) as replay:
        tr = TactileTracker("tactile/right", replay)
        frames = []
        while not replay.finished:
            if tr.update():
                frames.append(tr.get_data())
    return frames


def test_kill_9_loses_at_most_the_last_second(tmp_path):
    out = tmp_path / "killed.mcap"
    proc = _start_child(out)
    time.sleep(2.3)
    killed_at = time.monotonic_ns()  # CLOCK_MONOTONIC is shared by every process on the machine
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frames = _replay(out)
    assert any(issubclass(w.category, RecordingWarning) for w in caught)
    assert frames, "nothing survived the kill"
    assert [f.sequence for f in frames] == list(range(len(frames)))  # no hole before the cut
    assert [f.forces[0, 2] for f in frames[:3]] == [np.float32(-k * 1e-3) for k in range(3)]
    last = frames[-1].timestamp.available_time_local_common_clock
    assert killed_at - last <= 1_000_000_000, f"lost {(killed_at - last) / 1e9:.3f} s"
    assert len(frames) >= 150  # ≥ 1.5 s of the ~2.9 s recorded at 100 Hz survived


def test_sigint_leaves_a_complete_valid_file(tmp_path):
    out = tmp_path / "interrupted.mcap"
    proc = _start_child(out)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 0, stderr
    published = int(stdout.split("published")[1])
    report = inspect_file(out)
    assert report.ok and report.scan.complete, report.text()
    with open(out, "rb") as f:
        reader = make_reader(f)
        stats = reader.get_summary().statistics
    assert stats.message_count == published + 1  # every frame plus the metadata once
    with warnings.catch_warnings():
        warnings.simplefilter("error", RecordingWarning)  # an intact file replays without a warning
        assert len(_replay(out)) == published


@pytest.mark.skipif(not (shutil.which("node") and shutil.which("npm")),
                    reason="Node.js and npm are needed to run Foxglove's FlatBuffers decoder")
@pytest.mark.skipif(not FOXGLOVE_CHECK.exists(), reason=f"the shared checker is not at {FOXGLOVE_CHECK}")
def test_every_topic_decodes_in_foxglove(tmp_path):
    path = tmp_path / "fox.mcap"
    record(path, 5, collections=("tactile/right", "tactile/left"))
    r = subprocess.run([sys.executable, str(FOXGLOVE_CHECK), str(path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    for topic in ("tactile/right", "tactile/right/metadata", "tactile/left", "tactile/left/metadata"):
        assert f"ok      {topic} (" in r.stdout
