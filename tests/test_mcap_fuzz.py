"""Fuzzing the MCAP reading path: random mutations of a small real recording (flipped bytes,
overwritten runs, cuts, inserted and deleted bytes, lengths set to extreme values) through
validate (`inspect_file`), replay through a tracker and `recover`. Every case ends with a report
or a `TactileError`, never another exception, within bounded traced memory.

Hypothesis runs a fixed number of derandomized examples, so the test is deterministic."""
from __future__ import annotations

import struct
import tracemalloc
import warnings

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcap_helpers import record
from wuji_tactile_device.errors import RecordingWarning, TactileError
from wuji_tactile_device.recording import McapReplay
from wuji_tactile_device.recording.inspect import inspect_file
from wuji_tactile_device.recording.repair import recover
from wuji_tactile_device.streams.tracker import TactileTracker

PEAK_LIMIT = 64 << 20  # traced bytes per case; the source file is ~20 kB, its chunks ~6 kB each
_BASE: dict[str, bytes] = {}


def _base(tmp_path_factory) -> bytes:
    if "data" not in _BASE:
        path = tmp_path_factory.mktemp("fuzz") / "base.mcap"
        record(path, 40, flush_every=8, num_taxels=40)
        _BASE["data"] = path.read_bytes()
    return _BASE["data"]


@st.composite
def mutations(draw):
    """A list of (kind, position fraction, value) edits applied in order."""
    kinds = st.sampled_from(["flip", "overwrite", "cut", "insert", "delete", "length", "record_field"])
    edit = st.tuples(kinds, st.floats(0, 1, allow_nan=False), st.integers(0, 2**64 - 1))
    return draw(st.lists(edit, min_size=1, max_size=4))


def record_fields(data: bytes) -> list[tuple[int, int]]:
    """(offset, width) of the length and header fields of every top-level record (MCAP framing:
    opcode u8, length u64, body), chunk headers field by field: where a lie does the most harm."""
    out, pos = [], 8
    while pos + 9 <= len(data):
        opcode, length = struct.unpack_from("<BQ", data, pos)
        out.append((pos + 1, 8))
        if opcode == 0x06:  # chunk: start, end, uncompressed size (u64), crc, compression length (u32)
            out += [(pos + 9, 8), (pos + 17, 8), (pos + 25, 8), (pos + 33, 4), (pos + 37, 4)]
        elif opcode in (0x03, 0x04, 0x07):  # schema / channel / message index: first length-prefixed fields
            out += [(pos + 11, 4), (pos + 13, 4)]
        pos += 9 + length
    return out


def mutate(data: bytes, edits) -> bytes:
    b = bytearray(data)
    fields = record_fields(data)
    for kind, frac, value in edits:
        if not b:
            break
        pos = min(int(frac * len(b)), len(b) - 1)
        if kind == "record_field":
            at, width = fields[min(int(frac * len(fields)), len(fields) - 1)]
            if at + width <= len(b):
                b[at : at + width] = (value % 2 ** (8 * width)).to_bytes(width, "little")
        elif kind == "flip":
            b[pos] ^= 1 << (value % 8)
        elif kind == "overwrite":
            n = 1 + value % 16
            b[pos : pos + n] = value.to_bytes(8, "little")[: n] * 2
        elif kind == "cut":
            del b[pos:]
        elif kind == "insert":
            b[pos:pos] = value.to_bytes(8, "little")[: 1 + value % 8]
        elif kind == "delete":
            del b[pos : pos + 1 + value % 32]
        else:  # a u64 or u32 length field somewhere set to an extreme value
            width = 8 if value & 1 else 4
            if pos + width <= len(b):
                extreme = (value >> 1) if value & 2 else (2 ** (8 * width) - 1 - (value % 1024))
                b[pos : pos + width] = struct.pack("<Q" if width == 8 else "<I", extreme % 2 ** (8 * width))
    return bytes(b)


def _exercise(path, out) -> None:
    try:
        inspect_file(path).text()
    except TactileError:
        pass
    try:
        with McapReplay(path) as replay:
            trackers = [TactileTracker(cid, replay, error_policy="drop") for cid in replay.collections]
            steps = 0
            while not replay.finished and steps < 10_000:
                for tr in trackers:
                    tr.update()
                steps += 1
            assert replay.finished or not trackers
    except TactileError:
        pass
    try:
        recover(path, out, overwrite=True).text()
    except TactileError:
        pass


@settings(max_examples=150, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(edits=mutations())
def test_mutated_recordings_give_only_typed_errors_in_bounded_memory(tmp_path_factory, tmp_path, edits):
    data = mutate(_base(tmp_path_factory), edits)
    path = tmp_path / "fuzz.mcap"
    path.write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecordingWarning)
        tracemalloc.start()
        try:
            _exercise(path, tmp_path / "out.mcap")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < PEAK_LIMIT, (edits, peak)


def test_the_mutator_changes_the_file():
    """The fuzz test is only as good as its mutations: each kind must actually alter the bytes."""
    data = bytes(range(256)) * 8
    assert record_fields(data)  # framing walked from byte 8
    for kind in ("flip", "overwrite", "cut", "insert", "delete", "length", "record_field"):
        assert mutate(data, [(kind, 0.5, 12345)]) != data, kind
