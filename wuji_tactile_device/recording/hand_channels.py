"""Hand pose channels in Isaac Teleop's own recording layout, next to the tactile collections.

Isaac Teleop's `HandTracker` records, and its `ReplaySession` replays, one `core.HandPoseRecord`
per hand per frame on the channels `<base_name>/left_hand` and `<base_name>/right_hand`, where
`<base_name>` is the name the tracker is registered under (a `TeleopSession` uses the
`HandsSource` node's name). Its replay reads ONE record of each hand per `update()`, so both
channels must advance together: `HandPoseChannels.write` writes both hands every frame, the hand
that is not tracked as a record without `data` (Isaac Teleop's "inactive" convention).

Log time = the record's `available_time_local_common_clock`, as Isaac Teleop writes it. Isaac
Teleop 1.5 replays only uncompressed MCAP: record such files with `compression="none"`
(`ISAAC_TELEOP_COMPRESSION`).
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ..contract.hand_pose import HAND_POSE_RECORD_SCHEMA_NAME, encode_hand_pose_record, hand_pose_bfbs
from ..contract.records import DeviceDataTimestamp
from ..contract.side_data import DEFAULT_HAND_BASE_NAME as _DEFAULT_HAND_BASE_NAME
from ..errors import RecordingError

#: The chunk compression Isaac Teleop's `ReplaySession` reads (1.5: only uncompressed chunks).
ISAAC_TELEOP_COMPRESSION = "none"
#: Default `<base_name>`: the name of the `HandsSource` node that will replay the channels
#: (declared with the side data producers provide, `contract.side_data`).
DEFAULT_HAND_BASE_NAME = _DEFAULT_HAND_BASE_NAME
HAND_SIDES = ("left", "right")


def hand_topic(base_name: str, side: str) -> str:
    """`<base_name>/left_hand` or `<base_name>/right_hand` (Isaac Teleop's channel names)."""
    if side not in HAND_SIDES:
        raise ValueError(f"hand side must be one of {HAND_SIDES}, got {side!r}")
    return f"{base_name}/{side}_hand"


class HandPoseChannels:
    """Both hand channels of one recording (an `McapRecorder`), written frame by frame."""

    def __init__(self, recorder, base_name: str = DEFAULT_HAND_BASE_NAME, *, base_space: str = "") -> None:
        if not isinstance(base_name, str) or not base_name or base_name.endswith("/"):
            raise ValueError(f"hand channel base name must be a non-empty str without a trailing '/', got {base_name!r}")
        self.base_name = base_name
        self._recorder = recorder
        meta = {"frame": base_space} if base_space else {}
        self._channels = {side: recorder.add_flatbuffer_channel(hand_topic(base_name, side), HAND_POSE_RECORD_SCHEMA_NAME,
                                                                hand_pose_bfbs(), metadata=meta)
                          for side in HAND_SIDES}
        self._sequence = 0
        self._last_log_time = -1

    def write(self, poses: Mapping[str, np.ndarray], timestamp: DeviceDataTimestamp, *, log_time_ns: int | None = None,
              valid: object = True, radius: object = 0.0) -> None:
        """One frame: `poses` maps "left"/"right" to that hand's (26, 7) joint poses in the base
        space; a side not in `poses` is written as not tracked. Log time defaults to the
        timestamp's available time (as Isaac Teleop writes); publish time = sample time."""
        unknown = set(poses) - set(HAND_SIDES)
        if unknown:
            raise ValueError(f"hand poses: unknown side(s) {sorted(unknown)}; use {HAND_SIDES}")
        log_time = int(timestamp[0]) if log_time_ns is None else int(log_time_ns)
        if log_time < self._last_log_time:
            raise RecordingError(f"hand channels {self.base_name!r}: log time {log_time} ns goes back before "
                                 f"{self._last_log_time} ns; Isaac Teleop replays records in log-time order")
        for side in HAND_SIDES:
            payload = encode_hand_pose_record(poses.get(side), timestamp, valid=valid, radius=radius)
            self._recorder.write_flatbuffer(self._channels[side], payload, log_time_ns=log_time,
                                            publish_time_ns=int(timestamp[1]), sequence=self._sequence)
        self._sequence += 1
        self._last_log_time = log_time
