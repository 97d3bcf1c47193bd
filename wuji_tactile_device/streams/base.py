"""The transport interface: how the two streams of a collection travel between a producer and
its consumers. Small on purpose; implementations: in-process bus, Zenoh, MCAP replay (a source).

A collection `tactile/right` has two streams, keyed `tactile/right` (force records) and
`tactile/right/metadata` (metadata records; see `contract.naming`). Every message carries the id of the producer
session that sent it and a per-stream sequence number, so consumers can tell restarts and gaps.
Consumers pull: `Subscription.drain()` returns what has arrived, in arrival order.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Union

from ..contract.naming import Stream

#: Events a subscription holds before it starts dropping (dropped events are counted).
DEFAULT_QUEUE_LIMIT = 10_000

@dataclass(frozen=True, slots=True)
class Message:
    """One payload as delivered to a subscriber."""

    collection_id: str
    stream: Stream
    payload: bytes  # bytes-like; FlatBuffer record, unverified until decoded
    producer_session: int  # random u64 chosen by the producer at start; new value = restart
    sequence: int  # per (producer_session, stream), 0, 1, 2, ...
    receive_time_ns: int  # time.monotonic_ns() when the transport received it (replay: log time)


@dataclass(frozen=True, slots=True)
class LivelinessChange:
    """A producer session of a collection appeared (`alive=True`) or went away."""

    collection_id: str
    producer_session: int
    alive: bool


Event = Union[Message, LivelinessChange]


class ProducerLink(ABC):
    """A producer's handle on a transport: its liveliness is declared while the link is open."""

    collection_id: str
    producer_session: int

    @abstractmethod
    def publish(self, stream: Stream, payload: bytes, sequence: int) -> None:
        """Send one payload on one of the collection's streams."""

    @abstractmethod
    def close(self) -> None:
        """Withdraw liveliness and stop publishing. Idempotent."""


class Subscription(ABC):
    """A consumer's handle on both streams of one collection, plus its producers' liveliness.

    The queue limit counts every event (liveliness changes too). Live subscriptions may also offer
    `wait(timeout_s) -> bool` (block until an event is queued); consumers that find none poll."""

    collection_id: str

    @abstractmethod
    def drain(self, max_events: int | None = None) -> list[Event]:
        """Return (and remove) the events that have arrived, oldest first, at most `max_events`."""

    @property
    @abstractmethod
    def overflowed(self) -> int:
        """Events dropped because the queue limit was reached (never silently: counted here)."""

    @abstractmethod
    def close(self) -> None:
        """Stop receiving. Idempotent."""


class Transport(ABC):
    """Moves a collection's payloads and liveliness from producers to subscribers."""

    @abstractmethod
    def open_producer(self, collection_id: str, producer_session: int) -> ProducerLink:
        """Declare a producer session of `collection_id` (liveliness) and return its link."""

    @abstractmethod
    def subscribe(self, collection_id: str, *, queue_limit: int = DEFAULT_QUEUE_LIMIT) -> Subscription:
        """Receive both streams of `collection_id` and its producers' liveliness changes."""

    @abstractmethod
    def close(self) -> None:
        """Close every link and subscription of this transport. Idempotent."""

    def __enter__(self) -> "Transport":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
