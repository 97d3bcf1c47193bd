from __future__ import annotations

import flatbuffers
import numpy as np

import typing
from .Pose import Pose

uoffset: typing.TypeAlias = flatbuffers.number_types.UOffsetTFlags.py_type

class HandJointPose(object):
  @classmethod
  def SizeOf(cls) -> int: ...

  def Init(self, buf: bytes, pos: int) -> None: ...
  def Pose(self, obj: Pose) -> Pose: ...
  def IsValid(self) -> bool: ...
  def Radius(self) -> float: ...

def CreateHandJointPose(builder: flatbuffers.Builder, pose_position_x: float, pose_position_y: float, pose_position_z: float, pose_orientation_x: float, pose_orientation_y: float, pose_orientation_z: float, pose_orientation_w: float, isValid: bool, radius: float) -> uoffset: ...

