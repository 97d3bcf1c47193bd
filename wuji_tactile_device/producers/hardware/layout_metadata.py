"""Device geometry → contract metadata, with the explicit axis/sign mapping.

The device places point i of a finger at `p = R(base_rpy)·positions[i] + base_xyz` in the finger's
`tip_sensor_frame` (= distal link) with point axes `R_point = R(base_rpy)·R(point_rpy[i])`,
`R(rpy) = Rz·Ry·Rx`. Which point axis is the outward normal, and the sign of the reported force,
are not documented by the vendor, so they are configuration (`AxisMapping`):

- `axes`: the contract taxel frame's X, Y, Z written as signed device point axes, e.g.
  ("+x", "+y", "+z"). Must be a proper rotation (right-handed). Contract +Z = outward normal.
- `force_sign`: +1 if the device reports the force the contacting body exerts ON the pad (the
  contract's convention: pressing gives fz < 0 along the outward normal), −1 if it reports the
  force the pad exerts on the body (pressing gives a positive normal reading).

With M the 3×3 matrix whose rows are the contract axes in device point coordinates:
`f_contract = force_sign · M · f_point` and the taxel frame is `R_taxel = R_point · Mᵀ`.

Default (`DEFAULT_AXIS_MAPPING`): axes ("+x", "+y", "+z"), force_sign −1 — the device's point +z
is the outward normal and a press reads positive fz (the `normalized` mode's "normal 0..1").
Not verified on a physical hand; see docs/hardware.md.

Bind poses come from the shared hand kinematics (`producers/wuji_hand2.lbs_metadata`), so the
hardware and simulation metadata have the same segments and rigid weights by construction.
"""
from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Mapping

import numpy as np

from ...errors import ProducerError
from ...contract.geometry import matrix_to_quat, rpy_to_matrix
from ...contract import TactileMetadata
from ...hands.wuji_hand2 import FINGERS, lbs_metadata
from .format import SensorFormat

_AXIS = {"x": 0, "y": 1, "z": 2}


@dataclass(frozen=True)
class AxisMapping:
    """Contract taxel axes as signed device point axes, plus the device's force sign."""

    axes: tuple[str, ...] = ("+x", "+y", "+z")  # three entries (checked: `matrix` names a wrong count)
    force_sign: int = -1

    def __post_init__(self) -> None:
        m = self.matrix  # validates
        if round(float(np.linalg.det(m))) != 1:
            raise ProducerError(f"axis mapping {','.join(self.axes)} is a reflection (determinant −1); "
                                "taxel frames must be right-handed — flip the sign of one axis")
        if self.force_sign not in (1, -1):
            raise ProducerError(f"axis mapping force_sign must be +1 or -1, got {self.force_sign!r}")

    @property
    def matrix(self) -> np.ndarray:
        """M (3×3): row i = contract axis i in device point coordinates."""
        if len(self.axes) != 3:
            raise ProducerError(f"axis mapping needs 3 axes (contract X, Y, Z), got {self.axes!r}")
        m = np.zeros((3, 3))
        for i, a in enumerate(self.axes):
            if len(a) != 2 or a[0] not in "+-" or a[1] not in _AXIS:
                raise ProducerError(f"axis mapping entry {a!r}: use a sign and a device axis, e.g. '+z' or '-x'")
            m[i, _AXIS[a[1]]] = 1.0 if a[0] == "+" else -1.0
        if sorted(a[1] for a in self.axes) != ["x", "y", "z"]:
            raise ProducerError(f"axis mapping {','.join(self.axes)} must use each device axis x, y, z once")
        return m

    @property
    def force_matrix(self) -> np.ndarray:
        """`force_sign · M`: contract force = force_matrix @ device point force."""
        return self.force_sign * self.matrix

    @classmethod
    def parse(cls, text: str, force_sign: int = -1) -> AxisMapping:
        """From the CLI form "+x,+y,+z"."""
        return cls(tuple(s.strip() for s in text.split(",")), force_sign)

    def describe(self) -> str:
        return (f"contract X,Y,Z = device {','.join(self.axes)}; device reports force "
                f"{'on the pad' if self.force_sign == 1 else 'exerted by the pad (sign flipped)'}")


DEFAULT_AXIS_MAPPING = AxisMapping()


def device_taxel_poses(fmt: SensorFormat, mapping: AxisMapping) -> np.ndarray | None:
    """(P, 7) taxel poses in the finger's tip_sensor_frame from the device's own placement keys, or
    None when the format lacks positions or the mounting pose (older firmware)."""
    if fmt.positions is None or fmt.mounting is None:
        return None
    m = fmt.mounting
    R_base = rpy_to_matrix(m.base_rpy)
    p = fmt.positions @ R_base.T + m.base_xyz
    R_point = R_base @ rpy_to_matrix(m.point_rpy)  # (P, 3, 3)
    R_taxel = R_point @ mapping.matrix.T
    return np.concatenate([p, matrix_to_quat(R_taxel)], axis=1)


def hardware_metadata(side: str, formats: Mapping[str, SensorFormat], mapping: AxisMapping = DEFAULT_AXIS_MAPPING,
                      *, fallback_layout: Mapping[str, np.ndarray] | None = None,
                      fallback_name: str = "fallback layout") -> tuple[TactileMetadata, dict[str, str]]:
    """The contract metadata of a hand whose fingers declare `formats` (FINGERS order).

    A finger whose format carries positions and mounting pose uses them; otherwise its (P, 7)
    taxel poses in tip_sensor_frame come from `fallback_layout[finger]` (e.g. the simulation's pad
    layout), which must have the device's point count. Returns the metadata and, per finger, where
    its geometry came from ("device" or `fallback_name`)."""
    per_finger: dict[str, np.ndarray] = {}
    sources: dict[str, str] = {}
    for finger in FINGERS:
        fmt = formats[finger]
        poses = device_taxel_poses(fmt, mapping)
        if poses is not None:
            per_finger[finger], sources[finger] = poses, "device"
            continue
        if fallback_layout is None:
            lacking = "positions" if fmt.positions is None else "point_rpy/base_xyz/base_rpy"
            raise ProducerError(
                f"{finger}: the device format declares no {lacking}, so taxel placement is unknown; "
                "pass a layout for such fingers (--layout sim uses the simulation's pad layout, an "
                "assumption stated in docs/hardware.md)")
        poses = np.asarray(fallback_layout[finger], dtype=np.float64)
        if poses.shape != (fmt.point_count, 7):
            raise ProducerError(f"{finger}: {fallback_name} has {poses.shape[0]} taxels but the device "
                                f"declares point_count {fmt.point_count}")
        per_finger[finger], sources[finger] = poses, fallback_name
    metadata = lbs_metadata(side, per_finger)
    metadata.validate()
    return metadata, sources
