"""The one run loop (`producers.base.ProducerRunner`): metadata republished on a timer even while
a producer is stalled, pacing, limits, per-frame side payloads reaching sinks with the published
sequence and times, recording, and a clean stop on SIGINT/SIGTERM (`sim --record` in a real
process: finished, valid MCAP and the documented exit code)."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from mcap.reader import make_reader

from streams_helpers import forces_for, small_metadata
from wuji_tactile_device.contract.naming import Stream
from wuji_tactile_device.producers.base import Frame, FrameSink, Producer, ProducerRunner, run_together
from wuji_tactile_device.recording import inspect_file
from wuji_tactile_device.streams.base import Message
from wuji_tactile_device.streams.inproc import InProcessBus
from wuji_tactile_device.streams.tracker import TactileTracker

CID = "tactile/right"
MD = small_metadata()


class FakeClock:
    """The runner's clock and sleep: sleeping advances time, and first hands the bus's messages
    to `on_sleep` stamped with the time they were published at."""

    def __init__(self, on_sleep=None):
        self.now = 1_000_000_000
        self.sleeps: list[float] = []
        self.on_sleep = on_sleep

    def clock_ns(self) -> int:
        return self.now

    def sleep(self, s: float) -> None:
        assert s > 0, "the loop must never sleep for nothing"
        if self.on_sleep is not None:
            self.on_sleep(self.now)
        self.sleeps.append(s)
        self.now += round(s * 1e9)


class Scripted(Producer):
    """Frames 0..frames-1 (fz encodes the index), then nothing: a stalled source, or with
    `finite=True` a finished one."""

    def __init__(self, frames: int, *, period_s: float | None = None, extras: bool = False, finite: bool = False):
        self.collection_id, self.metadata, self.period_s = CID, MD, period_s
        self.frames, self.calls, self.made, self.extras, self.finite = frames, 0, 0, extras, finite
        self.published: list[tuple[int, int]] = []  # on_published: (sequence, available time)

    def next_frame(self) -> Frame | None:
        self.calls += 1
        if self.made >= self.frames:
            return None
        k, self.made = self.made, self.made + 1
        self.finished = self.finite and self.made == self.frames
        return Frame(forces_for(k, MD.num_taxels), sample_time_ns=1000 + k, device_time_ns=7000 + k,
                     extras={"pose": {"k": k}} if self.extras else None)

    def frames_waiting(self) -> bool:  # source-driven: a burst, every frame ready at once
        return self.period_s is None and self.made < self.frames

    def on_published(self, frame, sequence, timestamp) -> None:
        self.published.append((sequence, timestamp.available_time_local_common_clock))


def _stamped(bus):
    """Subscribe to the collection; returns (events list, drain(t) that stamps what arrived with t)."""
    sub = bus.subscribe(CID)
    got: list[tuple[int, Stream]] = []

    def drain(t: int) -> None:
        got.extend((t, ev.stream) for ev in sub.drain() if isinstance(ev, Message))

    return got, drain


@pytest.mark.parametrize("period_s", [None, 0.01], ids=["source-driven", "on-demand-paced"])
def test_a_stalled_producer_keeps_announcing_its_layout_every_period(period_s):
    """5 frames, then no frame for 5 s (fake clock): the data stops, and the metadata record keeps
    coming every 0.5 s — a consumer joining during the stall still learns the layout."""
    bus = InProcessBus()
    got, drain = _stamped(bus)
    clock = FakeClock(on_sleep=drain)
    producer = Scripted(5, period_s=period_s)
    runner = ProducerRunner(producer, bus, metadata_period_s=0.5, speed=1.0, clock_ns=clock.clock_ns,
                            sleep=clock.sleep)
    start = clock.now
    counters = runner.run(duration_s=5.25, handle_signals=False)
    drain(clock.now)
    runner.close()
    data = [t for t, s in got if s is Stream.DATA]
    meta = [t for t, s in got if s is Stream.METADATA]
    assert len(data) == 5 and counters.published == 5 and counters.stop_reason == "duration"
    last_frame = max(data)
    assert last_frame - start < 60_000_000  # the frames came at the start (paced: 10 ms apart)
    during_stall = [t for t in meta if t > last_frame]
    # t = 0.5, 1.0, ..., 5.0 s: ten republications while no frame came, one period apart
    assert len(during_stall) == 10 and counters.metadata_published == 11
    gaps = np.diff([start] + during_stall) / 1e9
    assert np.all(np.abs(gaps - 0.5) <= 0.001), gaps
    assert counters.idle_polls > 0 and max(clock.sleeps) <= 0.5


def test_a_stalled_producer_republishes_on_the_real_clock_too():
    """Same property with the real clock and a live tracker joining during the stall."""
    bus = InProcessBus()
    producer = Scripted(3)
    with ProducerRunner(producer, bus, metadata_period_s=0.05) as runner:
        runner.step()  # the three frames go out before anyone listens
        late = TactileTracker(CID, bus)
        t0 = time.monotonic()
        counters = runner.run(duration_s=0.5, handle_signals=False)
        elapsed = time.monotonic() - t0
    late.update()
    assert late.get_metadata() == MD and late.get_data() is None  # layout learned, no frame since
    # 0.5 s / 0.05 s: about ten republications (a loaded machine may lose a few, never double them)
    assert 5 <= counters.metadata_published - 1 <= elapsed / 0.05 + 1
    assert counters.published == 3


def test_pacing_real_time_times_speed_and_as_fast_as_possible():
    clock = FakeClock()
    producer = Scripted(20, period_s=0.01)
    ProducerRunner(producer, None, speed=2.0, clock_ns=clock.clock_ns, sleep=clock.sleep).run(
        handle_signals=False, max_frames=20)
    assert producer.calls == 20 and clock.now - 1_000_000_000 == pytest.approx(19 * 5_000_000, abs=1)
    fast = FakeClock()
    counters = ProducerRunner(Scripted(20, period_s=0.01, finite=True), None, speed=None, clock_ns=fast.clock_ns,
                              sleep=fast.sleep).run(handle_signals=False)
    assert fast.sleeps == [] and (counters.published, counters.stop_reason) == (20, "finished")


def test_limits_and_finished_producers_stop_the_loop():
    c = ProducerRunner(Scripted(50, period_s=0.01), None).run(max_frames=7, handle_signals=False)
    assert (c.published, c.stop_reason) == (7, "max_frames")
    c = ProducerRunner(Scripted(4, period_s=0.01, finite=True), None).run(handle_signals=False)
    assert (c.published, c.stop_reason) == (4, "finished")


def test_extras_reach_sinks_with_the_published_sequence_and_times():
    """A frame's side payloads (the hook for e.g. hand poses) arrive at every sink together with
    the sequence and timestamps the tracker sees on that data record."""
    bus = InProcessBus()
    tracker = TactileTracker(CID, bus)

    class Keep(FrameSink):
        seen: list = []

        def on_frame(self, frame, sequence, timestamp):
            self.seen.append((dict(frame.extras), sequence, timestamp))

    sink = Keep()
    producer = Scripted(6, extras=True)
    with ProducerRunner(producer, bus, sinks=[sink]) as runner:
        assert runner.step() == 6
    frames = list(tracker.frames())
    assert [s for _, s, _ in sink.seen] == [f.sequence for f in frames] == list(range(6))
    assert [e["pose"]["k"] for e, _, _ in sink.seen] == list(range(6))
    assert [ts for _, _, ts in sink.seen] == [f.timestamp for f in frames]
    assert [f.timestamp.sample_time_raw_device_clock for f in frames] == [7000 + k for k in range(6)]
    assert producer.published == [(f.sequence, f.timestamp.available_time_local_common_clock) for f in frames]


def test_declared_hand_poses_and_collection_land_in_one_valid_file(tmp_path):
    """The run function subscribes the recorder before the publisher exists (the first metadata
    is in the file), asks the producer for the side data it declares and records it on the hand
    channels next to the collection, frame for frame at the tactile record's log time."""
    from wuji_tactile_device.contract.side_data import EXTRA_HAND_POSES, HandChannels, HandPoses
    from wuji_tactile_device.run import RecordOptions, run

    class WithHands(Scripted):
        extras_provided = frozenset({EXTRA_HAND_POSES})
        hand_channels = HandChannels("gloves", "test base")

        def next_frame(self):
            frame = super().next_frame()
            if frame is not None and EXTRA_HAND_POSES in self.extras_wanted:
                poses = np.zeros((26, 7))
                poses[:, 6] = 1.0
                poses[:, 0] = len(self.published)  # x = the frame's index
                frame.extras = {EXTRA_HAND_POSES: HandPoses({"right": poses})}
            return frame

    path = tmp_path / "run.mcap"
    run([WithHands(8)], transport=InProcessBus(), record=RecordOptions(path), handle_signals=False, duration_s=0.2)
    assert inspect_file(path).ok
    topics: dict[str, list] = {}
    with open(path, "rb") as f:
        for schema, channel, m in make_reader(f).iter_messages():
            topics.setdefault(channel.topic, []).append((schema.name, m))
    data, right, left = topics[CID], topics["gloves/right_hand"], topics["gloves/left_hand"]
    assert len(topics[f"{CID}/metadata"]) == 1 and len(data) == len(right) == len(left) == 8
    assert [m.log_time for _, m in data] == [m.log_time for _, m in right] == [m.log_time for _, m in left]
    from wuji_tactile_device.recording.hand_channels import decode_hand_message

    got = [decode_hand_message(name, m.data) for name, m in right]  # the default profile's viewer twin
    assert [float(r.poses[0, 0]) for r in got] == list(range(8))  # frame k's poses beside frame k
    assert all(decode_hand_message(name, m.data).poses is None for name, m in left)  # the other hand: not tracked


def test_bad_runner_arguments_are_value_errors():
    with pytest.raises(ValueError, match="metadata_period_s must be > 0 s, got 0"):
        ProducerRunner(Scripted(1), None, metadata_period_s=0)
    with pytest.raises(ValueError, match="speed must be > 0"):
        ProducerRunner(Scripted(1), None, speed=-1.0)
    with pytest.raises(ValueError, match="recording needs a transport"):
        ProducerRunner(Scripted(1), None, recorder=object())
    with pytest.raises(ValueError, match="at least one runner"):
        run_together([])


def test_signal_handlers_are_restored_after_a_run():
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    assert ProducerRunner(Scripted(2, period_s=0.01, finite=True), None).run().stop_reason == "finished"
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


SCRIPT = shutil.which("wuji-tactile", path=str(Path(sys.executable).parent)) or "wuji-tactile"


@pytest.mark.parametrize("signum,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_signal_on_sim_record_leaves_a_finished_valid_file(tmp_path, signum, code):
    """`wuji-tactile sim --record` stopped by a signal mid-run: exit 128 + signal, "interrupted at
    t = …; checks not run" (not a list of checks that could not be reached), the MCAP finished
    (summary, indexes) and valid, holding the frames so far."""
    path = tmp_path / "cut.mcap"
    env = dict(os.environ, WUJI_TELEMETRY_DISABLE="1")
    proc = subprocess.Popen([SCRIPT, "sim", "--scenario", "press", "--realtime", "--quiet", "--record", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 60
        while (not path.exists() or path.stat().st_size < 20_000) and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)  # the recorder flushes every 0.5 s: data frames are in the file
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    assert "Traceback" not in err and "interrupted at t = " in err and "checks not run" in err, err
    assert "[FAIL]" not in out, out
    report = inspect_file(path)
    assert report.ok, report.text()
    data = report.topics[CID].count
    assert 0 < data < 1300 and report.topics[f"{CID}/metadata"].count == 1
    assert f"{data} frames" in out  # the partial run's report counts what was recorded
