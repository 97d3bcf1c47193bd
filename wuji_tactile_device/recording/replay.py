"""McapReplay: a recorded MCAP file as a source for `TactileTracker`, exactly like a live transport.

`TactileTracker("tactile/right", McapReplay("run.mcap"))` sees the same events a live tracker saw:
a `LivelinessChange(alive=True)` when a producer session's first message comes, its metadata and
data messages in the order the recorder received them (data before metadata and invalid metadata
included: the tracker judges them, the source never fixes anything), and `alive=False` after the
session's last message. Several collections are merged by log time (= available time).

Pacing: `speed=None` replays as fast as the consumer drains, one data frame per `drain()` call, so
`tracker.update()` followed by `tracker.get_data()` sees every frame; `speed=1.0` follows the
recorded log times in real time, `speed=x` x times faster. `start_ns`/`end_ns` select log times
[start, end); a session that started before `start_ns` gets its latest earlier metadata first
(what a live late joiner gets from the periodic republish). `loop=True` replays forever, each
pass ending with the sessions going away. Queues never drop: a full subscription holds the
replay back (drain every subscription you open).

`clock="sample"` paces and windows by publish time (= the sample time) instead of log time, for
files whose log times are compressed: a simulation recorded as fast as possible logs 13 s of
simulated time in about half a second, and plays back at its simulated pace this way. The order
of events is the same with either clock.
"""
from __future__ import annotations

import math
import os
import time
import warnings
from collections import deque
from typing import Iterable, Iterator

from ..contract.naming import (DATA_RECORD_SCHEMA_NAME, METADATA_RECORD_SCHEMA_NAME, Stream, parse_stream_key,
                               validate_collection_id)
from ..errors import CollectionIdError, RecordingError, RecordingWarning
from ..streams.base import DEFAULT_QUEUE_LIMIT, Event, LivelinessChange, Message, Subscription
from . import naming
from .scan import ChunkRef, FileView, RawMessage, Scan, read_chunk, scan


CLOCKS = ("log", "sample")  # pace / window by log time (available time) or publish time (sample time)


class McapReplay:
    """A recorded file as a `subscribe(collection_id) -> Subscription` source (see module doc)."""

    def __init__(self, path: str | os.PathLike, *, speed: float | None = None, start_ns: int | None = None,
                 end_ns: int | None = None, loop: bool = False, collections: Iterable[str] | None = None,
                 clock: str = "log"):
        if clock not in CLOCKS:
            raise RecordingError(f"clock must be one of {', '.join(CLOCKS)}, got {clock!r}")
        if speed is not None and not (isinstance(speed, (int, float)) and math.isfinite(speed) and speed > 0):
            raise RecordingError(f"speed must be None (as fast as possible) or a finite number > 0, got {speed!r}")
        if start_ns is not None and end_ns is not None and end_ns <= start_ns:
            raise RecordingError(f"end_ns {end_ns} must be after start_ns {start_ns}")
        self._view = FileView(path)
        self.path = self._view.path
        try:
            self._scan = scan(self._view)
            self._streams = self._discover()
        except BaseException:
            self._view.close()
            raise
        self.speed, self.start_ns, self.end_ns, self.loop = speed, start_ns, end_ns, loop
        self.clock = clock
        available = sorted({cid for cid, _, _ in self._streams.values()})
        if collections is None:
            selected = set(available)
        else:
            selected = {validate_collection_id(c) for c in collections}
            missing = sorted(selected - set(available))
            if missing:
                self._view.close()
                raise RecordingError(f"{self.path} has no collection {missing[0]!r}; it holds: "
                                     f"{', '.join(available) or 'no tactile collections'}")
        self.collections: tuple[str, ...] = tuple(sorted(selected))
        self._channels = {ch: v for ch, v in self._streams.items() if v[0] in selected}
        self._session_counts = self._count_sessions()
        if self._scan.truncation is not None:
            warnings.warn(RecordingWarning(self._truncation_text()), stacklevel=2)
        self._subs: dict[str, list[_ReplaySubscription]] = {}
        self._gen: Iterator[tuple[str, Event, int, int]] | None = None
        self._peek: tuple[str, Event, int, int] | None = None
        self._exhausted = False
        self._pass = -1
        self._t0_log = 0
        self._t0_wall = 0

    # -- what the file holds -------------------------------------------------------------------
    @property
    def truncation(self):
        """None for an intact file, else `scan.Truncation` (where the readable part ends)."""
        return self._scan.truncation

    @property
    def start_time_ns(self) -> int | None:
        """Earliest log time announced by the file's complete chunks."""
        return min((c.start_ns for c in self._scan.chunks), default=None)

    @property
    def end_time_ns(self) -> int | None:
        """Latest log time announced by the file's complete chunks."""
        return max((c.end_ns for c in self._scan.chunks), default=None)

    def first_time_ns(self) -> int | None:
        """Time of the first selected message on this replay's clock (log or sample time): the
        origin for windows given in seconds "after the first message"."""
        if self.clock == "log":
            return self.start_time_ns
        for raw in self._merged():
            return raw.publish_time
        return None

    @property
    def finished(self) -> bool:
        """True once every event was delivered (never with `loop=True`)."""
        return self._exhausted and self._peek is None and all(not s._q for subs in self._subs.values() for s in subs)

    def _discover(self) -> dict[int, tuple[str, Stream, int]]:
        sc = self._scan
        if sc.loose_messages:
            raise RecordingError(f"{self.path} stores {sc.loose_messages} messages outside chunks; "
                                 "only chunked MCAP files (as this package writes) can be replayed")
        schemas, channels = dict(sc.schemas), dict(sc.channels)
        if not sc.complete:  # a cut-off file: the definitions may survive only inside the chunks
            for chunk in sc.chunks:
                contents = read_chunk(self._view, chunk)
                schemas.update((s.id, s) for s in contents.schemas)
                channels.update((c.id, c) for c in contents.channels)
        return streams_of(self.path, schemas, channels)

    def _count_sessions(self) -> dict[tuple[str, int], int] | None:
        """Messages per (collection, session) from the message indexes, or None if unknown."""
        counts: dict[tuple[str, int], int] = {}
        for chunk in self._scan.chunks:
            if not chunk.channel_counts:
                return None
            for ch, n in chunk.channel_counts.items():
                if ch in self._channels:
                    cid, _, session = self._channels[ch]
                    counts[(cid, session)] = counts.get((cid, session), 0) + n
        return counts

    def _truncation_text(self) -> str:
        t, chunks = self._scan.truncation, self._scan.chunks
        if self._scan.has_summary:  # the cut lies after the data section
            return (f"{self.path} is damaged ({t.reason}): only its index/summary section is lost "
                    f"({t.bytes_lost} bytes); all {len(chunks)} chunks of data are intact and replayed. "
                    "`wuji-tactile recover` writes a clean copy.")
        kept_until = max((c.end_ns for c in chunks), default=None)
        kept = (f"replaying its {len(chunks)} complete chunks (log time up to {kept_until} ns)" if chunks
                else "no complete chunk survived")
        lost = f"lost: the last {t.bytes_lost} bytes (from byte {t.valid_until} of {t.file_size})"
        if t.partial_chunk_range is not None:
            lost += f", including {t.cut_off_chunk()}"
        return (f"{self.path} is damaged ({t.reason}); {kept}; {lost}, plus whatever the recorder had not "
                "flushed yet (at most its flush period). `wuji-tactile recover` writes a clean copy.")

    # -- the source interface ------------------------------------------------------------------
    def subscribe(self, collection_id: str, *, queue_limit: int = DEFAULT_QUEUE_LIMIT) -> Subscription:
        """Both streams of `collection_id` plus its producers' liveliness, from this file."""
        validate_collection_id(collection_id)
        # In a damaged file the collection may have been in the lost part (the warning said so).
        if collection_id not in self.collections and self._scan.truncation is None:
            raise RecordingError(f"{self.path}: collection {collection_id!r} is not replayed; available: "
                                 f"{', '.join(self.collections) or 'none'}")
        if queue_limit < 1:
            raise RecordingError(f"queue_limit must be >= 1, got {queue_limit}")
        sub = _ReplaySubscription(self, collection_id, queue_limit)
        self._subs.setdefault(collection_id, []).append(sub)
        return sub

    def close(self) -> None:
        """Close every subscription and the file. Idempotent."""
        for subs in self._subs.values():
            for s in subs:
                s._closed = True
        self._subs.clear()
        self._gen = None
        self._exhausted = True
        self._view.close()

    def __enter__(self) -> "McapReplay":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def events(self) -> Iterator[tuple[str, Event]]:
        """Every event of the selected collections as (collection_id, event), in replay order
        (see the module doc), without pacing; independent of (and not consuming) the subscriptions' cursor."""
        for cid, ev, _, _ in self._events():
            yield cid, ev

    def next_collection(self) -> str | None:
        """As-fast-as-possible replays of several collections: the subscribed collection whose
        next data frame comes first in log-time order (None when no frame is left). A consumer
        that updates that collection's tracker each time sees every collection's frames strictly
        in log-time order, whatever their rates (round-robin over trackers would alternate)."""
        if self.speed is not None:
            raise RecordingError("next_collection() is for replays with speed=None; a paced replay "
                                 "delivers events when they are due")
        best: tuple[int, str] | None = None
        for cid, subs in self._subs.items():  # frames already moved to a queue come first
            for s in subs:
                for ev in s._q:
                    if type(ev) is Message and ev.stream is Stream.DATA:
                        if best is None or ev.receive_time_ns < best[0]:
                            best = (ev.receive_time_ns, cid)
                        break
        if best is not None:
            return best[1]
        if self._gen is None:
            if self._exhausted:
                return None
            self._gen = self._events()
        while True:  # move non-frame events to their queues until the next frame is in view
            item = self._peek
            if item is None:
                item = next(self._gen, None)
                if item is None:
                    self._exhausted = True
                    return None
                self._peek = item
            cid, ev, t, pass_no = item
            targets = self._subs.get(cid)
            if targets and type(ev) is Message and ev.stream is Stream.DATA:
                return cid
            if targets and any(len(s._q) >= s.queue_limit for s in targets):
                return cid  # that collection must be drained first
            if pass_no != self._pass:
                self._pass, self._t0_log = pass_no, t
            for s in targets or ():
                s._q.append(ev)
            self._peek = None

    # -- the cursor ----------------------------------------------------------------------------
    def _pump(self, sub: "_ReplaySubscription", want: int | None) -> None:
        """Move events from the file to the subscription queues. As fast as possible: until `sub`
        holds `want` events (None: one data message). Paced: every event due by now."""
        if self._gen is None:
            if self._exhausted:
                return
            self._gen = self._events()
        paced = self.speed is not None
        if paced:
            now = time.monotonic_ns()
            if self._pass < 0:
                self._t0_wall = now
        q = sub._q
        subs = self._subs
        while True:
            item = self._peek
            if item is None:
                item = next(self._gen, None)
                if item is None:
                    self._exhausted = True
                    return
                self._peek = item
            cid, ev, t, pass_no = item
            if pass_no != self._pass:  # a new pass starts: restart the clock there
                self._pass, self._t0_log = pass_no, t
                if paced:
                    self._t0_wall = now
            if paced and (t - self._t0_log) > (now - self._t0_wall) * self.speed:
                return
            targets = subs.get(cid)
            if targets:
                for s in targets:
                    if len(s._q) >= s.queue_limit:
                        return  # hold back: nothing is ever dropped
                for s in targets:
                    s._q.append(ev)
            self._peek = None
            if not paced and cid == sub.collection_id:
                if want is None:
                    if type(ev) is Message and ev.stream is Stream.DATA:
                        return
                elif len(q) >= want:
                    return

    def _events(self) -> Iterator[tuple[str, Event, int, int]]:
        pass_no = 0
        while True:
            yield from self._one_pass(pass_no)
            if not self.loop or not self._channels:
                return
            pass_no += 1

    def _one_pass(self, pass_no: int) -> Iterator[tuple[str, Event, int, int]]:
        start, end = self.start_ns, self.end_ns
        channels = self._channels
        alive: dict[tuple[str, int], None] = {}
        remaining = dict(self._session_counts) if self._session_counts is not None else None
        pending_meta: dict[tuple[str, int], RawMessage] = {}
        last_t = 0
        by_sample = self.clock == "sample"
        for raw in self._merged():
            cid, stream, session = channels[raw.channel_id]
            key = (cid, session)
            t = raw.publish_time if by_sample else raw.log_time
            if end is not None and t >= end:
                break
            if key not in alive:
                if start is not None and t < start:
                    # before the window: keep the session's latest metadata for a late join
                    if stream is Stream.METADATA:
                        pending_meta[key] = raw
                    if remaining is not None:
                        remaining[key] -= 1
                    continue
                alive[key] = None
                yield cid, LivelinessChange(cid, session, True), t, pass_no
                earlier = pending_meta.pop(key, None)
                if earlier is not None and stream is Stream.DATA:
                    yield cid, Message(cid, Stream.METADATA, earlier.data, session, earlier.sequence,
                                       earlier.log_time), t, pass_no
            last_t = t
            yield cid, Message(cid, stream, raw.data, session, raw.sequence, raw.log_time), t, pass_no
            if remaining is not None:
                remaining[key] -= 1
                if remaining[key] == 0:
                    del alive[key]
                    yield cid, LivelinessChange(cid, session, False), t, pass_no
        for cid, session in list(alive):
            yield cid, LivelinessChange(cid, session, False), last_t, pass_no

    def _merged(self) -> Iterator[RawMessage]:
        """Selected messages of every complete chunk: each collection in file (= arrival) order,
        exactly as the recorder received it, and the collections merged by log time."""
        wanted = self._channels
        chunks = [c for c in self._scan.chunks
                  if not c.channel_counts or any(ch in wanted for ch in c.channel_counts)]
        if len(self.collections) <= 1:
            for chunk in chunks:
                yield from self._chunk_messages(chunk)
            return
        collection_of = {ch: v[0] for ch, v in wanted.items()}
        left: dict[str, int] | None = dict.fromkeys(self.collections, 0)
        for c in chunks:
            if not c.channel_counts:
                left = None  # unknown: read ahead until the file ends
                break
            for ch, k in c.channel_counts.items():
                if ch in collection_of:
                    left[collection_of[ch]] += k
        queues: dict[str, deque[tuple[int, int, RawMessage]]] = {cid: deque() for cid in self.collections}
        order = 0
        i, n = 0, len(chunks)
        while True:
            while i < n and any(not q and (left is None or left[cid] > 0) for cid, q in queues.items()):
                for m in self._chunk_messages(chunks[i]):
                    queues[collection_of[m.channel_id]].append((m.log_time, order, m))
                    order += 1
                i += 1
            best = None
            for cid, q in queues.items():
                if q and (best is None or q[0] < queues[best][0]):
                    best = cid
            if best is None:
                return
            if left is not None:
                left[best] -= 1
            yield queues[best].popleft()[2]

    def _chunk_messages(self, chunk: ChunkRef) -> list[RawMessage]:
        wanted = self._channels
        return [m for m in read_chunk(self._view, chunk).messages if m.channel_id in wanted]


def streams_of(path, schemas: dict, channels: dict) -> dict[int, tuple[str, Stream, int]]:
    """channel id -> (collection_id, stream, producer_session) for the file's tactile channels.
    A channel without a `producer_session` entry (another recorder) counts as session 0."""
    out: dict[int, tuple[str, Stream, int]] = {}
    for ch in channels.values():
        schema = schemas.get(ch.schema_id)
        if schema is None or schema.encoding != naming.SCHEMA_ENCODING or ch.message_encoding != naming.MESSAGE_ENCODING:
            continue
        if schema.name not in (DATA_RECORD_SCHEMA_NAME, METADATA_RECORD_SCHEMA_NAME):
            continue
        try:
            cid, stream = parse_stream_key(ch.topic, schema.name)
        except CollectionIdError as exc:  # a tactile schema under a name the contract refuses
            raise RecordingError(f"{path}: channel {ch.id} ({ch.topic!r}, schema {schema.name}): {exc}") from None
        raw = ch.metadata.get(naming.SESSION_KEY, "0")
        try:
            session = int(raw, 16)
        except ValueError:
            raise RecordingError(f"{path}: channel {ch.id} ({ch.topic!r}) has producer_session {raw!r}, "
                                 "not a hexadecimal number") from None
        out[ch.id] = (cid, stream, session)
    return out


class _ReplaySubscription(Subscription):
    def __init__(self, replay: McapReplay, collection_id: str, queue_limit: int):
        self._replay = replay
        self.collection_id = collection_id
        self.queue_limit = queue_limit
        self._q: deque[Event] = deque()
        self._closed = False

    def drain(self, max_events: int | None = None) -> list[Event]:
        if self._closed:
            return []
        q = self._q
        replay = self._replay
        if replay.speed is None:
            if max_events is None:
                if not any(type(e) is Message and e.stream is Stream.DATA for e in q):
                    replay._pump(self, None)
                out = []
                while q:
                    e = q.popleft()
                    out.append(e)
                    if type(e) is Message and e.stream is Stream.DATA:
                        break
                return out
            if len(q) < max_events:
                replay._pump(self, max_events)
        else:
            replay._pump(self, None)
        n = len(q) if max_events is None else min(max_events, len(q))
        return [q.popleft() for _ in range(n)]

    @property
    def overflowed(self) -> int:
        return 0  # a replay holds back instead of dropping

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            subs = self._replay._subs.get(self.collection_id, [])
            if self in subs:
                subs.remove(self)
