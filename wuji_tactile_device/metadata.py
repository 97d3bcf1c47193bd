"""`TactileMetadata`: the static layout of a tactile stream (which hand segments the taxels ride
on and where), as an immutable value object with a deterministic FlatBuffers encoding.

Arrays follow the contract's Python view: poses `(count, 7)` = x, y, z [m], qx, qy, qz, qw in the
WRIST (skeleton root) frame at the bind configuration; `segment_indices` / `segment_weights`
`(N, 4)`, taxel-major; an index addresses `joint_ids` (the ordered segment list), not a HandJoint
ordinal. The wire stores float32, so poses and weights are held as float32: what you build is
exactly what a consumer decodes, and encode → decode round-trips bit for bit.
"""
from __future__ import annotations

from typing import Iterable

import flatbuffers
import numpy as np

from . import verifier
from .errors import DataLayoutError, InvalidMessageError, MetadataValidationError
from .messages import METADATA_FILE_IDENTIFIER, NUM_JOINTS, HandJoint, struct_vector

# Field ids of the schema (tactile_metadata.fbs).
_GEOMETRY_MAPPING_LBS = 1
_SEGMENT_SOURCE_HAND_SKELETON_REF = 1
_POSE_SIZE = 28  # struct Pose { Point (3 float), Quaternion (4 float) }
_USHORT_MAX = 0xFFFF


def _joint(value: object) -> object:
    """A HandJoint when `value` is one; otherwise the raw value, for validate() to report."""
    try:
        return HandJoint(int(value))  # type: ignore[call-overload]
    except (ValueError, TypeError):
        return value


def _frozen(arr: np.ndarray) -> np.ndarray:
    arr = np.array(arr, copy=True, order="C")
    arr.flags.writeable = False
    return arr


def _shaped(name: str, value: object, width: int, dtype: type) -> np.ndarray:
    arr = np.asarray(value)
    if arr.ndim == 1 and arr.size == 0:
        arr = arr.reshape(0, width)
    if arr.ndim != 2 or arr.shape[1] != width:
        raise MetadataValidationError("array shape", f"{name} must have shape (count, {width}), got {arr.shape}")
    if arr.dtype.kind not in "fiub":
        raise MetadataValidationError("array shape", f"{name} must be numeric, got dtype {arr.dtype}")
    if dtype is np.int64 and arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise MetadataValidationError("segment index range", f"{name} must hold integers, got {arr.dtype} values that are not")
    return _frozen(arr.astype(dtype))


class TactileMetadata:
    """Static layout of one tactile stream: HandSkeletonRef segments + LBS bind poses/weights."""

    __slots__ = ("joint_ids", "segment_bind_poses", "taxel_bind_poses", "segment_indices", "segment_weights")

    def __init__(self, joint_ids: Iterable[int], segment_bind_poses: object, taxel_bind_poses: object,
                 segment_indices: object, segment_weights: object) -> None:
        self.joint_ids: tuple = tuple(_joint(j) for j in joint_ids)
        self.segment_bind_poses = _shaped("segment_bind_poses", segment_bind_poses, 7, np.float32)
        self.taxel_bind_poses = _shaped("taxel_bind_poses", taxel_bind_poses, 7, np.float32)
        self.segment_indices = _shaped("segment_indices", segment_indices, 4, np.int64)
        self.segment_weights = _shaped("segment_weights", segment_weights, 4, np.float32)

    @property
    def num_segments(self) -> int:
        """J: the number of segments (joint ids)."""
        return len(self.joint_ids)

    @property
    def num_taxels(self) -> int:
        """N: the number of taxels (taxel bind poses)."""
        return int(self.taxel_bind_poses.shape[0])

    def validate(self) -> "TactileMetadata":
        """Check every contract rule; raise `MetadataValidationError` naming the rule and the
        offending taxel / slot / joint. Returns self for chaining."""
        from .validation import validate_metadata

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
    def decode(cls, buf: bytes, *, max_size: int | None = None) -> "TactileMetadata":
        """Verify and decode a `TactileMetadata` FlatBuffer (rules are not validated here)."""
        n = verifier.check_size(buf, max_size, "TactileMetadata")
        return read_metadata_table(buf, n, verifier.root(buf, n, METADATA_FILE_IDENTIFIER, "TactileMetadata"))

    def _key(self) -> tuple:
        return (tuple(int(j) if isinstance(j, int) else j for j in self.joint_ids),
                *((a.shape, a.tobytes()) for a in (self.segment_bind_poses, self.taxel_bind_poses,
                                                   self.segment_indices, self.segment_weights)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TactileMetadata):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        names = ", ".join(j.name if isinstance(j, HandJoint) else repr(j) for j in self.joint_ids)
        return f"TactileMetadata({self.num_segments} segments [{names}], {self.num_taxels} taxels)"


def build_metadata_table(builder: flatbuffers.Builder, metadata: TactileMetadata) -> int:
    """Write `metadata` as a TactileMetadata table into `builder`; return its offset."""
    joints = np.array([int(j) if isinstance(j, int) else -1 for j in metadata.joint_ids], dtype=np.int64)
    if joints.size and (joints.min() < 0 or joints.max() > 0xFF):
        bad = int(np.flatnonzero((joints < 0) | (joints > 0xFF))[0])
        raise MetadataValidationError("joint id", f"joint_ids[{bad}] = {metadata.joint_ids[bad]!r} cannot be encoded as a HandJoint (ubyte)")
    idx = metadata.segment_indices
    if idx.size and (idx.min() < 0 or idx.max() > _USHORT_MAX):
        taxel, slot = map(int, np.argwhere((idx < 0) | (idx > _USHORT_MAX))[0])
        raise MetadataValidationError("segment index range", f"taxel {taxel} slot {slot}: index {int(idx[taxel, slot])} cannot be encoded (0..65535)")
    weights = builder.CreateNumpyVector(metadata.segment_weights.reshape(-1))
    indices = builder.CreateNumpyVector(idx.astype("<u2").reshape(-1))
    taxel_poses = struct_vector(builder, metadata.taxel_bind_poses)
    segment_poses = struct_vector(builder, metadata.segment_bind_poses)
    builder.StartObject(4)
    builder.PrependUOffsetTRelativeSlot(3, weights, 0)
    builder.PrependUOffsetTRelativeSlot(2, indices, 0)
    builder.PrependUOffsetTRelativeSlot(1, taxel_poses, 0)
    builder.PrependUOffsetTRelativeSlot(0, segment_poses, 0)
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


def _required_vector(buf, n: int, t: verifier.Table, index: int, elem_size: int, name: str) -> tuple[int, int]:
    vec = verifier.vector(buf, n, t, index, elem_size, name)
    if vec is None:
        raise InvalidMessageError(f"{t.name}.{name}: required field is missing")
    return vec


def _selection(buf, t: verifier.Table, index: int, name: str, expected: int, expected_name: str) -> None:
    pos = verifier.field(t, index, 1, 1, name)
    value = buf[pos] if pos else 0
    if value != expected:
        raise InvalidMessageError(f"{t.name}.{name}: value {value} is not {expected_name} ({expected}), "
                                  "the only selection this version understands")


def read_metadata_table(buf, n: int, t: verifier.Table) -> TactileMetadata:
    """Decode a verified TactileMetadata table (bounds-checks every vector first)."""
    _selection(buf, t, 0, "geometry_mapping_type", _GEOMETRY_MAPPING_LBS, "LBS")
    _selection(buf, t, 2, "segment_source_type", _SEGMENT_SOURCE_HAND_SKELETON_REF, "HAND_SKELETON_REF")
    lbs = verifier.subtable(buf, n, t, 1, "lbs")
    if lbs is None:
        raise InvalidMessageError(f"{t.name}.lbs: geometry_mapping_type is LBS but the LBS table is missing")
    skeleton = verifier.subtable(buf, n, t, 3, "hand_skeleton_ref")
    if skeleton is None:
        raise InvalidMessageError(f"{t.name}.hand_skeleton_ref: segment_source_type is HAND_SKELETON_REF but the table is missing")
    start, count = _required_vector(buf, n, skeleton, 0, 1, "joint_ids")
    joints = np.frombuffer(buf, np.uint8, count, start)
    if count and joints.max() > NUM_JOINTS:
        bad = int(np.argmax(joints > NUM_JOINTS))
        raise InvalidMessageError(f"{skeleton.name}.joint_ids[{bad}]: value {int(joints[bad])} is not a HandJoint")
    s_start, s_count = _required_vector(buf, n, lbs, 0, _POSE_SIZE, "segment_bind_poses")
    t_start, t_count = _required_vector(buf, n, lbs, 1, _POSE_SIZE, "taxel_bind_poses")
    i_start, i_count = _required_vector(buf, n, lbs, 2, 2, "segment_indices")
    w_start, w_count = _required_vector(buf, n, lbs, 3, 4, "segment_weights")
    for name, count_ in (("segment_indices", i_count), ("segment_weights", w_count)):
        if count_ % 4:
            raise InvalidMessageError(f"{lbs.name}.{name}: {count_} values is not 4 per taxel")
    return TactileMetadata(
        joint_ids=joints.tolist(),
        segment_bind_poses=np.frombuffer(buf, "<f4", 7 * s_count, s_start).reshape(s_count, 7),
        taxel_bind_poses=np.frombuffer(buf, "<f4", 7 * t_count, t_start).reshape(t_count, 7),
        segment_indices=np.frombuffer(buf, "<u2", i_count, i_start).reshape(-1, 4),
        segment_weights=np.frombuffer(buf, "<f4", w_count, w_start).reshape(-1, 4),
    )
