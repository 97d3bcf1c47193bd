"""One emulated fingertip module: its layout (module frame, point axes, positions), the format
it announces and the wire encoding of its frames (i16 with a scale, newtons or normalized), its
own sampling clock and its pending faults."""
from __future__ import annotations

import json
import zlib
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from ...contract.geometry import matrix_to_rpy
from ...contract.joints import FINGERS
from ..hardware.format import FIELD_TYPES, Mounting, build_format

#: Newton firmware: i16 raw × 0.001 N (±32.767 N per axis).
NEWTON_SCALE = 0.001
#: Normalized firmware: i16 raw × 2⁻¹⁴ (1.0 = raw 16384, exact in binary).
NORMALIZED_SCALE = 2.0 ** -14
AGGREGATE_SCALE = 0.01
TEMPERATURE_SCALE = 0.01
#: Full scale per device axis [N] the emulated normalized firmware divides by (fx, fy, fz).
DEFAULT_FULL_SCALE = (5.0, 5.0, 10.0)


@dataclass
class PadModule:
    finger: str
    taxels: slice
    module_rotation: np.ndarray  # R(base_rpy): module axes in tip_sensor_frame
    module_origin: np.ndarray
    point_rotations: np.ndarray  # (P, 3, 3) device point axes in tip_sensor_frame
    positions_module: np.ndarray
    point_rpy: np.ndarray
    format: dict
    format_text: str = ""
    digest: int = 0
    revision: int = 0
    seq: int = 0
    online: bool = True
    sending: bool = True
    inject: deque[str] = field(default_factory=deque)  # faults of its next frames
    frame_digest: int | None = None  # fault: frames carry this digest instead of the info's
    period_us: float = 10_000.0  # this module's own sampling period (its clock, drift included)
    rate_hz: float = 100.0  # the rate its info announces (drift not included)
    phase_us: float = 0.0
    jitter_us: float = 0.0
    next_us: float = 0.0  # nominal time of its next sample, emulator-internal clock



def write_format(pad: PadModule, *, firmware: str, mounting: bool, positions: bool, format_extras: dict,
                 field_extras: dict, temperature_unit: str, point_type: str = "i16",
                 point_scale: float | None = None) -> None:
    """Set the pad's announced format (JSON text) and its digest: `firmware` "newton" or
    "normalized", with or without mounting / positions declared, plus unknown extra keys."""
    scale = point_scale if point_scale is not None else (NEWTON_SCALE if firmware == "newton" else NORMALIZED_SCALE)
    placement = Mounting(pad.point_rpy, pad.module_origin, matrix_to_rpy(pad.module_rotation)) if mounting else None
    pad.format = build_format(
        point_count=pad.taxels.stop - pad.taxels.start, point_type=point_type, point_scale=scale,
        unit="N" if firmware == "newton" else "normalized", aggregate_scale=AGGREGATE_SCALE,
        temperature_scale=TEMPERATURE_SCALE, positions=pad.positions_module if positions else None,
        mounting=placement, aggregate_xyz=np.zeros(3) if mounting else None)
    pad.format.update(format_extras)
    for f in pad.format["point_fields"] + pad.format["aggregate_fields"]:
        f.update(field_extras)
        if f["name"] == "temperature":
            f["unit"] = temperature_unit
    pad.format_text = json.dumps(pad.format, separators=(",", ":"), ensure_ascii=False)
    # The real digest algorithm is not public; any function of the info content will do.
    pad.digest = zlib.crc32(f"{pad.revision}:{pad.format_text}".encode())


def encode_frame(pad: PadModule, fp: np.ndarray, full_scale: np.ndarray) -> tuple[bytes, int]:
    """The pad's frame bytes for its point forces `fp` (P, 3) [N, device point axes], and the number
    of points the device clipped (i16 range, or the normalized full scale `full_scale` (3,) [N])."""
    fmt = pad.format
    pf = {f["name"]: f for f in fmt["point_fields"]}
    dtype = FIELD_TYPES[pf["fx"]["type"]]
    scale = pf["fx"]["scale"]
    saturated = 0
    values = fp
    if fmt["unit"] == "normalized":
        values = fp / full_scale
        clipped = np.clip(values, np.array([-1.0, -1.0, 0.0]), 1.0)
        saturated += int(np.count_nonzero((clipped != values).any(axis=1)))
        values = clipped
    raw = np.rint(values / scale)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        clipped = np.clip(raw, info.min, info.max)
        saturated += int(np.count_nonzero((clipped != raw).any(axis=1)))
        raw = clipped
    else:
        raw = values / scale
    points = np.zeros((len(raw), fmt["point_stride"]), dtype=np.uint8)
    points[:, :3 * dtype.itemsize] = np.ascontiguousarray(raw.astype(dtype)).view(np.uint8).reshape(len(raw), -1)
    # Aggregate: the pad resultant [N] in module axes R(base_rpy) (no aggregate_rpy declared).
    resultant_tip = np.einsum("pij,pj->i", pad.point_rotations, fp)
    resultant = pad.module_rotation.T @ resultant_tip
    temperature = 30.0 + 0.25 * FINGERS.index(pad.finger)
    agg = np.rint(np.array([*resultant / AGGREGATE_SCALE, temperature / TEMPERATURE_SCALE]))
    agg = np.clip(np.nan_to_num(agg), -32768, 32767).astype("<i2")  # an i16 cannot carry NaN
    return points.tobytes() + agg.tobytes(), saturated


def half_step(pad: PadModule, full_scale: np.ndarray) -> np.ndarray:
    """(3,) half a raw step per device axis [N] (× `full_scale` in normalized mode): the largest
    decode error of the pad's encoding."""
    pf = {f["name"]: f for f in pad.format["point_fields"]}
    step = np.array([pf[a]["scale"] for a in ("fx", "fy", "fz")]) * 0.5
    return step * full_scale if pad.format["unit"] == "normalized" else step
