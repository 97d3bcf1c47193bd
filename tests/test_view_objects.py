"""A view of a recording shows the recording's objects: `wuji-tactile view FILE` and `replay FILE
--foxglove` (printing, and `--publish`) serve scenes whose object entities (the pressed plates of
a `sim --scenario press --record`) are the ones the recording's own scene topic drew at that
frame, pose and size for pose and size; the live `sim --foxglove` view draws them too.

Read through the real WebSocket server by a Foxglove protocol client (`test_foxglove_view.FoxgloveClient`).
Truth: the object entities of the recorded `tactile/right/view/scene` messages (what Lichtblick
shows when it opens the file), and for the live view MuJoCo's geoms of a replica of the run. A
recording whose scene stops drawing objects shows none from then on; one without a scene topic
shows none; a malformed scene message ends the view with an error naming the file, the topic
and the rule."""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("foxglove", reason="the view needs the optional foxglove-sdk (extra 'view')")
from mcap.reader import make_reader
from mcap.writer import Writer
from foxglove_serve import serve

from wuji_tactile_device.contract.geometry import pose_apply
from wuji_tactile_device.contract.pads import FINGERS
from wuji_tactile_device.errors import RecordedSceneError
from wuji_tactile_device.integrations.foxglove_live import RecordedHands
from wuji_tactile_device.integrations.scene_objects import (MAX_OBJECTS, RecordedObjects, SceneObjectsError,
                                                            objects_of_scene)
from wuji_tactile_device.producers.sim.producer import SimProducer
from wuji_tactile_device.producers.sim.scenarios import make_scenario

SCRIPT = shutil.which("wuji-tactile", path=str(Path(sys.executable).parent)) or "wuji-tactile"
ENV = dict(os.environ, WUJI_TELEMETRY_DISABLE="1")
CID = "tactile/right"
SCENE = f"{CID}/view/scene"
FRAMES = 300  # 3 s of press: the hand closes on the plates (they move in the wrist frame)
PLATES = [f"press_object_{f}_plate" for f in FINGERS]


def _stamp(entity: dict) -> int:
    return entity["timestamp"]["sec"] * 1_000_000_000 + entity["timestamp"]["nsec"]


def object_entities(scene: dict) -> list[dict]:
    return [e for e in scene["entities"] if e["id"].startswith("object/")]


def drawn(entity: dict) -> dict:
    """What the viewer draws of an object entity: its id, frame, metadata and primitives."""
    return {k: entity[k] for k in ("id", "frame_id", "metadata", "cubes", "spheres", "cylinders")}


@pytest.fixture(scope="module")
def press(tmp_path_factory):
    """A default `sim --scenario press --record` of FRAMES frames and its recorded scenes
    [(stamp = the frame's available time, object entities)], in log-time order."""
    from wuji_tactile_device.cli import main

    path = tmp_path_factory.mktemp("press") / "press.mcap"
    main(["sim", "--scenario", "press", "--duration", str(FRAMES / 100), "--quiet", "--record", str(path)])
    scenes = []
    with open(path, "rb") as f:
        for _, _, message in make_reader(f).iter_messages(topics=[SCENE]):
            scene = json.loads(message.data)
            scenes.append((_stamp(scene["entities"][0]), object_entities(scene)))
    assert len(scenes) >= 60 and all(len(objs) == len(PLATES) for _, objs in scenes)
    return path, scenes


def rewrite(src: Path, dst: Path, scene_payload) -> None:
    """A copy of `src` (schemas, channels, messages, file metadata) whose scene messages are
    `scene_payload(k, data)` (k: the scene message's index)."""
    with open(src, "rb") as f, open(dst, "wb") as out:
        reader = make_reader(f)
        writer = Writer(out)
        writer.start(profile="", library="test_view_objects")
        for m in reader.iter_metadata():
            writer.add_metadata(m.name, dict(m.metadata))
        schemas, channels = {}, {}
        k = 0
        for schema, channel, message in reader.iter_messages(log_time_order=False):
            if schema is not None and schema.id not in schemas:
                schemas[schema.id] = writer.register_schema(schema.name, schema.encoding, schema.data)
            if channel.id not in channels:
                channels[channel.id] = writer.register_channel(channel.topic, channel.message_encoding,
                                                               schemas.get(channel.schema_id, 0), dict(channel.metadata))
            data = message.data
            if channel.topic == SCENE:
                data, k = scene_payload(k, data), k + 1
            writer.add_message(channels[channel.id], message.log_time, data, message.publish_time, message.sequence)
        writer.finish()


def serve_scenes(cmd: list[str], want: int) -> tuple[list[dict], str, int | None]:
    """Start a command that prints a ws:// address on stderr, collect up to `want` scenes from its
    server (2 s without one: done); stop it (if still running) and return the scenes, stderr and
    its exit status."""
    return serve(cmd, {SCENE}, lambda client, _topic, msg: client.decoders[msg["sub"]](msg["payload"]), want,
                 extra_s=20.0, idle_s=2.0)


def recorded_at(scenes: list[tuple[int, list]], t: int) -> list[dict]:
    """The object entities of the latest recorded scene at or before `t` ([] before the first)."""
    stamps = np.array([s for s, _ in scenes])
    k = int(np.searchsorted(stamps, t, side="right")) - 1
    return [] if k < 0 else scenes[k][1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def view_command(path: Path, command: str) -> list[str]:
    if command == "view":
        return [SCRIPT, "view", str(path), "--port", "0", "--duration", "120", "--loop", "--speed", "2"]
    if command == "replay":
        return [SCRIPT, "replay", str(path), "--foxglove", "--foxglove-port", "0"]
    return [SCRIPT, "replay", str(path), "--publish", "--foxglove", "--foxglove-port", "0",
            "--zenoh-listen", f"tcp/127.0.0.1:{free_port()}"]


@pytest.fixture(scope="module")
def marked(press, tmp_path_factory):
    """The press recording with each recorded scene's plates moved by 1 mm × the scene's index
    along the wrist's x (they hardly move in the wrist frame in 3 s of press): a scene matched at
    the wrong time shows other poses. Its recorded scenes as `press` gives them."""
    path, _ = press

    def shifted(k: int, data: bytes) -> bytes:
        scene = json.loads(data)
        for e in object_entities(scene):
            e["cubes"][0]["pose"]["position"]["x"] = round(e["cubes"][0]["pose"]["position"]["x"] + 1e-3 * k, 6)
        return json.dumps(scene, separators=(",", ":")).encode()

    out = tmp_path_factory.mktemp("marked") / "marked.mcap"
    rewrite(path, out, shifted)
    scenes = []
    with open(out, "rb") as f:
        for _, _, message in make_reader(f).iter_messages(topics=[SCENE]):
            scene = json.loads(message.data)
            scenes.append((_stamp(scene["entities"][0]), object_entities(scene)))
    return out, scenes


@pytest.mark.parametrize("command", ["view", "replay", "replay --publish"])
def test_a_view_of_the_recording_draws_its_objects_where_its_scene_did(marked, command):
    """Every served scene draws the five plates exactly as the recording's scene at that frame
    (the latest recorded scene at or before the served scene's time): same entities, names,
    primitives, poses and sizes, at the poses of the right scene (`marked`)."""
    path, recorded = marked
    scenes, err, _ = serve_scenes(view_command(path, command), want=150)  # view: 5 s of a 3 s file (a --loop pass)
    assert "Traceback" not in err, err
    assert len(scenes) >= 40, err
    positions = []
    for scene in scenes:
        t = _stamp(scene["entities"][0])
        got = object_entities(scene)
        expected = recorded_at(recorded, t)
        assert [drawn(e) for e in got] == [drawn(e) for e in expected], t
        assert [_stamp(e) for e in got] == [t] * len(got)  # stamped as the scene that carries them
        positions.append([got[0]["cubes"][0]["pose"]["position"][c] for c in "xyz"])
    assert len(got) == len(PLATES)
    if command == "view":  # a second pass: the scene cursor started over
        stamps = [_stamp(scene["entities"][0]) for scene in scenes]
        assert (np.diff(stamps) < 0).any(), "the scenes must span a --loop restart"
    moved = np.linalg.norm(np.array(positions) - positions[0], axis=1).max()
    assert moved > 0.02, "the scenes checked must span many recorded scenes"


def test_the_plates_are_where_mujoco_has_them(press):
    """The view's plates, taken back to the world with the recorded wrist pose of the recorded
    scene they come from, sit at MuJoCo's geom positions of that frame in a replica of the run
    (between two recorded scenes the objects hold in the wrist frame, as in the recorded scene)."""
    path, recorded = press
    scenes, err, _ = serve_scenes(view_command(path, "view"), want=60)
    assert len(scenes) >= 30, err
    hands = RecordedHands.open(path)
    assert hands is not None
    producer = SimProducer(make_scenario("press"), hand_poses=True)
    plates = [producer.sim.model.geom(name).id for name in PLATES]
    truth = []
    for _ in range(FRAMES):
        producer.next_frame()
        truth.append(producer.sim.data.geom_xpos[plates].copy())
    start = recorded[0][0] - 10_000_000  # frame k at start + (k + 1) × 10 ms; the first scene is frame 0's
    stamps = np.array([t for t, _ in recorded])
    for scene in scenes:
        t = _stamp(scene["entities"][0])
        ts = int(stamps[np.searchsorted(stamps, t, side="right") - 1])  # the recorded scene shown
        k = round((ts - start) / 10_000_000) - 1
        centres = np.array([[o["cubes"][0]["pose"]["position"][c] for c in "xyz"] for o in object_entities(scene)])
        np.testing.assert_allclose(pose_apply(hands.lookup("right", ts)[1], centres), truth[k], atol=2e-5, rtol=0)


def test_objects_vanish_when_the_recorded_scene_stops_drawing_them_and_a_file_without_scene_has_none(press, tmp_path):
    """A recording whose scene drops the objects half-way: the view shows them before, none
    after. A recording without the scene topic (`--no-record-view`) shows no objects and says
    nothing of them."""
    path, recorded = press
    half = len(recorded) // 2
    cut_time = recorded[half][0]

    def without_objects_after_half(k: int, data: bytes) -> bytes:
        if k < half:
            return data
        scene = json.loads(data)
        scene["entities"] = [e for e in scene["entities"] if not e["id"].startswith("object/")]
        return json.dumps(scene, separators=(",", ":")).encode()

    cut = tmp_path / "cut.mcap"
    rewrite(path, cut, without_objects_after_half)
    cmd = [SCRIPT, "view", str(cut), "--port", "0", "--duration", "120"]
    scenes, err, _ = serve_scenes(cmd, want=10_000)  # one pass: the command holds the last frame
    before = [len(object_entities(s)) for s in scenes if _stamp(s["entities"][0]) < cut_time]
    after = [len(object_entities(s)) for s in scenes if _stamp(s["entities"][0]) >= cut_time]
    assert len(before) >= 20 and len(after) >= 20, (len(before), len(after), err)
    assert set(before) == {len(PLATES)} and set(after) == {0}

    bare = tmp_path / "bare.mcap"
    from wuji_tactile_device.cli import main

    main(["sim", "--scenario", "press", "--duration", "1", "--quiet", "--record", str(bare), "--no-record-view"])
    assert RecordedObjects.open(bare, [CID]) is None
    scenes, err, _ = serve_scenes([SCRIPT, "view", str(bare), "--port", "0", "--duration", "30", "--speed", "2"],
                                  want=20)
    assert len(scenes) >= 10 and not any(object_entities(s) for s in scenes), err
    assert "with the objects of its scene" not in err


def _truncated(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _bad_orientation(data: bytes) -> bytes:
    scene = json.loads(data)
    obj = object_entities(scene)[0]
    obj["cubes"][0]["pose"]["orientation"] = {"x": 0.0, "y": 0.0, "z": 0.0, "w": 3.0}
    return json.dumps(scene).encode()


HOSTILE = {
    "truncated JSON": (_truncated, "is not JSON"),
    "not a unit quaternion": (_bad_orientation, "cubes[0].pose.orientation must be a unit quaternion"),
}


@pytest.mark.parametrize("command", ["view", "replay"])
@pytest.mark.parametrize("damage", list(HOSTILE))
def test_a_malformed_scene_message_ends_the_view_naming_file_topic_and_rule(press, tmp_path, command, damage):
    path, recorded = press
    change, rule = HOSTILE[damage]
    bad = tmp_path / "bad.mcap"
    rewrite(path, bad, lambda k, data: change(data) if k == len(recorded) // 2 else data)
    cmd = {"view": [SCRIPT, "view", str(bad), "--port", "0", "--duration", "60", "--speed", "4"],
           "replay": [SCRIPT, "replay", str(bad), "--foxglove", "--foxglove-port", "0", "--fast"]}[command]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    (line,) = [x for x in proc.stderr.splitlines() if SCENE in x and "log time" in x]
    assert str(bad) in line and f"{SCENE} message at log time" in line and rule in line, line


def _scene(*entities: dict) -> bytes:
    return json.dumps({"deletions": [], "entities": list(entities)}).encode()


def _box(eid: str = "object/0", **changes) -> dict:
    e = {"timestamp": {"sec": 1, "nsec": 0}, "frame_id": f"{CID}/wrist", "id": eid,
         "lifetime": {"sec": 0, "nsec": 0}, "frame_locked": True,
         "metadata": [{"key": "object", "value": "plate"}, {"key": "primitive", "value": "box"},
                      {"key": "size [m]", "value": "0.0065 0.0085 0.0040"}],
         "cubes": [{"pose": {"position": {"x": 0.01, "y": -0.02, "z": 0.03},
                             "orientation": {"x": 0.0, "y": 0.0, "z": 0.6, "w": 0.8}},
                    "size": {"x": 0.013, "y": 0.017, "z": 0.008}, "color": {"r": 0, "g": 0, "b": 1, "a": 0.5}}],
         "spheres": [], "cylinders": []}
    e.update(changes)
    return e


def test_objects_of_a_scene_message_are_read_back_exactly():
    objects = objects_of_scene(_scene({"id": "taxel/0"}, _box()), f"{CID}/wrist")
    assert objects is not None and objects.frame == "wrist"
    assert objects.kinds == ("box",) and objects.names == ("plate",)
    np.testing.assert_array_equal(objects.sizes, [[0.0065, 0.0085, 0.004]])
    np.testing.assert_array_equal(objects.poses, [[0.01, -0.02, 0.03, 0.0, 0.0, 0.6, 0.8]])
    assert objects_of_scene(_scene({"id": "taxel/0"}), f"{CID}/wrist") is None


@pytest.mark.parametrize("payload, rule", [
    (b"\xff\xfe", "is not JSON"),
    (b"[" * 100_000, "nested too deeply"),
    (b'{"entities": [], "x": NaN}', "non-JSON number NaN"),
    (b'{"entities": {}}', "an 'entities' list"),
    (_scene({"id": 3}), "string 'id'"),
    (_scene(_box(), _box()), "'object/0' twice"),
    (_scene(*[_box(f"object/{k}") for k in range(MAX_OBJECTS + 1)]), f"more than the {MAX_OBJECTS}"),
    (_scene(_box(frame_id="world")), "is in frame 'world'"),
    (_scene(_box(metadata=[{"key": "object", "value": "plate"}])), "its primitive"),
    (_scene(_box(metadata=[{"key": "object", "value": "p"}, {"key": "primitive", "value": "torus"},
                           {"key": "size [m]", "value": "1 1 1"}])), "got 'torus'"),
    (_scene(_box(metadata=[{"key": "object", "value": "p"}, {"key": "primitive", "value": "box"},
                           {"key": "size [m]", "value": "1 1"}])), "three finite numbers"),
    (_scene(_box(cubes=[])), "its first cubes entry, which is missing"),
    (_scene(_box(cubes=[{"pose": {"position": {"x": 0, "y": 0, "z": "1"},
                                  "orientation": {"x": 0, "y": 0, "z": 0, "w": 1}},
                         "size": {"x": 1, "y": 1, "z": 1}}])), "position.z must be a number"),
    (_scene(_box(cubes=[{"pose": {"position": {"x": 0, "y": 0, "z": "BIG"},
                                  "orientation": {"x": 0, "y": 0, "z": 0, "w": 1}},
                         "size": {"x": 1, "y": 1, "z": 1}}])).replace(b'"BIG"', b"1e999"),
     "position.z must be finite"),
    (_scene(_box(cubes=[{"pose": {"position": {"x": 0, "y": 0, "z": 0},
                                  "orientation": {"x": 0, "y": 0, "z": 0, "w": 1}},
                         "size": {"x": 1, "y": -1, "z": 1}}])), "size must be >= 0"),
])
def test_a_malformed_scene_message_names_the_rule(payload, rule):
    with pytest.raises(SceneObjectsError, match=re.escape(rule)):
        objects_of_scene(payload, f"{CID}/wrist")


def test_recorded_objects_rewind_for_a_new_pass_and_hold_between_scenes(press):
    """Lookups move forward through the file; a time before the current scene (a --loop pass)
    starts over; between two scenes the earlier one's objects hold; before the first: none."""
    path, recorded = press
    with RecordedObjects.open(path, [CID]) as objects:
        assert objects.lookup(CID, recorded[0][0] - 1) is None
        for t, entities in recorded[::7] + recorded[:3]:  # forward, then a new pass from the start
            for dt in (0, 1):
                got = objects.lookup(CID, t + dt)
                assert got is not None and got.names == tuple(PLATES)
                np.testing.assert_array_equal(got.poses[:, :3], [[e["cubes"][0]["pose"]["position"][c] for c in "xyz"]
                                                                 for e in entities])
        assert objects._cursors[CID].restarts == 1
        assert objects.lookup("tactile/left", recorded[0][0]) is None


def test_a_damaged_scene_in_the_file_raises_the_view_error(press, tmp_path):
    path, recorded = press
    bad = tmp_path / "bad.mcap"
    rewrite(path, bad, lambda k, data: b"{" if k == 3 else data)
    with RecordedObjects.open(bad, [CID]) as objects:
        objects.lookup(CID, recorded[2][0])
        with pytest.raises(RecordedSceneError, match=rf"{re.escape(str(bad))}: {SCENE} message at log time \d+ ns "
                                                     r"\(sequence \d+\) is not JSON"):
            objects.lookup(CID, recorded[3][0])


def test_sim_foxglove_draws_the_objects_live():
    """`sim --foxglove` without --record: the view asks the simulator for its objects too."""
    cmd = [SCRIPT, "sim", "--scenario", "press", "--foxglove", "--foxglove-port", "0", "--duration", "2", "--quiet"]
    scenes, err, code = serve_scenes(cmd, want=20)
    assert len(scenes) >= 10, err
    names = [[{m["key"]: m["value"] for m in e["metadata"]}["object"] for e in object_entities(s)] for s in scenes]
    assert all(n == PLATES for n in names), names[:2]
