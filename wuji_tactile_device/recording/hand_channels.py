"""Hand pose channels in Isaac Teleop's own recording layout, next to the tactile collections.

Isaac Teleop's `HandTracker` records, and its `ReplaySession` replays, one `core.HandPoseRecord`
per hand per frame on the channels `<base_name>/left_hand` and `<base_name>/right_hand`, where
`<base_name>` is the name the tracker is registered under (a `TeleopSession` uses the
`HandsSource` node's name). Its replay reads ONE record of each hand per `update()`, so both
channels must advance together: `HandPoseChannels.write` writes both hands every frame, the hand
that is not tracked as a record without `data` (Isaac Teleop's "inactive" convention).

Log time = the record's `available_time_local_common_clock`, as Isaac Teleop writes it. Isaac
Teleop 1.5 replays only uncompressed MCAP: record such files with the isaac profile
(`recording.profiles`).

Two encodings, by the recorder's profile, on the same topics:

- isaac: `core.HandPoseRecord` FlatBuffers with Isaac Teleop's exact schema bytes (what its
  `ReplaySession` reads; viewers cannot decode its fixed-size joint array);
- default: the viewer twin — the same 26 joint poses as JSON, schema `foxglove.PosesInFrame`
  (JSON Schema), which Foxglove and Lichtblick decode and draw as poses in the channel's frame,
  plus the per-joint `valid` and `radius` and the record's `DeviceDataTimestamp` (all three
  times [ns]), so nothing of the Isaac record is lost (`recover --profile isaac` converts back).

`iter_hand_records` reads both, and Isaac Teleop's own recordings.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from ..contract.hand_pose import (HAND_POSE_RECORD_SCHEMA_NAME, NUM_HAND_JOINTS, HandPoseSample,
                                  decode_hand_pose_record, encode_hand_pose_record, joint_block)
from ..contract.records import DeviceDataTimestamp
from ..contract.side_data import DEFAULT_HAND_BASE_NAME as _DEFAULT_HAND_BASE_NAME
from ..errors import RecordingError
from .profiles import isaac_hand_schema

#: The chunk compression Isaac Teleop's `ReplaySession` reads (1.5: only uncompressed chunks).
ISAAC_TELEOP_COMPRESSION = "none"
#: Default `<base_name>`: the name of the `HandsSource` node that will replay the channels
#: (declared with the side data producers provide, `contract.side_data`).
DEFAULT_HAND_BASE_NAME = _DEFAULT_HAND_BASE_NAME
HAND_SIDES = ("left", "right")
#: Schema name of the default profile's viewer twin (Foxglove's well-known pose array).
VIEWER_HAND_SCHEMA_NAME = "foxglove.PosesInFrame"
#: `frame_id` of the viewer twin: the root frame of this package's Foxglove scene.
VIEWER_HAND_FRAME_ID = "world"
#: Channel metadata key/value marking a viewer twin as this package's 26 OpenXR hand joints.
HAND_JOINTS_KEY, HAND_JOINTS_VALUE = "hand_joints", "openxr-26"
HAND_SCHEMA_NAMES = (HAND_POSE_RECORD_SCHEMA_NAME, VIEWER_HAND_SCHEMA_NAME)

_VEC = {"type": "object", "properties": {k: {"type": "number"} for k in "xyz"}, "required": list("xyz")}
_QUAT = {"type": "object", "properties": {k: {"type": "number"} for k in "xyzw"}, "required": list("xyzw")}
_TIME = {"type": "object", "properties": {"sec": {"type": "integer", "minimum": 0},
                                          "nsec": {"type": "integer", "minimum": 0, "maximum": 999_999_999}},
         "required": ["sec", "nsec"]}
#: JSON Schema of the viewer twin: foxglove.PosesInFrame's fields plus the Isaac record's rest.
VIEWER_HAND_SCHEMA: dict[str, Any] = {
    "title": VIEWER_HAND_SCHEMA_NAME,
    "description": "One hand's 26 OpenXR joint poses (HandJoint order) in the channel's base space [m]; an untracked "
                   "hand has no poses. valid/radius per joint; device_data_timestamp in ns.",
    "type": "object",
    "properties": {
        "timestamp": _TIME,
        "frame_id": {"type": "string"},
        "poses": {"type": "array", "items": {"type": "object", "properties": {"position": _VEC, "orientation": _QUAT},
                                             "required": ["position", "orientation"]}},
        "tracked": {"type": "boolean"},
        "valid": {"type": "array", "items": {"type": "boolean"}},
        "radius": {"type": "array", "items": {"type": "number"}},
        "device_data_timestamp": {"type": "object", "properties": {
            "available_time_local_common_clock": {"type": "integer"},
            "sample_time_local_common_clock": {"type": "integer"},
            "sample_time_raw_device_clock": {"type": "integer"}},
            "required": ["available_time_local_common_clock", "sample_time_local_common_clock",
                         "sample_time_raw_device_clock"]},
    },
    "required": ["timestamp", "frame_id", "poses", "tracked", "device_data_timestamp"],
}


#: %.9g: nine significant digits read back to the same float32 (what the Isaac record holds), and
#: format 4× faster than repr.
_JOINT_JSON = ('{"position":{"x":%.9g,"y":%.9g,"z":%.9g},'
               '"orientation":{"x":%.9g,"y":%.9g,"z":%.9g,"w":%.9g}}')
#: The 26 poses as one format string: a message is formatted in one C-level operation, no per-joint Python.
_POSES_JSON = "[" + ",".join([_JOINT_JSON] * NUM_HAND_JOINTS) + "]"
_FLAGS_JSON = "[" + ",".join(["%s"] * NUM_HAND_JOINTS) + "]"
_RADII_JSON = "[" + ",".join(["%.9g"] * NUM_HAND_JOINTS) + "]"


def encode_viewer_hand(poses: object | None, timestamp: DeviceDataTimestamp, *, frame_id: str, valid: object = True,
                       radius: object = 0.0) -> bytes:
    """The viewer twin of one hand's record as JSON bytes (`VIEWER_HAND_SCHEMA`); `poses=None`:
    not tracked. Poses and radii are the float32 values the Isaac record holds, written with the
    nine significant digits that read back to the same float32."""
    t = max(int(timestamp[1]), 0)
    head = (f'{{"timestamp":{{"sec":{t // 1_000_000_000},"nsec":{t % 1_000_000_000}}},'
            f'"frame_id":{json.dumps(frame_id)},')
    stamps = (f'"device_data_timestamp":{{"available_time_local_common_clock":{int(timestamp[0])},'
              f'"sample_time_local_common_clock":{int(timestamp[1])},"sample_time_raw_device_clock":{int(timestamp[2])}}}}}')
    if poses is None:
        return (head + '"poses":[],"tracked":false,' + stamps).encode()
    block = joint_block(poses, valid, radius)
    body = (_POSES_JSON % tuple(block["pose"].astype(np.float64).ravel().tolist())
            + ',"tracked":true,"valid":' + _FLAGS_JSON % tuple("true" if v else "false" for v in block["is_valid"].tolist())
            + ',"radius":' + _RADII_JSON % tuple(block["radius"].astype(np.float64).tolist()))
    return (head + '"poses":' + body + "," + stamps).encode()


def decode_viewer_hand(data: bytes) -> HandPoseSample:
    """A viewer twin message as a `HandPoseSample` (float32 poses, as the Isaac record holds them).
    Raises `RecordingError` for a message that is not one."""
    try:
        msg = json.loads(bytes(data))
        ts = msg["device_data_timestamp"]
        timestamp = DeviceDataTimestamp(int(ts["available_time_local_common_clock"]),
                                        int(ts["sample_time_local_common_clock"]),
                                        int(ts["sample_time_raw_device_clock"]))
        if not msg["tracked"]:
            return HandPoseSample(None, None, None, timestamp)
        poses = np.array([[p["position"]["x"], p["position"]["y"], p["position"]["z"], p["orientation"]["x"],
                           p["orientation"]["y"], p["orientation"]["z"], p["orientation"]["w"]] for p in msg["poses"]],
                         dtype=np.float32)
        valid = np.asarray(msg["valid"], dtype=bool)
        radius = np.asarray(msg["radius"], dtype=np.float32)
    except (ValueError, KeyError, TypeError) as exc:
        raise RecordingError(f"hand pose message is not a {VIEWER_HAND_SCHEMA_NAME} hand twin: {exc!r}") from None
    if poses.shape != (NUM_HAND_JOINTS, 7) or valid.shape != (NUM_HAND_JOINTS,) or radius.shape != (NUM_HAND_JOINTS,):
        raise RecordingError(f"hand pose message: {len(poses)} poses, {valid.size} valid flags, {radius.size} radii; "
                             f"a hand has {NUM_HAND_JOINTS} joints")
    for a in (poses, valid, radius):
        a.flags.writeable = False
    return HandPoseSample(poses, valid, radius, timestamp)


def is_hand_channel(schema_name: str, metadata: Mapping[str, str]) -> bool:
    """A hand channel of either profile: Isaac Teleop's record, or this package's viewer twin."""
    return schema_name == HAND_POSE_RECORD_SCHEMA_NAME or (
        schema_name == VIEWER_HAND_SCHEMA_NAME and metadata.get(HAND_JOINTS_KEY) == HAND_JOINTS_VALUE)


def decode_hand_message(schema_name: str, data: bytes) -> HandPoseSample:
    """One hand message of either encoding (`is_hand_channel`) as a `HandPoseSample`."""
    if schema_name == HAND_POSE_RECORD_SCHEMA_NAME:
        return decode_hand_pose_record(data)
    return decode_viewer_hand(data)


def hand_topic(base_name: str, side: str) -> str:
    """`<base_name>/left_hand` or `<base_name>/right_hand` (Isaac Teleop's channel names)."""
    if side not in HAND_SIDES:
        raise ValueError(f"hand side must be one of {HAND_SIDES}, got {side!r}")
    return f"{base_name}/{side}_hand"


class HandPoseChannels:
    """Both hand channels of one recording (an `McapRecorder`), written frame by frame."""

    def __init__(self, recorder, base_name: str = DEFAULT_HAND_BASE_NAME, *, base_space: str = "") -> None:
        if not isinstance(base_name, str) or not base_name or base_name.endswith("/"):
            raise ValueError(f"hand channel base name must be a non-empty str without a trailing '/', got {base_name!r}")
        self.base_name = base_name
        self._recorder = recorder
        meta = {"frame": base_space} if base_space else {}
        # The viewers' frame id: "world", the root frame of this package's Foxglove scene; what that
        # base space physically is stays in the channel metadata `frame`.
        self._frame_id = VIEWER_HAND_FRAME_ID
        # isaac: Isaac Teleop's record with its own compiled-in schema bytes (its replay then
        # prints no schema notice); default: the viewer twin (JSON, foxglove.PosesInFrame).
        self._isaac = getattr(recorder, "profile", "default") == "isaac"
        if self._isaac:
            schema = isaac_hand_schema().data
            self._channels = {side: recorder.add_flatbuffer_channel(hand_topic(base_name, side),
                                                                    HAND_POSE_RECORD_SCHEMA_NAME, schema, metadata=meta)
                              for side in HAND_SIDES}
        else:
            schema_json = json.dumps(VIEWER_HAND_SCHEMA, separators=(",", ":")).encode()
            self._channels = {side: recorder.add_encoded_channel(hand_topic(base_name, side), VIEWER_HAND_SCHEMA_NAME,
                                                                 "jsonschema", schema_json, "json",
                                                                 metadata={**meta, HAND_JOINTS_KEY: HAND_JOINTS_VALUE})
                              for side in HAND_SIDES}
        self._sequence = 0
        self._last_log_time = -1

    def write(self, poses: Mapping[str, np.ndarray], timestamp: DeviceDataTimestamp, *, log_time_ns: int | None = None,
              valid: object = True, radius: object = 0.0) -> None:
        """One frame: `poses` maps "left"/"right" to that hand's (26, 7) joint poses in the base
        space; a side not in `poses` is written as not tracked. Log time defaults to the
        timestamp's available time (as Isaac Teleop writes); publish time = sample time."""
        unknown = set(poses) - set(HAND_SIDES)
        if unknown:
            raise ValueError(f"hand poses: unknown side(s) {sorted(unknown)}; use {HAND_SIDES}")
        log_time = int(timestamp[0]) if log_time_ns is None else int(log_time_ns)
        if log_time < self._last_log_time:
            raise RecordingError(f"hand channels {self.base_name!r}: log time {log_time} ns goes back before "
                                 f"{self._last_log_time} ns; Isaac Teleop replays records in log-time order")
        for side in HAND_SIDES:
            if self._isaac:
                payload = encode_hand_pose_record(poses.get(side), timestamp, valid=valid, radius=radius)
                self._recorder.write_flatbuffer(self._channels[side], payload, log_time_ns=log_time,
                                                publish_time_ns=int(timestamp[1]), sequence=self._sequence)
            else:
                payload = encode_viewer_hand(poses.get(side), timestamp, frame_id=self._frame_id, valid=valid,
                                             radius=radius)
                self._recorder.write_flatbuffer(self._channels[side], payload, log_time_ns=log_time,
                                                publish_time_ns=int(timestamp[1]), sequence=self._sequence)
        self._sequence += 1
        self._last_log_time = log_time


# -- reading -------------------------------------------------------------------------------------
def iter_hand_records(path: str | os.PathLike, base_name: str | None = None
                      ) -> Iterator[tuple[str, str, HandPoseSample]]:
    """(side, topic, `HandPoseSample`) of every hand pose message of `path`, in file order, one
    chunk in memory at a time — from this package's recordings of either profile (and older ones:
    Isaac records with this package's own schema) and from Isaac Teleop's own. `base_name`: only
    `<base_name>/left_hand`, `<base_name>/right_hand`. A hand topic not named `<base>/left_hand`
    or `<base>/right_hand` is refused (the side would be a guess)."""
    from .scan import iter_messages_of

    for schema, ch, m in iter_messages_of(path, lambda schema, ch: is_hand_channel(schema.name, ch.metadata),
                                          schema_names=frozenset(HAND_SCHEMA_NAMES)):
        base, _, leaf = ch.topic.rpartition("/")
        side = leaf.removesuffix("_hand")
        if side not in HAND_SIDES or not leaf.endswith("_hand"):
            raise RecordingError(f"{path}: hand pose topic {ch.topic!r} is not <base>/left_hand or "
                                 "<base>/right_hand")
        if base_name is not None and base != base_name:
            continue
        yield side, ch.topic, decode_hand_message(schema.name, m.data)


def hand_record_times(path: str | os.PathLike, base_name: str = DEFAULT_HAND_BASE_NAME, side: str | None = None
                      ) -> np.ndarray:
    """(H,) int64 sample times [ns, `sample_time_local_common_clock`] of the records Isaac
    Teleop's `ReplaySession` replays, one per `update()`, from `<base_name>/<side>_hand` (side
    None: the right hand's channel, else the left's). Raises `RecordingError` when the file has
    no such channel."""
    if side is not None and side not in HAND_SIDES:
        raise ValueError(f"hand side must be one of {HAND_SIDES} or None, got {side!r}")
    times: dict[str, list[int]] = {s: [] for s in HAND_SIDES}
    for s, _topic, sample in iter_hand_records(path, base_name):
        times[s].append(sample.timestamp.sample_time_local_common_clock)
    chosen = side or ("right" if times["right"] else "left")
    if not times[chosen]:
        raise RecordingError(f"{path}: no hand channel {hand_topic(base_name, chosen)!r} (Isaac Teleop's "
                             f"HandsSource({base_name!r}) would find no hand data); record the hands with "
                             "their poses or name the file's hand channel prefix")
    return np.asarray(times[chosen], dtype=np.int64)


def check_isaac_replayable(path, base_name: str | None = None) -> None:
    """Raise `RecordingError` (one line naming the fix) unless Isaac Teleop's `ReplaySession` can
    open `path`: an MCAP file, complete (summary present), with uncompressed chunks and, when
    `base_name` is given, the hand channels `<base_name>/left_hand` / `<base_name>/right_hand`."""
    from .scan import FileView, scan

    convert = f"convert it: wuji-tactile recover {path} OUT.mcap --profile isaac"
    view = FileView(path)
    try:
        sc = scan(view)
    finally:
        view.close()
    compressed = sorted({c.compression for c in sc.chunks if c.compression})
    if compressed:
        raise RecordingError(f"{path} has {'/'.join(compressed)}-compressed chunks, which Isaac Teleop's ReplaySession "
                             f"cannot read (it reads uncompressed chunks only); record with --profile isaac or {convert}")
    if not sc.complete or sc.truncation is not None:
        raise RecordingError(f"{path} is cut off (no summary at its end), which Isaac Teleop's ReplaySession cannot "
                             f"index; {convert}")
    if base_name is not None:
        def topics_of(schema_name: str) -> set[str]:
            return {ch.topic for ch in sc.channels.values()
                    if sc.schemas.get(ch.schema_id) is not None and sc.schemas[ch.schema_id].name == schema_name}

        topics = topics_of(HAND_POSE_RECORD_SCHEMA_NAME)
        wanted = {f"{base_name}/left_hand", f"{base_name}/right_hand"}
        if topics_of(VIEWER_HAND_SCHEMA_NAME) & wanted and not topics & wanted:
            raise RecordingError(f"{path} carries its hand poses in the default profile's viewer channels "
                                 f"({VIEWER_HAND_SCHEMA_NAME}), which Isaac Teleop's ReplaySession does not read; "
                                 f"record with --profile isaac or {convert}")
        if not topics & wanted:
            found = ", ".join(sorted(topics)) or "none"
            raise RecordingError(f"{path} has no hand channel {base_name}/right_hand or {base_name}/left_hand (hand "
                                 f"channels found: {found}); record the hand poses with the tactile data, give the "
                                 "hands file of Isaac Teleop's recording, or name its channel prefix")
