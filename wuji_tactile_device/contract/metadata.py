"""`TactileMetadata`: the static layout of a tactile stream (which hand segments the taxels ride
on and where), as an immutable value with a deterministic FlatBuffers encoding, and the
`TactileMetadataRecord` codec.

Arrays follow the contract's Python view: poses `(count, 7)` = x, y, z [m], qx, qy, qz, qw in the
WRIST (skeleton root) frame at the bind configuration; `segment_indices` / `segment_weights`
`(N, 4)`, taxel-major; an index addresses `joint_ids` (the ordered segment list), not a HandJoint
ordinal. The wire stores float32, so poses and weights are held as float32: what you build is
exactly what a consumer decodes, and encode → decode round-trips bit for bit.

The four LBS arrays are declared ONCE, as the dataclass fields below (width, row count, kind,
schema field id and whether it may be absent in each field's `metadata`); `ARRAY_FIELDS` is
derived from them, and the codec, validation, difference reporting, pads, the exports, inspect,
the views and the retargeting layout all iterate over it. Adding an array field = schema +
regenerated code + one field here (+ a value rule in validation only for a new kind). Fields are
keyword-only, so a new optional array (default None: absent, not written) breaks no caller.

Decoding accepts records written without a file identifier (as upstream writers do) by checking
their structure instead; the rule is `records.root_table`'s.
"""
from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import flatbuffers
import numpy as np

from ..errors import DataLayoutError, InvalidMessageError, MetadataValidationError
from . import flatbuf
from .joints import NUM_HAND_JOINTS, HandJoint
from .naming import METADATA_FILE_IDENTIFIER, METADATA_RECORD_FILE_IDENTIFIER
from .records import DeviceDataTimestamp, prepend_timestamp, read_timestamp, root_table, struct_vector, timestamp_values
from .validation import validate_metadata

# Selection values of the schema (tactile_metadata.fbs).
_GEOMETRY_MAPPING_LBS = 1
_SEGMENT_SOURCE_HAND_SKELETON_REF = 1
_USHORT_MAX = 0xFFFF


class ArrayField(NamedTuple):
    """One LBS array of the metadata: `(rows, width)` where rows counts segments or taxels."""

    name: str
    width: int  # values per row
    rows: str  # "segments" (J) or "taxels" (N)
    kind: str  # "pose" (x y z qx qy qz qw), "index" (segment slot), "weight" (slot weight), "value" (finite float)
    schema_id: int  # field id in the LBS table
    dtype: type  # held as (float32 like the wire, or int64 for indices)
    optional: bool = False  # may be absent (None): not written then, and read as None when missing


#: How each kind travels in the LBS table: numpy element type and bytes per vector element.
WIRE_ELEMENT = {"pose": ("<f4", 28), "index": ("<u2", 2), "weight": ("<f4", 4), "value": ("<f4", 4)}


def _array(width: int, rows: str, kind: str, schema_id: int, dtype: type, *, optional: bool = False) -> Any:
    """Declare one LBS array field (an optional one defaults to None: absent). Typed as the
    field's value, the way `dataclasses.field` itself is."""
    meta = {"array": (width, rows, kind, schema_id, dtype, optional)}
    if optional:
        return dataclasses.field(default=None, metadata=meta)
    return dataclasses.field(metadata=meta)


class _DeclaredArrays:
    """`cls.ARRAY_FIELDS`: the array fields a metadata class declares, read from its dataclass
    fields (so a subclass that declares one more array has it in its own `ARRAY_FIELDS`)."""

    def __get__(self, obj: object, cls: type) -> tuple[ArrayField, ...]:
        found: tuple[ArrayField, ...] | None = cls.__dict__.get("_array_fields")  # per class, not inherited
        if found is None:
            found = tuple(ArrayField(f.name, *f.metadata["array"]) for f in dataclasses.fields(cls) if "array" in f.metadata)
            type.__setattr__(cls, "_array_fields", found)
        return found


def _joint(value: object) -> object:
    """A HandJoint when `value` is one; otherwise the raw value, for validate() to report."""
    try:
        return HandJoint(int(value))  # type: ignore[call-overload]
    except (ValueError, TypeError):
        return value


def _shaped(spec: ArrayField, value: object) -> np.ndarray:
    arr = np.asarray(value)
    name, width = spec.name, spec.width
    if arr.ndim == 1 and arr.size == 0:
        arr = arr.reshape(0, width)
    if arr.ndim != 2 or arr.shape[1] != width:
        raise MetadataValidationError("array shape", f"{name} must have shape (count, {width}), got {arr.shape}")
    if arr.dtype.kind not in "fiub":
        raise MetadataValidationError("array shape", f"{name} must be numeric, got dtype {arr.dtype}")
    if spec.dtype is np.int64 and arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise MetadataValidationError("segment index range",
                                          f"{name} must hold integers, got {arr.dtype} values that are not")
    out: np.ndarray = np.array(arr.astype(spec.dtype), copy=True, order="C")
    out.flags.writeable = False
    return out


@dataclasses.dataclass(frozen=True, eq=False, kw_only=True)
class TactileMetadata:
    """Static layout of one tactile stream: HandSkeletonRef segments + LBS bind poses/weights.
    Keyword-only (a new optional array never breaks a caller); the four arrays of the contract
    are required; `rigid(...)` builds the usual one-segment-per-taxel layout."""

    ARRAY_FIELDS = _DeclaredArrays()  # the declared arrays, in declaration (= schema) order

    joint_ids: tuple  # J HandJoint ids, the ordered segment list
    segment_bind_poses: np.ndarray = _array(7, "segments", "pose", 0, np.float32)  # (J, 7) wrist frame
    taxel_bind_poses: np.ndarray = _array(7, "taxels", "pose", 1, np.float32)  # (N, 7) wrist frame
    segment_indices: np.ndarray = _array(4, "taxels", "index", 2, np.int64)  # (N, 4) into joint_ids
    segment_weights: np.ndarray = _array(4, "taxels", "weight", 3, np.float32)  # (N, 4), sum 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "joint_ids", tuple(_joint(j) for j in self.joint_ids))
        for spec in self.ARRAY_FIELDS:
            value = getattr(self, spec.name)
            if value is None and not spec.optional:
                raise MetadataValidationError("array shape", f"{spec.name} is required (the contract has no default)")
            object.__setattr__(self, spec.name, None if value is None else _shaped(spec, value))

    @classmethod
    def rigid(cls, joint_ids, segment_bind_poses, taxel_bind_poses, segment_of_taxel, **optional: Any) -> TactileMetadata:
        """A layout whose every taxel rides rigidly on one segment: `segment_of_taxel` (N,) indices
        into `joint_ids` (repeated in all four slots), weights (1, 0, 0, 0). Poses as in the
        fields [m, wrist frame]; `optional`: optional arrays by name."""
        seg = np.asarray(segment_of_taxel)
        if seg.ndim != 1:
            raise ValueError(f"segment_of_taxel must be a 1-D array of segment indices, got shape {seg.shape}")
        weights = np.zeros((len(seg), 4))
        weights[:, 0] = 1.0
        return cls(joint_ids=joint_ids, segment_bind_poses=segment_bind_poses, taxel_bind_poses=taxel_bind_poses,
                   segment_indices=np.repeat(seg[:, None], 4, axis=1), segment_weights=weights, **optional)

    @property
    def num_segments(self) -> int:
        """J: the number of segments (joint ids)."""
        return len(self.joint_ids)

    @property
    def num_taxels(self) -> int:
        """N: the number of taxels (taxel bind poses)."""
        return int(self.taxel_bind_poses.shape[0])

    def arrays(self) -> dict[str, np.ndarray]:
        """The LBS arrays present, by field name, in declaration order (an absent optional array
        is left out)."""
        return {spec.name: a for spec in self.ARRAY_FIELDS if (a := getattr(self, spec.name)) is not None}

    def validate(self) -> TactileMetadata:
        """Check every contract rule; raise `MetadataValidationError` naming the rule and the
        offending taxel / slot / joint. Returns self for chaining."""
        validate_metadata(self)
        return self

    def check_forces(self, forces: np.ndarray) -> None:
        """Raise `DataLayoutError` unless `forces` is `(num_taxels, 3)`."""
        shape = getattr(forces, "shape", None)
        if shape != (self.num_taxels, 3):
            raise DataLayoutError(f"force frame has shape {shape}; the metadata has {self.num_taxels} taxels, "
                                  f"so frames must be ({self.num_taxels}, 3)")

    def encode(self) -> bytes:
        """Deterministic `TactileMetadata` FlatBuffer (same metadata → same bytes)."""
        builder = flatbuffers.Builder(1024)
        builder.Finish(build_metadata_table(builder, self), METADATA_FILE_IDENTIFIER)
        return bytes(builder.Output())

    @classmethod
    def decode(cls, buf: bytes, *, max_size: int | None = None) -> TactileMetadata:
        """Verify and decode a `TactileMetadata` FlatBuffer (rules are not validated here)."""
        n = flatbuf.check_size(buf, max_size, "TactileMetadata")
        return read_metadata_table(buf, n, root_table(buf, n, METADATA_FILE_IDENTIFIER, "TactileMetadata"), cls)

    def difference(self, other: TactileMetadata) -> str:
        """Name the first field where `other` differs from this layout ('' when equal)."""
        if self.num_taxels != other.num_taxels or self.num_segments != other.num_segments:
            return (f"{other.num_segments} segments / {other.num_taxels} taxels vs adopted "
                    f"{self.num_segments} / {self.num_taxels}")
        if self._joint_key() != other._joint_key():
            return f"joint ids {list(other._joint_key())} vs adopted {list(self._joint_key())}"
        for spec in self.ARRAY_FIELDS:
            a, b = getattr(self, spec.name), getattr(other, spec.name, None)
            if a is None or b is None:
                if (a is None) != (b is None):
                    return f"{spec.name} {'absent' if b is None else 'present'} vs adopted {'absent' if a is None else 'present'}"
                continue
            if a.shape != b.shape:
                return f"{spec.name} shape {b.shape} vs adopted {a.shape}"
            diff = np.argwhere(a != b)
            if len(diff):
                row = int(diff[0][0])
                return f"{spec.name} row {row}: {b[row].tolist()} vs adopted {a[row].tolist()}"
        return ""

    def _joint_key(self) -> tuple:
        return tuple(int(j) if isinstance(j, int) else j for j in self.joint_ids)

    def _key(self) -> tuple:
        return (self._joint_key(), *((name, a.shape, a.tobytes()) for name, a in self.arrays().items()))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TactileMetadata):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        names = ", ".join(j.name if isinstance(j, HandJoint) else repr(j) for j in self.joint_ids)
        return f"TactileMetadata({self.num_segments} segments [{names}], {self.num_taxels} taxels)"


#: The LBS array fields of `TactileMetadata`, from the one declaration above, in schema order.
ARRAY_FIELDS: tuple[ArrayField, ...] = TactileMetadata.ARRAY_FIELDS


class MetadataRecord(NamedTuple):
    """A decoded `TactileMetadataRecord` (not yet validated: call `metadata.validate()`)."""

    metadata: TactileMetadata
    timestamp: DeviceDataTimestamp


def _wire_vector(builder: flatbuffers.Builder, spec: ArrayField, values: np.ndarray) -> int:
    if spec.kind == "pose":
        return struct_vector(builder, values)
    if spec.kind == "index":
        if values.size and (values.min() < 0 or values.max() > _USHORT_MAX):
            taxel, slot = map(int, np.argwhere((values < 0) | (values > _USHORT_MAX))[0])
            raise MetadataValidationError(
                "segment index range", f"taxel {taxel} slot {slot}: index {int(values[taxel, slot])} cannot be encoded (0..65535)")
    return builder.CreateNumpyVector(values.astype(WIRE_ELEMENT[spec.kind][0]).reshape(-1))


def build_metadata_table(builder: flatbuffers.Builder, metadata: TactileMetadata) -> int:
    """Write `metadata` as a TactileMetadata table into `builder`; return its offset."""
    joints = np.array([int(j) if isinstance(j, int) else -1 for j in metadata.joint_ids], dtype=np.int64)
    if joints.size and (joints.min() < 0 or joints.max() > 0xFF):
        bad = int(np.flatnonzero((joints < 0) | (joints > 0xFF))[0])
        raise MetadataValidationError(
            "joint id", f"joint_ids[{bad}] = {metadata.joint_ids[bad]!r} cannot be encoded as a HandJoint (ubyte)")
    # Vectors are written last field first: the byte order of the committed encoding. An absent
    # optional array is not written (its slot stays empty: old readers see the old table).
    fields = metadata.ARRAY_FIELDS
    vectors = {spec.schema_id: _wire_vector(builder, spec, getattr(metadata, spec.name))
               for spec in sorted(fields, key=lambda s: -s.schema_id) if getattr(metadata, spec.name) is not None}
    builder.StartObject(max(spec.schema_id for spec in fields) + 1)
    for schema_id in sorted(vectors, reverse=True):
        builder.PrependUOffsetTRelativeSlot(schema_id, vectors[schema_id], 0)
    lbs = builder.EndObject()
    joint_vec = builder.CreateNumpyVector(joints.astype(np.uint8))
    builder.StartObject(1)
    builder.PrependUOffsetTRelativeSlot(0, joint_vec, 0)
    skeleton = builder.EndObject()
    builder.StartObject(4)
    builder.PrependUOffsetTRelativeSlot(3, skeleton, 0)
    builder.PrependUOffsetTRelativeSlot(1, lbs, 0)
    builder.PrependUint8Slot(2, _SEGMENT_SOURCE_HAND_SKELETON_REF, 0)
    builder.PrependUint8Slot(0, _GEOMETRY_MAPPING_LBS, 0)
    return builder.EndObject()


def _required_vector(buf, n: int, t: flatbuf.Table, index: int, elem_size: int, name: str) -> tuple[int, int]:
    vec = flatbuf.vector(buf, n, t, index, elem_size, name)
    if vec is None:
        raise InvalidMessageError(f"{t.name}.{name}: required field is missing")
    return vec


def _selection(buf, t: flatbuf.Table, index: int, name: str, expected: int, expected_name: str) -> None:
    pos = flatbuf.field(t, index, 1, 1, name)
    value = buf[pos] if pos else 0
    if value != expected:
        raise InvalidMessageError(f"{t.name}.{name}: value {value} is not {expected_name} ({expected}), "
                                  "the only selection this version understands")


def _read_array(buf, n: int, lbs: flatbuf.Table, spec: ArrayField) -> np.ndarray | None:
    dtype, elem_size = WIRE_ELEMENT[spec.kind]
    if spec.optional:
        vec = flatbuf.vector(buf, n, lbs, spec.schema_id, elem_size, spec.name)
        if vec is None:
            return None
        start, count = vec
    else:
        start, count = _required_vector(buf, n, lbs, spec.schema_id, elem_size, spec.name)
    if spec.kind == "pose":
        return np.frombuffer(buf, dtype, spec.width * count, start).reshape(count, spec.width)
    if count % spec.width:
        raise InvalidMessageError(f"{lbs.name}.{spec.name}: {count} values is not {spec.width} per taxel")
    return np.frombuffer(buf, dtype, count, start).reshape(-1, spec.width)


def read_metadata_table(buf, n: int, t: flatbuf.Table, cls: type[TactileMetadata] | None = None) -> TactileMetadata:
    """Decode a verified TactileMetadata table (bounds-checks every vector first) as `cls`
    (default `TactileMetadata`)."""
    cls = TactileMetadata if cls is None else cls
    _selection(buf, t, 0, "geometry_mapping_type", _GEOMETRY_MAPPING_LBS, "LBS")
    _selection(buf, t, 2, "segment_source_type", _SEGMENT_SOURCE_HAND_SKELETON_REF, "HAND_SKELETON_REF")
    lbs = flatbuf.subtable(buf, n, t, 1, "lbs")
    if lbs is None:
        raise InvalidMessageError(f"{t.name}.lbs: geometry_mapping_type is LBS but the LBS table is missing")
    skeleton = flatbuf.subtable(buf, n, t, 3, "hand_skeleton_ref")
    if skeleton is None:
        raise InvalidMessageError(
            f"{t.name}.hand_skeleton_ref: segment_source_type is HAND_SKELETON_REF but the table is missing")
    start, count = _required_vector(buf, n, skeleton, 0, 1, "joint_ids")
    joints = np.frombuffer(buf, np.uint8, count, start)
    if count and joints.max() > NUM_HAND_JOINTS:
        bad = int(np.argmax(joints > NUM_HAND_JOINTS))
        raise InvalidMessageError(f"{skeleton.name}.joint_ids[{bad}]: value {int(joints[bad])} is not a HandJoint")
    arrays: dict[str, Any] = {spec.name: _read_array(buf, n, lbs, spec) for spec in cls.ARRAY_FIELDS}
    return cls(joint_ids=joints.tolist(), **arrays)


def encode_metadata_record(metadata: TactileMetadata, timestamp: DeviceDataTimestamp) -> bytes:
    """Encode metadata and its timestamp as a `TactileMetadataRecord` FlatBuffer."""
    values = timestamp_values(timestamp)
    builder = flatbuffers.Builder(1024)
    data = build_metadata_table(builder, metadata)
    builder.StartObject(2)
    builder.PrependStructSlot(1, prepend_timestamp(builder, values), 0)
    builder.PrependUOffsetTRelativeSlot(0, data, 0)
    builder.Finish(builder.EndObject(), METADATA_RECORD_FILE_IDENTIFIER)
    return bytes(builder.Output())


def decode_metadata_record(buf: bytes, *, max_size: int | None = None) -> MetadataRecord:
    """Verify and decode a `TactileMetadataRecord`. The metadata is not validated here."""
    n = flatbuf.check_size(buf, max_size, "TactileMetadataRecord")
    rec = root_table(buf, n, METADATA_RECORD_FILE_IDENTIFIER, "TactileMetadataRecord")
    timestamp = read_timestamp(buf, rec)
    data = flatbuf.subtable(buf, n, rec, 0, "data")
    if data is None:
        raise InvalidMessageError("TactileMetadataRecord.data: required field is missing")
    return MetadataRecord(read_metadata_table(buf, n, data), timestamp)
