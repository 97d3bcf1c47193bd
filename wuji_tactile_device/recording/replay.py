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

Bounded in memory and time on any file: one chunk is decompressed at a time (two collections are
merged with a read-ahead bounded by the chunks' announced start times and by `MERGE_MAX_BYTES`);
a wait for the next event never exceeds `max_gap_s` of wall time (a longer gap in the recorded
times, e.g. one far-future log time, is shortened, with a `RecordingWarning`); a message index
that disagrees with its chunk is not trusted (the chunk's records are); a chunk cut off by a crash
gives the complete records its compressed prefix decodes to.

`clock="sample"` paces and windows by publish time (= the sample time) instead of log time, for
files whose log times are compressed: a simulation recorded as fast as possible logs 13 s of
simulated time in about half a second, and plays back at its simulated pace this way. The order
of events is the same with either clock.
"""
from __future__ import annotations

import math
import os
import re
import time
import warnings
from collections import deque
from collections.abc import Iterable, Iterator

from ..contract.naming import (DATA_RECORD_SCHEMA_NAME, METADATA_RECORD_SCHEMA_NAME, Stream, parse_stream_key,
                               validate_collection_id)
from ..errors import CollectionIdError, CorruptChunkError, RecordingError, RecordingWarning
from ..streams.base import DEFAULT_QUEUE_LIMIT, Event, LivelinessChange, Message, Subscription
from . import naming
from .scan import ChunkRef, FileView, RawMessage, ReadBudget, Truncation, read_chunk, read_partial_chunk, scan


CLOCKS = ("log", "sample")  # pace / window by log time (available time) or publish time (sample time)
#: Slowest replay speed accepted (a thousandth of real time); faster than that, waits stay bounded by max_gap_s.
MIN_SPEED = 1e-3
#: Default bound on one wait for the next event [s of wall time] when pacing.
DEFAULT_MAX_GAP_S = 5.0
#: Bytes of messages the two-collection merge may hold read ahead (beyond it, a hostile file's
#: chunk times are not trusted and the merge yields in file order).
MERGE_MAX_BYTES = 64 << 20
_SESSION_HEX = re.compile(r"[0-9a-fA-F]{1,16}")
#: Tactile collections one reader (replay, export, a view of a file) reads at once: a tracker, a
#: queue and an output per collection. A file holding more is refused unless `collections`
#: selects at most this many; `inspect`/`validate` check this many and count the rest.
MAX_COLLECTIONS = 64


def window_ns(first_ns: int | None, start_s: float | None, end_s: float | None) -> tuple[int | None, int | None]:
    """(start_ns, end_ns) for a window given in seconds after `first_ns` (the first message's
    time, `McapReplay.first_time_ns()`); None stays None. ValueError for a bound that is not a
    finite number >= 0 s, or an end not after the start."""
    out: list[int | None] = []
    for name, v in (("start", start_s), ("end", end_s)):
        if v is None:
            out.append(None)
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 or v > 1e9:
            raise ValueError(f"replay window {name} must be a finite number of seconds in [0, 1e9], got {v!r}")
        out.append(None if first_ns is None else first_ns + int(round(v * 1e9)))
    if start_s is not None and end_s is not None and end_s <= start_s:
        raise ValueError(f"replay window end {end_s} s must be after its start {start_s} s")
    return out[0], out[1]


class McapReplay:
    """A recorded file as a `subscribe(collection_id) -> Subscription` source (see module doc)."""

    def __init__(self, path: str | os.PathLike, *, speed: float | None = None, start_ns: int | None = None,
                 end_ns: int | None = None, loop: bool = False, collections: Iterable[str] | None = None,
                 clock: str = "log", max_gap_s: float = DEFAULT_MAX_GAP_S):
        if clock not in CLOCKS:
            raise ValueError(f"clock must be one of {', '.join(CLOCKS)}, got {clock!r}")
        if speed is not None and not (isinstance(speed, (int, float)) and not isinstance(speed, bool)
                                      and math.isfinite(speed) and MIN_SPEED <= speed <= 1e9):
            raise ValueError(f"speed must be None (as fast as possible) or a finite number in [{MIN_SPEED:g}, 1e9] "
                             f"(times real time), got {speed!r}")
        if not (isinstance(max_gap_s, (int, float)) and math.isfinite(max_gap_s) and max_gap_s > 0):
            raise ValueError(f"max_gap_s must be a finite number of seconds > 0, got {max_gap_s!r}")
        for name, v in (("start_ns", start_ns), ("end_ns", end_ns)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                raise ValueError(f"{name} must be None or an int of nanoseconds, got {v!r} (see window_ns)")
        if start_ns is not None and end_ns is not None and end_ns <= start_ns:
            raise ValueError(f"end_ns {end_ns} must be after start_ns {start_ns}")
        self._view = FileView(path)
        self.path = self._view.path
        try:
            self._scan = scan(self._view)
            self._partial = self._scan.truncation.partial_chunk if self._scan.truncation is not None else None
            self._corrupt: CorruptChunkError | None = None
            self._streams = self._discover()
            if not self._streams and self._corrupt is not None:
                raise self._corrupt
            if not self._streams and self._scan.truncation is None:
                raise RecordingError(f"{self.path} holds no tactile collections (no channel with the schemas "
                                     f"{DATA_RECORD_SCHEMA_NAME} / {METADATA_RECORD_SCHEMA_NAME}): nothing to replay")
        except BaseException:
            self._view.close()
            raise
        self.speed, self.start_ns, self.end_ns, self.loop = speed, start_ns, end_ns, loop
        self.clock = clock
        self._max_gap_ns = int(max_gap_s * 1e9)
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
        if len(selected) > MAX_COLLECTIONS:
            self._view.close()
            raise RecordingError(f"{self.path} holds {len(selected)} tactile collections, more than the "
                                 f"{MAX_COLLECTIONS} a reader reads at once; select at most {MAX_COLLECTIONS} "
                                 "with --collection ID (collections=[...])")
        self.collections: tuple[str, ...] = tuple(sorted(selected))
        self._channels = {ch: v for ch, v in self._streams.items() if v[0] in selected}
        self._session_counts = self._count_sessions()
        self._index_trusted = self._session_counts is not None
        if self._scan.truncation is not None:
            warnings.warn(RecordingWarning(self._truncation_text(self._scan.truncation)), stacklevel=2)
        if self._scan.damage:
            warnings.warn(RecordingWarning(f"{self.path} is damaged: {'; '.join(self._scan.damage[:3])}"
                                           + (f" (and {self._scan.damage_count - 3} more)" if self._scan.damage_count > 3
                                              else "") + "; replaying every intact chunk"), stacklevel=2)
        self._warned_gap = False
        self._subs: dict[str, list[_ReplaySubscription]] = {}
        self._gen: Iterator[tuple[str, Event, int, int]] | None = None
        self._peek: tuple[str, Event, int, int] | None = None
        self._exhausted = False
        self._pass = -1
        self._t0_log = 0
        self._last_t = 0
        self._t0_wall = 0

    # -- what the file holds -------------------------------------------------------------------
    @property
    def truncation(self):
        """None for an intact file, else `scan.Truncation` (where the readable part ends)."""
        return self._scan.truncation

    @property
    def topics(self) -> frozenset[str]:
        """Every channel's topic in the file, tactile or not (what a viewer would list)."""
        return frozenset(ch.topic for ch in self._scan.channels.values())

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
        """True once every event was delivered (never with `loop=True`); at once when the file
        holds none of the selected collections (a cut-off file whose collections were lost)."""
        if not self._channels:
            return True
        return self._exhausted and self._peek is None and all(not s._q for subs in self._subs.values() for s in subs)

    def _discover(self) -> dict[int, tuple[str, Stream, int]]:
        sc = self._scan
        if sc.loose_messages:
            raise RecordingError(f"{self.path} stores {sc.loose_messages} messages outside chunks; "
                                 "only chunked MCAP files (as this package writes) can be replayed")
        schemas, channels = dict(sc.schemas), dict(sc.channels)
        if not sc.complete or not sc.channels:  # a cut-off file (or no summary): definitions are in the chunks
            budget = ReadBudget(sc.chunk_bytes, self.path)
            for chunk in sc.chunks:
                try:
                    contents = read_chunk(self._view, chunk, budget)
                except CorruptChunkError as exc:  # raised where its messages would be replayed ...
                    self._corrupt = self._corrupt or exc  # ... or now, if no collection is found elsewhere
                    continue
                schemas.update((s.id, s) for s in contents.schemas)
                channels.update((c.id, c) for c in contents.channels)
            if self._partial is not None:
                contents = read_partial_chunk(self._view, self._partial, budget)
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

    def _truncation_text(self, t: Truncation) -> str:
        chunks = self._scan.chunks
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
        if isinstance(queue_limit, bool) or not isinstance(queue_limit, int) or queue_limit < 1:
            raise ValueError(f"queue_limit must be an int >= 1, got {queue_limit!r}")
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

    def __enter__(self) -> McapReplay:
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
    def _pump(self, sub: _ReplaySubscription, want: int | None) -> None:
        """Move events from the file to the subscription queues. As fast as possible: until `sub`
        holds `want` events (None: one data message). Paced: every event due by now."""
        if self._gen is None:
            if self._exhausted:
                return
            self._gen = self._events()
        speed = self.speed
        paced = speed is not None
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
                self._pass, self._t0_log, self._last_t = pass_no, t, t
                if paced:
                    self._t0_wall = now
            if speed is not None:
                gap, longest = t - self._last_t, int(self._max_gap_ns * speed)
                if gap > longest or gap < -longest:  # a wait (or jump back) beyond max_gap_s: re-anchor the clock
                    self._t0_log += gap - longest if gap > 0 else gap
                    if not self._warned_gap:
                        self._warned_gap = True
                        warnings.warn(RecordingWarning(
                            f"{self.path}: the recorded time jumps by {gap / 1e9:.3f} s before {t} ns; played as "
                            f"{max(gap, 0) and self._max_gap_ns / 1e9:g} s of wall time (max_gap_s)"), stacklevel=3)
                self._last_t = t
                if (t - self._t0_log) > (now - self._t0_wall) * speed:
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
        self._index_trusted = self._session_counts is not None
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
                    if remaining is not None and self._index_trusted:
                        remaining[key] = remaining.get(key, 0) - 1
                    continue
                alive[key] = None
                yield cid, LivelinessChange(cid, session, True), t, pass_no
                earlier = pending_meta.pop(key, None)
                if earlier is not None and stream is Stream.DATA:
                    yield cid, Message(cid, Stream.METADATA, earlier.data, session, earlier.sequence,
                                       earlier.log_time), t, pass_no
            last_t = t
            yield cid, Message(cid, stream, raw.data, session, raw.sequence, raw.log_time), t, pass_no
            if remaining is not None and self._index_trusted:  # else: sessions end with the pass
                remaining[key] = remaining.get(key, 0) - 1
                if remaining[key] == 0:
                    del alive[key]
                    yield cid, LivelinessChange(cid, session, False), t, pass_no
        for cid, session in list(alive):
            yield cid, LivelinessChange(cid, session, False), last_t, pass_no

    def _merged(self) -> Iterator[RawMessage]:
        """Selected messages of every complete chunk (then of a cut-off chunk's readable prefix):
        each collection in file (= arrival) order, exactly as the recorder received it, and the
        collections merged by log time. Read-ahead stops once every chunk left is announced to
        start after the earliest message held (none of them can hold an earlier one)."""
        budget = ReadBudget(self._scan.chunk_bytes, self.path)
        chunks: list[ChunkRef] = list(self._scan.chunks)
        if self._partial is not None:
            chunks.append(self._partial)
        if len(self.collections) <= 1:
            for chunk in chunks:
                yield from self._chunk_messages(chunk, budget)
            return
        collection_of = {ch: v[0] for ch, v in self._channels.items()}
        queues: dict[str, deque[tuple[int, int, RawMessage]]] = {cid: deque() for cid in self.collections}
        held = 0  # payload bytes read ahead
        order = 0
        i, n = 0, len(chunks)
        later_start = [0] * n  # earliest start announced by chunks[i:]
        for k in range(n - 1, -1, -1):
            later_start[k] = min(chunks[k].start_ns, later_start[k + 1]) if k + 1 < n else chunks[k].start_ns
        while True:
            while i < n and held < MERGE_MAX_BYTES:
                heads = [q[0] for q in queues.values() if q]
                if len(heads) == len(queues) or (heads and later_start[i] > min(heads)[0]):
                    break  # every collection has a candidate, or no chunk left starts early enough
                for m in self._chunk_messages(chunks[i], budget):
                    queues[collection_of[m.channel_id]].append((m.log_time, order, m))
                    held += len(m.data)
                    order += 1
                i += 1
            best = None
            for cid, q in queues.items():
                if q and (best is None or q[0] < queues[best][0]):
                    best = cid
            if best is None:
                return
            m = queues[best].popleft()[2]
            held -= len(m.data)
            yield m

    def _chunk_messages(self, chunk: ChunkRef, budget: ReadBudget) -> list[RawMessage]:
        if chunk.cut_off:
            contents = read_partial_chunk(self._view, chunk, budget)
        else:
            contents = read_chunk(self._view, chunk, budget)
            if self._index_trusted and not _index_agrees(chunk, contents.messages):
                self._index_trusted = False  # sessions end with the pass, not at their indexed count
                warnings.warn(RecordingWarning(
                    f"{self.path}: the message index of {chunk.describe()} disagrees with its records; "
                    "reading the chunks, not the index (`wuji-tactile recover` writes a correct index)"), stacklevel=4)
        wanted = self._channels
        return [m for m in contents.messages if m.channel_id in wanted]


def _index_agrees(chunk: ChunkRef, messages: list[RawMessage]) -> bool:
    """True when the chunk's message index records count exactly its messages per channel."""
    return index_difference(chunk, messages) is None


def index_difference(chunk: ChunkRef, messages: list[RawMessage]) -> str | None:
    """How the chunk's message index differs from its records ('lists ..., the chunk holds ...'),
    or None when it counts exactly the chunk's messages per channel."""
    actual: dict[int, int] = {}
    for m in messages:
        actual[m.channel_id] = actual.get(m.channel_id, 0) + 1
    listed = {ch: k for ch, k in chunk.channel_counts.items() if k}
    if actual == listed:
        return None

    def per_channel(counts: dict[int, int]) -> str:
        return ", ".join(f"{k} on channel {ch}" for ch, k in sorted(counts.items())) or "no messages"

    return f"lists {per_channel(listed)}, the chunk holds {per_channel(actual)}"


def streams_of(path, schemas: dict, channels: dict) -> dict[int, tuple[str, Stream, int]]:
    """channel id -> (collection_id, stream, producer_session) for the file's tactile channels.
    A channel without a `producer_session` entry (another recorder) counts as session 0."""
    out: dict[int, tuple[str, Stream, int]] = {}
    for ch in channels.values():
        schema = schemas.get(ch.schema_id)
        if schema is None and ch.schema_id != 0 and ch.message_encoding == naming.MESSAGE_ENCODING:
            raise RecordingError(f"{path}: channel {ch.id} ({ch.topic!r}) refers to schema {ch.schema_id}, which is "
                                 "not in the file: its messages cannot be identified (missing schema record)")
        if schema is None or schema.encoding != naming.SCHEMA_ENCODING or ch.message_encoding != naming.MESSAGE_ENCODING:
            continue
        if schema.name not in (DATA_RECORD_SCHEMA_NAME, METADATA_RECORD_SCHEMA_NAME):
            continue
        try:
            cid, stream = parse_stream_key(ch.topic, schema.name)
        except CollectionIdError as exc:  # a tactile schema under a name the contract refuses
            raise RecordingError(f"{path}: channel {ch.id} ({ch.topic!r}, schema {schema.name}): {exc}") from None
        raw = ch.metadata.get(naming.SESSION_KEY, "0")
        if not _SESSION_HEX.fullmatch(raw):
            raise RecordingError(f"{path}: channel {ch.id} ({ch.topic!r}) has producer_session {raw[:40]!r}, "
                                 "not 1 to 16 hexadecimal digits (a u64 session id)")
        out[ch.id] = (cid, stream, int(raw, 16))
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
