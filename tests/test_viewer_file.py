"""A recording opens in Lichtblick / Foxglove Studio with the shipped layout and shows the hand.

- the layout (`wuji-tactile layout`, `examples/foxglove/tactile_view.json`) is in the classic format
  these viewers import, with the structure they need (every panel in the split tree configured,
  known panel types, playback config), a camera that frames a hand and hand-sized axes;
- a default `sim --record` / `hw --emulate --record` carries the 3-D view's topics (no option,
  no Foxglove SDK), each scene message complete on its own and a transform message per frame, so
  a seek shows the same picture as play;
- the scene draws the hand: the bones at the recorded hand pose, the pressed object where
  MuJoCo has it, each taxel named (index, pad, |f| of the recorded record) for hover.

Truth: the recorded contract records and hand channels of the same file, MuJoCo's geoms of a
replica of the same deterministic run, and the viewer's layout format.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import cli
from mcap.reader import make_reader

from wuji_tactile_device.contract import decode_tactile_record
from wuji_tactile_device.contract.geometry import pose_apply, rebase_to_root
from wuji_tactile_device.contract.pads import FINGERS, pad_layout
from wuji_tactile_device.integrations.foxglove_live import RecordedHands
from wuji_tactile_device.integrations.foxglove_scene import BONES, FRAME_TRANSFORMS_SCHEMA, SCENE_UPDATE_SCHEMA
from wuji_tactile_device.integrations.scene_recording import RESULTANTS_SCHEMA
from wuji_tactile_device.integrations.viewer_layout import build_layout, layout_json, panel_ids
from wuji_tactile_device.producers.sim.layout_metadata import sim_metadata
from wuji_tactile_device.producers.sim.producer import SimProducer
from wuji_tactile_device.producers.sim.scenarios import make_scenario
from wuji_tactile_device.recording import json_channel

ROOT = Path(__file__).resolve().parents[1]
CID = "tactile/right"
FRAMES = 260  # 2.6 s of press: the light contact (0.05 N) has started
#: Panel types of Lichtblick 1.10 / Foxglove Studio that this layout may use.
VIEWER_PANEL_TYPES = {"3D", "Plot", "Image", "RawMessages"}


@pytest.fixture(scope="module")
def press(tmp_path_factory):
    """A default `sim --scenario press --record` of FRAMES frames: {topic: [(log_time, schema, data)]}."""
    path = tmp_path_factory.mktemp("press") / "press.mcap"
    from wuji_tactile_device.cli import main

    main(["sim", "--scenario", "press", "--duration", str(FRAMES / 100), "--quiet", "--record", str(path)])
    topics: dict[str, list] = {}
    with open(path, "rb") as f:
        for schema, channel, message in make_reader(f).iter_messages():
            topics.setdefault(channel.topic, []).append((message.log_time, schema, message.data))
    return path, topics


# -- the layout ---------------------------------------------------------------------------------
def test_shipped_layout_is_the_generator_output():
    assert (ROOT / "examples/foxglove/tactile_view.json").read_text() == layout_json(CID)


@pytest.mark.parametrize("images", [False, True], ids=["no images", "images"])
@pytest.mark.parametrize("collection", [CID, "tactile/left", "lab/glove_2"])
def test_layout_has_the_structure_the_viewers_import(collection, images):
    """The classic layout format: configById, the split tree `layout` naming exactly those panels,
    globalVariables, userNodes, playbackConfig with a speed (a layout without it does not load:
    "Cannot read properties of undefined (reading 'speed')"). The force-images panel only with
    `images` (without its topic the viewer's panel says only "Image topic does not exist")."""
    lay = json.loads(layout_json(collection, images=images))
    assert set(lay) == {"configById", "layout", "globalVariables", "userNodes", "playbackConfig"}
    assert isinstance(lay["playbackConfig"]["speed"], float) and lay["playbackConfig"]["speed"] > 0
    ids = panel_ids(lay["layout"])
    assert len(ids) == len(set(ids)) and set(ids) == set(lay["configById"])
    assert {i.split("!", 1)[0] for i in ids} == VIEWER_PANEL_TYPES - (set() if images else {"Image"})
    assert all(re.fullmatch(r"[A-Za-z0-9]+![A-Za-z0-9]+", i) for i in ids)

    def splits(node):
        if isinstance(node, str):
            return
        assert set(node) == {"first", "second", "direction", "splitPercentage"}
        assert node["direction"] in ("row", "column") and 0 < node["splitPercentage"] < 100
        splits(node["first"])
        splits(node["second"])

    splits(lay["layout"])
    by_type = {i.split("!")[0]: lay["configById"][i] for i in ids}
    three = by_type["3D"]
    assert three["followTf"] == f"{collection}/wrist" and three["followMode"] in ("follow-pose", "follow-position")
    assert three["topics"] == {f"{collection}/view/scene": {"visible": True}}
    cam = three["cameraState"]
    assert 0.25 <= cam["distance"] <= 0.35 and cam["perspective"] is True
    assert cam["near"] <= cam["distance"] / 50 and cam["far"] > 10 * cam["distance"]  # the hand is never clipped
    assert three["scene"]["transforms"]["axisScale"] <= 0.02  # hand-sized frame axes, not 15 cm
    if images:
        assert by_type["Image"]["imageMode"]["imageTopic"] == f"{collection}/view/images"
    assert by_type["RawMessages"]["topicPath"] == json.dumps(collection)
    for panel in (i for i in ids if i.startswith("Plot!")):
        for path in lay["configById"][panel]["paths"]:
            topic, finger, field = re.fullmatch(r'"([^"]+)"\.(\w+)\.(\w+)', path["value"]).groups()
            assert topic == f"{collection}/view/resultants" and finger in FINGERS
            assert field in RESULTANTS_SCHEMA["properties"][finger]["properties"]


def test_layout_command_writes_prints_and_obeys_overwrite(tmp_path, capsys):
    out = tmp_path / "left.json"
    code, _, err = cli(capsys, "layout", "--collection", "tactile/left", "-o", str(out))
    assert code == 0 and out.read_text() == layout_json("tactile/left"), err
    code, _, err = cli(capsys, "layout", "-o", str(out))
    assert code == 1 and err.strip().endswith(f"{out} already exists (use --overwrite to replace it)")
    assert len(err.strip().splitlines()) == 1 and out.read_text() == layout_json("tactile/left")
    code, _, _ = cli(capsys, "layout", "-o", str(out), "--overwrite")
    assert code == 0 and out.read_text() == layout_json(CID)
    code, stdout, _ = cli(capsys, "layout")
    assert code == 0 and json.loads(stdout) == build_layout(CID)
    code, _, err = cli(capsys, "layout", "--collection", "tactile/ri ght")
    assert code == 1 and len(err.strip().splitlines()) == 1 and "'tactile/ri ght'" in err


def test_layout_for_a_recording_takes_or_checks_its_collection(press, capsys):
    path, _ = press
    code, stdout, _ = cli(capsys, "layout", "--recording", str(path))
    assert code == 0 and json.loads(stdout) == build_layout(CID)
    code, _, err = cli(capsys, "layout", "--recording", str(path), "--collection", "tactile/left")
    assert code == 1 and err.strip().splitlines() == [
        f"wuji-tactile layout: error: {path} has no collection 'tactile/left' (its collections: {CID})"]


# -- the recording's scene ----------------------------------------------------------------------
def test_default_recording_has_a_complete_scene_and_a_transform_every_frame(press):
    """No option: the view's topics are in the file, JSON with JSON Schemas the project's checker
    accepts; every scene message holds every taxel, the five pads, the bones, the objects and
    the legend; one transform message per tactile record, at its log time."""
    _, topics = press
    records = topics[CID]
    assert len(records) == FRAMES
    for leaf, schema in (("scene", SCENE_UPDATE_SCHEMA), ("tf", FRAME_TRANSFORMS_SCHEMA),
                         ("resultants", RESULTANTS_SCHEMA)):
        _, stored, _ = topics[f"{CID}/view/{leaf}"][0]
        assert (stored.name, stored.encoding, json.loads(stored.data)) == (schema["title"], "jsonschema", schema)
        json_channel.check_schema(schema, topic=leaf)
    tf = topics[f"{CID}/view/tf"]
    assert [t for t, _, _ in tf] == [t for t, _, _ in records]
    names = {f"{CID}/wrist"} | {f"{CID}/{j.name}" for j in sim_metadata("right").joint_ids}
    for _, _, data in tf:
        assert {t["child_frame_id"] for t in json.loads(data)["transforms"]} == names
    scenes = topics[f"{CID}/view/scene"]
    assert len(scenes) >= FRAMES // 4
    n = sim_metadata("right").num_taxels
    expected = ({f"taxel/{i}" for i in range(n)} | {f"pad/{f}" for f in FINGERS}
                | {"hand/bones", "legend"} | {f"object/{k}" for k in range(5)})  # press: five plates
    for _, _, data in scenes:
        entities = json.loads(data)["entities"]
        assert {e["id"] for e in entities} == expected
        assert all(e["frame_id"] == f"{CID}/wrist" and e["frame_locked"] for e in entities)


def test_taxels_carry_index_pad_and_the_recorded_force_for_hover(press):
    _, topics = press
    layout = pad_layout(sim_metadata("right"))
    forces = {t: decode_tactile_record(d).forces for t, _, d in topics[CID]}
    lit = 0
    for t, _, data in topics[f"{CID}/view/scene"]:
        norm = np.linalg.norm(np.asarray(forces[t], dtype=np.float64), axis=1)
        taxels = [e for e in json.loads(data)["entities"] if e["id"].startswith("taxel/")]
        for e in taxels:
            meta = {m["key"]: m["value"] for m in e["metadata"]}
            i = int(e["id"].split("/")[1])
            assert meta["taxel"] == str(i) and meta["pad"] == FINGERS[layout.pad_of_taxel[i]]
            assert abs(float(meta["|f| [N]"]) - norm[i]) <= 5e-5
        lit += int((norm > 0).any())
    assert lit > 0  # the light contact has started: some scenes show loaded taxels


def test_bones_and_wrist_follow_the_recorded_hand(press):
    """The bones are the recorded hand's OpenXR bones in the wrist frame, and `world → wrist`
    is the recorded wrist pose (the wrist's motion is drawn)."""
    path, topics = press
    hands = RecordedHands.open(path)
    starts = {t: decode_tactile_record(d).timestamp.sample_time_local_common_clock for t, _, d in topics[CID]}
    for t, _, data in topics[f"{CID}/view/scene"][::10]:
        joints = hands.lookup("right", starts[t])
        bones = next(e for e in json.loads(data)["entities"] if e["id"] == "hand/bones")
        points = np.array([[p[k] for k in "xyz"] for p in bones["lines"][0]["points"]])
        want = rebase_to_root(joints[1], joints)[np.asarray(BONES).ravel(), :3]
        np.testing.assert_allclose(points, want, atol=2e-6, rtol=0)
    for t, _, data in topics[f"{CID}/view/tf"][::50]:
        wrist = next(x for x in json.loads(data)["transforms"] if x["child_frame_id"] == f"{CID}/wrist")
        joints = hands.lookup("right", starts[t])
        np.testing.assert_allclose([wrist["translation"][k] for k in "xyz"], joints[1, :3], atol=2e-6, rtol=0)


def test_the_pressed_object_is_drawn_where_mujoco_has_it(press):
    """Each press plate, mapped back to the world with the recorded wrist pose, sits at MuJoCo's
    geom position of a replica of the run, with its box size."""
    path, topics = press
    hands = RecordedHands.open(path)
    producer = SimProducer(make_scenario("press"), hand_poses=True)
    sim_frames = {}
    for k in range(FRAMES):
        producer.next_frame()
        plates = [producer.sim.model.geom(f"press_object_{f}_plate").id for f in FINGERS]
        sim_frames[k] = producer.sim.data.geom_xpos[plates].copy()
    size = 2 * producer.sim.model.geom_size[producer.sim.model.geom("press_object_thumb_plate").id]
    records = [(t, decode_tactile_record(d).timestamp) for t, _, d in topics[CID]]
    index = {t: k for k, (t, _) in enumerate(records)}
    for t, _, data in topics[f"{CID}/view/scene"][::20]:
        k = index[t]
        joints = hands.lookup("right", records[k][1].sample_time_local_common_clock)
        objects = [e for e in json.loads(data)["entities"] if e["id"].startswith("object/")]
        centres = np.array([[o["cubes"][0]["pose"]["position"][c] for c in "xyz"] for o in objects])
        names = [{m["key"]: m["value"] for m in o["metadata"]}["object"] for o in objects]
        assert names == [f"press_object_{f}_plate" for f in FINGERS]
        np.testing.assert_allclose(pose_apply(joints[1], centres), sim_frames[k], atol=2e-5, rtol=0)
        np.testing.assert_allclose([objects[0]["cubes"][0]["size"][c] for c in "xyz"], size, atol=1e-6)


def test_legend_labels_are_short_enough_for_the_panel(press):
    """The legend: a colour bar high at the top, labels of at most 24 characters (the old single
    130-character line ran off the panel)."""
    _, topics = press
    legend = next(e for e in json.loads(topics[f"{CID}/view/scene"][0][2])["entities"] if e["id"] == "legend")
    assert legend["texts"] and all(len(t["text"]) <= 24 for t in legend["texts"])
    # legible in Lichtblick: at 10-12 px its renderer drew some glyphs garbled or mirrored
    entities = json.loads(topics[f"{CID}/view/scene"][0][2])["entities"]
    labels = [t for e in entities for t in e["texts"]]
    assert {t["text"] for t in labels} >= set(FINGERS) | {"taxel |f|"}
    assert all(t["font_size"] >= 13 and t["scale_invariant"] and t["billboard"] for t in labels)
    z = [c["pose"]["position"]["z"] for c in legend["cubes"]]
    green = [c["color"]["g"] for c in legend["cubes"]]  # viridis: green grows with |f|
    assert np.argmax(z) == np.argmax(green) and np.argmin(z) == np.argmin(green)


def test_hw_emulate_record_carries_the_scene_too(tmp_path, capsys):
    path = tmp_path / "hw.mcap"
    code, _, err = cli(capsys, "hw", "--emulate", "--scenario", "press", "--duration", "0.5", "--quiet",
                       "--record", str(path))
    assert code == 0, err
    counts: dict[str, int] = {}
    with open(path, "rb") as f:
        for _, channel, message in make_reader(f).iter_messages():
            counts[channel.topic] = counts.get(channel.topic, 0) + 1
            if channel.topic == f"{CID}/view/scene":
                entities = json.loads(message.data)["entities"]
                assert sum(e["id"].startswith("taxel/") for e in entities) == 176
                assert "hand/bones" in {e["id"] for e in entities}
    assert counts[f"{CID}/view/tf"] == counts[CID] > 0 and counts[f"{CID}/view/scene"] >= counts[CID] // 4


def test_live_view_draws_the_same_complete_scene_at_the_hand_pose(tmp_path):
    """The live view (`FoxgloveView`, written to a file here) uses the same scene: with the hand's
    joint poses set, the bones are those joints in the wrist frame and `world → wrist` is the wrist
    pose; a transform message goes out with every frame."""
    pytest.importorskip("foxglove", reason="the live view needs the optional foxglove-sdk (extra 'view')")
    from wuji_tactile_device.integrations.foxglove_view import FoxgloveView
    from wuji_tactile_device.producers.sim.hand_pose import sim_hand_joint_poses
    from wuji_tactile_device.streams.inproc import InProcessBus
    from wuji_tactile_device.streams.publisher import TactilePublisher
    from wuji_tactile_device.streams.tracker import TactileTracker

    producer = SimProducer(make_scenario("press"), hand_poses=True)
    for _ in range(150):
        producer.next_frame()
    joints = sim_hand_joint_poses(producer.sim)
    metadata = producer.metadata
    path = tmp_path / "live.mcap"
    bus = InProcessBus()
    with FoxgloveView([CID], serve=False, mcap_path=str(path), scene_rate_hz=None) as view:
        tracker = TactileTracker(CID, bus)
        view.attach(tracker)
        with TactilePublisher(CID, metadata, bus) as publisher:
            for k in range(5):
                view.set_hand_pose(CID, joints)
                publisher.publish(np.zeros((metadata.num_taxels, 3), np.float32), sample_time_ns=10**9 + k * 10**7)
                tracker.update()
        tracker.close()
    scenes, tfs = [], []
    with open(path, "rb") as f:
        for _, channel, message in make_reader(f).iter_messages():
            if channel.topic == f"{CID}/view/scene":
                scenes.append(json.loads(message.data))
            elif channel.topic == f"{CID}/view/tf":
                tfs.append(json.loads(message.data))
    assert len(scenes) == 5 and len(tfs) == 1 + 5
    bones = next(e for e in scenes[-1]["entities"] if e["id"] == "hand/bones")
    points = np.array([[p[k] for k in "xyz"] for p in bones["lines"][0]["points"]])
    np.testing.assert_allclose(points, rebase_to_root(joints[1], joints)[np.asarray(BONES).ravel(), :3], atol=2e-6)
    wrist = next(x for x in tfs[-1]["transforms"] if x["child_frame_id"] == f"{CID}/wrist")
    np.testing.assert_allclose([wrist["translation"][k] for k in "xyz"], joints[1, :3], atol=2e-6)
    assert sum(e["id"].startswith("taxel/") for e in scenes[-1]["entities"]) == metadata.num_taxels


def test_force_images_are_labelled_rows_columns_and_scale(tmp_path, capsys):
    """`sim --record --images`: each force-image mosaic comes with ImageAnnotations naming its rows
    (Fx, Fy, Fz), columns (the five pads) and colour-scale ends, all inside the image; the scale
    strip under the tiles runs from the colour of 0 to that of the range; the layout shows them."""
    from wuji_tactile_device.integrations.foxglove_scene import IMAGE_MARGIN, force_colours

    path = tmp_path / "img.mcap"
    cli(capsys, "sim", "--scenario", "press", "--duration", "0.2", "--quiet", "--record", str(path),
        "--images", str(tmp_path / "img.npz"))
    images, labels = [], []
    with open(path, "rb") as f:
        for schema, channel, message in make_reader(f).iter_messages():
            if channel.topic == f"{CID}/view/images":
                images.append(json.loads(message.data))
            elif channel.topic == f"{CID}/view/image_labels":
                assert schema.name == "foxglove.ImageAnnotations"
                labels.append(json.loads(message.data))
    assert images and len(labels) == len(images)
    import base64

    img = images[0]
    pixels = np.frombuffer(base64.b64decode(img["data"]), np.uint8).reshape(img["height"], img["width"], 3)
    texts = {t["text"]: t["position"] for t in labels[0]["texts"]}
    assert {"Fx", "Fy", "Fz", *FINGERS, "0 N", "0.01 N"} <= set(texts)
    assert all(0 <= p["x"] < img["width"] and 0 <= p["y"] < img["height"] for p in texts.values())
    assert texts["Fx"]["y"] < texts["Fy"]["y"] < texts["Fz"]["y"]
    assert [texts[f]["x"] for f in FINGERS] == sorted(texts[f]["x"] for f in FINGERS)
    strip = pixels[img["height"] - IMAGE_MARGIN["bottom"] + 3, IMAGE_MARGIN["left"]:]
    ends = (force_colours(np.array([1e-9, 0.01]), 0.01)[:, :3] * 255).round()
    np.testing.assert_allclose(strip[[0, -1]], ends, atol=6)
    config = next(c for i, c in build_layout(CID, images=True)["configById"].items() if i.startswith("Image!"))
    assert config["imageMode"]["annotations"] == {f"{CID}/view/image_labels": {"visible": True}}
    # the layout for this recording has the images panel; for one without images it has none
    code, stdout, err = cli(capsys, "layout", "--recording", str(path))
    assert code == 0 and json.loads(stdout) == build_layout(CID, images=True), err
    code, stdout, _ = cli(capsys, "layout", "--recording", str(path), "--no-images")
    assert code == 0 and json.loads(stdout) == build_layout(CID)
    plain = tmp_path / "plain.mcap"
    cli(capsys, "sim", "--scenario", "press", "--duration", "0.05", "--quiet", "--record", str(plain))
    code, stdout, _ = cli(capsys, "layout", "--recording", str(plain))
    assert code == 0 and not any(i.startswith("Image!") for i in json.loads(stdout)["configById"])
    code, _, err = cli(capsys, "layout", "--recording", str(plain), "--images")
    assert code == 1 and err.strip().splitlines() == [
        f"wuji-tactile layout: error: {plain} has no force images ('{CID}/view/images': record with "
        "`sim --images`); drop --images"]
    code, stdout, _ = cli(capsys, "layout", "--images")  # a live `sim --images --foxglove`
    assert code == 0 and json.loads(stdout) == build_layout(CID, images=True)
