"""A recording played back as producers (`wuji-tactile replay --publish`): one `ReplayProducer`
per collection of an `McapReplay`.

Each gives the frames a `TactileTracker` delivers from the file (metadata validated first,
exactly as live; a faulty record or a session of another layout costs those records, counted in
`tracker.summary()`: `streams.file_tracker`) with their
recorded sample and device times, under the first recorded producer session; the run loop
publishes them (fresh available times, sequences from 0) and republishes the layout on its timer.
Given the recording's objects (`objects`), a frame carries those its recorded scene drew then.
Source-driven: the `McapReplay` paces itself (its `speed`).
"""
from __future__ import annotations

import time
from collections import deque
from typing import Any
from collections.abc import Callable

from ..errors import RecordingError
from ..streams.file_tracker import FileTracker
from ..streams.tracker import TactileFrame
from .base import EXTRA_OBJECT_GEOMS, Frame, Producer

#: `objects(collection_id, available_time_ns)`: a recording's objects at a frame's recorded available
#: time, as `Frame.extras[EXTRA_OBJECT_GEOMS]` (e.g. `integrations.scene_objects.RecordedObjects.extra`).
ObjectsAt = Callable[[str, int], Any]


class ReplayProducer(Producer):
    """One collection of `replay` (an `McapReplay`) as a producer. Build them with
    `for_collections` so every collection is subscribed before the replay starts moving."""

    period_s = None

    def __init__(self, replay: Any, collection_id: str, objects: ObjectsAt | None = None):
        self.replay, self.collection_id = replay, collection_id
        self._objects = objects
        if objects is not None:
            self.extras_provided = frozenset({EXTRA_OBJECT_GEOMS})
        self.tracker = FileTracker(collection_id, replay)
        self.tracker.add_observer(self)
        self.producer_session: int | None = None
        self._frames: deque[TactileFrame] = deque()
        #: Recorded messages republished: the adopted metadata record, then every data frame.
        self.records = 0

    @classmethod
    def for_collections(cls, replay: Any, collection_ids: list[str] | tuple[str, ...], *,
                        objects: ObjectsAt | None = None) -> list[ReplayProducer]:
        """One producer per collection, each with its layout read from the file (the replay
        advances until every collection's first valid metadata; frames met meanwhile are kept).
        `objects(collection_id, available_time_ns)`: the recording's objects at a frame's recorded
        available time, carried as `EXTRA_OBJECT_GEOMS` when wanted (a view of the replay)."""
        producers = [cls(replay, cid, objects) for cid in collection_ids]
        while any(p.producer_session is None for p in producers):
            if replay.finished:
                missing = [p.collection_id for p in producers if p.producer_session is None]
                raise RecordingError(f"{replay.path}: no valid metadata for {', '.join(missing)}: nothing to publish")
            if not sum(p.tracker.update() for p in producers):
                time.sleep(0.001)
        for p in producers:
            adopted = p.tracker.get_metadata()
            assert adopted is not None, "a confirmed producer session means the tracker adopted its metadata"
            p.metadata = adopted
        return producers

    # tracker observer: what the tracker adopted and delivered
    def on_metadata(self, collection_id: str, message, record) -> None:
        if self.producer_session is None:
            self.producer_session = message.producer_session
            self.records += 1

    def on_data(self, collection_id: str, message, frame: TactileFrame) -> None:
        self._frames.append(frame)

    def frames_waiting(self) -> bool:
        return bool(self._frames)

    def next_frame(self) -> Frame | None:
        if not self._frames:
            self.tracker.update()
        if not self._frames:
            self.finished = self.replay.finished and not self.tracker.pending
            return None
        f = self._frames.popleft()
        self.records += 1
        ts = f.timestamp
        extras = None
        if self._objects is not None and EXTRA_OBJECT_GEOMS in self.extras_wanted:
            extras = {EXTRA_OBJECT_GEOMS: self._objects(self.collection_id, ts.available_time_local_common_clock)}
        return Frame(f.forces, ts.sample_time_local_common_clock, ts.sample_time_raw_device_clock, extras)

    def file_metadata(self) -> dict[str, str]:
        return {"producer_kind": "replay", "replayed_file": str(self.replay.path)}

    def close(self) -> None:
        self.tracker.close()
