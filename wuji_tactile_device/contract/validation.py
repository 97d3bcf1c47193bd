"""The contract's metadata rules. A metadata that fails any rule is never adopted; the error names
the rule and the offending taxel / slot / joint.

Tolerances: each taxel's four weights sum to 1 within `WEIGHT_SUM_TOLERANCE` (1e-5); a
quaternion is unit when | ||q|| - 1 | <= `QUATERNION_NORM_TOLERANCE` (1e-5; float32 storage of a
normalised quaternion is off by ~1e-7); a WRIST segment's bind pose is identity when its position
is within `IDENTITY_POSITION_TOLERANCE_M` (1e-6 m) of zero and |qw| >= 1 - 1e-5 (q and -q are the
same rotation).

The arrays are checked by kind (pose, index, weight, value) as declared once in
`metadata.ARRAY_FIELDS` (reached through the metadata object, so this module needs no import of
`metadata`); an optional array that is absent has nothing to check.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MetadataValidationError
from .joints import NUM_HAND_JOINTS, HandJoint

WEIGHT_SUM_TOLERANCE = 1e-5
QUATERNION_NORM_TOLERANCE = 1e-5
IDENTITY_POSITION_TOLERANCE_M = 1e-6

_ROW_NOUN = {"segment_bind_poses": "segment", "taxel_bind_poses": "taxel"}


def _first(mask: np.ndarray) -> tuple[tuple[int, ...], str]:
    """Index of the first True in `mask` and a note on how many more there are."""
    hits = np.argwhere(mask)
    more = len(hits) - 1
    return tuple(int(v) for v in hits[0]), (f" (and {more} more)" if more else "")


def _check_poses(poses: np.ndarray, what: str) -> None:
    finite = np.isfinite(poses)
    if not finite.all():
        (row, col), more = _first(~finite)
        raise MetadataValidationError("finite poses", f"{what} {row}: component {col} is {poses[row, col]}{more}")
    norms = np.linalg.norm(poses[:, 3:7].astype(np.float64), axis=1)
    bad = np.abs(norms - 1.0) > QUATERNION_NORM_TOLERANCE
    if bad.any():
        (row,), more = _first(bad)
        raise MetadataValidationError(
            "unit quaternion", f"{what} {row}: |q| = {norms[row]:.7f}, must be 1 within {QUATERNION_NORM_TOLERANCE}{more}")


def _check_indices(idx: np.ndarray, num_segments: int) -> None:
    """Every slot's index addresses a segment, zero-weight slots included."""
    bad = (idx < 0) | (idx >= num_segments)
    if bad.any():
        (taxel, slot), more = _first(bad)
        raise MetadataValidationError(
            "segment index range",
            f"taxel {taxel} slot {slot}: index {int(idx[taxel, slot])} is not in 0..{num_segments - 1}{more}")


def _check_weights(w: np.ndarray) -> None:
    """Finite, non-negative, each taxel's slots sum to 1."""
    finite = np.isfinite(w)
    if not finite.all():
        (taxel, slot), more = _first(~finite)
        raise MetadataValidationError("finite weights", f"taxel {taxel} slot {slot}: weight {w[taxel, slot]}{more}")
    if (w < 0).any():
        (taxel, slot), more = _first(w < 0)
        raise MetadataValidationError("non-negative weights", f"taxel {taxel} slot {slot}: weight {w[taxel, slot]}{more}")
    sums = w.astype(np.float64).sum(axis=1)
    bad = np.abs(sums - 1.0) > WEIGHT_SUM_TOLERANCE
    if bad.any():
        (taxel,), more = _first(bad)
        raise MetadataValidationError(
            "weights sum to 1",
            f"taxel {taxel}: weights sum to {sums[taxel]:.7f}, must be 1 within {WEIGHT_SUM_TOLERANCE}{more}")


def _check_values(v: np.ndarray, name: str) -> None:
    """A "value" array: every entry finite."""
    finite = np.isfinite(v)
    if not finite.all():
        (row, col), more = _first(~finite)
        raise MetadataValidationError("finite values", f"{name} row {row} column {col}: {v[row, col]}{more}")


def validate_metadata(md: Any) -> None:
    """Raise `MetadataValidationError` for the first broken rule of a `TactileMetadata` (checked in
    a fixed order: counts, joint ids, poses, WRIST identity, segment indices, weights)."""
    fields = [spec for spec in md.ARRAY_FIELDS if getattr(md, spec.name) is not None]
    J, N = md.num_segments, md.num_taxels
    # Counts agree.
    if J == 0:
        raise MetadataValidationError("segment count", "joint_ids is empty; at least one segment is needed")
    if N == 0:
        raise MetadataValidationError("taxel count", "taxel_bind_poses is empty; at least one taxel is needed")
    for spec in fields:
        rows = getattr(md, spec.name).shape[0]
        if spec.rows == "segments" and rows != J:
            raise MetadataValidationError("segment count", f"{J} joint ids but {rows} {spec.name.replace('_', ' ')}")
        if spec.rows == "taxels" and rows != N:
            raise MetadataValidationError("taxel count", f"{N} taxel bind poses but {rows} rows of {spec.name}")
    # Joint ids: real joints, unique.
    seen: dict[HandJoint, int] = {}
    for j, joint in enumerate(md.joint_ids):
        if not isinstance(joint, HandJoint) or joint == NUM_HAND_JOINTS:
            raise MetadataValidationError(
                "joint id",
                f"joint_ids[{j}] = {joint!r} is not a usable HandJoint (0..{NUM_HAND_JOINTS - 1}; NUM_JOINTS is a count)")
    for j, joint in enumerate(md.joint_ids):
        if joint in seen:
            raise MetadataValidationError("unique joint ids", f"joint_ids[{j}] = {joint.name} repeats joint_ids[{seen[joint]}]")
        seen[joint] = j
    # Poses: finite, unit quaternions; WRIST bind pose identity.
    for spec in fields:
        if spec.kind == "pose":
            _check_poses(getattr(md, spec.name), _ROW_NOUN.get(spec.name, spec.name))
    if HandJoint.WRIST in seen:
        j = seen[HandJoint.WRIST]
        pose = md.segment_bind_poses[j].astype(np.float64)
        if np.linalg.norm(pose[:3]) > IDENTITY_POSITION_TOLERANCE_M or abs(pose[6]) < 1.0 - QUATERNION_NORM_TOLERANCE:
            raise MetadataValidationError(
                "wrist bind pose identity", f"segment {j} is WRIST, so its bind pose must be identity; got {pose.tolist()}")
    for spec in fields:
        if spec.kind == "index":
            _check_indices(getattr(md, spec.name), J)
    for spec in fields:
        if spec.kind == "weight":
            _check_weights(getattr(md, spec.name))
    for spec in fields:
        if spec.kind == "value":
            _check_values(getattr(md, spec.name), spec.name)
