"""The one subscription queue both transports share: bounded by events and by bytes, oversize
payloads refused at arrival (counted, noticed, never queued), liveliness never dropped; the
memory bound it gives a tracker; argument errors; `open_transport`; the hot path's record codec."""
from __future__ import annotations

import struct
import threading
import time
import tracemalloc

import numpy as np
import pytest
from streams_helpers import forces_for, small_metadata

from wuji_tactile_device.contract import (DeviceDataTimestamp, decode_tactile_record, encode_metadata_record,
                                          encode_tactile_record)
from wuji_tactile_device.errors import DataLayoutError, MessageTooLargeError, TransportError
from wuji_tactile_device.streams import TRANSPORTS, open_transport
from wuji_tactile_device.streams.base import (DEFAULT_QUEUE_BYTES, DroppedPayload, LivelinessChange, Message,
                                              Stream, TrackerCounters)
from wuji_tactile_device.contract.records import ForceRecordCodec
from wuji_tactile_device.streams.inproc import InProcessBus
from wuji_tactile_device.streams.publisher import TactilePublisher
from wuji_tactile_device.streams.queue import SubscriptionQueue
from wuji_tactile_device.streams.tracker import TactileTracker

CID = "tactile/right"
MB = 1_000_000


def msg(stream: Stream, payload: bytes, sequence: int = 0, session: int = 5) -> Message:
    return Message(CID, stream, payload, session, sequence, 0)


# -- the queue ---------------------------------------------------------------------------------------

def test_count_limit_counts_liveliness_but_never_drops_it():
    q = SubscriptionQueue(CID, limit=3, max_bytes=10**6)
    assert [q.put(msg(Stream.DATA, b"abc", i)) for i in range(4)] == [True, True, True, False]
    q.put_liveliness(LivelinessChange(CID, 5, False))  # beyond the limit, still queued
    assert (len(q), q.overflowed, q.overflowed_bytes) == (4, 1, 0)
    events = q.drain()
    assert [e.sequence for e in events[:3]] == [0, 1, 2] and events[3] == LivelinessChange(CID, 5, False)


def test_byte_budget_drops_and_counts_and_drain_returns_the_room():
    q = SubscriptionQueue(CID, limit=100, max_bytes=1000)
    for i in range(5):
        q.put(msg(Stream.DATA, bytes(300), i))
    assert (len(q), q.held_bytes, q.overflowed_bytes, q.overflowed) == (3, 900, 2, 0)
    assert [e.sequence for e in q.drain(2)] == [0, 1] and q.held_bytes == 300  # partial drain
    assert q.put(msg(Stream.DATA, bytes(700), 5)) and q.held_bytes == 1000
    assert not q.put(msg(Stream.DATA, b"x", 6)) and q.overflowed_bytes == 3
    q.drain()
    assert q.held_bytes == 0 and q.put(msg(Stream.DATA, bytes(1000), 7))
    assert not q.put(msg(Stream.METADATA, bytes(1001), 0))  # larger than the whole budget
    assert (q.overflowed_bytes, q.oversize_dropped) == (4, 0)


def test_oversize_payload_refused_at_arrival_and_noticed_in_order():
    q = SubscriptionQueue(CID, limit=10, max_bytes=10**6, max_data_size=100, max_metadata_size=50)
    q.put(msg(Stream.DATA, bytes(100), 0))
    q.put(msg(Stream.DATA, bytes(101), 1))
    q.put(msg(Stream.METADATA, bytes(51), 0))
    q.put(msg(Stream.DATA, bytes(10), 2))
    events = q.drain()
    assert [type(e) for e in events] == [Message, DroppedPayload, DroppedPayload, Message]
    assert events[1] == DroppedPayload(CID, Stream.DATA, 5, 1, 101, 100, 0)
    assert (events[2].stream, events[2].size, events[2].limit) == (Stream.METADATA, 51, 50)
    assert q.oversize_dropped == 2 and q.held_bytes == 0  # a notice holds no payload bytes
    assert q.max_payload(Stream.DATA) == 100 and q.max_payload(Stream.METADATA) == 50
    assert SubscriptionQueue(CID, max_bytes=4096).max_payload(Stream.DATA) == 4096


def test_counters_are_the_trackers_shape():
    q = SubscriptionQueue(CID, limit=1, max_bytes=10, max_data_size=8)
    q.put(msg(Stream.DATA, bytes(9)))  # oversize: noticed (fills the one slot)
    q.put(msg(Stream.DATA, bytes(2)))  # no room: overflowed
    q.count_malformed()
    c = q.counters()
    assert isinstance(c, TrackerCounters)
    assert (c.oversize_dropped, c.overflowed, c.overflowed_bytes, c.transport_malformed, c.received) == (1, 1, 0, 1, 0)


def test_wait_wakes_on_arrival_and_times_out():
    q = SubscriptionQueue(CID)
    t0 = time.monotonic()
    assert q.wait(0.05) is False and time.monotonic() - t0 >= 0.045
    timer = threading.Timer(0.05, lambda: q.put(msg(Stream.DATA, b"x")))
    timer.start()
    t0 = time.monotonic()
    assert q.wait(5.0) is True and time.monotonic() - t0 < 2.0
    timer.join()


# -- argument errors are ValueError ------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, name", [({"queue_limit": 0}, "queue_limit"), ({"queue_bytes": 0}, "queue_bytes"),
                                          ({"max_data_size": -1}, "max_data_size"),
                                          ({"queue_limit": 2.5}, "queue_limit")])
def test_bad_limits_are_value_errors(kwargs, name):
    bus = InProcessBus()
    with pytest.raises(ValueError, match=f"'tactile/right': {name} must be an integer >= 1, got") as info:
        bus.subscribe(CID, **kwargs)
    assert not isinstance(info.value, TransportError)
    if name != "max_data_size":
        with pytest.raises(ValueError, match=name):
            TactileTracker(CID, bus, **kwargs)
    with pytest.raises(ValueError, match="keep_frames must be an integer >= 1, got 0"):
        TactileTracker(CID, bus, keep_frames=0)
    with pytest.raises(ValueError, match="max_flatbuffer_size must be an integer >= 1, got 0"):
        TactileTracker(CID, bus, max_flatbuffer_size=0)
    assert TactileTracker(CID, bus, queue_limit=np.int64(5)).update() == 0  # any integer type
    bus.close()


# -- memory bound (issue: 120 × 10 MB samples before update() took a tracker from 42 to 1,375 MB) ----

def _publish_big_samples(bus: InProcessBus, count: int, size: int) -> None:
    link = bus.open_producer(CID, 77)
    for i in range(count):
        link.publish(Stream.DATA, bytes(bytearray(size)), i)  # a distinct object each time
    link.close()


@pytest.mark.parametrize("max_size, queue_bytes", [(None, DEFAULT_QUEUE_BYTES), (16 * MB, 32 * MB)])
def test_120_samples_of_10_mb_before_update_stay_within_the_byte_budget(max_size, queue_bytes):
    bus = InProcessBus()
    kwargs = {} if max_size is None else {"max_flatbuffer_size": max_size}
    tracker = TactileTracker(CID, bus, queue_bytes=queue_bytes, error_policy="drop", **kwargs)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        _publish_big_samples(bus, 120, 10 * MB)
        held, peak = (v - base for v in tracemalloc.get_traced_memory())
    finally:
        tracemalloc.stop()
    c = tracker._subscription.counters
    if max_size is None:  # default limits: every sample is refused at arrival, nothing held
        assert held < 1 * MB and peak < 25 * MB
        assert (c.oversize_dropped, c.overflowed_bytes) == (120, 0)
    else:  # accepted sizes: the byte budget holds 3 of them, the rest are counted
        assert held <= queue_bytes and peak <= queue_bytes + 25 * MB
        assert (c.oversize_dropped, c.overflowed_bytes) == (0, 117)
    tracker.update()  # data of an unconfirmed session: dropped before confirmation, counted
    assert tracker.counters.received == 120 - tracker.counters.overflowed_bytes
    assert tracker.counters.dropped_before_confirmation == tracker.counters.received
    tracker.close()
    bus.close()


def test_oversize_data_of_a_confirmed_session_is_reported_like_any_oversized_record():
    md = small_metadata()
    bus = InProcessBus()
    tracker = TactileTracker(CID, bus, max_flatbuffer_size=1000)
    link = bus.open_producer(CID, 3)
    link.publish(Stream.METADATA, encode_metadata_record(md, DeviceDataTimestamp(1, 2, 3)), 0)
    link.publish(Stream.DATA, bytes(5000), 0)
    link.publish(Stream.DATA, encode_tactile_record(forces_for(1, md.num_taxels), DeviceDataTimestamp(1, 2, 3)), 1)
    with pytest.raises(MessageTooLargeError, match="'tactile/right': data frame 0 from producer session "
                                                   "0000000000000003 refused: 5000 bytes exceeds the limit of 1000"):
        tracker.update()
    assert tracker.update() == 1 and tracker.get_data().sequence == 1  # the frame behind it was kept
    c = tracker.counters
    assert (c.received, c.rejected, c.delivered, c.oversize_dropped) == (2, 1, 1, 1)
    assert tracker._subscription.queue.held_bytes == 0
    bus.close()


def test_replay_like_sources_keep_their_own_subscribe_signature():
    class Source:  # subscribe() takes only queue_limit, as an MCAP replay does
        def subscribe(self, collection_id, *, queue_limit):
            self.limit = queue_limit
            return SubscriptionQueueSub(collection_id)

    class SubscriptionQueueSub:
        overflowed = 3

        def __init__(self, collection_id):
            self.collection_id = collection_id

        def drain(self, max_events=None):
            return []

        def close(self):
            pass

    source = Source()
    tracker = TactileTracker(CID, source, queue_limit=7)
    assert tracker.update() == 0 and source.limit == 7 and tracker.counters.overflowed == 3


# -- open_transport ----------------------------------------------------------------------------------

def test_open_transport_by_name():
    bus = open_transport("inproc")
    assert isinstance(bus, InProcessBus)
    bus.close()
    with pytest.raises(ValueError, match="inproc transport takes no config"):
        open_transport("inproc", listen=["tcp/127.0.0.1:0"])
    with pytest.raises(ValueError, match="unknown transport 'dds'; choose one of inproc, zenoh"):
        open_transport("dds")
    assert TRANSPORTS == ("inproc", "zenoh")


def test_open_transport_zenoh_moves_frames():
    from wuji_tactile_device.streams.zenoh_transport import ZenohTransport

    with open_transport("zenoh", listen=["tcp/127.0.0.1:0"], connect=[]) as transport:
        assert isinstance(transport, ZenohTransport) and transport.listen_endpoints == ["tcp/127.0.0.1:0"]
        md = small_metadata()
        tracker = TactileTracker("tactile/open", transport)
        with TactilePublisher("tactile/open", md, transport) as pub:
            pub.publish(forces_for(4, md.num_taxels), sample_time_ns=4)
            deadline = time.monotonic() + 5
            while tracker.counters.delivered == 0 and time.monotonic() < deadline:
                tracker.update(timeout_s=0.05)
        np.testing.assert_array_equal(tracker.get_data().forces, forces_for(4, md.num_taxels))


# -- the hot path's record codec ---------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 15, 176, 700])
def test_codec_encodes_the_contracts_bytes_and_checks_only_its_structure(n):
    codec = ForceRecordCodec(n)
    assert codec.size == len(encode_tactile_record(np.zeros((n, 3), np.float32), DeviceDataTimestamp(0, 0, 0)))
    rng = np.random.default_rng(n)
    forces = rng.normal(size=(n, 3)).astype(np.float32)
    for stamp in [(0, 0, 0), (-(2**63), 5, 2**63 - 1), (123456789, 987654321, -1)]:
        payload = codec.encode(forces, *stamp)
        assert payload == encode_tactile_record(forces, DeviceDataTimestamp(*stamp))
        got_forces, got_stamp = codec.decode(payload)
        np.testing.assert_array_equal(got_forces, forces)
        assert got_stamp == stamp and not got_forces.flags.writeable
    reference = decode_tactile_record(payload)
    np.testing.assert_array_equal(reference.forces, forces)
    with pytest.raises(struct.error):  # not an int64: the publisher lets the contract judge it
        codec.encode(forces, 1.5, 0, 0)
    structural = [i for i in range(len(payload)) if not (codec._ts <= i < codec._ts + 24)
                  and not (codec._forces <= i < codec._forces + 12 * n)]
    assert len(structural) == len(payload) - 24 - 12 * n > 0
    for i in structural:  # any changed structural byte sends the payload to the full verifier
        mutated = bytearray(payload)
        mutated[i] ^= 0x01
        assert codec.decode(bytes(mutated)) is None
    assert codec.decode(payload[:-1]) is None and codec.decode(bytearray(payload)) is None


def test_publisher_falls_back_to_the_contract_for_unusual_timestamps():
    md = small_metadata()
    bus = InProcessBus()
    tracker = TactileTracker(CID, bus)
    with TactilePublisher(CID, md, bus) as pub:
        pub.publish(forces_for(0, md.num_taxels), sample_time_ns=12.0, device_time_ns=np.int64(7))
        tracker.update()
        assert tracker.get_data().timestamp[1:] == (12, 7)
        assert pub.last_timestamp.sample_time_local_common_clock == 12.0
        with pytest.raises(DataLayoutError, match="int64"):
            pub.publish(forces_for(1, md.num_taxels), sample_time_ns=2**63)
        assert pub.publish(forces_for(2, md.num_taxels), sample_time_ns=3) == 1  # refused frame used no sequence
    bus.close()


@pytest.mark.parametrize("fault", ["nan", "structure", "taxels", "truncated"])
def test_batched_checks_keep_every_tracker_semantic(fault):
    """40 queued frames are checked as a batch: a faulty one in the middle still raises at its own
    sequence, the 20 before it are delivered (observers told, in order), the 19 behind it stay
    pending and are delivered by the next update; under error_policy='drop' it is only counted."""
    md = small_metadata()
    n = md.num_taxels
    ts = DeviceDataTimestamp(1, 2, 3)

    def payloads():
        out = [encode_tactile_record(forces_for(i, n), DeviceDataTimestamp(i, i + 1, i + 2)) for i in range(40)]
        bad = forces_for(20, n)
        if fault == "nan":
            bad[3, 1] = np.nan
            out[20] = encode_tactile_record(bad, ts)
        elif fault == "structure":
            out[20] = out[20][:4] + b"TMER" + out[20][8:]  # another record type's identifier, same size
        elif fault == "taxels":
            out[20] = encode_tactile_record(forces_for(20, n + 1), ts)
        else:
            out[20] = out[20][:-7]
        return out

    expected = {"nan": "NonFiniteForceError", "structure": "InvalidMessageError", "taxels": "DataLayoutError",
                "truncated": "InvalidMessageError"}[fault]
    for policy in ("raise", "drop"):
        bus = InProcessBus()
        tracker = TactileTracker(CID, bus, error_policy=policy)
        seen = []

        class Observer:
            def __init__(self, seen: list[int]) -> None:
                self.seen = seen

            def on_metadata(self, *args):
                pass

            def on_data(self, collection_id, message, frame):
                self.seen.append(frame.sequence)
                np.testing.assert_array_equal(frame.forces, forces_for(frame.sequence, n))
                assert frame.timestamp == (frame.sequence, frame.sequence + 1, frame.sequence + 2)

        tracker.add_observer(Observer(seen))
        link = bus.open_producer(CID, 9)
        link.publish(Stream.METADATA, encode_metadata_record(md, ts), 0)
        for i, payload in enumerate(payloads()):
            link.publish(Stream.DATA, payload, i)
        if policy == "raise":
            with pytest.raises(Exception, match="data frame 20") as info:
                tracker.update()
            assert type(info.value).__name__ == expected
            assert seen == list(range(20)) and tracker.pending == 19
            assert tracker.update() == 19
        else:
            assert tracker.update() == 39
        assert seen == [i for i in range(40) if i != 20]
        c = tracker.counters
        assert (c.received, c.delivered, c.rejected, c.sequence_gaps, c.frames_missing) == (40, 39, 1, 1, 1)
        assert tracker.get_data().sequence == 39 and not tracker.get_data().forces.flags.writeable
        bus.close()


def test_a_peer_inventing_session_ids_cannot_grow_the_trackers_memory():
    """Issue: per-session state was never freed (1 M random session ids: +208 MB, and each
    confirmed session kept its own copy of the metadata bytes). Past MAX_PRODUCER_SESSIONS the
    oldest dead or unconfirmed session is forgotten; the real producer keeps delivering."""
    from wuji_tactile_device.streams.tracker import MAX_PRODUCER_SESSIONS

    md = small_metadata()
    meta = encode_metadata_record(md, DeviceDataTimestamp(1, 1, 1))
    events: list = []

    class Source:
        def subscribe(self, collection_id, **limits):
            class Sub:
                overflowed = 0

                def drain(self, max_events=None):
                    out, events[:] = list(events), []
                    return out

                def close(self):
                    pass
            return Sub()

    tracker = TactileTracker(CID, Source())
    real = 7
    events.append(Message(CID, Stream.METADATA, meta, real, 0, 0))
    tracker.update()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for batch in range(5):  # 5 × 1,000 invented sessions sending valid metadata, then a real frame
            for k in range(1000):
                sid = 1_000_000 + batch * 1000 + k
                events.append(Message(CID, Stream.METADATA, bytes(meta), sid, 0, 0))  # a fresh copy each
            events.append(Message(CID, Stream.METADATA, meta, real, batch + 1, 0))  # the real one republishes
            events.append(Message(CID, Stream.DATA, encode_tactile_record(forces_for(batch, md.num_taxels),
                                                                           DeviceDataTimestamp(batch, batch, batch)),
                                  real, batch, 0))
            tracker.update()
            assert tracker.get_data().producer_session == real and tracker.get_data().sequence == batch
        grown = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert grown < (MAX_PRODUCER_SESSIONS + 50) * (len(meta) + 2_000), grown  # bounded by the cap, not by 5,000
    # (the real session, the oldest, may be forgotten too while every invented one looks alive and
    # confirmed: its next republication confirms it again, as the frames above show)
    assert tracker.counters.producer_sessions >= 5_001
    assert tracker.counters.sessions_forgotten >= 5_001 - MAX_PRODUCER_SESSIONS


def test_drain_run_reports_one_sessions_consecutive_data_of_one_size_and_nothing_else():
    q = SubscriptionQueue(CID, limit=100, max_bytes=10**6, max_data_size=200)

    def run_of(*events) -> tuple | None:
        for e in events:
            q.put(e) if type(e) is Message else q.put_liveliness(e)
        drained, run = q.drain_run()
        assert drained == [e for e in events if not (type(e) is Message and len(e.payload) > 200)] or run is None
        return run

    clean = [msg(Stream.DATA, bytes(100), i) for i in range(3, 9)]
    assert run_of(*clean) == (5, 100)
    assert q.drain_run() == ([], None)  # nothing queued: no run
    assert run_of(*clean[:2], clean[3]) is None  # a gap
    assert run_of(*clean[:2], clean[1]) is None  # a repeat
    assert run_of(clean[0], msg(Stream.DATA, bytes(100), 4, session=6)) is None  # another session
    assert run_of(clean[0], msg(Stream.DATA, bytes(101), 4)) is None  # another size
    assert run_of(clean[0], msg(Stream.DATA, bytearray(100), 4)) is None  # not bytes
    assert run_of(msg(Stream.DATA, bytearray(100), 4), clean[2]) is None
    assert run_of(msg(Stream.METADATA, bytes(100), 3), msg(Stream.DATA, bytes(100), 4)) is None
    assert run_of(clean[0], LivelinessChange(CID, 5, True), clean[1]) is None
    assert run_of(clean[0], msg(Stream.DATA, bytes(300), 4), clean[2]) is None  # the notice breaks it
    assert run_of(clean[0]) == (5, 100)  # a fresh run after every drain
    for e in clean:
        q.put(e)
    assert [e.sequence for e in q.drain(2)] == [3, 4]  # a partial drain leaves a run
    assert q.drain_run() == (clean[2:], (5, 100))


def test_check_run_passes_exactly_the_runs_check_batch_passes_whole():
    codec = ForceRecordCodec(15)
    records = [encode_tactile_record(forces_for(i, 15), DeviceDataTimestamp(i, 2 * i, 3 * i)) for i in range(12)]
    forces = codec.check_run(b"".join(records), len(records))
    ok, batch_forces = codec.check_batch(records)
    assert all(ok) and forces is not None and not forces.flags.writeable
    assert np.array_equal(forces, batch_forces)
    assert np.array_equal(forces[5], decode_tactile_record(records[5]).forces)
    bad_nan = encode_tactile_record(np.where(np.arange(45).reshape(15, 3) == 44, np.nan,
                                             forces_for(1, 15)).astype(np.float32), DeviceDataTimestamp(1, 2, 3))
    at = codec._middle_at  # the first structural byte after the timestamp
    for bad in (bad_nan, records[0][:4] + b"TMER" + records[0][8:], records[0][:at] + b"\x7f" + records[0][at + 1:]):
        # (a) a non-finite force, (b) another file identifier, (c) a structural byte after the timestamp
        run = records[:6] + [bad] + records[6:]
        assert not all(codec.check_batch(run)[0])
        assert codec.check_run(b"".join(run), len(run)) is None
    assert codec.check_run(b"".join(records)[:-1], len(records)) is None  # not count × size bytes
