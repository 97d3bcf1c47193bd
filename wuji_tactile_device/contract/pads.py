"""Pad-level views of a tactile layout: which finger pad each taxel belongs to, and the resultant
force of each pad in a common pad frame.

Taxel forces are components in each taxel's own axes, so summing them raw is meaningless on a
curved pad. Each taxel's force is first rotated into its pad frame — the bind frame of the
finger's pad segment (the segment that carries most of that finger's taxels; on the Wuji Hand 2
the distal segment, OpenXR joint axes: +Z along the bone toward the wrist, +Y toward the nail) —
using the taxel's bind orientation relative to that segment (`R_pad⁻¹ · R_taxel`, constant for a
rigid attachment), then summed. Per-axis force conservation holds exactly in this frame.

Used by `plot` (the resultant panels) and by the retargeting nodes (per-finger force magnitude);
it needs only numpy and the contract's geometry.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import DataLayoutError
from .geometry import quat_to_matrix
from .joints import FINGER_OF_JOINT, NUM_FINGERS, HandJoint
from .joints import FINGERS as FINGERS  # re-exported: pads are numbered in this finger order
from .metadata import TactileMetadata

NUM_PADS = NUM_FINGERS


class PadLayout(NamedTuple):
    """How a layout's taxels group into the five finger pads.

    `pad_of_taxel` (N,) int: finger index of each taxel. `pad_segment` (5,) int: segment index
    whose bind frame is the pad frame (-1 for a finger without taxels). `taxel_to_pad` (N,3,3):
    rotation taking a force in taxel axes to pad-frame axes. `taxel_pad_positions` (N,3) [m]:
    taxel bind positions in the pad frame. `one_hot` (5,N) float64: pad membership.
    `resultant_matrix` (15, 3N): rotation and per-pad sum in one linear map, so that
    `resultants.ravel() = resultant_matrix @ forces.ravel()` (one matrix product per frame).
    """

    pad_of_taxel: np.ndarray
    pad_segment: np.ndarray
    taxel_to_pad: np.ndarray
    taxel_pad_positions: np.ndarray
    one_hot: np.ndarray
    resultant_matrix: np.ndarray


def pad_layout(metadata: TactileMetadata) -> PadLayout:
    """Group a layout's taxels into finger pads (by each taxel's heaviest segment slot) and
    precompute the rotations into each pad frame. Raises `DataLayoutError` naming the taxel when a
    taxel's heaviest segment is not a finger joint (PALM/WRIST): such a layout has no finger pads."""
    joint_ids = np.asarray([int(j) for j in metadata.joint_ids], dtype=np.int64)
    segment_bind_poses = metadata.segment_bind_poses.astype(np.float64)
    taxel_bind_poses = metadata.taxel_bind_poses.astype(np.float64)
    segment_indices = metadata.segment_indices
    segment_weights = metadata.segment_weights
    n = taxel_bind_poses.shape[0]

    rows = np.arange(n)
    main_segment = segment_indices[rows, np.argmax(segment_weights, axis=1)]  # (N,)
    pad_of_taxel = FINGER_OF_JOINT[joint_ids[main_segment]]
    orphans = np.flatnonzero(pad_of_taxel < 0)
    if orphans.size:
        k = int(orphans[0])
        joint = HandJoint(int(joint_ids[main_segment[k]]))
        raise DataLayoutError(
            f"taxel {k} is attached to segment {int(main_segment[k])} ({joint.name}), which is not "
            f"on a finger; pad views need every taxel on a finger pad ({orphans.size} taxel(s) are not)")

    # Pad frame of each finger: its most used segment.
    pad_segment = np.full(NUM_PADS, -1, dtype=np.int64)
    for pad in range(NUM_PADS):  # five pads, not a per-taxel loop
        members = main_segment[pad_of_taxel == pad]
        if members.size:
            pad_segment[pad] = int(np.bincount(members).argmax())

    seg_of_taxel = pad_segment[pad_of_taxel]  # (N,)
    r_pad = quat_to_matrix(segment_bind_poses[seg_of_taxel, 3:7])  # (N,3,3) pad -> wrist
    r_taxel = quat_to_matrix(taxel_bind_poses[:, 3:7])  # (N,3,3) taxel -> wrist
    taxel_to_pad = np.einsum("nji,njk->nik", r_pad, r_taxel)  # R_pad^T R_taxel
    offset = taxel_bind_poses[:, :3] - segment_bind_poses[seg_of_taxel, :3]
    taxel_pad_positions = np.einsum("nji,nj->ni", r_pad, offset)
    one_hot = (pad_of_taxel[None, :] == np.arange(NUM_PADS)[:, None]).astype(np.float64)
    matrix = np.einsum("pn,nij->pinj", one_hot, taxel_to_pad).reshape(NUM_PADS * 3, n * 3)
    return PadLayout(pad_of_taxel, pad_segment, taxel_to_pad, taxel_pad_positions, one_hot, matrix)


def pad_resultants(layout: PadLayout, forces: np.ndarray) -> np.ndarray:
    """Resultant force of each pad `(..., 5, 3)` [N, pad frame] from taxel forces `(..., N, 3)`
    [N, taxel axes]: Σ over the pad's taxels of `R_pad⁻¹ R_taxel f`. Vectorised over time."""
    forces = np.asarray(forces)
    _check_count(layout, forces)
    lead = forces.shape[:-2]
    flat = forces.reshape(*lead, -1).astype(np.float64, copy=False)
    return (flat @ layout.resultant_matrix.T).reshape(*lead, NUM_PADS, 3)


def _check_count(layout: PadLayout, forces: np.ndarray) -> None:
    n = layout.pad_of_taxel.shape[0]
    if forces.ndim < 2 or forces.shape[-2:] != (n, 3):
        raise DataLayoutError(f"forces must have shape (..., {n}, 3) for this layout, got {forces.shape}")
