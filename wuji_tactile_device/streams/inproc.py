"""In-process bus: the embedded transport for one process (tests, single-process graphs).

No threads of its own. `ProducerLink.publish` puts the message in the queue of every
subscription of that collection before returning (`queue.SubscriptionQueue`: bounded by events
and bytes, oversize payloads refused), so delivery order is publication order. Safe to publish
and drain from different threads (short locks). Payloads are kept as immutable `bytes` (a
`bytearray`/`memoryview` is copied once so a producer cannot alter a queued message).
"""
from __future__ import annotations

import threading
import time

from ..contract.naming import Stream, validate_collection_id
from ..errors import TransportError
from .base import DEFAULT_QUEUE_BYTES, DEFAULT_QUEUE_LIMIT, LivelinessChange, Message, ProducerLink, Subscription, Transport
from .queue import QueuedSubscription, SubscriptionQueue

_new_tuple = tuple.__new__
_monotonic_ns = time.monotonic_ns


class _InProcSubscription(QueuedSubscription):
    def __init__(self, bus: InProcessBus, queue: SubscriptionQueue):
        super().__init__(queue)
        self._bus = bus
        self._closed = False

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._bus._remove_subscription(self)


class _InProcLink(ProducerLink):
    def __init__(self, bus: InProcessBus, collection_id: str, producer_session: int):
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
        message = _new_tuple(Message, (self.collection_id, stream, payload, self.producer_session, sequence,
                                       _monotonic_ns()))  # Message(...) without its Python-level __new__
        for sub in self._bus._subs.get(self.collection_id, ()):
            sub.queue.put(message)

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
            sub.queue.put_liveliness(LivelinessChange(collection_id, producer_session, True))
        return link

    def _remove_link(self, link: _InProcLink) -> None:
        with self._lock:
            links = self._links.get(link.collection_id, [])
            if link in links:
                links.remove(link)
            subs = self._subscribers(link.collection_id)
        for sub in subs:
            sub.queue.put_liveliness(LivelinessChange(link.collection_id, link.producer_session, False))

    def subscribe(self, collection_id: str, *, queue_limit: int = DEFAULT_QUEUE_LIMIT,
                  queue_bytes: int = DEFAULT_QUEUE_BYTES, max_data_size: int | None = None,
                  max_metadata_size: int | None = None) -> Subscription:
        validate_collection_id(collection_id)
        queue = SubscriptionQueue(collection_id, limit=queue_limit, max_bytes=queue_bytes,
                                  max_data_size=max_data_size, max_metadata_size=max_metadata_size)
        with self._lock:
            self._check_open()
            sub = _InProcSubscription(self, queue)
            for link in self._links.get(collection_id, []):
                queue.put_liveliness(LivelinessChange(collection_id, link.producer_session, True))
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
