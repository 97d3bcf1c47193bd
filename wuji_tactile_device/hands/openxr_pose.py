"""The Wuji Hand 2's 26 OpenXR hand joint poses from its joint angles (forward kinematics).

Isaac Teleop's hand tracker describes a hand by 26 joint poses in OpenXR order (`HandJoint`), each
in the tracker's base space, in the OpenXR joint-local convention: origin on the joint, +Z along
the bone away from the fingertip, +Y out of the back of the finger at the open hand. The robot
hand has its own links; they map onto OpenXR joints as follows (all from `wuji_hand2`):

- WRIST: the OpenXR wrist frame (`WRIST_TO_OPENXR`).
- Fingers: METACARPAL at the wrist origin with the orientation of the finger's MCP mount (the palm
  is rigid, so the metacarpal bone has no joint of its own); PROXIMAL on the MCP flexion axis with
  the orientation of the link after both MCP rotations; INTERMEDIATE on the PIP axis; DISTAL on the
  DIP axis (exactly the tactile metadata's segment frame); TIP at the fingertip site.
- Thumb: METACARPAL on the CMC flexion axis (orientation after both CMC rotations), PROXIMAL on
  the MCP axis, DISTAL on the IP axis, TIP at the fingertip site.
- PALM: midway between the wrist origin and the middle finger's MCP, with the wrist's orientation.

Every joint is valid; `JOINT_RADIUS_M` is a nominal radius (the hand has no per-joint value).
Poses are (26, 7) float64 x, y, z [m], qx, qy, qz, qw (qw ≥ 0).
"""
from __future__ import annotations

import numpy as np

from ..contract.joints import HandJoint
from .wuji_hand2 import (SEGMENT_IN_DISTAL, WRIST_TO_OPENXR, _check_side, _quat_wxyz_to_matrix, _rigid,
                         hand_kinematics, link_transforms, matrix_to_pose)

NUM_JOINTS = int(HandJoint.NUM_JOINTS)
#: Nominal joint radius written with every joint [m] (half a finger link's thickness).
JOINT_RADIUS_M = 0.008

#: OpenXR joints of each finger, proximal → tip, and which Wuji link frame each one takes.
_FINGER_JOINTS = {
    "index": (HandJoint.INDEX_METACARPAL, HandJoint.INDEX_PROXIMAL, HandJoint.INDEX_INTERMEDIATE,
              HandJoint.INDEX_DISTAL, HandJoint.INDEX_TIP),
    "middle": (HandJoint.MIDDLE_METACARPAL, HandJoint.MIDDLE_PROXIMAL, HandJoint.MIDDLE_INTERMEDIATE,
               HandJoint.MIDDLE_DISTAL, HandJoint.MIDDLE_TIP),
    "ring": (HandJoint.RING_METACARPAL, HandJoint.RING_PROXIMAL, HandJoint.RING_INTERMEDIATE,
             HandJoint.RING_DISTAL, HandJoint.RING_TIP),
    "pinky": (HandJoint.LITTLE_METACARPAL, HandJoint.LITTLE_PROXIMAL, HandJoint.LITTLE_INTERMEDIATE,
              HandJoint.LITTLE_DISTAL, HandJoint.LITTLE_TIP),
}


def openxr_joint_transforms_in_wrist_body(side: str, q=None) -> np.ndarray:
    """(26, 4, 4) joint frames (OpenXR joint-local convention) in the wrist *body* frame
    (`r_wrist`/`l_wrist`) at joint angles `q` (20 rad, firmware order; None = open hand)."""
    side = _check_side(side)
    kin = hand_kinematics(side)
    links = link_transforms(side, q)
    S = SEGMENT_IN_DISTAL[side]
    out = np.tile(np.eye(4), (NUM_JOINTS, 1, 1))
    out[int(HandJoint.WRIST)] = np.linalg.inv(WRIST_TO_OPENXR[side])
    for f in kin.fingers:
        proximal, proximal_abd, middle, distal = (links[link.body] for link in f.links)
        tip = distal @ _rigid(np.eye(3), f.tip_site_pos)
        if f.finger == "thumb":
            frames = {HandJoint.THUMB_METACARPAL: _at(proximal, proximal_abd), HandJoint.THUMB_PROXIMAL: middle,
                      HandJoint.THUMB_DISTAL: distal, HandJoint.THUMB_TIP: tip}
        else:
            mount = _rigid(_quat_wxyz_to_matrix(f.links[0].quat_wxyz), f.links[0].pos)
            meta, prox, inter, dist, tip_j = _FINGER_JOINTS[f.finger]
            frames = {meta: _at(np.eye(4), mount), prox: _at(proximal, proximal_abd), inter: middle,
                      dist: distal, tip_j: tip}
        for joint, T in frames.items():
            out[int(joint)] = T @ S
    palm = out[int(HandJoint.WRIST)].copy()
    palm[:3, 3] = 0.5 * (out[int(HandJoint.MIDDLE_METACARPAL), :3, 3] + out[int(HandJoint.MIDDLE_PROXIMAL), :3, 3])
    out[int(HandJoint.PALM)] = palm
    return out


def _at(position_of: np.ndarray, orientation_of: np.ndarray) -> np.ndarray:
    """A frame at `position_of`'s origin with `orientation_of`'s rotation."""
    T = orientation_of.copy()
    T[:3, 3] = position_of[:3, 3]
    return T


def openxr_joint_poses(side: str, q=None, T_base_wrist_body: np.ndarray | None = None) -> np.ndarray:
    """(26, 7) OpenXR joint poses in a base space: `T_base_wrist_body` (4×4) places the wrist body
    (`r_wrist`/`l_wrist`) in it — for the simulator, the wrist body's pose in the simulation world;
    None = the wrist body frame itself."""
    T = openxr_joint_transforms_in_wrist_body(side, q)
    if T_base_wrist_body is not None:
        T_base = np.asarray(T_base_wrist_body, dtype=np.float64)
        if T_base.shape != (4, 4):
            raise ValueError(f"T_base_wrist_body must be a 4x4 transform, got shape {T_base.shape}")
        T = T_base @ T
    poses = np.stack([matrix_to_pose(t) for t in T])
    poses[poses[:, 6] < 0, 3:] *= -1.0
    return poses


__all__ = ["JOINT_RADIUS_M", "NUM_JOINTS", "openxr_joint_poses", "openxr_joint_transforms_in_wrist_body"]
