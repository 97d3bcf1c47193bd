"""The emulated hand's 20 joints as its drives report them: positions [rad] (velocities by finite
difference), which joints are online, a stalled joint state stream, fault codes, and the
per-joint entries of the joint state and joint diagnostics frames (nid = bus·5 + node, node 1..4,
firmware order)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .sdk_types import EmulatedJointDiagnosticsEntry, EmulatedJointStateEntry, EmulatedJointStateFrame, EmulatedStatusWord

#: Joints of a Wuji Hand 2 (4 per finger, 5 buses).
NUM_JOINTS = 20


def joint_nid(index: int) -> int:
    """The SDK's node id of joint `index` (firmware order): bus·5 + node, node 1..4."""
    bus, node = divmod(int(index), 4)
    return bus * 5 + node + 1


class EmulatedJoints:
    """The joints' state; `rate_hz` is the hand's tick rate (for velocities)."""

    def __init__(self, rate_hz: float):
        self.rate_hz = float(rate_hz)
        #: Positions [rad, firmware order]; None until told (then no joint states are sent).
        self.positions: np.ndarray | None = None
        self.velocities = np.zeros(NUM_JOINTS)  # [rad/s]
        self.online = np.ones(NUM_JOINTS, dtype=bool)
        self.sending = True
        #: Offset of the joint state timestamps from the hand tick [µs] (a joint stream sampled
        #: at another phase than the fingertips).
        self.time_offset_us = 0
        self.errors: dict[int, int] = {}
        self._seq = 0

    def set_positions(self, joint_angles: Any) -> None:
        """Positions from now on: 20 finite angles [rad], firmware order (ValueError otherwise)."""
        q = np.asarray(joint_angles, dtype=np.float64)
        if q.shape != (NUM_JOINTS,) or not np.isfinite(q).all():
            raise ValueError(f"joint angles must be {NUM_JOINTS} finite values [rad] in firmware order, "
                             f"got shape {q.shape}")
        if self.positions is not None:
            self.velocities = (q - self.positions) * self.rate_hz
        self.positions = q.copy()

    def state_frame(self, header: Callable[..., Any], device_time_us: int) -> EmulatedJointStateFrame:
        """The joint state now (online joints only), stamped `device_time_us` + the offset."""
        q = self.positions
        if q is None:
            raise ValueError("joint_state_frame: the hand was never given joint positions (set_joint_positions)")
        entries = [EmulatedJointStateEntry(joint_nid(int(j)), float(q[j]), float(self.velocities[j]), 0.0)
                   for j in np.flatnonzero(self.online)]
        stamp = header(self._seq, device_time_us + int(self.time_offset_us), "hand")
        self._seq = (self._seq + 1) % (1 << 32)
        return EmulatedJointStateFrame(stamp, len(entries), entries)

    def diagnostics_entries(self) -> list[EmulatedJointDiagnosticsEntry]:
        """Every joint's diagnostics: temperature [°C], current [A], bus voltage [V], fault code."""
        entries = []
        for j in range(NUM_JOINTS):
            bus, node = divmod(j, 4)
            entries.append(EmulatedJointDiagnosticsEntry(
                joint_nid(j), EmulatedStatusWord(3, False, False, False), 0.05 + 0.01 * node, 24.0,
                38.0 + 0.5 * bus + 0.1 * node, self.errors.get(j, 0), 100, 0))
        return entries
