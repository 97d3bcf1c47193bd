"""Reading MCAP files that may be damaged: a record-by-record scan that survives truncation, and
CRC-checked chunk decoding.

The `mcap` package's seeking reader yields nothing for a file without a summary (a killed
recorder) and its stream reader stops with an exception at the cut, so this module walks the
top-level records itself: every complete chunk before the cut is usable, the partial record at
the cut is reported with the time range its header announces. Chunk contents are checked
against their CRC before any message is handed out.
"""
from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from typing import NamedTuple

import zstandard
from mcap.data_stream import ReadDataStream
from mcap.exceptions import EndOfFile
from mcap.opcode import Opcode
from mcap.records import Channel, Header, Metadata, Schema

from ..errors import CorruptChunkError, RecordingError

MAGIC = b"\x89MCAP0\r\n"
_REC = struct.Struct("<BQ")  # opcode, record length
_MSG = struct.Struct("<HIQQ")  # channel id, sequence, log time, publish time
_CHUNK_HEAD = struct.Struct("<QQQI")  # start, end, uncompressed size, crc
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_MSG_INDEX_HEAD = struct.Struct("<HI")  # channel id, records length in bytes
_MAX_UNCOMPRESSED = 1 << 31


class RawMessage(NamedTuple):
    """One message as stored: times in ns, payload bytes unverified."""

    channel_id: int
    sequence: int
    log_time: int
    publish_time: int
    data: bytes


@dataclass
class ChunkRef:
    """Where a complete chunk record lies in the file and what its header announces."""

    index: int  # position among the file's complete chunks
    offset: int  # file offset of the record's opcode byte
    end: int  # file offset just past the record
    start_ns: int
    end_ns: int
    uncompressed_size: int
    crc: int  # 0 = no CRC written
    compression: str
    data_start: int
    data_len: int
    channel_counts: dict[int, int] = field(default_factory=dict)  # from message index records; {} = unknown

    def describe(self) -> str:
        return (f"chunk {self.index} at byte {self.offset} (log time {self.start_ns} .. {self.end_ns} ns, "
                f"{(self.end_ns - self.start_ns) / 1e9:.3f} s)")


@dataclass
class Truncation:
    """Where a damaged file stops being readable and what is known of the rest."""

    valid_until: int  # file offset just past the last complete record
    file_size: int
    reason: str
    partial_chunk_range: tuple[int, int] | None  # log-time range announced by a cut-off chunk

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


class FileView:
    """Read-only bytes of a file (memory-mapped; empty files become b"")."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        try:
            self._file = open(self.path, "rb")
        except OSError as exc:
            raise RecordingError(f"cannot open {self.path}: {exc.strerror}") from exc
        size = os.fstat(self._file.fileno()).st_size
        self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ) if size else None
        self.buf: bytes | mmap.mmap = self._map if self._map is not None else b""

    def close(self) -> None:
        if self._map is not None:
            self._map.close()
            self._map = None
        self.buf = b""
        self._file.close()


def _parse(record_cls, body: bytes, what: str, path: Path, offset: int):
    try:
        return record_cls.read(ReadDataStream(BytesIO(body)))
    except (EndOfFile, UnicodeDecodeError, struct.error) as exc:
        raise RecordingError(f"{path}: {what} record at byte {offset} is malformed ({exc or type(exc).__name__})") from exc


def scan(view: FileView) -> Scan:
    """Walk the top-level records of `view`. Raises RecordingError when the file is not MCAP;
    stops at a cut or at undecodable bytes and describes them in `Scan.truncation`."""
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
        if end <= size and opcode != Opcode.MESSAGE_INDEX:
            last_chunk = None  # the previous chunk's message indexes are all there
        if end > size:
            partial = None
            if opcode == Opcode.CHUNK and body + 16 <= size:
                start_ns, end_ns = struct.unpack_from("<QQ", buf, body)
                partial = (start_ns, end_ns)
            name = Opcode(opcode).name.lower() if opcode in Opcode._value2member_map_ else f"opcode 0x{opcode:02x}"
            out.truncation = Truncation(
                pos, size, f"a {name} record at byte {pos} announces {length} bytes but only {size - body} follow",
                partial)
            break
        if opcode == Opcode.CHUNK:
            last_chunk = _chunk_ref(buf, body, end, pos, len(out.chunks), path)
            out.chunks.append(last_chunk)
        elif opcode == Opcode.MESSAGE_INDEX:
            if last_chunk is not None and body + 6 <= end:
                channel_id, nbytes = _MSG_INDEX_HEAD.unpack_from(buf, body)
                last_chunk.channel_counts[channel_id] = nbytes // 16
        elif opcode == Opcode.HEADER:
            header = _parse(Header, bytes(buf[body:end]), "header", path, pos)
            out.profile, out.library = header.profile, header.library
        elif opcode == Opcode.SCHEMA:
            schema = _parse(Schema, bytes(buf[body:end]), "schema", path, pos)
            out.schemas[schema.id] = schema
        elif opcode == Opcode.CHANNEL:
            channel = _parse(Channel, bytes(buf[body:end]), "channel", path, pos)
            out.channels[channel.id] = channel
        elif opcode == Opcode.METADATA:
            out.metadata.append(_parse(Metadata, bytes(buf[body:end]), "metadata", path, pos))
        elif opcode == Opcode.ATTACHMENT:
            out.attachments += 1
        elif opcode == Opcode.MESSAGE:
            out.loose_messages += 1
        elif opcode == Opcode.DATA_END:
            out.has_summary = True
        elif opcode == Opcode.FOOTER:
            if bytes(buf[end : end + len(MAGIC)]) == MAGIC:
                out.complete = True
            else:
                out.truncation = Truncation(end, size, "the closing magic after the footer is missing or damaged", None)
            break
        pos = end
    if last_chunk is not None:
        last_chunk.channel_counts = {}  # its message indexes may be cut off: counts unknown
    return out


def _chunk_ref(buf, body: int, end: int, pos: int, index: int, path: Path) -> ChunkRef:
    if body + _CHUNK_HEAD.size + 4 > end:
        raise RecordingError(f"{path}: chunk record at byte {pos} is too short for a chunk header")
    start_ns, end_ns, usize, crc = _CHUNK_HEAD.unpack_from(buf, body)
    p = body + _CHUNK_HEAD.size
    clen = _U32.unpack_from(buf, p)[0]
    p += 4
    if p + clen + 8 > end:
        raise RecordingError(f"{path}: chunk record at byte {pos} has a compression name running past the record")
    compression = bytes(buf[p : p + clen]).decode("utf-8", "replace")
    p += clen
    dlen = _U64.unpack_from(buf, p)[0]
    p += 8
    if p + dlen > end:
        raise RecordingError(f"{path}: chunk record at byte {pos} announces {dlen} data bytes past the record end")
    return ChunkRef(index, pos, end, start_ns, end_ns, usize, crc, compression, p, dlen)


class ChunkContents(NamedTuple):
    schemas: list[Schema]
    channels: list[Channel]
    messages: list[RawMessage]  # file order


def read_chunk(view: FileView, chunk: ChunkRef) -> ChunkContents:
    """Decompress one chunk, check its CRC and split it into records.

    Raises CorruptChunkError (naming the chunk's log-time range) when decompression fails, the
    CRC differs, or the records inside do not fit together."""
    path = view.path
    if chunk.uncompressed_size > _MAX_UNCOMPRESSED:
        raise CorruptChunkError(chunk.start_ns, chunk.end_ns,
                                f"{path}: {chunk.describe()} announces {chunk.uncompressed_size} uncompressed bytes")
    raw = view.buf[chunk.data_start : chunk.data_start + chunk.data_len]
    try:
        if chunk.compression == "zstd":
            data = zstandard.ZstdDecompressor().decompress(raw, max_output_size=chunk.uncompressed_size)
        elif chunk.compression == "lz4":
            import lz4.frame

            data = lz4.frame.decompress(raw)
        elif chunk.compression == "":
            data = bytes(raw)
        else:
            raise CorruptChunkError(chunk.start_ns, chunk.end_ns,
                                    f"{path}: {chunk.describe()} uses unknown compression {chunk.compression!r}")
    except CorruptChunkError:
        raise
    except Exception as exc:  # zstd / lz4 raise their own error types on damaged frames
        raise CorruptChunkError(chunk.start_ns, chunk.end_ns,
                                f"{path}: {chunk.describe()} does not decompress ({type(exc).__name__}: {exc})") from exc
    if len(data) != chunk.uncompressed_size:
        raise CorruptChunkError(chunk.start_ns, chunk.end_ns,
                                f"{path}: {chunk.describe()} decompresses to {len(data)} bytes, "
                                f"its header says {chunk.uncompressed_size}")
    if chunk.crc:
        import zlib

        actual = zlib.crc32(data)
        if actual != chunk.crc:
            raise CorruptChunkError(chunk.start_ns, chunk.end_ns,
                                    f"{path}: {chunk.describe()} fails its CRC check "
                                    f"(stored 0x{chunk.crc:08x}, computed 0x{actual:08x})")
    return _split(data, chunk, path)


def _split(data: bytes, chunk: ChunkRef, path: Path) -> ChunkContents:
    schemas: list[Schema] = []
    channels: list[Channel] = []
    messages: list[RawMessage] = []
    append = messages.append
    n = len(data)
    pos = 0
    rec, msg = _REC.unpack_from, _MSG.unpack_from
    try:
        while pos < n:
            opcode, length = rec(data, pos)
            body = pos + 9
            end = body + length
            if end > n:
                raise struct.error(f"record at offset {pos} runs past the chunk end")
            if opcode == 5:  # Opcode.MESSAGE, the hot case
                ch, seq, log_time, pub_time = msg(data, body)
                append(RawMessage(ch, seq, log_time, pub_time, data[body + 22 : end]))
            elif opcode == Opcode.SCHEMA:
                schemas.append(Schema.read(ReadDataStream(BytesIO(data[body:end]))))
            elif opcode == Opcode.CHANNEL:
                channels.append(Channel.read(ReadDataStream(BytesIO(data[body:end]))))
            pos = end
    except (struct.error, EndOfFile, UnicodeDecodeError) as exc:
        raise CorruptChunkError(chunk.start_ns, chunk.end_ns,
                                f"{path}: {chunk.describe()} holds malformed records ({exc})") from exc
    return ChunkContents(schemas, channels, messages)
