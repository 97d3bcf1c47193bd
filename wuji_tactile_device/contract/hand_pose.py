"""Isaac Teleop's hand pose record (`core.HandPoseRecord`): encode and verified decode.

This is Isaac Teleop's schema, not the tactile contract: a recording that carries the hand's 26
OpenXR joint poses in this exact layout on the channels `<name>/left_hand` and `<name>/right_hand`
is replayed by Isaac Teleop's own `ReplaySession` + `HandTracker` (see `recording.hand_channels`).
The layout is `schema/hand_pose.fbs`:

- `HandPoseRecord { data: HandPose (id 0), timestamp: DeviceDataTimestamp (id 1) }`, no file
  identifier (Isaac Teleop declares none); `data` absent = the hand was not tracked that frame;
- `HandPose { joints: HandJoints (id 0) }`, an inline struct of 26 `HandJointPose` (36 bytes each:
  position x, y, z [m], orientation qx, qy, qz, qw, `is_valid` u8, 3 padding bytes, radius [m]).

Poses are in the hand tracker's base space (for the simulator: the simulation world), in HandJoint
(OpenXR) order. Encoding writes the joint block in one copy; decoding bounds-checks the buffer
(`flatbuf`) and returns numpy views — no per-joint Python work.
"""
from __future__ import annotations

import struct
from functools import cache
from importlib import resources
from typing import NamedTuple

import flatbuffers
import numpy as np

from ..errors import DataLayoutError, InvalidMessageError
from . import flatbuf
from .joints import HandJoint
from .records import DeviceDataTimestamp, prepend_timestamp, read_timestamp, timestamp_values

#: MCAP schema name of the record, as Isaac Teleop registers it.
HAND_POSE_RECORD_SCHEMA_NAME = "core.HandPoseRecord"
NUM_HAND_JOINTS = int(HandJoint.NUM_JOINTS)

#: One `HandJointPose` struct (36 bytes, 4-byte aligned): pose (7 × f32), is_valid (u8), 3 padding
#: bytes (always written as zero), radius (f32).
JOINT_DTYPE = np.dtype({"names": ["pose", "is_valid", "radius"], "formats": [("<f4", (7,)), "u1", "<f4"],
                        "offsets": [0, 28, 32], "itemsize": 36})
_JOINTS_SIZE = NUM_HAND_JOINTS * JOINT_DTYPE.itemsize  # 936
_U32 = struct.Struct("<I").unpack_from


@cache
def hand_pose_bfbs() -> bytes:
    """The binary schema (.bfbs) of `core.HandPoseRecord` for the MCAP schema record."""
    return resources.files("wuji_tactile_device.generated").joinpath("bfbs", "hand_pose.bfbs").read_bytes()


class HandPoseSample(NamedTuple):
    """A decoded `HandPoseRecord`. For an untracked hand (`data` absent) `poses` is None."""

    poses: np.ndarray | None  # (26, 7) float32 x, y, z [m], qx, qy, qz, qw, base space; read-only
    valid: np.ndarray | None  # (26,) bool
    radius: np.ndarray | None  # (26,) float32 [m]
    timestamp: DeviceDataTimestamp


def joint_block(poses: object, valid: object = True, radius: object = 0.0) -> np.ndarray:
    """The 26-joint struct array of one hand: `poses` (26, 7), `valid` bool or (26,), `radius` [m]
    scalar or (26,). Raises `DataLayoutError` for wrong shapes or non-finite poses."""
    p = np.asarray(poses, dtype=np.float64)
    if p.shape != (NUM_HAND_JOINTS, 7):
        raise DataLayoutError(f"HandPose: poses must have shape ({NUM_HAND_JOINTS}, 7), got {p.shape}")
    if not np.isfinite(p).all():
        raise DataLayoutError("HandPose: poses must be finite")
    block = np.zeros(NUM_HAND_JOINTS, JOINT_DTYPE)  # zeroed padding, as FlatBuffers writers do
    block["pose"] = p
    try:
        block["is_valid"] = np.broadcast_to(np.asarray(valid, dtype=bool), (NUM_HAND_JOINTS,))
        block["radius"] = np.broadcast_to(np.asarray(radius, dtype=np.float32), (NUM_HAND_JOINTS,))
    except ValueError as exc:
        raise DataLayoutError(f"HandPose: valid and radius must be scalars or ({NUM_HAND_JOINTS},) arrays: {exc}") from None
    return block


def encode_hand_pose_record(poses: object | None, timestamp: DeviceDataTimestamp, *, valid: object = True,
                            radius: object = 0.0) -> bytes:
    """Encode one hand's `HandPoseRecord` (no file identifier, as Isaac Teleop writes it).
    `poses=None` writes the record of an untracked hand (no `data`)."""
    ts = timestamp_values(timestamp)
    builder = flatbuffers.Builder(_JOINTS_SIZE + 96)
    data = None
    if poses is not None:
        raw = joint_block(poses, valid, radius).tobytes()
        builder.StartObject(1)
        builder.Prep(4, _JOINTS_SIZE)
        builder.head -= _JOINTS_SIZE
        builder.Bytes[builder.head : builder.head + _JOINTS_SIZE] = raw
        builder.PrependStructSlot(0, builder.Offset(), 0)
        data = builder.EndObject()
    builder.StartObject(2)
    builder.PrependStructSlot(1, prepend_timestamp(builder, ts), 0)
    if data is not None:
        builder.PrependUOffsetTRelativeSlot(0, data, 0)
    builder.Finish(builder.EndObject())
    return bytes(builder.Output())


def decode_hand_pose_record(buf, *, max_size: int | None = 4096) -> HandPoseSample:
    """Verify and decode a `HandPoseRecord` (any FlatBuffers writer's layout). Arrays are read-only
    views of `buf`. Raises `InvalidMessageError` naming the field when the structure is broken."""
    what = "HandPoseRecord"
    n = flatbuf.check_size(buf, max_size, what)
    if n < 12:
        raise InvalidMessageError(f"{what}: {n} bytes is too short for a FlatBuffer with a root table")
    rec = flatbuf.table(buf, n, _U32(buf, 0)[0], what)
    timestamp = read_timestamp(buf, rec)
    data = flatbuf.subtable(buf, n, rec, 0, "data")
    if data is None:
        return HandPoseSample(None, None, None, timestamp)
    pos = flatbuf.field(data, 0, _JOINTS_SIZE, 4, "joints")
    if not pos:
        raise InvalidMessageError(f"{what}.data.joints: required field is missing")
    block = np.frombuffer(buf, JOINT_DTYPE, NUM_HAND_JOINTS, pos)
    poses, radius = block["pose"], block["radius"]
    valid = block["is_valid"].astype(bool)
    for a in (poses, radius, valid):
        if a.flags.writeable:
            a.flags.writeable = False
    return HandPoseSample(poses, valid, radius, timestamp)
