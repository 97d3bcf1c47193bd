"""R20: what a SIGKILL of a recording costs, in the data's own time.

The recorder flushes once the records since its last flush reach `flush_period_s` past the last
flushed one on their own log-time line, so a kill loses less than 0.5 s of the data's time however
fast the data comes or however loaded the machine is. The points of the kills are points of the
data (frame K of a producer on its own simulated clock, seeded), not of the wall clock: the
test's verdict cannot depend on the machine's speed."""
from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from mcap.reader import make_reader

from wuji_tactile_device.recording import McapRecorder, recover

HERE = Path(__file__).parent
CHILD = HERE / "kill_child.py"
BOUND_NS = 500_000_000  # McapRecorder's default flush_period_s, in log time
PERIOD_NS = 10_000_000  # the child's frame period (its own clock)


def _data_frames(path: Path, topic: str = "tactile/right"):
    """(log time, fz of taxel 0) of every data message of `topic` in a complete MCAP file."""
    from wuji_tactile_device.contract import decode_tactile_record

    out = []
    with open(path, "rb") as f:
        for _schema, _channel, message in make_reader(f).iter_messages(topics=[topic]):
            rec = decode_tactile_record(message.data)
            out.append((message.log_time, float(np.asarray(rec.forces)[0, 2])))
    return out


def _kill_at(tmp_path: Path, k: int, *extra: str) -> tuple[int, Path]:
    """Run the child until its frame `k` is written, SIGKILL it there, recover the file; returns
    (the log time of frame k, the recovered file)."""
    out = tmp_path / f"killed_{k}.mcap"
    proc = subprocess.Popen([sys.executable, str(CHILD), str(out), "--stop-at", str(k), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("written "), f"child did not reach frame {k}: {line!r} {proc.stderr.read()}"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    fixed = tmp_path / f"recovered_{k}.mcap"
    recover(out, fixed)
    return int(line.split()[1]), fixed


KILL_POINTS = sorted(random.Random(20).sample(range(20, 600), 5))  # 5 seeded points of the data


@pytest.mark.parametrize("k", KILL_POINTS)
def test_r20_a_sigkill_loses_under_half_a_second_of_the_data(tmp_path, k):
    written, fixed = _kill_at(tmp_path, k)
    frames = _data_frames(fixed)
    assert frames, f"nothing kept of {k} frames ({k * PERIOD_NS / 1e9:.2f} s of data)"
    times = [t for t, _ in frames]
    assert np.all(np.diff(times) == PERIOD_NS), "a hole before the cut"
    assert [fz for _, fz in frames] == [float(np.float32(-j * 1e-3)) for j in range(len(frames))]
    lost = written - times[-1]
    assert 0 <= lost < BOUND_NS, f"frame {k} written, last kept {lost / 1e9:.3f} s of data earlier"


def test_r20_data_time_flush_in_process(tmp_path):
    """The same bound without a process: the bytes on disk while the recorder is open (what a
    kill leaves) hold every record up to within flush_period_s of log time of the last written,
    for data arriving 100× faster than real time and for one poll draining a 3 s backlog."""
    from conftest import make_metadata
    from wuji_tactile_device.streams.inproc import InProcessBus
    from wuji_tactile_device.streams.publisher import TactilePublisher

    bus = InProcessBus()
    path = tmp_path / "open.mcap"
    rec = McapRecorder(path, flush_period_s=0.25)
    rec.add_collection(bus, "tactile/right")
    pub = TactilePublisher("tactile/right", make_metadata(176), bus)
    forces = np.zeros((176, 3), np.float32)
    t0 = time.monotonic_ns()  # the publisher's metadata record is stamped on this clock too
    for k in range(300):  # 3 s of data, published before the one poll that drains it
        forces[:, 2] = -k * 1e-3
        pub.publish(forces, sample_time_ns=t0 + k * PERIOD_NS, available_time_ns=t0 + k * PERIOD_NS)
    rec.poll()
    snapshot = tmp_path / "snapshot.mcap"
    snapshot.write_bytes(path.read_bytes())
    fixed = tmp_path / "snapshot_fixed.mcap"
    recover(snapshot, fixed)
    frames = _data_frames(fixed)
    last_written = rec.log_time_offset_ns + t0 + 299 * PERIOD_NS
    assert len(frames) >= 300 - 25  # < 0.25 s of data at 100 Hz is < 25 frames
    assert last_written - frames[-1][0] < 250_000_000
    rec.close()
    assert len(_data_frames(path)) == 300


def test_r20_one_far_off_log_time_costs_one_extra_flush(tmp_path):
    """A record far off the time line (a peer's far-future stamp) restarts the window once; it
    does not turn every later record into a chunk of its own."""
    path = tmp_path / "outlier.mcap"
    rec = McapRecorder(path)
    ch = rec.add_json_channel("aux/test", {"type": "object"}, schema_name="test.Counter")
    t0 = time.monotonic_ns()
    for k in range(200):  # 2 s of data at 100 Hz on its own clock: 4 data-time flushes
        t = t0 + k * PERIOD_NS if k != 50 else t0 + (1 << 60)
        rec.write_json(ch, {"k": k}, log_time_ns=t, publish_time_ns=t)
    rec.close()
    with open(path, "rb") as f:
        chunks = len(make_reader(f).get_summary().chunk_indexes)
    assert 4 <= chunks <= 4 + 2, chunks
