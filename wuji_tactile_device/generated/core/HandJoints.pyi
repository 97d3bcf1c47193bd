from __future__ import annotations

import flatbuffers
import numpy as np

import typing
from .HandJointPose import HandJointPose

uoffset: typing.TypeAlias = flatbuffers.number_types.UOffsetTFlags.py_type

class HandJoints(object):
  @classmethod
  def SizeOf(cls) -> int: ...

  def Init(self, buf: bytes, pos: int) -> None: ...
  def Poses(self, i: int) -> HandJointPose | None: ...
  def PosesLength(self) -> int: ...
  def PosesIsNone(self) -> bool: ...

def CreateHandJoints(builder: flatbuffers.Builder, poses_pose_position_x: float, poses_pose_position_y: float, poses_pose_position_z: float, poses_pose_orientation_x: float, poses_pose_orientation_y: float, poses_pose_orientation_z: float, poses_pose_orientation_w: float, poses_isValid: bool, poses_radius: float) -> uoffset: ...

