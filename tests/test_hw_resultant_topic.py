"""The device's own per-finger resultants and temperatures recorded on their own MCAP topic
(`<collection>/device_resultants`, JSON) next to the contract stream: values exactly as the
emulated device encoded them from the simulation, the same force the taxels carry (physics),
joined to the contract ticks, invisible to the tracker on replay, and surviving kill -9."""
from __future__ import annotations

import json
import math
import shutil
import signal
import struct
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from mcap.reader import make_reader

from wuji_tactile_device.errors import RecordingWarning
from wuji_tactile_device.contract.geometry import quat_to_matrix
from wuji_tactile_device.producers.emulated import EmulatedHand2, simulation_layout

from wuji_tactile_device.run import runner_for
from wuji_tactile_device.producers.hardware import (HardwareConfig, HardwareProducer,
                                                    ResultantRecorder, SdkFingertipDevice)
from wuji_tactile_device.producers.emulated import simulation_forces
from wuji_tactile_device.producers.sim.taxels import taxel_poses_in_distal
from wuji_tactile_device.hands.wuji_hand2 import FINGERS
from wuji_tactile_device.recording import McapRecorder, McapReplay, inspect_file, recover
from wuji_tactile_device.streams.tracker import TactileTracker
from wuji_tactile_device.streams.inproc import InProcessBus

TOPIC = "tactile/right/device_resultants"
FOXGLOVE_CHECK = Path(__file__).resolve().parent.parent / "tools" / "foxglove_check" / "check.py"
_I16 = struct.Struct("<h")


def _aggregate_oracle(emu: EmulatedHand2, finger: str, data: bytes) -> dict[str, float]:
    """The aggregate block of a frame as the emulated firmware declares it (its own format JSON):
    raw i16 at each field's offset × that field's scale."""
    fmt = emu.pad(finger).format
    base = fmt["point_count"] * fmt["point_stride"]
    out = {}
    for field in fmt["aggregate_fields"]:
        assert field["type"] == "i16"
        out[field["name"]] = _I16.unpack_from(data, base + field["offset"])[0] * field["scale"]
    return out


def _messages(path: Path) -> dict[str, list]:
    out: dict[str, list] = {}
    with open(path, "rb") as f:
        for schema, channel, m in make_reader(f).iter_messages(log_time_order=False):
            out.setdefault(channel.topic, []).append((schema, channel, m))
    return out


def _record(path: Path, emu: EmulatedHand2, forces_iter, **config):
    """Emulated hand → producer → bus → recorder, with the resultants on their topic. Returns the
    frames a live tracker delivered and the bytes each finger sent, in order."""
    bus = InProcessBus()
    tracker = TactileTracker("tactile/right", bus)
    sent: dict[str, list[bytes]] = {f: [] for f in FINGERS}
    for f in FINGERS:
        getattr(emu, f"fingertip_{f}_data")().subscribe_with_callback(lambda m, f=f: sent[f].append(m.data))
    producer = HardwareProducer(SdkFingertipDevice(emu), HardwareConfig(side="right", **config))
    live = []
    with McapRecorder(path) as rec:
        # the run loop records the collection and the producer's recording output (the resultants)
        runner = runner_for(producer, bus, recorder=rec)
        for forces in forces_iter:
            emu.emit(forces)
            assert runner.step() == 1  # polls the recorder too
            tracker.update()
            live.append(tracker.get_data())
        runner.close()
        producer.close()
        rec.poll()
    return live, sent


@pytest.fixture(scope="module")
def press(tmp_path_factory):
    path = tmp_path_factory.mktemp("hw_resultants") / "press.mcap"
    emu = EmulatedHand2("right")
    contract = []

    def forces():
        for f in simulation_forces("right", "press"):
            contract.append(f)
            yield f

    live, sent = _record(path, emu, forces())
    return path, emu, live, sent, np.stack(contract)


def test_recorded_resultants_are_the_devices_encoded_values_exactly(press):
    path, emu, live, sent, _ = press
    msgs = _messages(path)[TOPIC]
    assert len(msgs) == len(live) == 1300
    schema, channel = msgs[0][0], msgs[0][1]
    assert (schema.name, schema.encoding, channel.message_encoding) == ("wuji_tactile.DeviceResultants",
                                                                       "jsonschema", "json")
    assert json.loads(schema.data)["title"] == "wuji_tactile.DeviceResultants"
    assert channel.metadata["collection"] == "tactile/right" and "R(base_rpy)" in channel.metadata["force_frame"]
    loaded = 0
    for k, (_, _, m) in enumerate(msgs):
        body = json.loads(m.data)
        for f in FINGERS:
            want = _aggregate_oracle(emu, f, sent[f][k])
            got = body[f]
            # float-exact: the JSON text carries the decoded float64 bit for bit
            assert (got["fx"], got["fy"], got["fz"], got["temperature_c"]) == \
                   (want["fx"], want["fy"], want["fz"], want["temperature"]), (k, f)
            assert got["device_time_us"] == body["device_time_us"]
            loaded += float(np.linalg.norm([got["fx"], got["fy"], got["fz"]])) > 0.1
    assert loaded > 500, "the press must load the pads for the comparison to mean anything"
    assert body["index"]["temperature_c"] == pytest.approx(30.25)


def test_device_resultant_is_the_sum_of_the_taxel_forces_in_the_tip_frame(press):
    """Physics: the device's resultant (tip_sensor_frame axes, device sign: force exerted by the
    pad) equals minus the sum of the contract taxel forces rotated into the distal frame, to the
    aggregate's i16 step (0.01 N → 5 mN per component)."""
    path, _, _, _, contract = press
    msgs = _messages(path)[TOPIC]
    poses = taxel_poses_in_distal("right")
    start = 0
    for i, f in enumerate(FINGERS):
        R = quat_to_matrix(poses[i][:, 3:])
        n = len(poses[i])
        expected = -np.einsum("pij,tpj->ti", R, contract[:, start:start + n])  # (T, 3)
        start += n
        tip = np.array([[json.loads(m.data)[f]["tip"][a] for a in ("fx", "fy", "fz")] for _, _, m in msgs])
        assert np.abs(tip - expected).max() <= 0.005 * np.sqrt(3) + 1e-9, f
        if f == "index":
            assert np.linalg.norm(expected, axis=1).max() > 0.45  # the press holds the index pad at 0.5 N


def test_resultant_messages_join_the_contract_ticks(press):
    path, _, live, _, _ = press
    topics = _messages(path)
    data = {m.sequence: m for _, _, m in topics["tactile/right"]}
    res = topics[TOPIC]
    assert [m.sequence for _, _, m in res] == [fr.sequence for fr in live] == list(range(1300))
    for _, _, m in res:
        d = data[m.sequence]
        body = json.loads(m.data)
        assert m.publish_time == d.publish_time  # the tick's sample time, exactly
        assert m.log_time == d.log_time  # the tick's available time, exactly
        fr = live[m.sequence]
        assert body["device_time_us"] * 1000 == fr.timestamp.sample_time_raw_device_clock


def test_replay_of_the_file_ignores_the_resultant_topic(press):
    path, _, live, _, _ = press
    with McapReplay(path) as replay:
        assert replay.collections == ("tactile/right",)
        tracker = TactileTracker("tactile/right", replay)
        replayed = list(tracker.frames())
        assert replay.finished
    assert len(replayed) == len(live)
    for a, b in zip(replayed, live, strict=True):
        assert a.sequence == b.sequence and a.timestamp == b.timestamp
        np.testing.assert_array_equal(a.forces, b.forces)
    c = tracker.counters
    assert (c.rejected, c.dropped_before_confirmation, c.delivered) == (0, 0, 1300)


def test_inspect_lists_and_checks_the_resultant_topic(press):
    path, *_ = press
    report = inspect_file(path)
    assert report.ok, report.text()
    t = report.topics[TOPIC]
    assert (t.count, t.schema_name, t.message_encoding, t.schema_encoding) == \
           (1300, "wuji_tactile.DeviceResultants", "json", "jsonschema")
    health = report.topics["tactile/right/health"].count  # one per 0.5 s of wall time: run-length dependent
    # data, resultants, metadata, health, and both hands' viewer channels (JSON, checked against their schema)
    assert health >= 1 and report.checked_messages == 1300 + 1300 + 1 + health + 2 * 1300
    line = next(x for x in report.text().splitlines() if x.startswith(TOPIC))
    assert "wuji_tactile.DeviceResultants" in line and "json/jsonschema" in line and " 1300 " in line


@pytest.mark.skipif(not (shutil.which("node") and shutil.which("npm")),
                    reason="the Foxglove checker runs Foxglove's decoders on Node.js (node and npm needed)")
def test_foxglove_checker_accepts_the_file_with_the_json_topic(press):
    """Foxglove decodes the FlatBuffers topics and the JSON resultant topic beside them; Isaac
    Teleop's hand channels (a fixed-size joint array Foxglove cannot read) are skipped by name."""
    path, *_ = press
    r = subprocess.run([sys.executable, str(FOXGLOVE_CHECK), str(path)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ok      tactile/right (core.TactileDataArrayRecord, flatbuffer): 1300 messages decode" in r.stdout
    assert "ok      tactile/right/metadata (core.TactileMetadataRecord, flatbuffer)" in r.stdout
    assert f"ok      {TOPIC} (wuji_tactile.DeviceResultants, json): 1300 messages decode" in r.stdout
    skipped = {line.split()[1] for line in r.stdout.splitlines() if line.startswith("skipped")}
    assert skipped <= {"hands/left_hand", "hands/right_hand"}, r.stdout


def test_older_firmware_without_mounting_pose_has_no_tip_frame(tmp_path):
    emu = EmulatedHand2("right", mounting=False, positions=False)
    f = np.zeros((176, 3))
    f[40:74, 2] = -0.25
    live, sent = _record(tmp_path / "old.mcap", emu, [f, f], fallback_layout=simulation_layout("right"))
    (_, _, m), _ = _messages(tmp_path / "old.mcap")[TOPIC]
    body = json.loads(m.data)
    assert all("tip" not in body[f] for f in FINGERS)
    want = _aggregate_oracle(emu, "index", sent["index"][0])
    assert (body["index"]["fx"], body["index"]["fy"], body["index"]["fz"]) == (want["fx"], want["fy"], want["fz"])
    assert np.linalg.norm([want["fx"], want["fy"], want["fz"]]) > 5  # 34 taxels × 0.25 N
    assert inspect_file(tmp_path / "old.mcap").ok


def test_kill_9_of_hw_record_keeps_complete_chunks_of_both_topics(tmp_path):
    """A real `wuji-tactile hw --emulate --record` process killed mid-run: recover keeps every
    complete chunk, the contract and resultant topics side by side (they share chunks)."""
    out = tmp_path / "killed.mcap"
    proc = subprocess.Popen([sys.executable, "-m", "wuji_tactile_device.cli", "hw", "--emulate", "--scenario",
                             "press", "--record", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not out.exists() or out.stat().st_size < 60_000):
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.05)  # wait until chunks of real data are on disk (real-time emulation, 100 Hz)
        time.sleep(0.7)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with McapReplay(out) as replay:
            frames = list(TactileTracker("tactile/right", replay).frames())
    assert any(issubclass(w.category, RecordingWarning) for w in caught)
    fixed = tmp_path / "fixed.mcap"
    report = recover(out, fixed)
    assert report.truncation is not None and not report.corrupt_chunks and report.chunks_kept >= 1
    topics = _messages(fixed)
    data_seq = [m.sequence for _, _, m in topics["tactile/right"]]
    res_seq = [m.sequence for _, _, m in topics[TOPIC]]
    assert data_seq == [fr.sequence for fr in frames] == list(range(len(frames)))
    assert len(frames) >= 50
    # a flush can fall between a tick's resultant and its data record: at most one apart at the cut
    assert res_seq == list(range(len(res_seq))) and abs(len(res_seq) - len(data_seq)) <= 1
    assert report.messages_per_topic[TOPIC] == len(res_seq)
    checked = inspect_file(fixed)
    assert checked.ok, checked.text()


def test_values_json_cannot_carry_are_left_out_and_counted(tmp_path):
    """An f32 aggregate can carry NaN: that finger is left out of the tick's message (counted),
    an undeclared temperature (NaN) is just absent; the message still conforms to the schema."""
    from types import SimpleNamespace

    from wuji_tactile_device.producers.hardware import FingerResultant, TickResultants

    ok = FingerResultant("thumb", np.array([0.5, -0.25, 1.0]), None, math.nan, 7)
    bad = FingerResultant("ring", np.array([np.nan, 0.0, 0.0]), None, 31.0, 7)
    tick = TickResultants(3, 2_000, 1_000, 7, {"thumb": ok, "ring": bad})
    path = tmp_path / "nan.mcap"
    with McapRecorder(path) as rec:
        rr = ResultantRecorder(rec, "tactile/right")
        rr(SimpleNamespace(last_tick=tick))
    assert (rr.written, rr.nonfinite_skipped) == (1, 1)
    ((_, _, m),) = _messages(path)[TOPIC]
    assert json.loads(m.data) == {"sequence": 3, "device_time_us": 7,
                                  "thumb": {"fx": 0.5, "fy": -0.25, "fz": 1.0, "device_time_us": 7}}
    off = rec.log_time_offset_ns  # the tick's times on the file's log-time base
    assert (m.log_time - off, m.publish_time - off, m.sequence) == (2_000, 1_000, 3)
    assert inspect_file(path).ok
