from __future__ import annotations

import flatbuffers
import numpy as np

import typing

uoffset: typing.TypeAlias = flatbuffers.number_types.UOffsetTFlags.py_type

class DeviceDataTimestamp(object):
  @classmethod
  def SizeOf(cls) -> int: ...

  def Init(self, buf: bytes, pos: int) -> None: ...
  def AvailableTimeLocalCommonClock(self) -> int: ...
  def SampleTimeLocalCommonClock(self) -> int: ...
  def SampleTimeRawDeviceClock(self) -> int: ...

def CreateDeviceDataTimestamp(builder: flatbuffers.Builder, availableTimeLocalCommonClock: int, sampleTimeLocalCommonClock: int, sampleTimeRawDeviceClock: int) -> uoffset: ...

