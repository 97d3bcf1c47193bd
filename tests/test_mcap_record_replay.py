"""Record → replay through TactileTracker: bit-exact, log-time ordered, metadata once per producer
session, and replay behaving exactly like the live tracker input."""
from __future__ import annotations

import dataclasses

import time

import numpy as np
import pytest
from mcap.reader import make_reader
from mcap.records import Chunk
from mcap.stream_reader import StreamReader

from conftest import make_metadata
from mcap_helpers import STEP_NS, forces_for, official_messages, record
from wuji_tactile_device.errors import MetadataValidationError, RecordingError
from wuji_tactile_device.contract import DeviceDataTimestamp, encode_metadata_record, encode_tactile_record
from wuji_tactile_device.streams.publisher import TactilePublisher
from wuji_tactile_device.recording import McapRecorder, McapReplay
from wuji_tactile_device.streams.tracker import TactileTracker
from wuji_tactile_device.streams.base import LivelinessChange, Message, Stream
from wuji_tactile_device.streams.inproc import InProcessBus


def replay_all(replay: McapReplay, *trackers: TactileTracker) -> dict[str, list]:
    got = {t.collection_id: [] for t in trackers}
    while not replay.finished:
        for t in trackers:
            if t.update():
                got[t.collection_id].append(t.get_data())
    return got


def test_round_trip_is_bit_exact_for_forces_metadata_and_timestamps(tmp_path):
    path = tmp_path / "run.mcap"
    sent, md, _ = record(path, 300, collections=("tactile/right", "tactile/left"), flush_every=70)
    with McapReplay(path) as replay:
        assert replay.collections == ("tactile/left", "tactile/right")
        right, left = TactileTracker("tactile/right", replay), TactileTracker("tactile/left", replay)
        got = replay_all(replay, right, left)
        for tr in (right, left):
            assert tr.get_metadata() == md
            assert tr.get_metadata().encode() == md.encode()
            frames = got[tr.collection_id]
            assert len(frames) == 300
            assert [f.sequence for f in frames] == list(range(300))
            for f, expected in zip(frames, sent[tr.collection_id], strict=True):
                assert f.forces.tobytes() == expected.tobytes()  # bit for bit, −0.0 and subnormals included
            assert [f.timestamp.sample_time_local_common_clock for f in frames] == \
                [1_000_000_000 + i * STEP_NS for i in range(300)]
            assert tr.counters.dropped_before_confirmation == 0 and tr.counters.rejected == 0


def test_file_layout_follows_the_contract(tmp_path):
    path = tmp_path / "run.mcap"
    record(path, 20)
    with open(path, "rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        file_meta = {m.name: m.metadata for m in reader.iter_metadata()}
        msgs = list(reader.iter_messages())
    assert {s.name: s.encoding for s in summary.schemas.values()} == {
        "core.TactileDataArrayRecord": "flatbuffer", "core.TactileMetadataRecord": "flatbuffer"}
    topics = {c.topic: c for c in summary.channels.values()}
    assert set(topics) == {"tactile/right", "tactile/right/metadata"}
    assert all(c.message_encoding == "flatbuffer" for c in topics.values())
    assert topics["tactile/right"].metadata["producer_session"] == topics["tactile/right/metadata"].metadata["producer_session"]
    assert summary.chunk_indexes and all(c.compression == "zstd" for c in summary.chunk_indexes)
    with open(path, "rb") as f:
        chunks = [r for r in StreamReader(f, emit_chunks=True).records if isinstance(r, Chunk)]
    assert chunks and all(c.uncompressed_crc != 0 for c in chunks)  # CRCs on
    from wuji_tactile_device.contract import decode_tactile_record
    # log / publish times: the record's available / sample time + the file's declared offset
    # (realtime − monotonic at the start: UTC-epoch log times)
    meta = file_meta["wuji_tactile_device"]
    offset = int(meta["log_time_offset_ns"])
    assert meta["log_time_base"] == "epoch"
    assert abs(offset + time.monotonic_ns() - time.time_ns()) < 5_000_000_000
    for _, ch, m in msgs:
        if ch.topic == "tactile/right":
            ts = decode_tactile_record(m.data).timestamp
            assert (m.log_time - offset, m.publish_time - offset) == (ts.available_time_local_common_clock,
                                                                      ts.sample_time_local_common_clock)
    assert file_meta["wuji_tactile_device"]["package_version"]


def test_replay_order_across_two_collections_follows_log_time_not_file_order(tmp_path):
    """Write collection B's records before A's although their log times interleave, across chunks."""
    path = tmp_path / "order.mcap"
    md = make_metadata(12)
    meta = encode_metadata_record(md, DeviceDataTimestamp(5, 5, 5))
    rng = np.random.default_rng(1)
    with McapRecorder(path, log_time_base="monotonic") as rec:  # log time = record time
        for cid, offset in (("hand/b", 5), ("hand/a", 0)):
            rec.write(cid, Stream.METADATA, meta, 7, 0)
            for i in range(40):
                t = 100 + 10 * i + offset
                rec.write(cid, Stream.DATA, encode_tactile_record(forces_for(rng, 12), DeviceDataTimestamp(t, t, t)), 7, i)
                if i % 15 == 14:
                    rec.flush()
    with McapReplay(path) as replay:
        events = list(replay.events())
        times = [ev.receive_time_ns for _, ev in events if isinstance(ev, Message)]
        assert times == sorted(times)
        data = [(cid, ev.receive_time_ns) for cid, ev in events if isinstance(ev, Message) and ev.stream is Stream.DATA]
        assert data[:4] == [("hand/a", 100), ("hand/b", 105), ("hand/a", 110), ("hand/b", 115)]
        # per collection the tracker sees the same order
        a, b = TactileTracker("hand/a", replay), TactileTracker("hand/b", replay)
        got = replay_all(replay, a, b)
    assert [f.timestamp.available_time_local_common_clock for f in got["hand/a"]] == [100 + 10 * i for i in range(40)]
    assert [f.timestamp.available_time_local_common_clock for f in got["hand/b"]] == [105 + 10 * i for i in range(40)]


def test_metadata_is_written_once_per_producer_session(tmp_path):
    path = tmp_path / "meta.mcap"
    md = make_metadata(20)
    bus = InProcessBus()
    with McapRecorder(path) as rec:
        rec.add_collection(bus, "tactile/right")
        sessions = []
        for _ in range(2):  # a producer restart: a second session
            with TactilePublisher("tactile/right", md, bus, metadata_period_s=1e-9) as pub:  # republish every frame
                sessions.append(pub.producer_session)
                for i in range(30):
                    pub.publish(np.zeros((20, 3), np.float32), sample_time_ns=i)
                    rec.poll()
        rec.poll()
    assert rec.counters.metadata_repeats_skipped >= 58
    meta_msgs = [m for m in official_messages(path) if m[0] == "tactile/right/metadata"]
    assert len(meta_msgs) == 2
    with open(path, "rb") as f:
        chans = make_reader(f).get_summary().channels.values()
    assert sorted(int(c.metadata["producer_session"], 16) for c in chans if c.topic.endswith("metadata")) == sorted(sessions)
    with McapReplay(path) as replay:
        lv = [(ev.producer_session, ev.alive) for _, ev in replay.events() if isinstance(ev, LivelinessChange)]
        assert lv == [(sessions[0], True), (sessions[0], False), (sessions[1], True), (sessions[1], False)]
        tr = TactileTracker("tactile/right", replay)
        got = replay_all(replay, tr)["tactile/right"]
    assert len(got) == 60 and tr.counters.metadata_confirmations == 2 and tr.counters.producer_sessions == 2


def test_changed_metadata_within_a_session_is_recorded_so_replay_raises_like_live(tmp_path):
    path = tmp_path / "changed.mcap"
    a, b = make_metadata(20, seed=0), make_metadata(20, seed=1)
    with McapRecorder(path) as rec:
        assert rec.write("c", Stream.METADATA, encode_metadata_record(a, DeviceDataTimestamp(1, 1, 1)), 9, 0) == 1
        assert rec.write("c", Stream.METADATA, encode_metadata_record(a, DeviceDataTimestamp(1, 1, 1)), 9, 1) == 0
        assert rec.write("c", Stream.METADATA, encode_metadata_record(b, DeviceDataTimestamp(2, 2, 2)), 9, 2) == 1
    from wuji_tactile_device.errors import MetadataMismatchError
    with McapReplay(path) as replay:
        tr = TactileTracker("c", replay)
        with pytest.raises(MetadataMismatchError, match="differs from the adopted layout"):
            while not replay.finished:
                tr.update()


def _live_and_replayed(tmp_path, feed):
    """Run `feed(bus)` with a live tracker and a recorder on the same bus; replay the file into a
    second tracker. Returns (live tracker, live error, replay tracker, replay error)."""
    path = tmp_path / "live.mcap"
    bus = InProcessBus()
    live = TactileTracker("tactile/right", bus)
    with McapRecorder(path) as rec:
        rec.add_collection(bus, "tactile/right")
        feed(bus)
        rec.poll()
    errors = []
    for tracker, source in ((live, None), (None, McapReplay(path))):
        if tracker is None:
            tracker = TactileTracker("tactile/right", source)
        err = None
        try:
            while True:
                tracker.update()
                if source is None or source.finished:
                    break
        except MetadataValidationError as exc:
            err = exc
        errors.append((tracker, err))
    return errors[0][0], errors[0][1], errors[1][0], errors[1][1]


def test_data_before_metadata_is_dropped_in_replay_exactly_as_live(tmp_path):
    md = make_metadata(20)
    meta = encode_metadata_record(md, DeviceDataTimestamp(50, 50, 50))

    def feed(bus):
        link = bus.open_producer("tactile/right", 77)
        for i in range(10):  # data first: a consumer that joined late sees this
            t = 100 + i
            if i == 6:
                link.publish(Stream.METADATA, meta, 0)
            link.publish(Stream.DATA, encode_tactile_record(np.full((20, 3), i, np.float32), DeviceDataTimestamp(t, t, t)), i)
        link.close()

    live, live_err, rep, rep_err = _live_and_replayed(tmp_path, feed)
    assert live_err is None and rep_err is None
    assert live.counters.dropped_before_confirmation == rep.counters.dropped_before_confirmation == 6
    assert live.counters.delivered == rep.counters.delivered == 4
    assert live.get_data().forces.tobytes() == rep.get_data().forces.tobytes()


def test_invalid_metadata_is_replayed_unchanged_and_refused_like_live(tmp_path):
    good = make_metadata(20)
    weights = np.array(good.segment_weights)
    weights[3] = (0.5, 0.2, 0.0, 0.0)  # taxel 3 weights sum to 0.7
    bad = dataclasses.replace(good, segment_weights=weights)
    meta = encode_metadata_record(bad, DeviceDataTimestamp(1, 1, 1))

    def feed(bus):
        link = bus.open_producer("tactile/right", 5)
        link.publish(Stream.METADATA, meta, 0)
        for i in range(3):
            link.publish(Stream.DATA, encode_tactile_record(np.zeros((20, 3), np.float32), DeviceDataTimestamp(2 + i, 2, 2)), i)

    live, live_err, rep, rep_err = _live_and_replayed(tmp_path, feed)
    assert live_err is not None and rep_err is not None
    assert type(live_err) is type(rep_err) and live_err.rule == rep_err.rule
    assert "taxel 3" in str(rep_err) and str(live_err) == str(rep_err)
    assert live.get_metadata() is None and rep.get_metadata() is None


def test_start_end_window_delivers_earlier_metadata_first(tmp_path):
    path = tmp_path / "win.mcap"
    sent, md, _ = record(path, 100)
    with McapReplay(path) as probe:
        datas = [ev for _, ev in probe.events() if isinstance(ev, Message) and ev.stream is Stream.DATA]
    start, end = datas[40].receive_time_ns, datas[60].receive_time_ns
    with McapReplay(path, start_ns=start, end_ns=end) as replay:
        tr = TactileTracker("tactile/right", replay)
        got = replay_all(replay, tr)["tactile/right"]
    assert [f.sequence for f in got] == list(range(40, 60))
    assert tr.get_metadata() == md and tr.counters.dropped_before_confirmation == 0


def test_loop_replays_again_with_the_session_reconfirmed(tmp_path):
    path = tmp_path / "loop.mcap"
    record(path, 25)
    with McapReplay(path, loop=True) as replay:
        tr = TactileTracker("tactile/right", replay)
        seqs = []
        while len(seqs) < 60:
            if tr.update():
                seqs.append(tr.get_data().sequence)
        assert not replay.finished
    assert seqs == list(range(25)) * 2 + list(range(10))
    assert tr.counters.metadata_confirmations == 3 and tr.counters.liveliness_lost == 2


class _Arrivals:
    def __init__(self, out: list, t0: float):
        self.out, self.t0 = out, t0

    def on_metadata(self, collection_id, message, record):
        pass

    def on_data(self, collection_id, message, frame):
        self.out.append((time.monotonic() - self.t0, frame.timestamp.available_time_local_common_clock))


def test_real_time_pacing_follows_log_times(tmp_path):
    path = tmp_path / "rt.mcap"
    md = make_metadata(12)
    with McapRecorder(path) as rec:
        rec.write("c", Stream.METADATA, encode_metadata_record(md, DeviceDataTimestamp(0, 0, 0)), 1, 0)
        for i in range(21):  # 0 .. 0.4 s of log time
            t = i * 20_000_000
            rec.write("c", Stream.DATA, encode_tactile_record(np.zeros((12, 3), np.float32), DeviceDataTimestamp(t, t, t)), 1, i)
    for speed, span in ((1.0, 0.4), (4.0, 0.1)):
        with McapReplay(path, speed=speed) as replay:
            tr = TactileTracker("c", replay)
            arrivals = []
            t0 = time.monotonic()
            tr.add_observer(_Arrivals(arrivals, t0))
            while not replay.finished:
                tr.update()  # under load one call may deliver several due frames: the observer sees each
                time.sleep(0.0005)
        assert len(arrivals) == 21
        # never early: a frame logged at t appears no sooner than t / speed after the start
        assert all(wall >= log / 1e9 / speed - 0.002 for wall, log in arrivals)
        assert span * 0.95 <= arrivals[-1][0] <= span + 0.25


def test_recorder_attached_to_a_tracker_records_what_it_delivered(tmp_path):
    path = tmp_path / "tap.mcap"
    md = make_metadata(20)
    bus = InProcessBus()
    tr = TactileTracker("tactile/right", bus)
    rng = np.random.default_rng(3)
    sent = []
    with McapRecorder(path) as rec:
        rec.attach(tr)
        with TactilePublisher("tactile/right", md, bus) as pub:
            for i in range(50):
                f = forces_for(rng, 20)
                sent.append(f)
                pub.publish(f, sample_time_ns=i)
                tr.update()
    with McapReplay(path) as replay:
        tr2 = TactileTracker("tactile/right", replay)
        got = replay_all(replay, tr2)["tactile/right"]
    assert [g.forces.tobytes() for g in got] == [s.tobytes() for s in sent]
    assert tr2.get_metadata() == md


def test_unknown_collection_is_refused_with_the_available_ones(tmp_path):
    path = tmp_path / "one.mcap"
    record(path, 3)
    with McapReplay(path) as replay:
        with pytest.raises(RecordingError, match=r"'tactile/left' is not replayed; available: tactile/right"):
            replay.subscribe("tactile/left")
    with pytest.raises(RecordingError, match=r"one.mcap has no collection 'tactile/left'; it holds: tactile/right"):
        McapReplay(path, collections=["tactile/left"])


def test_recorder_refuses_to_overwrite_and_bad_arguments(tmp_path):
    path = tmp_path / "x.mcap"
    record(path, 2)
    with pytest.raises(RecordingError, match="already exists"):
        McapRecorder(path)
    with pytest.raises(ValueError, match="speed must be"):  # a caller's wrong argument
        McapReplay(path, speed=0)


def test_recorder_refuses_double_collection_and_writes_after_close(tmp_path):
    bus = InProcessBus()
    rec = McapRecorder(tmp_path / "d.mcap")
    rec.add_collection(bus, "tactile/right")
    with pytest.raises(RecordingError, match="'tactile/right' is already being recorded"):
        rec.add_collection(bus, "tactile/right")
    rec.close()
    with pytest.raises(RecordingError, match="is closed"):
        rec.write("tactile/right", Stream.DATA, b"", 1, 0)


def test_disk_full_is_a_recording_error_naming_the_file(tmp_path):
    """/dev/full accepts the open and fails every write with ENOSPC."""
    import os

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system to simulate a full disk")
    with pytest.raises(RecordingError, match=r"/dev/full is a device; only a new or regular file is written"):
        McapRecorder("/dev/full", overwrite=True)  # a device is never a recording target (like recover)
    rec = McapRecorder(tmp_path / "x.mcap")
    full = os.open("/dev/full", os.O_WRONLY)
    os.dup2(full, rec._file.fileno())  # the disk fills up under the open recorder
    os.close(full)
    with pytest.raises(RecordingError, match=r"cannot write to .*x.mcap: No space left on device"):
        rec.write("c", Stream.METADATA, encode_metadata_record(make_metadata(12), DeviceDataTimestamp(1, 1, 1)), 1, 0)
        rec.flush()


def test_malformed_record_is_recorded_and_refused_on_replay_as_live(tmp_path, caplog):
    """A broken producer's garbage is kept (with the receive time as log time), counted, logged,
    and the replayed tracker refuses it exactly like the live one."""
    from wuji_tactile_device.errors import InvalidMessageError

    md = make_metadata(20)
    meta = encode_metadata_record(md, DeviceDataTimestamp(1, 1, 1))
    good = encode_tactile_record(np.ones((20, 3), np.float32), DeviceDataTimestamp(2, 2, 2))

    def feed(bus):
        link = bus.open_producer("tactile/right", 3)
        link.publish(Stream.METADATA, meta, 0)
        link.publish(Stream.DATA, good, 0)
        link.publish(Stream.DATA, b"TDAR garbage, not a FlatBuffer", 1)

    path = tmp_path / "garbage.mcap"
    bus = InProcessBus()
    live = TactileTracker("tactile/right", bus)
    with McapRecorder(path) as rec:
        rec.add_collection(bus, "tactile/right")
        feed(bus)
        with caplog.at_level("WARNING"):
            rec.poll()
    assert rec.counters.unreadable_timestamp == 1 and rec.counters.written_data == 2
    assert "no readable timestamp" in caplog.text and "tactile/right" in caplog.text
    assert [m[3] for m in official_messages(path) if m[0] == "tactile/right"][1] == b"TDAR garbage, not a FlatBuffer"
    with pytest.raises(InvalidMessageError) as live_err:
        live.update()
    with McapReplay(path) as replay:
        rep = TactileTracker("tactile/right", replay)
        with pytest.raises(InvalidMessageError) as rep_err:
            while not replay.finished:
                rep.update()
    assert str(live_err.value) == str(rep_err.value)
    assert live.counters.delivered == rep.counters.delivered == 1


def test_restamped_metadata_republish_is_not_repeated(tmp_path):
    """A producer that gives every republish a fresh timestamp still gets its metadata written once."""
    md = make_metadata(20)
    path = tmp_path / "restamp.mcap"
    with McapRecorder(path, log_time_base="monotonic") as rec:
        written = [rec.write("c", Stream.METADATA, encode_metadata_record(md, DeviceDataTimestamp(t, t, t)), 4, t)
                   for t in range(1, 6)]
    assert written == [1, 0, 0, 0, 0] and rec.counters.metadata_repeats_skipped == 4
    assert [m[1] for m in official_messages(path)] == [1]


def test_sample_clock_paces_and_windows_by_sample_time(tmp_path):
    """A simulation recorded as fast as possible: log times 0.1 ms apart, sample times 20 ms apart.
    clock="sample" plays it at its sampled pace and windows by sample time; the order is unchanged."""
    path = tmp_path / "fast.mcap"
    md = make_metadata(12)
    with McapRecorder(path, log_time_base="monotonic") as rec:
        rec.write("c", Stream.METADATA, encode_metadata_record(md, DeviceDataTimestamp(0, 0, 0)), 1, 0)
        for i in range(21):
            log, sample = 1_000_000 + i * 100_000, i * 20_000_000  # 2 ms of log time, 0.4 s sampled
            rec.write("c", Stream.DATA, encode_tactile_record(np.full((12, 3), i, np.float32),
                                                              DeviceDataTimestamp(log, sample, sample)), 1, i)
    for clock, lo, hi in (("log", 0.0, 0.1), ("sample", 0.38, 0.65)):
        with McapReplay(path, speed=1.0, clock=clock) as replay:
            tr = TactileTracker("c", replay)
            arrivals = []
            t0 = time.monotonic()
            tr.add_observer(_Arrivals(arrivals, t0))
            while not replay.finished:
                tr.update()
                time.sleep(0.0005)
        assert len(arrivals) == 21
        assert lo <= arrivals[-1][0] <= hi, (clock, arrivals[-1][0])
        # receive times stay the recorded log times whatever the clock
        assert [log for _, log in arrivals] == [1_000_000 + i * 100_000 for i in range(21)]
    with McapReplay(path, clock="sample", start_ns=100_000_000, end_ns=200_000_000) as replay:
        assert replay.first_time_ns() == 0
        tr = TactileTracker("c", replay)
        values = [int(f.forces[0, 0]) for f in tr.frames()]
    assert values == [5, 6, 7, 8, 9]  # sample times 100 ms .. 180 ms
    with pytest.raises(ValueError, match="clock must be one of log, sample"):
        McapReplay(path, clock="wall")


def test_recorder_reports_every_kind_of_transport_drop(tmp_path):
    """A queue over its byte budget or a payload over the size limit is a drop the recorder must
    report, like a queue over its event count (it counted only the last)."""
    from wuji_tactile_device.streams.base import TrackerCounters

    class Sub:  # what a full subscription reports: one event-count, two byte-budget, three oversize
        counters = TrackerCounters(overflowed=1, overflowed_bytes=2, oversize_dropped=3)
        overflowed = 1

        def drain(self, max_events=None):
            return []

        def close(self):
            pass

    class Transport:
        def subscribe(self, collection_id, **limits):
            return Sub()

    with McapRecorder(tmp_path / "drops.mcap") as recorder:
        recorder.add_collection(Transport(), "tactile/right")
        assert recorder.dropped_by_transport == 6
