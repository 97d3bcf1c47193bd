"""Round trips, zero-copy views and byte-exactness of the contract's messages."""
from __future__ import annotations

import importlib.util

import flatbuffers
import numpy as np
import pytest
from conftest import make_metadata

from wuji_tactile_device import (DATA_RECORD_SCHEMA_NAME, DataLayoutError, DeviceDataTimestamp, HandJoint,
                                 InvalidMessageError, MessageTooLargeError, TactileMetadata, decode_metadata_record,
                                 decode_tactile_data, decode_tactile_record, encode_metadata_record,
                                 encode_tactile_data, encode_tactile_record, tactile_record_size)
from wuji_tactile_device.generated.core import DeviceDataTimestamp as GenTimestamp
from wuji_tactile_device.generated.core import TactileDataArray as GenArray
from wuji_tactile_device.generated.core import TactileDataArrayRecord as GenRecord
from wuji_tactile_device.generated.core import TaxelForce as GenForce
from wuji_tactile_device.contract import bfbs

TS = DeviceDataTimestamp(-(2**63), 2**63 - 1, 123_456_789)


def forces_of(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(scale=2.0, size=(n, 3)).astype(np.float32)


@pytest.mark.parametrize("n", [1, 176, 4096])
def test_record_round_trip_is_bit_exact(n):
    f = forces_of(n)
    f[0] = [np.float32(-0.0), np.float32(1e-45), np.float32(3.4e38)]  # signed zero, denormal, near max
    rec = decode_tactile_record(encode_tactile_record(f, TS))
    assert rec.forces.shape == (n, 3) and rec.forces.dtype == np.float32
    assert rec.forces.tobytes() == f.tobytes()
    assert rec.timestamp == TS


@pytest.mark.parametrize("n", [1, 176, 4096])
def test_data_round_trip_is_bit_exact(n):
    f = forces_of(n, seed=n)
    assert decode_tactile_data(encode_tactile_data(f)).tobytes() == f.tobytes()


def test_decoded_forces_are_a_read_only_view_of_the_buffer():
    buf = bytearray(encode_tactile_record(forces_of(176), TS))
    view = decode_tactile_record(buf).forces
    with pytest.raises(ValueError):
        view[0, 0] = 1.0
    # Zero copy: changing the buffer shows through the view.
    before = float(view[5, 2])
    off = view.__array_interface__["data"][0] - np.frombuffer(buf, np.uint8).__array_interface__["data"][0]
    buf[off + 5 * 12 + 8: off + 5 * 12 + 12] = np.float32(before + 1.0).tobytes()
    assert float(view[5, 2]) == np.float32(before + 1.0)


def reference_record(forces: np.ndarray, ts: DeviceDataTimestamp) -> bytes:
    """The same record written with flatc's generated builder functions (element by element)."""
    b = flatbuffers.Builder(0)
    GenArray.StartForcesVector(b, len(forces))
    for fx, fy, fz in forces[::-1]:
        GenForce.CreateTaxelForce(b, float(fx), float(fy), float(fz))
    vec = b.EndVector()
    GenArray.Start(b)
    GenArray.AddForces(b, vec)
    data = GenArray.End(b)
    GenRecord.Start(b)  # 8-byte struct first, then the offset (largest alignment first)
    GenRecord.AddTimestamp(b, GenTimestamp.CreateDeviceDataTimestamp(b, *ts))
    GenRecord.AddData(b, data)
    b.Finish(GenRecord.End(b), b"TDAR")
    return bytes(b.Output())


@pytest.mark.parametrize("n", [1, 176])
def test_record_bytes_equal_the_generated_builders(n):
    f = forces_of(n, seed=3)
    ours = encode_tactile_record(f, TS)
    theirs = reference_record(f, TS)
    # The generated reader agrees with our decoder on what the reference bytes hold.
    rec = GenRecord.TactileDataArrayRecord.GetRootAs(theirs, 0)
    assert rec.Data().ForcesLength() == n and rec.Timestamp().SampleTimeRawDeviceClock() == TS[2]
    assert decode_tactile_record(theirs).forces.tobytes() == f.tobytes()
    assert ours == theirs


def test_record_size_is_exact():
    for n in (0, 1, 176, 500):
        assert tactile_record_size(n) == len(encode_tactile_record(np.zeros((n, 3)), TS))


def test_bad_force_shapes_are_refused():
    for bad in (np.zeros((4, 2)), np.zeros(12), np.zeros((2, 3, 1)), np.array([["a", "b", "c"]])):
        with pytest.raises(DataLayoutError, match=r"forces must"):
            encode_tactile_record(bad, TS)


def test_timestamp_must_fit_int64():
    with pytest.raises(DataLayoutError, match="int64"):
        encode_tactile_record(forces_of(2), DeviceDataTimestamp(2**63, 0, 0))


def test_max_size_is_enforced_before_decoding():
    buf = encode_tactile_record(forces_of(176), TS)
    with pytest.raises(MessageTooLargeError, match=rf"{len(buf)} bytes exceeds the limit of 1000"):
        decode_tactile_record(buf, max_size=1000)
    assert decode_tactile_record(buf, max_size=len(buf)).forces.shape == (176, 3)


def test_records_and_arrays_are_not_interchangeable():
    with pytest.raises(InvalidMessageError, match="file identifier b'TDAT' is not b'TDAR'"):
        decode_tactile_record(encode_tactile_data(forces_of(3)))
    with pytest.raises(InvalidMessageError, match="file identifier"):
        TactileMetadata.decode(encode_tactile_data(forces_of(3)))


def test_metadata_round_trip_equality_and_determinism():
    md = make_metadata(176)
    buf = md.encode()
    back = TactileMetadata.decode(buf)
    assert back == md and hash(back) == hash(md)
    assert back.encode() == buf  # same metadata -> same bytes
    assert back.joint_ids == md.joint_ids and all(isinstance(j, HandJoint) for j in back.joint_ids)
    assert back.num_segments == 5 and back.num_taxels == 176
    rec = decode_metadata_record(encode_metadata_record(md, TS))
    assert rec.metadata == md and rec.timestamp == TS
    assert make_metadata(176, seed=1) != md


def test_metadata_is_immutable():
    md = make_metadata(4)
    with pytest.raises(ValueError):
        md.taxel_bind_poses[0, 0] = 1.0
    with pytest.raises(AttributeError):
        md.extra = 1


def test_bfbs_names_the_record_root():
    data = bfbs("TactileDataArrayRecord")
    assert data[4:8] == b"BFBS" and DATA_RECORD_SCHEMA_NAME.encode() in data
    with pytest.raises(ValueError, match="no .bfbs for"):
        bfbs("Nope")


def test_hand_joint_values():
    assert (HandJoint.PALM, HandJoint.WRIST, HandJoint.THUMB_METACARPAL, HandJoint.THUMB_TIP) == (0, 1, 2, 5)
    assert (HandJoint.INDEX_METACARPAL, HandJoint.LITTLE_TIP, HandJoint.NUM_JOINTS) == (6, 25, 26)


@pytest.mark.skipif(importlib.util.find_spec("isaacteleop") is None,
                    reason="isaacteleop (optional extra) is not installed")
def test_hand_joint_equals_isaac_teleop():
    from isaacteleop.schema import HandJoint as IsaacHandJoint

    theirs = {name: int(getattr(IsaacHandJoint, name)) for name in dir(IsaacHandJoint) if name.isupper()}
    assert theirs == {j.name: int(j) for j in HandJoint}
