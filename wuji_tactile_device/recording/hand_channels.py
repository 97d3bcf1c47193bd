"""Hand pose channels in Isaac Teleop's own recording layout, next to the tactile collections.

Isaac Teleop's `HandTracker` records, and its `ReplaySession` replays, one `core.HandPoseRecord`
per hand per frame on the channels `<base_name>/left_hand` and `<base_name>/right_hand`, where
`<base_name>` is the name the tracker is registered under (a `TeleopSession` uses the
`HandsSource` node's name). Its replay reads ONE record of each hand per `update()`, so both
channels must advance together: `HandPoseChannels.write` writes both hands every frame, the hand
that is not tracked as a record without `data` (Isaac Teleop's "inactive" convention).

Log time = the record's `available_time_local_common_clock`, as Isaac Teleop writes it. Isaac
Teleop 1.5 replays only uncompressed MCAP: record such files with `compression="none"`
(`ISAAC_TELEOP_COMPRESSION`).
"""
from __future__ import annotations

import os
from typing import Iterator, Mapping

import numpy as np

from ..contract.hand_pose import (HAND_POSE_RECORD_SCHEMA_NAME, HandPoseSample, decode_hand_pose_record,
                                  encode_hand_pose_record, hand_pose_bfbs)
from ..contract.records import DeviceDataTimestamp
from ..errors import RecordingError
from .profiles import isaac_hand_schema

#: The chunk compression Isaac Teleop's `ReplaySession` reads (1.5: only uncompressed chunks).
ISAAC_TELEOP_COMPRESSION = "none"
#: Default `<base_name>`: the name of the `HandsSource` node that will replay the channels.
DEFAULT_HAND_BASE_NAME = "hands"
HAND_SIDES = ("left", "right")


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
        # The isaac profile carries Isaac Teleop's own compiled-in schema bytes (its replay then
        # prints no schema notice); the default profile this package's compiled schema.
        schema = (isaac_hand_schema().data if getattr(recorder, "profile", "default") == "isaac"
                  else hand_pose_bfbs())
        self._channels = {side: recorder.add_flatbuffer_channel(hand_topic(base_name, side), HAND_POSE_RECORD_SCHEMA_NAME,
                                                                schema, metadata=meta)
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
            payload = encode_hand_pose_record(poses.get(side), timestamp, valid=valid, radius=radius)
            self._recorder.write_flatbuffer(self._channels[side], payload, log_time_ns=log_time,
                                            publish_time_ns=int(timestamp[1]), sequence=self._sequence)
        self._sequence += 1
        self._last_log_time = log_time


# -- reading -------------------------------------------------------------------------------------
def iter_hand_records(path: str | os.PathLike, base_name: str | None = None
                      ) -> Iterator[tuple[str, str, HandPoseSample]]:
    """(side, topic, `HandPoseSample`) of every hand pose record of `path`, in file order, one
    chunk in memory at a time — from this package's recordings of either profile and from Isaac
    Teleop's own. `base_name`: only `<base_name>/left_hand`, `<base_name>/right_hand`. A
    `core.HandPoseRecord` topic not named `<base>/left_hand` or `<base>/right_hand` is refused
    (the side would be a guess)."""
    from .scan import FileView, read_chunk, scan

    view = FileView(path)
    try:
        sc = scan(view)
        schemas, channels = dict(sc.schemas), dict(sc.channels)
        if sc.complete and not any(s.name == HAND_POSE_RECORD_SCHEMA_NAME for s in schemas.values()):
            return  # the summary lists every schema: no hand channel, no need to read the chunks
        for chunk in sc.chunks:
            contents = read_chunk(view, chunk)
            schemas.update((s.id, s) for s in contents.schemas)
            channels.update((c.id, c) for c in contents.channels)
            for m in contents.messages:
                ch = channels.get(m.channel_id)
                schema = schemas.get(ch.schema_id) if ch is not None else None
                if schema is None or schema.name != HAND_POSE_RECORD_SCHEMA_NAME:
                    continue
                base, _, leaf = ch.topic.rpartition("/")
                side = leaf.removesuffix("_hand")
                if side not in HAND_SIDES or not leaf.endswith("_hand"):
                    raise RecordingError(f"{view.path}: hand pose topic {ch.topic!r} is not <base>/left_hand or "
                                         "<base>/right_hand")
                if base_name is not None and base != base_name:
                    continue
                yield side, ch.topic, decode_hand_pose_record(m.data)
    finally:
        view.close()


def hand_record_times(path: str | os.PathLike, base_name: str = DEFAULT_HAND_BASE_NAME, side: str | None = None
                      ) -> "np.ndarray":
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
