"""Reading MCAP files that may be damaged or hostile: a record-by-record scan that survives
truncation and damaged framing, and chunk decoding bounded in memory and work.

Why not the `mcap` package's readers: its seeking reader needs the summary at the end of the file
(a killed recorder leaves none), its stream reader stops with an exception at the first damaged
byte, and both decompress a chunk to whatever its compressed stream produces, whatever size the
chunk header announced. So this module parses the MCAP record framing itself, following the
public MCAP specification (https://mcap.dev/spec): `<opcode u8><length u64><body>` records
between two magic strings; every length is checked against the bytes that remain before it is
used, and no allocation is sized by a number read from the file except a chunk's declared
uncompressed size, which is capped. Writing uses the `mcap` package's public `Writer`.

Bounds (see docs/reliability.md):
- a chunk announcing more than `CHUNK_MAX_UNCOMPRESSED` bytes is refused; a chunk is
  decompressed with a hard output cap equal to its announced size, and refused when its stream
  holds more (a decompression bomb) or less;
- one pass over a file decompresses at most `max(FILE_MIN_BUDGET, FILE_BUDGET_RATIO × chunk bytes)`
  bytes and walks at most `max(FILE_MIN_RECORDS, chunk bytes // FILE_BYTES_PER_RECORD)` records
  inside chunks, where chunk bytes is the size of the file's chunk records (`Scan.chunk_bytes`):
  padding a bomb with other records (an attachment of noise) does not raise it; beyond,
  `ReadLimitError`;
- a record whose framing is damaged (a length running past the end of the file, a chunk header
  that does not add up) is skipped by searching forward for the next self-consistent chunk
  record; what was skipped is listed in `Scan.damage`.

A chunk cut off by a crash still yields the complete records in the prefix its compressed stream
decodes to (`read_partial_chunk`; zstd and lz4 decode block by block), without a CRC check (the
CRC covers the whole chunk): each payload is still verified by the contract's decoder.
"""
from __future__ import annotations

import io
import mmap
import os
import stat
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable, Iterator
from typing import NamedTuple

import lz4.frame
import zstandard

from ..errors import CorruptChunkError, ReadLimitError, RecordingError

MAGIC = b"\x89MCAP0\r\n"

# Opcodes of the MCAP specification.
OP_HEADER, OP_FOOTER, OP_SCHEMA, OP_CHANNEL, OP_MESSAGE, OP_CHUNK, OP_MESSAGE_INDEX = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07
OP_ATTACHMENT, OP_METADATA, OP_DATA_END = 0x09, 0x0C, 0x0F
_NAMES = {OP_HEADER: "header", OP_FOOTER: "footer", OP_SCHEMA: "schema", OP_CHANNEL: "channel", OP_MESSAGE: "message",
          OP_CHUNK: "chunk", OP_MESSAGE_INDEX: "message index", 0x08: "chunk index", OP_ATTACHMENT: "attachment",
          0x0A: "attachment index", 0x0B: "statistics", OP_METADATA: "metadata", 0x0D: "metadata index",
          0x0E: "summary offset", OP_DATA_END: "data end"}

_REC = struct.Struct("<BQ")  # opcode, record length
_MSG = struct.Struct("<HIQQ")  # channel id, sequence, log time, publish time
_CHUNK_HEAD = struct.Struct("<QQQI")  # start, end, uncompressed size, crc
_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_MSG_INDEX_HEAD = struct.Struct("<HI")  # channel id, records length in bytes

#: Largest uncompressed size a chunk may announce [bytes]. This package writes chunks of at most
#: 256 KiB (+ one message); other writers use 1–8 MiB. One chunk is in memory at a time.
CHUNK_MAX_UNCOMPRESSED = 32 << 20
#: Per pass over a file: decompressed bytes at most max(FILE_MIN_BUDGET, FILE_BUDGET_RATIO × the
#: bytes of its chunk records). Tactile recordings compress about 12:1 (a 13 s simulated press: 2.9 MB in 240 kB).
FILE_MIN_BUDGET = 64 << 20
FILE_BUDGET_RATIO = 256
#: Per pass: records inside chunks at most max(FILE_MIN_RECORDS, chunk bytes // FILE_BYTES_PER_RECORD).
#: A recorded tactile message costs ~180 compressed bytes (its timestamps alone do not compress).
FILE_MIN_RECORDS = 200_000
FILE_BYTES_PER_RECORD = 8
#: File-level metadata records kept (this package writes 2 plus a clock anchor a minute: 16,384 is
#: 11 days of recording); further ones are counted, not kept.
MAX_METADATA_RECORDS = 16_384
MAX_LISTED = 100  # damaged records described per file (all are counted)


class Header(NamedTuple):
    profile: str
    library: str


class Schema(NamedTuple):
    id: int
    name: str
    encoding: str
    data: bytes


class Channel(NamedTuple):
    id: int
    schema_id: int
    topic: str
    message_encoding: str
    metadata: dict[str, str]


class Metadata(NamedTuple):
    name: str
    metadata: dict[str, str]


class RawMessage(NamedTuple):
    """One message as stored: times in ns, payload bytes unverified."""

    channel_id: int
    sequence: int
    log_time: int
    publish_time: int
    data: bytes


class _Malformed(Exception):
    """A record body does not hold what its opcode requires (internal; callers get RecordingError)."""


class _Body:
    """Bounds-checked reader of one record body: each field is checked against the body's end."""

    __slots__ = ("buf", "pos", "end")

    def __init__(self, buf, pos: int, end: int):
        self.buf, self.pos, self.end = buf, pos, end

    def _take(self, n: int, what: str) -> int:
        p = self.pos
        if n > self.end - p:
            raise _Malformed(f"{what} needs {n} bytes, {self.end - p} remain")
        self.pos = p + n
        return p

    def u16(self, what: str) -> int:
        return _U16.unpack_from(self.buf, self._take(2, what))[0]

    def u32(self, what: str) -> int:
        return _U32.unpack_from(self.buf, self._take(4, what))[0]

    def u64(self, what: str) -> int:
        return _U64.unpack_from(self.buf, self._take(8, what))[0]

    def raw(self, n: int, what: str) -> bytes:
        p = self._take(n, what)
        return bytes(self.buf[p : p + n])

    def string(self, what: str) -> str:
        try:
            return self.raw(self.u32(what), what).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _Malformed(f"{what} is not UTF-8 ({exc.reason} at byte {exc.start})") from None

    def string_map(self, what: str) -> dict[str, str]:
        n = self.u32(what)
        sub = _Body(self.buf, self._take(n, what), self.pos)
        out: dict[str, str] = {}
        while sub.pos < sub.end:
            key = sub.string(f"{what} key")
            out[key] = sub.string(f"{what} value")
        return out


def _parse_header(b: _Body) -> Header:
    return Header(b.string("profile"), b.string("library"))


def _parse_schema(b: _Body) -> Schema:
    sid, name, enc = b.u16("schema id"), b.string("schema name"), b.string("schema encoding")
    return Schema(sid, name, enc, b.raw(b.u32("schema data"), "schema data"))


def _parse_channel(b: _Body) -> Channel:
    return Channel(b.u16("channel id"), b.u16("schema id"), b.string("topic"), b.string("message encoding"),
                   b.string_map("channel metadata"))


def _parse_metadata(b: _Body) -> Metadata:
    return Metadata(b.string("metadata name"), b.string_map("metadata"))


_PARSERS = {OP_HEADER: _parse_header, OP_SCHEMA: _parse_schema, OP_CHANNEL: _parse_channel, OP_METADATA: _parse_metadata}


@dataclass
class ChunkRef:
    """Where a chunk record lies in the file and what its header announces."""

    index: int  # position among the file's chunks
    offset: int  # file offset of the record's opcode byte
    end: int  # file offset just past the record (for a cut-off chunk: the end of the file)
    start_ns: int
    end_ns: int
    uncompressed_size: int
    crc: int  # 0 = no CRC written
    compression: str
    data_start: int
    data_len: int  # compressed bytes present (for a cut-off chunk: those before the cut)
    channel_counts: dict[int, int] = field(default_factory=dict)  # from message index records; {} = none
    cut_off: bool = False

    def describe(self) -> str:
        return (f"{'cut-off ' if self.cut_off else ''}chunk {self.index} at byte {self.offset} (log time "
                f"{self.start_ns} .. {self.end_ns} ns, {(self.end_ns - self.start_ns) / 1e9:.3f} s)")


@dataclass
class Truncation:
    """Where a damaged file stops being readable and what is known of the rest."""

    valid_until: int  # file offset just past the last complete record
    file_size: int
    reason: str
    partial_chunk_range: tuple[int, int] | None  # log-time range announced by a cut-off chunk
    partial_chunk: ChunkRef | None = None  # the cut-off chunk, when its header survived

    @property
    def bytes_lost(self) -> int:
        return self.file_size - self.valid_until

    def cut_off_chunk(self) -> str:
        """'a cut-off chunk with log time a .. b ns (x s)', or '' when no chunk header survived."""
        if self.partial_chunk_range is None:
            return ""
        a, b = self.partial_chunk_range
        return f"a cut-off chunk with log time {a} .. {b} ns ({(b - a) / 1e9:.3f} s)"


@dataclass
class Scan:
    """Everything the top-level records of a file say, without decompressing chunks."""

    path: Path
    size: int
    profile: str = ""
    library: str = ""
    schemas: dict[int, Schema] = field(default_factory=dict)  # top level (summary) only
    channels: dict[int, Channel] = field(default_factory=dict)  # top level (summary) only
    chunks: list[ChunkRef] = field(default_factory=list)
    metadata: list[Metadata] = field(default_factory=list)
    attachments: int = 0
    loose_messages: int = 0  # messages outside chunks (not written by this package)
    has_summary: bool = False  # a data-end record was reached (file finished by its writer)
    complete: bool = False  # footer and closing magic present
    truncation: Truncation | None = None
    damage: list[str] = field(default_factory=list)  # damaged records skipped (first MAX_LISTED; offsets, what was lost)
    damage_count: int = 0  # all of them
    metadata_ignored: int = 0  # metadata records beyond MAX_METADATA_RECORDS

    @property
    def chunk_bytes(self) -> int:
        """Bytes of the file's chunk records (with a cut-off chunk's part): what the work bound of
        one pass is proportional to (`ReadBudget`)."""
        n = sum(c.end - c.offset for c in self.chunks)
        partial = self.truncation.partial_chunk if self.truncation is not None else None
        return n + (partial.end - partial.offset if partial is not None else 0)

    def damaged(self, text: str) -> None:
        self.damage_count += 1
        if len(self.damage) < MAX_LISTED:
            self.damage.append(text)


class FileView:
    """Read-only bytes of a file (memory-mapped; empty files become b"")."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        try:
            if not stat.S_ISREG(os.stat(self.path).st_mode):  # before open(): a FIFO would block it
                raise RecordingError(f"{self.path} is not a regular file (a directory, FIFO or device is not a "
                                     "recording)")
            self._file = open(self.path, "rb")
        except OSError as exc:
            raise RecordingError(f"cannot open {self.path}: {exc.strerror}") from exc
        try:
            size = os.fstat(self._file.fileno()).st_size
            self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ) if size else None
        except BaseException:
            self._file.close()
            raise
        self.buf: bytes | mmap.mmap = self._map if self._map is not None else b""

    def release(self, start: int, length: int) -> None:
        """Tell the OS this process is done with bytes [start, start + length) of the mapping, so
        reading a large file does not keep it resident (file pages count in the process's RSS)."""
        if self._map is None or length <= 0 or not hasattr(mmap, "MADV_DONTNEED"):
            return
        first = start - start % mmap.PAGESIZE
        end = min(start + length, len(self._map))
        last = end - end % mmap.PAGESIZE  # whole pages only: a page shared with the next record stays
        if last > first:
            self._map.madvise(mmap.MADV_DONTNEED, first, last - first)

    def close(self) -> None:
        if self._map is not None:
            self._map.close()
            self._map = None
        self.buf = b""
        self._file.close()


class ReadBudget:
    """The work one pass over a file may do (module doc): decompressed bytes and chunk records,
    proportional to `chunk_bytes` (`Scan.chunk_bytes`: the bytes of its chunk records)."""

    def __init__(self, chunk_bytes: int, path: Path):
        self.path = path
        self.bytes_left = max(FILE_MIN_BUDGET, FILE_BUDGET_RATIO * chunk_bytes)
        self.records_left = max(FILE_MIN_RECORDS, chunk_bytes // FILE_BYTES_PER_RECORD)
        self._bytes_total, self._records_total = self.bytes_left, self.records_left

    def charge_bytes(self, n: int, chunk: ChunkRef) -> None:
        if n > self.bytes_left:
            raise ReadLimitError(
                f"{self.path}: {chunk.describe()} would bring the bytes decompressed from this file past its limit "
                f"of {self._bytes_total} (max({FILE_MIN_BUDGET >> 20} MiB, {FILE_BUDGET_RATIO} x its chunk bytes)); "
                "a decompression bomb, not a recording")
        self.bytes_left -= n

    def record_limit_error(self, chunk: ChunkRef) -> ReadLimitError:
        return ReadLimitError(
            f"{self.path}: {chunk.describe()} brings the records read from this file past its limit of "
            f"{self._records_total} (max({FILE_MIN_RECORDS}, chunk bytes / {FILE_BYTES_PER_RECORD} B)); "
            "a file of tiny records, not a recording")


def _record_name(opcode: int) -> str:
    return _NAMES.get(opcode, f"opcode 0x{opcode:02x}")


def scan(view: FileView) -> Scan:
    """Walk the top-level records of `view`. Raises RecordingError when the file is not MCAP;
    skips damaged records (listed in `Scan.damage`) and describes a cut in `Scan.truncation`."""
    buf, path = view.buf, view.path
    size = len(buf)
    if size < len(MAGIC) or bytes(buf[: len(MAGIC)]) != MAGIC:
        head = bytes(buf[:8])
        raise RecordingError(f"{path} is not an MCAP file (it starts with {head!r}, not the MCAP magic {MAGIC!r})")
    out = Scan(path=path, size=size)
    pos = len(MAGIC)
    last_chunk: ChunkRef | None = None
    while True:
        if pos == size:
            out.truncation = Truncation(pos, size, "the file ends without a footer", None)
            break
        if pos + _REC.size > size:
            out.truncation = Truncation(pos, size, f"a record header is cut off at byte {pos}", None)
            break
        opcode, length = _REC.unpack_from(buf, pos)
        body, end = pos + _REC.size, pos + _REC.size + length
        chunk = None
        if opcode == OP_CHUNK and end <= size:
            chunk = _chunk_ref(buf, body, end, pos, len(out.chunks))
        if end > size or (opcode == OP_CHUNK and chunk is None):
            # a chunk header that does not add up: skip the record; a length past the end of the file:
            # a cut, or damaged framing with intact chunks after it
            resume = end if end <= size else _find_chunk(buf, pos + 1, size)
            if resume is not None:
                resume = _resync(buf, pos + 1, resume)  # intact records before the chunk are kept
                last_chunk = None
                out.damaged(f"bytes {pos} .. {resume} are unreadable (a {_record_name(opcode)} record at byte "
                                  f"{pos} whose length or header does not add up); reading resumed at byte {resume}")
                pos = resume
                continue
            partial = None
            if opcode == OP_CHUNK and body + 16 <= size:
                partial = _cut_chunk_ref(buf, body, size, pos, len(out.chunks))
            out.truncation = Truncation(
                pos, size, f"a {_record_name(opcode)} record at byte {pos} announces {length} bytes but only "
                           f"{size - body} follow", None if partial is None else (partial.start_ns, partial.end_ns),
                partial if partial is not None and partial.data_len > 0 else None)
            break
        if opcode != OP_MESSAGE_INDEX:
            last_chunk = None  # the previous chunk's message indexes are all there
        if chunk is not None:
            last_chunk = chunk
            out.chunks.append(chunk)
        elif opcode == OP_MESSAGE_INDEX:
            if last_chunk is not None and body + 6 <= end:
                channel_id, nbytes = _MSG_INDEX_HEAD.unpack_from(buf, body)
                if nbytes <= end - body - 6 and nbytes % 16 == 0:
                    last_chunk.channel_counts[channel_id] = nbytes // 16
                else:
                    out.damaged(f"the message index record at byte {pos} is malformed "
                                      f"({nbytes} bytes of entries in a {length}-byte record)")
        elif opcode in _PARSERS:
            try:  # each record type by its own parser (parsing and storing cannot fail apart)
                record_body = _Body(buf, body, end)
                if opcode == OP_HEADER:
                    parsed_header = _parse_header(record_body)
                    out.profile, out.library = parsed_header.profile, parsed_header.library
                elif opcode == OP_SCHEMA:
                    parsed_schema = _parse_schema(record_body)
                    out.schemas[parsed_schema.id] = parsed_schema
                elif opcode == OP_CHANNEL:
                    parsed_channel = _parse_channel(record_body)
                    out.channels[parsed_channel.id] = parsed_channel
                else:
                    parsed_metadata = _parse_metadata(record_body)
                    if len(out.metadata) < MAX_METADATA_RECORDS:
                        out.metadata.append(parsed_metadata)
                    else:
                        out.metadata_ignored += 1
            except (_Malformed, struct.error) as exc:
                out.damaged(f"the {_record_name(opcode)} record at byte {pos} is malformed ({exc}); skipped")
        elif opcode == OP_ATTACHMENT:
            out.attachments += 1
        elif opcode == OP_MESSAGE:
            out.loose_messages += 1
        elif opcode == OP_DATA_END:
            out.has_summary = True
        elif opcode == OP_FOOTER:
            if bytes(buf[end : end + len(MAGIC)]) == MAGIC:
                out.complete = True
            else:
                out.truncation = Truncation(end, size, "the closing magic after the footer is missing or damaged", None)
            break
        pos = end
    if last_chunk is not None and out.truncation is not None and not out.has_summary:
        last_chunk.channel_counts = {}  # its message indexes may be cut off: counts unknown
    return out


def _chunk_ref(buf, body: int, end: int, pos: int, index: int) -> ChunkRef | None:
    """The chunk whose record spans [pos, end), or None when its header does not add up."""
    if body + _CHUNK_HEAD.size + 4 > end:
        return None
    start_ns, end_ns, usize, crc = _CHUNK_HEAD.unpack_from(buf, body)
    p = body + _CHUNK_HEAD.size
    clen = _U32.unpack_from(buf, p)[0]
    p += 4
    if clen > end - p - 8:
        return None
    try:
        compression = bytes(buf[p : p + clen]).decode("utf-8")
    except UnicodeDecodeError:
        return None
    p += clen
    dlen = _U64.unpack_from(buf, p)[0]
    p += 8
    if dlen != end - p:  # the records fill the rest of the chunk record exactly
        return None
    return ChunkRef(index, pos, end, start_ns, end_ns, usize, crc, compression, p, dlen)


def _cut_chunk_ref(buf, body: int, size: int, pos: int, index: int) -> ChunkRef:
    """What survives of a chunk record cut by the end of the file (data_len = bytes present)."""
    start_ns, end_ns = struct.unpack_from("<QQ", buf, body)
    ref = ChunkRef(index, pos, size, start_ns, end_ns, 0, 0, "", size, 0, cut_off=True)
    if body + _CHUNK_HEAD.size + 4 > size:
        return ref
    _, _, ref.uncompressed_size, ref.crc = _CHUNK_HEAD.unpack_from(buf, body)
    p = body + _CHUNK_HEAD.size
    clen = _U32.unpack_from(buf, p)[0]
    p += 4
    if clen > 16 or p + clen + 8 > size:
        return ref
    ref.compression = bytes(buf[p : p + clen]).decode("utf-8", "replace")
    ref.data_start = p + clen + 8
    ref.data_len = size - ref.data_start
    return ref


_RESYNC_KEYS = (_U32.pack(4) + b"zstd", _U32.pack(3) + b"lz4")
_CHUNK_FIXED = _REC.size + _CHUNK_HEAD.size  # opcode, length, start, end, uncompressed size, crc


#: Top-level opcodes a resynchronisation may land on (not message: this package never writes loose ones).
_RESYNC_OPCODES = frozenset({OP_HEADER, OP_SCHEMA, OP_CHANNEL, OP_CHUNK, OP_MESSAGE_INDEX, OP_ATTACHMENT,
                             OP_METADATA})
#: Work bound of one resynchronisation [record steps]: beyond it, reading resumes at the chunk found.
_RESYNC_MAX_STEPS = 200_000


def _resync(buf, start: int, chunk_at: int) -> int:
    """The first offset in [start, chunk_at] from which a chain of well-framed top-level records
    (known opcodes, lengths inside the gap) ends exactly at `chunk_at`, the next self-consistent
    chunk: the intact records (file metadata, schemas, channels) between a damaged record and that
    chunk are read instead of skipped. `chunk_at` itself when no such chain exists."""
    steps = 0
    for p in range(start, chunk_at):
        if buf[p] not in _RESYNC_OPCODES:
            continue
        q = p
        while q < chunk_at and steps < _RESYNC_MAX_STEPS:
            steps += 1
            if q + _REC.size > chunk_at or buf[q] not in _RESYNC_OPCODES:
                break
            q += _REC.size + _U64.unpack_from(buf, q + 1)[0]
        if q == chunk_at:
            return p
        if steps >= _RESYNC_MAX_STEPS:
            break
    return chunk_at


def _find_chunk(buf, start: int, size: int) -> int | None:
    """Offset of the first self-consistent compressed chunk record at or after `start`: a record
    whose opcode is chunk, whose compression is zstd or lz4 and whose lengths add up exactly (so
    a false match inside compressed bytes is vanishingly unlikely)."""
    best = None
    for key in _RESYNC_KEYS:
        find = buf.find
        p = find(key, start + _CHUNK_FIXED)
        while p != -1 and (best is None or p - _CHUNK_FIXED < best):
            at = p - _CHUNK_FIXED
            if buf[at] == OP_CHUNK:
                length = _U64.unpack_from(buf, at + 1)[0]
                end = at + _REC.size + length
                if end <= size and _chunk_ref(buf, at + _REC.size, end, at, 0) is not None:
                    best = at
                    break
            p = find(key, p + 1)
    return best


class ChunkContents(NamedTuple):
    schemas: list[Schema]
    channels: list[Channel]
    messages: list[RawMessage]  # file order


def _check_size(view: FileView, chunk: ChunkRef, budget: ReadBudget | None) -> None:
    if chunk.uncompressed_size > CHUNK_MAX_UNCOMPRESSED:
        raise CorruptChunkError(chunk.start_ns, chunk.end_ns,
                                f"{view.path}: {chunk.describe()} announces {chunk.uncompressed_size} uncompressed "
                                f"bytes, more than the {CHUNK_MAX_UNCOMPRESSED >> 20} MiB a chunk may hold")
    if budget is not None:
        budget.charge_bytes(chunk.uncompressed_size, chunk)


def _decompress(view: FileView, chunk: ChunkRef, cap: int) -> bytes:
    """At most `cap` bytes of the chunk's decompressed stream (a truncated stream gives its prefix)."""
    raw = memoryview(view.buf)[chunk.data_start : chunk.data_start + chunk.data_len] if view.buf else b""
    try:
        return _decompress_bytes(view, chunk, raw, cap)
    finally:
        if isinstance(raw, memoryview):
            raw.release()
        view.release(chunk.data_start, chunk.data_len)


def _decompress_bytes(view: FileView, chunk: ChunkRef, raw, cap: int) -> bytes:
    if chunk.compression == "zstd":
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw), read_size=1 << 16)
        parts, got = [], 0
        while got < cap:
            part = reader.read(cap - got)
            if not part:
                break
            parts.append(part)
            got += len(part)
        return b"".join(parts)
    if chunk.compression == "lz4":
        return lz4.frame.LZ4FrameDecompressor().decompress(bytes(raw), max_length=cap)
    if chunk.compression == "":
        return bytes(raw[:cap])
    raise CorruptChunkError(chunk.start_ns, chunk.end_ns,
                            f"{view.path}: {chunk.describe()} uses unknown compression {chunk.compression!r}")


def read_chunk(view: FileView, chunk: ChunkRef, budget: ReadBudget | None = None) -> ChunkContents:
    """Decompress one complete chunk (output capped at its announced size), check its CRC and
    split it into records.

    Raises CorruptChunkError (naming the chunk's log-time range) when the chunk announces more than
    `CHUNK_MAX_UNCOMPRESSED`, its stream decompresses to more or less than announced, the CRC
    differs, or the records inside do not fit together; ReadLimitError when `budget` runs out."""
    path = view.path
    _check_size(view, chunk, budget)
    try:
        data = _decompress(view, chunk, chunk.uncompressed_size + 1)  # one byte more shows a bomb
    except CorruptChunkError:
        raise
    except (zstandard.ZstdError, RuntimeError, ValueError) as exc:  # lz4 raises RuntimeError on damaged frames
        raise CorruptChunkError(chunk.start_ns, chunk.end_ns,
                                f"{path}: {chunk.describe()} does not decompress ({type(exc).__name__}: {exc})") from exc
    if len(data) > chunk.uncompressed_size:
        raise CorruptChunkError(chunk.start_ns, chunk.end_ns,
                                f"{path}: {chunk.describe()} decompresses to more than the {chunk.uncompressed_size} "
                                "bytes its header announces (a decompression bomb); refused")
    if len(data) != chunk.uncompressed_size:
        raise CorruptChunkError(chunk.start_ns, chunk.end_ns,
                                f"{path}: {chunk.describe()} decompresses to {len(data)} bytes, "
                                f"its header says {chunk.uncompressed_size}")
    if chunk.crc:
        actual = zlib.crc32(data)
        if actual != chunk.crc:
            raise CorruptChunkError(chunk.start_ns, chunk.end_ns,
                                    f"{path}: {chunk.describe()} fails its CRC check "
                                    f"(stored 0x{chunk.crc:08x}, computed 0x{actual:08x})")
    return _split(data, chunk, path, budget, strict=True)


def read_partial_chunk(view: FileView, chunk: ChunkRef, budget: ReadBudget | None = None) -> ChunkContents:
    """The complete records at the start of a cut-off chunk (`Truncation.partial_chunk`): the
    prefix its compressed stream still decodes to, split up to the first incomplete record. Not
    CRC-checked (the CRC covers the whole chunk). Never raises for a damaged stream: what does
    not decode is simply not there."""
    if chunk.compression not in ("zstd", "lz4", "") or chunk.data_len <= 0:
        return ChunkContents([], [], [])
    _check_size(view, chunk, budget)
    try:
        data = _decompress(view, chunk, chunk.uncompressed_size)
    except (zstandard.ZstdError, RuntimeError, ValueError):
        return ChunkContents([], [], [])
    return _split(data, chunk, view.path, budget, strict=False)


def _split(data: bytes, chunk: ChunkRef, path: Path, budget: ReadBudget | None, *, strict: bool) -> ChunkContents:
    schemas: list[Schema] = []
    channels: list[Channel] = []
    messages: list[RawMessage] = []
    append = messages.append
    n = len(data)
    pos = 0
    limit = budget.records_left if budget is not None else n  # every record has >= 9 bytes
    count = 0
    rec, msg = _REC.unpack_from, _MSG.unpack_from
    try:
        while pos < n:
            if count >= limit:
                raise budget.record_limit_error(chunk)  # type: ignore[union-attr]
            count += 1
            if pos + 9 > n:
                raise _Malformed(f"a record header at offset {pos} is cut off by the chunk end")
            opcode, length = rec(data, pos)
            body = pos + 9
            end = body + length
            if end > n:
                raise _Malformed(f"the record at offset {pos} runs past the chunk end")
            if opcode == OP_MESSAGE:  # the hot case
                if length < 22:
                    raise _Malformed(f"the message record at offset {pos} is {length} bytes, shorter than its header")
                ch, seq, log_time, pub_time = msg(data, body)
                append(RawMessage(ch, seq, log_time, pub_time, data[body + 22 : end]))
            elif opcode == OP_SCHEMA:
                schemas.append(_parse_schema(_Body(data, body, end)))
            elif opcode == OP_CHANNEL:
                channels.append(_parse_channel(_Body(data, body, end)))
            pos = end
    except _Malformed as exc:
        if strict:
            raise CorruptChunkError(chunk.start_ns, chunk.end_ns,
                                    f"{path}: {chunk.describe()} holds malformed records ({exc})") from None
    finally:
        if budget is not None:
            budget.records_left -= count
    return ChunkContents(schemas, channels, messages)


def iter_messages_of(path: str | os.PathLike, wanted: Callable[[Schema, Channel], bool], *,
                     schema_names: frozenset[str] | None = None) -> Iterator[tuple[Schema, Channel, RawMessage]]:
    """(schema, channel, message) of every message of `path` whose channel `wanted` accepts, in
    file order, one chunk in memory at a time (the side channels' readers). `schema_names`: when
    the file is complete and its summary lists none of them, no chunk is read."""
    view = FileView(path)
    try:
        sc = scan(view)
        schemas, channels = dict(sc.schemas), dict(sc.channels)
        if schema_names is not None and sc.complete and not any(s.name in schema_names for s in schemas.values()):
            return
        for chunk in sc.chunks:
            contents = read_chunk(view, chunk)
            schemas.update((s.id, s) for s in contents.schemas)
            channels.update((c.id, c) for c in contents.channels)
            for m in contents.messages:
                ch = channels.get(m.channel_id)
                schema = schemas.get(ch.schema_id) if ch is not None else None
                if ch is not None and schema is not None and wanted(schema, ch):
                    yield schema, ch, m
    finally:
        view.close()
