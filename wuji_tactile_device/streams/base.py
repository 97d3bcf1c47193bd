"""The transport interface: how the two streams of a collection travel between a producer and
its consumers. Small on purpose; implementations: in-process bus, Zenoh, MCAP replay (a source).

A collection `tactile/right` has two streams, keyed `tactile/right` (force records) and
`tactile/right/metadata` (metadata records; see `contract.naming`). Every message carries the id of the producer
session that sent it and a per-stream sequence number, so consumers can tell restarts and gaps.
Consumers pull: `Subscription.drain()` returns what has arrived, in arrival order.

Events are small immutable tuples (`NamedTuple`s: cheap to build on a transport's delivery thread,
read by attribute). Every transport queues them in one `queue.SubscriptionQueue`, bounded by
event count and by payload bytes; what it drops is counted in a `TrackerCounters`.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import NamedTuple

from ..contract.naming import Stream

#: Events a subscription holds before it starts dropping (dropped events are counted).
DEFAULT_QUEUE_LIMIT = 10_000
#: Payload bytes a subscription holds before it starts dropping messages (counted). 64 MiB is
#: ~30 000 frames of a 176-taxel hand (2 184 B each): three times the count limit's worth, so for
#: the contract's own records the count limit binds first; the byte budget stops a peer whose
#: samples are huge from taking the consumer's memory (e.g. 120 × 10 MB before an `update()`).
DEFAULT_QUEUE_BYTES = 64 * 1024 * 1024


class Message(NamedTuple):
    """One payload as delivered to a subscriber."""

    collection_id: str
    stream: Stream
    payload: bytes  # bytes-like; FlatBuffer record, unverified until decoded
    producer_session: int  # random u64 chosen by the producer at start; new value = restart
    sequence: int  # per (producer_session, stream), 0, 1, 2, ...
    receive_time_ns: int  # time.monotonic_ns() when the transport received it (replay: log time)


class LivelinessChange(NamedTuple):
    """A producer session of a collection appeared (`alive=True`) or went away."""

    collection_id: str
    producer_session: int
    alive: bool


class DroppedPayload(NamedTuple):
    """A message whose payload the transport refused at arrival because it was larger than the
    subscription's size limit for its stream; the payload itself was never queued (this notice
    is, so the consumer can report the refusal in order, e.g. as `MessageTooLargeError`)."""

    collection_id: str
    stream: Stream
    producer_session: int
    sequence: int
    size: int  # [bytes] of the refused payload
    limit: int  # [bytes] the subscription's limit for that stream
    receive_time_ns: int


Event = Message | LivelinessChange | DroppedPayload


@dataclass
class TrackerCounters:
    """The streams layer's one counters shape. A `TactileTracker` fills every field; a
    `Subscription` reports only what its queue refused (`overflowed`, `overflowed_bytes`,
    `oversize_dropped`, `transport_malformed`; the other fields stay 0).
    `received` counts data messages, whatever became of them."""

    received: int = 0  # data messages taken from the transport
    delivered: int = 0  # frames released to the caller
    dropped_before_confirmation: int = 0  # data of a session whose metadata was not (yet) confirmed
    rejected: int = 0  # messages refused: malformed, oversized, wrong layout, non-finite, bad metadata
    metadata_received: int = 0  # metadata messages taken from the transport
    metadata_confirmations: int = 0  # producer sessions confirmed (== on_metadata calls)
    producer_sessions: int = 0  # distinct producer session ids seen (a new id = a restart)
    sessions_forgotten: int = 0  # session states dropped to stay within MAX_PRODUCER_SESSIONS
    liveliness_lost: int = 0  # times a producer session's liveliness went away
    sequence_gaps: int = 0  # number of gaps seen in data sequences
    frames_missing: int = 0  # sum of all gap sizes (frames the producer sent that never arrived)
    last_sequence_gap: int = 0  # size of the most recent gap (frames), 0 if none yet
    out_of_order: int = 0  # data whose sequence did not advance (duplicate or older)
    overflowed: int = 0  # events dropped because the queue's event limit (or the frames() buffer) was full
    overflowed_bytes: int = 0  # messages dropped because the queue's byte budget was full
    oversize_dropped: int = 0  # payloads refused at arrival, larger than the stream's size limit
    transport_malformed: int = 0  # samples the transport could not attribute (e.g. no attachment)
    last_error: str = field(default="", repr=False)  # message of the most recent rejection


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

    The queue limit counts every event (liveliness changes too; they are never dropped). Live
    subscriptions may also offer `wait(timeout_s) -> bool` (block until an event is queued);
    consumers that find none poll."""

    collection_id: str

    @abstractmethod
    def drain(self, max_events: int | None = None) -> list[Event]:
        """Return (and remove) the events that have arrived, oldest first, at most `max_events`."""

    @property
    @abstractmethod
    def overflowed(self) -> int:
        """Events dropped because the queue limit was reached (never silently: counted here)."""

    @property
    def counters(self) -> TrackerCounters:
        """A snapshot of what this subscription refused, in the streams layer's counters shape
        (sources that never drop report only `overflowed`)."""
        return TrackerCounters(overflowed=self.overflowed)

    @abstractmethod
    def close(self) -> None:
        """Stop receiving. Idempotent."""


class Transport(ABC):
    """Moves a collection's payloads and liveliness from producers to subscribers."""

    @abstractmethod
    def open_producer(self, collection_id: str, producer_session: int) -> ProducerLink:
        """Declare a producer session of `collection_id` (liveliness) and return its link."""

    @abstractmethod
    def subscribe(self, collection_id: str, *, queue_limit: int = DEFAULT_QUEUE_LIMIT,
                  queue_bytes: int = DEFAULT_QUEUE_BYTES, max_data_size: int | None = None,
                  max_metadata_size: int | None = None) -> Subscription:
        """Receive both streams of `collection_id` and its producers' liveliness changes.

        `queue_limit` [events] and `queue_bytes` [payload bytes] bound what waits for `drain()`;
        `max_data_size` / `max_metadata_size` [bytes] (None: no limit but `queue_bytes`) refuse
        larger payloads at arrival: counted, a `DroppedPayload` notice queued instead.
        Raises `ValueError` for a limit < 1."""

    @abstractmethod
    def close(self) -> None:
        """Close every link and subscription of this transport. Idempotent."""

    def __enter__(self) -> Transport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
