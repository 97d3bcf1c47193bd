"""The subscription queue every transport shares: events wait here between the transport's
delivery thread(s) and the consumer's `drain()`.

Bounded twice: by event count (`limit`) and by the payload bytes of the queued messages
(`max_bytes`). A message that does not fit is dropped and counted (`overflowed` for the count,
`overflowed_bytes` for the bytes). Per stream, a payload larger than that stream's size limit is
refused at arrival (`oversize_dropped`): the payload is never queued, a small `DroppedPayload`
notice takes its place so the consumer can report the refusal in order. Liveliness changes are
never dropped: they are rare, carry no payload, and restart detection depends on them.

Thread safety: one short lock around every change; `wait()` sleeps on a condition of that lock,
notified only while someone waits (so a put costs no wake-up when nobody sleeps). `drain()` hands
over the queued list itself (no copy) and starts a new one.

Runs: the queue notes, as events arrive, whether everything queued since the last drain is a run
of data messages with `bytes` payloads of one size from one producer session with consecutive
sequence numbers (`drain_run`), so that a consumer can check such a run at once without first
walking it event by event (a few comparisons per put, under the lock it takes anyway).
"""
from __future__ import annotations

import threading
from numbers import Integral

from ..contract.naming import Stream
from .base import (DEFAULT_QUEUE_BYTES, DEFAULT_QUEUE_LIMIT, DroppedPayload, Event, LivelinessChange, Message,
                   Subscription, TrackerCounters)


_DATA = Stream.DATA


def check_count(collection_id: str, name: str, value: object) -> None:
    """`ValueError` unless `value` (argument `name`) is an integer >= 1."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ValueError(f"collection {collection_id!r}: {name} must be an integer >= 1, got {value!r}")


def check_limits(collection_id: str, *, queue_limit: int, queue_bytes: int, max_data_size: int | None,
                 max_metadata_size: int | None) -> None:
    """`ValueError` unless every limit is an integer >= 1 (the size limits may be None)."""
    check_count(collection_id, "queue_limit", queue_limit)
    check_count(collection_id, "queue_bytes", queue_bytes)
    for name, value in (("max_data_size", max_data_size), ("max_metadata_size", max_metadata_size)):
        if value is not None:
            check_count(collection_id, name, value)


class SubscriptionQueue:
    """A bounded FIFO of one subscription's events (see the module doc).

    `limit` [events], `max_bytes` [payload bytes]; `max_data_size` / `max_metadata_size` [bytes]:
    largest payload accepted on each stream (None: only `max_bytes` bounds it)."""

    def __init__(self, collection_id: str, *, limit: int = DEFAULT_QUEUE_LIMIT, max_bytes: int = DEFAULT_QUEUE_BYTES,
                 max_data_size: int | None = None, max_metadata_size: int | None = None):
        check_limits(collection_id, queue_limit=limit, queue_bytes=max_bytes, max_data_size=max_data_size,
                     max_metadata_size=max_metadata_size)
        self.collection_id = collection_id
        self.limit = limit
        self.max_bytes = max_bytes
        self._size_limits = {Stream.DATA: max_data_size, Stream.METADATA: max_metadata_size}
        self._data_limit, self._metadata_limit = max_data_size, max_metadata_size  # (an Enum hashes in Python)
        self._events: list[Event] = []
        self._bytes = 0  # payload bytes of the queued messages
        # The run of the queued events (module doc): while `_run`, every queued event is a data
        # Message with a `bytes` payload of `_run_size` bytes from `_run_session`, sequences
        # consecutive up to `_run_next` - 1. Meaningless while nothing is queued.
        self._run = False
        self._run_session = 0
        self._run_next = 0
        self._run_size = 0
        self._lock = threading.Lock()
        self._acquire, self._release = self._lock.acquire, self._lock.release
        self._arrival = threading.Condition(self._lock)
        self._waiters = 0
        self.overflowed = 0
        self.overflowed_bytes = 0
        self.oversize_dropped = 0
        self.malformed = 0

    @property
    def held_bytes(self) -> int:
        """Payload bytes of the messages queued now [bytes]."""
        return self._bytes

    def size_limit(self, stream: Stream) -> int | None:
        """Largest payload accepted on `stream` [bytes], None if only the byte budget bounds it."""
        return self._size_limits[stream]

    def max_payload(self, stream: Stream) -> int:
        """Largest payload on `stream` that could ever be queued [bytes]: a transport refuses a
        larger one (`refuse`) before queuing it."""
        limit = self._size_limits[stream]
        return self.max_bytes if limit is None else min(limit, self.max_bytes)

    def refuse(self, stream: Stream, size: int, producer_session: int, sequence: int, receive_time_ns: int) -> None:
        """Count a payload larger than `max_payload(stream)`: oversize for its stream (and noticed
        with a `DroppedPayload`), or larger than the whole byte budget (`overflowed_bytes`)."""
        with self._lock:
            self._refuse(stream, size, producer_session, sequence, receive_time_ns)

    def _refuse(self, stream: Stream, size: int, producer_session: int, sequence: int, receive_time_ns: int) -> None:
        events = self._events
        limit = self._size_limits[stream]
        if limit is not None and size > limit:
            self.oversize_dropped += 1
            if len(events) >= self.limit:
                self.overflowed += 1
            else:
                events.append(DroppedPayload(self.collection_id, stream, producer_session, sequence, size, limit,
                                             receive_time_ns))
                self._run = False
                if self._waiters:
                    self._arrival.notify_all()
        elif len(events) >= self.limit:
            self.overflowed += 1
        else:
            self.overflowed_bytes += 1

    def put(self, message: Message) -> bool:
        """Queue `message` unless a limit refuses it (counted, see `refuse`); True if queued."""
        size = len(message[2])  # payload
        stream = message[1]
        with self._lock:
            events = self._events
            limit = self._data_limit if stream is _DATA else self._metadata_limit
            if ((limit is not None and size > limit) or len(events) >= self.limit
                    or self._bytes + size > self.max_bytes):
                self._refuse(stream, size, message[3], message[4], message[5])
                return False
            self._append(events, message, size)
            if self._waiters:
                self._arrival.notify_all()
        return True

    def put_fitting(self, message: Message, size: int) -> None:
        """`put` for a transport that already refused payloads above `max_payload(stream)`: only
        the event count and the byte budget are checked here. `size` = len(payload) [bytes]."""
        # The transports' per-sample path: the lock taken by acquire/release (a `with` statement
        # costs twice as much, ≈ 0.4 against 0.2 µs), `_append` written out.
        self._acquire()
        try:
            events = self._events
            if len(events) >= self.limit or self._bytes + size > self.max_bytes:
                self._refuse(message[1], size, message[3], message[4], message[5])
                return
            if not events:
                self._run = message[1] is _DATA and type(message[2]) is bytes
                self._run_session, self._run_next, self._run_size = message[3], message[4] + 1, size
            elif self._run:
                if (message[4] == self._run_next and message[3] == self._run_session and size == self._run_size
                        and message[1] is _DATA and type(message[2]) is bytes):
                    self._run_next += 1
                else:
                    self._run = False
            events.append(message)
            self._bytes += size
            if self._waiters:
                self._arrival.notify_all()
        finally:
            self._release()

    def _append(self, events: list[Event], message: Message, size: int) -> None:
        """Queue a message that fits and follow the run of the queued events (lock held)."""
        if not events:  # a new run starts
            self._run = message[1] is _DATA and type(message[2]) is bytes
            self._run_session, self._run_next, self._run_size = message[3], message[4] + 1, size
        elif self._run:
            if (message[4] == self._run_next and message[3] == self._run_session and size == self._run_size
                    and message[1] is _DATA and type(message[2]) is bytes):
                self._run_next += 1
            else:
                self._run = False
        events.append(message)
        self._bytes += size

    def put_liveliness(self, change: LivelinessChange) -> None:
        """Queue a liveliness change; never dropped (the count limit may be exceeded by these)."""
        with self._lock:
            self._events.append(change)
            self._run = False
            if self._waiters:
                self._arrival.notify_all()

    def count_malformed(self) -> None:
        """Count a sample the transport could not attribute to a producer session."""
        with self._lock:
            self.malformed += 1

    def drain(self, max_events: int | None = None) -> list[Event]:
        """Remove and return the queued events, oldest first, at most `max_events`."""
        with self._lock:
            events = self._events
            if max_events is None or max_events >= len(events):
                self._events = []
                self._bytes = 0
                return events
            count = max(max_events, 0)
            out = events[:count]
            del events[:count]  # (what stays is still a run if everything was one)
            self._bytes -= sum(len(e[2]) for e in out if type(e) is Message)
            return out

    def drain_run(self) -> tuple[list[Event], tuple[int, int] | None]:
        """`drain()` plus the run of the drained events: `(producer_session, payload size
        [bytes])` when they are all data messages with `bytes` payloads of that size from that
        session, with consecutive sequence numbers (module doc), else None."""
        with self._lock:
            events = self._events
            run = (self._run_session, self._run_size) if self._run and events else None
            self._events = []
            self._bytes = 0
            return events, run

    def wait(self, timeout_s: float) -> bool:
        """Block until at least one event is queued or `timeout_s` [s] passed; True if queued."""
        with self._lock:
            if self._events:
                return True
            self._waiters += 1
            try:
                self._arrival.wait(timeout_s)
            finally:
                self._waiters -= 1
            return bool(self._events)

    def __len__(self) -> int:
        return len(self._events)

    def counters(self) -> TrackerCounters:
        """What this queue refused, in the streams layer's counters shape."""
        return TrackerCounters(overflowed=self.overflowed, overflowed_bytes=self.overflowed_bytes,
                               oversize_dropped=self.oversize_dropped, transport_malformed=self.malformed)


class QueuedSubscription(Subscription):
    """A `Subscription` whose events wait in a `SubscriptionQueue` (both live transports)."""

    def __init__(self, queue: SubscriptionQueue):
        self.collection_id = queue.collection_id
        self.queue = queue

    def drain(self, max_events: int | None = None) -> list[Event]:
        return self.queue.drain(max_events)

    def wait(self, timeout_s: float) -> bool:
        """Block until at least one event is queued or `timeout_s` [s] passed; True if queued."""
        return self.queue.wait(timeout_s)

    @property
    def overflowed(self) -> int:
        return self.queue.overflowed

    @property
    def malformed(self) -> int:
        """Samples refused before queuing: missing/short attachment or unparseable liveliness key."""
        return self.queue.malformed

    @property
    def counters(self) -> TrackerCounters:
        return self.queue.counters()
