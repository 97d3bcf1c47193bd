"""`TactileTracker.frames()` keeps going while events arrive, even when an update delivers no frame
(a source that hands over one event at a time, data before its metadata, as a replay may)."""
from __future__ import annotations

from streams_helpers import forces_for, small_metadata

from wuji_tactile_device.contract import DeviceDataTimestamp, encode_metadata_record, encode_tactile_record
from wuji_tactile_device.streams.tracker import TactileTracker
from wuji_tactile_device.streams.base import LivelinessChange, Message, Stream, Subscription

SESSION = 0xABC


class OneEventPerDrain(Subscription):
    """A scripted source: each drain() hands over the next event, like a paced replay."""

    def __init__(self, collection_id: str, events: list):
        self.collection_id = collection_id
        self._events = list(events)

    def drain(self, max_events=None):
        return [self._events.pop(0)] if self._events else []

    @property
    def overflowed(self) -> int:
        return 0

    def close(self) -> None:
        self._events.clear()


class Script:
    def __init__(self, events):
        self.events = events

    def subscribe(self, collection_id, *, queue_limit=0):
        return OneEventPerDrain(collection_id, self.events)


def test_frames_continue_past_updates_that_deliver_nothing():
    md = small_metadata()
    n = md.num_taxels

    def data(seq):
        payload = encode_tactile_record(forces_for(seq, n), DeviceDataTimestamp(seq, seq, seq))
        return Message("tactile/right", Stream.DATA, payload, SESSION, seq, seq)

    metadata = Message("tactile/right", Stream.METADATA, encode_metadata_record(md, DeviceDataTimestamp(0, 0, 0)),
                       SESSION, 0, 0)
    events = [LivelinessChange("tactile/right", SESSION, True), data(0), data(1), metadata, data(2), data(3)]
    tracker = TactileTracker("tactile/right", Script(events))
    sequences = [frame.sequence for frame in tracker.frames()]
    assert sequences == [2, 3]  # everything after the metadata, nothing before it
    assert tracker.counters.dropped_before_confirmation == 2
    assert list(tracker.frames()) == []  # exhausted: stops instead of spinning
