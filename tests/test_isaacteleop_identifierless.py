"""Records written WITHOUT a file identifier (as upstream writers do: Isaac Teleop's schemas declare
none) decode by their structure; another contract type's identifier is still refused; a broken
identifier-less buffer fails on its structure. Buffers are built with the flatc-generated builder
API (field order chosen by the generated code, not by this package's encoder)."""
from __future__ import annotations

import flatbuffers
import numpy as np
import pytest

from wuji_tactile_device.contract import TactileMetadata, decode_metadata_record
from wuji_tactile_device.contract.metadata import encode_metadata_record
from wuji_tactile_device.contract.naming import Stream
from wuji_tactile_device.contract.records import (DeviceDataTimestamp, decode_tactile_data, decode_tactile_record,
                                                   encode_tactile_record, peek_record_times)
from wuji_tactile_device.errors import InvalidMessageError
from wuji_tactile_device.generated.core import TactileDataArray as TDA
from wuji_tactile_device.generated.core import TactileDataArrayRecord as TDAR
from wuji_tactile_device.generated.core.DeviceDataTimestamp import CreateDeviceDataTimestamp
from wuji_tactile_device.generated.core.TaxelForce import CreateTaxelForce
from wuji_tactile_device.producers.sim.layout_metadata import sim_metadata

TS = DeviceDataTimestamp(11_000, 10_000, 9)


def _upstream_record(forces: np.ndarray, *, record: bool = True) -> bytes:
    b = flatbuffers.Builder(1024)
    TDA.StartForcesVector(b, len(forces))
    for f in forces[::-1]:
        CreateTaxelForce(b, *map(float, f))
    vec = b.EndVector()
    TDA.Start(b)
    TDA.AddForces(b, vec)
    data = TDA.End(b)
    if not record:
        b.Finish(data)
        return bytes(b.Output())
    TDAR.Start(b)
    TDAR.AddData(b, data)
    TDAR.AddTimestamp(b, CreateDeviceDataTimestamp(b, *TS))
    b.Finish(TDAR.End(b))  # no file identifier
    return bytes(b.Output())


def test_identifierless_data_record_and_array_decode_by_structure():
    forces = np.arange(30, dtype=np.float32).reshape(10, 3) - 7.5
    buf = _upstream_record(forces)
    assert buf[4:8] not in (b"TDAR", b"TDAT", b"TMET", b"TMER")
    rec = decode_tactile_record(buf)
    np.testing.assert_array_equal(rec.forces, forces)
    assert rec.timestamp == TS
    assert peek_record_times(buf, Stream.DATA) == (TS[0], TS[1])
    np.testing.assert_array_equal(decode_tactile_data(_upstream_record(forces, record=False)), forces)


def test_identifierless_metadata_record_decodes_like_the_identified_one():
    md = sim_metadata("right")
    identified = encode_metadata_record(md, TS)
    assert identified[4:8] == b"TMER"
    stripped = bytearray(identified)  # the same buffer with the identifier bytes blanked
    stripped[4:8] = b"\0\0\0\0"
    decoded = decode_metadata_record(bytes(stripped))
    assert decoded.timestamp == TS
    assert decoded.metadata == md and isinstance(decoded.metadata, TactileMetadata)


def test_another_contract_identifier_is_still_refused_and_broken_structure_named():
    buf = bytearray(encode_tactile_record(np.zeros((4, 3), np.float32), TS))
    buf[4:8] = b"TMER"
    with pytest.raises(InvalidMessageError, match="file identifier b'TMER' is not b'TDAR'"):
        decode_tactile_record(bytes(buf))
    broken = bytearray(_upstream_record(np.zeros((4, 3), np.float32)))
    broken[0:4] = (len(broken) + 64).to_bytes(4, "little")  # root offset past the end
    with pytest.raises(InvalidMessageError, match=r"TactileDataArrayRecord \(no file identifier\): table offset"):
        decode_tactile_record(bytes(broken))
