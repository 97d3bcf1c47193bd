"""FoxgloveView: a live 3-D view of tactile collections in Foxglove (foxglove-sdk, WebSocket server).

Attach it to `TactileTracker`s as an observer (like `McapRecorder.attach`); for each collection
`C` (e.g. `tactile/right`) it publishes:

- `C`, `C/metadata`: the contract's records unchanged (FlatBuffers, the `.bfbs` schemas a
  recording stores), so anything that reads a recording reads the live view too;
- `C/view/scene` (`foxglove.SceneUpdate`, JSON): the complete scene of `foxglove_scene.SceneBuilder`
  in every message — each taxel (colour and size by |f| on a fixed range, index/pad/|f| as
  metadata), the pad resultant arrows, the hand's bones, the objects, the legend;
- `C/view/tf` (`foxglove.FrameTransforms`, JSON): `world → C/wrist → C/<segment>`, every frame;
- `C/view/resultants` (JSON): the 15 pad resultant components and their magnitudes [N, pad frame];
- `C/view/images` (`foxglove.RawImage`): force images when a producer hands them over.

Conventions: forces are the force exerted ON the hand by the contact (the contract's convention:
a press on a taxel gives fz < 0 in its own axes, +z outward). Pad resultants are in each pad's
frame (bind frame of the finger's distal segment, OpenXR axes: +Y toward the nail, +Z toward the
wrist), so pressing a fingertip pad gives Fy > 0. Taxel positions follow the hand by linear blend
skinning when segment poses `(J, 7)` in the wrist frame are given (`set_segment_poses`), else the
bind pose. Scene times are the frames' sample times (monotonic ns of the producer, not the epoch).
"""
from __future__ import annotations

import json
import math
import time
from typing import Any
from collections.abc import Sequence

import numpy as np

from ..contract import bfbs
from ..contract.geometry import skin_taxel_positions
from ..contract.metadata import MetadataRecord, TactileMetadata
from ..contract.naming import (DATA_RECORD_SCHEMA_NAME, METADATA_RECORD_SCHEMA_NAME, RECORD_ROOT, Stream, stream_key,
                               validate_collection_id)
from ..contract.pads import NUM_PADS, PadLayout, pad_layout, pad_resultants
from ..errors import DataLayoutError, TactileError
from .foxglove_scene import (COLLECTION_SPACING_M, DEFAULT_ARROW_M_PER_N, DEFAULT_FORCE_RANGE_N,  # noqa: F401
                             FRAME_TRANSFORMS_SCHEMA, IMAGE_LABELS_SCHEMA, MESSAGE_ENCODING, PAD_FRAME_TEXT,
                             RESULTANTS_SCHEMA, SCENE_UPDATE_SCHEMA, SCHEMA_ENCODING, TAXEL_DIAMETER_M,
                             UNLOADED_RGBA, ObjectGeoms, SceneBuilder, force_colours, image_labels, image_mosaic,
                             resultants_message, segment_poses_from_joints, taxel_diameters)


def _foxglove():
    try:
        import foxglove
    except ImportError as exc:
        raise TactileError("the live view needs the Foxglove SDK: pip install 'wuji-tactile-device[view]'") from exc
    return foxglove


def _json_schema(fg: Any, schema: dict):
    return fg.Schema(name=schema["title"], encoding=SCHEMA_ENCODING, data=json.dumps(schema).encode())


def _stamp(foxglove: Any, ns: int):
    return foxglove.messages.Timestamp(sec=int(ns // 1_000_000_000), nsec=int(ns % 1_000_000_000))


class _Hand:
    """Per-collection state: channels, layout, current segment poses."""

    def __init__(self, view: FoxgloveView, collection_id: str, index: int):
        fg = view._fg
        ctx = view.context
        self.collection_id = collection_id
        self.frame_wrist = f"{collection_id}/wrist"
        self.world_offset = np.array([COLLECTION_SPACING_M * index, 0.0, 0.0])
        self.data = fg.Channel(stream_key(collection_id, Stream.DATA), message_encoding="flatbuffer", context=ctx,
                               schema=fg.Schema(name=DATA_RECORD_SCHEMA_NAME, encoding="flatbuffer",
                                                data=bfbs(RECORD_ROOT[Stream.DATA])))
        self.meta = fg.Channel(stream_key(collection_id, Stream.METADATA), message_encoding="flatbuffer", context=ctx,
                               schema=fg.Schema(name=METADATA_RECORD_SCHEMA_NAME, encoding="flatbuffer",
                                                data=bfbs(RECORD_ROOT[Stream.METADATA])))
        base = f"{collection_id}/view"
        self.scene = fg.Channel(f"{base}/scene", message_encoding=MESSAGE_ENCODING, context=ctx,
                                schema=_json_schema(fg, SCENE_UPDATE_SCHEMA), metadata={
            "frame": self.frame_wrist, "force_range_N": repr(view.force_range_n),
            "convention": "force on the hand; taxel colour/size = |f| on a fixed range; "
                          "every message is the complete scene"})
        self.tf = fg.Channel(f"{base}/tf", message_encoding=MESSAGE_ENCODING, context=ctx,
                             schema=_json_schema(fg, FRAME_TRANSFORMS_SCHEMA))
        self.image_labels = fg.Channel(f"{base}/image_labels", message_encoding=MESSAGE_ENCODING, context=ctx,
                                       schema=_json_schema(fg, IMAGE_LABELS_SCHEMA))
        self.index = index
        self.resultants = fg.Channel(f"{base}/resultants", schema=RESULTANTS_SCHEMA, context=ctx,
                                     metadata={"frame": PAD_FRAME_TEXT, "unit": "N"})
        self.images = fg.channels.RawImageChannel(f"{base}/images", context=ctx, metadata={
            "layout": "rows Fx, Fy, Fz (pad frame); columns thumb … pinky; one pixel = one image cell",
            "encoding": "rgb8, |value| on the fixed image range, viridis"})
        self.metadata: TactileMetadata | None = None
        self.metadata_payload = b""
        self.layout: PadLayout | None = None
        self.segment_poses: np.ndarray | None = None
        self.joint_poses: np.ndarray | None = None  # (26, 7) in the hand's base space, when known
        self.objects: ObjectGeoms | None = None
        self.builder: SceneBuilder | None = None
        self.positions: np.ndarray | None = None  # (N, 3) current taxel positions [m, wrist frame]
        self.last_scene_ns: int | None = None
        self.frames = 0

    def confirmed(self, what: str) -> tuple[TactileMetadata, PadLayout, SceneBuilder]:
        """The adopted layout, its pads and its scene builder (set together by the first
        metadata); before that, TactileError naming the collection and `what` needed them."""
        md, layout, builder = self.metadata, self.layout, self.builder
        if md is None or layout is None or builder is None:
            raise TactileError(f"{self.collection_id}: {what} before any metadata reached the view")
        return md, layout, builder


class FoxgloveView:
    """Publish tactile collections to Foxglove: a WebSocket server on `host:port` (loopback by
    default; `port=0` picks a free port, see `.port`) and, with `mcap_path`, the derived topics
    (scene, transforms, resultants, images; not the contract channels) into an MCAP file too.

    `force_range_n` [N]: fixed |f| range of the taxel colours and sizes. `arrow_m_per_n` [m/N]:
    arrow length per newton of pad resultant. `scene_rate_hz`: at most this many scene updates per
    second of sample time (None: every frame); the contract channels and resultants carry every
    frame. `serve=False`: no server (MCAP only)."""

    def __init__(self, collections: Sequence[str], *, host: str = "127.0.0.1", port: int = 8765,
                 force_range_n: float = DEFAULT_FORCE_RANGE_N, arrow_m_per_n: float = DEFAULT_ARROW_M_PER_N,
                 scene_rate_hz: float | None = 30.0, image_range_n: float = 0.01, mcap_path: str | None = None,
                 overwrite: bool = False, serve: bool = True, name: str = "wuji-tactile"):
        collections = list(collections)
        if not collections:
            raise ValueError("FoxgloveView needs at least one collection id")
        for cid in collections:
            validate_collection_id(cid)
        if len(set(collections)) != len(collections):
            raise ValueError(f"collections must be distinct, got {collections}")
        for label, value in (("force_range_n", force_range_n), ("arrow_m_per_n", arrow_m_per_n),
                             ("image_range_n", image_range_n)):
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"{label} must be a finite number > 0, got {value!r}")
        if scene_rate_hz is not None and not (math.isfinite(scene_rate_hz) and scene_rate_hz > 0):
            raise ValueError(f"scene_rate_hz must be None or a finite number > 0, got {scene_rate_hz!r}")
        if not serve and mcap_path is None:
            raise ValueError("FoxgloveView with serve=False needs an mcap_path (otherwise nothing is published)")
        self._fg = _foxglove()
        self.force_range_n = float(force_range_n)
        self.arrow_m_per_n = float(arrow_m_per_n)
        self.image_range_n = float(image_range_n)
        self._scene_period_ns = None if scene_rate_hz is None else int(1e9 / scene_rate_hz)
        self.context = self._fg.Context()
        self._hands = {cid: _Hand(self, cid, i) for i, cid in enumerate(collections)}
        self._contract_topics = {stream_key(c, s) for c in collections for s in Stream}
        self._server = None
        self.server_counters = None
        self._mcap = None
        try:
            if mcap_path is not None:
                self._mcap = self._fg.open_mcap(mcap_path, allow_overwrite=overwrite, context=self.context,
                                                channel_filter=lambda ch: ch.topic not in self._contract_topics)
            if serve:  # both subprotocols, bounded (foxglove_server)
                from .foxglove_server import LiveServer

                self._server = LiveServer(self.context, host=host, port=port, name=name)
                self.server_counters = self._server.counters  # viewers served / refused / dropped
        except TactileError:  # the live server's own one-line refusal
            self.close()
            raise
        except Exception as exc:  # the SDK raises its own types (RuntimeError, OSError-like); one typed error
            self.close()
            where = f"{host}:{port}" if serve else str(mcap_path)
            raise TactileError(f"cannot start the Foxglove view on {where}: {exc}") from exc
        self._last_metadata_republish = time.monotonic()

    # -- introspection ------------------------------------------------------------------------
    @property
    def port(self) -> int:
        """The TCP port the WebSocket server listens on."""
        if self._server is None:
            raise TactileError("this FoxgloveView has no WebSocket server (serve=False)")
        return int(self._server.port)

    @property
    def collections(self) -> list[str]:
        return list(self._hands)

    def attach(self, tracker: Any) -> None:
        """Observe `tracker` (its collection must be one of this view's)."""
        self._hand(tracker.collection_id)
        tracker.add_observer(self)

    # -- inputs -------------------------------------------------------------------------------
    def set_segment_poses(self, collection_id: str, segment_poses: object | None) -> None:
        """Current poses `(J, 7)` of the layout's segments in the wrist frame (x y z [m], qx qy qz
        qw), used for the taxel positions of the next scene; None: the bind pose."""
        hand = self._hand(collection_id)
        if segment_poses is None:
            hand.segment_poses = None
        else:
            poses = np.asarray(segment_poses, dtype=np.float64)
            if hand.metadata is not None and poses.shape != hand.metadata.segment_bind_poses.shape:
                raise DataLayoutError(f"{collection_id}: segment poses must have shape "
                                      f"{hand.metadata.segment_bind_poses.shape}, got {poses.shape}")
            if poses.ndim != 2 or poses.shape[1] != 7 or not np.isfinite(poses).all():
                raise DataLayoutError(f"{collection_id}: segment poses must be finite (J, 7), got {poses.shape}")
            hand.segment_poses = poses
        hand.joint_poses = None
        hand.positions = None

    def set_hand_pose(self, collection_id: str, joint_poses: object | None,
                      objects: ObjectGeoms | None = None) -> None:
        """The hand's (26, 7) OpenXR joint poses in any base space (None: the bind pose) and the
        objects in the same space, for the next scene: the taxels skinned at the layout's joints,
        the bones drawn, `world → wrist` the wrist's pose."""
        hand = self._hand(collection_id)
        hand.objects = objects
        if joint_poses is None:
            hand.joint_poses = hand.segment_poses = None
        else:
            joints = np.asarray(joint_poses, dtype=np.float64)
            if joints.shape != (26, 7) or not np.isfinite(joints).all():
                raise DataLayoutError(f"{collection_id}: hand joint poses must be finite (26, 7), got {joints.shape}")
            hand.joint_poses = joints
            hand.segment_poses = None if hand.builder is None else hand.builder.segment_poses(joints)
        hand.positions = None

    def set_objects(self, collection_id: str, objects: ObjectGeoms | None) -> None:
        """The objects of the next scene (None: none), in the hand joint poses' base space or in
        the wrist frame (`ObjectGeoms.frame`); the hand's pose stays as set."""
        self._hand(collection_id).objects = objects

    def on_metadata(self, collection_id: str, message: Any, record: MetadataRecord) -> None:
        """Tracker observer: a confirmed layout. Publishes the record and the static scene parts."""
        hand = self._hand(collection_id)
        hand.meta.log(bytes(message.payload), log_time=record.timestamp.available_time_local_common_clock)
        hand.metadata_payload = bytes(message.payload)
        if hand.metadata != record.metadata:
            hand.metadata = record.metadata
            hand.layout = pad_layout(record.metadata)
            hand.positions = None
            hand.builder = SceneBuilder(record.metadata, collection_id, index=hand.index,
                                        force_range_n=self.force_range_n, arrow_m_per_n=self.arrow_m_per_n)
            if hand.joint_poses is not None:
                hand.segment_poses = hand.builder.segment_poses(hand.joint_poses)
            if hand.segment_poses is not None and hand.segment_poses.shape != record.metadata.segment_bind_poses.shape:
                hand.segment_poses = None
        self._publish_transforms(hand, record.timestamp.sample_time_local_common_clock)

    def on_data(self, collection_id: str, message: Any, frame: Any) -> None:
        """Tracker observer: one confirmed frame. Publishes the record, the resultants and
        (at most `scene_rate_hz` per second of sample time) the scene."""
        hand = self._hand(collection_id)
        ts = frame.timestamp
        hand.data.log(bytes(message.payload), log_time=ts.available_time_local_common_clock)
        # (a tracker confirms metadata before the first frame: the error cannot happen through one)
        _, layout, _ = hand.confirmed("force frame")
        t = ts.sample_time_local_common_clock
        resultants = pad_resultants(layout, frame.forces)  # (5, 3) [N, pad frame]
        hand.resultants.log(self.resultants_message(resultants, t), log_time=t)
        self._publish_transforms(hand, t)  # every frame: a viewer's transform tree never trails
        due = (self._scene_period_ns is None or hand.last_scene_ns is None
               or t - hand.last_scene_ns >= self._scene_period_ns or t < hand.last_scene_ns)
        if due:
            hand.last_scene_ns = t
            hand.scene.log(self.scene_update(hand, frame.forces, t), log_time=t)
        hand.frames += 1
        now = time.monotonic()
        if now - self._last_metadata_republish >= 1.0:  # late WebSocket clients learn the layout
            self._last_metadata_republish = now
            for h in self._hands.values():
                if h.metadata_payload:
                    h.meta.log(h.metadata_payload, log_time=t)

    def publish_images(self, collection_id: str, images: np.ndarray, sample_time_ns: int) -> None:
        """Force images `(5, 3, H, W)` [N per image cell, pad frame, pads thumb … pinky] as one
        rgb8 mosaic (`foxglove_scene.image_mosaic`: rows Fx, Fy, Fz; columns the pads; |value| on
        the fixed range 0…`image_range_n`, with its colour scale) and its labels on
        `C/view/image_labels`."""
        hand = self._hand(collection_id)
        images = np.asarray(images, dtype=np.float64)
        if images.ndim != 4 or images.shape[:2] != (NUM_PADS, 3):
            raise DataLayoutError(f"{collection_id}: images must have shape (5, 3, H, W), got {images.shape}")
        mosaic = image_mosaic(images, self.image_range_n)
        height, width, _ = mosaic.shape
        msg = self._fg.messages.RawImage(timestamp=_stamp(self._fg, sample_time_ns), frame_id=hand.frame_wrist,
                                         width=width, height=height, encoding="rgb8", step=3 * width,
                                         data=mosaic.tobytes())
        hand.images.log(msg, log_time=sample_time_ns)
        hand.image_labels.log(json.dumps(image_labels(images.shape[2:], self.image_range_n, sample_time_ns)).encode(),
                              log_time=sample_time_ns)

    # -- message builders (pure: testable without a server) ---------------------------------------
    def resultants_message(self, resultants: np.ndarray, sample_time_ns: int) -> dict:
        """The JSON message of `C/view/resultants` for pad resultants `(5, 3)` [N, pad frame]."""
        return resultants_message(resultants, sample_time_ns)

    def taxel_positions(self, collection_id: str) -> np.ndarray:
        """Current taxel positions `(N, 3)` [m, wrist frame]: LBS at the set segment poses, or bind."""
        return self._positions(self._hand(collection_id))

    def _positions(self, hand: _Hand) -> np.ndarray:
        if hand.positions is None:
            md, _, _ = hand.confirmed("taxel positions asked")
            poses = md.segment_bind_poses if hand.segment_poses is None else hand.segment_poses
            hand.positions = skin_taxel_positions(md, poses)
        return hand.positions

    def _segment_poses(self, hand: _Hand) -> np.ndarray:
        if hand.segment_poses is not None:
            return hand.segment_poses
        md, _, _ = hand.confirmed("segment poses asked")
        return md.segment_bind_poses.astype(np.float64)

    def scene_update(self, hand: _Hand, forces: np.ndarray, sample_time_ns: int) -> bytes:
        """The complete SceneUpdate (JSON bytes, `foxglove_scene.SceneBuilder`) of one frame at the
        hand's current pose: every taxel, the pad arrows and names, the bones, the objects, the legend."""
        _, _, builder = hand.confirmed("scene asked")
        return builder.scene(forces, sample_time_ns, joint_poses=hand.joint_poses,
                             segment_poses=self._segment_poses(hand), objects=hand.objects)

    def _publish_transforms(self, hand: _Hand, t: int) -> None:
        """`world → wrist → segments` at the hand's current pose (JSON bytes)."""
        _, _, builder = hand.confirmed("transforms asked")
        hand.tf.log(builder.transforms(t, joint_poses=hand.joint_poses, segment_poses=self._segment_poses(hand)),
                    log_time=t)

    def _hand(self, collection_id: str) -> _Hand:
        try:
            return self._hands[collection_id]
        except KeyError:
            raise ValueError(f"collection {collection_id!r} is not shown by this view "
                             f"(its collections: {', '.join(self._hands)})") from None

    def close(self) -> None:
        """Stop the server and finish the MCAP file. Idempotent."""
        server, self._server = self._server, None
        mcap, self._mcap = self._mcap, None
        if server is not None:
            server.close()
        if mcap is not None:
            mcap.close()

    def __enter__(self) -> FoxgloveView:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class TrackedView:
    """A `FoxgloveView` fed by its own `TactileTracker`s on `transport` — for a command that
    produces or replays in this process (`sim`, `hw`, `replay`) and wants `--foxglove`. Create it
    before the producer publishes its first metadata; call `poll()` once per produced frame."""

    def __init__(self, transport: Any, collections: Sequence[str], **view_options: Any):
        from ..streams.tracker import TactileTracker

        self.view = FoxgloveView(collections, **view_options)
        self.trackers = []
        try:
            for cid in self.view.collections:
                tracker = TactileTracker(cid, transport)
                self.view.attach(tracker)
                self.trackers.append(tracker)
        except BaseException:
            self.close()
            raise

    def poll(self) -> int:
        """Hand every frame that arrived to the view (never blocks); returns the frames delivered."""
        return sum(tracker.update() for tracker in self.trackers)

    def publish_images(self, collection_id: str, images: np.ndarray) -> None:
        """Force images `(5, 3, H, W)` at the sample time of the collection's latest frame (none
        before the first frame)."""
        tracker = next((t for t in self.trackers if t.collection_id == collection_id), None)
        if tracker is None:
            raise ValueError(f"collection {collection_id!r} is not shown by this view")
        frame = tracker.get_data()
        if frame is not None:
            self.view.publish_images(collection_id, images, frame.timestamp.sample_time_local_common_clock)

    def hold(self, stream: Any = None) -> None:
        """Keep serving (the last frame stays on view) until Ctrl-C, which propagates."""
        if stream is not None:
            print(f"foxglove: the last frame stays on view at ws://…:{self.view.port} until Ctrl-C", file=stream)
        while True:
            self.poll()
            time.sleep(0.05)

    def close(self) -> None:
        for tracker in self.trackers:
            tracker.close()
        self.view.close()


__all__ = ["FoxgloveView", "TrackedView", "force_colours", "taxel_diameters", "segment_poses_from_joints",
           "RESULTANTS_SCHEMA",
           "DEFAULT_FORCE_RANGE_N"]
