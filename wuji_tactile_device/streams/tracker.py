"""TactileTracker: the metadata-first consumer of one collection (live transport or MCAP replay).

Rules (docs/streams.md, "Tracker semantics"):
- the first valid metadata is adopted and kept for the tracker's life; `get_metadata()` returns it;
- force frames of a producer session are withheld until that session's metadata has been
  confirmed (equal to the adopted layout); frames that arrive before are dropped and counted in
  `counters.dropped_before_confirmation`, never released under a layout they were not checked against;
- observers see `on_metadata` exactly once per confirmed producer session, `on_data` per frame;
- later metadata that differs → `MetadataMismatchError`, invalid metadata →
  `MetadataValidationError`, both raised from `update()`; the adopted layout is kept and that
  session's data stays withheld;
- a producer restart (liveliness lost and regained, or a new producer session id) withholds data
  again until the producer's metadata is confirmed; frames of a lost session still in flight
  (liveliness can overtake the last samples) are delivered, they were sent under its confirmed layout;
- a data record larger than `max_flatbuffer_size`, a metadata record larger than
  `TRACKER_METADATA_MAX_SIZE`, a malformed buffer, a wrong taxel count or non-finite forces →
  typed error from `update()` (`error_policy="raise"`), or with `error_policy="drop"` a counted
  drop of that data frame (metadata faults always raise: they concern the layout itself);
- when `update()` raises, the events still queued behind the faulty one stay pending and are
  processed by the next call; nothing is lost;
- between two `update()` calls at most `queue_limit` events and `queue_bytes` of payload wait
  (drops counted); on a live transport, records above the size limits are refused at arrival and
  reported by `update()` in their place, as above.
All of this runs in the caller's thread: transports only enqueue. Records of the adopted layout
are checked by their structural bytes, in batches when many are queued (`contract.records.ForceRecordCodec`); anything
else goes through the contract's full verifier.
"""
from __future__ import annotations

import time
from collections import deque
from operator import itemgetter
from dataclasses import dataclass
from typing import NamedTuple, Protocol
from collections.abc import Iterator

import numpy as np

from ..contract.metadata import MetadataRecord, TactileMetadata, decode_metadata_record
from ..contract.naming import Stream, validate_collection_id
from ..contract.records import (DEFAULT_MAX_FLATBUFFER_SIZE, TRACKER_METADATA_MAX_SIZE, DeviceDataTimestamp,
                                decode_tactile_record)
from ..errors import (DataLayoutError, InvalidMessageError, MessageTooLargeError, MetadataMismatchError,
                      MetadataValidationError, NonFiniteForceError, TactileError)
from .base import (DEFAULT_QUEUE_BYTES, DEFAULT_QUEUE_LIMIT, DroppedPayload, Event, LivelinessChange, Message,
                   Subscription, Transport, TrackerCounters)
from ..contract.records import ForceRecordCodec
from .queue import QueuedSubscription, check_count, check_limits

ERROR_POLICIES = ("raise", "drop")

#: Producer sessions a tracker keeps state for (a real collection has one or two at a time). Past
#: it, the oldest session whose liveliness is gone or whose metadata is unconfirmed — else the
#: oldest — is forgotten (counted in `counters.sessions_forgotten`); if it is alive it is
#: confirmed again by its next metadata republication. Bounds memory against a peer inventing ids.
MAX_PRODUCER_SESSIONS = 256
_DATA = Stream.DATA
#: Data messages checked together (`_on_data_run`): from `_BATCH_MIN` queued ones on (fewer are
#: cheaper one by one), at most `_BATCH_MAX` (a delivered frame's forces view keeps its batch's
#: joined payloads alive: ≤ 256 × the record size, 0.56 MB for a 176-taxel hand).
_BATCH_MIN = 8
_BATCH_MAX = 256
_new_tuple = tuple.__new__  # builds a NamedTuple without its Python-level __new__
_sequence_of = itemgetter(4)  # a Message's fields, read by C-level maps over a run
_session_of = itemgetter(3)
_PAYLOAD = Message._fields.index("payload")
_payload_of = itemgetter(_PAYLOAD)
_stream_of = itemgetter(1)
_ONLY_MESSAGE = {Message}
_count_nonzero = np.count_nonzero
_isfinite = np.isfinite


class TactileFrame(NamedTuple):
    """One confirmed force frame."""

    forces: np.ndarray  # (N, 3) float32 read-only [N], each taxel's own axes, metadata taxel order
    timestamp: DeviceDataTimestamp  # monotonic ns
    sequence: int  # per producer session
    producer_session: int


class TrackerObserver(Protocol):
    """Anything that wants every confirmed metadata and frame (e.g. an MCAP recorder)."""

    def on_metadata(self, collection_id: str, message: Message, record: MetadataRecord) -> None: ...

    def on_data(self, collection_id: str, message: Message, frame: TactileFrame) -> None: ...


class _Source(Protocol):
    def subscribe(self, collection_id: str, *, queue_limit: int = ...) -> Subscription: ...  # a Transport takes more


@dataclass
class _Session:
    confirmed: bool = False
    alive: bool = True
    metadata_payload: bytes = b""  # exact bytes that confirmed it (fast path for periodic repeats)
    confirmation: tuple[Message, MetadataRecord] | None = None  # replayed to late observers
    last_sequence: int = -1


class TactileTracker:
    """Consumes one collection from `transport_or_source` (anything with `subscribe(collection_id)`).

    `max_flatbuffer_size`: largest data record accepted [bytes]; must be at least the producer's
    record size. `error_policy`: "raise" (default) or "drop" (faulty data frames are counted in
    `counters.rejected` and skipped). `queue_limit` [events] and `queue_bytes` [payload bytes]
    bound the subscription queue between two `update()` calls (drops are counted in
    `counters.overflowed` / `overflowed_bytes`); on a `Transport`, data payloads larger than
    `max_flatbuffer_size` and metadata larger than `TRACKER_METADATA_MAX_SIZE` are refused at
    arrival (`counters.oversize_dropped`), never queued, and reported by `update()` like any
    oversized record. `keep_frames`: buffer of `frames()`."""

    DEFAULT_MAX_FLATBUFFER_SIZE = DEFAULT_MAX_FLATBUFFER_SIZE
    TRACKER_METADATA_MAX_SIZE = TRACKER_METADATA_MAX_SIZE

    def __init__(self, collection_id: str, transport_or_source: _Source, *,
                 max_flatbuffer_size: int = DEFAULT_MAX_FLATBUFFER_SIZE, error_policy: str = "raise",
                 queue_limit: int = DEFAULT_QUEUE_LIMIT, keep_frames: int = DEFAULT_QUEUE_LIMIT,
                 queue_bytes: int = DEFAULT_QUEUE_BYTES):
        validate_collection_id(collection_id)
        if error_policy not in ERROR_POLICIES:
            raise ValueError(f"collection {collection_id!r}: error_policy must be one of {ERROR_POLICIES}, "
                             f"got {error_policy!r}")
        check_count(collection_id, "max_flatbuffer_size", max_flatbuffer_size)
        check_count(collection_id, "keep_frames", keep_frames)
        check_limits(collection_id, queue_limit=queue_limit, queue_bytes=queue_bytes, max_data_size=None,
                     max_metadata_size=None)
        self.collection_id = collection_id
        self.max_flatbuffer_size = max_flatbuffer_size
        self.error_policy = error_policy
        self.counters = TrackerCounters()
        if isinstance(transport_or_source, Transport):  # refuse oversize payloads before they queue
            self._subscription = transport_or_source.subscribe(
                collection_id, queue_limit=queue_limit, queue_bytes=queue_bytes,
                max_data_size=max_flatbuffer_size, max_metadata_size=TRACKER_METADATA_MAX_SIZE)
        else:  # another source (e.g. an MCAP replay, which holds back instead of dropping)
            self._subscription = transport_or_source.subscribe(collection_id, queue_limit=queue_limit)
        self._queue = self._subscription.queue if isinstance(self._subscription, QueuedSubscription) else None
        self._pending: deque[Event] = deque()
        self._metadata: TactileMetadata | None = None
        self._num_taxels = -1
        self._codec: ForceRecordCodec | None = None  # the adopted taxel count's fast record check
        self._sessions: dict[int, _Session] = {}
        self._latest: TactileFrame | None = None
        self._observers: list[TrackerObserver] = []
        self._keep_frames = keep_frames
        self._frames: deque[TactileFrame] | None = None  # created by the first frames() call
        self._frames_overflowed = 0
        self._closed = False
        self._last_processed = 0  # events taken up by the last update()
        self._resume = -1  # set by a raising `_on_data_run`: index of the first event left pending

    # -- public API -----------------------------------------------------------------------------

    def add_observer(self, observer: TrackerObserver) -> None:
        """Call `observer.on_metadata` once per confirmed producer session (including any already
        confirmed, replayed now) and `observer.on_data` for every frame delivered from now on."""
        self._observers.append(observer)
        for session in self._sessions.values():
            if session.confirmed and session.alive and session.confirmation is not None:
                observer.on_metadata(self.collection_id, *session.confirmation)

    def remove_observer(self, observer: TrackerObserver) -> None:
        self._observers.remove(observer)

    def get_metadata(self) -> TactileMetadata | None:
        """The adopted layout, or None until a valid metadata arrived."""
        return self._metadata

    def get_data(self) -> TactileFrame | None:
        """The newest delivered frame, or None while no frame has been confirmed."""
        return self._latest

    @property
    def pending(self) -> int:
        """Events taken from the transport but not yet processed (left behind by a raised error)."""
        return len(self._pending)

    def update(self, timeout_s: float = 0.0) -> int:
        """Process everything that has arrived; return the number of frames delivered by this call.

        `timeout_s` [s]: when nothing has arrived yet, wait up to this long for the first event
        (0 = never block). Raises the typed error of the first faulty event (see module doc); the
        events behind it stay pending for the next call."""
        if self._closed:
            raise TactileError(f"collection {self.collection_id!r}: tracker is closed")
        pending = self._pending
        queue = self._queue
        # `run`: (producer session, payload size) when the queue saw the drained events arrive as
        # one session's consecutive data messages (`SubscriptionQueue.drain_run`), else None.
        events, run = queue.drain_run() if queue is not None else (self._subscription.drain(), None)
        if pending:  # left behind by a raised error: they come first
            pending.extend(events)
            events = list(pending)
            pending.clear()
            run = None
        elif not events and timeout_s > 0:
            events, run = self._wait(timeout_s)
        self._sync_transport_counters()
        count = len(events)
        self._last_processed = count
        delivered = 0
        on_data = self._on_data
        i = 0
        try:
            while i < count:
                event = events[i]
                if type(event) is Message:
                    if event[1] is _DATA:
                        if count - i >= _BATCH_MIN and self._codec is not None:
                            run_delivered, i = self._on_data_run(events, i, run)
                            delivered += run_delivered
                            continue
                        delivered += on_data(event)
                    else:
                        self._on_metadata(event)
                elif type(event) is DroppedPayload:
                    self._on_dropped(event)
                elif type(event) is LivelinessChange:
                    self._on_liveliness(event)
                else:
                    raise TypeError(f"collection {self.collection_id!r}: the transport delivered {event!r}, "
                                    "not a Message, DroppedPayload or LivelinessChange")
                i += 1
        except BaseException:
            resume, self._resume = self._resume, -1
            pending.extend(events[(resume if resume >= 0 else i + 1) :])
            raise
        return delivered

    def _sync_transport_counters(self) -> None:
        """Copy what the subscription refused into `counters` (its fields have the same names)."""
        counters, queue = self.counters, self._queue
        if queue is not None:  # a live transport's queue: read its counts directly (per update)
            counters.overflowed = queue.overflowed + self._frames_overflowed
            counters.overflowed_bytes = queue.overflowed_bytes
            counters.oversize_dropped = queue.oversize_dropped
            counters.transport_malformed = queue.malformed
            return
        sub = getattr(self._subscription, "counters", None)
        if sub is None:  # a minimal source: only `overflowed`
            counters.overflowed = self._subscription.overflowed + self._frames_overflowed
            return
        counters.overflowed = sub.overflowed + self._frames_overflowed
        counters.overflowed_bytes = sub.overflowed_bytes
        counters.oversize_dropped = sub.oversize_dropped
        counters.transport_malformed = sub.transport_malformed

    def _wait(self, timeout_s: float) -> tuple[list, tuple[int, int] | None]:
        """The events that arrive within `timeout_s` [s] and their run (see `update`)."""
        if self._queue is not None:  # live transports: woken by the first event
            self._queue.wait(timeout_s)
            return self._queue.drain_run()
        wait = getattr(self._subscription, "wait", None)
        if wait is not None:
            wait(timeout_s)
            return self._subscription.drain(), None
        deadline = time.monotonic() + timeout_s  # other sources (e.g. replay): poll each ms
        while True:
            events = self._subscription.drain()
            remaining = deadline - time.monotonic()
            if events or remaining <= 0:
                return events, None
            time.sleep(min(remaining, 0.001))

    def frames(self) -> Iterator[TactileFrame]:
        """Every delivered frame, oldest first: calls `update()` and yields what it delivered until
        nothing more has arrived, then stops (call again later). The first call starts collecting;
        at most `keep_frames` undelivered frames are buffered (older ones are counted in
        `counters.overflowed`)."""
        if self._frames is None:
            self._frames = deque()
        while True:
            while self._frames:
                yield self._frames.popleft()
            delivered = self.update()
            # Stop once nothing arrived at all (not merely no frame: a replay may hold metadata
            # or liveliness events, or frames dropped before confirmation, ahead of its data).
            if delivered == 0 and not self._frames and self._last_processed == 0:
                return

    def close(self) -> None:
        """Stop receiving. Idempotent."""
        if not self._closed:
            self._closed = True
            self._subscription.close()

    def __enter__(self) -> TactileTracker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- event handling -------------------------------------------------------------------------

    def _session(self, producer_session: int) -> _Session:
        session = self._sessions.get(producer_session)
        if session is None:
            if len(self._sessions) >= MAX_PRODUCER_SESSIONS:
                self._forget_a_session()
            session = _Session()
            self.counters.producer_sessions += 1
            self._sessions[producer_session] = session
        return session

    def _forget_a_session(self) -> None:
        sessions = self._sessions
        victim = next((sid for sid, s in sessions.items() if not s.alive or not s.confirmed), next(iter(sessions)))
        del sessions[victim]
        self.counters.sessions_forgotten += 1

    def _on_liveliness(self, change: LivelinessChange) -> None:
        session = self._sessions.get(change.producer_session)
        if change.alive:
            if session is None:
                self._session(change.producer_session)
            elif not session.alive:  # regained: a restart, its metadata must be confirmed again
                session.alive = True
                session.confirmed = False
                session.confirmation = None
                session.metadata_payload = b""
                session.last_sequence = -1
        elif session is not None and session.alive:
            # Lost. Frames of this session still in flight (transports deliver liveliness on
            # another path than samples, so the loss can overtake the last frames) were produced
            # under the confirmed layout and are still delivered; a regain withholds again.
            session.alive = False
            self.counters.liveliness_lost += 1

    def _on_metadata(self, message: Message) -> None:
        self.counters.metadata_received += 1
        session = self._session(message.producer_session)
        if session.confirmed and message.payload == session.metadata_payload:
            return  # periodic republication of the confirmed bytes
        try:
            record = decode_metadata_record(message.payload, max_size=TRACKER_METADATA_MAX_SIZE)
            record.metadata.validate()
        except TactileError as exc:
            session.confirmed = False
            self._reject(f"collection {self.collection_id!r}: metadata from producer session "
                         f"{message.producer_session:016x} refused", exc, always_raise=True)
            return
        if self._metadata is None:
            self._metadata = record.metadata
            self._num_taxels = record.metadata.num_taxels
            codec = ForceRecordCodec(self._num_taxels)
            self._codec = codec if codec.size <= self.max_flatbuffer_size else None
        elif record.metadata != self._metadata:
            session.confirmed = False
            self.counters.rejected += 1
            error = MetadataMismatchError(
                f"collection {self.collection_id!r}: producer session {message.producer_session:016x} "
                f"sent metadata that differs from the adopted layout ({self._metadata.difference(record.metadata)}); "
                "adopted layout kept, that session's data withheld")
            self.counters.last_error = str(error)
            raise error
        was_confirmed = session.confirmed
        session.confirmed = True
        session.metadata_payload = bytes(message.payload)
        if not was_confirmed:
            session.confirmation = (message, record)
            self.counters.metadata_confirmations += 1
            for observer in self._observers:
                observer.on_metadata(self.collection_id, message, record)

    def _on_data_run(self, events: list, start: int, run: tuple[int, int] | None = None) -> tuple[int, int]:
        """`_on_data` for the data messages from `events[start]` on (at most `_BATCH_MAX`, up to
        the first other event), their records' structure and finiteness checked together
        (`ForceRecordCodec.check_batch`). A frame whose record passed, from a confirmed session,
        is delivered here with exactly `_on_data`'s bookkeeping; every other frame goes through
        `_on_data` itself, so a faulty record in a batch is refused exactly as alone. Returns
        (frames delivered, index of the next event); when a frame raises, `_resume` is the index
        of the event after it (the rest stay pending).

        `run` = (session, payload size): the queue saw every event of `events` arrive as that
        session's data messages with consecutive sequences and `bytes` payloads of that size.
        Then, when nobody but `get_data()` sees the frames, the session is confirmed and the
        chunk continues its sequence, the chunk is checked with no walk over its events
        (`ForceRecordCodec.check_run`: every record this layout's, every force finite) and the
        bookkeeping done at once; if any record fails, the chunk takes the general path below."""
        if run is not None and not self._observers and self._frames is None:
            run_sid, run_size = run
            codec = self._codec
            session = self._sessions.get(run_sid)
            if session is not None and session.confirmed and run_size == codec.size:  # type: ignore[union-attr]
                if events[start][4] == session.last_sequence + 1:
                    count = min(len(events) - start, _BATCH_MAX)
                    forces = codec.check_events(events, start, count, _PAYLOAD)  # type: ignore[union-attr]
                    if forces is not None:
                        last = events[start + count - 1]
                        counters = self.counters
                        counters.received += count
                        counters.delivered += count
                        session.last_sequence = last[4]
                        self._latest = _new_tuple(TactileFrame, (forces, codec.timestamp(last[2]), last[4], run_sid))  # type: ignore[union-attr]
                        return count, start + count
        chunk = events[start : start + _BATCH_MAX]
        if (set(map(type, chunk)) != _ONLY_MESSAGE  # (count, not a set: an Enum member hashes in Python)
                or list(map(_stream_of, chunk)).count(_DATA) != len(chunk)):
            # the run ends at the first other event
            chunk = chunk[: next(k for k, e in enumerate(chunk) if type(e) is not Message or e[1] is not _DATA)]
        payloads = list(map(_payload_of, chunk))
        checked = self._codec.check_batch(payloads) if len(chunk) >= _BATCH_MIN else None  # type: ignore[union-attr]
        on_data = self._on_data
        delivered = 0
        k = 0
        try:
            if checked is None:  # not all of this layout's size: one by one
                for k, message in enumerate(chunk):  # noqa: B007 - k is read by the except clause
                    delivered += on_data(message)
                return delivered, start + len(chunk)
            ok, forces = checked
            counters, sessions, observers = self.counters, self._sessions, self._observers
            frames, collection_id, new = self._frames, self.collection_id, _new_tuple
            count = len(chunk)
            if not observers and frames is None and all(ok):
                # Nobody sees the frames but the newest (get_data): when the whole run is one
                # confirmed session's next sequences, the bookkeeping is done for the run at once
                # and only the newest frame is built.
                sid = chunk[0][3]
                session = sessions.get(sid)
                if session is not None and session.confirmed and list(map(_session_of, chunk)).count(sid) == count:
                    first = session.last_sequence + 1
                    if list(map(_sequence_of, chunk)) == list(range(first, first + count)):
                        last = chunk[-1]
                        counters.received += count
                        session.last_sequence = last[4]
                        self._latest = new(TactileFrame, (forces[-1], self._codec.timestamp(last[2]), last[4], sid))  # type: ignore[union-attr]
                        counters.delivered += count
                        return count, start + count
            forces = list(forces)
            timestamp = self._codec.timestamp  # type: ignore[union-attr]
            sid, session = None, None
            for k, message in enumerate(chunk):
                if ok[k]:
                    if message[3] != sid:
                        sid = message[3]
                        session = sessions.get(sid)
                    if session is not None and session.confirmed:
                        counters.received += 1
                        sequence = message[4]
                        if sequence == session.last_sequence + 1:
                            session.last_sequence = sequence
                        else:
                            self._count_sequence(session, sequence)
                        frame = new(TactileFrame, (forces[k], timestamp(message[2]), sequence, sid))
                        self._latest = frame
                        counters.delivered += 1
                        if frames is not None:
                            self._keep(frame)
                        for observer in observers:
                            observer.on_data(collection_id, message, frame)
                        delivered += 1
                        continue
                sid = None  # `_on_data` may add or forget sessions: look the next one up again
                delivered += on_data(message)
        except BaseException:
            self._resume = start + k + 1
            raise
        return delivered, start + len(chunk)

    def _count_sequence(self, session: _Session, sequence: int) -> None:
        """Sequence bookkeeping of a delivered frame: gaps, out-of-order, the session's last."""
        last = session.last_sequence
        if last >= 0:
            counters = self.counters
            if sequence > last + 1:
                gap = sequence - last - 1
                counters.sequence_gaps += 1
                counters.frames_missing += gap
                counters.last_sequence_gap = gap
            elif sequence <= last:
                counters.out_of_order += 1
        if sequence > last:
            session.last_sequence = sequence

    def _keep(self, frame: TactileFrame) -> None:
        """Buffer a delivered frame for `frames()` (at most `keep_frames`; older ones overflow)."""
        kept = self._frames
        if len(kept) >= self._keep_frames:  # type: ignore[arg-type]
            kept.popleft()  # type: ignore[union-attr]
            self._frames_overflowed += 1
            self.counters.overflowed += 1
        kept.append(frame)  # type: ignore[union-attr]

    def _on_data(self, message: Message) -> int:
        """One data message: checked by the adopted layout's structural bytes when it has them,
        else by the contract's full verifier and the taxel count; then finiteness."""
        counters = self.counters
        counters.received += 1
        session = self._sessions.get(message.producer_session)
        if session is None:
            session = self._session(message.producer_session)
        if not session.confirmed:
            counters.dropped_before_confirmation += 1
            return 0
        payload = message.payload
        codec = self._codec
        checked = codec.check_bytes(payload) if codec is not None and type(payload) is bytes else None
        try:
            if checked is not None:  # the adopted layout's exact structure: valid, N taxels
                forces, timestamp = checked
            else:  # anything else: the contract's full verifier, then the taxel count
                record = decode_tactile_record(payload, max_size=self.max_flatbuffer_size)
                forces, timestamp = record.forces, record.timestamp
                if forces.shape[0] != self._num_taxels:
                    raise DataLayoutError(
                        f"it has {forces.shape[0]} taxels, the adopted metadata declares {self._num_taxels}")
            # Counting finite flags: no arithmetic on the values, so no numpy warning under -W error.
            if _count_nonzero(_isfinite(forces)) != forces.size:
                taxel = int(np.argwhere(~np.isfinite(forces))[0, 0])
                raise NonFiniteForceError(f"taxel {taxel} has a non-finite force {forces[taxel].tolist()}")
        except (InvalidMessageError, DataLayoutError) as exc:
            self._reject(f"collection {self.collection_id!r}: data frame {message.sequence} from producer "
                         f"session {message.producer_session:016x} refused", exc, always_raise=False)
            return 0
        sequence = message.sequence
        if sequence == session.last_sequence + 1:
            session.last_sequence = sequence
        else:
            self._count_sequence(session, sequence)
        frame = _new_tuple(TactileFrame, (forces, timestamp, sequence, message.producer_session))
        self._latest = frame
        counters.delivered += 1
        if self._frames is not None:
            self._keep(frame)
        for observer in self._observers:
            observer.on_data(self.collection_id, message, frame)
        return 1

    def _on_dropped(self, notice: DroppedPayload) -> None:
        """A payload the transport refused at arrival for its size: reported as the oversized
        record it was (data: counted as received, then like any faulty frame; metadata: raised)."""
        error = MessageTooLargeError(f"{notice.size} bytes exceeds the limit of {notice.limit} bytes; "
                                     "refused at arrival, never queued")
        if notice.stream is _DATA:
            self.counters.received += 1
            session = self._sessions.get(notice.producer_session)
            if session is None:
                session = self._session(notice.producer_session)
            if not session.confirmed:
                self.counters.dropped_before_confirmation += 1
                return
            self._reject(f"collection {self.collection_id!r}: data frame {notice.sequence} from producer "
                         f"session {notice.producer_session:016x} refused", error, always_raise=False)
            return
        self.counters.metadata_received += 1
        session = self._session(notice.producer_session)
        session.confirmed = False
        self._reject(f"collection {self.collection_id!r}: metadata from producer session "
                     f"{notice.producer_session:016x} refused", error, always_raise=True)

    def _reject(self, context: str, exc: TactileError, *, always_raise: bool) -> None:
        self.counters.rejected += 1
        error = _in_context(exc, context)
        self.counters.last_error = str(error)
        if always_raise or self.error_policy == "raise":
            raise error from exc


def _in_context(exc: TactileError, context: str) -> TactileError:
    """The same error type, its message prefixed with the collection / session context."""
    if isinstance(exc, MetadataValidationError):
        return MetadataValidationError(exc.rule, f"{context}: {exc.detail}")
    try:
        return type(exc)(f"{context}: {exc}")
    except TypeError:  # a subclass with a different constructor: keep the original
        return exc
