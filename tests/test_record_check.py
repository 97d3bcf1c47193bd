"""The consumer's run check (`ForceRecordCodec.check_events`): the compiled check
(`_record_check`) and the numpy path pass and refuse exactly the same runs, and both agree with
the contract's own decoder record by record."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streams_helpers import forces_for

from wuji_tactile_device.contract import DeviceDataTimestamp, decode_tactile_record, encode_tactile_record
from wuji_tactile_device.contract import records
from wuji_tactile_device.contract.records import ForceRecordCodec
from wuji_tactile_device.streams.base import LivelinessChange, Message
from wuji_tactile_device.contract.naming import Stream

PAYLOAD = Message._fields.index("payload")
needs_native = pytest.mark.skipif(not records.NATIVE_AVAILABLE and os.environ.get("WUJI_REQUIRE_NATIVE") != "1",
                                  reason="the install did not compile _record_check (no C compiler)")


def _message(payload: object, sequence: int) -> Message:
    return Message("c", Stream.DATA, payload, 7, sequence, 0)  # type: ignore[arg-type]


def _run(num_taxels: int, count: int) -> list[bytes]:
    return [encode_tactile_record(forces_for(i, num_taxels), DeviceDataTimestamp(i, 2 * i, -3 * i)) for i in range(count)]


def _verdicts(codec: ForceRecordCodec, events: list, start: int, count: int) -> tuple:
    """(native result, numpy result) of the same call; the numpy path with the compiled check hidden."""
    native = codec.check_events(events, start, count, PAYLOAD)
    saved = records._native
    records._native = None
    try:
        reference = codec.check_events(events, start, count, PAYLOAD)
    finally:
        records._native = saved
    return native, reference


def _is_layout_record(payload: object, codec: ForceRecordCodec) -> bool:
    """The rule, written independently of the codec's tables: `bytes` of the layout's size equal
    to the layout's record everywhere but the 24 timestamp bytes and the N × 12 force bytes, and
    every force finite."""
    if type(payload) is not bytes or len(payload) != codec.size:
        return False
    template = encode_tactile_record(np.zeros((codec.num_taxels, 3), np.float32), DeviceDataTimestamp(0, 0, 0))
    ts, forces = codec._ts, codec._forces
    variable = set(range(ts, ts + 24)) | set(range(forces, forces + 12 * codec.num_taxels))
    if any(payload[i] != template[i] for i in range(codec.size) if i not in variable):
        return False
    return bool(np.isfinite(np.frombuffer(payload, np.float32, 3 * codec.num_taxels, forces)).all())


#: Ways to spoil one record of a run: (name, function(record, codec, rng) -> payload).
def _nan(record, codec, rng):
    v = rng.integers(3 * codec.num_taxels)
    b = bytearray(record)
    b[codec._forces + 4 * v : codec._forces + 4 * v + 4] = np.float32(rng.choice([np.nan, np.inf, -np.inf])).tobytes()
    return bytes(b)


def _nan_payload(record, codec, rng):  # a NaN whose mantissa bits are random (any NaN must be refused)
    v = rng.integers(3 * codec.num_taxels)
    bits = np.uint32(0x7F800000 | int(rng.integers(1, 1 << 23)) | (int(rng.integers(2)) << 31))
    b = bytearray(record)
    b[codec._forces + 4 * v : codec._forces + 4 * v + 4] = bits.tobytes()
    return bytes(b)


def _structural(record, codec, rng):
    structural = [i for i in range(codec.size)
                  if not (codec._ts <= i < codec._middle_at or codec._forces <= i < codec._tail_start)]
    i = int(rng.choice(structural))
    b = bytearray(record)
    b[i] ^= 1 << int(rng.integers(8))
    return bytes(b)


def _timestamp(record, codec, rng):  # a variable field: still a valid record
    b = bytearray(record)
    b[codec._ts + int(rng.integers(24))] ^= 0xFF
    return bytes(b)


def _finite(record, codec, rng):  # other finite forces, the largest float32 included: valid
    forces = rng.normal(0, 1e3, (codec.num_taxels, 3)).astype(np.float32)
    forces.flat[int(rng.integers(forces.size))] = np.finfo(np.float32).max
    forces.flat[int(rng.integers(forces.size))] = -np.float32(1e-45)  # a subnormal
    return encode_tactile_record(forces, DeviceDataTimestamp(1, 2, 3))


SPOILERS = {
    "none": lambda record, codec, rng: record,
    "non-finite force": _nan,
    "any NaN bit pattern": _nan_payload,
    "structural bit": _structural,
    "timestamp bytes": _timestamp,
    "finite extremes": _finite,
    "one byte short": lambda record, codec, rng: record[:-1],
    "one byte long": lambda record, codec, rng: record + b"\0",
    "bytearray": lambda record, codec, rng: bytearray(record),
    "memoryview": lambda record, codec, rng: memoryview(record),
}


@settings(max_examples=150, deadline=None)
@given(num_taxels=st.sampled_from([1, 2, 15, 34, 40, 176]), count=st.integers(1, 30), data=st.data())
def test_the_compiled_check_and_numpy_pass_and_refuse_the_same_runs(num_taxels, count, data):
    codec = ForceRecordCodec(num_taxels)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    payloads: list = _run(num_taxels, count)
    spoiled = data.draw(st.lists(st.tuples(st.integers(0, count - 1), st.sampled_from(sorted(SPOILERS))), max_size=3))
    for index, name in spoiled:
        payloads[index] = SPOILERS[name](bytes(payloads[index]), codec, rng)
    before = data.draw(st.integers(0, 3))
    events = [LivelinessChange("c", 7, True)] * before + [_message(p, i) for i, p in enumerate(payloads)]
    native, reference = _verdicts(codec, events, before, count)
    expected = all(_is_layout_record(p, codec) for p in payloads)
    assert (reference is not None) == expected, spoiled
    if records.NATIVE_AVAILABLE:
        assert (native is not None) == expected, spoiled
    if expected:  # what passes is what the contract's full verifier accepts, with the same forces
        assert all(np.isfinite(decode_tactile_record(p).forces).all() for p in payloads)
        newest = decode_tactile_record(payloads[-1]).forces
        for forces in (native, reference):
            assert forces.shape == (num_taxels, 3) and forces.dtype == np.float32 and not forces.flags.writeable
            assert np.array_equal(forces, newest)


@pytest.mark.parametrize("backend", ["native", "numpy"])
def test_a_run_of_other_events_is_refused_not_misread(backend, monkeypatch):
    if backend == "numpy":
        monkeypatch.setattr(records, "_native", None)
    elif not records.NATIVE_AVAILABLE:
        pytest.skip("the install did not compile _record_check (no C compiler)")
    codec = ForceRecordCodec(15)
    good = [_message(p, i) for i, p in enumerate(_run(15, 4))]
    assert codec.check_events(good, 0, 4, PAYLOAD) is not None
    for intruder in ("not a tuple", ("too", "short"), LivelinessChange("c", 7, True)):
        events = good[:2] + [intruder] + good[2:]
        assert codec.check_events(events, 0, 5, PAYLOAD) is None, intruder
        assert codec.check_events(events, 3, 2, PAYLOAD) is not None  # the run after it is fine
    with pytest.raises(ValueError, match=r"check_run: records 3\.\.5 outside the 4 events"):
        codec.check_events(good, 3, 2, PAYLOAD)
    with pytest.raises(ValueError, match=r"check_run: records 0\.\.0 outside the 4 events"):
        codec.check_events(good, 0, 0, PAYLOAD)
    with pytest.raises(ValueError, match="check_run: item -1 is not an index of the events' tuples"):
        codec.check_events(good, 0, 4, -1)


@needs_native
def test_the_compiled_check_refuses_contradicting_arguments_precisely():
    from wuji_tactile_device.contract import _record_check as native

    codec = ForceRecordCodec(15)
    events = [_message(p, i) for i, p in enumerate(_run(15, 2))]
    size, template, spans = codec.size, codec._template, codec._spans
    ok = (events, 0, 2, PAYLOAD, size, template, spans, codec._forces, 45)
    assert native.check_run(*ok) is True
    cases = [
        ((events, 0, 2, PAYLOAD, size, template[:-1], spans, codec._forces, 45),
         f"template of {size - 1} bytes for records of {size} bytes"),
        ((events, 0, 2, PAYLOAD, size, template, spans[:-1], codec._forces, 45), r"spans must be int64 \(offset, length\) pairs"),
        ((events, 0, 2, PAYLOAD, size, template, np.array([size - 4, 8], np.int64).tobytes(), codec._forces, 45),
         rf"structural span \({size - 4}, 8\) outside a record of {size} bytes"),
        ((events, 0, 2, PAYLOAD, size, template, spans, codec._forces, 46 + size),
         f"{46 + size} float32 values at byte {codec._forces} do not fit a record of {size} bytes"),
        ((events, 0, 2, PAYLOAD, size, template, spans, codec._forces + 2, 45), "do not fit"),
    ]
    for args, message in cases:
        with pytest.raises(ValueError, match=message):
            native.check_run(*args)
    with pytest.raises(TypeError, match="check_run takes 9 arguments, got 8"):
        native.check_run(*ok[:-1])
    with pytest.raises(TypeError, match="events must be a list"):
        native.check_run(tuple(events), *ok[1:])


def test_the_check_is_compiled_where_ci_requires_it():
    """CI (`.ci/run` sets WUJI_REQUIRE_NATIVE=1) must have compiled the run check; a machine
    without a compiler checks with numpy (stated, not an error)."""
    if os.environ.get("WUJI_REQUIRE_NATIVE") == "1":
        assert records.NATIVE_AVAILABLE, "the install did not compile _record_check"


MODULE = "wuji_tactile_device.contract._record_check"


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})


def test_a_stale_build_is_refused_at_import():
    """An extension of another calling convention (left by an older `pip install -e .`) must not
    be called with wrong arguments: the import names the file and the fix."""
    out = _python(f"""
        import importlib.machinery, sys, types
        stale = types.ModuleType({MODULE!r})
        stale.__spec__ = importlib.machinery.ModuleSpec({MODULE!r}, None)
        stale.__file__ = "/old/build/stale.so"
        stale.ABI = 0
        sys.modules[{MODULE!r}] = stale
        import wuji_tactile_device.contract.records
    """)
    assert out.returncode == 1
    assert ("ImportError: /old/build/stale.so: a stale build of the compiled run check (ABI 0, this package "
            "needs 1): rebuild it with `pip install -e .`") in out.stderr


def test_an_install_without_the_extension_checks_with_numpy():
    """Without the built module the package imports and a tracker's run path checks with numpy
    (`check_run` over the joined payloads) and delivers the run."""
    out = _python(f"""
        import importlib.util, sys
        find = importlib.util.find_spec
        importlib.util.find_spec = lambda n, *a: None if n == {MODULE!r} else find(n, *a)
        from wuji_tactile_device.contract import records
        from wuji_tactile_device.streams.inproc import InProcessBus
        from wuji_tactile_device.streams.publisher import TactilePublisher
        from wuji_tactile_device.streams.tracker import TactileTracker
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from streams_helpers import forces_for, small_metadata
        runs = []
        check_run = records.ForceRecordCodec.check_run
        records.ForceRecordCodec.check_run = lambda self, joined, count: runs.append(count) or check_run(self, joined, count)
        bus = InProcessBus()
        md = small_metadata(3)
        tracker = TactileTracker("tactile/right", bus)
        publisher = TactilePublisher("tactile/right", md, bus)
        publisher.publish(forces_for(0, 15), sample_time_ns=1)
        tracker.update()
        for i in range(1, 41):
            publisher.publish(forces_for(i, 15), sample_time_ns=1 + i)
        delivered = tracker.update()
        newest = tracker.get_data()
        print(records.NATIVE_AVAILABLE, {MODULE!r} in sys.modules, delivered, newest.sequence, runs,
              bool((newest.forces == forces_for(40, 15)).all()))
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False", "40", "40", "[40]", "True"]
