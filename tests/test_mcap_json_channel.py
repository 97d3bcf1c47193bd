"""Auxiliary JSON channels in a recording (McapRecorder.add_json_channel / write_json): stored as
MCAP `json` + `jsonschema` (read back with the official reader), float-exact, invisible to the
tracker on replay, listed and checked by inspect, kept by recover and by truncation, flushed
like the contract topics, and refused loudly when misused."""
from __future__ import annotations

import json
import math
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from mcap.reader import make_reader
from mcap.writer import Writer

from conftest import make_metadata
from mcap_helpers import STEP_NS, forces_for, official_chunks, official_messages
from wuji_tactile_device.errors import RecordingError, RecordingWarning
from wuji_tactile_device.streams.publisher import TactilePublisher
from wuji_tactile_device.recording import McapRecorder, McapReplay, inspect_file, recover
from wuji_tactile_device.recording.scan import FileView, read_chunk, scan
from wuji_tactile_device.streams.tracker import TactileTracker
from wuji_tactile_device.streams.inproc import InProcessBus

AUX = "tactile/right/aux"
SCHEMA = {"title": "test.Aux", "type": "object",
          "properties": {"i": {"type": "integer", "minimum": 0}, "v": {"type": "number"},
                         "xyz": {"type": "array", "items": {"type": "number"}}, "note": {"type": "string"}},
          "required": ["i", "v"], "additionalProperties": False}
# floats whose decimal text is long or unusual: the JSON must still give back the same bits
AWKWARD = [0.1, 1 / 3, -0.0, 5e-324, 1.7976931348623157e308, 2.0 ** -1074 * 3, 123456789.12345679, -1e-300]


def aux_message(i: int) -> dict:
    return {"i": i, "v": AWKWARD[i % len(AWKWARD)], "xyz": [float(i) / 7, -0.0, AWKWARD[(i + 3) % len(AWKWARD)]]}


def record_with_aux(path: Path, frames: int, *, collections=("tactile/right",), flush_every: int | None = None):
    """Contract frames for each collection plus one aux message per frame, interleaved as the
    hardware CLI writes them (aux first, then the data arriving from the bus)."""
    md = make_metadata(40)
    rng = np.random.default_rng(1)
    bus = InProcessBus()
    sent = {cid: [] for cid in collections}
    with McapRecorder(path) as rec:
        for cid in collections:
            rec.add_collection(bus, cid)
        handle = rec.add_json_channel(AUX, SCHEMA, metadata={"units": "N"})
        pubs = [TactilePublisher(cid, md, bus) for cid in collections]
        for i in range(frames):
            t = 1_000_000_000 + i * STEP_NS
            rec.write_json(handle, aux_message(i), log_time_ns=t + 1, publish_time_ns=t, sequence=i)
            for pub in pubs:
                f = forces_for(rng, 40)
                pub.publish(f, sample_time_ns=t)
                sent[pub.collection_id].append(f)
            rec.poll()
            if flush_every and (i + 1) % flush_every == 0:
                rec.flush()
        for pub in pubs:
            pub.close()
        rec.poll()
    return sent, rec


def test_json_channel_round_trips_exactly_through_the_official_reader(tmp_path):
    path = tmp_path / "aux.mcap"
    _, rec = record_with_aux(path, 40)
    assert rec.counters.written_json == 40
    with open(path, "rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        got = [(s, c, m) for s, c, m in reader.iter_messages(topics=[AUX], log_time_order=False)]
    (channel,) = [c for c in summary.channels.values() if c.topic == AUX]
    schema = summary.schemas[channel.schema_id]
    assert (schema.name, schema.encoding, channel.message_encoding) == ("test.Aux", "jsonschema", "json")
    assert json.loads(schema.data) == SCHEMA and channel.metadata == {"units": "N"}
    assert len(got) == 40
    for i, (_, _, m) in enumerate(got):
        body = json.loads(m.data)
        want = aux_message(i)
        assert body == want
        # bit-exact, including -0.0 and subnormals (== alone cannot tell -0.0 from 0.0)
        assert [math.copysign(1, x) for x in body["xyz"]] == [math.copysign(1, x) for x in want["xyz"]]
        assert np.array(body["xyz"]).tobytes() == np.array(want["xyz"]).tobytes()
        # times given on the records' time line, shifted by the file's one log-time offset (epoch base)
        off = rec.log_time_offset_ns
        assert (m.sequence, m.publish_time - off, m.log_time - off) == (i, 1_000_000_000 + i * STEP_NS,
                                                                         1_000_000_001 + i * STEP_NS)


def test_replay_through_the_tracker_ignores_the_json_topic(tmp_path):
    path = tmp_path / "two.mcap"
    sent, _ = record_with_aux(path, 60, collections=("tactile/right", "tactile/left"), flush_every=7)
    with McapReplay(path) as replay:
        assert replay.collections == ("tactile/left", "tactile/right")  # the aux topic is no collection
        trackers = {cid: TactileTracker(cid, replay) for cid in replay.collections}
        got = {cid: [] for cid in trackers}
        while not replay.finished:
            for cid, tr in trackers.items():
                if tr.update():
                    got[cid].append(np.array(tr.get_data().forces))
        events = list(replay.events())
    assert all(ev.collection_id in ("tactile/left", "tactile/right") for _, ev in events)
    for cid, tr in trackers.items():
        assert len(got[cid]) == 60
        np.testing.assert_array_equal(np.stack(got[cid]).view(np.uint32), np.stack(sent[cid]).view(np.uint32))
        c = tr.counters
        assert (c.rejected, c.dropped_before_confirmation, c.delivered) == (0, 0, 60)
    with pytest.raises(RecordingError, match="has no collection 'tactile/right/aux'; it holds: tactile/left, tactile/right"):
        McapReplay(path, collections=[AUX])


def test_inspect_lists_the_json_topic_and_validates_its_messages(tmp_path):
    path = tmp_path / "aux.mcap"
    record_with_aux(path, 30)
    report = inspect_file(path)
    assert report.ok, report.text()
    t = report.topics[AUX]
    assert (t.count, t.schema_name, t.message_encoding, t.schema_encoding, t.sessions) == \
           (30, "test.Aux", "json", "jsonschema", set())
    assert report.checked_messages == 30 + 30 + 1
    assert any(line.startswith(AUX) and "test.Aux" in line and "json/jsonschema" in line and " 30 " in line
               for line in report.text().splitlines())


def _foreign_file(path: Path, payloads: list[bytes], *, schema: bytes = json.dumps(SCHEMA).encode(),
                  extra_topic: bool = False) -> None:
    """A file with a JSON channel written by the bare mcap writer (things McapRecorder refuses)."""
    with open(path, "wb") as f:
        w = Writer(f)
        w.start()
        sid = w.register_schema("test.Aux", "jsonschema", schema)
        ch = w.register_channel(AUX, "json", sid)
        for i, p in enumerate(payloads):
            w.add_message(ch, 1000 + i, p, 1000 + i, i)
        if extra_topic:
            other = w.register_channel("camera/raw", "cbor", 0)
            w.add_message(other, 5000, b"\xa0", 5000, 0)
        w.finish()


def test_inspect_reports_broken_json_messages_with_topic_and_reason(tmp_path, capsys):
    from wuji_tactile_device.cli import main

    path = tmp_path / "broken.mcap"
    _foreign_file(path, [b'{"i": 0, "v": 1.5}', b'{"i": 1, "v": ', b'{"i": 2, "v": NaN}',
                         b'{"i": "3", "v": 1}', b'{"v": 1}', b'{"i": 5, "v": 1, "w": 2}', b'{"i": -1, "v": 1}',
                         b'\xff\xfe', b'{"i": 8, "v": 1e999}'], extra_topic=True)
    report = inspect_file(path)
    assert not report.ok and report.problem_count == 8, report.text()
    text = "\n".join(report.problems)
    assert "tactile/right/aux seq 1 (log time 1001 ns): not valid JSON (Expecting value" in text
    assert "seq 2 (log time 1002 ns): not valid JSON (non-standard JSON literal NaN)" in text
    assert "seq 3 (log time 1003 ns): i is str \"3\", the schema wants integer (schema 'test.Aux')" in text
    assert "seq 4 (log time 1004 ns): the message lacks required 'i'" in text
    assert "seq 5 (log time 1005 ns): the message has 'w', which the schema does not allow" in text
    assert "seq 6 (log time 1006 ns): i = -1 is below the minimum 0" in text
    assert "seq 7 (log time 1007 ns): not valid JSON" in text
    assert "seq 8 (log time 1008 ns): v overflows a double (parsed as inf)" in text
    assert report.notes == ["camera/raw: 1 messages in encoding 'cbor' are counted, not checked"]
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"{path}: INVALID\n") and out.count("tactile/right/aux seq ") == 8


def test_inspect_reports_a_schema_that_is_not_json(tmp_path):
    path = tmp_path / "badschema.mcap"
    _foreign_file(path, [b'{"i": 0, "v": 1.5}', b'{"i": 1}'], schema=b"{not json")
    report = inspect_file(path)
    assert report.problem_count == 1
    assert report.problems[0].startswith("tactile/right/aux: schema 'test.Aux' is not valid JSON (")


def test_inspect_survives_a_foreign_schema_with_odd_keywords(tmp_path):
    """Keywords of the wrong shape are ignored (never a crash); the ones that make sense still count."""
    path = tmp_path / "odd.mcap"
    odd = {"type": "object", "required": "i", "properties": {"i": {"type": ["integer", {"x": 1}], "minimum": "0"},
                                                             "v": {"type": "string"}, "w": []}}
    _foreign_file(path, [b'{"i": -4, "v": "ok", "w": 1}', b'{"i": 1.5, "v": 2}'], schema=json.dumps(odd).encode())
    report = inspect_file(path)
    assert report.problems == [
        "tactile/right/aux seq 1 (log time 1001 ns): i is float 1.5, the schema wants integer (schema 'test.Aux')",
        "tactile/right/aux seq 1 (log time 1001 ns): v is int 2, the schema wants string (schema 'test.Aux')"]


def test_recover_and_truncation_keep_the_complete_chunks_of_both_topics(tmp_path):
    path = tmp_path / "intact.mcap"
    record_with_aux(path, 80, flush_every=10)
    chunks = official_chunks(path)
    assert len(chunks) == 8
    every = official_messages(path)
    data = path.read_bytes()
    # cut inside the 6th chunk: chunks 0..4 are complete
    cut_path = tmp_path / "cut.mcap"
    cut_path.write_bytes(data[: chunks[5].chunk_start_offset + 100])
    view = FileView(cut_path)
    try:
        kept_chunks = scan(view).chunks
        in_complete = [m for c in kept_chunks for m in read_chunk(view, c).messages]
    finally:
        view.close()
    assert len(kept_chunks) == 5
    fixed = tmp_path / "fixed.mcap"
    report = recover(cut_path, fixed)
    got = official_messages(fixed)
    by_topic = {t: [m for m in got if m[0] == t] for t in (AUX, "tactile/right")}
    # the first five chunks hold ticks 0..49 of both topics (each flush closes a chunk after 10 ticks)
    assert [m[2] for m in by_topic[AUX]] == list(range(50))
    assert [m[2] for m in by_topic["tactile/right"]] == list(range(50))
    assert len(got) == len(in_complete) == report.messages_kept == 101  # + the metadata record
    assert report.messages_per_topic[AUX] == 50
    # byte-identical to the intact file's messages of those ticks (sequence = tick for every topic)
    assert sorted(got) == sorted(m for m in every if m[2] < 50)
    assert [json.loads(m[3]) for m in by_topic[AUX]] == [aux_message(i) for i in range(50)]
    assert inspect_file(fixed).ok
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with McapReplay(cut_path) as replay:
            frames = list(TactileTracker("tactile/right", replay).frames())
    assert any(issubclass(w.category, RecordingWarning) for w in caught)
    assert [fr.sequence for fr in frames] == list(range(50))


def test_write_json_flushes_on_the_recorders_period(tmp_path):
    """A recorder that only writes auxiliary messages still closes a chunk every flush period,
    so a crash loses at most that period of them too."""
    path = tmp_path / "flush.mcap"
    rec = McapRecorder(path, flush_period_s=0.02)
    try:
        h = rec.add_json_channel(AUX, SCHEMA)
        rec.write_json(h, aux_message(0), log_time_ns=1, publish_time_ns=1)
        view = FileView(path)
        try:
            assert scan(view).chunks == []  # not due yet: still in the open chunk
        finally:
            view.close()
        time.sleep(0.03)
        rec.write_json(AUX, aux_message(1), log_time_ns=2, publish_time_ns=2, sequence=1)
        view = FileView(path)
        try:
            chunks = scan(view).chunks
            assert len(chunks) == 1
            assert [json.loads(m.data)["i"] for m in read_chunk(view, chunks[0]).messages] == [0, 1]
        finally:
            view.close()
    finally:
        rec.close()


def test_misuse_is_refused_by_name(tmp_path):
    bus = InProcessBus()
    with McapRecorder(tmp_path / "x.mcap") as rec:
        rec.add_collection(bus, "tactile/right")
        h = rec.add_json_channel(AUX, SCHEMA)
        with pytest.raises(RecordingError, match="topic 'tactile/right/aux' is already recorded"):
            rec.add_json_channel(AUX, SCHEMA)
        with pytest.raises(RecordingError, match="topic 'tactile/right/metadata' is already recorded"):
            rec.add_json_channel("tactile/right/metadata", SCHEMA)
        with pytest.raises(RecordingError, match="collection 'tactile/right/aux' would write topic "
                                                 "'tactile/right/aux', already an auxiliary JSON channel"):
            rec.add_collection(bus, "tactile/right/aux")
        with pytest.raises(ValueError, match="needs a schema name"):
            rec.add_json_channel("other", {"type": "object"})
        with pytest.raises(RecordingError, match="JSON schema type 'float' is not one of"):
            rec.add_json_channel("other", {"title": "x", "type": "float"})
        with pytest.raises(RecordingError, match=r"topic 'tactile/right/aux': message is not JSON-encodable "
                                                 r"\(Out of range float values are not JSON compliant"):
            rec.write_json(h, {"i": 0, "v": math.nan}, log_time_ns=1, publish_time_ns=1)
        with pytest.raises(RecordingError, match="message is not JSON-encodable .*float32"):
            rec.write_json(h, {"i": 0, "v": np.float32(1)}, log_time_ns=1, publish_time_ns=1)
        with pytest.raises(ValueError, match=r"'nope' is not an auxiliary channel of this recorder "
                                                 r"\(open it with add_json_channel; open: tactile/right/aux\)"):
            rec.write_json("nope", {}, log_time_ns=1, publish_time_ns=1)
        with pytest.raises(RecordingError, match="negative time"):
            rec.write_json(h, {"i": 0, "v": 1.0}, log_time_ns=-1, publish_time_ns=1)
        assert rec.counters.written_json == 0
    with pytest.raises(RecordingError, match="is closed"):
        rec.write_json(h, {"i": 0, "v": 1.0}, log_time_ns=1, publish_time_ns=1)
    report = inspect_file(tmp_path / "x.mcap")
    assert report.ok  # the refused calls left a sound, complete file ...
    assert report.collections == [] and not report.valid  # ... that holds no tactile collection: not valid


# --- conforms(): the fast yes/no that inspect asks of every JSON message -------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from wuji_tactile_device.recording import json_channel  # noqa: E402

_JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-6, 6),
                          st.floats(-6, 6, allow_nan=False), st.sampled_from([math.inf, -math.inf]),
                          st.text(max_size=3))
_JSON_VALUES = st.recursive(_JSON_SCALARS, lambda kids: st.lists(kids, max_size=6)
                            | st.dictionaries(st.sampled_from("abc"), kids, max_size=3), max_leaves=20)
_TYPE_NAMES = st.sampled_from(["number", "integer", "string", "boolean", "null", "array", "object"])
_SCHEMAS = st.recursive(
    st.fixed_dictionaries({}, optional={"type": st.one_of(_TYPE_NAMES, st.lists(_TYPE_NAMES, max_size=2)),
                                        "minimum": st.integers(-5, 5), "maximum": st.integers(-5, 5)}),
    lambda kids: st.fixed_dictionaries({}, optional={
        "type": st.sampled_from(["array", "object", ["array", "object"]]), "items": kids,
        "properties": st.dictionaries(st.sampled_from("abc"), kids, max_size=3),
        "required": st.lists(st.sampled_from("abcd"), max_size=2),
        "additionalProperties": st.booleans()}), max_leaves=8)


@settings(max_examples=400, deadline=None)
@given(value=_JSON_VALUES, schema=_SCHEMAS)
def test_conforms_agrees_with_violations(value, schema):
    """The fast check and the detailed one give the same verdict on every value and schema,
    including arrays of numbers (the C path: types, bounds, infinities) and mixed arrays."""
    assert json_channel.conforms(value, schema) == (not json_channel.violations(value, schema))


@pytest.mark.parametrize("values, ok", [
    ([1, 2.5, 3], True), ([-5, 5.0], True), ([-5.0, 5], True), ([1, True], False), ([0.0, math.inf], False), ([-math.inf], False),
    ([1, 6], False), ([-6, 1], False), ([1, "2"], False), ([[1]], False), ([], True)])
def test_conforms_on_number_arrays_with_bounds(values, ok):
    schema = {"type": "array", "items": {"type": "number", "minimum": -5, "maximum": 5}}
    assert json_channel.conforms(values, schema) is ok
    assert bool(json_channel.violations(values, schema)) is (not ok)
