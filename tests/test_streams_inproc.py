"""Publisher → tracker on the in-process bus: the metadata-first tracker semantics, refusals at
both ends, restarts, gaps, and two collections side by side."""
from __future__ import annotations

import dataclasses

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streams_helpers import forces_for, small_metadata

from wuji_tactile_device.errors import (DataLayoutError, InvalidMessageError, MessageTooLargeError,
                                        MetadataMismatchError, MetadataValidationError, NonFiniteForceError,
                                        TransportError, CollectionIdError, TactileError)
from wuji_tactile_device.contract import (DeviceDataTimestamp, encode_metadata_record, encode_tactile_record,
                                          tactile_record_size)
from wuji_tactile_device.contract import TactileMetadata
from wuji_tactile_device.streams.publisher import TactilePublisher
from wuji_tactile_device.streams.tracker import (DEFAULT_MAX_FLATBUFFER_SIZE, TRACKER_METADATA_MAX_SIZE, TactileFrame,
                                         TactileTracker)
from wuji_tactile_device.streams.base import LivelinessChange, Message, Stream
from wuji_tactile_device.streams.inproc import InProcessBus

CID = "tactile/right"
TS = DeviceDataTimestamp(1, 2, 3)


class Recorder:
    """An observer that keeps what it was told."""

    def __init__(self):
        self.metadata: list[tuple[str, int, TactileMetadata]] = []
        self.data: list[tuple[str, int, int]] = []

    def on_metadata(self, collection_id, message, record):
        self.metadata.append((collection_id, message.producer_session, record.metadata))

    def on_data(self, collection_id, message, frame):
        self.data.append((collection_id, frame.producer_session, frame.sequence))


@pytest.fixture
def bus():
    b = InProcessBus()
    yield b
    b.close()


@pytest.fixture
def md():
    return small_metadata()


def metadata_bytes(md: TactileMetadata) -> bytes:
    return encode_metadata_record(md, TS)


def data_bytes(sequence: int, n: int) -> bytes:
    return encode_tactile_record(forces_for(sequence, n), TS)


# -- limits ----------------------------------------------------------------------------------------

def test_default_limits_fit_a_wuji_hand_with_headroom():
    hand_record = tactile_record_size(176)
    assert 2 * hand_record <= DEFAULT_MAX_FLATBUFFER_SIZE
    hand_metadata = len(encode_metadata_record(small_metadata(35), TS))  # 5 × 35 = 175 taxels
    assert 10 * hand_metadata <= TRACKER_METADATA_MAX_SIZE
    assert TactileTracker.DEFAULT_MAX_FLATBUFFER_SIZE == DEFAULT_MAX_FLATBUFFER_SIZE


# -- bus -------------------------------------------------------------------------------------------

def test_bus_delivers_in_order_with_liveliness_and_counts_overflow(bus):
    link = bus.open_producer(CID, 7)
    sub = bus.subscribe(CID, queue_limit=4)  # late subscriber: sees the live producer first
    for seq in range(5):
        link.publish(Stream.DATA, bytes([seq]), seq)
    events = sub.drain()
    assert events[0] == LivelinessChange(CID, 7, True)
    assert [(e.payload, e.sequence, e.producer_session) for e in events[1:]] == [(b"\x00", 0, 7), (b"\x01", 1, 7), (b"\x02", 2, 7)]
    assert sub.overflowed == 2  # the limit counts every held event, liveliness included
    link.close()
    assert sub.drain() == [LivelinessChange(CID, 7, False)]
    with pytest.raises(TransportError, match="closed"):
        link.publish(Stream.DATA, b"x", 5)


def test_bus_copies_mutable_payloads(bus):
    link = bus.open_producer(CID, 1)
    sub = bus.subscribe(CID)
    buf = bytearray(b"abc")
    link.publish(Stream.DATA, buf, 0)
    buf[0] = ord("z")
    assert [e.payload for e in sub.drain() if isinstance(e, Message)] == [b"abc"]


# -- publisher -------------------------------------------------------------------------------------

def test_publisher_sends_metadata_first_and_byte_identical(bus, md):
    sub = bus.subscribe(CID)
    with TactilePublisher(CID, md, bus, metadata_period_s=1e-9, producer_session=42) as pub:
        assert pub.publish(forces_for(0, md.num_taxels), sample_time_ns=5) == 0
        assert pub.publish(forces_for(1, md.num_taxels), sample_time_ns=6) == 1
    events = sub.drain()
    kinds = [(e.stream, e.sequence) if isinstance(e, Message) else e.alive for e in events]
    # liveliness, metadata, (period elapsed: metadata again) data 0, metadata, data 1, liveliness lost
    assert kinds == [True, (Stream.METADATA, 0), (Stream.METADATA, 1), (Stream.DATA, 0),
                     (Stream.METADATA, 2), (Stream.DATA, 1), False]
    meta = [e.payload for e in events if isinstance(e, Message) and e.stream is Stream.METADATA]
    assert meta[0] == meta[1] == meta[2]
    assert all(e.producer_session == 42 for e in events)


def test_invalid_metadata_refused_by_publisher_nothing_sent(bus, md):
    sub = bus.subscribe(CID)
    weights = np.array(md.segment_weights)
    weights[4, 0] = 0.5
    bad = dataclasses.replace(md, segment_weights=weights)
    with pytest.raises(MetadataValidationError, match="taxel 4") as info:
        TactilePublisher(CID, bad, bus)
    assert "weight" in info.value.rule
    assert sub.drain() == []  # not even liveliness


def test_publisher_refuses_bad_frames_and_sends_nothing(bus, md):
    sub = bus.subscribe(CID)
    pub = TactilePublisher(CID, md, bus)
    sub.drain()
    n = md.num_taxels
    nan = forces_for(0, n)
    nan[3, 1] = np.nan
    with pytest.raises(NonFiniteForceError, match=r"'tactile/right'.*taxel 3 component y"):
        pub.publish(nan, sample_time_ns=1)
    big = forces_for(0, n).astype(np.float64)
    big[2, 2] = 1e39  # finite in float64, +inf in float32
    with pytest.raises(NonFiniteForceError, match="taxel 2 component z"):
        pub.publish(big, sample_time_ns=1)
    with pytest.raises(DataLayoutError, match=rf"shape \({n + 1}, 3\).*\({n}, 3\)"):
        pub.publish(np.zeros((n + 1, 3)), sample_time_ns=1)
    with pytest.raises(DataLayoutError, match="numeric"):
        pub.publish(np.full((n, 3), "a"), sample_time_ns=1)
    assert sub.drain() == []
    assert pub.publish(forces_for(0, n), sample_time_ns=1) == 0  # refusals did not use up sequences
    pub.close()
    with pytest.raises(TransportError, match="closed"):
        pub.publish(forces_for(1, n), sample_time_ns=1)


def test_publisher_refuses_layout_larger_than_max_flatbuffer_size(bus, md):
    sub = bus.subscribe(CID)
    size = tactile_record_size(md.num_taxels)
    with pytest.raises(MessageTooLargeError, match=f"{size} bytes, larger than max_flatbuffer_size={size - 1}"):
        TactilePublisher(CID, md, bus, max_flatbuffer_size=size - 1)
    assert sub.drain() == []
    TactilePublisher(CID, md, bus, max_flatbuffer_size=size).close()


# -- tracker: metadata first ----------------------------------------------------------------------

def test_data_before_metadata_is_withheld_dropped_and_counted(bus, md):
    tracker = TactileTracker(CID, bus)
    link = bus.open_producer(CID, 9)
    for seq in range(3):
        link.publish(Stream.DATA, data_bytes(seq, md.num_taxels), seq)
    assert tracker.update() == 0
    assert tracker.get_metadata() is None and tracker.get_data() is None
    link.publish(Stream.METADATA, metadata_bytes(md), 0)
    link.publish(Stream.DATA, data_bytes(3, md.num_taxels), 3)
    assert tracker.update() == 1
    assert tracker.get_metadata() == md
    frame = tracker.get_data()
    assert isinstance(frame, TactileFrame)
    assert (frame.sequence, frame.producer_session, frame.timestamp) == (3, 9, TS)
    np.testing.assert_array_equal(frame.forces, forces_for(3, md.num_taxels))
    assert not frame.forces.flags.writeable
    c = tracker.counters
    assert (c.received, c.delivered, c.dropped_before_confirmation, c.rejected) == (4, 1, 3, 0)
    assert c.last_sequence_gap == 0  # the first confirmed frame starts the sequence


def test_late_subscriber_discovers_metadata_within_one_period(bus, md):
    period = 0.05
    with TactilePublisher(CID, md, bus, metadata_period_s=period) as pub:
        tracker = TactileTracker(CID, bus)  # after the start-up metadata went out
        joined = time.monotonic()
        confirmed_at = None
        seq = 0
        while time.monotonic() - joined < 3 * period:
            pub.publish(forces_for(seq, md.num_taxels), sample_time_ns=time.monotonic_ns())
            seq += 1
            if tracker.update() and confirmed_at is None:
                confirmed_at = time.monotonic()
            time.sleep(0.005)
    assert confirmed_at is not None and confirmed_at - joined <= period + 0.02
    c = tracker.counters
    assert c.dropped_before_confirmation >= 1  # frames sent before the republication
    assert c.dropped_before_confirmation + c.delivered == c.received == seq
    assert tracker.get_data().sequence == seq - 1


def test_observer_sees_metadata_once_per_session_and_every_frame(bus, md):
    tracker = TactileTracker(CID, bus)
    rec = Recorder()
    tracker.add_observer(rec)
    with TactilePublisher(CID, md, bus, metadata_period_s=1e-9, producer_session=1) as pub:
        for seq in range(4):
            pub.publish(forces_for(seq, md.num_taxels), sample_time_ns=seq)
        assert tracker.update() == 4
    assert rec.metadata == [(CID, 1, md)]
    assert rec.data == [(CID, 1, s) for s in range(4)]
    assert tracker.counters.metadata_received == 5  # 1 at start + 1 before each frame (period elapsed)
    tracker.update()  # liveliness lost
    late = Recorder()
    tracker.add_observer(late)
    assert late.metadata == []  # the session ended: nothing confirmed to replay to a late observer


def test_late_observer_is_told_the_confirmed_metadata(bus, md):
    tracker = TactileTracker(CID, bus)
    with TactilePublisher(CID, md, bus, producer_session=3) as pub:
        pub.publish(forces_for(0, md.num_taxels), sample_time_ns=0)
        tracker.update()
        rec = Recorder()
        tracker.add_observer(rec)
        assert rec.metadata == [(CID, 3, md)]
        pub.publish(forces_for(1, md.num_taxels), sample_time_ns=1)
        tracker.update()
    assert rec.metadata == [(CID, 3, md)] and rec.data == [(CID, 3, 1)]


def test_frames_iterator_yields_every_frame_in_order(bus, md):
    tracker = TactileTracker(CID, bus)
    assert list(tracker.frames()) == []
    with TactilePublisher(CID, md, bus) as pub:
        for seq in range(5):
            pub.publish(forces_for(seq, md.num_taxels), sample_time_ns=seq)
        frames = list(tracker.frames())
    assert [f.sequence for f in frames] == list(range(5))
    assert [f.timestamp.sample_time_local_common_clock for f in frames] == list(range(5))
    np.testing.assert_array_equal(frames[2].forces, forces_for(2, md.num_taxels))
    assert tracker.get_data().sequence == 4


def test_timestamps_travel_and_available_time_is_publication(bus, md):
    tracker = TactileTracker(CID, bus)
    with TactilePublisher(CID, md, bus) as pub:
        before = time.monotonic_ns()
        pub.publish(forces_for(0, md.num_taxels), sample_time_ns=before - 1000, device_time_ns=123456789)
        after = time.monotonic_ns()
        tracker.update()
    ts = tracker.get_data().timestamp
    assert ts.sample_time_local_common_clock == before - 1000
    assert ts.sample_time_raw_device_clock == 123456789
    assert before <= ts.available_time_local_common_clock <= after


# -- tracker: mismatch, invalid, restart ----------------------------------------------------------

def test_mismatch_raises_keeps_layout_withholds_and_keeps_queued_events(bus, md):
    other = small_metadata(x_offset=0.001)
    tracker = TactileTracker(CID, bus)
    good = TactilePublisher(CID, md, bus, producer_session=1)
    tracker.update()
    bad = TactilePublisher(CID, other, bus, producer_session=2)  # sends its metadata now
    bad.publish(forces_for(0, other.num_taxels), sample_time_ns=0)
    good.publish(forces_for(7, md.num_taxels), sample_time_ns=0)
    with pytest.raises(MetadataMismatchError, match=r"'tactile/right'.*0000000000000002.*taxel_bind_poses row 0"):
        tracker.update()
    assert tracker.get_metadata() == md
    assert tracker.pending == 2  # bad's data and good's frame wait for the next call
    assert tracker.update() == 1
    assert tracker.get_data().producer_session == 1
    c = tracker.counters
    assert (c.rejected, c.dropped_before_confirmation, c.delivered) == (1, 1, 1)
    assert "differs from the adopted layout" in c.last_error
    good.close()
    bad.close()


def test_invalid_metadata_refused_by_tracker(bus, md):
    weights = np.array(md.segment_weights)
    weights[2] = [0.6, 0.6, 0.0, 0.0]
    indices = np.array(md.segment_indices)
    indices[2, 1] = 1
    bad = dataclasses.replace(md, segment_indices=indices, segment_weights=weights)
    tracker = TactileTracker(CID, bus)
    link = bus.open_producer(CID, 5)
    link.publish(Stream.METADATA, metadata_bytes(bad), 0)
    link.publish(Stream.DATA, data_bytes(0, md.num_taxels), 0)
    with pytest.raises(MetadataValidationError, match=r"'tactile/right'.*0000000000000005.*taxel 2") as info:
        tracker.update()
    assert "weight" in info.value.rule
    assert tracker.get_metadata() is None
    assert tracker.update() == 0
    assert tracker.counters.dropped_before_confirmation == 1 and tracker.get_data() is None


def test_restart_with_same_metadata_reconfirms(bus, md):
    tracker = TactileTracker(CID, bus)
    rec = Recorder()
    tracker.add_observer(rec)
    with TactilePublisher(CID, md, bus, producer_session=1) as pub:
        pub.publish(forces_for(0, md.num_taxels), sample_time_ns=0)
    with TactilePublisher(CID, md, bus, producer_session=2) as pub:
        pub.publish(forces_for(0, md.num_taxels), sample_time_ns=0)
        pub.publish(forces_for(1, md.num_taxels), sample_time_ns=0)
        assert tracker.update() == 3
    assert rec.metadata == [(CID, 1, md), (CID, 2, md)]
    assert rec.data == [(CID, 1, 0), (CID, 2, 0), (CID, 2, 1)]
    c = tracker.counters
    # session 2 was still alive when update() ran: one liveliness loss seen
    assert (c.producer_sessions, c.liveliness_lost, c.metadata_confirmations, c.last_sequence_gap) == (2, 1, 2, 0)


def test_liveliness_regained_withholds_until_metadata_again(bus, md):
    tracker = TactileTracker(CID, bus)
    link = bus.open_producer(CID, 4)
    link.publish(Stream.METADATA, metadata_bytes(md), 0)
    link.publish(Stream.DATA, data_bytes(0, md.num_taxels), 0)
    assert tracker.update() == 1
    link.close()  # liveliness lost
    link = bus.open_producer(CID, 4)  # same session id regained (e.g. network partition healed)
    link.publish(Stream.DATA, data_bytes(1, md.num_taxels), 1)
    assert tracker.update() == 0
    assert tracker.counters.dropped_before_confirmation == 1
    link.publish(Stream.METADATA, metadata_bytes(md), 1)
    link.publish(Stream.DATA, data_bytes(2, md.num_taxels), 2)
    assert tracker.update() == 1 and tracker.get_data().sequence == 2
    assert tracker.counters.last_sequence_gap == 0  # sequence restarts after re-confirmation
    link.close()


def test_new_session_without_liveliness_is_a_restart(bus, md):
    """A source without liveliness (e.g. a replay): a new producer session id alone withholds data."""
    tracker = TactileTracker(CID, bus)
    a = bus.open_producer(CID, 10)
    a.publish(Stream.METADATA, metadata_bytes(md), 0)
    a.publish(Stream.DATA, data_bytes(0, md.num_taxels), 0)
    b = bus.open_producer(CID, 11)
    b.publish(Stream.DATA, data_bytes(0, md.num_taxels), 0)
    assert tracker.update() == 1
    assert tracker.counters.dropped_before_confirmation == 1


def test_restart_with_different_metadata_raises(bus, md):
    tracker = TactileTracker(CID, bus)
    with TactilePublisher(CID, md, bus, producer_session=1) as pub:
        pub.publish(forces_for(0, md.num_taxels), sample_time_ns=0)
    other = small_metadata(4)
    with TactilePublisher(CID, other, bus, producer_session=2) as pub:
        pub.publish(forces_for(0, other.num_taxels), sample_time_ns=0)
        with pytest.raises(MetadataMismatchError, match="20 taxels vs adopted 5 / 15"):
            tracker.update()
        assert tracker.update() == 0
    assert tracker.get_metadata() == md
    assert tracker.get_data().producer_session == 1
    assert tracker.counters.dropped_before_confirmation == 1


# -- tracker: bad buffers --------------------------------------------------------------------------

def confirmed(bus, md, **kwargs):
    tracker = TactileTracker(CID, bus, **kwargs)
    link = bus.open_producer(CID, 1)
    link.publish(Stream.METADATA, metadata_bytes(md), 0)
    tracker.update()
    assert tracker.get_metadata() == md
    return tracker, link


def test_oversized_data_raises_or_is_counted(bus, md):
    size = tactile_record_size(md.num_taxels)
    tracker, link = confirmed(bus, md, max_flatbuffer_size=size - 1)
    link.publish(Stream.DATA, data_bytes(0, md.num_taxels), 0)
    with pytest.raises(MessageTooLargeError, match=f"'tactile/right'.*data frame 0.*{size}"):
        tracker.update()
    dropper, link2 = confirmed(InProcessBus(), md, max_flatbuffer_size=size - 1, error_policy="drop")
    for seq in range(3):
        link2.publish(Stream.DATA, data_bytes(seq, md.num_taxels), seq)
    assert dropper.update() == 0
    assert (dropper.counters.rejected, dropper.counters.delivered, dropper.get_data()) == (3, 0, None)
    assert "max" in dropper.counters.last_error or str(size) in dropper.counters.last_error


def test_oversized_metadata_raises(bus):
    tracker = TactileTracker(CID, bus)
    link = bus.open_producer(CID, 1)
    link.publish(Stream.METADATA, b"\0" * (TRACKER_METADATA_MAX_SIZE + 1), 0)
    with pytest.raises(MessageTooLargeError, match="'tactile/right'.*metadata"):
        tracker.update()
    assert tracker.get_metadata() is None


def test_publisher_refuses_metadata_no_tracker_would_accept(bus):
    huge = small_metadata(TRACKER_METADATA_MAX_SIZE // 5 // 50)  # ~53 B per taxel
    with pytest.raises(MessageTooLargeError, match="TRACKER_METADATA_MAX_SIZE"):
        TactilePublisher(CID, huge, bus, max_flatbuffer_size=10**6)


@pytest.mark.parametrize("mangle", [
    lambda b: b[: len(b) // 2],  # truncated
    lambda b: b"\xff" * len(b),  # garbage
    lambda b: b[:4] + b"TMER" + b[8:],  # another contract type's identifier (identifier-less is legal)
    lambda b: b"",  # empty
])
def test_malformed_data_raises_then_drop_policy_continues(bus, md, mangle):
    tracker, link = confirmed(bus, md)
    link.publish(Stream.DATA, mangle(data_bytes(0, md.num_taxels)), 0)
    link.publish(Stream.DATA, data_bytes(1, md.num_taxels), 1)
    with pytest.raises(InvalidMessageError, match="'tactile/right'.*data frame 0"):
        tracker.update()
    assert tracker.update() == 1  # the good frame behind it was kept pending
    other_bus = InProcessBus()
    dropper, link2 = confirmed(other_bus, md, error_policy="drop")
    link2.publish(Stream.DATA, mangle(data_bytes(0, md.num_taxels)), 0)
    link2.publish(Stream.DATA, data_bytes(1, md.num_taxels), 1)
    assert dropper.update() == 1
    assert (dropper.counters.rejected, dropper.counters.delivered, dropper.get_data().sequence) == (1, 1, 1)


def test_malformed_metadata_raises_even_under_drop_policy(bus, md):
    tracker = TactileTracker(CID, bus, error_policy="drop")
    link = bus.open_producer(CID, 1)
    link.publish(Stream.METADATA, metadata_bytes(md)[:-9], 0)
    with pytest.raises(InvalidMessageError, match="'tactile/right'.*metadata"):
        tracker.update()
    assert tracker.get_metadata() is None


def test_wrong_taxel_count_and_non_finite_refused_by_tracker(bus, md):
    tracker, link = confirmed(bus, md)
    link.publish(Stream.DATA, data_bytes(0, md.num_taxels + 1), 0)
    with pytest.raises(DataLayoutError, match=f"{md.num_taxels + 1} taxels, the adopted metadata declares {md.num_taxels}"):
        tracker.update()
    f = forces_for(1, md.num_taxels)
    f[6, 0] = np.inf
    link.publish(Stream.DATA, encode_tactile_record(f, TS), 1)
    with pytest.raises(NonFiniteForceError, match="taxel 6"):
        tracker.update()
    assert tracker.get_data() is None and tracker.counters.rejected == 2


def test_sequence_gaps_are_reported(bus, md):
    tracker, link = confirmed(bus, md)
    for seq in (0, 1, 4, 5, 9):
        link.publish(Stream.DATA, data_bytes(seq, md.num_taxels), seq)
    assert tracker.update() == 5
    c = tracker.counters
    assert (c.sequence_gaps, c.frames_missing, c.last_sequence_gap) == (2, 5, 3)
    link.publish(Stream.DATA, data_bytes(8, md.num_taxels), 8)
    tracker.update()
    assert c.out_of_order == 1


def test_queue_overflow_is_counted_by_the_tracker(bus, md):
    tracker = TactileTracker(CID, bus, queue_limit=4)
    with TactilePublisher(CID, md, bus) as pub:
        for seq in range(6):
            pub.publish(forces_for(seq, md.num_taxels), sample_time_ns=seq)
        assert tracker.update() == 2  # liveliness + metadata + 2 frames fit; 4 frames overflowed
    assert tracker.counters.overflowed == 4
    assert tracker.counters.last_sequence_gap == 0


def test_two_collections_side_by_side_without_crosstalk(bus):
    left_md, right_md = small_metadata(2), small_metadata(3)
    left, right = TactileTracker("tactile/left", bus), TactileTracker("tactile/right", bus)
    with TactilePublisher("tactile/left", left_md, bus) as lp, TactilePublisher("tactile/right", right_md, bus) as rp:
        for seq in range(3):
            lp.publish(forces_for(100 + seq, left_md.num_taxels), sample_time_ns=seq)
            rp.publish(forces_for(200 + seq, right_md.num_taxels), sample_time_ns=seq)
        rp.publish(forces_for(203, right_md.num_taxels), sample_time_ns=3)
        assert (left.update(), right.update()) == (3, 4)
    assert left.get_metadata() == left_md and right.get_metadata() == right_md
    np.testing.assert_array_equal(left.get_data().forces, forces_for(102, left_md.num_taxels))
    np.testing.assert_array_equal(right.get_data().forces, forces_for(203, right_md.num_taxels))
    assert left.get_data().producer_session == lp.producer_session != rp.producer_session


def test_invalid_collection_ids_and_policy_are_refused(bus, md):
    # A naming-rule violation is a CollectionIdError: a TactileError and a ValueError alike.
    with pytest.raises(CollectionIdError, match="must not end in '/metadata'") as info:
        TactileTracker("tactile/metadata", bus)
    assert isinstance(info.value, ValueError) and isinstance(info.value, TactileError)
    with pytest.raises(CollectionIdError, match=r"segment '\*'"):
        TactilePublisher("tactile/*", md, bus)
    with pytest.raises(ValueError, match="error_policy"):
        TactileTracker(CID, bus, error_policy="ignore")


def test_update_with_timeout_wakes_on_arrival(bus, md):
    import threading

    tracker, link = confirmed(bus, md)
    t0 = time.monotonic()
    assert tracker.update(timeout_s=0.05) == 0
    assert time.monotonic() - t0 >= 0.045
    sender = threading.Timer(0.05, lambda: link.publish(Stream.DATA, data_bytes(0, md.num_taxels), 0))
    sender.start()
    t0 = time.monotonic()
    assert tracker.update(timeout_s=5.0) == 1
    assert 0.04 <= time.monotonic() - t0 < 2.0
    sender.join()


class ScriptedSource:
    """A source whose subscription returns events the test appends (to order them at will, as a
    network may: liveliness and samples travel separate paths)."""

    def __init__(self):
        self.events = []

    def subscribe(self, collection_id, *, queue_limit=10_000):
        source = self

        class _Sub:
            overflowed = 0

            def drain(self, max_events=None):
                out, source.events[:] = list(source.events), []
                return out

            def close(self):
                pass

        return _Sub()


def test_frames_in_flight_after_liveliness_loss_are_delivered_regain_withholds(md):
    src = ScriptedSource()
    tracker = TactileTracker(CID, src)

    def msg(stream, payload, seq, session=8):
        return Message(CID, stream, payload, session, seq, 0)

    src.events += [LivelinessChange(CID, 8, True), msg(Stream.METADATA, metadata_bytes(md), 0),
                   msg(Stream.DATA, data_bytes(0, md.num_taxels), 0),
                   LivelinessChange(CID, 8, False),  # overtook the session's last frame
                   msg(Stream.DATA, data_bytes(1, md.num_taxels), 1)]
    assert tracker.update() == 2 and tracker.counters.liveliness_lost == 1
    src.events += [LivelinessChange(CID, 8, True), msg(Stream.DATA, data_bytes(2, md.num_taxels), 2)]
    assert tracker.update() == 0 and tracker.counters.dropped_before_confirmation == 1
    src.events += [msg(Stream.METADATA, metadata_bytes(md), 1), msg(Stream.DATA, data_bytes(3, md.num_taxels), 3)]
    assert tracker.update() == 1 and tracker.get_data().sequence == 3
    assert tracker.counters.metadata_confirmations == 2


def test_finiteness_check_accepts_huge_finite_and_refuses_nan_inf(bus, md):
    from wuji_tactile_device.contract.records import all_finite

    f = forces_for(0, md.num_taxels)
    assert all_finite(f)
    f[0, 0] = f[1, 0] = 3e38  # huge but finite (their sum would overflow float32)
    assert all_finite(f)
    for bad in (np.nan, np.inf, -np.inf):
        g = forces_for(0, md.num_taxels)
        g[md.num_taxels - 1, 2] = bad
        assert not all_finite(g)
    g[0, 0] = np.inf  # +inf and -inf in one frame: still a typed error, no numpy warning
    probe, link = confirmed(InProcessBus(), md)
    link.publish(Stream.DATA, encode_tactile_record(g, TS), 0)
    with pytest.raises(NonFiniteForceError, match="taxel 0"):
        probe.update()
    tracker = TactileTracker(CID, bus)
    with TactilePublisher(CID, md, bus) as pub:
        pub.publish(f, sample_time_ns=0)
        assert tracker.update() == 1
    assert tracker.get_data().forces[1, 0] == np.float32(3e38)

_GOOD_DATA = data_bytes(0, 15)


@settings(max_examples=300, deadline=None)
@given(stream=st.sampled_from([Stream.DATA, Stream.METADATA]),
       payload=st.one_of(st.binary(max_size=400),
                         st.builds(lambda i, b: _GOOD_DATA[:i] + bytes([b]) + _GOOD_DATA[i + 1:],
                                   st.integers(0, len(_GOOD_DATA) - 1), st.integers(0, 255))))
def test_arbitrary_bytes_raise_only_typed_errors(stream, payload):
    """Garbage or single-byte corruptions: a typed TactileError or a valid frame, never a crash."""
    from wuji_tactile_device.errors import TactileError

    md = small_metadata()
    bus = InProcessBus()
    tracker, link = confirmed(bus, md)
    link.publish(stream, payload, 1)
    try:
        delivered = tracker.update()
    except TactileError:
        assert tracker.counters.rejected == 1 and tracker.get_data() is None
    else:
        if delivered:  # a corruption that still verifies must be a finite frame of the right size
            frame = tracker.get_data()
            assert frame.forces.shape == (md.num_taxels, 3) and np.isfinite(frame.forces).all()
    bus.close()
