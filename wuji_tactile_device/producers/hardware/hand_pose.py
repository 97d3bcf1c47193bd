"""The real hand's 26 OpenXR joint poses from its measured joint angles, recorded beside the ticks.

Same kinematics as the simulator: `HandPoseSolver` evaluates exactly `hands.openxr_pose.
openxr_joint_poses` (the Wuji Hand 2 table of `hands.wuji_hand2`, the same link → OpenXR joint
map), vectorised over the five fingers so that a tick costs a few dozen numpy calls instead of
26 per-joint conversions (tests hold it equal to `openxr_joint_poses` to 1e-12).

Base space. The hand measures its joint angles, not where its wrist is: nothing on the hand
senses its pose in a room, on an arm or in a tracker's frame. So the poses are written in a
*stated* base space:
- default: the hand's own OpenXR wrist frame (+X to the little finger on the right hand / to the
  thumb on the left, +Y out of the back of the hand, +Z toward the forearm); the WRIST joint is
  the identity in every record, the fingers move relative to it;
- `base_pose` (x, y, z [m], qx, qy, qz, qw): a fixed mounting pose the user knows — the OpenXR
  wrist frame's pose in the user's base frame (e.g. a robot flange calibrated once). The WRIST
  joint is then exactly that pose in every record; it is the user's statement, not a measurement,
  and a moving arm is NOT followed.

The hardware producer hands them out as side data (`contract.side_data.EXTRA_HAND_POSES`, when
wanted); a recording writes them on Isaac Teleop's hand channels (`recording.side_channels`), one
record per hand per published tick with exactly the tactile record's `DeviceDataTimestamp` and
log time; ticks without a paired joint sample (`joint_states.JointPairing`) are written as not
tracked, so both hand channels stay in step with the tactile collection.
"""
from __future__ import annotations

from functools import cache
from collections.abc import Sequence
from typing import overload

import numpy as np

from ...contract.geometry import quat_to_matrix
from ...contract.joints import FINGERS, HandJoint
from ...hands.openxr_pose import NUM_JOINTS
from ...hands.wuji_hand2 import (NUM_ACTUATED_JOINTS, SEGMENT_IN_DISTAL, WRIST_TO_OPENXR, _check_side,
                                 _quat_wxyz_to_matrix, hand_kinematics)

#: `Frame.extras` key under which the hardware producer hands each tick's `PairedJoints` (or None).
HAND_JOINTS_EXTRA = "hand_joints"
#: How far a base-pose quaternion's norm may be from 1 before it is refused (it is normalised).
BASE_QUAT_NORM_TOLERANCE = 1e-3

#: The OpenXR name stem of each finger (FINGERS order, the order of the kinematics table).
_OPENXR_FINGER = {"thumb": "THUMB", "index": "INDEX", "middle": "MIDDLE", "ring": "RING", "pinky": "LITTLE"}

# Frame sources, as indices into the stack the solver builds each call:
#   0: the wrist body origin (rotation: the OpenXR wrist frame); 1 + f: finger f's MCP mount
#   (fixed to the palm); 6 + 4f + l: finger f's link l after its joint (0 proximal, 1 proximal_abd,
#   2 middle, 3 distal); 26 + f: finger f's tip site on the distal link.
_WRIST, _MOUNT, _LINK, _TIP, _SOURCES = 0, 1, 6, 26, 31


def _link(f: int, level: int) -> int:
    return _LINK + 4 * f + level


def _joint_sources() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per OpenXR joint: rotation source, position source (PALM: the wrist, replaced by a midpoint
    in the solver's weights), whether the OpenXR joint-local turn `SEGMENT_IN_DISTAL` applies —
    the map `hands.openxr_pose` documents."""
    rot = np.zeros(NUM_JOINTS, dtype=np.int64)
    pos = np.zeros(NUM_JOINTS, dtype=np.int64)
    segment = np.ones(NUM_JOINTS, dtype=bool)
    segment[[int(HandJoint.WRIST), int(HandJoint.PALM)]] = False
    for f, finger in enumerate(FINGERS):
        name = _OPENXR_FINGER[finger]
        if finger == "thumb":
            table = {"METACARPAL": (_link(f, 1), _link(f, 0)), "PROXIMAL": (_link(f, 2),) * 2,
                     "DISTAL": (_link(f, 3),) * 2, "TIP": (_TIP + f,) * 2}
        else:
            table = {"METACARPAL": (_MOUNT + f, _WRIST), "PROXIMAL": (_link(f, 1), _link(f, 0)),
                     "INTERMEDIATE": (_link(f, 2),) * 2, "DISTAL": (_link(f, 3),) * 2, "TIP": (_TIP + f,) * 2}
        for part, (r, p) in table.items():
            j = int(HandJoint[f"{name}_{part}"])
            rot[j], pos[j] = r, p
    return rot, pos, segment


def _dependencies(rot: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """(26, 20) bool: OpenXR joint j moves with actuated joint i. A link's frame turns with its own
    joint and every joint before it; its origin only with the joints before it (a hinge turns
    about an axis through the origin); a tip moves with all four."""
    dep = np.zeros((NUM_JOINTS, NUM_ACTUATED_JOINTS), dtype=bool)
    for j in range(NUM_JOINTS):
        for src, own in ((rot[j], True), (pos[j], False)):
            if _LINK <= src < _TIP:
                f, level = divmod(src - _LINK, 4)
                dep[j, 4 * f:4 * f + level + (1 if own else 0)] = True
            elif src >= _TIP:
                f = src - _TIP
                dep[j, 4 * f:4 * f + 4] = True
    return dep  # PALM: midway between the wrist origin and the middle MCP mount, both fixed to the palm


@overload
def as_base_pose(pose: None) -> None: ...
@overload
def as_base_pose(pose: Sequence[float] | np.ndarray) -> np.ndarray: ...


def as_base_pose(pose: Sequence[float] | np.ndarray | None) -> np.ndarray | None:
    """A base pose (x, y, z [m], qx, qy, qz, qw) as a float64 (7,) array, quaternion normalised;
    None stays None. Raises ValueError for a wrong length, non-finite values or a quaternion whose
    norm is not 1 within `BASE_QUAT_NORM_TOLERANCE`."""
    if pose is None:
        return None
    p = np.asarray(pose, dtype=np.float64).reshape(-1)
    if p.shape != (7,):
        raise ValueError(f"base pose: need 7 values x,y,z,qx,qy,qz,qw (metres, unit quaternion), got {p.size}")
    if not np.isfinite(p).all():
        raise ValueError(f"base pose: values must be finite, got {p.tolist()}")
    norm = float(np.linalg.norm(p[3:]))
    if abs(norm - 1.0) > BASE_QUAT_NORM_TOLERANCE:
        raise ValueError(f"base pose: quaternion qx,qy,qz,qw = {p[3:].tolist()} has norm {norm:.6g}; it must be a "
                         f"unit quaternion (within {BASE_QUAT_NORM_TOLERANCE:g})")
    p[3:] /= norm
    return p


def parse_base_pose(text: str) -> np.ndarray:
    """`"x,y,z,qx,qy,qz,qw"` (metres, unit quaternion) → (7,) base pose; ValueError naming the
    problem (what a `--base-pose` argument gives)."""
    parts = [s.strip() for s in str(text).split(",")]
    try:
        values = [float(s) for s in parts]
    except ValueError:
        raise ValueError(f"base pose {text!r}: expected 7 comma-separated numbers x,y,z,qx,qy,qz,qw") from None
    return as_base_pose(values)


def base_space_description(side: str, base_pose: np.ndarray | None) -> str:
    """The base space of the recorded poses, in words (the hand channels' `frame` metadata)."""
    wrist = (f"the {side} hand's OpenXR wrist frame (+X to the {'little finger' if side == 'right' else 'thumb'}, "
             "+Y out of the back of the hand, +Z toward the forearm) [m]")
    if base_pose is None:
        return wrist + "; WRIST joint = identity; the wrist's pose in the world is not measured by the hand"
    values = ",".join(f"{v:.9g}" for v in base_pose)
    return (f"user-given fixed base: {wrist} placed at x,y,z,qx,qy,qz,qw = {values}; WRIST joint = that pose "
            "(stated, not measured by the hand)")


def _quat_outer_map() -> np.ndarray:
    """(16, 10): row-major 4·q·qᵀ of a unit quaternion q = (x, y, z, w) as a linear map of its
    rotation matrix's nine entries (row-major) and 1 (e.g. 4·x·x = 1 + R00 − R11 − R22,
    4·x·w = R21 − R12)."""
    A = np.zeros((4, 4, 10))
    r = lambda i, j: 3 * i + j  # noqa: E731
    for k, signs in enumerate(((1, -1, -1), (-1, 1, -1), (-1, -1, 1), (1, 1, 1))):  # xx, yy, zz, ww
        A[k, k, 9] = 1.0
        for d, sgn in enumerate(signs):
            A[k, k, r(d, d)] = sgn
    for (a, b), (i, j) in {(0, 1): (0, 1), (0, 2): (0, 2), (1, 2): (1, 2)}.items():  # xy, xz, yz: Rij + Rji
        A[a, b, r(i, j)] = A[a, b, r(j, i)] = 1.0
        A[b, a] = A[a, b]
    for a, (i, j) in enumerate(((2, 1), (0, 2), (1, 0))):  # xw, yw, zw: Rij − Rji
        A[a, 3, r(i, j)], A[a, 3, r(j, i)] = 1.0, -1.0
        A[3, a] = A[a, 3]
    return A.reshape(16, 10)


_QUAT_OUTER_T = np.ascontiguousarray(_quat_outer_map().T)


def _rotations_to_quats(R: np.ndarray) -> np.ndarray:
    """(n, 4) unit quaternions x, y, z, w (w ≥ 0) of rotation matrices (n, 3, 3): the row of
    4·q·qᵀ with the largest diagonal entry 4·q_k², divided by 2·|q_k| (the best-conditioned of the
    four classic formulas), in a handful of numpy calls."""
    n = R.shape[0]
    flat = np.empty((n, 10))
    flat[:, :9] = R.reshape(n, 9)
    flat[:, 9] = 1.0
    P = flat @ _QUAT_OUTER_T                    # (n, 16): row-major 4·q·qᵀ
    rows = np.arange(n)
    k = np.argmax(P[:, ::5], axis=1)            # the diagonal 4·x², 4·y², 4·z², 4·w²
    row = P.reshape(n, 4, 4)[rows, k]
    q = row * (0.5 / np.sqrt(row[rows, k]))[:, None]  # 4·q_k·q / (2·|q_k|) = ±q
    q *= np.where(q[:, 3:] < 0.0, -1.0, 1.0)
    return q


@cache
def _side_tables(side: str):
    kin = hand_kinematics(side)
    links = [link for f in kin.fingers for link in f.links]
    mount_R = np.array([_quat_wxyz_to_matrix(link.quat_wxyz) for link in links]).reshape(5, 4, 3, 3)
    mount_t = np.array([link.pos for link in links], dtype=np.float64).reshape(5, 4, 3)
    axes = np.array([link.axis for link in links], dtype=np.float64)
    K = np.zeros((NUM_ACTUATED_JOINTS, 3, 3))
    K[:, 0, 1], K[:, 0, 2], K[:, 1, 2] = -axes[:, 2], axes[:, 1], -axes[:, 0]
    K[:, 1, 0], K[:, 2, 0], K[:, 2, 1] = axes[:, 2], -axes[:, 1], axes[:, 0]
    tips = np.array([f.tip_site_pos for f in kin.fingers], dtype=np.float64)
    rot, pos, segment = _joint_sources()
    post = np.tile(np.eye(3), (NUM_JOINTS, 1, 1))
    post[segment] = SEGMENT_IN_DISTAL[side][:3, :3]
    weights = np.zeros((NUM_JOINTS, _SOURCES))
    weights[np.arange(NUM_JOINTS), pos] = 1.0
    palm = int(HandJoint.PALM)
    weights[palm] = 0.5 * (weights[int(HandJoint.MIDDLE_METACARPAL)] + weights[int(HandJoint.MIDDLE_PROXIMAL)])
    for a in (mount_R, mount_t, K, tips, post, weights):
        a.flags.writeable = False
    return (mount_R, mount_t, K.reshape(5, 4, 3, 3), (K @ K).reshape(5, 4, 3, 3), tips, rot, post, weights,
            _dependencies(rot, pos))


class HandPoseSolver:
    """(26, 7) OpenXR joint poses of one hand from 20 joint angles [rad, firmware order], in the
    base space `base_pose` places the OpenXR wrist frame in (None: the wrist frame itself).
    Equals `openxr_joint_poses(side, q, T_base_wrist_body)` with T_base_wrist_body =
    T(base_pose) · WRIST_TO_OPENXR[side]."""

    def __init__(self, side: str, base_pose: Sequence[float] | np.ndarray | None = None):
        self.side = _check_side(side)
        self.base_pose = as_base_pose(base_pose)
        (self._mount_R, self._mount_t, self._K, self._K2, self._tips, self._rot, self._post, self._weights,
         self.dependencies) = _side_tables(side)
        T_base_xr = np.eye(4)
        if self.base_pose is not None:
            T_base_xr[:3, :3] = quat_to_matrix(self.base_pose[3:])
            T_base_xr[:3, 3] = self.base_pose[:3]
        T_base_body = T_base_xr @ WRIST_TO_OPENXR[self.side]
        self._Rb, self._tb = T_base_body[:3, :3].copy(), T_base_body[:3, 3].copy()
        self._R = np.empty((_SOURCES, 3, 3))
        self._t = np.zeros((_SOURCES, 3))
        self._R[_WRIST] = np.linalg.inv(WRIST_TO_OPENXR[self.side])[:3, :3]
        self._R[_MOUNT:_LINK] = self._mount_R[:, 0]
        self._t[_MOUNT:_LINK] = self._mount_t[:, 0]
        self._dep_f = self.dependencies.astype(np.float64)

    def poses(self, q: Sequence[float] | np.ndarray) -> np.ndarray:
        """(26, 7) float64 x, y, z [m], qx, qy, qz, qw (qw ≥ 0) at joint angles `q` (20,) [rad]."""
        q = np.asarray(q, dtype=np.float64)
        if q.shape != (NUM_ACTUATED_JOINTS,):
            raise ValueError(f"joint angles must be {NUM_ACTUATED_JOINTS} values in firmware order, got shape {q.shape}")
        q = q.reshape(5, 4, 1, 1)
        joint = np.sin(q) * self._K + (1.0 - np.cos(q)) * self._K2
        joint += np.eye(3)
        local = self._mount_R @ joint                       # (5, 4, 3, 3): link l in link l-1
        R = self._R[_LINK:_TIP].reshape(5, 4, 3, 3)          # views into the source stack
        t = self._t[_LINK:_TIP].reshape(5, 4, 3)
        R[:, 0], t[:, 0] = local[:, 0], self._mount_t[:, 0]
        for level in range(1, 4):                            # down the chain, all fingers at once
            t[:, level] = t[:, level - 1] + (R[:, level - 1] @ self._mount_t[:, level, :, None])[..., 0]
            R[:, level] = R[:, level - 1] @ local[:, level]
        self._R[_TIP:] = R[:, 3]
        self._t[_TIP:] = t[:, 3] + (R[:, 3] @ self._tips[:, :, None])[..., 0]
        rotations = self._Rb @ self._R[self._rot] @ self._post
        out = np.empty((NUM_JOINTS, 7))
        out[:, :3] = (self._weights @ self._t) @ self._Rb.T + self._tb
        out[:, 3:] = _rotations_to_quats(rotations)
        return out

    def valid(self, present: np.ndarray) -> np.ndarray:
        """(26,) bool: joints whose pose depends only on joints that were measured (`present`)."""
        missing = ~np.asarray(present, dtype=bool)
        return ~((self._dep_f @ missing) > 0)
