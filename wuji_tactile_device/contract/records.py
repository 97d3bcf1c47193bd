"""The contract's data records: `TactileDataArray` / `TactileDataArrayRecord` encode with the
FlatBuffers builder's bytes and decode as verified, zero-copy numpy views; the shared
`DeviceDataTimestamp`; the size limits every producer and consumer agrees on; the binary schemas.

Hot paths (force records) write vectors in bulk and read them with one `np.frombuffer` after the
bounds check in `flatbuf`; the generated per-element accessors are never used here.
Forces are `(N, 3)` float32 newtons in each taxel's own axes (+Z outward normal).

File identifiers (rule shared by every decoder of this package, `root_table`): this package writes
each root type with its identifier (`TDAT`, `TDAR`, `TMET`, `TMER`), but upstream writers (Isaac
Teleop's schemas declare none) may omit it. A buffer whose bytes 4–8 are the expected identifier
is read as identified; one carrying ANOTHER of the four identifiers is refused (a record of the
wrong type); any other bytes there mean "no identifier": the root offset is read from byte 0 and
the buffer must pass the same full structural walk (root table, vtable, every field's bounds and
alignment, required fields present) — structure, not the identifier, decides.
"""
from __future__ import annotations

import struct
from functools import lru_cache, cache
from importlib import resources
from itertools import repeat
from operator import itemgetter
from typing import Any, NamedTuple

import flatbuffers
import numpy as np

from ..errors import DataLayoutError, InvalidMessageError
from . import flatbuf
from .extensions import load_extension
from .naming import (DATA_FILE_IDENTIFIER, DATA_RECORD_FILE_IDENTIFIER, METADATA_FILE_IDENTIFIER,
                     METADATA_RECORD_FILE_IDENTIFIER, RECORD_FILE_IDENTIFIER, RECORD_ROOT, Stream)

#: Largest force record a tracker accepts by default [bytes]. A 176-taxel record is 2 184 B
#: (176 × 12 B forces + 72 B of tables, timestamp and FlatBuffer overhead); 8 KiB leaves 3.75×
#: headroom (up to 676 taxels) while bounding what one message can make the consumer read.
DEFAULT_MAX_FLATBUFFER_SIZE = 8 * 1024

#: Largest metadata record a tracker accepts [bytes]. Metadata costs ~53 B per taxel (pose 28 B,
#: 4 × u16 indices, 4 × f32 weights) plus 28 B per segment: a 176-taxel hand is ≈ 9.4 kB.
#: 256 KiB fits ~4 900 taxels (a whole-hand skin), and bounds the one-off decode + validate cost.
TRACKER_METADATA_MAX_SIZE = 256 * 1024

_BFBS_FILES = {
    "TactileDataArray": "tactile_array.bfbs",
    "TactileDataArrayRecord": "tactile_array_record.bfbs",
    "TactileMetadata": "tactile_metadata.bfbs",
    "TactileMetadataRecord": "tactile_metadata_record.bfbs",
}


@cache
def bfbs(root_name: str) -> bytes:
    """The binary schema (.bfbs) whose root table is `root_name`, as stored in MCAP schemas."""
    try:
        filename = _BFBS_FILES[root_name]
    except KeyError:
        raise ValueError(f"no .bfbs for {root_name!r}; known roots: {', '.join(_BFBS_FILES)}") from None
    return resources.files("wuji_tactile_device.generated").joinpath("bfbs", filename).read_bytes()


class DeviceDataTimestamp(NamedTuple):
    """Timestamps of one sample, int64 nanoseconds of a monotonic clock (not the epoch)."""

    available_time_local_common_clock: int  # when it became available here
    sample_time_local_common_clock: int  # when it was sampled, on this machine's clock
    sample_time_raw_device_clock: int  # when it was sampled, on the device's clock


class TactileRecord(NamedTuple):
    """A decoded `TactileDataArrayRecord`."""

    forces: np.ndarray  # (N, 3) float32 [N], taxel axes, read-only view of the buffer
    timestamp: DeviceDataTimestamp


_TIMESTAMP = struct.Struct("<qqq")
_new_tuple = tuple.__new__  # builds a NamedTuple without its Python-level __new__ (hot paths)
_isfinite = np.isfinite
#: The compiled check's calling convention this module speaks (`RECORD_CHECK_ABI` in record_check.c).
NATIVE_ABI = 1
# The compiled run check, built at install (setup.py; optional: needs a C compiler). Not built:
# `ForceRecordCodec.check_events` joins and checks with numpy (the same records pass).
_native: Any = load_extension(f"{__package__}._record_check", NATIVE_ABI, "the compiled run check")
#: Whether the compiled run check (`ForceRecordCodec.check_events`) is in this install.
NATIVE_AVAILABLE = _native is not None
_CONTRACT_IDENTIFIERS = frozenset((DATA_FILE_IDENTIFIER, DATA_RECORD_FILE_IDENTIFIER, METADATA_FILE_IDENTIFIER,
                                   METADATA_RECORD_FILE_IDENTIFIER))


def root_table(buf, n: int, identifier: bytes, what: str) -> flatbuf.Table:
    """The verified root table of a buffer with or without its file identifier (rule in the
    module doc). Raises `InvalidMessageError` for another contract type's identifier."""
    if n >= 12 and buf[4:8] != identifier and bytes(buf[4:8]) not in _CONTRACT_IDENTIFIERS:
        return flatbuf.table(buf, n, struct.unpack_from("<I", buf, 0)[0], f"{what} (no file identifier)")
    return flatbuf.root(buf, n, identifier, what)


_FORCE_SIZE = 12  # struct TaxelForce { fx, fy, fz: float }
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def all_finite(forces: np.ndarray) -> bool:
    """True if every component of a force array is finite (element-wise, ~1.5 µs for 176 taxels).

    Deliberately not a faster sum-based test: summing raises numpy overflow / invalid-value
    warnings for huge or mixed ±inf values, which under `-W error` would replace the typed error."""
    return bool(np.isfinite(forces).all())


def as_force_array(forces: object) -> np.ndarray:
    """`forces` as a C-contiguous `(N, 3)` float32 array (no copy when it already is one)."""
    arr = np.asarray(forces)
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise DataLayoutError(f"forces must have shape (N, 3), got {arr.shape}")
    if arr.dtype.kind not in "fiu":
        raise DataLayoutError(f"forces must be numeric, got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.float32)


def timestamp_values(timestamp: DeviceDataTimestamp) -> tuple[int, int, int]:
    if len(timestamp) != 3:
        raise DataLayoutError(f"a DeviceDataTimestamp has 3 fields, got {timestamp!r}")
    values = tuple(int(v) for v in timestamp)
    if not all(_INT64_MIN <= v <= _INT64_MAX for v in values):
        raise DataLayoutError(f"timestamp fields must fit int64 nanoseconds, got {timestamp!r}")
    return values  # type: ignore[return-value]


def struct_vector(builder: flatbuffers.Builder, rows: np.ndarray) -> int:
    """Write a vector of structs from a C-contiguous `(count, k)` array in one bulk copy."""
    data = rows.tobytes()
    count = rows.shape[0]
    builder.StartVector(len(data) // count if count else 4, count, 4)
    builder.head -= len(data)
    builder.Bytes[builder.head : builder.head + len(data)] = data
    return builder.EndVector()


def _force_table(builder: flatbuffers.Builder, forces: np.ndarray) -> int:
    vec = struct_vector(builder, forces)
    builder.StartObject(1)
    builder.PrependUOffsetTRelativeSlot(0, vec, 0)
    return builder.EndObject()


def prepend_timestamp(builder: flatbuffers.Builder, values: tuple[int, int, int]) -> int:
    builder.Prep(8, 24)
    builder.PrependInt64(values[2])
    builder.PrependInt64(values[1])
    builder.PrependInt64(values[0])
    return builder.Offset()


class _Layout(NamedTuple):
    template: bytes  # the Builder's output for N zero forces and a zero timestamp
    forces_pos: int  # where the N * 12 force bytes start
    timestamp_pos: int  # where the 24 timestamp bytes start (-1: no timestamp)
    num_taxels: int
    head: bytes  # structural bytes before the timestamp (or before the forces)
    middle: bytes  # structural bytes between the timestamp and the forces
    tail: bytes  # structural bytes after the forces


#: Largest taxel count whose record layout the decode fast path builds (a layout holds a template
#: of the record's size; at most `_LAYOUT_CACHE` are kept, so this bounds the cache's memory).
_FAST_PATH_MAX_TAXELS = 4096
_LAYOUT_CACHE = 16


@lru_cache(maxsize=_LAYOUT_CACHE)
def _layout(num_taxels: int, record: bool) -> _Layout:
    """The byte layout of a data message with `num_taxels` taxels, made by the FlatBuffers Builder.

    The layout depends only on N (every field is always written), so per frame only the force and
    timestamp bytes change: encoding patches them into a copy of this template instead of
    re-running the Builder (~5x cheaper; a test checks the bytes equal the generated builder's)."""
    zeros = np.zeros((num_taxels, 3), np.float32)
    builder = flatbuffers.Builder(zeros.nbytes + 96)
    data = _force_table(builder, zeros)
    if record:
        builder.StartObject(2)
        builder.PrependStructSlot(1, prepend_timestamp(builder, (0, 0, 0)), 0)
        builder.PrependUOffsetTRelativeSlot(0, data, 0)
        builder.Finish(builder.EndObject(), DATA_RECORD_FILE_IDENTIFIER)
    else:
        builder.Finish(data, DATA_FILE_IDENTIFIER)
    template = bytes(builder.Output())
    n = len(template)
    if record:
        rec = flatbuf.root(template, n, DATA_RECORD_FILE_IDENTIFIER, "TactileDataArrayRecord")
        ts_pos = flatbuf.field(rec, 1, 24, 8, "timestamp")
        table = flatbuf.subtable(template, n, rec, 0, "data")
    else:
        ts_pos, table = -1, flatbuf.root(template, n, DATA_FILE_IDENTIFIER, "TactileDataArray")
    start, _ = flatbuf.vector(template, n, table, 0, _FORCE_SIZE, "forces")  # type: ignore[arg-type, misc]
    end = start + 12 * num_taxels
    head_end = ts_pos if record else start
    return _Layout(template, start, ts_pos, num_taxels, template[:head_end],
                   template[ts_pos + 24 : start] if record else b"", template[end:])


@lru_cache(maxsize=_LAYOUT_CACHE)
def _record_layout_for_size(n: int) -> _Layout | None:
    """The Builder's record layout that has exactly `n` bytes, if any (a pure function of n: every
    record of N taxels has the same size, and sizes of different N differ by 12-byte steps).
    Memoised in a bounded cache: one lookup per decoded record."""
    num_taxels, rest = divmod(n - _RECORD_OVERHEAD, _FORCE_SIZE)
    if rest or not 0 <= num_taxels <= _FAST_PATH_MAX_TAXELS:
        return None
    layout = _layout(num_taxels, True)
    return layout if len(layout.template) == n else None


def encode_tactile_data(forces: object) -> bytes:
    """Encode `(N, 3)` forces [N] as a `TactileDataArray` FlatBuffer."""
    arr = as_force_array(forces)
    layout = _layout(arr.shape[0], False)
    out = bytearray(layout.template)
    if arr.size:
        out[layout.forces_pos : layout.forces_pos + arr.nbytes] = arr.data.cast("B")
    return bytes(out)


def encode_tactile_record(forces: object, timestamp: DeviceDataTimestamp) -> bytes:
    """Encode forces `(N, 3)` [N] and their timestamp as a `TactileDataArrayRecord` FlatBuffer."""
    arr = as_force_array(forces)
    layout = _layout(arr.shape[0], True)
    out = bytearray(layout.template)
    _TIMESTAMP.pack_into(out, layout.timestamp_pos, *timestamp_values(timestamp))
    if arr.size:
        out[layout.forces_pos : layout.forces_pos + arr.nbytes] = arr.data.cast("B")
    return bytes(out)


def tactile_record_size(num_taxels: int) -> int:
    """Exact encoded size [bytes] of a `TactileDataArrayRecord` with `num_taxels` taxels."""
    return len(encode_tactile_record(np.zeros((num_taxels, 3), np.float32), DeviceDataTimestamp(0, 0, 0)))


def _forces_view(buf, n: int, data: flatbuf.Table) -> np.ndarray:
    vec = flatbuf.vector(buf, n, data, 0, _FORCE_SIZE, "forces")
    if vec is None:
        raise InvalidMessageError(f"{data.name}.forces: required field is missing")
    start, count = vec
    arr = np.frombuffer(buf, np.float32, 3 * count, start).reshape(count, 3)
    if arr.flags.writeable:  # bytearray / writable memoryview input
        arr.flags.writeable = False
    return arr


def decode_tactile_data(buf: bytes, *, max_size: int | None = None) -> np.ndarray:
    """Verify and decode a `TactileDataArray`: `(N, 3)` float32 [N], a read-only view of `buf`."""
    n = flatbuf.check_size(buf, max_size, "TactileDataArray")
    return _forces_view(buf, n, root_table(buf, n, DATA_FILE_IDENTIFIER, "TactileDataArray"))


def read_timestamp(buf, t: flatbuf.Table) -> DeviceDataTimestamp:
    pos = flatbuf.field(t, 1, 24, 8, "timestamp")
    if not pos:
        raise InvalidMessageError(f"{t.name}.timestamp: required field is missing")
    return DeviceDataTimestamp._make(_TIMESTAMP.unpack_from(buf, pos))


def decode_tactile_record(buf: bytes, *, max_size: int | None = None) -> TactileRecord:
    """Verify and decode a `TactileDataArrayRecord`; forces are a read-only view of `buf`."""
    n = flatbuf.check_size(buf, max_size, "TactileDataArrayRecord")
    # Fast path: a buffer whose every structural byte (all but the force and timestamp payload,
    # which are free-form floats and int64s) equals a layout verified before is itself valid.
    layout = _record_layout_for_size(n)
    if layout is not None:
        ts, fp = layout.timestamp_pos, layout.forces_pos
        if buf[:ts] == layout.head and buf[ts + 24 : fp] == layout.middle and buf[n - len(layout.tail):] == layout.tail:
            forces = np.frombuffer(buf, np.float32, 3 * layout.num_taxels, fp).reshape(layout.num_taxels, 3)
            if forces.flags.writeable:
                forces.flags.writeable = False
            return TactileRecord(forces, _new_tuple(DeviceDataTimestamp, _TIMESTAMP.unpack_from(buf, ts)))
    return _decode_record_full(buf, n)


def _decode_record_full(buf, n: int) -> TactileRecord:
    """The full bounds-checking walk of a data record (any FlatBuffers writer's layout)."""
    rec = root_table(buf, n, DATA_RECORD_FILE_IDENTIFIER, "TactileDataArrayRecord")
    timestamp = read_timestamp(buf, rec)
    data = flatbuf.subtable(buf, n, rec, 0, "data")
    if data is None:
        raise InvalidMessageError("TactileDataArrayRecord.data: required field is missing")
    return TactileRecord(_forces_view(buf, n, data), timestamp)


def peek_record_times(payload, stream: Stream) -> tuple[int, int]:
    """(available_time, sample_time) [ns] of a data or metadata record, read in place without
    decoding the rest (for indexing recordings, once per recorded message). Bounds-checked: only
    the root offset, the file identifier, the vtable entry of field `timestamp` (id 1) and its 24
    bytes are touched; `InvalidMessageError` when any is out of bounds, absent or of another type."""
    what = RECORD_ROOT[stream]
    n = len(payload)
    if n < 12:
        raise InvalidMessageError(f"{what}: {n} bytes is too short for a FlatBuffer with a root table")
    identifier = RECORD_FILE_IDENTIFIER[stream]
    if payload[4:8] != identifier and bytes(payload[4:8]) in _CONTRACT_IDENTIFIERS:  # the rule of root_table
        raise InvalidMessageError(f"{what}: file identifier {bytes(payload[4:8])!r} is not {identifier!r}")
    table = _U32.unpack_from(payload, 0)[0]
    if table & 3 or table > n - 4:
        raise InvalidMessageError(f"{what}: table offset {table} is misaligned or outside the {n}-byte buffer")
    vtable = table - _I32.unpack_from(payload, table)[0]
    if vtable & 1 or vtable < 0 or vtable > n - 4:
        raise InvalidMessageError(f"{what}: vtable offset {vtable} is misaligned or outside the {n}-byte buffer")
    vt_size, table_size = _U16X2.unpack_from(payload, vtable)
    field = _U16.unpack_from(payload, vtable + 6)[0] if vt_size >= 8 and vtable + 8 <= n else 0
    if field == 0:
        raise InvalidMessageError(f"{what}.timestamp: required field is missing")
    pos = table + field
    if field + 24 > table_size or pos + 24 > n or pos & 7:
        raise InvalidMessageError(f"{what}.timestamp: field at {pos} lies outside its table or is misaligned")
    return _TWO_I64.unpack_from(payload, pos)


_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U16 = struct.Struct("<H")
_U16X2 = struct.Struct("<HH")
_TWO_I64 = struct.Struct("<qq")

#: Bytes of a data record beyond its forces (tables, timestamp, FlatBuffer overhead).
_RECORD_OVERHEAD = len(_layout(0, True).template)




class ForceRecordCodec:
    """Per-frame encode and check of `TactileDataArrayRecord`s of one taxel count, for the stream
    hot paths. Every record of N taxels has the Builder's bytes except the 24 timestamp bytes and
    the N × 12 force bytes (`head | timestamp | middle | forces | tail`): `encode` joins the
    constant parts with the packed timestamp and forces; `check_bytes`/`check_batch`/`decode`
    accept a payload whose structural bytes equal the verified layout's (such a buffer is valid:
    a FlatBuffer's validity depends only on its structural bytes, never on the float and int64
    values) and return None for anything else, which the caller decodes with the full verifier."""

    def __init__(self, num_taxels: int):
        if num_taxels < 1:
            raise ValueError(f"num_taxels must be >= 1, got {num_taxels}")
        layout = _layout(num_taxels, True)  # the Builder's bytes, verified by flatbuf
        self.num_taxels = num_taxels
        self.size = len(layout.template)
        self._ts = layout.timestamp_pos
        self._forces = layout.forces_pos
        self._head, self._middle, self._tail = layout.head, layout.middle, layout.tail
        self._tail_start = self.size - len(layout.tail)
        # Batches view the joined payloads as rows of float32: needs 4-byte aligned rows and forces.
        self._batchable = self.size % 4 == 0 and self._forces % 4 == 0
        self._middle_at = self._ts + 24
        # The structural byte ranges (offset, length): all but the timestamp's and the forces'.
        # `check_events` (compiled) compares them per record as int64 pairs; `check_run` (numpy)
        # gathers the same ranges as 4-byte words from every record of a run.
        self._runnable = self._batchable and self._ts % 4 == 0
        self._template = layout.template
        self._values = 3 * num_taxels
        spans = np.array([(0, self._ts), (self._middle_at, self._forces - self._middle_at),
                          (self._tail_start, len(layout.tail))], np.int64)
        self._spans = spans.tobytes()
        if self._runnable:
            self._structure_words = np.concatenate([np.arange(o // 4, (o + n) // 4) for o, n in spans.tolist()])
            self._structure = np.frombuffer(layout.template, np.uint32)[self._structure_words].tobytes()

    def encode(self, forces: np.ndarray, available_ns: int, sample_ns: int, device_ns: int) -> bytes:
        """The record of `forces` (C-contiguous `(N, 3)` float32 [N]) and its timestamp [ns];
        equal, byte for byte, to the contract's `encode_tactile_record`. Raises `struct.error` for
        a timestamp that is not an int64 (the caller then lets the contract's encoder judge it)."""
        return b"".join((self._head, _TIMESTAMP.pack(available_ns, sample_ns, device_ns), self._middle,
                         forces.tobytes(), self._tail))

    def check_bytes(self, payload: bytes) -> tuple[np.ndarray, DeviceDataTimestamp] | None:
        """`decode` for a payload known to be `bytes` (the hot path)."""
        if (len(payload) != self.size or not payload.startswith(self._head)
                or not payload.startswith(self._middle, self._middle_at) or not payload.endswith(self._tail)):
            return None
        n = self.num_taxels
        forces = np.frombuffer(payload, np.float32, 3 * n, self._forces).reshape(n, 3)
        return forces, _new_tuple(DeviceDataTimestamp, _TIMESTAMP.unpack_from(payload, self._ts))

    def check_batch(self, payloads: list) -> tuple[list[bool], np.ndarray] | None:
        """`decode` of many payloads at once, plus finiteness: `(ok, forces)` where `ok[i]` is
        True when payload i is this layout's record AND all its forces are finite; then
        `forces[i]` is its read-only `(N, 3)` float32 view [N] (`forces` is `(len(payloads), N,
        3)`) and `timestamp(payload)` reads its timestamp. Rows that are not ok mean nothing:
        check those one by one (`check_bytes`, or the contract's verifier). None when not every
        payload is `bytes` of this layout's size (check them one by one). The structural bytes are
        compared in place (no copy); the payloads are joined once so that the finiteness of all
        forces is one numpy test; `forces` views that joined copy (keeping the whole batch alive:
        callers bound the batch size)."""
        size, n, k = self.size, self.num_taxels, len(payloads)
        if (not self._batchable or list(map(len, payloads)).count(size) != k
                or list(map(type, payloads)).count(bytes) != k):
            return None
        head, middle, middle_at, tail = self._head, self._middle, self._middle_at, self._tail
        ok = [p.startswith(head) and p.startswith(middle, middle_at) and p.endswith(tail) for p in payloads]
        first = self._forces // 4
        forces = np.frombuffer(b"".join(payloads), np.float32).reshape(k, size // 4)[:, first : first + 3 * n]
        finite = _isfinite(forces)
        if not finite.all():  # rare: find the frames with a non-finite force
            ok = [o and f for o, f in zip(ok, np.all(finite, axis=1).tolist(), strict=True)]
        return ok, forces.reshape(k, n, 3)

    def check_run(self, joined: bytes, count: int) -> np.ndarray | None:
        """`check_batch` of `count` payloads of this layout's size joined end to end
        (`b"".join(payloads)`), for a run where every record is expected to pass: the `(count, N,
        3)` float32 forces [N] (read-only views of `joined`) when every record has this layout's
        structural bytes and only finite forces, None when any has not (then check them one by
        one). A few numpy calls for the whole run: the structural words of every record gathered
        and compared with the layout's at once, one finiteness test of every force."""
        size, n = self.size, self.num_taxels
        if not self._runnable or len(joined) != count * size or count < 1:
            return None
        words = np.ndarray((count, size // 4), np.uint32, joined)
        if words[:, self._structure_words].tobytes() != self._structure * count:
            return None
        forces = np.ndarray((count, n, 3), np.float32, joined, self._forces, (size, 12, 4))
        if not _isfinite(forces).all():
            return None
        return forces

    def check_events(self, events: list, start: int, count: int, item: int) -> np.ndarray | None:
        """`check_run` of the payloads of `events[start : start + count]` (tuples whose item
        `item` is the payload) without joining them: the newest record's `(N, 3)` float32 forces
        [N] (a read-only view of its payload) when every record has this layout's structural bytes
        and only finite forces, None when any has not (then check them one by one). One compiled
        call when the install built it (`NATIVE_AVAILABLE`); else the payloads are joined and
        checked with numpy (`check_run`), with the same verdict."""
        if not self._runnable:
            return None
        if _native is not None:
            if not _native.check_run(events, start, count, item, self.size, self._template, self._spans,
                                     self._forces, self._values):
                return None
            n = self.num_taxels
            return np.ndarray((n, 3), np.float32, events[start + count - 1][item], self._forces)
        if start < 0 or count < 1 or start > len(events) - count:
            raise ValueError(f"check_run: records {start}..{start + count} outside the {len(events)} events")
        if item < 0:
            raise ValueError(f"check_run: item {item} is not an index of the events' tuples")
        chunk = events[start : start + count]  # the compiled check's rule: tuples whose item `item` is bytes
        if not all(map(isinstance, chunk, repeat(tuple))):
            return None
        try:
            payloads = list(map(itemgetter(item), chunk))
        except IndexError:  # a tuple too short
            return None
        if list(map(type, payloads)).count(bytes) != count:
            return None
        forces = self.check_run(b"".join(payloads), count)
        return None if forces is None else forces[-1]

    def timestamp(self, payload: bytes) -> DeviceDataTimestamp:
        """The timestamp [ns] of a payload `check_batch`, `check_run` or `check_events` found ok."""
        return _new_tuple(DeviceDataTimestamp, _TIMESTAMP.unpack_from(payload, self._ts))

    def decode(self, payload: object) -> tuple[np.ndarray, DeviceDataTimestamp] | None:
        """(forces, timestamp) of a `bytes` payload laid out as this codec's records — forces a
        read-only `(N, 3)` float32 view [N] — or None for anything else (other size, other
        structural bytes, not `bytes`): decode that with the contract's verifier."""
        if type(payload) is not bytes:
            return None
        return self.check_bytes(payload)
