"""The fingertip sensor `format` JSON (vendor contract v1, `point_array`) and the frame decoder it
drives.

A finger's `FingertipSensorInfo.format` declares how its data frames are laid out: `point_count`
points of `point_stride` bytes each (fields fx, fy, fz at byte offsets), then an aggregate block of
`aggregate_stride` bytes (the finger resultant fx, fy, fz [N] and temperature [°C]). Values are
little-endian, `value = raw × scale` (scale defaults to 1). Optional placement keys give each
point's position [m] and axes in the sensor module frame and the module's pose in the finger's
`tip_sensor_frame` (= distal link). See docs/device-contract.md and docs/hardware.md.

`parse_format` is strict about what the contract cannot do without — the point layout (count,
stride, fx/fy/fz fields and their offsets), value types, the unit of force and the scales:
anything there it cannot interpret exactly (unknown version, encoding, type or force unit, mixed
point units, fields outside the stride, a partial mounting pose) is refused, naming the finger
and the key. It is tolerant of everything else, as the vendor's own decoder is: unknown
top-level keys, unknown keys inside a field, extra point fields, and an aggregate force or
temperature in a unit it does not know (that value is left out) are recorded in
`SensorFormat.unknown` (reported once, kept in the recording's metadata) instead. Unit spellings
are normalised: N / newton(s); normalized / normalised; C / °C / ℃ / degC / celsius (and K, °F
converted to °C). `SensorFormat.decode_into` reads one frame with one strided numpy view per block —
no Python loop over points.
"""
from __future__ import annotations

import itertools
import json
import math
import struct
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from ...errors import DeviceFormatError

#: Field types of the v1 contract → little-endian numpy dtypes.
FIELD_TYPES: dict[str, np.dtype] = {
    "i8": np.dtype("i1"), "u8": np.dtype("u1"),
    "i16": np.dtype("<i2"), "u16": np.dtype("<u2"),
    "i32": np.dtype("<i4"), "u32": np.dtype("<u4"),
    "f32": np.dtype("<f4"),
}
_STRUCT_CODES = {"i8": "b", "u8": "B", "i16": "h", "u16": "H", "i32": "i", "u32": "I", "f32": "f"}
#: Point-field units this decoder understands: newtons (firmware < v2.4.0) and full-scale
#: normalized (firmware ≥ v2.4.0: normal 0..1, tangential −1..1, saturating).
POINT_UNITS = ("N", "normalized")
AGGREGATE_FORCE_UNITS = ("N",)
#: Accepted spellings (compared case-insensitively, spaces and underscores ignored) → canonical.
UNIT_SPELLINGS: dict[str, str] = {
    **{k: "N" for k in ("n", "newton", "newtons")},
    **{k: "normalized" for k in ("normalized", "normalised")},
    **{k: "C" for k in ("c", "°c", "℃", "degc", "celsius", "degcelsius")},
    **{k: "K" for k in ("k", "kelvin")},
    **{k: "F" for k in ("f", "°f", "℉", "degf", "fahrenheit", "degfahrenheit")},
}
#: Temperature units read (converted to °C: value_C = value × a + b).
_TO_CELSIUS = {"C": (1.0, 0.0), "K": (1.0, -273.15), "F": (5.0 / 9.0, -160.0 / 9.0)}
_FIELD_KEYS = {"name", "type", "offset", "scale", "unit"}


def normalise_unit(unit: Any) -> Any:
    """The canonical spelling of a unit string (see UNIT_SPELLINGS); other values unchanged."""
    if not isinstance(unit, str):
        return unit
    key = unit.strip().lower().replace(" ", "").replace("_", "").replace("degrees", "deg").replace("degree", "deg")
    return UNIT_SPELLINGS.get(key, unit)
FORCE_AXES = ("fx", "fy", "fz")
#: Placement keys that must come together (a partial set is a broken format).
MOUNTING_KEYS = ("point_rpy", "base_xyz", "base_rpy")

_TOP_KEYS = {"v", "encoding", "point_count", "point_stride", "aggregate_stride", "point_fields",
             "aggregate_fields", "unit", "positions", "point_rpy", "base_xyz", "base_rpy",
             "aggregate_xyz", "aggregate_rpy"}


@dataclass(frozen=True)
class FieldSpec:
    """One declared field: numpy dtype at a byte offset inside its block, value = raw × scale."""

    name: str
    type: str
    offset: int
    scale: float
    unit: str

    @property
    def dtype(self) -> np.dtype:
        return FIELD_TYPES[self.type]


class Mounting(NamedTuple):
    """Sensor module placement: per-point axes (rpy, rad) in the module frame and the module pose
    in `tip_sensor_frame` (xyz m, rpy rad). R(rpy) = Rz(yaw)·Ry(pitch)·Rx(roll)."""

    point_rpy: np.ndarray  # (P, 3) float64
    base_xyz: np.ndarray  # (3,)
    base_rpy: np.ndarray  # (3,)


class Aggregate(NamedTuple):
    """The finger resultant as the device sends it: force [N] in the aggregate axes
    (R(base_rpy)·R(aggregate_rpy) in tip_sensor_frame) and module temperature [°C]
    (NaN when the format declares no temperature)."""

    force: np.ndarray  # (3,) float64, N
    temperature_c: float


@dataclass(frozen=True, eq=False)
class SensorFormat:
    """A finger's parsed `format` JSON. Build with `parse_format`."""

    finger: str
    point_count: int
    point_stride: int
    aggregate_stride: int
    point_fields: dict[str, FieldSpec]
    aggregate_fields: dict[str, FieldSpec]
    point_unit: str  # "N" or "normalized"
    positions: np.ndarray | None  # (P, 3) m, sensor module frame
    mounting: Mounting | None
    aggregate_xyz: np.ndarray | None
    aggregate_rpy: np.ndarray | None
    ignored_point_fields: tuple[str, ...]
    source: str  # the JSON text as received
    #: What the format declares that this decoder does not use (one human-readable note each).
    unknown: tuple[str, ...] = ()
    _aggregate_reader: tuple = field(init=False, repr=False)
    _temperature_offset: float = field(init=False, repr=False)
    _packed_points: bool = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # The aggregate block is a handful of scalars: one precompiled struct read beats numpy.
        names = [n for n in (*FORCE_AXES, "temperature") if n in self.aggregate_fields]
        specs = sorted((self.aggregate_fields[n] for n in names), key=lambda f: f.offset)
        code, pos = "<", 0
        for f in specs:
            code += "x" * (f.offset - pos) + _STRUCT_CODES[f.type]
            pos = f.offset + f.dtype.itemsize
        order = [f.name for f in specs]
        scales = [f.scale for f in specs]
        a, b = _TO_CELSIUS.get(self.aggregate_fields["temperature"].unit, (1.0, 0.0)) \
            if "temperature" in self.aggregate_fields else (1.0, 0.0)
        scales = [s * a if n == "temperature" else s for n, s in zip(order, scales, strict=True)]
        object.__setattr__(self, "_aggregate_reader", (struct.Struct(code), order, scales))
        object.__setattr__(self, "_temperature_offset", b)
        # Points: when fx fy fz share type and scale and sit side by side, one (P, 3) strided
        # view covers them (one numpy read + one multiply per frame).
        fx, fy, fz = (self.point_fields[a] for a in FORCE_AXES)
        size = fx.dtype.itemsize
        packed = (fx.type == fy.type == fz.type and fx.scale == fy.scale == fz.scale
                  and fy.offset == fx.offset + size and fz.offset == fx.offset + 2 * size)
        object.__setattr__(self, "_packed_points", packed)

    @property
    def may_be_nonfinite(self) -> bool:
        """Whether decoded point values can be NaN/inf: f32 fields, or raw × scale beyond float32."""
        f32_max = float(np.finfo(np.float32).max)
        for a in FORCE_AXES:
            f = self.point_fields[a]
            if f.type == "f32":
                return True
            info = np.iinfo(f.dtype)
            if max(abs(info.min), abs(info.max)) * abs(f.scale) > f32_max:
                return True
        return False

    @property
    def frame_size(self) -> int:
        """Exact byte length of one data frame."""
        return self.point_count * self.point_stride + self.aggregate_stride

    def layout_key(self) -> tuple:
        """What the published metadata depends on: point count and the declared geometry.
        Two formats with equal keys yield the same taxel layout (encodings may differ)."""
        def arr(a: np.ndarray | None) -> bytes | None:
            return None if a is None else np.ascontiguousarray(a, dtype=np.float64).tobytes()
        m = self.mounting
        return (self.point_count, arr(self.positions),
                None if m is None else (arr(m.point_rpy), arr(m.base_xyz), arr(m.base_rpy)))

    def decode_into(self, data: Any, out: np.ndarray) -> Aggregate | None:
        """Decode one frame: writes the (P, 3) point values (raw × scale, in `point_unit`, point
        axes) into `out` (float32, shape (P, 3)) and returns the aggregate block (None when the
        format declares no aggregate force). Raises DeviceFormatError on a wrong frame length."""
        buf = data if isinstance(data, (bytes, bytearray, memoryview)) else bytes(data)
        n = len(buf)
        if n != self.frame_size:
            kind = "truncated" if n < self.frame_size else "oversized"
            raise DeviceFormatError(
                f"{self.finger}: {kind} frame of {n} bytes; the format declares exactly "
                f"{self.frame_size} (point_count {self.point_count} × point_stride "
                f"{self.point_stride} + aggregate_stride {self.aggregate_stride})")
        if self._packed_points:
            f = self.point_fields["fx"]
            raw = np.ndarray((self.point_count, 3), dtype=f.dtype, buffer=buf, offset=f.offset,
                             strides=(self.point_stride, f.dtype.itemsize))
            # float64 scale: raw × scale is computed in double and rounded once to float32
            np.multiply(raw, np.float64(f.scale), out=out, casting="unsafe")
        else:
            for k, axis in enumerate(FORCE_AXES):
                f = self.point_fields[axis]
                raw = np.ndarray((self.point_count,), dtype=f.dtype, buffer=buf, offset=f.offset,
                                 strides=(self.point_stride,))
                np.multiply(raw, np.float64(f.scale), out=out[:, k], casting="unsafe")
        if "fx" not in self.aggregate_fields:
            return None
        reader, order, scales = self._aggregate_reader
        raw_agg = reader.unpack_from(buf, self.point_count * self.point_stride)
        values = {n: r * s for n, r, s in zip(order, raw_agg, scales, strict=True)}
        force = np.array([values["fx"], values["fy"], values["fz"]])
        return Aggregate(force, values["temperature"] + self._temperature_offset if "temperature" in values else math.nan)

    def decode(self, data: Any) -> tuple[np.ndarray, Aggregate | None]:
        """Convenience: decode into a fresh (P, 3) float32 array."""
        out = np.empty((self.point_count, 3), dtype=np.float32)
        agg = self.decode_into(data, out)
        return out, agg


def _fail(finger: str, key: str, rule: str) -> DeviceFormatError:
    return DeviceFormatError(f"{finger}: format key {key!r}: {rule}")


def _int(finger: str, obj: dict, key: str, *, minimum: int) -> int:
    if key not in obj:
        raise _fail(finger, key, "missing (required by format v1)")
    v = obj[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise _fail(finger, key, f"must be an integer ≥ {minimum}, got {v!r}")
    return v


def _floats(finger: str, key: str, value: Any, shape: tuple[int, ...]) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise _fail(finger, key, f"must be numbers of shape {shape}, got {value!r:.80}") from None
    if arr.shape != shape:
        raise _fail(finger, key, f"must have shape {shape}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise _fail(finger, key, "contains a non-finite value")
    return arr


def _fields(finger: str, key: str, items: Any, stride: int, default_unit: str | None,
            allowed_units: dict[str, tuple[str, ...]], notes: list[str]) -> dict[str, FieldSpec]:
    if not isinstance(items, list):
        raise _fail(finger, key, f"must be a list of field objects, got {type(items).__name__}")
    out: dict[str, FieldSpec] = {}
    for i, item in enumerate(items):
        where = f"{key}[{i}]"
        if not isinstance(item, dict):
            raise _fail(finger, where, "must be an object with name, type, offset")
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise _fail(finger, where + ".name", f"must be a non-empty string, got {name!r}")
        where = f"{key}[{name}]"
        if name in out:
            raise _fail(finger, where, "declared twice")
        for extra in sorted(set(item) - _FIELD_KEYS):
            notes.append(f"{where}.{extra} = {_short(item[extra])}")
        ftype = item.get("type")
        if ftype not in FIELD_TYPES:
            raise _fail(finger, where + ".type",
                        f"unknown type {ftype!r}; known: {', '.join(FIELD_TYPES)}")
        offset = item.get("offset")
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise _fail(finger, where + ".offset", f"must be an integer ≥ 0, got {offset!r}")
        size = FIELD_TYPES[ftype].itemsize
        if offset + size > stride:
            raise _fail(finger, where + ".offset",
                        f"{ftype} at offset {offset} ends at byte {offset + size}, beyond the "
                        f"stride of {stride} bytes")
        scale = item.get("scale", 1.0)
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale) \
                or scale == 0:
            raise _fail(finger, where + ".scale", f"must be a finite non-zero number, got {scale!r}")
        unit = normalise_unit(item.get("unit", default_unit))
        allowed = allowed_units.get(name)
        if allowed is not None:
            if unit is None:
                raise _fail(finger, where + ".unit",
                            "missing, and no default 'unit' is declared (pass assume_point_unit / "
                            "--assume-point-unit if you know the firmware's unit)")
            if unit not in allowed:
                raise _fail(finger, where + ".unit",
                            f"unknown unit {unit!r}; this decoder knows {', '.join(allowed)}")
        out[name] = FieldSpec(name, ftype, offset, float(scale), unit)
    spans = sorted((f.offset, f.offset + f.dtype.itemsize, n) for n, f in out.items())
    for (a0, a1, an), (b0, _b1, bn) in itertools.pairwise(spans):
        if b0 < a1:
            raise _fail(finger, f"{key}[{bn}].offset", f"overlaps field {an!r} (bytes {a0}..{a1 - 1})")
    return out


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def parse_format(finger: str, text: str | bytes, *, assume_point_unit: str | None = None) -> SensorFormat:
    """Parse and check one finger's `format` JSON. Raises DeviceFormatError naming the finger
    and the key for anything outside the v1 `point_array` contract.

    `assume_point_unit` ("N" or "normalized") is used only when the format declares no point
    unit at all (neither the top-level `unit` nor per field); without it such a format is
    refused rather than guessed."""
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DeviceFormatError(f"{finger}: format is not valid JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise DeviceFormatError(f"{finger}: format must be a JSON object, got {type(obj).__name__}")
    if obj.get("v") != 1 or isinstance(obj.get("v"), bool):
        raise _fail(finger, "v", f"unsupported version {obj.get('v')!r}; this decoder reads v 1")
    if obj.get("encoding") != "point_array":
        raise _fail(finger, "encoding",
                    f"unsupported encoding {obj.get('encoding')!r}; this decoder reads 'point_array'")
    notes = [f"top-level key {k!r} = {_short(obj[k])}" for k in sorted(set(obj) - _TOP_KEYS)]
    count = _int(finger, obj, "point_count", minimum=1)
    stride = _int(finger, obj, "point_stride", minimum=1)
    agg_stride = _int(finger, obj, "aggregate_stride", minimum=0)
    if assume_point_unit is not None and assume_point_unit not in POINT_UNITS:
        raise DeviceFormatError(f"assumed point unit {assume_point_unit!r} is not one of {', '.join(POINT_UNITS)}")
    default_unit = normalise_unit(obj.get("unit", assume_point_unit))
    if default_unit is not None and default_unit not in POINT_UNITS:
        raise _fail(finger, "unit", f"unknown unit {default_unit!r}; this decoder knows "
                                    f"{', '.join(POINT_UNITS)}")
    pfields = _fields(finger, "point_fields", obj.get("point_fields"), stride, default_unit,
                      {a: POINT_UNITS for a in FORCE_AXES}, notes)
    missing = [a for a in FORCE_AXES if a not in pfields]
    if missing:
        raise _fail(finger, f"point_fields[{missing[0]}]", "missing; points need fx, fy and fz")
    units = {pfields[a].unit for a in FORCE_AXES if pfields[a].unit is not None}
    if len(units) > 1:
        raise _fail(finger, "point_fields",
                    "mixed units among point fields ("
                    + ", ".join(f"{a}: {pfields[a].unit}" for a in FORCE_AXES) + ")")
    raw_agg = obj.get("aggregate_fields", [])
    # Aggregate units default per field (forces N, temperature °C), not to the point unit.
    raw_agg = [dict(f, unit=f.get("unit", "C" if f.get("name") == "temperature" else "N"))
               if isinstance(f, dict) else f for f in raw_agg] if isinstance(raw_agg, list) else raw_agg
    afields = _fields(finger, "aggregate_fields", raw_agg, agg_stride, None, {}, notes)
    # The aggregate block is the device's own summary, not contract data: a value in a unit this
    # decoder does not know is left out (and noted) rather than refused.
    forces = [afields[a] for a in FORCE_AXES if a in afields]
    if forces and len(forces) != 3:
        absent = next(a for a in FORCE_AXES if a not in afields)
        raise _fail(finger, f"aggregate_fields[{absent}]", "missing; the resultant needs fx, fy and fz")
    odd = [f for f in forces if f.unit not in AGGREGATE_FORCE_UNITS]
    if odd:
        notes.append(f"aggregate force in unit {odd[0].unit!r} (this decoder knows N): resultant not reported")
        for a in FORCE_AXES:
            del afields[a]
    temp = afields.get("temperature")
    if temp is not None and temp.unit not in _TO_CELSIUS:
        notes.append(f"aggregate_fields[temperature] in unit {temp.unit!r} (this decoder knows °C, K, °F): "
                     "temperature not reported")
        del afields["temperature"]
    notes += [f"aggregate_fields[{n}] not used" for n in afields if n not in (*FORCE_AXES, "temperature")]
    notes += [f"point_fields[{n}] not used" for n in pfields if n not in FORCE_AXES]

    positions = None
    if "positions" in obj:
        positions = _floats(finger, "positions", obj["positions"], (count, 3))
    given = [k for k in MOUNTING_KEYS if k in obj]
    mounting = None
    if given:
        if len(given) != len(MOUNTING_KEYS):
            absent = next(k for k in MOUNTING_KEYS if k not in obj)
            raise _fail(finger, absent,
                        f"partial mounting pose: {', '.join(given)} given without {absent} "
                        f"({', '.join(MOUNTING_KEYS)} come together)")
        mounting = Mounting(_floats(finger, "point_rpy", obj["point_rpy"], (count, 3)),
                            _floats(finger, "base_xyz", obj["base_xyz"], (3,)),
                            _floats(finger, "base_rpy", obj["base_rpy"], (3,)))
    agg_xyz = _floats(finger, "aggregate_xyz", obj["aggregate_xyz"], (3,)) if "aggregate_xyz" in obj else None
    agg_rpy = _floats(finger, "aggregate_rpy", obj["aggregate_rpy"], (3,)) if "aggregate_rpy" in obj else None
    return SensorFormat(
        finger=finger, point_count=count, point_stride=stride, aggregate_stride=agg_stride,
        point_fields=pfields, aggregate_fields=afields,
        point_unit=pfields["fx"].unit, positions=positions, mounting=mounting,
        aggregate_xyz=agg_xyz, aggregate_rpy=agg_rpy,
        ignored_point_fields=tuple(n for n in pfields if n not in FORCE_AXES),
        source=text if isinstance(text, str) else text.decode("utf-8"), unknown=tuple(notes))


def build_format(*, point_count: int, point_type: str = "i16", point_scale: float = 1.0,
                 unit: str = "N", aggregate_type: str = "i16", aggregate_scale: float = 0.01,
                 temperature_scale: float = 0.01, positions: np.ndarray | None = None,
                 mounting: Mounting | None = None, aggregate_xyz: np.ndarray | None = None,
                 aggregate_rpy: np.ndarray | None = None, point_padding: int = 0) -> dict:
    """A v1 `point_array` format object (as the firmware would declare it): fx fy fz packed at
    offsets 0, s, 2s of each point (+ `point_padding` unused bytes), then the aggregate block
    fx fy fz temperature. Used by the emulator and tests; `json.dumps` it for the wire."""
    size = FIELD_TYPES[point_type].itemsize
    asize = FIELD_TYPES[aggregate_type].itemsize
    fmt: dict[str, Any] = {
        "v": 1, "encoding": "point_array", "point_count": int(point_count),
        "point_stride": 3 * size + point_padding, "aggregate_stride": 4 * asize, "unit": unit,
        "point_fields": [{"name": a, "type": point_type, "offset": k * size, "scale": point_scale}
                         for k, a in enumerate(FORCE_AXES)],
        "aggregate_fields": [{"name": a, "type": aggregate_type, "offset": k * asize,
                              "scale": aggregate_scale, "unit": "N"} for k, a in enumerate(FORCE_AXES)]
        + [{"name": "temperature", "type": aggregate_type, "offset": 3 * asize,
            "scale": temperature_scale, "unit": "C"}],
    }
    if positions is not None:
        fmt["positions"] = np.asarray(positions, dtype=float).tolist()
    if mounting is not None:
        fmt["point_rpy"] = np.asarray(mounting.point_rpy, dtype=float).tolist()
        fmt["base_xyz"] = np.asarray(mounting.base_xyz, dtype=float).tolist()
        fmt["base_rpy"] = np.asarray(mounting.base_rpy, dtype=float).tolist()
    if aggregate_xyz is not None:
        fmt["aggregate_xyz"] = np.asarray(aggregate_xyz, dtype=float).tolist()
    if aggregate_rpy is not None:
        fmt["aggregate_rpy"] = np.asarray(aggregate_rpy, dtype=float).tolist()
    return fmt
