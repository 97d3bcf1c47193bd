"""The Foxglove view wired to the hand's motion: live from a producer, or from a recording.

- `segment_poses_from_hand(metadata, joint_poses)`: the layout's segment poses in the hand's
  OpenXR wrist frame (the frame of the tactile layout) from 26 OpenXR joint poses in any base
  space (the simulation world, Isaac Teleop's tracker space): `T_wrist_joint = T_base_wrist⁻¹ ·
  T_base_joint`, then the layout's joints picked (`segment_poses_from_joints`).
- `RecordedHands(path)`: a recording's Isaac Teleop hand channels (`<name>/left_hand`,
  `<name>/right_hand`, `core.HandPoseRecord`), looked up by a tactile frame's sample time.
- `HandPoseFeed`: a tracker observer, attached BEFORE the view, that sets the view's segment
  poses for exactly the frame the view is about to draw.
- `FoxgloveSink`: the view as a `FrameSink` of the run loop (`sim/hw/replay --foxglove`): its own
  trackers on the producers' transport, the hand poses a frame carries
  (`Frame.extras[EXTRA_HAND_JOINT_POSES]`) or a recording's, the force images a frame carries.
- The same scene written into a producer's recording: `scene_recording.ViewRecording`.
"""
from __future__ import annotations

import logging
import os
import time
from typing import Any
from collections.abc import Callable, Sequence

import numpy as np

from ..contract.geometry import rebase_to_root
from ..recording.hand_channels import decode_hand_message, is_hand_channel
from ..contract.joints import HandJoint
from ..contract.metadata import TactileMetadata
from ..errors import RecordedSceneError, RecordingError, TactileError
from ..producers.base import EXTRA_FORCE_IMAGES, EXTRA_HAND_JOINT_POSES, EXTRA_OBJECT_GEOMS, Frame, FrameSink
from .foxglove_scene import ObjectGeoms, object_geoms
from .foxglove_view import FoxgloveView, segment_poses_from_joints

_JOINT_IDS = range(int(HandJoint.NUM_JOINTS))
#: Hand poses kept per collection for frames the view's tracker has not delivered yet (a network
#: transport delivers late): 2.5 s at 100 Hz.
_MAX_PENDING = 256
HAND_SIDES = ("left", "right")


def segment_poses_from_hand(metadata: TactileMetadata, joint_poses: object) -> np.ndarray:
    """(J, 7) segment poses of `metadata`'s layout in the hand's OpenXR wrist frame, from the
    hand's (26, 7) OpenXR joint poses in any base space."""
    poses = np.asarray(joint_poses, dtype=np.float64)
    return segment_poses_from_joints(metadata, rebase_to_root(poses[int(HandJoint.WRIST)], poses), _JOINT_IDS)


def side_of_collection(collection_id: str, default: str | None = None) -> str | None:
    """The hand side a collection shows: its id's last part when that is `left`/`right`
    (`tactile/right`), else `default` (e.g. a recording's `hand_side`)."""
    last = collection_id.rsplit("/", 1)[-1]
    return last if last in HAND_SIDES else default


class RecordedHands:
    """A recording's hand channels, for `lookup(side, sample_time_ns)`.

    Reads every `core.HandPoseRecord` message on `<name>/left_hand` / `<name>/right_hand`
    (`name` = the file's `hand_channels` metadata, else the first such pair found). A lookup
    returns the joint poses of the record with that sample time, else of the latest record
    before it (hold), or None when the hand was not tracked then. `open(path)` is None for a
    file without hand channels."""

    def __init__(self, samples: dict[str, tuple[np.ndarray, list]], name: str, hand_side: str | None):
        self._samples = samples  # side -> (sorted sample times, poses or None per record)
        self.name = name
        self.hand_side = hand_side

    @classmethod
    def open(cls, path: str | os.PathLike) -> RecordedHands | None:
        from mcap.reader import make_reader

        try:
            with open(path, "rb") as f:
                reader = make_reader(f)
                summary = reader.get_summary()
                if summary is None:
                    return None  # an unindexed (cut-off) file: no hand lookup; the view shows the bind pose
                meta = {}
                for m in reader.iter_metadata():
                    if m.name == "wuji_tactile_device":
                        meta = dict(m.metadata)
                topics: dict[str, tuple[str, str]] = {}  # topic -> (base name, side)
                for ch in summary.channels.values():
                    schema = summary.schemas.get(ch.schema_id)
                    if schema is None or not is_hand_channel(schema.name, ch.metadata):
                        continue
                    base, _, leaf = ch.topic.rpartition("/")
                    if leaf in ("left_hand", "right_hand") and base:
                        topics[ch.topic] = (base, leaf.removesuffix("_hand"))
                if not topics:
                    return None
                names = [b for b, _ in topics.values()]
                wanted = meta.get("hand_channels")
                name = wanted if wanted is not None and wanted in names else names[0]
                chosen = [t for t, (b, _) in topics.items() if b == name]
                times: dict[str, list[int]] = {s: [] for s in HAND_SIDES}
                poses: dict[str, list] = {s: [] for s in HAND_SIDES}
                for schema, channel, message in reader.iter_messages(topics=chosen):
                    side = topics[channel.topic][1]
                    assert schema is not None, "only channels with a hand schema were chosen"
                    sample = decode_hand_message(schema.name, message.data)  # either recording profile
                    times[side].append(sample.timestamp.sample_time_local_common_clock)
                    poses[side].append(None if sample.poses is None else np.array(sample.poses, dtype=np.float64))
        except OSError as exc:
            raise RecordingError(f"cannot read the hand channels of {path}: {exc.strerror or exc}") from exc
        samples = {}
        for side in HAND_SIDES:
            order = np.argsort(np.asarray(times[side], dtype=np.int64), kind="stable")
            samples[side] = (np.asarray(times[side], dtype=np.int64)[order], [poses[side][k] for k in order])
        return cls(samples, name, meta.get("hand_side"))

    def lookup(self, side: str, sample_time_ns: int) -> np.ndarray | None:
        """(26, 7) joint poses of `side` at `sample_time_ns` (or the latest before), or None."""
        times, poses = self._samples[side]
        k = int(np.searchsorted(times, sample_time_ns, side="right")) - 1
        return poses[k] if k >= 0 else None


PoseSource = Callable[[str, Any], "np.ndarray | None"]  # (collection_id, tracker frame) -> (26, 7) or None


ObjectSource = Callable[[str, Any], "ObjectGeoms | None"]  # (collection_id, tracker frame) -> objects or None


class HandPoseFeed:
    """Tracker observer: before the view draws a frame, set its segment poses from
    `poses_for(collection_id, frame)` (joint poses in any base space; None keeps the last ones)
    and its objects from `objects_for(collection_id, frame)` (None: none), each when given."""

    def __init__(self, view: FoxgloveView, trackers: Sequence[Any], poses_for: PoseSource | None,
                 objects_for: ObjectSource | None = None):
        self._view, self._poses_for, self._objects_for = view, poses_for, objects_for
        self._metadata = {t.collection_id: None for t in trackers}
        self.applied = 0

    def on_metadata(self, collection_id: str, message: Any, record: Any) -> None:
        self._metadata[collection_id] = record.metadata

    def on_data(self, collection_id: str, message: Any, frame: Any) -> None:
        objects = None
        if self._objects_for is not None:
            objects = self._objects_for(collection_id, frame)
            self._view.set_objects(collection_id, objects)
        joints = None if self._poses_for is None else self._poses_for(collection_id, frame)
        metadata = self._metadata.get(collection_id)
        if joints is not None and metadata is not None:
            self._view.set_hand_pose(collection_id, joints, objects)
            self.applied += 1


#: Latest time the viewers' timestamps hold [ns]: `Timestamp.sec` is an unsigned 32-bit count.
MAX_VIEW_TIME_NS = (2**32 - 1) * 1_000_000_000 + 999_999_999
log = logging.getLogger("wuji_tactile_device.foxglove")


class ViewGuard:
    """Between the trackers and the view: what another process publishes on a shown collection
    cannot end the view. A record the view cannot show (a time before 0 or past
    `MAX_VIEW_TIME_NS`, which the viewers' unsigned times cannot hold, or one the view refuses
    with a `TactileError`) is counted in `skipped` and skipped; the first is logged as a warning.
    `update(tracker)` does the same for what a tracker raises (another layout on the collection)."""

    def __init__(self, view: FoxgloveView):
        self.view = view
        self.skipped = 0
        self.last_reason = ""

    def attach(self, tracker: Any) -> None:
        if tracker.collection_id not in self.view.collections:
            self.view.attach(tracker)  # its ValueError names the view's collections
        tracker.add_observer(self)

    def skip(self, reason: str) -> None:
        self.skipped += 1
        self.last_reason = reason
        if self.skipped == 1:
            log.warning("foxglove view: skipped %s (further ones are counted)", reason)

    def _times_ok(self, collection_id: str, what: str, timestamp: Any) -> bool:
        for name in ("sample_time_local_common_clock", "available_time_local_common_clock"):
            t = int(getattr(timestamp, name))
            if not 0 <= t <= MAX_VIEW_TIME_NS:
                self.skip(f"{collection_id}: {what} with {name} = {t} ns (the viewers' times are 0 … "
                          f"{MAX_VIEW_TIME_NS} ns)")
                return False
        return True

    def on_metadata(self, collection_id: str, message: Any, record: Any) -> None:
        if self._times_ok(collection_id, f"metadata of producer session {message.producer_session:016x}",
                          record.timestamp):
            self._forward(self.view.on_metadata, collection_id, message, record)

    def on_data(self, collection_id: str, message: Any, frame: Any) -> None:
        if self._times_ok(collection_id, f"frame {message.sequence} of producer session "
                                         f"{message.producer_session:016x}", frame.timestamp):
            self._forward(self.view.on_data, collection_id, message, frame)

    def _forward(self, call: Callable, *args: Any) -> None:
        try:
            call(*args)
        except TactileError as exc:
            self.skip(str(exc))

    def update(self, tracker: Any) -> int:
        """`tracker.update()`; a `TactileError` it raises is counted and skipped (0 frames), except
        a `RecordedSceneError` (a viewed file's own scene topic), which propagates."""
        try:
            return tracker.update()
        except RecordedSceneError:
            raise
        except TactileError as exc:
            self.skip(str(exc))
            return 0


def attach_with_hands(view: FoxgloveView, trackers: Sequence[Any], poses_for: PoseSource | None,
                      objects_for: ObjectSource | None = None) -> ViewGuard:
    """Attach `view` to `trackers` through a `ViewGuard` (returned), with a `HandPoseFeed` ahead
    of it when `poses_for` or `objects_for` is given (e.g. a recording's hand channels and its
    scene's objects: `recorded_pose_source`, `scene_objects.recorded_object_source`)."""
    if poses_for is not None or objects_for is not None:
        feed = HandPoseFeed(view, trackers, poses_for, objects_for)
        for tracker in trackers:
            tracker.add_observer(feed)
    guard = ViewGuard(view)
    for tracker in trackers:
        guard.attach(tracker)
    return guard


def attach_recording(view: FoxgloveView, trackers: Sequence[Any], path: str,
                     collections: Sequence[str]) -> tuple[ViewGuard, RecordedHands | None, Any]:
    """`attach_with_hands` for a view of the recording `path`: the taxels on its recorded hand and
    the objects its scene topics drew (`scene_objects.RecordedObjects`). Returns the guard, the
    hands and the objects (each None when the file has none); the caller closes the objects."""
    from .scene_objects import RecordedObjects, recorded_object_source

    hands = RecordedHands.open(path)
    objects = RecordedObjects.open(path, collections)
    try:
        guard = attach_with_hands(view, trackers, None if hands is None else recorded_pose_source(hands),
                                  None if objects is None else recorded_object_source(objects))
    except BaseException:
        if objects is not None:
            objects.close()
        raise
    return guard, hands, objects


def recorded_pose_source(hands: RecordedHands) -> PoseSource:
    """`poses_for` from a recording's hand channels, by the collection's side and the frame's sample time."""
    def poses_for(collection_id: str, frame: Any):
        side = side_of_collection(collection_id, hands.hand_side)
        return None if side is None else hands.lookup(side, frame.timestamp.sample_time_local_common_clock)
    return poses_for


class FoxgloveSink(FrameSink):
    """The live Foxglove view of the producers' collections as a sink of the run loop.

    Owns a `FoxgloveView` and one `TactileTracker` per collection on `transport` (created before
    the producers publish). Per frame it queues the hand poses the frame carries, lets the
    trackers deliver (in-process: the frame just published), and publishes the frame's force
    images (at most `images_rate_hz` per second of sample time). `hands`: a recording's hand
    channels for frames that carry none (a replay)."""

    def __init__(self, transport: Any, collections: Sequence[str], *, hands: RecordedHands | None = None,
                 images_rate_hz: float = 30.0, **view_options: Any):
        from ..streams.tracker import TactileTracker

        self.view = FoxgloveView(collections, **view_options)
        self.trackers = []
        self._pending: dict[str, dict[int, np.ndarray]] = {cid: {} for cid in self.view.collections}
        # objects a frame carried, by sample time, until the view draws that frame; then the shown ones
        self._pending_objects: dict[str, dict[int, ObjectGeoms]] = {cid: {} for cid in self.view.collections}
        self._objects: dict[str, ObjectGeoms] = {}
        self._hands = hands
        self._images_period_ns = int(1e9 / images_rate_hz)
        self._last_images: dict[str, int] = {}
        self.guard = ViewGuard(self.view)
        self._told = self._told_skips = self._told_refused = False
        self.refused = 0  # data frames of other producers the trackers refused (counted, skipped)
        self.last_refused = ""
        try:
            for cid in self.view.collections:  # a peer's faulty frame is counted, not fatal
                self.trackers.append(TactileTracker(cid, transport, error_policy="drop"))
            self.guard = attach_with_hands(self.view, self.trackers, self._poses_for, self._objects_for)
        except BaseException:
            self.close()
            raise

    @property
    def port(self) -> int:
        return self.view.port

    def for_collection(self, collection_id: str) -> _CollectionSink:
        """The sink to give the runner of `collection_id` (frames carry no collection id)."""
        return _CollectionSink(self, collection_id)

    def _poses_for(self, collection_id: str, frame: Any):
        t = frame.timestamp.sample_time_local_common_clock
        pending = self._pending[collection_id]
        joints = pending.pop(t, None)
        for old in [k for k in pending if k < t]:  # frames the transport dropped
            del pending[old]
        if joints is None and self._hands is not None:
            joints = recorded_pose_source(self._hands)(collection_id, frame)
        return joints

    def _objects_for(self, collection_id: str, frame: Any):
        """The objects of the latest frame published at or before this one (a network transport
        delivers late: those of later frames wait)."""
        t = frame.timestamp.sample_time_local_common_clock
        pending = self._pending_objects[collection_id]
        for k in [k for k in pending if k <= t]:  # in publishing order: the last one is the latest
            self._objects[collection_id] = pending.pop(k)
        return self._objects.get(collection_id)

    def frame_published(self, collection_id: str, frame: Frame) -> None:
        extras = frame.extras or {}
        objects = object_geoms(extras.get(EXTRA_OBJECT_GEOMS))  # a producer's, or a replayed file's
        if objects is not None:
            pending_objects = self._pending_objects[collection_id]
            pending_objects[frame.sample_time_ns] = objects
            if len(pending_objects) > _MAX_PENDING:  # the view's tracker is not keeping up: forget the oldest
                del pending_objects[next(iter(pending_objects))]
        joints = extras.get(EXTRA_HAND_JOINT_POSES)
        if joints is not None:
            pending = self._pending[collection_id]
            pending[frame.sample_time_ns] = np.array(joints, dtype=np.float64)
            if len(pending) > _MAX_PENDING:  # the view's tracker is not keeping up: forget the oldest
                del pending[min(pending)]
        self.poll()
        images = extras.get(EXTRA_FORCE_IMAGES)
        if images is not None:
            last = self._last_images.get(collection_id)
            if last is None or frame.sample_time_ns - last >= self._images_period_ns or frame.sample_time_ns < last:
                self._last_images[collection_id] = frame.sample_time_ns
                self.view.publish_images(collection_id, images, frame.sample_time_ns)

    def poll(self) -> None:
        for tracker in self.trackers:
            counters = tracker.counters
            before = counters.rejected
            raised = 0
            try:
                tracker.update()
            except TactileError as exc:  # another layout on the collection: the guard counts it
                self.guard.skip(str(exc))
                raised = 1
            dropped = counters.rejected - before - raised  # a peer's faulty frame (NaN, wrong size)
            if dropped > 0:
                self.refused += dropped
                self.last_refused = counters.last_error
                if self.refused == dropped:
                    log.warning("foxglove view: refused %s (further ones are counted)", counters.last_error)

    def hold(self, seconds: float | None) -> None:
        """Keep serving for `seconds` (None: nothing), delivering what still arrives."""
        if not seconds:
            return
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.poll()
            time.sleep(0.02)

    def close(self) -> None:
        """Close the trackers and the view (server stopped, MCAP finished). Idempotent."""
        for tracker in self.trackers:
            tracker.close()
        self.trackers = []
        self.view.close()
        counters = self.view.server_counters
        if counters is not None and (counters.dropped_backlog or counters.refused_over_limit) and not self._told:
            self._told = True
            log.warning("foxglove: %s", counters.summary())
        if self.guard.skipped and not self._told_skips:
            self._told_skips = True
            log.warning("foxglove view: %d record(s) skipped (last: %s)", self.guard.skipped, self.guard.last_reason)
        if self.refused and not self._told_refused:
            self._told_refused = True
            log.warning("foxglove view: %d frame(s) from other producers refused (last: %s)", self.refused,
                        self.last_refused)


class _CollectionSink(FrameSink):
    def __init__(self, sink: FoxgloveSink, collection_id: str):
        self._sink, self._cid = sink, collection_id

    def on_frame(self, frame, sequence, timestamp) -> None:
        self._sink.frame_published(self._cid, frame)

    def poll(self) -> None:
        self._sink.poll()


__all__ = ["FoxgloveSink", "HandPoseFeed", "MAX_VIEW_TIME_NS", "ViewGuard", "RecordedHands", "attach_with_hands", "attach_recording", "recorded_pose_source",
           "segment_poses_from_hand", "side_of_collection"]
