"""The objects of a recording's own scene, for a view of the file (`view FILE`, `replay FILE --foxglove`).

The contract and hand channels carry no objects; the scene a producer writes into its recording
(`C/view/scene`, `scene_recording.ViewRecording`) draws them: one entity `object/<k>` per object
in the collection's wrist frame, its primitive at the object's pose, with the object's name, its
primitive kind and its size as metadata (`foxglove_scene.SceneBuilder`). `RecordedObjects` reads
them back as `ObjectGeoms` in the wrist frame, so the view draws them exactly where the recorded
scene did:

- `objects_of_scene(payload, wrist_frame)`: the objects of one scene message (None: it draws
  none); `SceneObjectsError` naming the rule a message breaks;
- `RecordedObjects.open(path, collections)`: the file's scene topics (None when it has none);
  `lookup(collection_id, available_time_ns)`: the objects of the collection's latest scene message
  at or before a frame's available time (the recorded scene of a frame has the frame's log time),
  None before the first one or when that message draws none.

Streamed, not loaded: each collection has a cursor over its scene messages that moves forward
with the frames (one chunk decompressed at a time, a message parsed only when a frame shows it,
the parsed objects kept until the next message); frames going back in time (a `--loop` pass, a
seek) start it again at the chunks announced for that time (two chunks read, not the file). A malformed message raises `RecordedSceneError` (file, topic, log time,
rule); a file without a scene topic, or scenes without objects, simply have no objects.
"""
from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ..errors import RecordedSceneError, RecordingError
from ..recording.clock_anchor import log_time_offset
from ..recording.naming import FILE_METADATA_NAME
from ..recording.scan import FileView, RawMessage, ReadBudget, read_chunk, read_partial_chunk, scan
from .foxglove_scene import MESSAGE_ENCODING, OBJECT_KINDS, SCENE_UPDATE_SCHEMA, ObjectGeoms

#: Schema name of the scene topics read (`foxglove_scene.SCENE_UPDATE_SCHEMA`).
SCENE_SCHEMA_NAME = SCENE_UPDATE_SCHEMA["title"]
#: Most objects one scene message may draw (a scenario has a handful).
MAX_OBJECTS = 1024
#: Entity id prefix of the objects (`SceneBuilder._objects`).
OBJECT_ID_PREFIX = "object/"
#: The primitive list that carries each kind's pose and size (a capsule's end spheres follow from its cylinder).
_PRIMITIVE_OF = {"box": "cubes", "sphere": "spheres", "ellipsoid": "spheres", "cylinder": "cylinders",
                 "capsule": "cylinders"}
#: How far an orientation may be from unit length (the scene rounds to 6 decimals).
_UNIT_TOLERANCE = 1e-3


class SceneObjectsError(ValueError):
    """The rule a scene message breaks (`RecordedObjects` adds the file, topic and message)."""


def scene_topic(collection_id: str) -> str:
    """The scene topic of a collection (`FoxgloveView`, `ViewRecording`)."""
    return f"{collection_id}/view/scene"


def _refuse_constant(name: str) -> float:
    raise SceneObjectsError(f"holds the non-JSON number {name}")


def _numbers(value: Any, keys: str, what: str) -> list[float]:
    if not isinstance(value, dict):
        raise SceneObjectsError(f"{what} must be an object with the numbers {', '.join(keys)}")
    out = []
    for k in keys:
        v = value.get(k)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise SceneObjectsError(f"{what}.{k} must be a number, got {v!r:.40}")
        v = float(v)
        if not math.isfinite(v):
            raise SceneObjectsError(f"{what}.{k} must be finite, got {v}")
        out.append(v)
    return out


def _object(entity: dict, wrist_frame: str) -> tuple[str, list[float], list[float], str]:
    """(kind, size (3,), pose (7,), name) of one object entity."""
    eid = entity["id"]
    if entity.get("frame_id") != wrist_frame:
        raise SceneObjectsError(f"entity {eid!r} is in frame {entity.get('frame_id')!r}; objects are drawn in the "
                                f"collection's wrist frame {wrist_frame!r}")
    meta = entity.get("metadata")
    if not isinstance(meta, list) or not all(isinstance(m, dict) and isinstance(m.get("key"), str)
                                             and isinstance(m.get("value"), str) for m in meta):
        raise SceneObjectsError(f"entity {eid!r}: metadata must be a list of {{key, value}} strings")
    fields = {m["key"]: m["value"] for m in meta}
    name, kind, size_text = fields.get("object"), fields.get("primitive"), fields.get("size [m]")
    if name is None or kind not in OBJECT_KINDS or size_text is None:
        raise SceneObjectsError(f"entity {eid!r}: metadata must name the object ('object'), its primitive "
                                f"('primitive': one of {', '.join(OBJECT_KINDS)}, got {kind!r:.40}) and its size "
                                "('size [m]')")
    try:
        size = [float(v) for v in size_text.split()]
    except ValueError:
        size = []
    if len(size) != 3 or not all(math.isfinite(v) and v >= 0 for v in size):
        raise SceneObjectsError(f"entity {eid!r}: 'size [m]' must be three finite numbers >= 0, got {size_text!r:.60}")
    prims = entity.get(_PRIMITIVE_OF[kind])
    if not isinstance(prims, list) or not prims or not isinstance(prims[0], dict):
        raise SceneObjectsError(f"entity {eid!r}: a {kind} is drawn by its first {_PRIMITIVE_OF[kind]} entry, "
                                "which is missing")
    prim = prims[0]
    pose = prim.get("pose")
    if not isinstance(pose, dict):
        raise SceneObjectsError(f"entity {eid!r}: {_PRIMITIVE_OF[kind]}[0].pose must be an object")
    where = f"entity {eid!r}: {_PRIMITIVE_OF[kind]}[0]"
    p = _numbers(pose.get("position"), "xyz", f"{where}.pose.position")
    q = _numbers(pose.get("orientation"), "xyzw", f"{where}.pose.orientation")
    norm = math.sqrt(sum(v * v for v in q))
    if abs(norm - 1.0) > _UNIT_TOLERANCE:
        raise SceneObjectsError(f"{where}.pose.orientation must be a unit quaternion, its norm is {norm:.6g}")
    drawn = _numbers(prim.get("size"), "xyz", f"{where}.size")
    if min(drawn) < 0:
        raise SceneObjectsError(f"{where}.size must be >= 0, got {drawn}")
    # the drawn primitive is exact to 1 µm (the metadata's text to 0.1 mm): it gives what it shows
    if kind in ("box", "ellipsoid"):
        size = [v / 2 for v in drawn]
    elif kind == "sphere":
        size[0] = drawn[0] / 2
    else:  # cylinder, capsule: radius, half length
        size[0], size[1] = drawn[0] / 2, drawn[2] / 2
    return kind, size, p + q, name


def objects_of_scene(payload: bytes, wrist_frame: str) -> ObjectGeoms | None:
    """The objects one `foxglove.SceneUpdate` message (JSON bytes, as `SceneBuilder` writes it)
    draws, as `ObjectGeoms` in the wrist frame `wrist_frame` (None: it draws none).
    `SceneObjectsError` names the rule a message breaks: JSON (no NaN/Infinity) with an `entities`
    list of objects with string ids, each `object/<k>` entity (at most `MAX_OBJECTS`, ids
    distinct) in `wrist_frame` with its name, primitive kind and size as metadata and its
    primitive's finite pose (unit quaternion) and size."""
    try:
        msg = json.loads(payload, parse_constant=_refuse_constant)
    except SceneObjectsError:
        raise
    except RecursionError:
        raise SceneObjectsError("is nested too deeply to be a scene") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, an integer too long
        raise SceneObjectsError(f"is not JSON ({exc})") from None
    entities = msg.get("entities") if isinstance(msg, dict) else None
    if not isinstance(entities, list):
        raise SceneObjectsError("must be a JSON object with an 'entities' list (foxglove.SceneUpdate)")
    if not all(isinstance(e, dict) and isinstance(e.get("id"), str) for e in entities):
        raise SceneObjectsError("every entity must be an object with a string 'id'")
    found = [e for e in entities if e["id"].startswith(OBJECT_ID_PREFIX)]
    if not found:
        return None
    if len(found) > MAX_OBJECTS:
        raise SceneObjectsError(f"draws {len(found)} objects, more than the {MAX_OBJECTS} a view reads")
    ids = [e["id"] for e in found]
    if len(set(ids)) != len(ids):
        raise SceneObjectsError(f"draws the object entity {next(i for i in ids if ids.count(i) > 1)!r} twice")
    rows = [_object(e, wrist_frame) for e in found]  # the handful of objects of one scene message
    kinds, sizes, poses, names = zip(*rows, strict=True)
    return ObjectGeoms(kinds, np.array(sizes), np.array(poses), names, frame="wrist")


class _Cursor:
    """One collection's scene messages in file order, moved forward by `lookup`."""

    def __init__(self, owner: RecordedObjects, collection_id: str, channel_ids: set[int]):
        self._owner, self.collection_id, self._channel_ids = owner, collection_id, channel_ids
        self.topic = scene_topic(collection_id)
        self.wrist_frame = f"{collection_id}/wrist"
        self._messages: Iterator[RawMessage] | None = None
        self._current: RawMessage | None = None  # the latest message at or before the last lookup
        self._ahead: RawMessage | None = None  # the next one
        self._parsed: tuple[RawMessage, ObjectGeoms | None] | None = None
        self.restarts = 0

    def _start(self, available_time_ns: int) -> None:
        self._messages = self._owner._messages(self._channel_ids, available_time_ns + self._owner.log_time_offset_ns)
        self._current = None
        self._ahead = self._next()

    def _next(self) -> RawMessage | None:
        assert self._messages is not None, "started"
        try:
            return next(self._messages, None)
        except RecordedSceneError:
            raise
        except RecordingError as exc:  # a damaged chunk, a read bound: the file's own error, for this topic
            raise RecordedSceneError(f"reading {self.topic}: {exc}") from exc

    def _time(self, raw: RawMessage) -> int:
        return raw.log_time - self._owner.log_time_offset_ns

    def lookup(self, available_time_ns: int) -> ObjectGeoms | None:
        if self._messages is None or (self._current is not None and available_time_ns < self._time(self._current)):
            if self._messages is not None:
                self.restarts += 1
            self._start(available_time_ns)
        while self._ahead is not None and self._time(self._ahead) <= available_time_ns:
            self._current, self._ahead = self._ahead, self._next()  # messages passed over are not parsed
        raw = self._current
        if raw is None:
            return None
        if self._parsed is None or self._parsed[0] is not raw:
            try:
                self._parsed = raw, objects_of_scene(raw.data, self.wrist_frame)
            except SceneObjectsError as exc:
                raise RecordedSceneError(f"{self._owner.path}: {self.topic} message at log time {raw.log_time} ns "
                                         f"(sequence {raw.sequence}) {exc}") from None
        return self._parsed[1]


class RecordedObjects:
    """The objects a recording's scene topics draw, by a frame's available time (module doc).
    `open(path, collections)` is None for a file without a scene topic of those collections."""

    def __init__(self, view: FileView, scanned: Any, channels: dict[str, set[int]], offset_ns: int):
        self._view, self._scan = view, scanned
        self.path = view.path
        #: Log time − record available time [ns] (the file's declared log-time base).
        self.log_time_offset_ns = offset_ns
        self._cursors = {cid: _Cursor(self, cid, ids) for cid, ids in channels.items()}

    @classmethod
    def open(cls, path: str | os.PathLike, collections: Iterable[str]) -> RecordedObjects | None:
        view = FileView(path)
        try:
            sc = scan(view)
            offset = log_time_offset({k: v for m in sc.metadata if m.name == FILE_METADATA_NAME
                                      for k, v in m.metadata.items()}, where=f"{view.path}: ")
            wanted = {scene_topic(c): c for c in collections}
            channels: dict[str, set[int]] = {}
            for ch in sc.channels.values():  # a cut-off file without a summary: no objects (its scene is not indexed)
                schema = sc.schemas.get(ch.schema_id)
                if (ch.topic in wanted and schema is not None and schema.name == SCENE_SCHEMA_NAME
                        and ch.message_encoding == MESSAGE_ENCODING):
                    channels.setdefault(wanted[ch.topic], set()).add(ch.id)
        except BaseException:
            view.close()
            raise
        if not channels:
            view.close()
            return None
        return cls(view, sc, channels, offset)

    @property
    def collections(self) -> list[str]:
        """The collections with a scene topic."""
        return list(self._cursors)

    def lookup(self, collection_id: str, available_time_ns: int) -> ObjectGeoms | None:
        """The objects of `collection_id`'s latest scene message at or before `available_time_ns`
        (a frame's recorded available time), None before its first one, when it draws none or for
        a collection without a scene topic. `RecordedSceneError` for a malformed message."""
        cursor = self._cursors.get(collection_id)
        return None if cursor is None else cursor.lookup(int(available_time_ns))

    def extra(self, collection_id: str, available_time_ns: int) -> ObjectGeoms:
        """`lookup` as a frame's `EXTRA_OBJECT_GEOMS` (a replayed producer's frames): no objects
        are an empty `ObjectGeoms`, so that a view stops drawing those of earlier frames."""
        found = self.lookup(collection_id, available_time_ns)
        return found if found is not None else ObjectGeoms((), np.zeros((0, 3)), np.zeros((0, 7)), (), frame="wrist")

    def _messages(self, channel_ids: set[int], from_log_ns: int) -> Iterator[RawMessage]:
        """The messages of `channel_ids` in file order from the chunk before the last one
        announced to start at or before `from_log_ns` (the latest message up to that time is in
        one of the two), one chunk decompressed at a time, one read budget per start."""
        sc = self._scan
        budget = ReadBudget(sc.chunk_bytes, self.path)
        partial = sc.truncation.partial_chunk if sc.truncation is not None else None
        chunks = list(sc.chunks) + ([partial] if partial is not None else [])
        begin = max([k for k, c in enumerate(chunks) if c.start_ns <= from_log_ns], default=0)
        for chunk in chunks[max(begin - 1, 0):]:  # a start (a rewind) reads a couple of chunks, not the file
            contents = read_partial_chunk(self._view, chunk, budget) if chunk.cut_off \
                else read_chunk(self._view, chunk, budget)
            yield from [m for m in contents.messages if m.channel_id in channel_ids]

    def close(self) -> None:
        self._view.close()

    def __enter__(self) -> RecordedObjects:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def recorded_object_source(objects: RecordedObjects):
    """`objects_for(collection_id, frame)` of `foxglove_live.attach_with_hands`: the recorded
    objects at the frame's (recorded) available time."""
    def objects_for(collection_id: str, frame: Any) -> ObjectGeoms | None:
        return objects.lookup(collection_id, frame.timestamp.available_time_local_common_clock)
    return objects_for


__all__ = ["MAX_OBJECTS", "RecordedObjects", "SceneObjectsError", "objects_of_scene", "recorded_object_source",
           "scene_topic"]
