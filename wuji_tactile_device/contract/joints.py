"""OpenXR hand joints and the five finger pads, as the contract names them.

`HandJoint` is built from the generated schema enum (schema/hand.fbs stays the single source) and
equals Isaac Teleop's `isaacteleop.schema.HandJoint`: PALM=0, WRIST=1, THUMB_METACARPAL=2 …
THUMB_TIP=5 (no thumb intermediate), INDEX 6–10, MIDDLE 11–15, RING 16–20, LITTLE 21–25.
`NUM_HAND_JOINTS` (26) is a count, never a usable joint.
"""
from __future__ import annotations

import enum

import numpy as np

from ..generated.core import HandJoint as _GeneratedHandJoint

_G = _GeneratedHandJoint.HandJoint


class HandJoint(enum.IntEnum):
    """OpenXR hand joint ids (PALM=0, WRIST=1, ... LITTLE_TIP=25); NUM_JOINTS=26 is a count, not a joint."""

    # Names spelled out so a type checker sees the members; every value is the schema's.
    PALM = _G.PALM
    WRIST = _G.WRIST
    THUMB_METACARPAL = _G.THUMB_METACARPAL
    THUMB_PROXIMAL = _G.THUMB_PROXIMAL
    THUMB_DISTAL = _G.THUMB_DISTAL
    THUMB_TIP = _G.THUMB_TIP
    INDEX_METACARPAL = _G.INDEX_METACARPAL
    INDEX_PROXIMAL = _G.INDEX_PROXIMAL
    INDEX_INTERMEDIATE = _G.INDEX_INTERMEDIATE
    INDEX_DISTAL = _G.INDEX_DISTAL
    INDEX_TIP = _G.INDEX_TIP
    MIDDLE_METACARPAL = _G.MIDDLE_METACARPAL
    MIDDLE_PROXIMAL = _G.MIDDLE_PROXIMAL
    MIDDLE_INTERMEDIATE = _G.MIDDLE_INTERMEDIATE
    MIDDLE_DISTAL = _G.MIDDLE_DISTAL
    MIDDLE_TIP = _G.MIDDLE_TIP
    RING_METACARPAL = _G.RING_METACARPAL
    RING_PROXIMAL = _G.RING_PROXIMAL
    RING_INTERMEDIATE = _G.RING_INTERMEDIATE
    RING_DISTAL = _G.RING_DISTAL
    RING_TIP = _G.RING_TIP
    LITTLE_METACARPAL = _G.LITTLE_METACARPAL
    LITTLE_PROXIMAL = _G.LITTLE_PROXIMAL
    LITTLE_INTERMEDIATE = _G.LITTLE_INTERMEDIATE
    LITTLE_DISTAL = _G.LITTLE_DISTAL
    LITTLE_TIP = _G.LITTLE_TIP
    NUM_JOINTS = _G.NUM_JOINTS


_SCHEMA_NAMES = {k for k in vars(_G) if k.isupper()}
if _SCHEMA_NAMES != set(HandJoint.__members__):  # the schema gained or lost a joint: name it here too
    raise ImportError(f"HandJoint is out of step with schema/hand.fbs: schema only {sorted(_SCHEMA_NAMES - set(HandJoint.__members__))}, "
                      f"HandJoint only {sorted(set(HandJoint.__members__) - _SCHEMA_NAMES)}")

#: Number of OpenXR hand joints (26): the length of a full hand-pose array.
NUM_HAND_JOINTS = int(HandJoint.NUM_JOINTS)

#: Finger pads in the contract's order (and Isaac Teleop's `FingerIndex` order).
FINGERS = ("thumb", "index", "middle", "ring", "pinky")
NUM_FINGERS = len(FINGERS)

#: Finger index (0 thumb … 4 pinky) of every OpenXR joint id; -1 for PALM and WRIST.
FINGER_OF_JOINT = np.full(NUM_HAND_JOINTS, -1, dtype=np.int64)
FINGER_OF_JOINT[2:6] = 0
FINGER_OF_JOINT[6:11] = 1
FINGER_OF_JOINT[11:16] = 2
FINGER_OF_JOINT[16:21] = 3
FINGER_OF_JOINT[21:26] = 4
FINGER_OF_JOINT.flags.writeable = False
