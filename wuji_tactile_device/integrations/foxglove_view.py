"""FoxgloveView: a live 3-D view of tactile collections in Foxglove (foxglove-sdk, WebSocket server).

Attach it to `TactileTracker`s as an observer (like `McapRecorder.attach`); for each collection
`C` (e.g. `tactile/right`) it publishes:

- `C`, `C/metadata`: the contract's records unchanged (FlatBuffers, the `.bfbs` schemas a
  recording stores), so anything that reads a recording reads the live view too;
- `C/view/scene` (`foxglove.SceneUpdate`): every taxel as a sphere at its current position in
  the wrist frame, coloured and sized by |f| on a fixed range; the five pad resultants as arrows;
  the hand's segments; a legend stating the ranges;
- `C/view/tf` (`foxglove.FrameTransforms`): `world → C/wrist → C/<segment>`;
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

import math
import time
from typing import Any, Sequence

import numpy as np

from ..contract import bfbs
from ..contract.geometry import quat_rotate, skin_taxel_positions
from ..contract.metadata import MetadataRecord, TactileMetadata
from ..contract.naming import (DATA_RECORD_SCHEMA_NAME, METADATA_RECORD_SCHEMA_NAME, RECORD_ROOT, Stream, stream_key,
                               validate_collection_id)
from ..contract.pads import NUM_PADS, pad_layout, pad_resultants
from ..errors import DataLayoutError, TactileError


def _foxglove():
    try:
        import foxglove
    except ImportError as exc:
        raise TactileError("the live view needs the Foxglove SDK: pip install 'wuji-tactile-device[view]'") from exc
    return foxglove


from .foxglove_scene import (COLLECTION_SPACING_M, DEFAULT_ARROW_M_PER_N, DEFAULT_FORCE_RANGE_N,  # noqa: F401
                             PAD_FRAME_TEXT, RESULTANTS_SCHEMA, TAXEL_DIAMETER_M, UNLOADED_RGBA, force_colours,
                             resultants_message, segment_poses_from_joints, taxel_diameters)
from .foxglove_scene import quat_x_to as _quat_x_to


def _stamp(foxglove: Any, ns: int):
    return foxglove.messages.Timestamp(sec=int(ns // 1_000_000_000), nsec=int(ns % 1_000_000_000))


class _Hand:
    """Per-collection state: channels, layout, current segment poses."""

    def __init__(self, view: "FoxgloveView", collection_id: str, index: int):
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
        self.scene = fg.channels.SceneUpdateChannel(f"{base}/scene", context=ctx, metadata={
            "frame": self.frame_wrist, "force_range_N": repr(view.force_range_n),
            "convention": "force on the hand; taxel colour/size = |f| on a fixed range"})
        self.tf = fg.channels.FrameTransformsChannel(f"{base}/tf", context=ctx)
        self.resultants = fg.Channel(f"{base}/resultants", schema=RESULTANTS_SCHEMA, context=ctx,
                                     metadata={"frame": PAD_FRAME_TEXT, "unit": "N"})
        self.images = fg.channels.RawImageChannel(f"{base}/images", context=ctx, metadata={
            "layout": "rows Fx, Fy, Fz (pad frame); columns thumb … pinky; one pixel = one image cell",
            "encoding": "rgb8, |value| on the fixed image range, viridis"})
        self.metadata: TactileMetadata | None = None
        self.metadata_payload = b""
        self.layout = None
        self.segment_poses: np.ndarray | None = None
        self.positions: np.ndarray | None = None  # (N, 3) current taxel positions [m, wrist frame]
        self.last_scene_ns: int | None = None
        self.frames = 0


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
        self._mcap = None
        try:
            if mcap_path is not None:
                self._mcap = self._fg.open_mcap(mcap_path, allow_overwrite=overwrite, context=self.context,
                                                channel_filter=lambda ch: ch.topic not in self._contract_topics)
            if serve:
                self._server = self._fg.start_server(name=name, host=host, port=port, context=self.context)
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
        hand.positions = None

    def on_metadata(self, collection_id: str, message: Any, record: MetadataRecord) -> None:
        """Tracker observer: a confirmed layout. Publishes the record and the static scene parts."""
        hand = self._hand(collection_id)
        hand.meta.log(bytes(message.payload), log_time=record.timestamp.available_time_local_common_clock)
        hand.metadata_payload = bytes(message.payload)
        if hand.metadata != record.metadata:
            hand.metadata = record.metadata
            hand.layout = pad_layout(record.metadata)
            hand.positions = None
            if hand.segment_poses is not None and hand.segment_poses.shape != record.metadata.segment_bind_poses.shape:
                hand.segment_poses = None
        self._publish_static(hand, record.timestamp.sample_time_local_common_clock)

    def on_data(self, collection_id: str, message: Any, frame: Any) -> None:
        """Tracker observer: one confirmed frame. Publishes the record, the resultants and
        (at most `scene_rate_hz` per second of sample time) the scene."""
        hand = self._hand(collection_id)
        ts = frame.timestamp
        hand.data.log(bytes(message.payload), log_time=ts.available_time_local_common_clock)
        if hand.metadata is None:  # cannot happen through a tracker: it confirms metadata first
            raise TactileError(f"{collection_id}: force frame before any metadata reached the view")
        t = ts.sample_time_local_common_clock
        resultants = pad_resultants(hand.layout, frame.forces)  # (5, 3) [N, pad frame]
        hand.resultants.log(self.resultants_message(resultants, t), log_time=t)
        due = (self._scene_period_ns is None or hand.last_scene_ns is None
               or t - hand.last_scene_ns >= self._scene_period_ns or t < hand.last_scene_ns)
        if due:
            hand.last_scene_ns = t
            hand.scene.log(self.scene_update(hand, frame.forces, resultants, t), log_time=t)
        hand.frames += 1
        now = time.monotonic()
        if now - self._last_metadata_republish >= 1.0:  # late WebSocket clients learn the layout
            self._last_metadata_republish = now
            for h in self._hands.values():
                if h.metadata_payload:
                    h.meta.log(h.metadata_payload, log_time=t)
                    self._publish_static(h, t)

    def publish_images(self, collection_id: str, images: np.ndarray, sample_time_ns: int) -> None:
        """Force images `(5, 3, H, W)` [N per image cell, pad frame, pads thumb … pinky] as one
        rgb8 mosaic (rows Fx, Fy, Fz; columns the pads; 1-cell grey gaps), |value| coloured on the
        fixed range 0…`image_range_n`."""
        hand = self._hand(collection_id)
        images = np.asarray(images, dtype=np.float64)
        if images.ndim != 4 or images.shape[:2] != (NUM_PADS, 3):
            raise DataLayoutError(f"{collection_id}: images must have shape (5, 3, H, W), got {images.shape}")
        _, _, h, w = images.shape
        gap = 1
        height, width = 3 * h + 2 * gap, NUM_PADS * w + (NUM_PADS - 1) * gap
        mosaic = np.full((height, width, 3), 128, dtype=np.uint8)
        rgb = (force_colours(np.abs(images).ravel(), self.image_range_n)[:, :3] * 255).round().astype(np.uint8)
        rgb = rgb.reshape(NUM_PADS, 3, h, w, 3)
        for c in range(3):  # 3 × 5 tiles, not per pixel
            for p in range(NUM_PADS):
                r0, c0 = c * (h + gap), p * (w + gap)
                mosaic[r0:r0 + h, c0:c0 + w] = rgb[p, c]
        msg = self._fg.messages.RawImage(timestamp=_stamp(self._fg, sample_time_ns), frame_id=hand.frame_wrist,
                                         width=width, height=height, encoding="rgb8", step=3 * width,
                                         data=mosaic.tobytes())
        hand.images.log(msg, log_time=sample_time_ns)

    # -- message builders (pure: testable without a server) ---------------------------------------
    def resultants_message(self, resultants: np.ndarray, sample_time_ns: int) -> dict:
        """The JSON message of `C/view/resultants` for pad resultants `(5, 3)` [N, pad frame]."""
        return resultants_message(resultants, sample_time_ns)

    def taxel_positions(self, collection_id: str) -> np.ndarray:
        """Current taxel positions `(N, 3)` [m, wrist frame]: LBS at the set segment poses, or bind."""
        return self._positions(self._hand(collection_id))

    def _positions(self, hand: _Hand) -> np.ndarray:
        if hand.positions is None:
            md = hand.metadata
            poses = md.segment_bind_poses if hand.segment_poses is None else hand.segment_poses
            hand.positions = skin_taxel_positions(md, poses)
        return hand.positions

    def _segment_poses(self, hand: _Hand) -> np.ndarray:
        return hand.metadata.segment_bind_poses.astype(np.float64) if hand.segment_poses is None else hand.segment_poses

    def scene_update(self, hand: _Hand, forces: np.ndarray, resultants: np.ndarray, sample_time_ns: int):
        """SceneUpdate: entity `taxels` (one sphere per taxel, in metadata order) and `pads`
        (one arrow per loaded pad, ending on the pad's taxel centroid, pointing along the force on the hand)."""
        fg = self._fg
        S = fg.messages
        stamp = _stamp(fg, sample_time_ns)
        pos = self._positions(hand)
        magnitude = np.linalg.norm(np.asarray(forces, dtype=np.float64), axis=1)
        colours = force_colours(magnitude, self.force_range_n).tolist()
        sizes = taxel_diameters(magnitude, self.force_range_n).tolist()
        spheres = [S.SpherePrimitive(pose=S.Pose(position=S.Vector3(x=p[0], y=p[1], z=p[2])),
                                     size=S.Vector3(x=d, y=d, z=d), color=S.Color(r=c[0], g=c[1], b=c[2], a=c[3]))
                   for p, d, c in zip(pos.tolist(), sizes, colours)]
        taxels = S.SceneEntity(timestamp=stamp, frame_id=hand.frame_wrist, id="taxels", spheres=spheres,
                               metadata=[S.KeyValuePair(key="colour_and_size", value=f"|f| 0…{self.force_range_n:g} N")])
        # Pad resultants into the wrist frame at the current pose: R_segment_now · F_pad.
        seg_now = self._segment_poses(hand)
        pads = [p for p in range(NUM_PADS) if hand.layout.pad_segment[p] >= 0]
        arrows = []
        if pads:
            idx = np.array(pads)
            f_wrist = quat_rotate(seg_now[hand.layout.pad_segment[idx], 3:], resultants[idx])
            norm = np.linalg.norm(f_wrist, axis=1)
            centroid = (hand.layout.one_hot[idx] @ pos) / hand.layout.one_hot[idx].sum(axis=1, keepdims=True)
            loaded = norm > 1e-9
            if loaded.any():
                d = f_wrist[loaded] / norm[loaded, None]
                length = norm[loaded] * self.arrow_m_per_n
                start = centroid[loaded] - d * length[:, None]  # the arrow ends on the pad: it pushes
                q = _quat_x_to(d)
                head = np.minimum(0.3 * length, 0.006)
                for s, qq, L, hl in zip(start.tolist(), q.tolist(), length.tolist(), head.tolist()):
                    arrows.append(S.ArrowPrimitive(
                        pose=S.Pose(position=S.Vector3(x=s[0], y=s[1], z=s[2]),
                                    orientation=S.Quaternion(x=qq[0], y=qq[1], z=qq[2], w=qq[3])),
                        shaft_length=L - hl, shaft_diameter=0.0012, head_length=hl, head_diameter=0.003,
                        color=S.Color(r=0.85, g=0.1, b=0.1, a=1.0)))
        pad_entity = S.SceneEntity(timestamp=stamp, frame_id=hand.frame_wrist, id="pad_resultants", arrows=arrows,
                                   metadata=[S.KeyValuePair(key="arrow_length", value=f"{self.arrow_m_per_n * 1e3:g} mm per N")])
        return S.SceneUpdate(entities=[taxels, pad_entity])

    def _publish_static(self, hand: _Hand, t: int) -> None:
        """Transforms `world → wrist → segments`, the segment glyphs and the legend."""
        fg = self._fg
        S = fg.messages
        stamp = _stamp(fg, t)
        seg = self._segment_poses(hand)
        names = [getattr(j, "name", str(j)) for j in hand.metadata.joint_ids]
        o = hand.world_offset
        transforms = [S.FrameTransform(timestamp=stamp, parent_frame_id="world", child_frame_id=hand.frame_wrist,
                                       translation=S.Vector3(x=o[0], y=o[1], z=o[2]),
                                       rotation=S.Quaternion(x=0, y=0, z=0, w=1))]
        for name, p in zip(names, seg.tolist()):
            transforms.append(S.FrameTransform(
                timestamp=stamp, parent_frame_id=hand.frame_wrist, child_frame_id=f"{hand.collection_id}/{name}",
                translation=S.Vector3(x=p[0], y=p[1], z=p[2]), rotation=S.Quaternion(x=p[3], y=p[4], z=p[5], w=p[6])))
        hand.tf.log(S.FrameTransforms(transforms=transforms), log_time=t)
        # Segments: a line from the wrist to each segment origin, and along the segment to its
        # farthest taxel (the part of the bone that carries taxels).
        pos = self._positions(hand)
        main = hand.metadata.segment_indices[np.arange(hand.metadata.num_taxels),
                                             np.argmax(hand.metadata.segment_weights, axis=1)]
        grey = S.Color(r=0.45, g=0.45, b=0.5, a=1.0)
        points = []
        for j in range(len(seg)):  # segments, not taxels
            origin = seg[j, :3]
            mine = pos[main == j]
            points += [S.Point3(x=0.0, y=0.0, z=0.0), S.Point3(x=origin[0], y=origin[1], z=origin[2])]
            if len(mine):
                far = mine[np.argmax(np.linalg.norm(mine - origin, axis=1))]
                points += [S.Point3(x=origin[0], y=origin[1], z=origin[2]), S.Point3(x=far[0], y=far[1], z=far[2])]
        line = S.LinePrimitive(type=S.LinePrimitiveLineType.LineList, thickness=2.0, scale_invariant=True,
                               points=points, color=grey)
        top = pos[:, 2].max() + 0.03 if len(pos) else 0.03
        bar_cubes, n_bar = [], 10
        for k in range(n_bar):
            c = force_colours(np.array([(k + 0.5) / n_bar * self.force_range_n]), self.force_range_n)[0]
            bar_cubes.append(S.CubePrimitive(pose=S.Pose(position=S.Vector3(x=-0.05 + k * 0.01, y=0.0, z=top)),
                                             size=S.Vector3(x=0.01, y=0.004, z=0.006),
                                             color=S.Color(r=c[0], g=c[1], b=c[2], a=1.0)))
        text = (f"{hand.collection_id}: taxel |f| colour and size, fixed 0 … {self.force_range_n:g} N "
                f"(grey = 0 N); red arrows: pad resultant, force on the hand, {self.arrow_m_per_n * 1e3:g} mm/N")
        legend = [S.TextPrimitive(pose=S.Pose(position=S.Vector3(x=-0.05, y=0.0, z=top + 0.012)), billboard=True,
                                  font_size=12.0, scale_invariant=True, text=text, color=S.Color(r=1, g=1, b=1, a=1)),
                  S.TextPrimitive(pose=S.Pose(position=S.Vector3(x=-0.055, y=0.0, z=top - 0.008)), billboard=True,
                                  font_size=11.0, scale_invariant=True, text="0 N", color=S.Color(r=1, g=1, b=1, a=1)),
                  S.TextPrimitive(pose=S.Pose(position=S.Vector3(x=0.045, y=0.0, z=top - 0.008)), billboard=True,
                                  font_size=11.0, scale_invariant=True, text=f"{self.force_range_n:g} N",
                                  color=S.Color(r=1, g=1, b=1, a=1))]
        hand.scene.log(S.SceneUpdate(entities=[
            S.SceneEntity(timestamp=stamp, frame_id=hand.frame_wrist, id="segments", lines=[line]),
            S.SceneEntity(timestamp=stamp, frame_id=hand.frame_wrist, id="legend", cubes=bar_cubes, texts=legend),
        ]), log_time=t)

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
            server.stop()
        if mcap is not None:
            mcap.close()

    def __enter__(self) -> "FoxgloveView":
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


__all__ = ["FoxgloveView", "TrackedView", "force_colours", "taxel_diameters", "segment_poses_from_joints", "RESULTANTS_SCHEMA",
           "DEFAULT_FORCE_RANGE_N"]
