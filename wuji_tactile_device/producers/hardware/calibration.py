"""Full-scale calibration for the `normalized` firmware mode (firmware ≥ v2.4.0).

In that mode the device reports each point's force as a fraction of full scale — normal axis
0..1, tangential −1..1, saturating — and does not report the full scale itself, so newtons need a
user-supplied file of per-axis full-scale forces. File format (JSON, `docs/hardware.md`):

    {"kind": "wuji_tactile_full_scale", "version": 1,
     "serial_number": "optional; when given it must match the connected hand",
     "fingers": {"thumb": {"full_scale_n": [fx, fy, fz]},          # one triple for every point
                 "index": {"full_scale_n": [[fx, fy, fz], ...]},   # or one per point (P rows)
                 ...}}

Full scale is in newtons along the device's point axes (fx, fy, fz as the format names them),
positive. `N = normalized × full_scale`. A sample is saturated when any axis reads |v| ≥ 1.
"""
from __future__ import annotations

import json
from pathlib import Path
from collections.abc import Mapping

import numpy as np

from ...errors import CalibrationFileError
from .format import SensorFormat

CALIBRATION_KIND = "wuji_tactile_full_scale"
#: |normalized value| at or above this counts as saturated (the firmware clamps at 1).
SATURATION_LEVEL = 1.0 - 1e-6

_WHY = ("the firmware reports point forces in 'normalized' units (fractions of full scale: "
        "fz 0..1, fx/fy −1..1) and does not report the full scale, so newtons cannot be derived "
        "without per-axis full-scale values (see docs/hardware.md, 'Units and calibration')")


def missing_calibration_error(fingers: list[str]) -> CalibrationFileError:
    return CalibrationFileError(
        f"finger(s) {', '.join(fingers)}: no full-scale calibration file given (--full-scale FILE); {_WHY}")


def load_full_scale(path: str | Path, formats: Mapping[str, SensorFormat], *,
                    serial_number: str | None = None) -> dict[str, np.ndarray]:
    """Read a full-scale file and return, for every finger in `formats` whose point unit is
    `normalized`, a (P, 3) float32 array of full-scale newtons per point and device axis."""
    path = Path(path)
    needed = [f for f, fmt in formats.items() if fmt.point_unit == "normalized"]
    if not path.is_file():
        raise CalibrationFileError(f"full-scale calibration file {str(path)!r} does not exist; "
                                   f"finger(s) {', '.join(needed) or '(none)'} need it: {_WHY}")
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CalibrationFileError(f"{path}: cannot read full-scale calibration ({exc})") from None
    if not isinstance(obj, dict) or obj.get("kind") != CALIBRATION_KIND or obj.get("version") != 1:
        raise CalibrationFileError(f"{path}: not a full-scale calibration file (need "
                                   f"\"kind\": \"{CALIBRATION_KIND}\", \"version\": 1)")
    file_sn = obj.get("serial_number")
    if file_sn and serial_number and file_sn != serial_number:
        raise CalibrationFileError(f"{path}: calibrated for hand {file_sn!r}, but the connected hand "
                                   f"is {serial_number!r}")
    fingers = obj.get("fingers")
    if not isinstance(fingers, dict):
        raise CalibrationFileError(f"{path}: key 'fingers' must map finger names to entries")
    out: dict[str, np.ndarray] = {}
    for finger in needed:
        count = formats[finger].point_count
        entry = fingers.get(finger)
        if not isinstance(entry, dict) or "full_scale_n" not in entry:
            raise CalibrationFileError(f"{path}: fingers.{finger}.full_scale_n is missing; {finger} "
                                       f"reports normalized forces")
        try:
            fs = np.asarray(entry["full_scale_n"], dtype=np.float64)
        except (TypeError, ValueError):
            raise CalibrationFileError(f"{path}: fingers.{finger}.full_scale_n must be numbers") from None
        if fs.shape == (3,):
            fs = np.broadcast_to(fs, (count, 3))
        if fs.shape != (count, 3):
            raise CalibrationFileError(f"{path}: fingers.{finger}.full_scale_n must be [fx, fy, fz] or "
                                       f"{count} such rows (the device declares {count} points), got shape {fs.shape}")
        if not np.all(np.isfinite(fs)) or np.any(fs <= 0):
            raise CalibrationFileError(f"{path}: fingers.{finger}.full_scale_n must be finite and > 0 N")
        out[finger] = np.ascontiguousarray(fs, dtype=np.float32)
    return out


def write_full_scale(path: str | Path, full_scale: Mapping[str, np.ndarray | list[float]], *,
                     serial_number: str | None = None) -> None:
    """Write a full-scale file (for users who measured their hand, and for tests)."""
    obj: dict = {"kind": CALIBRATION_KIND, "version": 1}
    if serial_number:
        obj["serial_number"] = serial_number
    obj["fingers"] = {f: {"full_scale_n": np.asarray(v, dtype=float).tolist()} for f, v in full_scale.items()}
    Path(path).write_text(json.dumps(obj, indent=1), encoding="utf-8")
