"""In-process bus: the embedded transport for one process (tests, single-process graphs).

No threads of its own. `ProducerLink.publish` appends the message to the queue of every
subscription of that collection before returning, so delivery order is publication order. Safe
to publish and drain from different threads (short locks). Payloads are kept as immutable
`bytes` (a `bytearray`/`memoryview` is copied once so a producer cannot alter a queued message).
"""
from __future__ import annotations

import threading
import time
from collections import deque

from ..contract.naming import Stream, stream_key, validate_collection_id
from ..errors import TransportError
from .base import (DEFAULT_QUEUE_LIMIT, Event, LivelinessChange, Message, ProducerLink,
                   Subscription, Transport)


class _InProcSubscription(Subscription):
    def __init__(self, bus: "InProcessBus", collection_id: str, queue_limit: int):
        self.collection_id = collection_id
        self._bus = bus
        self._queue: deque[Event] = deque()
        self._limit = queue_limit
        self._lock = threading.Lock()
        self._overflowed = 0
        self._arrived = threading.Event()  # set on every enqueue, cleared by drain()
        self._closed = False

    def _put(self, event: Event) -> None:
        # Liveliness changes are never dropped: they are rare and restart detection depends on them.
        with self._lock:
            if isinstance(event, Message) and len(self._queue) >= self._limit:
                self._overflowed += 1
                return
            self._queue.append(event)
            if not self._arrived.is_set():  # set() takes a lock; skip it while already set
                self._arrived.set()

    def drain(self, max_events: int | None = None) -> list[Event]:
        with self._lock:
            if max_events is None or max_events >= len(self._queue):
                out = list(self._queue)
                self._queue.clear()
                self._arrived.clear()
            else:
                out = [self._queue.popleft() for _ in range(max_events)]
        return out

    def wait(self, timeout_s: float) -> bool:
        """Block until at least one event is queued or `timeout_s` [s] passed; True if queued."""
        return self._arrived.wait(timeout_s)

    @property
    def overflowed(self) -> int:
        return self._overflowed

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._bus._remove_subscription(self)


class _InProcLink(ProducerLink):
    def __init__(self, bus: "InProcessBus", collection_id: str, producer_session: int):
        self.collection_id = collection_id
        self.producer_session = producer_session
        self._bus = bus
        self._closed = False

    def publish(self, stream: Stream, payload: bytes, sequence: int) -> None:
        if self._closed:
            raise TransportError(
                f"collection {self.collection_id!r}: producer session {self.producer_session:016x} "
                "is closed; cannot publish")
        if type(payload) is not bytes:
            payload = bytes(payload)
        message = Message(self.collection_id, stream, payload, self.producer_session, sequence,
                          time.monotonic_ns())
        for sub in self._bus._subscribers(self.collection_id):
            sub._put(message)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._bus._remove_link(self)


class InProcessBus(Transport):
    """A `Transport` inside one process: synchronous delivery, no threads, order preserved.

    A subscription opened after a producer sees that producer's liveliness (`alive=True`) first,
    like a late Zenoh subscriber; messages published before it subscribed are not replayed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subs: dict[str, tuple[_InProcSubscription, ...]] = {}
        self._links: dict[str, list[_InProcLink]] = {}
        self._closed = False

    def _check_open(self) -> None:
        if self._closed:
            raise TransportError("in-process bus is closed")

    def _subscribers(self, collection_id: str) -> tuple[_InProcSubscription, ...]:
        return self._subs.get(collection_id, ())

    def open_producer(self, collection_id: str, producer_session: int) -> ProducerLink:
        validate_collection_id(collection_id)
        with self._lock:
            self._check_open()
            links = self._links.setdefault(collection_id, [])
            if any(link.producer_session == producer_session for link in links):
                raise TransportError(
                    f"collection {collection_id!r}: producer session {producer_session:016x} is already open")
            link = _InProcLink(self, collection_id, producer_session)
            links.append(link)
            subs = self._subscribers(collection_id)
        for sub in subs:
            sub._put(LivelinessChange(collection_id, producer_session, True))
        return link

    def _remove_link(self, link: _InProcLink) -> None:
        with self._lock:
            links = self._links.get(link.collection_id, [])
            if link in links:
                links.remove(link)
            subs = self._subscribers(link.collection_id)
        for sub in subs:
            sub._put(LivelinessChange(link.collection_id, link.producer_session, False))

    def subscribe(self, collection_id: str, *, queue_limit: int = DEFAULT_QUEUE_LIMIT) -> Subscription:
        validate_collection_id(collection_id)
        if queue_limit < 1:
            raise TransportError(f"collection {collection_id!r}: queue_limit must be >= 1, got {queue_limit}")
        with self._lock:
            self._check_open()
            sub = _InProcSubscription(self, collection_id, queue_limit)
            for link in self._links.get(collection_id, []):
                sub._put(LivelinessChange(collection_id, link.producer_session, True))
            self._subs[collection_id] = self._subscribers(collection_id) + (sub,)
        return sub

    def _remove_subscription(self, sub: _InProcSubscription) -> None:
        with self._lock:
            self._subs[sub.collection_id] = tuple(s for s in self._subscribers(sub.collection_id) if s is not sub)

    def close(self) -> None:
        if self._closed:
            return
        links = [link for ls in self._links.values() for link in ls]
        for link in links:
            link.close()
        with self._lock:
            subs = [s for ss in self._subs.values() for s in ss]
        for sub in subs:
            sub.close()
        self._closed = True
