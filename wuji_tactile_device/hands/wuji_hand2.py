"""Wuji Hand 2 (Beta 2) kinematics as data, for both hands, plus numpy forward kinematics.

Shared by the simulated hand (`producers/sim`) and the hardware producer, so the metadata both
publish (segment and taxel bind poses in the OpenXR wrist frame) comes from one function.

Source: the right hand's URDF/MJCF numbers, restated in docs/kinematics.md. The left hand is the right hand mirrored
through the wrist's xz-plane (y → −y): positions (x, −y, z), rotations S·R·S with S = diag(1,−1,1)
(quaternion (w, x, y, z) → (w, −x, y, −z)), hinge axes as pseudovectors −S·a (flexion (1,0,0) →
(−1,0,0), abduction (0,1,0) unchanged); joint ranges are unchanged because the same angle gives
the mirrored motion.

Frames (all right-handed):
- `r_wrist`: fingers extend along −z at q = 0, index at +x, pinky at −x, palm side +y.
  The OpenXR wrist frame of the right hand is `r_wrist` turned 180° about z (+X to the little
  finger, +Y out of the back of the hand, +Z toward the forearm). `l_wrist` already is the left
  hand's OpenXR wrist frame (+X to the thumb side).
- Distal body (= `<finger>_tip_sensor_frame`, fixed at zero offset): origin on the DIP / thumb IP
  axis, tip along −z; the palm (pad) side is +y on the right hand, −y on the left.
- Segment frame (OpenXR joint-local convention, used for `segment_bind_poses`): same origin as
  the distal body, +Z along the bone away from the fingertip, +Y toward the nail in the open hand,
  +X = Y × Z. Right hand: distal body turned 180° about its z; left hand: the distal body itself.

Joint angles `q` are 20 radians in firmware order (thumb cmc_flex, cmc_abd, mcp, ip; then index,
middle, ring, pinky with mcp_flex, mcp_abd, pip, dip). Poses are (7,) arrays x, y, z [m],
qx, qy, qz, qw.
"""
from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Mapping, Sequence

import numpy as np

from ..contract.geometry import pose_compose, pose_from_matrix, quat_to_matrix
from ..contract.joints import FINGERS, HandJoint
from ..contract.metadata import TactileMetadata
from ..errors import ProducerError

SIDES = ("right", "left")
#: Taxels per pad, in FINGERS order (thumb 40, others 34; 176 in all).
TAXELS_PER_FINGER = (40, 34, 34, 34, 34)
#: Actuated joints of the hand (4 per finger), the length of a joint-angle vector `q`.
NUM_ACTUATED_JOINTS = 20

#: Name stem of each finger's bodies/joints/sites in the Wuji description (`r_` / `l_` prefixed).
FINGER_STEM = {"thumb": "thumb", "index": "index_finger", "middle": "middle_finger",
               "ring": "ring_finger", "pinky": "pinky"}
#: Actuator name stem per finger (`r_THJ0` … `r_LFJ3`, J0 = first joint … J3 = distal joint).
ACTUATOR_STEM = {"thumb": "TH", "index": "FF", "middle": "MF", "ring": "RF", "pinky": "LF"}
#: Body name suffixes of the four moving links of a finger, proximal → distal.
LINK_SUFFIXES = ("proximal", "proximal_abd", "middle", "distal")
JOINT_SUFFIXES = {"thumb": ("cmc_flex", "cmc_abd", "mcp", "ip"),
                  "finger": ("mcp_flex", "mcp_abd", "pip", "dip")}
#: Which joint of each finger bends about the flexion axis (the others abduct).
JOINT_KINDS = ("flex", "abd", "flex", "flex")

_FLEX_AXIS_RIGHT = (1.0, 0.0, 0.0)
_ABD_AXIS = (0.0, 1.0, 0.0)

# Right hand (docs/kinematics.md): (pos in parent [m], quat w x y z, joint range [rad]) per link.
_IDENTITY_WXYZ = (1.0, 0.0, 0.0, 0.0)
_FINGER_ABD = ((0.0, -0.001201, -0.0145), _IDENTITY_WXYZ, (-0.698, 0.698))
_RIGHT_TABLE: dict[str, tuple] = {
    "thumb": (
        ((0.01721, 0.008138, -0.016458), (0.62943, -0.0606446, -0.720105, 0.285638), (-1.187, 1.291)),
        ((0.00024788, -0.00053658, -0.014754), (0.934711, 0.0919289, 0.342519, -0.0233666), (-1.484, 0.698)),
        ((0.0, 0.0, -0.0325), (0.959136, -0.0122059, 0.0418766, 0.279562), (-1.047, 1.57)),
        ((-5e-05, 0.0, -0.035), _IDENTITY_WXYZ, (-1.047, 1.57)),
    ),
    "index": (
        ((0.022661, -0.0033252, -0.069975), (0.996267, -0.0163875, -0.0693676, 0.0486957), (-1.047, 1.57)),
        _FINGER_ABD,
        ((0.0, 0.0, -0.0376), _IDENTITY_WXYZ, (-1.047, 2.094)),
        ((0.0, 0.0, -0.0295), _IDENTITY_WXYZ, (-1.047, 1.57)),
    ),
    "middle": (
        ((0.00095202, -0.008303, -0.073915), (0.999841, -0.016952, 0.00552374, -0.000264052), (-1.047, 1.57)),
        _FINGER_ABD,
        ((0.0, 0.0, -0.0376), _IDENTITY_WXYZ, (-1.047, 2.094)),
        ((0.0, 0.0, -0.0295), _IDENTITY_WXYZ, (-1.047, 1.57)),
    ),
    "ring": (
        ((-0.019744, -0.0055929, -0.0654), (0.996897, -0.00588522, 0.0709958, -0.0334777), (-1.047, 1.57)),
        _FINGER_ABD,
        ((0.0, 0.0, -0.0376), _IDENTITY_WXYZ, (-1.047, 2.094)),
        ((0.0, 0.0, -0.0295), _IDENTITY_WXYZ, (-1.047, 1.57)),
    ),
    "pinky": (
        ((-0.037351, -0.00073376, -0.055296), (0.98999, -0.00638516, 0.124818, -0.0655712), (-1.047, 1.57)),
        _FINGER_ABD,
        ((0.0001, 0.0, -0.0336), _IDENTITY_WXYZ, (-1.047, 2.094)),
        ((0.0, 0.0, -0.0275), _IDENTITY_WXYZ, (-1.047, 1.57)),
    ),
}
#: Fingertip site on the distal body (thumb `r_thumb_tip`, others `r_<stem>_tip`), right hand [m].
_TIP_SITE_RIGHT = {"thumb": (0.0, 0.0, -0.02978), "index": (0.0, 0.0, -0.02475),
                   "middle": (0.0, 0.0, -0.02475), "ring": (0.0, 0.0, -0.02475),
                   "pinky": (0.0, 0.0, -0.02475)}
#: Body masses [kg] (docs/kinematics.md; the thumb's proximal/abd/middle take the finger values — the source
#: gives only its distal and pad masses).
MASSES = {"wrist": 0.2323, "proximal": 0.0116, "proximal_abd": 0.0339, "middle": 0.0212,
          "distal": 0.005, "pad": 0.003, "thumb_distal": 0.0109, "thumb_pad": 0.0063}


@dataclass(frozen=True)
class Link:
    """One moving link of a finger and the hinge joint at its origin (parent-frame data)."""

    body: str        # e.g. "r_index_finger_middle"
    joint: str       # e.g. "r_index_finger_pip"
    actuator: str    # e.g. "r_FFJ2"
    pos: tuple[float, float, float]            # origin in the parent body [m]
    quat_wxyz: tuple[float, float, float, float]  # orientation in the parent body (MuJoCo order)
    axis: tuple[float, float, float]           # hinge axis in this body's frame
    range: tuple[float, float]                 # joint limits [rad]
    kind: str                                  # "flex" or "abd"
    mass: float                                # [kg]


@dataclass(frozen=True)
class FingerKinematics:
    finger: str
    links: tuple[Link, Link, Link, Link]
    pad_body: str    # "<p>_<stem>_tip_sensor_frame", fixed to the distal body at zero offset
    tip_site: str    # "<p>_<stem>_tip"
    tip_site_pos: tuple[float, float, float]  # in the distal body [m]
    pad_mass: float


@dataclass(frozen=True)
class HandKinematics:
    side: str
    prefix: str                 # "r_" or "l_"
    wrist_body: str             # "r_wrist" / "l_wrist"
    wrist_mass: float
    fingers: tuple[FingerKinematics, ...]  # FINGERS order

    @property
    def joint_names(self) -> tuple[str, ...]:
        """The 20 joint names in firmware order."""
        return tuple(link.joint for f in self.fingers for link in f.links)

    @property
    def actuator_names(self) -> tuple[str, ...]:
        return tuple(link.actuator for f in self.fingers for link in f.links)

    @property
    def joint_ranges(self) -> np.ndarray:
        """(20, 2) joint limits [rad], firmware order."""
        return np.array([link.range for f in self.fingers for link in f.links], dtype=np.float64)


def _check_side(side: str) -> str:
    if side not in SIDES:
        raise ProducerError(f"hand side must be one of {SIDES}, got {side!r}")
    return side


def _mirror_pos(p, left: bool):
    return (p[0], -p[1], p[2]) if left else tuple(p)


def _mirror_quat(q, left: bool):
    return (q[0], -q[1], q[2], -q[3]) if left else tuple(q)


def hand_kinematics(side: str) -> HandKinematics:
    """The kinematic table of one hand (names with `r_`/`l_`, offsets, axes, ranges, masses)."""
    left = _check_side(side) == "left"
    p = "l_" if left else "r_"
    flex_axis = (-1.0, 0.0, 0.0) if left else _FLEX_AXIS_RIGHT
    fingers = []
    for finger in FINGERS:
        stem = FINGER_STEM[finger]
        joint_suffixes = JOINT_SUFFIXES["thumb" if finger == "thumb" else "finger"]
        links = []
        for i, ((pos, quat, rng), suffix, jsuffix, kind) in enumerate(
                zip(_RIGHT_TABLE[finger], LINK_SUFFIXES, joint_suffixes, JOINT_KINDS, strict=True)):
            mass = MASSES["thumb_distal"] if (finger == "thumb" and suffix == "distal") else MASSES[suffix]
            links.append(Link(
                body=f"{p}{stem}_{suffix}", joint=f"{p}{stem}_{jsuffix}",
                actuator=f"{p}{ACTUATOR_STEM[finger]}J{i}",
                pos=_mirror_pos(pos, left), quat_wxyz=_mirror_quat(quat, left),
                axis=flex_axis if kind == "flex" else _ABD_AXIS, range=rng, kind=kind, mass=mass))
        proximal, proximal_abd, middle, distal = links  # four links per finger (LINK_SUFFIXES), or a ValueError
        fingers.append(FingerKinematics(
            finger=finger, links=(proximal, proximal_abd, middle, distal), pad_body=f"{p}{stem}_tip_sensor_frame",
            tip_site=f"{p}{stem}_tip", tip_site_pos=_TIP_SITE_RIGHT[finger],
            pad_mass=MASSES["thumb_pad" if finger == "thumb" else "pad"]))
    return HandKinematics(side=side, prefix=p, wrist_body=f"{p}wrist", wrist_mass=MASSES["wrist"],
                          fingers=tuple(fingers))


# --- transforms: 4×4 homogeneous matrices here, (7,) poses at the contract boundary -------------

def _quat_wxyz_to_matrix(q) -> np.ndarray:
    """Rotation of a MuJoCo-style (w, x, y, z) quaternion (normalised first)."""
    w, x, y, z = np.asarray(q, dtype=np.float64) / np.linalg.norm(q)
    return quat_to_matrix((x, y, z, w))


def _axis_angle_matrix(axis, angle: float) -> np.ndarray:
    a = np.asarray(axis, dtype=np.float64)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * (k @ k)


def matrix_to_pose(T: np.ndarray) -> np.ndarray:
    """4×4 homogeneous transform(s) `(..., 4, 4)` → pose(s) `(..., 7)` x y z qx qy qz qw, qw ≥ 0."""
    T = np.asarray(T, dtype=np.float64)
    return pose_from_matrix(T[..., :3, :3], T[..., :3, 3])


def _rigid(R: np.ndarray, t) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = t
    return T


_RZ_PI = _rigid(np.diag([-1.0, -1.0, 1.0]), (0.0, 0.0, 0.0))

#: `T_openxr_wrist ← base wrist body`: right = r_wrist turned 180° about z; left = l_wrist.
WRIST_TO_OPENXR = {"right": _RZ_PI, "left": np.eye(4)}
#: Segment (OpenXR joint-local) frame in the distal body frame: right turned 180° about z.
SEGMENT_IN_DISTAL = {"right": _RZ_PI, "left": np.eye(4)}


def _as_q(q: Sequence[float] | np.ndarray | None) -> np.ndarray:
    if q is None:
        return np.zeros(NUM_ACTUATED_JOINTS)
    q = np.asarray(q, dtype=np.float64)
    if q.shape != (NUM_ACTUATED_JOINTS,):
        raise ProducerError(f"joint angles must be {NUM_ACTUATED_JOINTS} values in firmware order, got shape {q.shape}")
    if not np.all(np.isfinite(q)):
        raise ProducerError(f"joint angles must be finite, got {q.tolist()}")
    return q


def link_transforms(side: str, q=None) -> dict[str, np.ndarray]:
    """4×4 transforms of every finger body in the *base wrist body* frame (`r_wrist`/`l_wrist`),
    keyed by body name, at joint angles `q` (firmware order; None = open hand, all zeros)."""
    kin = hand_kinematics(side)
    q = _as_q(q)
    out: dict[str, np.ndarray] = {}
    for fi, f in enumerate(kin.fingers):
        T = np.eye(4)
        for li, link in enumerate(f.links):
            T = T @ _rigid(_quat_wxyz_to_matrix(link.quat_wxyz), link.pos)
            T = T @ _rigid(_axis_angle_matrix(link.axis, q[4 * fi + li]), (0.0, 0.0, 0.0))
            out[link.body] = T
        out[f.pad_body] = T
    return out


def segment_poses_in_wrist(side: str, q=None) -> dict[str, np.ndarray]:
    """Pose (7,) of each finger's distal *segment* in the OpenXR wrist frame, in the OpenXR
    joint-local convention (+Z away from the fingertip, +Y toward the nail at the open hand).
    These are the LBS segment poses: `segment_bind_poses` at q = None, current poses otherwise."""
    Tw = WRIST_TO_OPENXR[_check_side(side)]
    S = SEGMENT_IN_DISTAL[side]
    links = link_transforms(side, q)
    kin = hand_kinematics(side)
    return {f.finger: matrix_to_pose(Tw @ links[f.pad_body] @ S) for f in kin.fingers}


#: The OpenXR joint of each finger's distal segment (the segment its pad rides on).
DISTAL_JOINTS = {"thumb": HandJoint.THUMB_DISTAL, "index": HandJoint.INDEX_DISTAL,
                 "middle": HandJoint.MIDDLE_DISTAL, "ring": HandJoint.RING_DISTAL,
                 "pinky": HandJoint.LITTLE_DISTAL}


def taxel_poses_in_wrist(side: str, taxel_poses_in_distal: Mapping[str, np.ndarray] | Sequence[np.ndarray],
                         q=None) -> np.ndarray:
    """(N, 7) taxel poses in the OpenXR wrist frame from per-finger taxel poses (n_f, 7) given in
    the distal body (= tip_sensor_frame) frame, concatenated thumb → pinky, at angles `q`."""
    per_finger = _per_finger(taxel_poses_in_distal)
    Tw = WRIST_TO_OPENXR[_check_side(side)]
    links = link_transforms(side, q)
    kin = hand_kinematics(side)
    out = []
    for f, local in zip(kin.fingers, per_finger, strict=True):
        Td = Tw @ links[f.pad_body]
        out.append(_compose_poses(Td, local))
    return np.concatenate(out, axis=0)


def _per_finger(taxel_poses) -> list[np.ndarray]:
    if isinstance(taxel_poses, Mapping):
        missing = [f for f in FINGERS if f not in taxel_poses]
        if missing:
            raise ProducerError(f"taxel poses missing for finger(s) {missing}")
        seq = [taxel_poses[f] for f in FINGERS]
    else:
        seq = list(taxel_poses)
        if len(seq) != len(FINGERS):
            raise ProducerError(f"taxel poses: need one array per finger ({len(FINGERS)}), got {len(seq)}")
    out = []
    for f, a in zip(FINGERS, seq, strict=True):
        a = np.asarray(a, dtype=np.float64)
        if a.ndim != 2 or a.shape[1] != 7 or a.shape[0] == 0:
            raise ProducerError(f"taxel poses of {f}: need shape (n, 7), got {a.shape}")
        out.append(a)
    return out


def _compose_poses(T: np.ndarray, poses: np.ndarray) -> np.ndarray:
    """Left-compose a 4×4 transform with (n, 7) poses; quaternions returned with qw ≥ 0."""
    out = pose_compose(matrix_to_pose(T), poses)
    out[..., 3:] /= np.linalg.norm(out[..., 3:], axis=-1, keepdims=True)
    out[out[:, 6] < 0, 3:] *= -1.0
    return out


def lbs_metadata(side: str, taxel_poses_in_distal: Mapping[str, np.ndarray] | Sequence[np.ndarray]):
    """The `TactileMetadata` both producers publish for one hand.

    Segments: the five distal joints (THUMB_DISTAL … LITTLE_DISTAL) with their segment bind poses
    (OpenXR joint-local convention) in the OpenXR wrist frame at the open-hand bind configuration;
    taxels: `taxel_poses_in_distal` (per finger, (n_f, 7), in the distal body = tip_sensor_frame)
    carried to the same wrist frame and configuration; rigid weights (1, 0, 0, 0), the segment
    index repeated in all four slots."""
    per_finger = _per_finger(taxel_poses_in_distal)
    joints = DISTAL_JOINTS
    seg = segment_poses_in_wrist(side)
    segment_bind = np.stack([seg[f] for f in FINGERS])
    taxel_bind = taxel_poses_in_wrist(side, per_finger)
    counts = [len(a) for a in per_finger]
    return TactileMetadata.rigid(tuple(joints[f] for f in FINGERS), segment_bind, taxel_bind,
                                 np.repeat(np.arange(len(FINGERS)), counts))
