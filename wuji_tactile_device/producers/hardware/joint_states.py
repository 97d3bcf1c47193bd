"""The hand's measured joint angles (the SDK's joint state stream) and their pairing with tactile ticks.

The vendor SDK streams the whole hand's joint state: `hand.joint_states().subscribe()` →
`recv()` gives a `JointStateFrame` (`header`: seq, `timestamp_us` on the hand's clock — the same
time-synced device clock as the fingertip frames; `joints`: one `JointStateEntry` per *online*
joint, `nid` = bus·5 + node with node 1..4 the joints, `position` [rad], `velocity`, `effort`).
`joint_sample` turns one frame into 20 positions in firmware order (thumb cmc_flex, cmc_abd, mcp,
ip; then index, middle, ring, pinky with mcp_flex, mcp_abd, pip, dip) plus which joints were
present; a joint absent from the frame, or with a non-finite position, is not present.

`JointPairing` keeps the last `capacity` samples and gives each published tactile tick the sample
*nearest to it in device time*. The pairing rule and its bound: |tick device time − sample device
time| ≤ `max_age_us` (default one tactile period). A tick with no sample yet is *missing*; one
whose nearest sample is farther than the bound is *stale*; either way the hand is recorded as not
tracked for that tick (never a pose from another moment). A paired sample lacking some joints
is *partial*: the poses that depend on a missing joint are flagged invalid.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple
from collections.abc import Sequence

import numpy as np

from ...hands.wuji_hand2 import NUM_ACTUATED_JOINTS
from ..base import Counters

#: Firmware stream node id → flat joint index (0..19, firmware order); -1: not a joint (node 5 is
#: the tactile slot, node 0 the bus root). nid = bus·5 + node, node 1..4 the bus's four joints.
NID_TO_JOINT = np.full(25, -1, dtype=np.int64)
for _bus in range(5):
    NID_TO_JOINT[_bus * 5 + 1:_bus * 5 + 5] = np.arange(_bus * 4, _bus * 4 + 4)
del _bus


class JointSample(NamedTuple):
    """One joint state frame of the hand, in firmware order."""

    device_time_us: int       # header.timestamp_us, the hand's clock [µs]
    positions: np.ndarray     # (20,) float64 [rad]; 0 where not present
    present: np.ndarray       # (20,) bool: the joint was in the frame with a finite position
    received_ns: int          # local monotonic clock when the producer pulled it


def joint_sample(frame: Any, received_ns: int) -> JointSample:
    """A `JointSample` from an SDK `JointStateFrame` (or anything with its attribute names).
    Unknown nids (not a joint) are ignored; a repeated nid keeps its last entry."""
    entries = frame.joints
    nids = np.fromiter((e.nid for e in entries), dtype=np.int64, count=len(entries))
    values = np.fromiter((e.position for e in entries), dtype=np.float64, count=len(entries))
    inside = (nids >= 0) & (nids < NID_TO_JOINT.size)
    index = np.full(nids.shape, -1, dtype=np.int64)
    index[inside] = NID_TO_JOINT[nids[inside]]
    keep = (index >= 0) & np.isfinite(values)
    positions = np.zeros(NUM_ACTUATED_JOINTS)
    present = np.zeros(NUM_ACTUATED_JOINTS, dtype=bool)
    positions[index[keep]] = values[keep]
    present[index[keep]] = True
    return JointSample(int(frame.header.timestamp_us), positions, present, int(received_ns))


class PairedJoints(NamedTuple):
    """The joint sample paired with one tactile tick."""

    positions: np.ndarray  # (20,) [rad], firmware order (a copy)
    present: np.ndarray    # (20,) bool
    device_time_us: int    # the sample's device time
    age_us: int            # tick device time − sample device time (< 0: sampled after the tick)


@dataclass
class JointStateCounters(Counters):
    """`samples` joint state frames received; per published tick: `paired`, `stale` (nearest
    sample beyond the bound), `missing` (no sample at all), `partial` (paired, some joints absent);
    `max_age_us`: the largest |age| of a paired sample; `errors`: failed SDK calls on the stream."""

    samples: int = 0
    paired: int = 0
    stale: int = 0
    missing: int = 0
    partial: int = 0
    max_age_us: int = 0
    errors: int = 0


class JointPairing:
    """Ring of the last `capacity` joint samples; `pair(tick_us)` picks the one nearest in device
    time within `max_age_us` [µs]."""

    def __init__(self, max_age_us: int, capacity: int = 64):
        if not max_age_us > 0:
            raise ValueError(f"max_age_us must be > 0 µs, got {max_age_us!r}")
        if capacity < 1:
            raise ValueError(f"capacity must be ≥ 1, got {capacity!r}")
        self.max_age_us = int(max_age_us)
        self._times = np.zeros(capacity, dtype=np.int64)
        self._positions = np.zeros((capacity, NUM_ACTUATED_JOINTS))
        self._present = np.zeros((capacity, NUM_ACTUATED_JOINTS), dtype=bool)
        self._count = 0
        self._next = 0
        self.counters = JointStateCounters()

    def push(self, samples: Sequence[JointSample]) -> None:
        """Keep `samples` (the oldest ones drop out of the ring)."""
        cap = self._times.size
        for s in samples:
            i = self._next
            self._times[i] = s.device_time_us
            self._positions[i] = s.positions
            self._present[i] = s.present
            self._next = (i + 1) % cap
            self._count = min(self._count + 1, cap)
        self.counters.samples += len(samples)

    def reset(self) -> None:
        """Forget every sample (the device clock stepped: their times are from another epoch)."""
        self._count = 0
        self._next = 0

    def pair(self, tick_device_us: int) -> PairedJoints | None:
        """The sample for the tick at `tick_device_us`, or None (missing / stale; counted)."""
        c = self.counters
        n = self._count
        if n == 0:
            c.missing += 1
            return None
        age = tick_device_us - self._times[:n]
        i = int(np.argmin(np.abs(age)))
        a = int(age[i])
        if abs(a) > self.max_age_us:
            c.stale += 1
            return None
        c.paired += 1
        c.max_age_us = max(c.max_age_us, abs(a))
        present = self._present[i].copy()
        if not present.all():
            c.partial += 1
        return PairedJoints(self._positions[i].copy(), present, int(self._times[i]), a)


def default_max_age_us(rate_hz: float) -> int:
    """The default pairing bound: one tactile period [µs]."""
    if not (rate_hz > 0 and math.isfinite(rate_hz)):
        raise ValueError(f"rate_hz must be a positive finite number, got {rate_hz!r}")
    return int(round(1e6 / rate_hz))
