from __future__ import annotations

import flatbuffers
import numpy as np

import typing
from .Point import Point
from .Quaternion import Quaternion

uoffset: typing.TypeAlias = flatbuffers.number_types.UOffsetTFlags.py_type

class Pose(object):
  @classmethod
  def SizeOf(cls) -> int: ...

  def Init(self, buf: bytes, pos: int) -> None: ...
  def Position(self, obj: Point) -> Point: ...
  def Orientation(self, obj: Quaternion) -> Quaternion: ...

def CreatePose(builder: flatbuffers.Builder, position_x: float, position_y: float, position_z: float, orientation_x: float, orientation_y: float, orientation_z: float, orientation_w: float) -> uoffset: ...

