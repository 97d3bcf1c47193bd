"""inspect_file: what a recording holds (per topic: counts, time range, rate, schema, sessions) and
whether it is sound: every chunk against its CRC, every data record through the verifier and
against its session's taxel count, every metadata record through validation, every message of an
auxiliary JSON topic parsed and checked against its channel's `jsonschema` schema, every chunk's
message index against the chunk's records. Topics in other encodings are counted and listed, not
checked. A file without any tactile collection is sound (`ok`) but not `valid` (replay refuses it).

Bounded: one chunk in memory at a time and the per-file work bound of `recording.scan`; data
records are decoded with a size limit of `INSPECT_MAX_DATA_SIZE`, metadata records with the
tracker's `TRACKER_METADATA_MAX_SIZE` (no tracker accepts a larger one)."""
from __future__ import annotations

import datetime
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import CorruptChunkError, ReadLimitError, RecordingError, TactileError, printable
from ..contract import TRACKER_METADATA_MAX_SIZE, decode_metadata_record, decode_tactile_record
from ..contract.naming import Stream, stream_key
from . import json_channel
from .replay import MAX_COLLECTIONS, index_difference, streams_of
from .clock_anchor import log_time_offset, wall_clock_span_of
from .naming import FILE_METADATA_NAME
from .scan import FileView, ReadBudget, Scan, read_chunk, read_partial_chunk, scan

MAX_LISTED = 20  # problems listed per file (all are counted)
#: Producer sessions listed per topic (the recorder writes at most 1,024 per collection).
MAX_LISTED_SESSIONS = 1024
#: Largest data record checked [bytes]: 1 MiB is ~87,000 taxels, far beyond any hand (176 taxels: 2,184 B).
INSPECT_MAX_DATA_SIZE = 1 << 20


@dataclass
class TopicStats:
    topic: str
    schema_name: str
    message_encoding: str
    schema_encoding: str = ""
    sessions: set[int] = field(default_factory=set)
    count: int = 0
    first_ns: int | None = None  # log time (available time) range [ns]
    last_ns: int | None = None
    first_sample_ns: int | None = None  # publish time (sample time) range [ns]
    last_sample_ns: int | None = None
    max_bytes: int = 0

    @property
    def rate_hz(self) -> float | None:
        """Messages per second of log (available) time: how fast they were recorded."""
        return _rate(self.count, self.first_ns, self.last_ns)

    @property
    def sample_rate_hz(self) -> float | None:
        """Messages per second of sample time: the producer's rate (a simulation recorded as fast
        as possible has a high log-time rate but samples at 100 Hz)."""
        return _rate(self.count, self.first_sample_ns, self.last_sample_ns)


def _rate(count: int, first: int | None, last: int | None) -> float | None:
    if count < 2 or first is None or last is None or last == first:
        return None
    return (count - 1) / ((last - first) / 1e9)


def _span_s(first: int | None, last: int | None) -> str:
    return f"{(last - first) / 1e9:9.3f}" if first is not None and last is not None else f"{'-':>9}"


def _hz(rate: float | None) -> str:
    return f"{rate:9.2f}" if rate is not None else f"{'-':>9}"


@dataclass
class InspectReport:
    path: Path
    scan: Scan
    topics: dict[str, TopicStats] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # first MAX_LISTED
    problem_count: int = 0
    notes: list[str] = field(default_factory=list)  # facts a user should know, not faults
    checked_messages: int = 0
    collections: list[str] = field(default_factory=list)  # tactile collections with at least one message
    #: (first, last) log time as epoch ns, from the file's clock anchors; None without anchors.
    wall_clock: tuple[int, int] | None = None

    NO_COLLECTION = ("no tactile collection: no message on a channel with the schemas "
                     "core.TactileDataArrayRecord / core.TactileMetadataRecord (replay refuses the file)")

    @property
    def ok(self) -> bool:
        """True when the file is complete and every check passed (it may hold only auxiliary topics)."""
        return self.problem_count == 0 and self.scan.truncation is None

    @property
    def valid(self) -> bool:
        """`ok` and holding at least one tactile collection: what `wuji-tactile validate` accepts
        (a file without any is not a tactile recording, and replay refuses it)."""
        return self.ok and bool(self.collections)

    def problem(self, text: str) -> None:
        self.problem_count += 1
        if len(self.problems) < MAX_LISTED:
            self.problems.append(text)

    def text(self) -> str:
        sc = self.scan
        state = "complete" if sc.complete else "DAMAGED (no valid footer)"
        lines = [f"{self.path}: {sc.size} bytes, {state}, {len(sc.chunks)} chunks, written by {sc.library!r}"]
        for md in sc.metadata:
            lines.append(f"file metadata {md.name!r}: " + ", ".join(f"{k}={v}" for k, v in md.metadata.items()))
        if self.wall_clock is not None:
            start, end = (_utc(t) for t in self.wall_clock)
            lines.append(f"wall clock: {start} .. {end} UTC (log times through the file's clock anchors)")
        else:
            lines.append("wall clock: unknown (the file has no clock anchor)")
        lines.append(f"{'topic':<32} {'schema':<30} {'encoding':<16} {'messages':>8} {'sessions':>8} "
                     f"{'sampled s':>9} {'sample Hz':>9} {'logged s':>9} {'log Hz':>9} {'max B':>6}  log time ns")
        for t in sorted(self.topics.values(), key=lambda t: t.topic):
            span = f"{t.first_ns} .. {t.last_ns}" if t.count else "-"
            encoding = t.message_encoding if t.schema_encoding in ("", t.message_encoding) \
                else f"{t.message_encoding}/{t.schema_encoding}"
            lines.append(f"{t.topic:<32} {t.schema_name:<30} {encoding:<16} {t.count:>8} {len(t.sessions):>8} "
                         f"{_span_s(t.first_sample_ns, t.last_sample_ns)} {_hz(t.sample_rate_hz)} "
                         f"{_span_s(t.first_ns, t.last_ns)} {_hz(t.rate_hz)} {t.max_bytes:>6}  {span}")
        lines.append("(sampled / sample Hz: publish time = when the producer sensed the data; "
                     "logged / log Hz: log time = when it became available, i.e. how fast it was recorded)")
        if sc.truncation is not None:
            tr = sc.truncation
            s = f"truncated: {tr.reason}; {tr.bytes_lost} bytes after byte {tr.valid_until} are unreadable"
            if tr.partial_chunk_range is not None:
                s += f" ({tr.cut_off_chunk()})"
            lines.append(s)
        lines += [f"note: {n}" for n in self.notes]
        if not self.collections:
            lines.append(self.NO_COLLECTION)
        lines.append(f"checked {self.checked_messages} messages: "
                     + ("no problems" if self.problem_count == 0 else f"{self.problem_count} problem(s)"))
        lines += [f"  {p}" for p in self.problems]
        if self.problem_count > len(self.problems):
            lines.append(f"  ... and {self.problem_count - len(self.problems)} more")
        return "\n".join(printable(ln) for ln in lines)  # names from the file: control characters escaped


def _utc(epoch_ns: int) -> str:
    return datetime.datetime.fromtimestamp(epoch_ns / 1e9, datetime.UTC).isoformat(timespec="milliseconds")


def inspect_file(path: str | os.PathLike) -> InspectReport:
    """Read all of `path` and check it (see module doc). Raises RecordingError only when the file
    is not MCAP or cannot be opened; every other fault is listed in the report."""
    view = FileView(path)
    try:
        sc = scan(view)
        report = InspectReport(view.path, sc)
        try:
            report.wall_clock = wall_clock_span_of(sc, where=f"{view.path}: ")
        except RecordingError as exc:
            report.problem(f"clock anchor: {exc}")
        offset = 0  # log time − record available time [ns]: the file's declared log-time base
        try:
            offset = log_time_offset({k: v for m in sc.metadata if m.name == FILE_METADATA_NAME
                                      for k, v in m.metadata.items()}, where=f"{view.path}: ")
        except RecordingError as exc:
            report.problem(str(exc))
        for d in sc.damage:
            report.problem(f"damaged: {d}")
        report.problem_count += sc.damage_count - len(sc.damage)
        if sc.metadata_ignored:
            report.problem(f"{sc.metadata_ignored} file metadata records beyond the first {len(sc.metadata)} ignored")
        if sc.loose_messages:
            report.problem(f"{sc.loose_messages} messages are stored outside chunks (not checked)")
        schemas, channels = dict(sc.schemas), dict(sc.channels)
        streams: dict[int, tuple[str, Stream, int] | None] = {}  # channel id -> tactile stream, None = other
        taxels: dict[tuple[str, int], int] = {}  # (collection, session) -> taxel count of its metadata
        adopted: dict[str, object] = {}  # collection -> first valid metadata
        early: dict[str, int] = {}  # collection -> data frames logged before their session's metadata
        bad_channels: set[int] = set()  # channels refused by streams_of (reported once)
        json_schemas: dict[int, tuple[dict, json_channel.Checker] | None] = {}  # (parsed, check); None: unusable, reported
        unchecked: set[str] = set()  # topics in encodings this package does not check
        budget = ReadBudget(sc.chunk_bytes, view.path)
        checked_collections: set[str] = set()  # at most MAX_COLLECTIONS
        over_limit: set[str] = set()  # collections beyond it: counted per topic only
        for chunk in sc.chunks:  # one chunk in memory at a time
            try:
                c = read_chunk(view, chunk, budget)
            except CorruptChunkError as exc:
                report.problem(str(exc))
                continue
            except ReadLimitError as exc:
                report.problem(f"{exc}; the rest of the file is not checked")
                break
            difference = index_difference(chunk, c.messages) if sc.has_summary and chunk.channel_counts else None
            if difference is not None:
                report.problem(f"the message index of {chunk.describe()} {difference} (readers that trust the "
                               "index lose or misplace messages; `wuji-tactile recover` rewrites it)")
            schemas.update((s.id, s) for s in c.schemas)
            channels.update((ch.id, ch) for ch in c.channels)
            for m in c.messages:
                ch = channels.get(m.channel_id)
                if ch is None:
                    report.problem(f"message at log time {m.log_time} ns refers to channel {m.channel_id}, "
                                   "whose definition was lost")
                    continue
                schema = schemas.get(ch.schema_id)
                stats = report.topics.get(ch.topic)
                if stats is None:
                    stats = report.topics[ch.topic] = TopicStats(ch.topic, schema.name if schema else "(none)",
                                                                 ch.message_encoding,
                                                                 schema.encoding if schema else "")
                stats.count += 1
                stats.first_ns = m.log_time if stats.first_ns is None else min(stats.first_ns, m.log_time)
                stats.last_ns = m.log_time if stats.last_ns is None else max(stats.last_ns, m.log_time)
                stats.first_sample_ns = m.publish_time if stats.first_sample_ns is None \
                    else min(stats.first_sample_ns, m.publish_time)
                stats.last_sample_ns = m.publish_time if stats.last_sample_ns is None \
                    else max(stats.last_sample_ns, m.publish_time)
                stats.max_bytes = max(stats.max_bytes, len(m.data))
                if m.channel_id not in streams:
                    try:
                        streams[m.channel_id] = streams_of(view.path, schemas, {ch.id: ch}).get(ch.id)
                    except RecordingError as exc:  # missing schema, bad producer session
                        report.problem(str(exc))
                        streams[m.channel_id] = None
                        unchecked.discard(ch.topic)
                        bad_channels.add(m.channel_id)
                if m.channel_id in bad_channels:
                    continue
                stream_of = streams[m.channel_id]
                if stream_of is None:
                    if ch.message_encoding == json_channel.MESSAGE_ENCODING:
                        report.checked_messages += 1
                        _check_json(report, m, ch, schema, json_schemas)
                    else:
                        unchecked.add(ch.topic)
                    continue
                cid, stream, session = stream_of
                if cid not in checked_collections:
                    if len(checked_collections) >= MAX_COLLECTIONS:
                        if not over_limit:
                            report.problem(f"the file holds more than the {MAX_COLLECTIONS} tactile collections a "
                                           f"reader reads at once (from {cid!r} on, messages are counted, not "
                                           "checked; replay and export need --collection)")
                        over_limit.add(cid)
                        continue
                    checked_collections.add(cid)
                if len(stats.sessions) < MAX_LISTED_SESSIONS:
                    stats.sessions.add(session)
                report.checked_messages += 1
                _check(report, m, cid, stream, session, taxels, adopted, early, offset)
        partial = sc.truncation.partial_chunk if sc.truncation is not None else None
        if partial is not None:
            try:
                salvage = len(read_partial_chunk(view, partial, budget).messages)
            except (CorruptChunkError, ReadLimitError):
                salvage = 0
            if salvage:
                report.notes.append(f"{salvage} complete messages of the cut-off chunk are readable "
                                    "(`wuji-tactile recover` keeps them)")
        report.collections = sorted(checked_collections | over_limit)
        for topic in sorted(unchecked):
            t = report.topics[topic]
            report.notes.append(f"{topic}: {t.count} messages in encoding {t.message_encoding!r} are counted, not checked")
        for cid, n in sorted(early.items()):
            report.notes.append(f"{cid}: {n} data frames were logged before their producer session's metadata "
                                "(a tracker drops them, live or replayed)")
        return report
    finally:
        view.close()


def _check(report: InspectReport, m, cid: str, stream: Stream, session: int, taxels: dict, adopted: dict,
           early: dict, offset: int = 0) -> None:
    where = f"{stream_key(cid, stream)} session {session:016x} seq {m.sequence} (log time {m.log_time} ns)"
    try:
        if stream is Stream.DATA:
            record = decode_tactile_record(m.data, max_size=INSPECT_MAX_DATA_SIZE)
            timestamp = record.timestamp
            n = taxels.get((cid, session))
            if n is None:
                early[cid] = early.get(cid, 0) + 1
            elif record.forces.shape[0] != n:
                report.problem(f"{where}: {record.forces.shape[0]} taxels, its session's metadata declares {n}")
            finite = np.isfinite(record.forces)
            if not finite.all():
                taxel = int(np.argwhere(~finite)[0, 0])
                report.problem(f"{where}: taxel {taxel} has a non-finite force {record.forces[taxel].tolist()} "
                               "(a tracker refuses the frame: NonFiniteForceError)")
        else:
            metadata_record = decode_metadata_record(m.data, max_size=TRACKER_METADATA_MAX_SIZE)
            timestamp, metadata = metadata_record.timestamp, metadata_record.metadata
            metadata.validate()
            first = adopted.setdefault(cid, metadata)
            if metadata != first:
                report.problem(f"{where}: metadata differs from the collection's first metadata "
                               "(a tracker raises MetadataMismatchError)")
            taxels[(cid, session)] = metadata.num_taxels
    except TactileError as exc:
        report.problem(f"{where}: {type(exc).__name__}: {exc}")
        return
    available, sample = timestamp.available_time_local_common_clock, timestamp.sample_time_local_common_clock
    if (available + offset, sample + offset) != (m.log_time, m.publish_time):
        report.problem(f"{where}: log/publish time {m.log_time}/{m.publish_time} differ from the record's "
                       f"available/sample time {available}/{sample} + the file's log-time offset {offset} ns")


def _check_json(report: InspectReport, m, ch, schema, json_schemas: dict) -> None:
    """An auxiliary JSON message: it must parse, and conform to its `jsonschema` schema if any.
    `json_schemas` caches, per schema id, (parsed schema, its compiled check) or None."""
    where = f"{ch.topic} seq {m.sequence} (log time {m.log_time} ns)"
    compiled = None
    if schema is not None and schema.encoding == json_channel.SCHEMA_ENCODING:
        if schema.id not in json_schemas:
            try:
                parsed = json_channel.decode(schema.data)
                if not isinstance(parsed, dict):
                    raise ValueError("it is not a JSON object")
                json_schemas[schema.id] = (parsed, json_channel.checker(parsed))
            except ValueError as exc:
                json_schemas[schema.id] = None
                report.problem(f"{ch.topic}: schema {schema.name!r} is not valid JSON ({exc})")
        compiled = json_schemas[schema.id]
    try:
        value = json_channel.decode(m.data)
    except ValueError as exc:
        report.problem(f"{where}: not valid JSON ({exc})")
        return
    if compiled is not None and not compiled[1](value):
        for v in json_channel.violations(value, compiled[0])[:3]:
            report.problem(f"{where}: {v} (schema {schema.name!r})")
