"""The live Foxglove view, checked through the wire: a real WebSocket client speaking the Foxglove
WebSocket protocol v1 (subprotocol `foxglove.sdk.v1`, formerly `foxglove.websocket.v1`) connects to the view's server on loopback, subscribes,
decodes every message with the schema the server advertised (FlatBuffers records with the contract's
decoder, protobuf scene messages with the advertised FileDescriptorSet, JSON resultants), and
compares the scene with the tracker's frames: taxel positions (bind and skinned pose), colours,
sizes, pad arrows and timestamps."""
from __future__ import annotations

import base64
import contextlib
import json
import struct
import time

import numpy as np
import pytest

foxglove = pytest.importorskip("foxglove", reason="the view needs the optional foxglove-sdk (extra 'view')")
websockets_sync = pytest.importorskip("websockets.sync.client", reason="the protocol client needs 'websockets'")
descriptor_pb2 = pytest.importorskip("google.protobuf.descriptor_pb2", reason="decoding needs 'protobuf' (extra 'dev')")
from google.protobuf import descriptor_pool, message_factory  # noqa: E402

from wuji_tactile_device.contract import decode_tactile_record  # noqa: E402
from wuji_tactile_device.contract.geometry import pose_to_matrix, quat_to_matrix  # noqa: E402
from wuji_tactile_device.contract.pads import FINGERS, pad_layout  # noqa: E402
from wuji_tactile_device.errors import TactileError  # noqa: E402
from wuji_tactile_device.integrations.foxglove_view import FoxgloveView  # noqa: E402
from wuji_tactile_device.producers.sim.layout_metadata import sim_metadata  # noqa: E402
from wuji_tactile_device.streams.inproc import InProcessBus  # noqa: E402
from wuji_tactile_device.streams.publisher import TactilePublisher  # noqa: E402
from wuji_tactile_device.streams.tracker import TactileTracker  # noqa: E402

CID = "tactile/right"
RANGE = 0.5  # [N] fixed colour range used in these tests
DEADLINE_S = 10.0


class FoxgloveClient:
    """A minimal Foxglove WebSocket protocol v1 client: advertise → subscribe → messageData."""

    def __init__(self, port: int, subprotocols: tuple[str, ...] = ("foxglove.sdk.v1", "foxglove.websocket.v1"),
                 **connect_options):
        # The protocol's two names: `foxglove.websocket.v1` (Lichtblick, Foxglove Studio) and
        # `foxglove.sdk.v1` (the current Foxglove app), message for message the same; the server
        # accepts one of those offered (test_foxglove_server offers each alone).
        self._stack = contextlib.ExitStack()
        self.ws = self._stack.enter_context(websockets_sync.connect(f"ws://127.0.0.1:{port}", open_timeout=5, max_size=None,
                                          subprotocols=list(subprotocols), **connect_options))
        assert self.ws.subprotocol in subprotocols
        self.server_info = None
        self.channels: dict[int, dict] = {}
        self.subscriptions: dict[int, dict] = {}
        self.decoders: dict[int, object] = {}

    def recv(self, timeout: float = 5.0):
        msg = self.ws.recv(timeout=timeout)
        if isinstance(msg, str):
            op = json.loads(msg)
            if op["op"] == "serverInfo":
                self.server_info = op
            elif op["op"] == "advertise":
                for ch in op["channels"]:
                    self.channels[ch["id"]] = ch
            return op
        opcode = msg[0]
        assert opcode == 0x01, f"unexpected binary opcode {opcode}"  # messageData
        sub_id, log_time = struct.unpack_from("<IQ", msg, 1)
        return {"sub": sub_id, "log_time": log_time, "payload": bytes(msg[13:])}

    def wait_for_topics(self, topics: set[str]) -> dict[str, dict]:
        end = time.monotonic() + DEADLINE_S
        while not topics <= {c["topic"] for c in self.channels.values()}:
            assert time.monotonic() < end, f"advertised only {sorted(c['topic'] for c in self.channels.values())}"
            self.recv()
        return {c["topic"]: c for c in self.channels.values()}

    def subscribe(self, channels: list[dict]) -> None:
        subs = [{"id": 100 + k, "channelId": ch["id"]} for k, ch in enumerate(channels)]
        for s, ch in zip(subs, channels, strict=True):
            self.subscriptions[s["id"]] = ch
            self.decoders[s["id"]] = decoder_for(ch)
        self.ws.send(json.dumps({"op": "subscribe", "subscriptions": subs}))

    def close(self) -> None:
        self._stack.close()


def decoder_for(channel: dict):
    """A function payload -> decoded message, from the advertised schema only."""
    enc, schema_enc = channel["encoding"], channel.get("schemaEncoding")
    if enc == "protobuf":
        assert schema_enc == "protobuf"
        fds = descriptor_pb2.FileDescriptorSet.FromString(base64.b64decode(channel["schema"]))
        pool = descriptor_pool.DescriptorPool()
        for f in fds.file:
            pool.Add(f)
        cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(channel["schemaName"]))
        return cls.FromString
    if enc == "json":
        assert schema_enc == "jsonschema"
        schema = json.loads(channel["schema"])
        assert schema["type"] == "object"
        return lambda payload: json.loads(payload)
    if enc == "flatbuffer":
        assert schema_enc == "flatbuffer"
        bfbs = base64.b64decode(channel["schema"])
        assert bfbs[4:8] == b"BFBS"  # a binary FlatBuffers schema, as recorded
        return decode_tactile_record if channel["schemaName"].endswith("DataArrayRecord") else bytes
    raise AssertionError(f"unexpected encoding {enc!r} on {channel['topic']}")


def expected_positions(metadata, segment_poses) -> np.ndarray:
    """Rigidly attached taxels: p = C · B⁻¹ · p_bind with 4×4 matrices (independent of LBS code)."""
    seg = metadata.segment_indices[:, 0]
    assert np.all(metadata.segment_weights[:, 0] == 1.0)
    C = pose_to_matrix(segment_poses)[seg]
    B = pose_to_matrix(metadata.segment_bind_poses)[seg]
    p = np.concatenate([metadata.taxel_bind_poses[:, :3], np.ones((metadata.num_taxels, 1))], axis=1)
    return np.einsum("nij,njk,nk->ni", C, np.linalg.inv(B), p)[:, :3]


def pad_frame_press(metadata, layout, pad: int, force_pad: np.ndarray, n_loaded: int) -> np.ndarray:
    """Taxel forces (N, 3) [taxel axes]: the first `n_loaded` taxels of `pad` each carry the same
    pad-frame force `force_pad`; their pad resultant is then exactly n_loaded · force_pad."""
    f = np.zeros((metadata.num_taxels, 3))
    members = np.flatnonzero(layout.pad_of_taxel == pad)[:n_loaded]
    f[members] = np.einsum("nji,j->ni", layout.taxel_to_pad[members], force_pad)  # R⁻¹ F
    return f.astype(np.float32)


@pytest.fixture
def live():
    metadata = sim_metadata("right")
    bus = InProcessBus()
    view = FoxgloveView([CID], port=0, force_range_n=RANGE, scene_rate_hz=None)
    tracker = TactileTracker(CID, bus)
    view.attach(tracker)
    client = FoxgloveClient(view.port)
    try:
        yield metadata, bus, view, tracker, client
    finally:
        client.close()
        tracker.close()
        view.close()


def collect(client, tracker, publisher, frames, times) -> dict[str, list]:
    """Publish frames, let the tracker deliver them, and read messages until every subscribed topic
    has one message per frame."""
    for f, t in zip(frames, times, strict=True):
        publisher.publish(f, sample_time_ns=t)
    end = time.monotonic() + DEADLINE_S
    while tracker.counters.delivered < len(frames):
        tracker.update(timeout_s=0.1)
        assert time.monotonic() < end, "the tracker did not deliver the frames"
    got: dict[str, list] = {ch["topic"]: [] for ch in client.subscriptions.values()}
    while not _enough(got, len(frames)):
        remaining = end - time.monotonic()
        assert remaining > 0, {topic: len(v) for topic, v in got.items()}
        msg = client.recv(timeout=remaining)
        if "sub" in msg:
            got[client.subscriptions[msg["sub"]]["topic"]].append(
                (msg["log_time"], client.decoders[msg["sub"]](msg["payload"])))
    return got


def scene_taxels(scene: dict) -> dict:
    """The taxel entities of a (JSON) SceneUpdate, in taxel order: frame, stamp [ns], positions
    (N, 3), RGBA (N, 4), diameters (N,), and the hover metadata per taxel."""
    taxels = [e for e in scene["entities"] if e["id"].startswith("taxel/")]
    assert [e["id"] for e in taxels] == [f"taxel/{i}" for i in range(len(taxels))]
    spheres = [e["spheres"][0] for e in taxels]
    return {"frames": {e["frame_id"] for e in taxels},
            "stamps": {e["timestamp"]["sec"] * 10**9 + e["timestamp"]["nsec"] for e in taxels},
            "pos": np.array([[s["pose"]["position"][k] for k in "xyz"] for s in spheres]).reshape(-1, 3),
            "rgba": np.array([[s["color"][k] for k in "rgba"] for s in spheres]).reshape(-1, 4),
            "size": np.array([s["size"]["x"] for s in spheres]),
            "meta": [{m["key"]: m["value"] for m in e["metadata"]} for e in taxels]}


def _enough(got, n) -> bool:
    scene_frames = got.get("tactile/right/view/scene", [])
    return (len(got["tactile/right"]) >= n and len(got["tactile/right/view/resultants"]) >= n
            and len(scene_frames) >= n)


def wait_for_sinks(view, topics, timeout=DEADLINE_S):
    hand = view._hands[CID]
    channels = {"tactile/right": hand.data, "tactile/right/view/scene": hand.scene,
                "tactile/right/view/resultants": hand.resultants, "tactile/right/metadata": hand.meta}
    end = time.monotonic() + timeout
    while not all(channels[t].has_sinks() for t in topics):
        assert time.monotonic() < end, "the server never registered the subscriptions"
        time.sleep(0.01)


def test_server_speaks_the_protocol_and_the_scene_matches_the_tracker(live):
    metadata, bus, view, tracker, client = live
    layout = pad_layout(metadata)
    first = client.recv()
    assert first["op"] == "serverInfo" and first["name"] == "wuji-tactile"
    topics = client.wait_for_topics({"tactile/right", "tactile/right/metadata", "tactile/right/view/scene",
                                     "tactile/right/view/tf", "tactile/right/view/resultants",
                                     "tactile/right/view/images"})
    assert topics["tactile/right"]["schemaName"] == "core.TactileDataArrayRecord"
    assert topics["tactile/right/metadata"]["schemaName"] == "core.TactileMetadataRecord"
    assert topics["tactile/right/view/scene"]["schemaName"] == "foxglove.SceneUpdate"
    wanted = ["tactile/right", "tactile/right/metadata", "tactile/right/view/scene", "tactile/right/view/resultants"]
    client.subscribe([topics[t] for t in wanted])
    wait_for_sinks(view, wanted)

    # Three frames: thumb, index, ring pressed with known pad-frame forces; magnitudes per taxel
    # step through the colour range (0.1 · RANGE · k) and beyond it (saturation).
    presses = [(0, np.array([0.0, 0.04, 0.0]), 6), (1, np.array([0.01, 0.05, -0.02]), 10), (3, np.array([0.0, 0.2, 0.0]), 3)]
    frames = [pad_frame_press(metadata, layout, p, F, n) for p, F, n in presses]
    frames[0][np.flatnonzero(layout.pad_of_taxel == 2)[:11], 2] = -0.1 * RANGE * np.arange(11)  # middle: 0 … RANGE
    times = [5_000_000_000 + 10_000_000 * k for k in range(3)]
    publisher = TactilePublisher(CID, metadata, bus)
    try:
        got = collect(client, tracker, publisher, frames, times)
    finally:
        publisher.close()

    # Contract channel: the exact records, decoded with the advertised FlatBuffers schema's root.
    data = got["tactile/right"][:3]
    for (_log_time, record), f, t in zip(data, frames, times, strict=True):
        np.testing.assert_array_equal(record.forces, f)
        assert record.timestamp.sample_time_local_common_clock == t
    assert got["tactile/right/metadata"], "metadata record not received"

    # Resultants: n_loaded · F on the pressed pad, zero elsewhere, in the pad frame.
    res = [m for _, m in got["tactile/right/view/resultants"]][:3]
    for msg, (pad, F, n), t in zip(res, presses, times, strict=True):
        assert msg["timestamp"] == {"sec": t // 10**9, "nsec": t % 10**9}
        assert "pad frame" in msg["frame"]
        for p, finger in enumerate(FINGERS):
            want = n * F if p == pad else np.zeros(3)
            if p == 2 and msg is res[0]:
                continue  # the middle ramp of frame 0 is checked through the scene below
            np.testing.assert_allclose([msg[finger][k] for k in "xyz"], want, atol=1e-6)
            assert msg[finger]["norm"] == pytest.approx(np.linalg.norm(want), abs=1e-6)

    # Scene: one sphere per taxel at its bind position [m, wrist frame], colour and size by |f|.
    scenes = [m for _, m in got["tactile/right/view/scene"]][:3]
    bind = expected_positions(metadata, metadata.segment_bind_poses)
    import matplotlib

    viridis = matplotlib.colormaps["viridis"]
    for scene, f, t, (pad, F, n) in zip(scenes, frames, times, presses, strict=True):
        taxels = scene_taxels(scene)
        assert taxels["frames"] == {"tactile/right/wrist"} and taxels["stamps"] == {t}
        pos, rgba, size = taxels["pos"], taxels["rgba"], taxels["size"]
        assert len(pos) == metadata.num_taxels
        np.testing.assert_allclose(pos, bind, atol=6e-6)  # written in µm steps
        mag = np.linalg.norm(f.astype(np.float64), axis=1)
        assert [m["pad"] for m in taxels["meta"]] == [FINGERS[p] for p in layout.pad_of_taxel]
        np.testing.assert_allclose([float(m["|f| [N]"]) for m in taxels["meta"]], mag, atol=5e-5)
        zero = mag == 0
        np.testing.assert_allclose(rgba[zero], [[0.72, 0.72, 0.72, 1.0]] * int(zero.sum()))
        np.testing.assert_allclose(rgba[~zero, :3], viridis(np.clip(mag[~zero] / RANGE, 0, 1))[:, :3], atol=0.03)
        # Diameter 1.5 mm at 0 N growing linearly to 4 mm at the top of the range, then constant.
        np.testing.assert_allclose(size, 0.0015 + 0.0025 * np.clip(mag / RANGE, 0, 1), atol=6e-6)
        # The pad arrow: ends on the pad's taxel centroid, points along the force on the hand
        # rotated into the wrist frame, 40 mm per newton.
        pads = {e["id"]: e for e in scene["entities"] if e["id"].startswith("pad/")}
        loaded = {k for k, e in pads.items() if e["arrows"]}
        assert loaded == ({f"pad/{FINGERS[pad]}", "pad/middle"} if pad == 0 else {f"pad/{FINGERS[pad]}"})
        R = quat_to_matrix(metadata.segment_bind_poses[layout.pad_segment[pad], 3:])
        f_wrist = R @ (n * F)
        arrow = pads[f"pad/{FINGERS[pad]}"]["arrows"][0]
        q = arrow["pose"]["orientation"]
        direction = quat_to_matrix([q[k] for k in "xyzw"])[:, 0]
        np.testing.assert_allclose(direction, f_wrist / np.linalg.norm(f_wrist), atol=1e-5)
        length = arrow["shaft_length"] + arrow["head_length"]
        assert length == pytest.approx(0.04 * np.linalg.norm(f_wrist), abs=2e-6)
        start = np.array([arrow["pose"]["position"][k] for k in "xyz"])
        np.testing.assert_allclose(start + direction * length, bind[layout.pad_of_taxel == pad].mean(axis=0), atol=1e-5)


def test_scene_follows_the_segment_poses(live):
    """With a segment pose set, taxels are drawn where the moved segment carries them."""
    metadata, bus, view, tracker, client = live
    client.recv()
    topics = client.wait_for_topics({"tactile/right/view/scene", "tactile/right", "tactile/right/view/resultants"})
    wanted = ["tactile/right", "tactile/right/view/scene", "tactile/right/view/resultants"]
    client.subscribe([topics[t] for t in wanted])
    wait_for_sinks(view, wanted)
    poses = metadata.segment_bind_poses.astype(np.float64).copy()
    angle = np.deg2rad(40.0)  # index distal segment flexed 40° about its own x axis, 5 mm shifted
    from wuji_tactile_device.contract.geometry import quat_multiply

    poses[1, 3:] = quat_multiply(poses[1, 3:], [np.sin(angle / 2), 0.0, 0.0, np.cos(angle / 2)])
    poses[1, :3] += [0.0, 0.005, 0.0]
    view.set_segment_poses(CID, poses)
    publisher = TactilePublisher(CID, metadata, bus)
    f = np.zeros((metadata.num_taxels, 3), np.float32)
    f[:, 2] = -0.01
    try:
        got = collect(client, tracker, publisher, [f], [7_000_000_000])
    finally:
        publisher.close()
    pos = scene_taxels(got["tactile/right/view/scene"][0][1])["pos"]
    want = expected_positions(metadata, poses)
    np.testing.assert_allclose(pos, want, atol=6e-6)  # written in µm steps
    index = pad_layout(metadata).pad_of_taxel == 1
    moved = np.linalg.norm(pos - expected_positions(metadata, metadata.segment_bind_poses), axis=1)
    assert moved[index].min() > 0.004 and moved[~index].max() < 1e-5


def test_view_writes_the_derived_topics_into_an_mcap(tmp_path):
    """serve=False, mcap_path: scene, transforms and resultants land in the file (protobuf /
    JSON, readable by Foxglove), the contract channels do not (they belong to the recording)."""
    from mcap.reader import make_reader

    metadata = sim_metadata("right")
    bus = InProcessBus()
    path = tmp_path / "view.mcap"
    with FoxgloveView([CID], serve=False, mcap_path=str(path), scene_rate_hz=10.0) as view:
        tracker = TactileTracker(CID, bus)
        view.attach(tracker)
        with TactilePublisher(CID, metadata, bus) as publisher:
            for k in range(30):  # 0.3 s of 100 Hz frames → scene at 10 Hz: 3 updates
                publisher.publish(np.full((metadata.num_taxels, 3), -0.001 * k, np.float32),
                                  sample_time_ns=10**9 + k * 10**7)
                tracker.update()
        view.publish_images(CID, np.zeros((5, 3, 48, 32)), 10**9)
        tracker.close()
    counts: dict[str, int] = {}
    encodings = {}
    with open(path, "rb") as fh:
        for schema, channel, _message in make_reader(fh).iter_messages():
            counts[channel.topic] = counts.get(channel.topic, 0) + 1
            encodings[channel.topic] = (schema.name, channel.message_encoding)
    assert "tactile/right" not in counts and "tactile/right/metadata" not in counts
    assert counts["tactile/right/view/resultants"] == 30
    assert encodings["tactile/right/view/resultants"] == ("wuji_tactile.PadResultants", "json")
    assert encodings["tactile/right/view/scene"] == ("foxglove.SceneUpdate", "json")
    assert encodings["tactile/right/view/tf"] == ("foxglove.FrameTransforms", "json")
    assert encodings["tactile/right/view/images"] == ("foxglove.RawImage", "protobuf")
    # 3 throttled scenes, each complete; transforms on the metadata and with every frame.
    assert counts["tactile/right/view/scene"] == 3
    assert counts["tactile/right/view/tf"] == 1 + 30


def test_view_refuses_unknown_collections_and_a_busy_port():
    with FoxgloveView([CID], port=0) as view:
        with pytest.raises(ValueError, match=r"collection 'tactile/left' is not shown by this view \(its collections: tactile/right\)"):
            view.set_segment_poses("tactile/left", None)
        with pytest.raises(TactileError, match=rf"cannot start the Foxglove view on 127.0.0.1:{view.port}"):
            FoxgloveView([CID], port=view.port)
    with pytest.raises(ValueError, match="force_range_n must be a finite number > 0, got 0"):
        FoxgloveView([CID], port=0, force_range_n=0)


def test_taxel_positions_before_any_metadata_is_one_error_naming_the_collection():
    # Regression: before the layout was known this was an AttributeError on None.
    with FoxgloveView([CID], port=0) as view:
        with pytest.raises(TactileError, match=r"^tactile/right: taxel positions asked before any metadata reached "
                                               r"the view$"):
            view.taxel_positions(CID)


def test_view_command_serves_a_recording(tmp_path):
    """`wuji-tactile view FILE --port 0`: the printed address serves the file's frames; the scene's
    loaded taxels are those the recording loads; the command ends after --duration with exit 0."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    from retargeting_helpers import CurvedPadLayout, press_profile, record_synthetic

    layout = CurvedPadLayout(per_pad=9)
    forces = press_profile(layout, frames=200)  # 2 s at 100 Hz
    path = tmp_path / "press.mcap"
    record_synthetic(path, layout, forces)
    script = Path(sys.executable).parent / "wuji-tactile"
    proc = subprocess.Popen([str(script), "view", str(path), "--port", "0", "--duration", "4", "--scene-rate", "100"],
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        port = int(re.search(r"ws://127\.0\.0\.1:(\d+)", line).group(1))
        client = FoxgloveClient(port)
        try:
            topics = client.wait_for_topics({"tactile/right/view/scene"})
            client.subscribe([topics["tactile/right/view/scene"]])
            loaded_sets = []
            end = time.monotonic() + DEADLINE_S
            while len(loaded_sets) < 20 and time.monotonic() < end:
                msg = client.recv(timeout=DEADLINE_S)
                if "sub" in msg:
                    scene = client.decoders[msg["sub"]](msg["payload"])
                    sizes = scene_taxels(scene)["size"]
                    loaded_sets.append(frozenset(np.flatnonzero(sizes > 0.0015 + 1e-6)))
        finally:
            client.close()
        assert len(loaded_sets) >= 20
        possible = {frozenset(np.flatnonzero(np.linalg.norm(f, axis=1) > 0)) for f in forces}
        assert all(s in possible for s in loaded_sets)
        assert any(s for s in loaded_sets)  # at least one frame with load on view
        err = proc.communicate(timeout=20)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "tactile/right: 200 frames shown" in err


def test_shipped_layout_is_the_generator_output_and_names_the_view_topics():
    """examples/foxglove/tactile_view.json is what `wuji-tactile layout` writes (so it is current),
    and every topic it opens is one the live view publishes."""
    import re
    from pathlib import Path

    from wuji_tactile_device.integrations.viewer_layout import build_layout

    root = Path(__file__).resolve().parents[1] / "examples" / "foxglove"
    shipped = json.loads((root / "tactile_view.json").read_text())
    assert shipped == build_layout("tactile/right")

    def topics_of(layout: dict) -> set[str]:
        text = json.dumps(layout)
        found = set(re.findall(r'\\"(tactile/right/view/[a-z]+)\\"', text))  # quoted plot paths
        return found | set(re.findall(r'"(tactile/right/view/[a-z]+)"', text))  # 3-D and image topics

    topics = topics_of(shipped)
    assert topics == {"tactile/right/view/scene", "tactile/right/view/resultants"}
    with_images = topics_of(build_layout("tactile/right", images=True))
    assert with_images == topics | {"tactile/right/view/images"}
    with FoxgloveView([CID], port=0) as view:
        hand = view._hands[CID]
        published = {hand.scene.topic(), hand.resultants.topic(), hand.images.topic(), hand.tf.topic()}
    assert with_images <= published
    assert '"followTf": "tactile/right/wrist"' in json.dumps(shipped)
    for finger in FINGERS:
        assert f'\\"tactile/right/view/resultants\\".{finger}.norm' in json.dumps(shipped)


def test_tracked_view_feeds_the_view_from_a_producer_in_this_process(tmp_path):
    """What `sim/hw/replay --foxglove` use: a view with its own tracker on the producer's
    transport; every published frame reaches the view's topics, images at the frame's time."""
    from mcap.reader import make_reader

    from wuji_tactile_device.integrations.foxglove_view import TrackedView

    metadata = sim_metadata("right")
    bus = InProcessBus()
    path = tmp_path / "tracked.mcap"
    tracked = TrackedView(bus, [CID], serve=False, mcap_path=str(path), scene_rate_hz=None)
    try:
        with TactilePublisher(CID, metadata, bus) as publisher:
            for k in range(5):
                publisher.publish(np.full((metadata.num_taxels, 3), -0.01, np.float32), sample_time_ns=2 * 10**9 + k * 10**7)
                assert tracked.poll() == 1
                tracked.publish_images(CID, np.full((5, 3, 48, 32), 0.001 * k))
    finally:
        tracked.close()
    times: dict[str, list[int]] = {}
    with open(path, "rb") as fh:
        for _, channel, message in make_reader(fh).iter_messages():
            times.setdefault(channel.topic, []).append(message.log_time)
    assert times["tactile/right/view/resultants"] == [2 * 10**9 + k * 10**7 for k in range(5)]
    assert times["tactile/right/view/images"] == [2 * 10**9 + k * 10**7 for k in range(5)]


def test_missing_sdk_is_one_line_naming_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "foxglove", None)  # import foxglove → ImportError
    with pytest.raises(TactileError, match=r"the live view needs the Foxglove SDK: pip install 'wuji-tactile-device\[view\]'"):
        FoxgloveView([CID], port=0)
