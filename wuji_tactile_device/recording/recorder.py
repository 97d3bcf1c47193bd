"""McapRecorder: writes the data and metadata streams of any number of collections into one MCAP
file (layout in `recording.naming`), from a transport or from trackers.

Crash safety: the open chunk is closed and handed to the OS as soon as the records written since
the last flush reach `flush_period_s` (default 0.5 s) past the last flushed record on their own
log-time line (checked on every write, so a simulation running faster than real time, or a
machine so loaded that a poll drains a long backlog, still flushes every 0.5 s of the data's
time), at least every `flush_period_s` of wall time (checked on every `poll()`/write: a stream
slower than real time), and whenever the chunk reaches `chunk_size` (default 256 KiB) of records.
So a killed process loses less than `flush_period_s` of log time after the last record it wrote
(plus what the transport still held); the bound is in the data's time, whatever the machine's
load. `close()` (also on Ctrl-C in the CLI) writes the summary and leaves a complete, indexed file.

Hostile peers: a sample that cannot be written as received (a negative timestamp, a new producer
session while `MAX_SESSIONS_PER_COLLECTION` sessions are all sending) is refused, counted in `counters.refused_samples`
and logged once per producer session (at most one such log line per second); recording goes on.
Per-session state is bounded: open sessions by `MAX_SESSIONS_PER_COLLECTION` (idle ones, those that
never sent data first, are evicted for a newcomer, so fake sessions cannot lock out a live
producer; counted in `counters.sessions_evicted`, logged once), the last metadata kept
to skip republishes by `MAX_METADATA_SESSIONS` sessions (least recently used dropped; a dropped
session's next republish is simply written again) and, per session, a digest plus the decoded
layout only for records within `TRACKER_METADATA_MAX_SIZE`.

Auxiliary channels (`add_json_channel` + `write_json`) record non-contract data alongside, e.g. a
device's own per-finger resultants: JSON messages with a `jsonschema` schema, in the same chunks
and under the same flush guarantee; replay and the tracker ignore them.
"""
from __future__ import annotations

import datetime
import hashlib
import logging
import os
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcap
from mcap.writer import CompressionType, Writer

from .. import __version__
from ..errors import InvalidMessageError, RecordingError, TactileError
from ..contract import TRACKER_METADATA_MAX_SIZE, bfbs, decode_metadata_record
from ..contract.naming import (DATA_RECORD_SCHEMA_NAME, METADATA_RECORD_SCHEMA_NAME, RECORD_ROOT, Stream, stream_key,
                               validate_collection_id)
from ..contract.records import peek_record_times
from ..streams.base import LivelinessChange, Message, Subscription, Transport
from . import json_channel, naming, profiles
from .safe_files import open_recording
from .clock_anchor import (ANCHOR_PERIOD_S, CLOCK_ANCHOR_METADATA_NAME, LOG_CLOCK_EPOCH, LOG_CLOCK_MONOTONIC,
                           LOG_TIME_BASE_KEY, LOG_TIME_BASES, LOG_TIME_OFFSET_KEY, anchor_metadata,
                           sample_clock_anchor)

log = logging.getLogger(__name__)

_ANCHOR_PERIOD_NS = int(ANCHOR_PERIOD_S * 1e9)
_COMPRESSION = {"zstd": CompressionType.ZSTD, "lz4": CompressionType.LZ4, "none": CompressionType.NONE}

#: Default chunk size [bytes of records]: a chunk is closed at this size even within a flush
#: period, so a file recorded as fast as possible is many chunks and a cut loses at most one.
DEFAULT_CHUNK_SIZE = 256 << 10
#: Producer sessions the recorder keeps open per collection. A newcomer past it evicts a session
#: that never sent data, else one idle for `SESSION_IDLE_S` (oldest activity first; its records
#: stay in the file, counted in `counters.sessions_evicted`; if it comes back it gets new
#: channels); when every kept session is sending, the newcomer's samples are refused and counted.
MAX_SESSIONS_PER_COLLECTION = 1024
#: A session that recorded nothing for this long may be evicted for a newcomer [s].
SESSION_IDLE_S = 5.0
#: Producer sessions whose last metadata is remembered to skip periodic republishes.
MAX_METADATA_SESSIONS = 64
_MAX_CHANNELS = 65_000  # MCAP channel ids are u16: the writer cannot finish a file with more
_WARN_INTERVAL_NS = 1_000_000_000  # at most one refused-sample log line per second


class _RefusedSample(RecordingError):
    """One sample cannot be recorded as received (bad timestamp, too many sessions): `poll()` and
    tracker observers count it and go on; a direct `write()` raises it."""


@dataclass
class RecorderCounters:
    """What an `McapRecorder` wrote and refused (`dataclasses.asdict()` for logs and JSON)."""

    written_data: int = 0  # data records written
    written_metadata: int = 0  # metadata records written
    metadata_repeats_skipped: int = 0  # periodic metadata republishes not written again
    unreadable_timestamp: int = 0  # written with the receive time as log time
    liveliness_events: int = 0  # producer sessions appearing/disappearing, seen by the recorder
    written_json: int = 0  # messages on auxiliary JSON channels
    written_flatbuffer: int = 0  # messages on auxiliary FlatBuffers / encoded channels
    refused_samples: int = 0  # not recordable as received (negative timestamp, too many sessions sending)
    sessions_evicted: int = 0  # idle producer sessions forgotten for a newcomer (their records kept)


class McapRecorder:
    """Record tactile collections into `path` (an MCAP file).

    `clock_ns` (an attribute, replaceable): the clock of the sessions' idle times [ns].

    `file_metadata`: extra string pairs for the file-level metadata record `wuji_tactile_device`
    (e.g. `{"producer_kind": "sim", "hand_side": "right"}`); the package version and the UTC start
    time are always written. `flush_period_s` [s]: what a crash can lose, in the records' log time
(and in wall time for a stream slower than real time).
    `profile`: "default" (zstd unless `compression` says otherwise) or "isaac" (uncompressed,
    header profile `teleop`, Isaac Teleop's hand schema bytes; `recording.profiles`).
    `fsync=True` also asks the OS to put each flushed chunk on disk (survives power loss).
    `log_time_base`: "epoch" (default): log / publish time = a record's available / sample time
    + `log_time_offset_ns` (realtime − monotonic, sampled once at the start), i.e. UTC-epoch ns
    that line up with other recordings of this machine; "monotonic": the record's times as they
    are (the files before log times moved to the epoch). The records themselves
    (`DeviceDataTimestamp`) are never changed. Times given to the auxiliary channels are on the
    records' time line and shifted alike.
    """

    clock_ns = staticmethod(time.monotonic_ns)

    def __init__(self, path: str | os.PathLike, *, file_metadata: dict[str, str] | None = None,
                 overwrite: bool = False, flush_period_s: float = 0.5, chunk_size: int = DEFAULT_CHUNK_SIZE,
                 compression: str | None = None, fsync: bool = False, profile: str = profiles.DEFAULT_PROFILE,
                 log_time_base: str = "epoch"):
        self.path = Path(path)
        #: "default" or "isaac" (`recording.profiles`): the isaac profile is uncompressed, its MCAP
        #: header profile is `teleop`, and its hand channels carry Isaac Teleop's exact schema bytes.
        self.profile = profiles.check_profile(profile)
        if compression is None:
            compression = profiles.ISAAC_COMPRESSION if profile == "isaac" else "zstd"
        if profile == "isaac" and compression != profiles.ISAAC_COMPRESSION:
            raise RecordingError(f"recording {self.path}: the isaac profile is uncompressed (Isaac Teleop's replay "
                                 f"reads no {compression} chunks); drop the compression or use the default profile")
        if log_time_base not in LOG_TIME_BASES:
            raise ValueError(f"log_time_base must be one of {', '.join(LOG_TIME_BASES)}, got {log_time_base!r}")
        if compression not in _COMPRESSION:
            raise ValueError(f"compression {compression!r} is not one of {', '.join(_COMPRESSION)}")
        if not flush_period_s > 0:
            raise ValueError(f"flush_period_s must be > 0 s, got {flush_period_s}")
        anchor = sample_clock_anchor()
        #: Added to every record's available / sample time to make its log / publish time [ns]:
        #: realtime − monotonic at the start (log times on the UTC epoch), or 0 (`log_time_base="monotonic"`).
        self.log_time_offset_ns = anchor.offset_ns if log_time_base == "epoch" else 0
        self.log_time_base = log_time_base
        meta = {"package": "wuji_tactile_device", "package_version": __version__,
                "recording_started_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
                "clock": (LOG_CLOCK_EPOCH if log_time_base == "epoch" else LOG_CLOCK_MONOTONIC),
                LOG_TIME_BASE_KEY: log_time_base, LOG_TIME_OFFSET_KEY: str(self.log_time_offset_ns)}
        for k, v in (file_metadata or {}).items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise TypeError(f"file_metadata must map str to str, got {k!r}: {v!r}")
            if k in (LOG_TIME_BASE_KEY, LOG_TIME_OFFSET_KEY):
                raise ValueError(f"file_metadata key {k!r} is the recorder's own (choose log_time_base instead)")
            meta[k] = v
        # created exclusively (never through a planted link), locked while recording (`safe_files`)
        self._file = open_recording(self.path, overwrite)
        try:
            self._writer = Writer(self._file, chunk_size=chunk_size, compression=_COMPRESSION[compression])
            self._writer.start(profile=profiles.ISAAC_HEADER_PROFILE if profile == "isaac" else naming.PROFILE, library=f"wuji_tactile_device {__version__} (mcap {mcap.__version__})")
            self._schema_ids = {
                Stream.DATA: self._writer.register_schema(DATA_RECORD_SCHEMA_NAME, naming.SCHEMA_ENCODING, bfbs(RECORD_ROOT[Stream.DATA])),
                Stream.METADATA: self._writer.register_schema(METADATA_RECORD_SCHEMA_NAME, naming.SCHEMA_ENCODING,
                                                              bfbs(RECORD_ROOT[Stream.METADATA])),
            }
            self._writer.add_metadata(naming.FILE_METADATA_NAME, meta)
            self._last_anchor_ns = self._write_clock_anchor(anchor)
            self._file.flush()
        except OSError as exc:
            try:
                self._file.close()
            except OSError:
                pass  # closing flushes the same unwritable buffer; the first error is the one to report
            raise RecordingError(f"cannot write to {self.path}: {exc.strerror or exc}") from exc
        self._fsync = fsync
        self._flush_period_ns = int(flush_period_s * 1e9)
        self._last_flush = time.monotonic_ns()
        self._pending = 0  # messages written since the last flush
        # the data-time flush, per channel (each producer session and auxiliary topic keeps its own
        # time line: two machines' clocks differ by hours): channel -> [flush generation, its last
        # record's log time, the window's earliest, latest log time] [ns]. The window holds the
        # channel's last flushed record and every one written since; a flush starts a generation.
        self._windows: dict[int, list[int]] = {}
        self._flush_generation = 0
        self._channels: dict[tuple[str, Stream, int], int] = {}
        self._contract_topics: set[str] = set()
        self._json_channels: dict[str, int] = {}  # auxiliary topic -> channel id
        self._json_topics: dict[int, str] = {}  # channel id -> auxiliary topic
        self._flatbuffer_channels: set[int] = set()  # auxiliary channels of add_flatbuffer_channel
        self._aux_schemas: dict[tuple[str, str, bytes], int] = {}  # (name, encoding, data) -> schema id
        # (collection, session) -> (payload digest, decoded layout or None), least recently used first
        self._last_metadata: OrderedDict[tuple[str, int], tuple[bytes, Any]] = OrderedDict()
        # collection -> (sessions that sent no data yet, sessions that did), each producer
        # session -> its last record's time on `clock_ns`, least recently active first
        self._sessions: dict[str, tuple[OrderedDict[int, int], OrderedDict[int, int]]] = {}
        self._warned_eviction = False
        self._warned_sessions: set[tuple[str, int]] = set()
        self._last_warning = 0
        self._subscriptions: list[Subscription] = []
        self._collections: set[str] = set()
        self._warned_unreadable: set[str] = set()
        self._closed = False
        #: written_data, written_metadata, metadata_repeats_skipped (periodic republishes),
        #: unreadable_timestamp (written with the receive time as log time), liveliness_events,
        #: written_json (messages on auxiliary channels), refused_samples (not recordable as received:
        #: negative timestamp, too many producer sessions sending at once), sessions_evicted (idle
        #: producer sessions forgotten for a newcomer, see `MAX_SESSIONS_PER_COLLECTION`).
        self.counters = RecorderCounters()
        self._channel_count = 0  # contract channels registered in the file (evicted ones included)

    # -- sources -------------------------------------------------------------------------------
    def add_collection(self, transport: Transport, collection_id: str) -> None:
        """Record both streams of `collection_id` as they arrive on `transport` (unvalidated,
        exactly as on the wire: replay then meets the tracker exactly as live). Call `poll()`."""
        self._check_open()
        validate_collection_id(collection_id)
        if collection_id in self._collections:
            raise RecordingError(f"recording {self.path}: collection {collection_id!r} is already being recorded")
        for topic in (stream_key(collection_id, Stream.DATA), stream_key(collection_id, Stream.METADATA)):
            if topic in self._json_channels:
                raise RecordingError(f"recording {self.path}: collection {collection_id!r} would write topic "
                                     f"{topic!r}, already an auxiliary JSON channel")
        self._collections.add(collection_id)
        self._subscriptions.append(transport.subscribe(collection_id))

    def attach(self, tracker: Any) -> None:
        """Record what `tracker` adopts and delivers (validated metadata once per producer
        session, every delivered frame); writes happen inside `tracker.update()`."""
        self._check_open()
        tracker.add_observer(_TrackerTap(self))

    def add_json_channel(self, topic: str, schema: dict, *, schema_name: str | None = None,
                         metadata: dict[str, str] | None = None) -> int:
        """Open an auxiliary (non-contract) channel: JSON messages (encoding `json`) described by
        the JSON Schema `schema` (encoding `jsonschema`; Foxglove decodes and plots these).
        `schema_name` defaults to the schema's `title`; `metadata`: str pairs stored on the
        channel (e.g. frames and units). Returns the channel handle for `write_json`. A topic
        already used by this recorder (auxiliary or contract) is refused."""
        self._check_open()
        if not isinstance(topic, str) or not topic:
            raise (ValueError if isinstance(topic, str) else TypeError)(
                f"recording {self.path}: auxiliary topic must be a non-empty str, got {topic!r}")
        json_channel.check_schema(schema, topic=topic)
        name = schema_name if schema_name is not None else schema.get("title")
        if not isinstance(name, str) or not name:
            raise ValueError(f"recording {self.path}: topic {topic!r} needs a schema name "
                                 "(schema_name=... or a 'title' in the schema)")
        taken = topic in self._json_channels or topic in self._contract_topics or any(
            topic in (stream_key(c, Stream.DATA), stream_key(c, Stream.METADATA)) for c in self._collections)
        if taken:
            raise RecordingError(f"recording {self.path}: topic {topic!r} is already recorded")
        for k, v in (metadata or {}).items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise TypeError(f"topic {topic!r}: channel metadata must map str to str, got {k!r}: {v!r}")
        try:
            schema_id = self._writer.register_schema(name, json_channel.SCHEMA_ENCODING,
                                                     json_channel.encode(schema, topic=topic))
            channel = self._writer.register_channel(topic, json_channel.MESSAGE_ENCODING, schema_id,
                                                    dict(metadata or {}))
        except OSError as exc:
            raise RecordingError(f"cannot write to {self.path}: {exc.strerror or exc}") from exc
        self._json_channels[topic] = channel
        self._json_topics[channel] = topic
        return channel

    def write_json(self, channel: int | str, message: Any, *, log_time_ns: int, publish_time_ns: int,
                   sequence: int = 0) -> None:
        """Write one JSON message on an auxiliary channel (its handle or topic). Times in ns
        (same clock as the contract topics); flushes when the flush period has elapsed, like
        `poll()`. NaN/infinity and non-JSON values raise RecordingError (nothing is written)."""
        self._check_open()
        topic: str | None
        if isinstance(channel, str):
            topic, channel_id = channel, self._json_channels.get(channel)
        else:
            topic = self._json_topics.get(channel)
            channel_id = channel if topic is not None else None
        if channel_id is None or topic is None or channel_id in self._flatbuffer_channels:
            raise ValueError(f"recording {self.path}: {channel!r} is not an auxiliary channel of this recorder "
                                 f"(open it with add_json_channel; open: {', '.join(self._json_channels) or 'none'})")
        self._write_auxiliary(channel_id, topic, json_channel.encode(message, topic=topic), log_time_ns,
                              publish_time_ns, sequence, "written_json")

    def add_flatbuffer_channel(self, topic: str, schema_name: str, schema_bfbs: bytes, *,
                               metadata: dict[str, str] | None = None) -> int:
        """Open a non-contract FlatBuffers channel (encoding `flatbuffer`, its .bfbs as schema),
        e.g. Isaac Teleop's hand pose channels (`recording.hand_channels`). Returns the channel
        handle for `write_flatbuffer`. A topic already used by this recorder is refused."""
        return self.add_encoded_channel(topic, schema_name, naming.SCHEMA_ENCODING, schema_bfbs,
                                        naming.MESSAGE_ENCODING, metadata=metadata)

    def add_encoded_channel(self, topic: str, schema_name: str, schema_encoding: str, schema_data: bytes,
                            message_encoding: str, *, metadata: dict[str, str] | None = None) -> int:
        """Open a non-contract channel for messages encoded elsewhere, in any MCAP encoding (e.g.
        Foxglove's protobuf scene messages: schema encoding and message encoding `protobuf`).
        Returns the handle for `write_flatbuffer` (which writes any such already-encoded
        message). A topic already used by this recorder is refused."""
        self._check_open()
        if not isinstance(topic, str) or not topic:
            raise (ValueError if isinstance(topic, str) else TypeError)(
                f"recording {self.path}: auxiliary topic must be a non-empty str, got {topic!r}")
        taken = topic in self._json_channels or topic in self._contract_topics or any(
            topic in (stream_key(c, Stream.DATA), stream_key(c, Stream.METADATA)) for c in self._collections)
        if taken:
            raise RecordingError(f"recording {self.path}: topic {topic!r} is already recorded")
        try:
            key = (schema_name, schema_encoding, bytes(schema_data))
            schema_id = self._aux_schemas.get(key)  # one schema record for channels that share it (both hands)
            if schema_id is None:
                schema_id = self._aux_schemas[key] = self._writer.register_schema(schema_name, schema_encoding,
                                                                                  schema_data)
            channel = self._writer.register_channel(topic, message_encoding, schema_id, dict(metadata or {}))
        except OSError as exc:
            raise RecordingError(f"cannot write to {self.path}: {exc.strerror or exc}") from exc
        self._json_channels[topic] = channel  # one registry of auxiliary topics (JSON or FlatBuffers)
        self._json_topics[channel] = topic
        self._flatbuffer_channels.add(channel)
        return channel

    def write_flatbuffer(self, channel: int, payload: bytes, *, log_time_ns: int, publish_time_ns: int,
                         sequence: int = 0) -> None:
        """Write one already-encoded message on a channel from `add_flatbuffer_channel`. Times in
        ns; flushes when the flush period has elapsed, like `poll()`."""
        self._check_open()
        if channel not in self._flatbuffer_channels:
            raise ValueError(f"recording {self.path}: {channel!r} is not a FlatBuffers channel of this recorder "
                                 "(open it with add_flatbuffer_channel)")
        self._write_auxiliary(channel, self._json_topics[channel], payload, log_time_ns, publish_time_ns, sequence,
                              "written_flatbuffer")

    def _write_auxiliary(self, channel_id: int, topic: str, payload: bytes, log_time_ns: int, publish_time_ns: int,
                         sequence: int, counter: str) -> None:
        """One message on an auxiliary channel (JSON or FlatBuffers beside the contract topics)."""
        if log_time_ns < 0 or publish_time_ns < 0:
            raise RecordingError(f"topic {topic!r}: negative time ({log_time_ns}, {publish_time_ns}) "
                                 "cannot be an MCAP time")
        log_time_ns, publish_time_ns = log_time_ns + self.log_time_offset_ns, publish_time_ns + self.log_time_offset_ns
        try:
            self._writer.add_message(channel_id, log_time_ns, payload, publish_time_ns, sequence & naming.SEQUENCE_MASK)
        except OSError as exc:
            raise RecordingError(f"cannot write to {self.path}: {exc.strerror or exc}") from exc
        if counter == "written_json":
            self.counters.written_json += 1
        else:
            self.counters.written_flatbuffer += 1
        self._pending += 1
        self._flush_if_data_time_due(channel_id, log_time_ns)
        self.maybe_flush()

    @property
    def dropped_by_transport(self) -> int:
        """Events the subscriptions dropped: their queue was full (by count or bytes) because `poll()`
        was not called often enough, or a payload was over the subscription's size limit."""
        total = 0
        for sub in self._subscriptions:
            c = sub.counters
            total += c.overflowed + c.overflowed_bytes + c.oversize_dropped
        return total

    # -- writing -------------------------------------------------------------------------------
    def poll(self) -> int:
        """Write everything that arrived on the added collections; flush when due. Returns the
        number of messages written."""
        self._check_open()
        written = 0
        for sub in self._subscriptions:
            cid = sub.collection_id
            for ev in sub.drain():
                if isinstance(ev, Message):
                    try:
                        written += self.write(cid, ev.stream, ev.payload, ev.producer_session, ev.sequence,
                                              receive_time_ns=ev.receive_time_ns)
                    except _RefusedSample as exc:
                        self._refused(cid, ev.producer_session, exc)
                elif isinstance(ev, LivelinessChange):
                    self.counters.liveliness_events += 1
        self.maybe_flush()
        return written

    def write(self, collection_id: str, stream: Stream, payload: bytes, producer_session: int, sequence: int,
              *, receive_time_ns: int | None = None, times: tuple[int, int] | None = None) -> int:
        """Write one record; returns 1 if written, 0 for a metadata republish already in the file.

        Log/publish time come from the record's timestamp (available, sample time) unless `times`
        gives them; a record whose timestamp cannot be read is still written (replay must show
        the tracker what the wire carried) with `receive_time_ns` as both times, counted in
        `counters.unreadable_timestamp` and logged once per collection."""
        self._check_open()
        if stream is Stream.METADATA and self._is_repeat(collection_id, producer_session, payload):
            self.counters.metadata_repeats_skipped += 1
            return 0
        if times is None:
            try:
                times = peek_record_times(payload, stream)
            except InvalidMessageError as exc:
                if receive_time_ns is None:
                    raise
                times = (receive_time_ns, receive_time_ns)
                self.counters.unreadable_timestamp += 1
                if collection_id not in self._warned_unreadable:
                    self._warned_unreadable.add(collection_id)
                    log.warning("recording %s: a %s record has no readable timestamp (%s); written with the "
                                "receive time as log time, replay will show it to the tracker", collection_id,
                                stream.value, exc)
        log_time, publish_time = times[0] + self.log_time_offset_ns, times[1] + self.log_time_offset_ns
        ch = self._channels.get((collection_id, stream, producer_session))
        fresh, sending = self._sessions.get(collection_id) or self._sessions.setdefault(
            collection_id, (OrderedDict(), OrderedDict()))
        known = producer_session in fresh or producer_session in sending
        refusal = None
        if times[0] < 0 or times[1] < 0 or log_time < 0 or publish_time < 0:
            # judged on the record's own (monotonic) times: the epoch offset must not launder a
            # peer's negative timestamp into a valid-looking log time
            refusal = (f"{collection_id}: {stream.value} record with a negative timestamp "
                       f"({times[0]}, {times[1]}) cannot be an MCAP time")
        elif not 0 <= producer_session < 1 << 64:
            refusal = f"{collection_id}: producer session {producer_session} is not a u64"
        elif ch is None and self._channel_count + len(self._json_channels) >= _MAX_CHANNELS:
            refusal = f"{collection_id}: the file already holds {_MAX_CHANNELS} channels (MCAP channel ids are 16-bit)"
        elif not known and len(fresh) + len(sending) >= MAX_SESSIONS_PER_COLLECTION \
                and not self._evict_a_session(collection_id, fresh, sending):
            refusal = (f"{collection_id}: producer session {producer_session:016x} would be session "
                       f"{len(fresh) + len(sending) + 1} of this recording (at most {MAX_SESSIONS_PER_COLLECTION} "
                       f"at once, none idle for {SESSION_IDLE_S:g} s)")
        if refusal is not None:
            if stream is Stream.METADATA:  # not written: a later republish must not count as a repeat
                self._last_metadata.pop((collection_id, producer_session), None)
            raise _RefusedSample(refusal)
        now = self.clock_ns()
        if stream is Stream.DATA:
            fresh.pop(producer_session, None)
            sending[producer_session] = now
            sending.move_to_end(producer_session)
        elif producer_session in sending:
            sending[producer_session] = now
            sending.move_to_end(producer_session)
        else:
            fresh[producer_session] = now
            fresh.move_to_end(producer_session)
        if ch is None:
            topic = stream_key(collection_id, stream)
            if topic in self._json_channels:
                raise RecordingError(f"recording {self.path}: {collection_id} {stream.value} topic {topic!r} "
                                     "is already an auxiliary JSON channel")
            ch = self._writer.register_channel(
                topic, naming.MESSAGE_ENCODING, self._schema_ids[stream],
                {naming.SESSION_KEY: naming.session_hex(producer_session)})
            self._contract_topics.add(topic)
            self._channels[(collection_id, stream, producer_session)] = ch
            self._channel_count += 1
        try:
            self._writer.add_message(ch, log_time, payload, publish_time, sequence & naming.SEQUENCE_MASK)
        except OSError as exc:  # a full chunk is written here: disk full, I/O error
            raise RecordingError(f"cannot write to {self.path}: {exc.strerror or exc}") from exc
        if stream is Stream.METADATA:
            self.counters.written_metadata += 1
        else:
            self.counters.written_data += 1
        self._pending += 1
        self._flush_if_data_time_due(ch, log_time)
        return 1

    def _flush_if_data_time_due(self, channel: int, log_time_ns: int) -> None:
        """The data-time flush: flush once a channel's last flushed record and those written since
        span `flush_period_s` [s] of its log time, so what a kill can lose stays under
        `flush_period_s` of each channel's own time however fast the data is produced or however
        late it is polled. The window restarts at the last record flushed, so one record far off
        its channel's time line (a peer's far-future stamp) costs one extra flush, not one per record."""
        w = self._windows.get(channel)
        if w is None:  # the channel's first record: nothing before it to lose
            self._windows[channel] = [self._flush_generation, log_time_ns, log_time_ns, log_time_ns]
            return
        if w[0] != self._flush_generation:  # flushed since: the window restarts at its last record
            w[0], w[2], w[3] = self._flush_generation, w[1], w[1]
        w[1] = log_time_ns
        if log_time_ns < w[2]:
            w[2] = log_time_ns
        elif log_time_ns > w[3]:
            w[3] = log_time_ns
        if w[3] - w[2] >= self._flush_period_ns:
            self.flush()

    def _evict_a_session(self, collection_id: str, fresh: OrderedDict, sending: OrderedDict) -> bool:
        """Forget one kept session of `collection_id` for a newcomer: the least recently active
        that never sent data, else the least recently active idle for `SESSION_IDLE_S`. Its
        records stay in the file. False when every kept session is sending."""
        if fresh:
            victim, _ = fresh.popitem(last=False)
        else:
            victim, last = next(iter(sending.items()))
            idle_s = (self.clock_ns() - last) / 1e9
            if idle_s < SESSION_IDLE_S:
                return False
            del sending[victim]
        for stream in Stream:
            self._channels.pop((collection_id, stream, victim), None)
        self._last_metadata.pop((collection_id, victim), None)
        self.counters.sessions_evicted += 1
        if not self._warned_eviction:
            self._warned_eviction = True
            log.warning("recording %s: %s has more than %d producer sessions; evicted idle session %016x "
                        "(its records are kept; further evictions counted in counters.sessions_evicted)",
                        self.path, collection_id, MAX_SESSIONS_PER_COLLECTION, victim)
        return True

    def _is_repeat(self, collection_id: str, producer_session: int, payload: bytes) -> bool:
        """True if this session's last recorded metadata had the same bytes, or (a producer that
        re-stamps each republish) decodes to the same layout. Anything else is recorded: a changed
        or undecodable metadata must reach the replayed tracker as it reached the live one."""
        key = (collection_id, producer_session)
        digest = hashlib.blake2b(payload, digest_size=16).digest()
        last = self._last_metadata.get(key)
        if last is not None:
            self._last_metadata.move_to_end(key)
            if last[0] == digest:
                return True
        layout_now = None
        if len(payload) <= TRACKER_METADATA_MAX_SIZE:  # larger: no tracker adopts it; compare bytes only
            try:
                layout_now = decode_metadata_record(payload).metadata
            except TactileError:
                pass
        if last is not None and layout_now is not None and last[1] == layout_now:
            return True
        self._last_metadata[key] = (digest, layout_now)
        self._last_metadata.move_to_end(key)
        while len(self._last_metadata) > MAX_METADATA_SESSIONS:
            self._last_metadata.popitem(last=False)
        return False

    def _refused(self, collection_id: str, producer_session: int, exc: Exception) -> None:
        """Count a peer's sample that cannot be recorded; log it once per session, at most once a second."""
        self.counters.refused_samples += 1
        key = (collection_id, producer_session)
        now = time.monotonic_ns()
        if key in self._warned_sessions or now - self._last_warning < _WARN_INTERVAL_NS:
            return
        if len(self._warned_sessions) < MAX_SESSIONS_PER_COLLECTION:
            self._warned_sessions.add(key)
        self._last_warning = now
        log.warning("recording %s: refused a sample of producer session %016x (%s); recording goes on "
                    "(counted in counters.refused_samples, %d so far)", self.path, producer_session, exc,
                    self.counters.refused_samples)

    def maybe_flush(self) -> None:
        """Flush if the flush period has elapsed since the last flush; write a clock anchor when
        `ANCHOR_PERIOD_S` has elapsed since the last one."""
        now = time.monotonic_ns()
        if now - self._last_anchor_ns >= _ANCHOR_PERIOD_NS:
            try:
                self._last_anchor_ns = self._write_clock_anchor()
            except OSError as exc:
                raise RecordingError(f"cannot write to {self.path}: {exc.strerror or exc}") from exc
        if self._pending and now - self._last_flush >= self._flush_period_ns:
            self.flush()

    def _write_clock_anchor(self, anchor=None) -> int:
        """Write a clock anchor metadata record (`recording.clock_anchor`); return its monotonic time."""
        anchor = anchor or sample_clock_anchor()
        self._writer.add_metadata(CLOCK_ANCHOR_METADATA_NAME, anchor_metadata(anchor))
        return anchor.monotonic_ns

    def flush(self) -> None:
        """Close the open chunk and hand it to the OS (and to the disk with `fsync=True`)."""
        self._check_open()
        try:
            self._writer.flush()
            if self._fsync:
                os.fsync(self._file.fileno())
        except OSError as exc:
            raise RecordingError(f"cannot write to {self.path}: {exc.strerror or exc}") from exc
        self._pending = 0
        self._last_flush = time.monotonic_ns()
        self._flush_generation += 1

    def close(self) -> None:
        """Write the summary and close the file (a complete, indexed MCAP). Idempotent."""
        if self._closed:
            return
        self._closed = True
        for sub in self._subscriptions:
            sub.close()
        error = None
        try:
            self._write_clock_anchor()  # brackets the end, for long recordings with a slewing clock
            self._writer.finish()
            self._file.flush()
            if self._fsync:
                os.fsync(self._file.fileno())
        except OSError as exc:
            error = exc
        replaced = False
        try:
            st, now = os.fstat(self._file.fileno()), os.stat(self.path)
            replaced = (st.st_dev, st.st_ino) != (now.st_dev, now.st_ino)
        except OSError:
            replaced = True
        try:
            self._file.close()  # flushes what the failed write left buffered: fails the same way
        except OSError as exc:
            error = error or exc
        if replaced and error is None:
            raise RecordingError(f"{self.path} was removed or replaced by another process while this recording "
                                 "was written; this recording is not in it")
        if error is not None:
            raise RecordingError(f"cannot finish {self.path}: {error.strerror or error} "
                                 "(the chunks written so far are recoverable: `wuji-tactile recover`)") from None
        if self.dropped_by_transport:
            log.warning("recording %s: the transport dropped %d events because poll() was not called often enough",
                        self.path, self.dropped_by_transport)

    def _check_open(self) -> None:
        if self._closed:
            raise RecordingError(f"recorder for {self.path} is closed")

    def __enter__(self) -> McapRecorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _TrackerTap:
    """Tracker observer that writes what the tracker adopted and delivered."""

    def __init__(self, recorder: McapRecorder):
        self._rec = recorder

    def on_metadata(self, collection_id: str, message: Message, record: Any) -> None:
        self._write(collection_id, Stream.METADATA, message, record.timestamp)

    def on_data(self, collection_id: str, message: Message, frame: Any) -> None:
        self._write(collection_id, Stream.DATA, message, frame.timestamp)

    def _write(self, collection_id: str, stream: Stream, message: Message, ts: Any) -> None:
        try:
            self._rec.write(collection_id, stream, message.payload, message.producer_session, message.sequence,
                            times=(ts.available_time_local_common_clock, ts.sample_time_local_common_clock))
        except _RefusedSample as exc:
            self._rec._refused(collection_id, message.producer_session, exc)
        self._rec.maybe_flush()
