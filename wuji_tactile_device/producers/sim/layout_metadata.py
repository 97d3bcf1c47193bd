"""The simulated hand's `TactileMetadata`: its taxel layout carried to the OpenXR wrist frame by
the shared Wuji Hand 2 kinematics (`wuji_hand2.lbs_metadata`, the function the hardware producer
uses too), so both producers describe the same segments the same way."""
from __future__ import annotations

from functools import lru_cache

from ...contract import TactileMetadata
from ...hands.wuji_hand2 import lbs_metadata
from .taxels import taxel_poses_in_distal


@lru_cache(maxsize=2)
def sim_metadata(side: str) -> TactileMetadata:
    """Validated metadata of the simulated `side` hand: segments THUMB_DISTAL … LITTLE_DISTAL,
    bind poses at the open hand (q = 0) in the OpenXR wrist frame, rigid weights (1, 0, 0, 0)."""
    return lbs_metadata(side, taxel_poses_in_distal(side)).validate()
