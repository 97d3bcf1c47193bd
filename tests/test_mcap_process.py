"""Real processes: kill -9 of a recorder loses at most the last second, SIGINT leaves a complete
file, and Foxglove's FlatBuffers decoder (tools/foxglove_check) reads every recorded topic."""
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
from streams_helpers import free_port as _free_port
from wuji_tactile_device.errors import RecordingWarning
from wuji_tactile_device.recording import McapReplay
from wuji_tactile_device.recording.inspect import inspect_file
from wuji_tactile_device.streams.tracker import TactileTracker

HERE = Path(__file__).parent
CHILD = HERE / "record_child.py"
FOXGLOVE_CHECK = HERE.parent / "tools" / "foxglove_check" / "check.py"


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
def test_every_topic_decodes_in_foxglove(tmp_path):
    path = tmp_path / "fox.mcap"
    record(path, 5, collections=("tactile/right", "tactile/left"))
    r = subprocess.run([sys.executable, str(FOXGLOVE_CHECK), str(path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    for topic in ("tactile/right", "tactile/right/metadata", "tactile/left", "tactile/left/metadata"):
        assert f"ok      {topic} (" in r.stdout




def test_cli_record_over_zenoh_then_ctrl_c_gives_a_valid_file_that_replays_bit_exact(tmp_path):
    """`wuji-tactile record` as a real process on loopback Zenoh; Ctrl-C (SIGINT) finishes the file."""
    import secrets

    from conftest import make_metadata
    from wuji_tactile_device.streams.publisher import TactilePublisher
    from wuji_tactile_device.streams.zenoh_transport import ZenohTransport

    port = _free_port()
    cid = f"mcaptest/{secrets.token_hex(4)}"  # unique: other tests may share the loopback Zenoh mesh
    out = tmp_path / "cli.mcap"
    proc = subprocess.Popen([sys.executable, "-m", "wuji_tactile_device.cli", "record", "-c", cid,
                             "--zenoh-listen", f"tcp/127.0.0.1:{port}", "--hand-side", "right", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while not out.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert out.exists(), proc.stderr.read() if proc.poll() is not None else "recorder did not create its file"
        rng = np.random.default_rng(7)
        sent = {}
        with ZenohTransport(listen=[], connect=[f"tcp/127.0.0.1:{port}"]) as transport:
            with TactilePublisher(cid, make_metadata(176), transport, metadata_period_s=0.2) as pub:
                time.sleep(0.5)  # let the subscription reach the recorder
                for _ in range(150):
                    f = rng.normal(0, 1, (176, 3)).astype(np.float32)
                    sent[pub.publish(f, sample_time_ns=time.monotonic_ns())] = f
                    time.sleep(0.01)
                time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr  # Ctrl-C: 128 + SIGINT, after the file is finished
    assert "wrote" in stderr
    report = inspect_file(out)
    assert report.ok, report.text()
    with open(out, "rb") as f:
        file_meta = {m.name: m.metadata for m in make_reader(f).iter_metadata()}
    assert file_meta["wuji_tactile_device"]["hand_side"] == "right"
    with McapReplay(out) as replay:
        tr = TactileTracker(cid, replay)
        frames = []
        while not replay.finished:
            if tr.update():
                frames.append(tr.get_data())
    assert len(frames) >= 140  # Zenoh on loopback loses nothing once connected
    assert all(fr.forces.tobytes() == sent[fr.sequence].tobytes() for fr in frames)


def test_cli_replay_publish_reaches_a_live_tracker_over_zenoh(tmp_path):
    """`wuji-tactile replay --publish` puts a recording back on Zenoh in real time; a tracker that
    joins late still gets the layout (metadata repeated every second, as a live producer does)."""
    import secrets

    from wuji_tactile_device.streams.zenoh_transport import ZenohTransport

    cid = f"mcaptest/{secrets.token_hex(4)}"
    path = tmp_path / "src.mcap"
    from conftest import make_metadata
    from wuji_tactile_device.contract import DeviceDataTimestamp, encode_metadata_record, encode_tactile_record
    from wuji_tactile_device.recording import McapRecorder
    from wuji_tactile_device.streams.base import Stream

    md = make_metadata(40)
    rng = np.random.default_rng(5)
    sent = {}
    with McapRecorder(path) as rec:
        rec.write(cid, Stream.METADATA, encode_metadata_record(md, DeviceDataTimestamp(0, 0, 0)), 42, 0)
        for i in range(250):  # 2.5 s at 100 Hz
            f = rng.normal(0, 1, (40, 3)).astype(np.float32)
            sent[i] = f
            t = 1_000 + i * 10_000_000
            rec.write(cid, Stream.DATA, encode_tactile_record(f, DeviceDataTimestamp(t, t, t)), 42, i)
    port = _free_port()
    with ZenohTransport(listen=[f"tcp/127.0.0.1:{port}"], connect=[]) as transport:
        tracker = TactileTracker(cid, transport)
        proc = subprocess.Popen([sys.executable, "-m", "wuji_tactile_device.cli", "replay", str(path), "--publish",
                                 "--speed", "1", "--zenoh", f"tcp/127.0.0.1:{port}"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        frames = []
        try:
            deadline = time.monotonic() + 30
            while proc.poll() is None and time.monotonic() < deadline:
                tracker.update()
                f = tracker.get_data()
                if f is not None and (not frames or frames[-1].sequence != f.sequence):
                    frames.append(f)
                time.sleep(0.002)
            _, stderr = proc.communicate(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
        tracker.update()
    assert proc.returncode == 0, stderr
    assert "published 251 recorded messages" in stderr
    assert tracker.get_metadata() == md
    assert len(frames) >= 100  # everything after the first metadata the late tracker received
    assert all(f.forces.tobytes() == sent[f.sequence].tobytes() for f in frames)
    assert tracker.counters.producer_sessions == 1 and tracker.counters.liveliness_lost == 1
