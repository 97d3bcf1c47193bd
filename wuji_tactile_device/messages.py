"""The contract's wire messages: encode with the FlatBuffers builder, decode as verified,
zero-copy numpy views.

Hot paths (force records) write vectors in bulk and read them with one `np.frombuffer` after the
bounds check in `verifier`; the generated per-element accessors are never used here.
Forces are `(N, 3)` float32 newtons in each taxel's own axes (+Z outward normal).
"""
from __future__ import annotations

import enum
import struct
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, NamedTuple

import flatbuffers
import numpy as np

from . import verifier
from .errors import DataLayoutError, InvalidMessageError
from .generated.core import HandJoint as _GeneratedHandJoint

if TYPE_CHECKING:
    from .metadata import TactileMetadata

#: OpenXR hand joints; values equal Isaac Teleop's `isaacteleop.schema.HandJoint`.
#: Built from the generated schema enum, so schema/hand.fbs stays the single source.
HandJoint = enum.IntEnum(  # type: ignore[misc]
    "HandJoint",
    [(k, v) for k, v in vars(_GeneratedHandJoint.HandJoint).items() if k.isupper()],
    module=__name__,
)
HandJoint.__doc__ = "OpenXR hand joint ids (PALM=0, WRIST=1, ... LITTLE_TIP=25); NUM_JOINTS=26 is a count, not a joint."
NUM_JOINTS = int(HandJoint.NUM_JOINTS)

DATA_FILE_IDENTIFIER = b"TDAT"
DATA_RECORD_FILE_IDENTIFIER = b"TDAR"
METADATA_FILE_IDENTIFIER = b"TMET"
METADATA_RECORD_FILE_IDENTIFIER = b"TMER"
DATA_RECORD_SCHEMA_NAME = "core.TactileDataArrayRecord"
METADATA_RECORD_SCHEMA_NAME = "core.TactileMetadataRecord"

_BFBS_FILES = {
    "TactileDataArray": "tactile_array.bfbs",
    "TactileDataArrayRecord": "tactile_array_record.bfbs",
    "TactileMetadata": "tactile_metadata.bfbs",
    "TactileMetadataRecord": "tactile_metadata_record.bfbs",
}


@lru_cache(maxsize=None)
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


class MetadataRecord(NamedTuple):
    """A decoded `TactileMetadataRecord` (not yet validated: call `metadata.validate()`)."""

    metadata: "TactileMetadata"
    timestamp: DeviceDataTimestamp


_TIMESTAMP = struct.Struct("<qqq")
_FORCE_SIZE = 12  # struct TaxelForce { fx, fy, fz: float }
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def as_force_array(forces: object) -> np.ndarray:
    """`forces` as a C-contiguous `(N, 3)` float32 array (no copy when it already is one)."""
    arr = np.asarray(forces)
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise DataLayoutError(f"forces must have shape (N, 3), got {arr.shape}")
    if arr.dtype.kind not in "fiu":
        raise DataLayoutError(f"forces must be numeric, got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.float32)


def _timestamp_values(timestamp: DeviceDataTimestamp) -> tuple[int, int, int]:
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


def _prepend_timestamp(builder: flatbuffers.Builder, values: tuple[int, int, int]) -> int:
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


# Verified record layouts by total length, for the decode fast path (see decode_tactile_record).
_RECORD_LAYOUTS_BY_SIZE: dict[int, _Layout] = {}


@lru_cache(maxsize=64)
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
        builder.PrependStructSlot(1, _prepend_timestamp(builder, (0, 0, 0)), 0)
        builder.PrependUOffsetTRelativeSlot(0, data, 0)
        builder.Finish(builder.EndObject(), DATA_RECORD_FILE_IDENTIFIER)
    else:
        builder.Finish(data, DATA_FILE_IDENTIFIER)
    template = bytes(builder.Output())
    n = len(template)
    if record:
        rec = verifier.root(template, n, DATA_RECORD_FILE_IDENTIFIER, "TactileDataArrayRecord")
        ts_pos = verifier.field(rec, 1, 24, 8, "timestamp")
        table = verifier.subtable(template, n, rec, 0, "data")
    else:
        ts_pos, table = -1, verifier.root(template, n, DATA_FILE_IDENTIFIER, "TactileDataArray")
    start, _ = verifier.vector(template, n, table, 0, _FORCE_SIZE, "forces")  # type: ignore[arg-type, misc]
    end = start + 12 * num_taxels
    head_end = ts_pos if record else start
    layout = _Layout(template, start, ts_pos, num_taxels, template[:head_end],
                     template[ts_pos + 24 : start] if record else b"", template[end:])
    if record and len(_RECORD_LAYOUTS_BY_SIZE) < 256:
        _RECORD_LAYOUTS_BY_SIZE[n] = layout
    return layout


def encode_tactile_data(forces: object) -> bytes:
    """Encode `(N, 3)` forces [N] as a `TactileDataArray` FlatBuffer."""
    arr = as_force_array(forces)
    layout = _layout(arr.shape[0], False)
    out = bytearray(layout.template)
    if arr.size:
        out[layout.forces_pos : layout.forces_pos + arr.nbytes] = memoryview(arr).cast("B")
    return bytes(out)


def encode_tactile_record(forces: object, timestamp: DeviceDataTimestamp) -> bytes:
    """Encode forces `(N, 3)` [N] and their timestamp as a `TactileDataArrayRecord` FlatBuffer."""
    arr = as_force_array(forces)
    layout = _layout(arr.shape[0], True)
    out = bytearray(layout.template)
    _TIMESTAMP.pack_into(out, layout.timestamp_pos, *_timestamp_values(timestamp))
    if arr.size:
        out[layout.forces_pos : layout.forces_pos + arr.nbytes] = memoryview(arr).cast("B")
    return bytes(out)


def tactile_record_size(num_taxels: int) -> int:
    """Exact encoded size [bytes] of a `TactileDataArrayRecord` with `num_taxels` taxels."""
    return len(encode_tactile_record(np.zeros((num_taxels, 3), np.float32), DeviceDataTimestamp(0, 0, 0)))


def _forces_view(buf, n: int, data: verifier.Table) -> np.ndarray:
    vec = verifier.vector(buf, n, data, 0, _FORCE_SIZE, "forces")
    if vec is None:
        raise InvalidMessageError(f"{data.name}.forces: required field is missing")
    start, count = vec
    arr = np.frombuffer(buf, np.float32, 3 * count, start).reshape(count, 3)
    if arr.flags.writeable:  # bytearray / writable memoryview input
        arr.flags.writeable = False
    return arr


def decode_tactile_data(buf: bytes, *, max_size: int | None = None) -> np.ndarray:
    """Verify and decode a `TactileDataArray`: `(N, 3)` float32 [N], a read-only view of `buf`."""
    n = verifier.check_size(buf, max_size, "TactileDataArray")
    return _forces_view(buf, n, verifier.root(buf, n, DATA_FILE_IDENTIFIER, "TactileDataArray"))


def _timestamp(buf, t: verifier.Table) -> DeviceDataTimestamp:
    pos = verifier.field(t, 1, 24, 8, "timestamp")
    if not pos:
        raise InvalidMessageError(f"{t.name}.timestamp: required field is missing")
    return DeviceDataTimestamp._make(_TIMESTAMP.unpack_from(buf, pos))


def decode_tactile_record(buf: bytes, *, max_size: int | None = None) -> TactileRecord:
    """Verify and decode a `TactileDataArrayRecord`; forces are a read-only view of `buf`."""
    n = verifier.check_size(buf, max_size, "TactileDataArrayRecord")
    # Fast path: a buffer whose every structural byte (all but the force and timestamp payload,
    # which are free-form floats and int64s) equals a layout verified before is itself valid.
    layout = _RECORD_LAYOUTS_BY_SIZE.get(n)
    if layout is not None:
        ts, fp = layout.timestamp_pos, layout.forces_pos
        if buf[:ts] == layout.head and buf[ts + 24 : fp] == layout.middle and buf[n - len(layout.tail):] == layout.tail:
            forces = np.frombuffer(buf, np.float32, 3 * layout.num_taxels, fp).reshape(layout.num_taxels, 3)
            if forces.flags.writeable:
                forces.flags.writeable = False
            return TactileRecord(forces, DeviceDataTimestamp._make(_TIMESTAMP.unpack_from(buf, ts)))
    return _decode_record_full(buf, n)


def _decode_record_full(buf, n: int) -> TactileRecord:
    """The full bounds-checking walk of a data record (any FlatBuffers writer's layout)."""
    rec = verifier.root(buf, n, DATA_RECORD_FILE_IDENTIFIER, "TactileDataArrayRecord")
    timestamp = _timestamp(buf, rec)
    data = verifier.subtable(buf, n, rec, 0, "data")
    if data is None:
        raise InvalidMessageError("TactileDataArrayRecord.data: required field is missing")
    forces = _forces_view(buf, n, data)
    if n not in _RECORD_LAYOUTS_BY_SIZE:
        _layout(forces.shape[0], True)  # learn this size's layout for the fast path
    return TactileRecord(forces, timestamp)


def encode_metadata_record(metadata: "TactileMetadata", timestamp: DeviceDataTimestamp) -> bytes:
    """Encode metadata and its timestamp as a `TactileMetadataRecord` FlatBuffer."""
    from .metadata import build_metadata_table

    values = _timestamp_values(timestamp)
    builder = flatbuffers.Builder(1024)
    data = build_metadata_table(builder, metadata)
    builder.StartObject(2)
    builder.PrependStructSlot(1, _prepend_timestamp(builder, values), 0)
    builder.PrependUOffsetTRelativeSlot(0, data, 0)
    builder.Finish(builder.EndObject(), METADATA_RECORD_FILE_IDENTIFIER)
    return bytes(builder.Output())


def decode_metadata_record(buf: bytes, *, max_size: int | None = None) -> MetadataRecord:
    """Verify and decode a `TactileMetadataRecord`. The metadata is not validated here."""
    from .metadata import read_metadata_table

    n = verifier.check_size(buf, max_size, "TactileMetadataRecord")
    rec = verifier.root(buf, n, METADATA_RECORD_FILE_IDENTIFIER, "TactileMetadataRecord")
    timestamp = _timestamp(buf, rec)
    data = verifier.subtable(buf, n, rec, 0, "data")
    if data is None:
        raise InvalidMessageError("TactileMetadataRecord.data: required field is missing")
    return MetadataRecord(read_metadata_table(buf, n, data), timestamp)
