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

HandJoint = enum.IntEnum(  # type: ignore[misc]
    "HandJoint",
    [(k, v) for k, v in vars(_GeneratedHandJoint.HandJoint).items() if k.isupper()],
    module=__name__,
)
HandJoint.__doc__ = ("OpenXR hand joint ids (PALM=0, WRIST=1, ... LITTLE_TIP=25); NUM_JOINTS=26 is a count, "
                     "not a joint.")

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
