"""The fingertip `format` decoder against hand-built frames (struct.pack, not our encoder), and
every refusal the vendor contract calls for."""
from __future__ import annotations

import json
import math
import struct

import numpy as np
import pytest

from wuji_tactile_device.errors import DeviceFormatError
from wuji_tactile_device.producers.hardware.format import parse_format

STRUCT = {"i8": "b", "u8": "B", "i16": "h", "u16": "H", "i32": "i", "u32": "I", "f32": "f"}
SIZE = {"i8": 1, "u8": 1, "i16": 2, "u16": 2, "i32": 4, "u32": 4, "f32": 4}
RAW = {  # three points × (fx, fy, fz) raw values within each type's range, extremes included
    "i8": [(-128, 127, 0), (5, -6, 7), (-1, 1, 100)],
    "u8": [(0, 255, 1), (10, 20, 30), (254, 0, 128)],
    "i16": [(-32768, 32767, 0), (1000, -2000, 3000), (-1, 1, 12345)],
    "u16": [(0, 65535, 1), (1000, 2000, 3000), (65534, 0, 40000)],
    "i32": [(-2**31, 2**31 - 1, 0), (100000, -200000, 300000), (-1, 1, 7)],
    "u32": [(0, 2**32 - 1, 1), (100000, 200000, 300000), (4000000000, 0, 9)],
    "f32": [(-1.5, 2.25, 0.0), (1e-3, -3.0, 1e6), (-0.125, 0.5, 7.75)],
}


def fmt_json(ptype="i16", *, scale=None, offsets=(0, None, None), pad=0, unit="N", count=3,
             agg=True, **extra) -> dict:
    size = SIZE[ptype]
    offs = [offsets[0] + k * size if o is None else o for k, o in enumerate(offsets)]
    stride = max(offs) + size + pad
    fields = []
    for name, off in zip(("fx", "fy", "fz"), offs, strict=True):
        f = {"name": name, "type": ptype, "offset": off}
        if scale is not None:
            f["scale"] = scale
        fields.append(f)
    obj = {"v": 1, "encoding": "point_array", "point_count": count, "point_stride": stride,
           "aggregate_stride": 16 if agg else 0, "point_fields": fields,
           "aggregate_fields": [{"name": "temperature", "type": "i16", "offset": 12, "scale": 0.01},
                                {"name": "fx", "type": "f32", "offset": 0},
                                {"name": "fy", "type": "f32", "offset": 4},
                                {"name": "fz", "type": "f32", "offset": 8, "unit": "N"}] if agg else []}
    if unit is not None:
        obj["unit"] = unit
    obj.update(extra)
    return obj


def frame(obj: dict, raw_points, agg=(1.5, -2.5, 3.25, 3150)) -> bytes:
    stride = obj["point_stride"]
    out = bytearray(obj["point_count"] * stride + obj["aggregate_stride"])
    for k, values in enumerate(raw_points):
        # the first fields get the given raw values; any further (extra) field stays zero
        for f, v in zip(obj["point_fields"][: len(values)], values, strict=True):
            struct.pack_into("<" + STRUCT[f["type"]], out, k * stride + f["offset"], v)
    if obj["aggregate_stride"]:
        base = obj["point_count"] * stride
        struct.pack_into("<fffh", out, base, *agg)
    return bytes(out)


@pytest.mark.parametrize("ptype", list(STRUCT))
@pytest.mark.parametrize("scale", [None, 0.001, -2.0])
def test_every_field_type_and_scale(ptype, scale):
    obj = fmt_json(ptype, scale=scale)
    f = parse_format("index", json.dumps(obj))
    forces, agg = f.decode(frame(obj, RAW[ptype]))
    expected = np.array(RAW[ptype], dtype=np.float64) * (1.0 if scale is None else scale)
    assert forces.dtype == np.float32 and forces.shape == (3, 3)
    np.testing.assert_allclose(forces, expected.astype(np.float32), rtol=1e-7, atol=0)
    assert agg.force.tolist() == [1.5, -2.5, 3.25]
    assert agg.temperature_c == pytest.approx(31.5)


@pytest.mark.parametrize("ptype", ["i16", "u32", "f32"])
def test_scattered_offsets_and_padding(ptype):
    size = SIZE[ptype]
    # fz first, then padding, fy, fx last; 3 spare bytes at the end of each point.
    obj = fmt_json(ptype, scale=0.5, offsets=(3 * size + 2, 2 * size + 1, 0), pad=3)
    f = parse_format("thumb", json.dumps(obj))
    assert f.point_stride == 4 * size + 5 and f.frame_size == 3 * f.point_stride + 16
    forces, _ = f.decode(frame(obj, RAW[ptype]))
    np.testing.assert_allclose(forces, (np.array(RAW[ptype], dtype=np.float64) * 0.5).astype(np.float32), rtol=1e-7)


def test_mixed_scales_per_axis_and_memoryview_input():
    obj = fmt_json("i16")
    for field, s in zip(obj["point_fields"], (0.01, 0.02, 0.04), strict=True):
        field["scale"] = s
    f = parse_format("ring", json.dumps(obj))
    forces, _ = f.decode(memoryview(frame(obj, RAW["i16"])))
    np.testing.assert_allclose(forces, (np.array(RAW["i16"]) * [0.01, 0.02, 0.04]).astype(np.float32), rtol=1e-7)


@pytest.mark.parametrize("unit", ["N", "normalized"])
def test_units_declared_at_top_or_per_field(unit):
    assert parse_format("pinky", json.dumps(fmt_json(unit=unit))).point_unit == unit
    obj = fmt_json(unit=None)
    for field in obj["point_fields"]:
        field["unit"] = unit
    assert parse_format("pinky", json.dumps(obj)).point_unit == unit


def test_no_unit_declared_is_refused_unless_assumed():
    obj = json.dumps(fmt_json(unit=None))
    with pytest.raises(DeviceFormatError, match=r"middle: format key 'point_fields\[fx\].unit': missing"):
        parse_format("middle", obj)
    assert parse_format("middle", obj, assume_point_unit="N").point_unit == "N"


def test_placement_keys_parsed_with_shapes():
    pos = [[0.001 * k, 0.0, -0.01] for k in range(3)]
    obj = fmt_json(positions=pos, point_rpy=[[0, 0, 0.1]] * 3, base_xyz=[0, 0.008, -0.015],
                   base_rpy=[0, 1.5707963267948966, 0], aggregate_xyz=[0, 0, 0], aggregate_rpy=[0, 0, 0])
    f = parse_format("index", json.dumps(obj))
    np.testing.assert_array_equal(f.positions, pos)
    assert f.mounting.base_xyz.tolist() == [0, 0.008, -0.015]
    assert f.mounting.point_rpy.shape == (3, 3)
    # positions alone may be absent (older firmware)
    obj.pop("positions")
    assert parse_format("index", json.dumps(obj)).positions is None


def test_frame_length_must_be_exact():
    obj = fmt_json()
    f = parse_format("thumb", json.dumps(obj))
    good = frame(obj, RAW["i16"])
    with pytest.raises(DeviceFormatError, match=r"thumb: truncated frame of 33 bytes; the format declares exactly 34"):
        f.decode(good[:-1])
    with pytest.raises(DeviceFormatError, match=r"thumb: oversized frame of 35 bytes"):
        f.decode(good + b"\0")


REFUSALS = [
    (lambda o: o.update(v=2), "'v': unsupported version 2"),
    (lambda o: o.update(encoding="image"), "'encoding': unsupported encoding 'image'"),
    (lambda o: o["point_fields"][1].update(type="f64"), r"'point_fields\[fy\].type': unknown type 'f64'"),
    (lambda o: o["point_fields"][1].update(type="I16"), r"'point_fields\[fy\].type': unknown type 'I16'"),
    (lambda o: o.update(unit="kPa"), "'unit': unknown unit 'kPa'"),
    (lambda o: o.update(unit="raw"), "'unit': unknown unit 'raw'"),
    (lambda o: o["point_fields"][2].update(unit="mN"), r"'point_fields\[fz\].unit': unknown unit 'mN'"),
    (lambda o: o["point_fields"][2].update(unit="normalized"), "'point_fields': mixed units among point fields"),
    (lambda o: o.update(point_rpy=[[0, 0, 0]] * 3, base_xyz=[0, 0, 0]), "'base_rpy': partial mounting pose: point_rpy, base_xyz given without base_rpy"),
    (lambda o: o.update(base_rpy=[0, 0, 0]), "'point_rpy': partial mounting pose"),
    (lambda o: o.update(positions=[[0, 0, 0]] * 2), r"'positions': must have shape \(3, 3\), got \(2, 3\)"),
    (lambda o: o.update(base_xyz=[0, 0, float("nan")], base_rpy=[0, 0, 0], point_rpy=[[0, 0, 0]] * 3), "'base_xyz': contains a non-finite value"),
    (lambda o: o["point_fields"][2].update(offset=5), r"'point_fields\[fz\].offset': i16 at offset 5 ends at byte 7, beyond the stride of 6"),
    (lambda o: o["point_fields"][1].update(offset=1), r"'point_fields\[fy\].offset': overlaps field 'fx'"),
    (lambda o: o["point_fields"][0].update(offset=-2), r"'point_fields\[fx\].offset': must be an integer"),
    (lambda o: o["point_fields"].pop(2), r"'point_fields\[fz\]': missing"),
    (lambda o: o["point_fields"].append(dict(o["point_fields"][0])), r"'point_fields\[fx\]': declared twice"),
    (lambda o: o["point_fields"][0].update(scale=0), r"'point_fields\[fx\].scale': must be a finite non-zero"),
    (lambda o: o.update(point_count=0), "'point_count': must be an integer ≥ 1"),
    (lambda o: o.pop("point_stride"), "'point_stride': missing"),
    (lambda o: o.update(aggregate_stride=-1), "'aggregate_stride': must be an integer ≥ 0"),
    (lambda o: o["aggregate_fields"].pop(3), r"'aggregate_fields\[fz\]': missing; the resultant needs"),
]


@pytest.mark.parametrize("mutate,message", REFUSALS)
def test_refusals_name_finger_and_key(mutate, message):
    obj = fmt_json()
    mutate(obj)
    with pytest.raises(DeviceFormatError, match=r"^ring: (format key )?" + message):
        parse_format("ring", json.dumps(obj))


def test_not_json_or_not_object():
    with pytest.raises(DeviceFormatError, match="^index: format is not valid JSON"):
        parse_format("index", "{v:1")
    with pytest.raises(DeviceFormatError, match="^index: format must be a JSON object, got list"):
        parse_format("index", "[1]")


def test_layout_key_ignores_encoding_but_not_geometry():
    a = parse_format("index", json.dumps(fmt_json("i16", scale=0.001, positions=[[0, 0, 0]] * 3)))
    b = parse_format("index", json.dumps(fmt_json("i32", scale=0.0001, positions=[[0, 0, 0]] * 3)))
    c = parse_format("index", json.dumps(fmt_json("i16", scale=0.001, positions=[[0, 0, 1e-4]] * 3)))
    assert a.layout_key() == b.layout_key()
    assert a.layout_key() != c.layout_key()


def test_emulator_frames_are_byte_exact_to_the_declared_format():
    """The emulated firmware's bytes, checked with struct against its own declared format:
    i16 little-endian at offsets 0, 2, 4 of a 6-byte point, value = raw × 0.001 N, aggregate
    block fx fy fz temperature (i16 × 0.01) after the last point."""
    from wuji_tactile_device.producers.emulated import EmulatedHand2

    emu = EmulatedHand2("right")
    fmt = json.loads(emu.pad("index").format_text)
    assert (fmt["point_count"], fmt["point_stride"], fmt["aggregate_stride"]) == (34, 6, 8)
    assert [(f["name"], f["type"], f["offset"], f["scale"]) for f in fmt["point_fields"]] == [
        ("fx", "i16", 0, 0.001), ("fy", "i16", 2, 0.001), ("fz", "i16", 4, 0.001)]
    forces = np.zeros((176, 3))
    forces[40 + 7] = [0.1234, -0.5, -2.0]  # index taxel 7, contract axes
    data = emu.encode_frame("index", forces)
    assert len(data) == 34 * 6 + 8
    # default mapping: device = −contract (same axes, the device reports the pad's push back)
    assert struct.unpack_from("<hhh", data, 7 * 6) == (-123, 500, 2000)
    assert data[:7 * 6] == bytes(42) and data[8 * 6:34 * 6] == bytes(26 * 6)
    fx, fy, fz, temp = struct.unpack_from("<hhhh", data, 34 * 6)
    assert temp == 3025  # 30.25 °C × 100
    # the resultant is the one loaded point's force in the module axes: same magnitude
    assert math.isclose(math.hypot(fx, fy, fz) / 100, math.hypot(0.1234, 0.5, 2.0), abs_tol=0.01)


# ----- tolerance: what a real firmware may add, recorded instead of refused -----

def test_unknown_top_level_and_field_keys_are_recorded_not_fatal():
    obj = fmt_json(pad=2, firmware="v2.4.1", calibrated_at="2026-11-02", colour="red")
    obj["point_fields"][0]["desc"] = "shear x"
    obj["point_fields"].append({"name": "pressure", "type": "i16", "offset": 6, "unit": "kPa"})
    fmt = parse_format("ring", json.dumps(obj))
    assert fmt.unknown == ("top-level key 'calibrated_at' = \"2026-11-02\"", "top-level key 'colour' = \"red\"",
                           "top-level key 'firmware' = \"v2.4.1\"", "point_fields[fx].desc = \"shear x\"",
                           "point_fields[pressure] not used")
    # and it still decodes exactly what it knows
    values, agg = fmt.decode(frame(obj, RAW["i16"]))
    assert values[1].tolist() == [1000.0, -2000.0, 3000.0] and agg.force.tolist() == [1.5, -2.5, 3.25]


def test_a_format_this_package_generates_has_nothing_unknown():
    assert parse_format("thumb", json.dumps(fmt_json())).unknown == ()


@pytest.mark.parametrize("spelling", ["C", "°C", "℃", "degC", "deg C", "celsius", "Celsius", "deg_C", "degrees Celsius"])
def test_temperature_unit_spellings_are_normalised(spelling):
    obj = fmt_json()
    obj["aggregate_fields"][0]["unit"] = spelling
    fmt = parse_format("ring", json.dumps(obj, ensure_ascii=False))
    assert fmt.aggregate_fields["temperature"].unit == "C" and fmt.unknown == ()
    assert fmt.decode(frame(obj, RAW["i16"]))[1].temperature_c == pytest.approx(31.5)


@pytest.mark.parametrize("unit,expected_c", [("K", 31.5 - 273.15), ("kelvin", 31.5 - 273.15), ("°F", (31.5 - 32) * 5 / 9)])
def test_kelvin_and_fahrenheit_temperatures_are_converted_to_celsius(unit, expected_c):
    obj = fmt_json()
    obj["aggregate_fields"][0]["unit"] = unit
    agg = parse_format("ring", json.dumps(obj, ensure_ascii=False)).decode(frame(obj, RAW["i16"]))[1]
    assert agg.temperature_c == pytest.approx(expected_c, abs=1e-9)


@pytest.mark.parametrize("spelling,canonical", [("newton", "N"), ("Newtons", "N"), ("n", "N"),
                                                ("normalised", "normalized"), ("Normalized", "normalized")])
def test_force_unit_spellings_are_normalised(spelling, canonical):
    assert parse_format("ring", json.dumps(fmt_json(unit=spelling))).point_unit == canonical


def test_unknown_temperature_unit_leaves_the_temperature_out_with_a_note():
    obj = fmt_json()
    obj["aggregate_fields"][0]["unit"] = "raw_adc"
    fmt = parse_format("ring", json.dumps(obj))
    assert "temperature" not in fmt.aggregate_fields
    assert fmt.unknown == ("aggregate_fields[temperature] in unit 'raw_adc' (this decoder knows °C, K, °F): "
                           "temperature not reported",)
    agg = fmt.decode(frame(obj, RAW["i16"]))[1]
    assert math.isnan(agg.temperature_c) and agg.force.tolist() == [1.5, -2.5, 3.25]


def test_aggregate_force_in_an_unknown_unit_leaves_the_resultant_out_not_the_taxels():
    obj = fmt_json()
    for f in obj["aggregate_fields"][1:]:
        f["unit"] = "normalized"
    fmt = parse_format("ring", json.dumps(obj))
    assert fmt.unknown == ("aggregate force in unit 'normalized' (this decoder knows N): resultant not reported",)
    values, agg = fmt.decode(frame(obj, RAW["i16"]))
    assert agg is None and values[2].tolist() == [-1.0, 1.0, 12345.0]
