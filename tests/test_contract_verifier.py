"""The verifier: garbage, truncations, bit flips and forged lengths raise InvalidMessageError only."""
from __future__ import annotations

import struct

import numpy as np
import pytest
from conftest import make_metadata
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wuji_tactile_device import (DeviceDataTimestamp, InvalidMessageError, MetadataValidationError, TactileMetadata,
                                 decode_metadata_record, decode_tactile_data, decode_tactile_record,
                                 encode_metadata_record, encode_tactile_data, encode_tactile_record)

TS = DeviceDataTimestamp(1, 2, 3)
RECORD = encode_tactile_record(np.arange(176 * 3, dtype=np.float32).reshape(176, 3), TS)
DATA = encode_tactile_data(np.ones((40, 3), np.float32))
METADATA = make_metadata(12).encode()
METADATA_RECORD = encode_metadata_record(make_metadata(12), TS)
DECODERS = {
    "record": (RECORD, decode_tactile_record),
    "data": (DATA, decode_tactile_data),
    "metadata": (METADATA, TactileMetadata.decode),
    "metadata_record": (METADATA_RECORD, decode_metadata_record),
}
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def decode_or_typed_error(decode, buf):
    """Decode `buf`; the only exception allowed is InvalidMessageError. Decoded metadata must then
    validate or fail with MetadataValidationError, never anything else."""
    try:
        out = decode(buf)
    except InvalidMessageError as exc:
        assert str(exc)  # a message that says what is wrong
        return None
    if isinstance(out, TactileMetadata) or hasattr(out, "metadata"):
        md = out if isinstance(out, TactileMetadata) else out.metadata
        try:
            md.validate()
        except MetadataValidationError:
            pass
    return out


@pytest.mark.parametrize("kind", DECODERS)
@SETTINGS
@given(data=st.binary(max_size=3000))
def test_random_bytes(kind, data):
    decode_or_typed_error(DECODERS[kind][1], data)


@pytest.mark.parametrize("kind", DECODERS)
@SETTINGS
@given(data=st.binary(min_size=0, max_size=200))
def test_random_bytes_behind_a_valid_identifier(kind, data):
    valid, decode = DECODERS[kind]
    decode_or_typed_error(decode, valid[:8] + data)


@pytest.mark.parametrize("kind", DECODERS)
def test_every_truncation_is_refused(kind):
    valid, decode = DECODERS[kind]
    decode(valid)  # the whole buffer is fine
    for length in range(len(valid)):
        with pytest.raises(InvalidMessageError):
            decode(valid[:length])


@pytest.mark.parametrize("kind", DECODERS)
@SETTINGS
@given(st.data())
def test_bit_flips_never_raise_anything_else(kind, data):
    valid, decode = DECODERS[kind]
    buf = bytearray(valid)
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(buf) - 1))
        buf[pos] ^= 1 << data.draw(st.integers(0, 7))
    out = decode_or_typed_error(decode, bytes(buf))
    if kind == "record" and out is not None:
        # Whatever decoded lies inside the buffer and has a consistent shape.
        assert out.forces.ndim == 2 and out.forces.shape[1] == 3
        assert out.forces.nbytes <= len(buf)


def vector_length_positions(buf: bytes) -> list[int]:
    """Positions of the 4-byte words that are plausible vector lengths in `buf`."""
    return [p for p in range(8, len(buf) - 3, 4)]


@pytest.mark.parametrize("kind", DECODERS)
@pytest.mark.parametrize("forged", [0x7FFFFFFF, 0xFFFFFFFF, 10**6, 2**31 + 5])
def test_forged_huge_lengths_at_every_word(kind, forged):
    valid, decode = DECODERS[kind]
    for pos in vector_length_positions(valid):
        buf = bytearray(valid)
        struct.pack_into("<I", buf, pos, forged)
        decode_or_typed_error(decode, bytes(buf))  # never MemoryError / struct.error / hang


def test_forged_force_count_overrunning_the_buffer_is_named():
    rec = decode_tactile_record(RECORD)
    count_pos = rec.forces.__array_interface__["data"][0] - np.frombuffer(RECORD, np.uint8).__array_interface__["data"][0] - 4
    buf = bytearray(RECORD)
    struct.pack_into("<I", buf, count_pos, 177)
    with pytest.raises(InvalidMessageError, match=r"forces: vector claims 177 elements of 12 bytes but only 2112 bytes remain"):
        decode_tactile_record(bytes(buf))
    # A forged *smaller* count decodes as fewer taxels: the layout check against the adopted
    # metadata (taxel count) is what refuses it.
    struct.pack_into("<I", buf, count_pos, 100)
    short = decode_tactile_record(bytes(buf)).forces
    assert short.shape == (100, 3)
    with pytest.raises(Exception, match="metadata has 176 taxels"):
        make_metadata(176).check_forces(short)


def test_unknown_selection_is_refused():
    md = make_metadata(3)
    buf = bytearray(md.encode())
    # Find the geometry_mapping_type byte (value 1) by trying each candidate position.
    for pos in range(len(buf)):
        if buf[pos] != 1:
            continue
        trial = bytearray(buf)
        trial[pos] = 7
        try:
            TactileMetadata.decode(bytes(trial))
        except InvalidMessageError as exc:
            if "geometry_mapping_type: value 7 is not LBS" in str(exc) or "segment_source_type: value 7" in str(exc):
                return
    pytest.fail("no selection byte found")


def test_non_bytes_input_is_a_typed_error():
    with pytest.raises(InvalidMessageError, match="expected a bytes-like buffer, got int"):
        decode_tactile_record(5)


def test_peek_record_times_is_bounds_checked_on_every_truncation_and_byte_flip():
    """The recorder reads each record's timestamp in place; a hostile payload must give the
    timestamp or InvalidMessageError, never struct.error / IndexError."""
    import numpy as np

    from wuji_tactile_device.contract.metadata import encode_metadata_record
    from wuji_tactile_device.contract.naming import Stream
    from wuji_tactile_device.contract.records import DeviceDataTimestamp, encode_tactile_record, peek_record_times
    from wuji_tactile_device.errors import InvalidMessageError

    from conftest import make_metadata

    cases = [(Stream.DATA, encode_tactile_record(np.ones((20, 3), np.float32), DeviceDataTimestamp(5, 6, 7))),
             (Stream.METADATA, encode_metadata_record(make_metadata(), DeviceDataTimestamp(5, 6, 7)))]
    for stream, good in cases:
        assert peek_record_times(good, stream) == (5, 6)
        variants = [good[:k] for k in range(len(good))]
        for i in range(min(len(good), 200)):
            for value in (0x00, 0xFF, good[i] ^ 0x01):
                variants.append(good[:i] + bytes([value]) + good[i + 1:])
        for payload in variants:
            try:
                times = peek_record_times(payload, stream)
            except InvalidMessageError:
                continue
            assert len(times) == 2 and all(isinstance(t, int) for t in times)
