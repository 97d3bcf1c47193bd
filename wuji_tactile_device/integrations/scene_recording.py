"""The 3-D view's topics written into a producer's own recording (`sim/hw --record`, on by default).

`ViewRecording` is a `FrameSink` of the run loop: for each published frame it writes, into the
same `McapRecorder` and with the tactile record's log time,

- `C/view/tf` (`foxglove.FrameTransforms`): every frame;
- `C/view/scene` (`foxglove.SceneUpdate`): the complete scene (`foxglove_scene.SceneBuilder`),
  at most `scene_rate_hz` per second of sample time (each message stands alone: a seek shows the
  whole picture);
- `C/view/resultants` (`wuji_tactile.PadResultants`): the five pad resultants [N, pad frame], every frame;
- `C/view/images` (`foxglove.RawImage`): the frame's force images when the producer computes
  them (`sim --images`), at most `images_rate_hz` per second of sample time, with
  `C/view/image_labels` (`foxglove.ImageAnnotations`: row, column and colour-scale labels).

All JSON with JSON Schemas: the base install writes them (no Foxglove SDK), and Lichtblick and
Foxglove open the file alone with the hand, the lit taxels, the arrows and the objects. The hand
pose comes from the frame (`Frame.extras[EXTRA_HAND_JOINT_POSES]`, the objects from
`EXTRA_OBJECT_GEOMS`), else from `hands` (a recording's hand channels, by sample time), else the
bind pose.
"""
from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..contract.naming import validate_collection_id
from ..contract.pads import pad_resultants
from ..producers.base import (EXTRA_FORCE_IMAGES, EXTRA_HAND_JOINT_POSES, EXTRA_HAND_POSES, EXTRA_OBJECT_GEOMS, Frame,
                              FrameSink)
from .foxglove_scene import (DEFAULT_FORCE_RANGE_N, FRAME_TRANSFORMS_SCHEMA, MESSAGE_ENCODING, PAD_FRAME_TEXT,
                             RESULTANTS_SCHEMA, SCENE_UPDATE_SCHEMA, SCHEMA_ENCODING, SceneBuilder, object_geoms,
                             IMAGE_LABELS_SCHEMA, image_labels, image_mosaic, resultants_message)

RAW_IMAGE_SCHEMA = {
    "title": "foxglove.RawImage",
    "description": "Pad force images: rows Fx, Fy, Fz (pad frame), columns thumb … pinky; "
                   "|value| on a fixed range, viridis",
    "type": "object",
    "properties": {
        "timestamp": {"type": "object", "properties": {"sec": {"type": "integer"}, "nsec": {"type": "integer"}}},
        "frame_id": {"type": "string"}, "width": {"type": "integer"}, "height": {"type": "integer"},
        "encoding": {"type": "string"}, "step": {"type": "integer"},
        "data": {"type": "string", "contentEncoding": "base64"},
    },
}

@dataclass
class ViewCounters:
    """Messages `ViewRecording` wrote per topic (each topic's next sequence number)."""

    scene: int = 0  # complete scenes (<collection>/view/scene)
    tf: int = 0  # transform sets (<collection>/view/tf)
    resultants: int = 0  # pad resultants (<collection>/view/resultants)
    images: int = 0  # force images (<collection>/view/images)
    image_labels: int = 0  # image annotations (<collection>/view/image_labels)


class ViewRecording(FrameSink):
    """Writes the view's topics of `producer`'s collection into `recorder` (see the module doc).
    `index`: the collection's place among those recorded (display offset). `hands`: a
    `RecordedHands` for frames without hand poses (a replay)."""

    #: The side data it draws (the run function asks the producer for what it provides of these).
    extras_wanted = frozenset({EXTRA_HAND_JOINT_POSES, EXTRA_HAND_POSES, EXTRA_OBJECT_GEOMS})

    def __init__(self, recorder: Any, producer: Any, *, index: int = 0, hands: Any = None,
                 force_range_n: float = DEFAULT_FORCE_RANGE_N, scene_rate_hz: float = 30.0,
                 images_rate_hz: float = 30.0, image_range_n: float = 0.01):
        validate_collection_id(producer.collection_id)
        self._recorder, self._producer, self._index, self._hands = recorder, producer, index, hands
        self.collection_id = producer.collection_id
        self.force_range_n, self.image_range_n = float(force_range_n), float(image_range_n)
        self._scene_period_ns = int(1e9 / scene_rate_hz)
        self._images_period_ns = int(1e9 / images_rate_hz)
        self._builder: SceneBuilder | None = None
        self._channels: dict[str, int] = {}
        self._last_scene: int | None = None
        self._last_images: int | None = None
        self.counts = ViewCounters()

    def _channel(self, leaf: str, schema: dict, metadata: dict[str, str]) -> int:
        if leaf not in self._channels:
            self._channels[leaf] = self._recorder.add_encoded_channel(
                f"{self.collection_id}/view/{leaf}", schema["title"], SCHEMA_ENCODING,
                json.dumps(schema, separators=(",", ":")).encode(), MESSAGE_ENCODING, metadata=metadata)
        return self._channels[leaf]

    def _write(self, leaf: str, schema: dict, payload: bytes, log_ns: int, metadata: dict[str, str]) -> None:
        self._recorder.write_flatbuffer(self._channel(leaf, schema, metadata), payload, log_time_ns=log_ns,
                                        publish_time_ns=log_ns, sequence=getattr(self.counts, leaf))
        setattr(self.counts, leaf, getattr(self.counts, leaf) + 1)

    def on_frame(self, frame: Frame, sequence: int, timestamp: Any) -> None:
        if self._builder is None or self._builder.metadata is not self._producer.metadata:
            self._builder = SceneBuilder(self._producer.metadata, self.collection_id, index=self._index,
                                         force_range_n=self.force_range_n)
        b = self._builder
        extras = frame.extras or {}
        joints = extras.get(EXTRA_HAND_JOINT_POSES)
        if joints is None and extras.get(EXTRA_HAND_POSES) is not None:  # a device's hand poses (hardware)
            poses = extras[EXTRA_HAND_POSES].poses
            joints = next(iter(poses.values())) if len(poses) == 1 else None
        if joints is None and self._hands is not None:
            from .foxglove_live import side_of_collection

            side = side_of_collection(self.collection_id, self._hands.hand_side)
            joints = None if side is None else self._hands.lookup(side, frame.sample_time_ns)
        if joints is not None:
            joints = np.asarray(joints, dtype=np.float64)
            if joints.shape != (26, 7) or not np.isfinite(joints).all():
                joints = None  # an untracked or partial hand: the bind pose (the metadata says so)
        log_ns = int(timestamp[0])  # the tactile record's log time (its available time)
        t = frame.sample_time_ns
        seg = b.segment_poses(joints)
        self._write("tf", FRAME_TRANSFORMS_SCHEMA, b.transforms(log_ns, segment_poses=seg, joint_poses=joints), log_ns,
                    {"frames": f"world -> {b.frame} -> {self.collection_id}/<segment>"})
        forces = np.asarray(frame.forces, dtype=np.float64)
        self._write("resultants", RESULTANTS_SCHEMA,
                    json.dumps(resultants_message(pad_resultants(b.layout, forces), log_ns),
                               separators=(",", ":"), allow_nan=False).encode(), log_ns,
                    {"frame": PAD_FRAME_TEXT, "unit": "N"})
        if self._last_scene is None or t - self._last_scene >= self._scene_period_ns or t < self._last_scene:
            self._last_scene = t
            self._write("scene", SCENE_UPDATE_SCHEMA,
                        b.scene(forces, log_ns, joint_poses=joints, segment_poses=seg,
                                objects=object_geoms(extras.get(EXTRA_OBJECT_GEOMS))), log_ns,
                        {"frame": b.frame, "force_range_N": repr(self.force_range_n),
                         "convention": "force on the hand; taxel colour/size = |f| on a fixed range; "
                                       "every message is the complete scene"})
        images = extras.get(EXTRA_FORCE_IMAGES)
        if images is not None and (self._last_images is None or t - self._last_images >= self._images_period_ns
                                   or t < self._last_images):
            self._last_images = t
            mosaic = image_mosaic(images, self.image_range_n)
            h, w, _ = mosaic.shape
            msg = {"timestamp": {"sec": log_ns // 1_000_000_000, "nsec": log_ns % 1_000_000_000},
                   "frame_id": b.frame, "width": w, "height": h, "encoding": "rgb8", "step": 3 * w,
                   "data": base64.b64encode(mosaic.tobytes()).decode()}
            self._write("images", RAW_IMAGE_SCHEMA, json.dumps(msg, separators=(",", ":")).encode(), log_ns,
                        {"layout": "rows Fx, Fy, Fz (pad frame); columns thumb, index, middle, ring, pinky",
                         "range": f"|value| 0…{self.image_range_n:g} N per cell, viridis, grey = 0 N"})
            labels = image_labels(np.asarray(images).shape[2:], self.image_range_n, log_ns)
            self._write("image_labels", IMAGE_LABELS_SCHEMA, json.dumps(labels, separators=(",", ":")).encode(),
                        log_ns, {"for": f"{self.collection_id}/view/images"})


__all__ = ["ViewRecording", "RESULTANTS_SCHEMA", "RAW_IMAGE_SCHEMA"]
