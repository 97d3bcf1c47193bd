"""Side data a producer can put beside its frames, declared by name (`Frame.extras` keys).

Not part of the tactile contract: the per-frame payloads a producer may fill for the recording
and the live view. A producer lists what it can fill in `Producer.extras_provided`; the run
function sets `Producer.extras_wanted` to what its recording and views will use (costly side
data is computed only when wanted); `recording.side_channels` turns the recorded ones into MCAP
channels, the view reads the ones it draws.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple
from collections.abc import Mapping

import numpy as np

#: (26, 7) OpenXR joint poses of the hand in the producer's base space (x, y, z [m], qx, qy, qz,
#: qw), e.g. the simulated hand in the simulation world: for the live view.
EXTRA_HAND_JOINT_POSES = "hand_joint_poses"
#: (5, 3, H, W) pad force images [N per image cell, pad frame].
EXTRA_FORCE_IMAGES = "force_images"
#: `HandPoses`: the hand poses to record on the hand channels (`Producer.hand_channels` says which).
EXTRA_HAND_POSES = "hand_poses"
#: (5, 4) per pad, thumb → pinky: slip velocity [m/s] in the pad's frame (x, y, z) and the stuck
#: fraction of its footprint [1] (the simulated hand's distributed contact model); recorded on
#: `<collection>/pad_slip` (`recording.slip_channel`).
EXTRA_PAD_SLIP = "pad_slip"
#: Default `HandChannels.base_name`: the name of the Isaac Teleop `HandsSource` node that replays them.
DEFAULT_HAND_BASE_NAME = "hands"


class HandPoses(NamedTuple):
    """One frame's hand poses: side ("left"/"right") → (26, 7) joint poses in the base space; a
    side not present is not tracked. `valid` / `radius`: per joint (or one for all) [m]."""

    poses: Mapping[str, np.ndarray]
    valid: Any = True
    radius: Any = 0.0


@dataclass(frozen=True)
class HandChannels:
    """Where a producer's `EXTRA_HAND_POSES` are recorded: Isaac Teleop's hand channels
    `<base_name>/left_hand`, `<base_name>/right_hand`, whose poses are in `base_space` (words)."""

    base_name: str = DEFAULT_HAND_BASE_NAME
    base_space: str = ""
