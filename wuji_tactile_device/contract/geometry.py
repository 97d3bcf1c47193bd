"""Poses, frames and linear blend skinning, vectorised over leading axes with numpy.

A pose is `(..., 7)` = x, y, z [m], qx, qy, qz, qw (unit quaternion, identity = 0, 0, 0, 1) and
maps local into reference coordinates: `p_ref = R(q) p_local + t`. `pose_compose(a, b)` is a∘b
(apply b, then a). `T_A_B` maps points from frame B into frame A. All arithmetic is float64.
"""
from __future__ import annotations

import numpy as np

from ..errors import DataLayoutError
from .metadata import TactileMetadata

IDENTITY_POSE = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])


def _f64(a: object) -> np.ndarray:
    return np.asarray(a, dtype=np.float64)


def _poses(p: object, name: str = "pose") -> np.ndarray:
    p = _f64(p)
    if p.shape[-1:] != (7,):
        raise DataLayoutError(f"{name} must have shape (..., 7) = x y z qx qy qz qw, got {p.shape}")
    return p


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a × b over the last axis (np.cross costs ~10 µs of overhead on small arrays)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def quat_multiply(a: object, b: object) -> np.ndarray:
    """Hamilton product a·b of (x, y, z, w) quaternions."""
    a, b = _f64(a), _f64(b)
    av, aw = a[..., :3], a[..., 3:4]
    bv, bw = b[..., :3], b[..., 3:4]
    v = aw * bv + bw * av + _cross(av, bv)
    w = aw * bw - (av * bv).sum(axis=-1, keepdims=True)
    return np.concatenate([v, w], axis=-1)


def quat_conjugate(q: object) -> np.ndarray:
    q = _f64(q)
    return np.concatenate([-q[..., :3], q[..., 3:]], axis=-1)


def quat_rotate(q: object, v: object) -> np.ndarray:
    """Rotate vectors `v (..., 3)` by unit quaternions `q (..., 4)`."""
    q, v = _f64(q), _f64(v)
    u, w = q[..., :3], q[..., 3:4]
    t = 2.0 * _cross(u, v)
    return v + w * t + _cross(u, t)


def quat_to_matrix(q: object) -> np.ndarray:
    """Rotation matrices `(..., 3, 3)` of unit quaternions `(..., 4)` (x, y, z, w)."""
    q = _f64(q)
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    m = np.empty(q.shape[:-1] + (3, 3))
    m[..., 0, 0] = 1 - 2 * (y * y + z * z)
    m[..., 0, 1] = 2 * (x * y - z * w)
    m[..., 0, 2] = 2 * (x * z + y * w)
    m[..., 1, 0] = 2 * (x * y + z * w)
    m[..., 1, 1] = 1 - 2 * (x * x + z * z)
    m[..., 1, 2] = 2 * (y * z - x * w)
    m[..., 2, 0] = 2 * (x * z - y * w)
    m[..., 2, 1] = 2 * (y * z + x * w)
    m[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return m


def matrix_to_quat(m: object) -> np.ndarray:
    """Unit quaternions `(..., 4)` (x, y, z, w), w >= 0, of rotation matrices `(..., 3, 3)`."""
    m = _f64(m)
    # Four candidate formulas; per matrix use the one with the largest (best-conditioned) root.
    d0, d1, d2 = m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]
    cand = np.stack([1 + d0 + d1 + d2, 1 + d0 - d1 - d2, 1 - d0 + d1 - d2, 1 - d0 - d1 + d2], axis=-1)
    k = np.argmax(cand, axis=-1)
    s = 2.0 * np.sqrt(np.maximum(np.take_along_axis(cand, k[..., None], -1)[..., 0], 1e-300))
    r21, r12, r02, r20, r10, r01 = m[..., 2, 1], m[..., 1, 2], m[..., 0, 2], m[..., 2, 0], m[..., 1, 0], m[..., 0, 1]
    choices = [
        np.stack([(r21 - r12) / s, (r02 - r20) / s, (r10 - r01) / s, 0.25 * s], -1),
        np.stack([0.25 * s, (r01 + r10) / s, (r02 + r20) / s, (r21 - r12) / s], -1),
        np.stack([(r01 + r10) / s, 0.25 * s, (r12 + r21) / s, (r02 - r20) / s], -1),
        np.stack([(r02 + r20) / s, (r12 + r21) / s, 0.25 * s, (r10 - r01) / s], -1),
    ]
    q = np.choose(k[..., None], choices)
    q *= np.where(q[..., 3:4] < 0, -1.0, 1.0)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def rpy_to_matrix(rpy: object) -> np.ndarray:
    """`R = Rz(yaw) · Ry(pitch) · Rx(roll)` for `rpy (..., 3)` = roll, pitch, yaw [rad]."""
    rpy = _f64(rpy)
    cr, sr = np.cos(rpy[..., 0]), np.sin(rpy[..., 0])
    cp, sp = np.cos(rpy[..., 1]), np.sin(rpy[..., 1])
    cy, sy = np.cos(rpy[..., 2]), np.sin(rpy[..., 2])
    m = np.empty(rpy.shape[:-1] + (3, 3))
    m[..., 0, 0] = cy * cp
    m[..., 0, 1] = cy * sp * sr - sy * cr
    m[..., 0, 2] = cy * sp * cr + sy * sr
    m[..., 1, 0] = sy * cp
    m[..., 1, 1] = sy * sp * sr + cy * cr
    m[..., 1, 2] = sy * sp * cr - cy * sr
    m[..., 2, 0] = -sp
    m[..., 2, 1] = cp * sr
    m[..., 2, 2] = cp * cr
    return m


def matrix_to_rpy(m: object) -> np.ndarray:
    """Inverse of `rpy_to_matrix`: roll, pitch, yaw `(..., 3)` [rad] of rotations `(..., 3, 3)`.
    At pitch = ±90° only roll − yaw is defined; yaw is then set to 0."""
    m = _f64(m)
    pitch = np.arcsin(np.clip(-m[..., 2, 0], -1.0, 1.0))
    lock = np.abs(m[..., 2, 0]) > 1.0 - 1e-12
    roll = np.where(lock, np.arctan2(-m[..., 1, 2], m[..., 1, 1]), np.arctan2(m[..., 2, 1], m[..., 2, 2]))
    yaw = np.where(lock, 0.0, np.arctan2(m[..., 1, 0], m[..., 0, 0]))
    return np.stack([roll, pitch, yaw], axis=-1)


def pose_from_matrix(rotation: object, translation: object) -> np.ndarray:
    """Poses `(..., 7)` from rotations `(..., 3, 3)` and translations `(..., 3)` [m]."""
    return np.concatenate([_f64(translation), matrix_to_quat(rotation)], axis=-1)


def pose_to_matrix(p: object) -> np.ndarray:
    """Homogeneous transforms `(..., 4, 4)` of poses `(..., 7)`."""
    p = _poses(p)
    m = np.zeros(p.shape[:-1] + (4, 4))
    m[..., :3, :3] = quat_to_matrix(p[..., 3:])
    m[..., :3, 3] = p[..., :3]
    m[..., 3, 3] = 1.0
    return m


def pose_compose(a: object, b: object) -> np.ndarray:
    """a∘b: the pose mapping b-local coordinates into a's reference frame (T_A_C = T_A_B ∘ T_B_C)."""
    a, b = _poses(a, "a"), _poses(b, "b")
    return np.concatenate([a[..., :3] + quat_rotate(a[..., 3:], b[..., :3]), quat_multiply(a[..., 3:], b[..., 3:])], -1)


def pose_invert(p: object) -> np.ndarray:
    """Inverse poses (T_B_A from T_A_B)."""
    p = _poses(p)
    qi = quat_conjugate(p[..., 3:])
    return np.concatenate([-quat_rotate(qi, p[..., :3]), qi], axis=-1)


def pose_apply(p: object, points: object) -> np.ndarray:
    """Map points `(..., 3)` [m] from local into reference coordinates: R p + t."""
    p = _poses(p)
    return quat_rotate(p[..., 3:], points) + p[..., :3]


def pose_rotate(p: object, vectors: object) -> np.ndarray:
    """Rotate direction vectors (forces, normals) by the poses' rotations only: no translation."""
    return quat_rotate(_poses(p)[..., 3:], vectors)


def rebase_to_root(T_base_wrist: object, T_base_joints: object) -> np.ndarray:
    """Joint poses in the wrist (skeleton root) frame from one hand sample in base space:
    `T_root_joint = T_base_wrist⁻¹ · T_base_joint` (uses the wrist's rotation AND translation)."""
    return pose_compose(pose_invert(T_base_wrist), T_base_joints)


def _segment_transforms(segment_bind_poses: object, current_segment_poses: object) -> np.ndarray:
    """`C[j] · B[j]⁻¹` for every segment, as `(J, 7)` poses in the root frame."""
    B, C = _poses(segment_bind_poses, "segment_bind_poses"), _poses(current_segment_poses, "current_segment_poses")
    if B.shape != C.shape:
        raise DataLayoutError(f"current segment poses {C.shape} do not match the {B.shape} segment bind poses")
    return pose_compose(C, pose_invert(B))


def lbs_positions(segment_bind_poses: object, current_segment_poses: object, bind_positions: object,
                  segment_indices: object, segment_weights: object) -> np.ndarray:
    """Linear blend skinning of all taxels at once, in the root (wrist) frame [m]:
    `p_root = Σ_k w[k] · C[j[k]] · B[j[k]]⁻¹ · p_bind`, shapes (J,7), (J,7), (N,3), (N,4), (N,4)."""
    M = pose_to_matrix(_segment_transforms(segment_bind_poses, current_segment_poses))[:, :3, :]  # (J, 3, 4)
    idx = np.asarray(segment_indices, dtype=np.intp)
    p = _f64(bind_positions)
    moved = np.einsum("nkab,nb->nka", M[idx, :, :3], p) + M[idx, :, 3]  # (N, 4, 3)
    return np.einsum("nk,nka->na", _f64(segment_weights), moved)


def skin_taxel_positions(metadata: TactileMetadata, current_segment_poses: object) -> np.ndarray:
    """Current taxel positions `(N, 3)` [m] in the wrist frame, by LBS of the metadata's layout with
    the segments' current poses `(J, 7)` in the wrist frame (see `rebase_to_root`)."""
    return lbs_positions(metadata.segment_bind_poses, current_segment_poses, metadata.taxel_bind_poses[:, :3],
                         metadata.segment_indices, metadata.segment_weights)


def rigid_segment_of_taxels(metadata: TactileMetadata) -> np.ndarray:
    """The one segment each taxel rides on, `(N,)`; `DataLayoutError` for a blended taxel (weight
    on two different segments), whose frame LBS does not define."""
    idx, w = metadata.segment_indices, metadata.segment_weights
    carried = np.where(w > 0, idx, -1)
    main = idx[np.arange(len(idx)), np.argmax(w, axis=1)]
    blended = ((carried != -1) & (carried != main[:, None])).any(axis=1)
    if blended.any():
        taxel = int(np.argmax(blended))
        raise DataLayoutError(f"taxel {taxel} is blended across segments {sorted(int(v) for v in set(carried[taxel].tolist()) - {-1})}; "
                              "a rigid taxel frame needs all weight on one segment")
    return main


def rigid_taxel_poses(metadata: TactileMetadata, current_segment_poses: object) -> np.ndarray:
    """Current taxel frames `(N, 7)` in the wrist frame for rigidly attached taxels:
    `C[j] · B[j]⁻¹ · T_root_taxel_bind`."""
    M = _segment_transforms(metadata.segment_bind_poses, current_segment_poses)
    return pose_compose(M[rigid_segment_of_taxels(metadata)], metadata.taxel_bind_poses)


def taxel_forces_in_root(metadata: TactileMetadata, current_segment_poses: object, forces: object) -> np.ndarray:
    """Forces `(N, 3)` [N] from taxel axes into wrist-frame axes (rotation only, rigid taxels)."""
    return pose_rotate(rigid_taxel_poses(metadata, current_segment_poses), forces)
