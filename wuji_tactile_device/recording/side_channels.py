"""A producer's declared side data turned into recording channels (attached by the run function).

`side_channel_writers(recorder, producer)`: for a producer that provides `EXTRA_HAND_POSES`
(`contract.side_data`), Isaac Teleop's two hand channels (`hand_channels.HandPoseChannels`, at
`producer.hand_channels`), one record per hand per published frame with exactly the tactile
record's `DeviceDataTimestamp` and log time (a frame without poses: both hands not tracked, so the
channels stay in step with the collection); for `EXTRA_PAD_SLIP`, the pads' slip output on
`<collection>/pad_slip` (`slip_channel`). The writers are frame sinks of the run loop.
"""
from __future__ import annotations

from typing import Any

from ..contract.side_data import EXTRA_HAND_POSES, EXTRA_PAD_SLIP, HandChannels
from .hand_channels import HandPoseChannels
from .slip_channel import PadSlipWriter


class HandPoseWriter:
    """Writes each published frame's `HandPoses` on the hand channels (log time = the tactile
    record's available time)."""

    def __init__(self, channels: HandPoseChannels):
        self.channels = channels
        self.written = 0
        self.tracked = 0

    def on_frame(self, frame: Any, sequence: int, timestamp: Any) -> None:
        hands = frame.extras.get(EXTRA_HAND_POSES) if frame.extras else None
        log_time = int(timestamp[0])
        if hands is None or not hands.poses:
            self.channels.write({}, timestamp, log_time_ns=log_time)
        else:
            self.channels.write(hands.poses, timestamp, log_time_ns=log_time, valid=hands.valid, radius=hands.radius)
            self.tracked += 1
        self.written += 1

    def poll(self) -> None:
        pass

    def close(self) -> None:
        pass


def recorded_extras(producer: Any) -> frozenset[str]:
    """The side data a recording of `producer` wants from it."""
    return frozenset({EXTRA_HAND_POSES, EXTRA_PAD_SLIP}) & frozenset(getattr(producer, "extras_provided", frozenset()))


def side_channel_writers(recorder: Any, producer: Any) -> list[HandPoseWriter | PadSlipWriter]:
    """The channels beside the collection for what `producer` declares it provides."""
    wanted = recorded_extras(producer)
    out: list[HandPoseWriter | PadSlipWriter] = []
    if EXTRA_HAND_POSES in wanted:
        spec: HandChannels = getattr(producer, "hand_channels", None) or HandChannels()
        out.append(HandPoseWriter(HandPoseChannels(recorder, spec.base_name, base_space=spec.base_space)))
    if EXTRA_PAD_SLIP in wanted:
        out.append(PadSlipWriter(recorder, producer.collection_id, EXTRA_PAD_SLIP))
    return out
