from __future__ import annotations

import flatbuffers
import numpy as np

import typing
from typing import cast

uoffset: typing.TypeAlias = flatbuffers.number_types.UOffsetTFlags.py_type

class HandJoint(object):
  PALM = cast(int, ...)
  WRIST = cast(int, ...)
  THUMB_METACARPAL = cast(int, ...)
  THUMB_PROXIMAL = cast(int, ...)
  THUMB_DISTAL = cast(int, ...)
  THUMB_TIP = cast(int, ...)
  INDEX_METACARPAL = cast(int, ...)
  INDEX_PROXIMAL = cast(int, ...)
  INDEX_INTERMEDIATE = cast(int, ...)
  INDEX_DISTAL = cast(int, ...)
  INDEX_TIP = cast(int, ...)
  MIDDLE_METACARPAL = cast(int, ...)
  MIDDLE_PROXIMAL = cast(int, ...)
  MIDDLE_INTERMEDIATE = cast(int, ...)
  MIDDLE_DISTAL = cast(int, ...)
  MIDDLE_TIP = cast(int, ...)
  RING_METACARPAL = cast(int, ...)
  RING_PROXIMAL = cast(int, ...)
  RING_INTERMEDIATE = cast(int, ...)
  RING_DISTAL = cast(int, ...)
  RING_TIP = cast(int, ...)
  LITTLE_METACARPAL = cast(int, ...)
  LITTLE_PROXIMAL = cast(int, ...)
  LITTLE_INTERMEDIATE = cast(int, ...)
  LITTLE_DISTAL = cast(int, ...)
  LITTLE_TIP = cast(int, ...)
  NUM_JOINTS = cast(int, ...)

