from __future__ import annotations

import flatbuffers
import numpy as np

import typing

uoffset: typing.TypeAlias = flatbuffers.number_types.UOffsetTFlags.py_type

class TaxelForce(object):
  @classmethod
  def SizeOf(cls) -> int: ...

  def Init(self, buf: bytes, pos: int) -> None: ...
  def Fx(self) -> float: ...
  def Fy(self) -> float: ...
  def Fz(self) -> float: ...

def CreateTaxelForce(builder: flatbuffers.Builder, fx: float, fy: float, fz: float) -> uoffset: ...

