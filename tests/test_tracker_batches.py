"""A tracker that takes many queued frames at once (checked in batches, bookkeeping for a whole run
at once when nobody but `get_data()` sees the frames) decides exactly as one that takes them one
by one: same errors in the same order with the same messages, same counters, same frames."""
from __future__ import annotations

import numpy as np
import pytest
from streams_helpers import forces_for, small_metadata

from wuji_tactile_device.contract import DeviceDataTimestamp, encode_metadata_record, encode_tactile_record
from wuji_tactile_device.errors import TactileError
from wuji_tactile_device.contract import records
from wuji_tactile_device.contract.records import ForceRecordCodec
from wuji_tactile_device.streams.base import LivelinessChange, Message, Stream
from wuji_tactile_device.streams.queue import QueuedSubscription, SubscriptionQueue
from wuji_tactile_device.streams.tracker import _BATCH_MAX, _BATCH_MIN, TactileTracker

CID = "tactile/right"


@pytest.fixture(params=["native", "numpy"])
def run_check(request, monkeypatch):
    """The run path's record check (`ForceRecordCodec.check_events`): compiled, or numpy."""
    if request.param == "numpy":
        monkeypatch.setattr(records, "_native", None)
    elif not records.NATIVE_AVAILABLE:
        pytest.skip("the install did not compile _record_check (no C compiler): the numpy case covers it")
    return request.param
A, B, C = 0xA, 0xB, 0xC  # producer sessions


class Feed:
    """A source whose queue the test fills directly (what a transport would have delivered)."""

    overflowed = 0

    def __init__(self) -> None:
        self.events: list = []

    def subscribe(self, collection_id: str, *, queue_limit: int = 0) -> Feed:
        return self

    def drain(self, max_events: int | None = None) -> list:
        out, self.events = self.events, []
        return out

    def close(self) -> None:
        pass


class _Queued(QueuedSubscription):
    def close(self) -> None:
        pass


class QueuedFeed:
    """A source with the live transports' queue: events go in by `put` / `put_liveliness`, so the
    queue follows their runs and the tracker takes its run path (`SubscriptionQueue.drain_run`)."""

    def __init__(self) -> None:
        self.queue = SubscriptionQueue(CID, limit=10**6, max_bytes=10**9)

    def subscribe(self, collection_id: str, *, queue_limit: int = 0) -> QueuedSubscription:
        return _Queued(self.queue)

    def push(self, events: list) -> None:
        for event in events:
            if type(event) is Message:
                assert self.queue.put(event)
            else:
                self.queue.put_liveliness(event)


def segments(events: list) -> list[list]:
    """`events` cut before and after every event that is not a data message: each run of data
    arrives alone in the queue, as a live stream's frames between two metadata repeats do."""
    out: list[list] = [[]]
    for event in events:
        if type(event) is Message and event.stream is Stream.DATA:
            out[-1].append(event)
        else:
            out += [[event], []]
    return [segment for segment in out if segment]


def data(session: int, sequence: int, n: int, fault: str = "") -> Message:
    forces = forces_for(sequence, n)
    stamp = DeviceDataTimestamp(sequence, sequence + 1, sequence + 2)
    if fault == "nan":
        forces[1, 2] = np.nan
    payload = encode_tactile_record(forces_for(sequence, n + 1) if fault == "taxels" else forces, stamp)
    if fault == "structure":
        payload = payload[:4] + b"TMER" + payload[8:]  # another record type's identifier, same size
    elif fault == "truncated":
        payload = payload[:-7]
    elif fault == "bytearray":  # not bytes: the contract's verifier reads it
        payload = bytearray(payload)
    return Message(CID, Stream.DATA, payload, session, sequence, 0)


def scenarios(md) -> dict[str, list]:
    n = md.num_taxels
    meta = encode_metadata_record(md, DeviceDataTimestamp(1, 1, 1))
    other = encode_metadata_record(small_metadata(x_offset=0.5), DeviceDataTimestamp(1, 1, 1))

    def confirm(session: int) -> Message:
        return Message(CID, Stream.METADATA, meta, session, 0, 0)

    run = [data(A, i, n) for i in range(60)]
    out = {"clean": [confirm(A)] + run,
           "clean, long": [confirm(A)] + [data(A, i, n) for i in range(2 * _BATCH_MAX + 3)],
           "after confirmation, from 7": [confirm(A)] + [data(A, 7 + i, n) for i in range(30)]}
    for fault in ("nan", "structure", "taxels", "truncated", "bytearray"):
        events = [confirm(A)] + [data(A, i, n, fault if i in (3, 20, 21, 59) else "") for i in range(60)]
        out[fault] = events
    gaps = [confirm(A)] + [data(A, i, n) for i in [*range(10), *range(15, 30), 29, 12, *range(30, 50)]]
    out["gaps, duplicate, older"] = gaps
    out["unconfirmed session in the run"] = [confirm(A)] + [data(B if i % 7 == 3 else A, i, n) for i in range(60)]
    out["two sessions interleaved"] = [confirm(A), confirm(C)] + [data(A if i % 2 else C, i // 2, n)
                                                                  for i in range(80)]
    out["liveliness lost then regained"] = (
        [confirm(A)] + [data(A, i, n) for i in range(20)] + [LivelinessChange(CID, A, False)]
        + [data(A, i, n) for i in range(20, 30)] + [LivelinessChange(CID, A, True)]
        + [data(A, i, n) for i in range(30, 45)] + [confirm(A)] + [data(A, i, n) for i in range(45, 70)])
    out["mismatching metadata mid-run"] = ([confirm(A)] + [data(A, i, n) for i in range(20)]
                                           + [Message(CID, Stream.METADATA, other, C, 0, 0)]
                                           + [data(C, i, n) for i in range(20)] + [data(A, i, n) for i in range(20, 40)])
    return out


def drive(events: list, *, one_by_one: bool, policy: str, observe: bool, queued: bool = False):
    """Feed `events` all at once (or one per update; or `queued`: through a live transport's queue,
    each run of data messages at once) and record what the tracker decided."""
    if queued:
        qfeed = QueuedFeed()
        tracker = TactileTracker(CID, qfeed, error_policy=policy)
        return _decisions(tracker, events, segments(events), qfeed.push, policy, observe, one_by_one=False)
    feed = Feed()
    tracker = TactileTracker(CID, feed, error_policy=policy)
    return _decisions(tracker, events, [[e] for e in events] if one_by_one else [events],
                      lambda part: feed.events.extend(part), policy, observe, one_by_one)


def _decisions(tracker: TactileTracker, events: list, parts: list[list], push, policy: str, observe: bool,
               one_by_one: bool):
    seen: list = []
    if observe:
        class Observer:
            def on_metadata(self, *args) -> None:
                seen.append("metadata")

            def on_data(self, collection_id, message, frame) -> None:
                seen.append((frame.producer_session, frame.sequence, tuple(frame.timestamp), frame.forces.tobytes()))

        tracker.add_observer(Observer())
    errors: list = []
    newest: list = []

    def settle() -> None:
        while True:
            try:
                tracker.update()
            except TactileError as exc:
                errors.append((type(exc).__name__, str(exc)))
                continue
            if tracker.pending == 0:
                return

    for part in parts:
        push(part)
        settle()
    latest = tracker.get_data()
    if latest is not None:
        newest.append((latest.producer_session, latest.sequence, tuple(latest.timestamp),
                       latest.forces.tobytes(), latest.forces.flags.writeable))
    return errors, tracker.counters, seen, newest


@pytest.mark.parametrize("observe", [False, True], ids=["get_data only", "observer"])
@pytest.mark.parametrize("policy", ["raise", "drop"])
@pytest.mark.parametrize("taxels_per_segment", [3, 36], ids=["15 taxels", "180 taxels"])
def test_a_batch_decides_exactly_as_frames_one_by_one(taxels_per_segment, policy, observe, run_check):
    md = small_metadata(taxels_per_segment)
    assert _BATCH_MIN <= 20  # every scenario has runs long enough to be checked as batches
    for name, events in scenarios(md).items():
        alone = drive(events, one_by_one=True, policy=policy, observe=observe)
        for queued in (False, True):
            batched = drive(events, one_by_one=False, policy=policy, observe=observe, queued=queued)
            label = f"{name}, {'queued runs' if queued else 'all at once'}"
            assert batched[0] == alone[0], label  # the same errors, in order, with the same messages
            assert batched[1] == alone[1], label  # every counter, last_error included
            assert batched[2] == alone[2], label  # the frames observers saw
            assert batched[3] == alone[3], label  # the newest frame, read-only
        assert alone[1].delivered > 0, name


def test_queued_runs_take_the_run_check_and_leave_it_for_what_it_cannot_decide(monkeypatch, run_check):
    """The queued comparison above goes through `ForceRecordCodec.check_events` (the run path) where
    a run is clean, and the run path hands every run it cannot pass whole to the general path."""
    results: list = []
    check_events = ForceRecordCodec.check_events

    def recording(self, events, start, count, item):
        out = check_events(self, events, start, count, item)
        results.append(None if out is None else count)
        return out

    monkeypatch.setattr(ForceRecordCodec, "check_events", recording)
    md = small_metadata(3)
    s = scenarios(md)
    _, c, _, newest = drive(s["clean, long"], one_by_one=False, policy="raise", observe=False, queued=True)
    assert results == [_BATCH_MAX, _BATCH_MAX] and c.delivered == 2 * _BATCH_MAX + 3  # 3 left: one by one
    assert newest[0][1] == 2 * _BATCH_MAX + 2
    results.clear()
    errors, c, _, _ = drive(s["nan"], one_by_one=False, policy="raise", observe=False, queued=True)
    assert None in results and len(errors) == 4 and c.delivered == 56  # refused by the general path
    results.clear()
    drive(s["clean"], one_by_one=False, policy="raise", observe=True, queued=True)
    assert results == []  # an observer sees every frame: the general path builds each one
    results.clear()
    drive(s["gaps, duplicate, older"], one_by_one=False, policy="raise", observe=False, queued=True)
    assert results == []  # not consecutive: the queue reports no run


def test_the_scenarios_exercise_what_they_name():
    """The comparison above is only worth what the scenarios contain: faults are refused, gaps,
    duplicates and withheld frames are counted (checked here on the one-by-one reference)."""
    md = small_metadata(3)
    s = scenarios(md)
    errors, c, _, _ = drive(s["nan"], one_by_one=True, policy="raise", observe=False)
    assert [e[0] for e in errors] == ["NonFiniteForceError"] * 4 and "data frame 20" in errors[1][1]
    assert (c.received, c.delivered, c.rejected) == (60, 56, 4)
    for fault, kind in (("structure", "InvalidMessageError"), ("taxels", "DataLayoutError"),
                        ("truncated", "InvalidMessageError")):
        assert {e[0] for e in drive(s[fault], one_by_one=True, policy="raise", observe=False)[0]} == {kind}
    _, c, _, _ = drive(s["bytearray"], one_by_one=True, policy="raise", observe=False)
    assert c.delivered == 60 and c.rejected == 0  # a bytearray record is valid, read by the verifier
    _, c, _, _ = drive(s["gaps, duplicate, older"], one_by_one=True, policy="raise", observe=False)
    assert (c.sequence_gaps, c.frames_missing, c.out_of_order) == (1, 5, 2)
    _, c, _, _ = drive(s["unconfirmed session in the run"], one_by_one=True, policy="raise", observe=False)
    assert c.dropped_before_confirmation == 9
    _, c, _, _ = drive(s["liveliness lost then regained"], one_by_one=True, policy="raise", observe=False)
    assert c.dropped_before_confirmation == 15 and c.delivered == 55
    errors, c, _, _ = drive(s["mismatching metadata mid-run"], one_by_one=True, policy="drop", observe=False)
    assert [e[0] for e in errors] == ["MetadataMismatchError"] and c.dropped_before_confirmation == 20
