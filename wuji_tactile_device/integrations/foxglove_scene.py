"""The 3-D scene of one tactile collection as Foxglove messages, JSON-encoded (no Foxglove SDK needed).

`SceneBuilder` turns one frame — the taxel forces, and when the producer knows them the hand's 26
OpenXR joint poses and the pressed objects — into:

- a `foxglove.SceneUpdate` that is **complete on its own**: every taxel (one entity each, with its
  index, pad and |f| as metadata, so hovering a taxel names it), each loaded pad's resultant arrow
  and name, the hand's bones, the objects, the legend. A viewer that seeks or scrubs and shows
  only the latest scene message shows the same picture as during play;
- a `foxglove.FrameTransforms` with `world → C/wrist` (the wrist's pose in the producer's base
  space, plus a display offset per collection) and `C/wrist → C/<segment>`, sent with every frame.

Both are JSON with a JSON Schema (MCAP/WebSocket encodings `json` / `jsonschema`), which Lichtblick
and Foxglove decode natively, so a recording carries the scene with the package's base install.
Everything is drawn in the wrist frame `C/wrist` (OpenXR: +Z along the forearm, fingers toward −Z,
+Y out of the back of the hand); entities are frame-locked.

Conventions: taxel colour and size = |f| on a fixed range (viridis, grey = exactly 0 N); arrows =
a pad's resultant (force ON the hand), ending on the pad's taxel centroid.
"""
from __future__ import annotations

import json
from typing import Any
from collections.abc import Sequence

import numpy as np

from ..contract.geometry import pose_apply, pose_compose, pose_invert, quat_rotate, rebase_to_root, \
    skin_taxel_positions
from ..contract.joints import HandJoint
from ..contract.metadata import TactileMetadata
from ..contract.naming import validate_collection_id
from ..contract.pads import FINGERS, NUM_PADS, pad_layout, pad_resultants
from ..errors import DataLayoutError

#: Default fixed |f| range of the taxel colours and sizes [N]; larger forces saturate.
DEFAULT_FORCE_RANGE_N = 0.25
#: Sphere diameters at |f| = 0 and at the top of the range [m].
TAXEL_DIAMETER_M = (0.0015, 0.004)
#: Default arrow length per newton of pad resultant [m/N].
DEFAULT_ARROW_M_PER_N = 0.04
#: Display offset between the wrists of several collections in the `world` frame [m, along x].
COLLECTION_SPACING_M = 0.25
#: Colour of a taxel with exactly zero force (RGBA).
UNLOADED_RGBA = (0.72, 0.72, 0.72, 1.0)
#: Object primitives a producer can hand over (`ObjectGeoms.kinds`).
OBJECT_KINDS = ("box", "sphere", "cylinder", "capsule", "ellipsoid")

# Viridis at 11 evenly spaced stops (perceptually uniform, readable in grey, colour-blind safe).
_STOPS = np.array([
    [0.267, 0.005, 0.329], [0.283, 0.141, 0.458], [0.254, 0.265, 0.530], [0.207, 0.372, 0.553],
    [0.164, 0.471, 0.558], [0.128, 0.567, 0.551], [0.135, 0.659, 0.518], [0.267, 0.749, 0.441],
    [0.478, 0.821, 0.318], [0.741, 0.873, 0.150], [0.993, 0.906, 0.144]])

#: The hand's bones as pairs of OpenXR joints: each finger's chain from the wrist to the tip, and
#: the knuckle line across the palm.
BONES = tuple(
    [(int(HandJoint.WRIST), 2), (2, 3), (3, 4), (4, 5)]
    + [pair for base in (6, 11, 16, 21)
       for pair in ((int(HandJoint.WRIST), base), (base, base + 1), (base + 1, base + 2), (base + 2, base + 3),
                    (base + 3, base + 4))]
    + [(3, 7), (7, 12), (12, 17), (17, 22)])


def force_colours(magnitude: np.ndarray, force_range_n: float) -> np.ndarray:
    """RGBA `(N, 4)` of |f| values `(N,)` [N] on the fixed range 0…`force_range_n` (viridis,
    saturating above the range); exactly zero force is grey (`UNLOADED_RGBA`)."""
    magnitude = np.asarray(magnitude, dtype=np.float64)
    u = np.clip(magnitude / force_range_n, 0.0, 1.0) * (len(_STOPS) - 1)
    i = np.minimum(u.astype(np.intp), len(_STOPS) - 2)
    w = (u - i)[:, None]
    rgb = _STOPS[i] * (1 - w) + _STOPS[i + 1] * w
    rgba = np.concatenate([rgb, np.ones((len(u), 1))], axis=1)
    rgba[magnitude == 0] = UNLOADED_RGBA
    return rgba


def taxel_diameters(magnitude: np.ndarray, force_range_n: float) -> np.ndarray:
    """Sphere diameters `(N,)` [m] growing linearly with |f| over the fixed range."""
    lo, hi = TAXEL_DIAMETER_M
    return lo + (hi - lo) * np.clip(np.asarray(magnitude, dtype=np.float64) / force_range_n, 0.0, 1.0)


def quat_x_to(directions: np.ndarray) -> np.ndarray:
    """Unit quaternions `(K, 4)` rotating +x onto unit `directions (K, 3)` (arrows point along +x)."""
    d = np.asarray(directions, dtype=np.float64)
    q = np.stack([np.zeros(len(d)), -d[:, 2], d[:, 1], 1.0 + d[:, 0]], axis=1)  # (x̂ × d, 1 + x̂·d)
    opposite = q[:, 3] < 1e-9
    q[opposite] = [0.0, 0.0, 1.0, 0.0]  # d = -x̂: half turn about z
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def segment_poses_from_joints(metadata: TactileMetadata, joint_poses: object,
                              joint_ids: Sequence[int]) -> np.ndarray:
    """The layout's segment poses `(J, 7)` in the wrist frame picked from hand joint poses
    `(K, 7)` (e.g. the 26 OpenXR joints) given in the wrist frame with their joint ids `(K,)`.
    Raises `DataLayoutError` naming a segment whose joint is missing."""
    poses = np.asarray(joint_poses, dtype=np.float64)
    where = {int(j): k for k, j in enumerate(joint_ids)}
    rows = []
    for s, joint in enumerate(metadata.joint_ids):  # segments, not taxels
        k = where.get(int(joint))
        if k is None:
            raise DataLayoutError(f"hand pose has no joint {getattr(joint, 'name', joint)} (segment {s} of the layout)")
        rows.append(k)
    return poses[np.asarray(rows, dtype=np.intp)]


#: Frames `ObjectGeoms.poses` may be given in: the hand joint poses' base space (a producer's
#: objects) or the collection's wrist frame (the objects of a recorded scene, drawn as recorded).
OBJECT_FRAMES = ("base", "wrist")


class ObjectGeoms:
    """Objects a producer knows (the simulator's scenario objects), for the scene: `kinds` (K,)
    names from `OBJECT_KINDS`, `sizes` (K, 3) [m] (box: half extents; sphere: radius; cylinder,
    capsule: radius, half length along local z; ellipsoid: semi-axes), `poses` (K, 7) [m, xyzw] in
    `frame`: "base" (default), the same base space as the hand's joint poses, or "wrist", the
    collection's wrist frame (the objects a recorded scene drew: `scene_objects`), `names` (K,)."""

    __slots__ = ("kinds", "sizes", "poses", "names", "frame")

    def __init__(self, kinds: Sequence[str], sizes: object, poses: object, names: Sequence[str],
                 frame: str = "base"):
        self.kinds, self.names = tuple(kinds), tuple(names)
        self.sizes = np.asarray(sizes, dtype=np.float64).reshape(-1, 3)
        self.poses = np.asarray(poses, dtype=np.float64).reshape(-1, 7)
        self.frame = frame
        bad = [k for k in self.kinds if k not in OBJECT_KINDS]
        if bad or not (len(self.kinds) == len(self.names) == len(self.sizes) == len(self.poses)):
            raise ValueError(f"object geoms: kinds {self.kinds} (known: {', '.join(OBJECT_KINDS)}), "
                             f"{len(self.names)} names, sizes {self.sizes.shape}, poses {self.poses.shape} must agree")
        if frame not in OBJECT_FRAMES:
            raise ValueError(f"object geoms: frame {frame!r} is not one of {', '.join(OBJECT_FRAMES)}")


def object_geoms(extra: Any) -> ObjectGeoms | None:
    """`Frame.extras[EXTRA_OBJECT_GEOMS]` as `ObjectGeoms`: the dict a producer fills ("kinds",
    "sizes", "poses", "names", optionally "frame"), or an `ObjectGeoms` as it is; None stays None."""
    if extra is None or isinstance(extra, ObjectGeoms):
        return extra
    return ObjectGeoms(extra["kinds"], extra["sizes"], extra["poses"], extra["names"], extra.get("frame", "base"))


def _stamp(ns: int) -> dict:
    return {"sec": int(ns // 1_000_000_000), "nsec": int(ns % 1_000_000_000)}


def _num(v: float) -> float:
    return round(float(v), 6)


def _vec(v) -> dict:
    return {"x": _num(v[0]), "y": _num(v[1]), "z": _num(v[2])}


def _pose(p=(0.0, 0.0, 0.0), q=(0.0, 0.0, 0.0, 1.0)) -> dict:
    return {"position": _vec(p), "orientation": {"x": _num(q[0]), "y": _num(q[1]), "z": _num(q[2]), "w": _num(q[3])}}


def _colour(c) -> dict:
    return {"r": _num(c[0]), "g": _num(c[1]), "b": _num(c[2]), "a": _num(c[3])}


_PRIMITIVES = ("arrows", "cubes", "spheres", "cylinders", "lines", "triangles", "texts", "models")


def _entity(stamp: dict, frame: str, entity_id: str, metadata: Sequence[tuple[str, str]] = (), **primitives) -> dict:
    e = {"timestamp": stamp, "frame_id": frame, "id": entity_id, "lifetime": {"sec": 0, "nsec": 0},
         "frame_locked": True, "metadata": [{"key": k, "value": v} for k, v in metadata]}
    for name in _PRIMITIVES:
        e[name] = primitives.get(name, [])
    return e


#: Font size of every label in the scene [px] (scale-invariant text): at 10-12 px Lichtblick drew
#: some glyphs garbled or mirrored ('e' in "index", the legend's "taxel |f|"); at 13 px they read.
LABEL_FONT_PX = 13.0
#: Where the colour bar's value labels are centred: this far beside the bar [m] (wrist frame).
LEGEND_VALUE_OFFSET_M = 0.012


def _text(position, text: str, size: float = 12.0, colour=(1.0, 1.0, 1.0, 1.0)) -> dict:
    return {"pose": _pose(position), "billboard": True, "font_size": size, "scale_invariant": True,
            "color": _colour(colour), "text": text}


_TIME = {"type": "object", "properties": {"sec": {"type": "integer"}, "nsec": {"type": "integer"}}}
_VEC3 = {"type": "object", "properties": {k: {"type": "number"} for k in "xyz"}}
_QUAT = {"type": "object", "properties": {k: {"type": "number"} for k in "xyzw"}}
_POSE = {"type": "object", "properties": {"position": _VEC3, "orientation": _QUAT}}
_RGBA = {"type": "object", "properties": {k: {"type": "number"} for k in "rgba"}}


def _array(item: dict) -> dict:
    return {"type": "array", "items": item}


def _obj(**props: dict) -> dict:
    return {"type": "object", "properties": props}


_SIZED = _obj(pose=_POSE, size=_VEC3, color=_RGBA)
#: JSON Schema of the `foxglove.SceneUpdate` messages this module writes (the fields it uses of
#: Foxglove's SceneUpdate; the viewers pick the 3-D renderer by the schema name).
SCENE_UPDATE_SCHEMA = {
    "title": "foxglove.SceneUpdate",
    "description": "Tactile scene: taxels (|f| colour/size), pad resultant arrows, hand bones, objects, legend",
    **_obj(
        deletions=_array(_obj(timestamp=_TIME, type={"type": "integer"}, id={"type": "string"})),
        entities=_array(_obj(
            timestamp=_TIME, frame_id={"type": "string"}, id={"type": "string"},
            lifetime={"type": "object", "properties": {"sec": {"type": "integer"}, "nsec": {"type": "integer"}}},
            frame_locked={"type": "boolean"},
            metadata=_array(_obj(key={"type": "string"}, value={"type": "string"})),
            arrows=_array(_obj(pose=_POSE, shaft_length={"type": "number"}, shaft_diameter={"type": "number"},
                               head_length={"type": "number"}, head_diameter={"type": "number"}, color=_RGBA)),
            cubes=_array(_SIZED), spheres=_array(_SIZED),
            cylinders=_array(_obj(pose=_POSE, size=_VEC3, bottom_scale={"type": "number"},
                                  top_scale={"type": "number"}, color=_RGBA)),
            lines=_array(_obj(type={"type": "integer"}, pose=_POSE, thickness={"type": "number"},
                              scale_invariant={"type": "boolean"}, points=_array(_VEC3), color=_RGBA,
                              colors=_array(_RGBA), indices=_array({"type": "integer"}))),
            triangles=_array(_obj(pose=_POSE, points=_array(_VEC3), color=_RGBA, colors=_array(_RGBA),
                                  indices=_array({"type": "integer"}))),
            models=_array(_obj(pose=_POSE, scale=_VEC3, color=_RGBA, override_color={"type": "boolean"},
                               url={"type": "string"}, media_type={"type": "string"})),
            texts=_array(_obj(pose=_POSE, billboard={"type": "boolean"}, font_size={"type": "number"},
                              scale_invariant={"type": "boolean"}, color=_RGBA, text={"type": "string"})),
        ))),
}
#: JSON Schema of the `foxglove.FrameTransforms` messages this module writes.
FRAME_TRANSFORMS_SCHEMA = {
    "title": "foxglove.FrameTransforms",
    "description": "world -> <collection>/wrist -> <collection>/<segment>",
    **_obj(transforms=_array(_obj(timestamp=_TIME, parent_frame_id={"type": "string"},
                                  child_frame_id={"type": "string"}, translation=_VEC3, rotation=_QUAT))),
}

#: MCAP / WebSocket encodings of the scene and transform messages.
MESSAGE_ENCODING, SCHEMA_ENCODING = "json", "jsonschema"


PAD_FRAME_TEXT = "pad frame (distal segment bind axes, OpenXR: +Y toward nail, +Z toward wrist)"
RESULTANTS_SCHEMA = {
    "title": "wuji_tactile.PadResultants",
    "description": "Resultant force on each finger pad [N]: the sum of its taxel forces (force on the hand) "
                   "rotated into the pad frame (bind frame of the finger's distal segment, OpenXR axes: "
                   "+Y toward the nail, +Z toward the wrist; pressing a fingertip pad gives y > 0).",
    "type": "object",
    "properties": {
        "timestamp": {"type": "object", "properties": {"sec": {"type": "integer"}, "nsec": {"type": "integer"}}},
        "frame": {"type": "string"},
        **{f: {"type": "object", "properties": {k: {"type": "number"} for k in ("x", "y", "z", "norm")}}
           for f in FINGERS},
        "total_norm": {"type": "number", "description": "sum of the five pad magnitudes [N]"},
    },
}


def resultants_message(resultants: np.ndarray, stamp_ns: int) -> dict:
    """The JSON message of `C/view/resultants` for pad resultants `(5, 3)` [N, pad frame]."""
    r = np.asarray(resultants, dtype=np.float64)
    norms = np.linalg.norm(r, axis=1)
    msg: dict = {"timestamp": {"sec": int(stamp_ns // 1_000_000_000), "nsec": int(stamp_ns % 1_000_000_000)},
                 "frame": PAD_FRAME_TEXT}
    for p, finger in enumerate(FINGERS):
        x, y, z = r[p].tolist()
        msg[finger] = {"x": x, "y": y, "z": z, "norm": float(norms[p])}
    msg["total_norm"] = float(norms.sum())
    return msg


#: Grey gap between the image tiles [pixels].
IMAGE_GAP = 1
#: Margins of the force-image mosaic for its labels [pixels]: left (row names), top (pad names),
#: bottom (colour scale).
IMAGE_MARGIN = {"left": 20, "top": 14, "bottom": 20}


def image_mosaic(images: np.ndarray, image_range_n: float) -> np.ndarray:
    """rgb8 mosaic of force images `(5, 3, H, W)` [N per cell, pad frame]: tiles in rows Fx, Fy,
    Fz and columns thumb … pinky, |value| coloured on 0…`image_range_n` (viridis; exactly 0 grey),
    1-pixel grey gaps, a dark margin (`IMAGE_MARGIN`) for the labels of `image_labels` and, in the
    bottom margin, the colour scale from 0 (left) to `image_range_n` (right) under the tiles."""
    images = np.asarray(images, dtype=np.float64)
    if images.ndim != 4 or images.shape[:2] != (NUM_PADS, 3):
        raise ValueError(f"images must have shape (5, 3, H, W), got {images.shape}")
    _, _, h, w = images.shape
    g, m = IMAGE_GAP, IMAGE_MARGIN
    tiles_h, tiles_w = 3 * h + 2 * g, NUM_PADS * w + (NUM_PADS - 1) * g
    mosaic = np.full((m["top"] + tiles_h + m["bottom"], m["left"] + tiles_w, 3), 30, dtype=np.uint8)
    mosaic[m["top"]:m["top"] + tiles_h, m["left"]:] = 128
    rgb = (force_colours(np.abs(images).ravel(), image_range_n)[:, :3] * 255).round().astype(np.uint8)
    rgb = rgb.reshape(NUM_PADS, 3, h, w, 3)
    for c in range(3):  # 3 × 5 tiles, not per pixel
        for p in range(NUM_PADS):
            r0, c0 = m["top"] + c * (h + g), m["left"] + p * (w + g)
            mosaic[r0:r0 + h, c0:c0 + w] = rgb[p, c]
    scale = force_colours((np.arange(tiles_w) + 0.5) / tiles_w * image_range_n, image_range_n)[:, :3]
    bar_top = m["top"] + tiles_h + 2
    mosaic[bar_top:bar_top + 4, m["left"]:] = (scale * 255).round().astype(np.uint8)[None]
    return mosaic


_POINT = {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}}
#: JSON Schema of the `foxglove.ImageAnnotations` messages labelling the force-image mosaic.
IMAGE_LABELS_SCHEMA = {
    "title": "foxglove.ImageAnnotations",
    "description": "Labels of the force-image mosaic: rows Fx/Fy/Fz, columns the pads, the colour scale",
    **_obj(circles=_array(_obj(timestamp=_TIME, position=_POINT, diameter={"type": "number"},
                               thickness={"type": "number"}, fill_color=_RGBA, outline_color=_RGBA)),
           points=_array(_obj(timestamp=_TIME, type={"type": "integer"}, points=_array(_POINT),
                              outline_color=_RGBA, thickness={"type": "number"})),
           texts=_array(_obj(timestamp=_TIME, position=_POINT, text={"type": "string"}, font_size={"type": "number"},
                             text_color=_RGBA, background_color=_RGBA))),
}


def image_labels(image_hw: tuple[int, int], image_range_n: float, stamp_ns: int) -> dict:
    """ImageAnnotations (a dict) for a mosaic of `image_mosaic` with tiles `image_hw` = (H, W)
    [pixels]: the component of each row, the pad of each column, the colour scale's two ends."""
    h, w = (int(v) for v in image_hw)
    g, m = IMAGE_GAP, IMAGE_MARGIN
    stamp = _stamp(stamp_ns)
    white, clear = _colour((1.0, 1.0, 1.0, 1.0)), _colour((0.0, 0.0, 0.0, 0.0))

    def text(x: float, y: float, label: str, size: float = 8.0) -> dict:
        return {"timestamp": stamp, "position": {"x": float(x), "y": float(y)}, "text": label, "font_size": size,
                "text_color": white, "background_color": clear}

    # positions are the texts' baselines (left end)
    texts = [text(2, m["top"] + c * (h + g) + h / 2 + 5, name, 11.0) for c, name in enumerate(("Fx", "Fy", "Fz"))]
    texts += [text(m["left"] + p * (w + g) + 1, m["top"] - 3, name, 8.0) for p, name in enumerate(FINGERS)]
    height = m["top"] + 3 * h + 2 * g + m["bottom"]
    tiles_w = NUM_PADS * w + (NUM_PADS - 1) * g
    texts += [text(m["left"], height - 2, "0 N", 9.0),
              text(m["left"] + tiles_w / 2 - 40, height - 2, "|value| per cell", 8.0),
              text(m["left"] + tiles_w - 30, height - 2, f"{image_range_n:g} N", 9.0)]
    return {"circles": [], "points": [], "texts": texts}


class SceneBuilder:
    """Scene and transform messages of one collection (`collection_id`, its `metadata`), `index`:
    the collection's place among those shown (display offset `COLLECTION_SPACING_M` · index)."""

    def __init__(self, metadata: TactileMetadata, collection_id: str, *, index: int = 0,
                 force_range_n: float = DEFAULT_FORCE_RANGE_N, arrow_m_per_n: float = DEFAULT_ARROW_M_PER_N):
        validate_collection_id(collection_id)
        self.metadata, self.collection_id = metadata, collection_id
        self.force_range_n, self.arrow_m_per_n = float(force_range_n), float(arrow_m_per_n)
        self.frame = f"{collection_id}/wrist"
        self.world_offset = np.array([COLLECTION_SPACING_M * index, 0.0, 0.0])
        self.layout = pad_layout(metadata)
        self.segment_names = [getattr(j, "name", str(j)) for j in metadata.joint_ids]
        n = metadata.num_taxels
        self._main_segment = metadata.segment_indices[np.arange(n), np.argmax(metadata.segment_weights, axis=1)]
        # One entity per taxel (hover names it): the constant parts are baked into a template once,
        # the per-frame numbers are formatted in one C-level `%` over a (N, 13) array.
        empty = "".join(f',"{p}":[]' for p in _PRIMITIVES if p != "spheres")
        parts = []
        for i in range(n):  # once per layout, not per frame
            pad = FINGERS[int(self.layout.pad_of_taxel[i])]
            parts.append(
                '{"timestamp":{"sec":%d,"nsec":%d},"frame_id":' + json.dumps(self.frame).replace("%", "%%")
                + ',"id":"taxel/' + str(i) + '","lifetime":{"sec":0,"nsec":0},"frame_locked":true,'
                '"metadata":[{"key":"taxel","value":"' + str(i) + '"},{"key":"pad","value":"' + pad + '"},'
                '{"key":"|f| [N]","value":"%.4f"}],'
                '"spheres":[{"pose":{"position":{"x":%.6f,"y":%.6f,"z":%.6f},"orientation":{"x":0,"y":0,"z":0,"w":1}},'
                '"size":{"x":%.5f,"y":%.5f,"z":%.5f},"color":{"r":%.4f,"g":%.4f,"b":%.4f,"a":%.4f}}]' + empty + "}")
        self._taxel_template = ",".join(parts)
        # The legend's place: beside the fingers on the side away from the thumb, level with the knuckles.
        bind = skin_taxel_positions(metadata, metadata.segment_bind_poses)
        thumb = self.layout.pad_of_taxel == 0
        side = -1.0 if thumb.any() and bind[thumb, 0].mean() > bind[:, 0].mean() else 1.0
        others = bind[~thumb] if (~thumb).any() else bind
        self.legend_origin = np.array([side * (np.abs(others[:, 0]).max() + 0.02), float(bind[:, 1].mean()),
                                       float(bind[:, 2].max()) + 0.02])

    # -- geometry -----------------------------------------------------------------------------
    def segment_poses(self, joint_poses: np.ndarray | None) -> np.ndarray:
        """(J, 7) segment poses in the wrist frame from (26, 7) joint poses in any base space (None: bind)."""
        if joint_poses is None:
            return self.metadata.segment_bind_poses.astype(np.float64)
        in_wrist = rebase_to_root(joint_poses[int(HandJoint.WRIST)], joint_poses)
        return segment_poses_from_joints(self.metadata, in_wrist, range(int(HandJoint.NUM_JOINTS)))

    # -- messages -----------------------------------------------------------------------------
    def scene(self, forces: np.ndarray, stamp_ns: int, *, joint_poses: np.ndarray | None = None,
              objects: ObjectGeoms | None = None, segment_poses: np.ndarray | None = None) -> bytes:
        """The complete SceneUpdate (JSON bytes) of one frame: forces `(N, 3)` [N, taxel axes],
        `joint_poses` (26, 7) of the hand in its base space (None: the bind pose, no bones),
        `objects` in the same base space, or `segment_poses` (J, 7) in the wrist frame directly."""
        forces = np.asarray(forces, dtype=np.float64)
        if forces.shape != (self.metadata.num_taxels, 3):
            raise DataLayoutError(f"{self.collection_id}: forces must have shape ({self.metadata.num_taxels}, 3), "
                                  f"got {forces.shape}")
        joints = None if joint_poses is None else np.asarray(joint_poses, dtype=np.float64)
        seg = self.segment_poses(joints) if segment_poses is None else np.asarray(segment_poses, dtype=np.float64)
        pos = skin_taxel_positions(self.metadata, seg)
        magnitude = np.linalg.norm(forces, axis=1)
        stamp = _stamp(stamp_ns)
        values = np.empty((len(pos), 13))
        values[:, 0], values[:, 1] = stamp["sec"], stamp["nsec"]
        values[:, 2] = magnitude
        values[:, 3:6] = pos
        values[:, 6:9] = taxel_diameters(magnitude, self.force_range_n)[:, None]
        values[:, 9:13] = force_colours(magnitude, self.force_range_n)
        taxels = self._taxel_template % tuple(values.ravel().tolist())

        resultants = pad_resultants(self.layout, forces)
        entities = self._pads(stamp, seg, pos, resultants)
        entities.append(self._bones(stamp, seg, pos, joints))
        if objects is not None and len(objects.kinds):
            entities += self._objects(stamp, objects, joints)
        entities.append(self._legend(stamp, pos))
        rest = json.dumps(entities, separators=(",", ":"), allow_nan=False)
        return ('{"deletions":[],"entities":[' + taxels + "," + rest[1:] + "}").encode()

    def transforms(self, stamp_ns: int, *, joint_poses: np.ndarray | None = None,
                   segment_poses: np.ndarray | None = None) -> bytes:
        """FrameTransforms (JSON bytes): `world → C/wrist` (the wrist's pose in the base space when
        `joint_poses` are given, else identity; plus the display offset) and `C/wrist → C/<segment>`."""
        joints = None if joint_poses is None else np.asarray(joint_poses, dtype=np.float64)
        seg = self.segment_poses(joints) if segment_poses is None else np.asarray(segment_poses, dtype=np.float64)
        wrist = np.array([0, 0, 0, 0, 0, 0, 1.0]) if joints is None else joints[int(HandJoint.WRIST)].copy()
        wrist[:3] += self.world_offset
        stamp = _stamp(stamp_ns)

        def tf(parent: str, child: str, p) -> dict:
            return {"timestamp": stamp, "parent_frame_id": parent, "child_frame_id": child,
                    "translation": _vec(p[:3]), "rotation": {k: _num(v) for k, v in zip("xyzw", p[3:], strict=True)}}

        out = [tf("world", self.frame, wrist)]
        out += [tf(self.frame, f"{self.collection_id}/{name}", p) for name, p in zip(self.segment_names, seg, strict=True)]
        return json.dumps({"transforms": out}, separators=(",", ":"), allow_nan=False).encode()

    # -- entities -----------------------------------------------------------------------------
    def _pads(self, stamp: dict, seg: np.ndarray, pos: np.ndarray, resultants: np.ndarray) -> list[dict]:
        """One entity per pad with taxels: its name beside it, its resultant arrow when loaded, and
        the resultant as metadata (pad frame)."""
        out = []
        centre_of_hand = pos.mean(axis=0)
        for p in range(NUM_PADS):  # the five pads
            s = int(self.layout.pad_segment[p])
            if s < 0:
                continue
            mine = self.layout.one_hot[p] > 0
            centroid = pos[mine].mean(axis=0)
            f_wrist = quat_rotate(seg[s, 3:], resultants[p])
            norm = float(np.linalg.norm(f_wrist))
            arrows = []
            if norm > 1e-9:
                d = f_wrist / norm
                length = norm * self.arrow_m_per_n
                head = min(0.3 * length, 0.006)
                arrows.append({"pose": _pose(centroid - d * length, quat_x_to(d[None])[0]),
                               "shaft_length": _num(length - head), "shaft_diameter": 0.0012,
                               "head_length": _num(head), "head_diameter": 0.003,
                               "color": _colour((0.85, 0.1, 0.1, 1.0))})
            outward = centroid - centre_of_hand
            outward = outward / max(float(np.linalg.norm(outward)), 1e-9)
            label = _text(centroid + 0.012 * outward, FINGERS[p], LABEL_FONT_PX, (0.95, 0.85, 0.4, 1.0))
            fx, fy, fz = resultants[p]
            out.append(_entity(stamp, self.frame, f"pad/{FINGERS[p]}", (
                ("pad", FINGERS[p]), ("taxels", str(int(mine.sum()))),
                ("|F| [N]", f"{norm:.4f}"), ("F pad frame [N]", f"({fx:+.4f}, {fy:+.4f}, {fz:+.4f})")),
                arrows=arrows, texts=[label]))
        return out

    def _bones(self, stamp: dict, seg: np.ndarray, pos: np.ndarray, joints: np.ndarray | None) -> dict:
        """The hand's skeleton: the OpenXR bones from the joint poses when known; else (bind pose)
        lines wrist → segment origin → the segment's farthest taxel."""
        if joints is not None:
            in_wrist = rebase_to_root(joints[int(HandJoint.WRIST)], joints)[:, :3]
            pairs = np.asarray(BONES, dtype=np.intp)
            points = in_wrist[pairs.ravel()]
            meta = (("bones", "OpenXR hand joints, recorded/simulated pose"),)
        else:
            pts = []
            for j in range(len(seg)):  # segments, not taxels
                origin = seg[j, :3]
                pts += [np.zeros(3), origin]
                mine = pos[self._main_segment == j]
                if len(mine):
                    pts += [origin, mine[np.argmax(np.linalg.norm(mine - origin, axis=1))]]
            points = np.asarray(pts).reshape(-1, 3)
            meta = (("bones", "no hand pose: bind pose of the layout's segments"),)
        line = {"type": 2, "pose": _pose(), "thickness": 3.0, "scale_invariant": True,
                "points": [_vec(p) for p in points.tolist()], "color": _colour((0.78, 0.72, 0.66, 1.0)),
                "colors": [], "indices": []}
        joints_drawn = [] if joints is None else [
            {"pose": _pose(p), "size": _vec((0.004, 0.004, 0.004)), "color": _colour((0.85, 0.8, 0.75, 1.0))}
            for p in rebase_to_root(joints[int(HandJoint.WRIST)], joints)[:, :3].tolist()]
        return _entity(stamp, self.frame, "hand/bones", meta, lines=[line], spheres=joints_drawn)

    def _objects(self, stamp: dict, objects: ObjectGeoms, joints: np.ndarray | None) -> list[dict]:
        """Each object as its primitive at its pose, in the wrist frame (objects in the base space
        moved there by the wrist's pose when the joints are known)."""
        poses = objects.poses
        if joints is not None and objects.frame == "base":
            poses = pose_compose(pose_invert(joints[int(HandJoint.WRIST)]), poses)
        colour = _colour((0.35, 0.6, 0.85, 0.45))
        out = []
        for k, (kind, size, pose, name) in enumerate(zip(objects.kinds, objects.sizes, poses, objects.names, strict=True)):
            p, q = pose[:3], pose[3:]
            prim: dict[str, list[dict[str, Any]]]
            if kind == "box":
                prim = {"cubes": [{"pose": _pose(p, q), "size": _vec(2 * size), "color": colour}]}
            elif kind == "sphere":
                prim = {"spheres": [{"pose": _pose(p, q), "size": _vec([2 * size[0]] * 3), "color": colour}]}
            elif kind == "ellipsoid":
                prim = {"spheres": [{"pose": _pose(p, q), "size": _vec(2 * size), "color": colour}]}
            else:  # cylinder, capsule (drawn as its cylinder plus end spheres)
                r, half = size[0], size[1]
                prim = {"cylinders": [{"pose": _pose(p, q), "size": _vec((2 * r, 2 * r, 2 * half)), "bottom_scale": 1.0,
                                       "top_scale": 1.0, "color": colour}]}
                if kind == "capsule":
                    ends = pose_apply(pose, np.array([[0, 0, half], [0, 0, -half]]))
                    prim["spheres"] = [{"pose": _pose(e), "size": _vec([2 * r] * 3), "color": colour}
                                       for e in ends.tolist()]
            out.append(_entity(stamp, self.frame, f"object/{k}", (("object", name), ("primitive", kind),
                                                                  ("size [m]", " ".join(f"{v:.4f}" for v in size))),
                               **prim))
        return out

    def _legend(self, stamp: dict, pos: np.ndarray) -> dict:
        """Colour bar (10 steps over the fixed range, high at the top) with short labels, at a fixed
        place in the wrist frame beside the little finger (`self.legend_origin`)."""
        top = self.legend_origin
        step, n = 0.004, 10
        cubes = []
        for k, c in enumerate(force_colours(((np.arange(n) + 0.5) / n) * self.force_range_n, self.force_range_n)):
            cubes.append({"pose": _pose(top + [0, 0, -(n - 1 - k) * step]), "size": _vec((0.004, 0.004, step)),
                          "color": _colour(c)})
        # The scale's values centred LEGEND_VALUE_OFFSET_M beside the bar so that the cubes do not
        # hide their first digit at the layout's camera distance.
        side = LEGEND_VALUE_OFFSET_M
        texts = [_text(top + [side, 0, 0.0], f"{self.force_range_n:g} N", LABEL_FONT_PX),
                 _text(top + [side, 0, -(n - 1) * step], "0 N", LABEL_FONT_PX),
                 _text(top + [0.0, 0, 0.01], "taxel |f|", LABEL_FONT_PX),
                 _text(top + [0.0, 0, -n * step - 0.006], "grey: 0 N", LABEL_FONT_PX),
                 _text(top + [0.0, 0, -n * step - 0.014], f"arrow {self.arrow_m_per_n * 1e3:g} mm/N", LABEL_FONT_PX,
                       (1.0, 0.55, 0.55, 1.0))]
        return _entity(stamp, self.frame, "legend", (
            ("colour_and_size", f"|f| 0…{self.force_range_n:g} N, viridis, grey = 0 N"),
            ("arrow_length", f"{self.arrow_m_per_n * 1e3:g} mm per N: pad resultant, force on the hand"),
            ("force_sign", "force on the hand by the contact")), cubes=cubes, texts=texts)


__all__ = ["SceneBuilder", "ObjectGeoms", "OBJECT_FRAMES", "OBJECT_KINDS", "object_geoms", "SCENE_UPDATE_SCHEMA", "FRAME_TRANSFORMS_SCHEMA", "RESULTANTS_SCHEMA",
           "IMAGE_LABELS_SCHEMA", "IMAGE_MARGIN", "PAD_FRAME_TEXT", "BONES", "image_mosaic", "image_labels",
           "resultants_message", "force_colours", "taxel_diameters", "segment_poses_from_joints",
           "DEFAULT_FORCE_RANGE_N", "DEFAULT_ARROW_M_PER_N", "MESSAGE_ENCODING", "SCHEMA_ENCODING"]
