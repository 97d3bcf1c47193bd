"""Isaac Teleop retargeting-graph nodes for tactile collections (optional extra `isaacteleop`).

- `TactileSource(name, collection_id, num_segments, num_taxels)`: the graph's entry point for one
  collection (default: live over the package's default Zenoh configuration; `source=` a transport
  or an `McapReplay`, or `tracker=`). A leaf without graph inputs that reads its own
  `TactileTracker` each run — so a `TeleopSession` runs it with no `external_inputs` — and emits
  `taxel_forces` `(num_taxels, 3)` float32 [N, taxel axes] and `tactile_layout` (segment joint
  ids, segment bind poses, taxel bind poses, segment indices, segment weights). Both outputs are
  `OptionalType`: absent (`is_none`) until the tracker has confirmed the collection's metadata
  (forces: until the first frame after that). The constructor counts fix the output shapes, as
  in Isaac Teleop's own source nodes; metadata with other counts raises `DataLayoutError`.
- `TaxelSkinning`: `tactile_layout` + one hand's joint poses in the hand tracker's base space
  (Isaac Teleop's `HandInput`) [+ `taxel_forces`] → taxel positions in the wrist frame and in
  base space [m] and, for rigidly attached taxels, taxel forces rotated into base space [N]. The
  math is the contract core's (`geometry.rebase_to_root`, `skin_taxel_positions`, `rigid_taxel_poses`).
- `PadForceMagnitude`: taxel forces + layout → the magnitude of each finger pad's resultant
  force, `TactileVector(5)` [N] (thumb … pinky), ready for Isaac Teleop's
  `TactileVectorToFingerPower`.

The engine is pure Python and runs without an XR runtime: build the graph with `connect()`, then
per step `graph.execute_pipeline({...})` (the tactile source needs no entry), or hand the graph to
an Isaac Teleop `TeleopSession` (`examples/tactile/teleop_session_replay.py`).
"""
from __future__ import annotations

import time
from enum import IntEnum
from typing import Any, NamedTuple
from collections.abc import Iterator

import numpy as np

from ..contract import ARRAY_FIELDS, DEFAULT_MAX_FLATBUFFER_SIZE, HandJoint, TactileMetadata, geometry, validate_collection_id
from ..contract.pads import NUM_PADS, pad_layout, pad_resultants
from ..streams.tracker import TactileFrame, TactileTracker
from ..errors import DataLayoutError, TactileError

ISAACTELEOP_EXTRA = "pip install 'wuji-tactile-device[isaacteleop]'"


class MissingIsaacTeleopError(TactileError, ImportError):
    """Raised on import when the optional extra `isaacteleop` is not installed."""


try:
    from isaacteleop.retargeting_engine.interface import (
        BaseRetargeter, ComputeContext, GraphTime, OptionalType, RetargeterIO, RetargeterIOType,
        TensorGroupType)
    from isaacteleop.retargeting_engine.tensor_types import (
        DLDataType, HandInput, HandInputIndex, NDArrayType, TactileVector)
except ImportError as _exc:  # the optional extra is missing
    raise MissingIsaacTeleopError(
        "wuji_tactile_device.integrations.isaacteleop needs Isaac Teleop's retargeting engine (package "
        f"'isaacteleop'), which is not installed: {ISAACTELEOP_EXTRA}") from _exc

#: `TactileSource` (live stepping) withholds the newest frame once no new one arrived for this long
#: [s]: ten periods of a 100 Hz producer.
DEFAULT_STALE_AFTER_S = 0.1

__all__ = [
    "TactileSource", "TaxelSkinning", "PadForceMagnitude", "TactileSample", "TaxelForces", "TaxelPositions", "TactileLayout", "TactileLayoutIndex",
    "layout_from_metadata", "graph_time_of", "MissingIsaacTeleopError", "DEFAULT_STALE_AFTER_S",
]


# ============================================================================
# Tensor types
# ============================================================================

def TaxelForces(num_taxels: int) -> TensorGroupType:
    """Per-taxel force vectors: one `(num_taxels, 3)` float32 tensor [N, each taxel's axes]."""
    return TensorGroupType(f"taxel_forces_{num_taxels}", [
        NDArrayType("taxel_forces", shape=(num_taxels, 3), dtype=DLDataType.FLOAT, dtype_bits=32)])


def TaxelPositions(num_taxels: int, frame: str) -> TensorGroupType:
    """Per-taxel positions: one `(num_taxels, 3)` float32 tensor [m] in `frame`."""
    return TensorGroupType(f"taxel_positions_{frame}_{num_taxels}", [
        NDArrayType(f"taxel_positions_{frame}", shape=(num_taxels, 3), dtype=DLDataType.FLOAT,
                    dtype_bits=32)])


def TactileLayout(num_segments: int, num_taxels: int) -> TensorGroupType:
    """A collection's static LBS layout as graph tensors (index with `TactileLayoutIndex`):

    - `segment_joint_ids` `(J,)` int32: the `HandJoint` of each segment (HandSkeletonRef order);
    - `segment_bind_poses` `(J, 7)` float32: joint-local → wrist frame, bind configuration;
    - `taxel_bind_poses` `(N, 7)` float32: taxel → wrist frame, bind configuration;
    - `segment_indices` `(N, 4)` int32: indices into the segment list;
    - `segment_weights` `(N, 4)` float32: LBS weights (sum 1 per taxel).
    Poses are x, y, z [m], qx, qy, qz, qw. The wire format stores float32, so float32 here is exact.
    """
    rows = {"segments": num_segments, "taxels": num_taxels}
    return TensorGroupType(f"tactile_layout_{num_segments}x{num_taxels}", [
        NDArrayType("segment_joint_ids", shape=(num_segments,), **_GRAPH_DTYPE["index"]),
        *(NDArrayType(f.name, shape=(rows[f.rows], f.width), **_GRAPH_DTYPE[f.kind]) for f in ARRAY_FIELDS),
    ])


#: Graph dtype of each metadata array kind (indices as int32; poses and weights float32, as on the wire).
_GRAPH_DTYPE = {"pose": dict(dtype=DLDataType.FLOAT, dtype_bits=32), "weight": dict(dtype=DLDataType.FLOAT, dtype_bits=32),
                "index": dict(dtype=DLDataType.INT, dtype_bits=32)}
_NUMPY_DTYPE = {"pose": np.float32, "weight": np.float32, "index": np.int32}

#: Tensor positions inside a `TactileLayout` group: SEGMENT_JOINT_IDS, then one per metadata array
#: (SEGMENT_BIND_POSES, TAXEL_BIND_POSES, SEGMENT_INDICES, SEGMENT_WEIGHTS).
TactileLayoutIndex = IntEnum("TactileLayoutIndex", ["SEGMENT_JOINT_IDS", *(f.name.upper() for f in ARRAY_FIELDS)],
                             start=0, module=__name__)


class TactileSample(NamedTuple):
    """What `TactileSource` emits in one step: the confirmed metadata (None until confirmed) and
    the frame (None: none yet, stale, or the replay has ended)."""

    metadata: TactileMetadata | None
    frame: TactileFrame | None


def layout_from_metadata(metadata: TactileMetadata) -> tuple[np.ndarray, ...]:
    """The five `TactileLayout` arrays of a metadata (new, read-only, contiguous)."""
    arrays = (
        np.asarray([int(j) for j in metadata.joint_ids], dtype=np.int32),
        *(np.ascontiguousarray(getattr(metadata, f.name), dtype=_NUMPY_DTYPE[f.kind]) for f in ARRAY_FIELDS),
    )
    for a in arrays:
        a.flags.writeable = False
    return arrays


def _check_counts(what: str, num_segments: int, num_taxels: int) -> None:
    for label, value in (("num_segments", num_segments), ("num_taxels", num_taxels)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{what}: {label} must be a positive int, got {value!r}")


# ============================================================================
# TactileSource
# ============================================================================

class TactileSource(BaseRetargeter):
    """Source node: a tactile collection's confirmed layout and force frames as graph tensors.

    `TactileSource(name, collection_id, num_segments, num_taxels)` reads the collection live from
    the package's default Zenoh configuration (`streams.open_transport("zenoh")`, loopback unless
    configured otherwise; the node owns and closes it). `source=` (a transport or an `McapReplay`;
    the node creates its tracker) or `tracker=` (an existing `TactileTracker` of the collection)
    choose another origin.

    The node has no graph inputs: it reads its tracker itself each time the graph runs, so an
    Isaac Teleop `TeleopSession` runs it as a self-contained leaf — no `external_inputs`. (It
    cannot be an `IDeviceIOSource`: Isaac Teleop's DeviceIO sessions accept only its native C++
    trackers; see docs/retargeting.md.) Two ways of stepping, `step=`:

    - `"live"` (default for transports): each run takes the newest frame; when no new frame has
      arrived for `stale_after_s`, forces turn absent instead of repeating the last touch.
    - `"replay"` (default for an `McapReplay` source): each run takes the NEXT recorded frame, one
      per step, as Isaac Teleop's `ReplaySession` advances its trackers one record per
      `update()`; a recording with one hand record per tactile frame stays in lockstep. After the
      last frame, forces are absent and `finished` is True.

    Outputs (Optional; absent until the metadata is confirmed / the first frame arrived):
        - `taxel_forces`: `TaxelForces(num_taxels)` [N, taxel axes];
        - `tactile_layout`: `TactileLayout(num_segments, num_taxels)`.
    `last_frame` is the frame the latest run emitted (its timestamp, sequence), or None.
    """

    TAXEL_FORCES = "taxel_forces"
    TACTILE_LAYOUT = "tactile_layout"
    STEPS = ("live", "replay")

    def __init__(self, name: str, collection_id: str, num_segments: int, num_taxels: int, *,
                 source: Any = None, tracker: TactileTracker | None = None, step: str | None = None,
                 max_flatbuffer_size: int = DEFAULT_MAX_FLATBUFFER_SIZE,
                 stale_after_s: float | None = DEFAULT_STALE_AFTER_S) -> None:
        _check_counts(f"TactileSource {name!r}", num_segments, num_taxels)
        if stale_after_s is not None and not (np.isfinite(stale_after_s) and stale_after_s > 0):
            raise ValueError(f"TactileSource {name!r}: stale_after_s must be None or > 0 [s], got {stale_after_s!r}")
        if step is not None and step not in self.STEPS:
            raise ValueError(f"TactileSource {name!r}: step must be one of {self.STEPS} or None, got {step!r}")
        if source is not None and tracker is not None:
            raise TypeError(f"TactileSource {name!r}: pass at most one of source= (transport or MCAP replay) "
                            "or tracker= (a TactileTracker)")
        self._stale_after_ns = None if stale_after_s is None else int(stale_after_s * 1e9)
        self._last_new_frame_ns: int | None = None  # local monotonic clock of the last run that got one
        self._collection_id = validate_collection_id(collection_id)
        self._num_segments = int(num_segments)
        self._num_taxels = int(num_taxels)
        self._owned_transport = None
        if tracker is not None:
            if tracker.collection_id != collection_id:
                raise TactileError(f"TactileSource {name!r}: tracker reads collection "
                                   f"{tracker.collection_id!r}, not {collection_id!r}")
        else:
            if source is None:
                from ..streams import open_transport
                source = self._owned_transport = open_transport("zenoh")
            tracker = TactileTracker(collection_id, source, max_flatbuffer_size=max_flatbuffer_size)
        self._replay = source if source is not None and hasattr(source, "finished") else None
        self._step = step or ("replay" if self._replay is not None else "live")
        self._frames: Iterator[TactileFrame] | None = None
        self._tracker = tracker
        self._layout_of: tuple[TactileMetadata, tuple[np.ndarray, ...]] | None = None
        self.last_frame: TactileFrame | None = None
        super().__init__(name)

    @property
    def collection_id(self) -> str:
        return self._collection_id

    @property
    def step(self) -> str:
        """"live" or "replay" (see the class doc)."""
        return self._step

    @property
    def finished(self) -> bool:
        """Replay stepping: True once every recorded frame was emitted (never for live)."""
        return self._step == "replay" and self._replay is not None and self._replay.finished and self.last_frame is None

    def get_tracker(self) -> TactileTracker:
        """The `TactileTracker` this node reads."""
        return self._tracker

    def close(self) -> None:
        """Close the tracker and the Zenoh transport the node opened itself (idempotent)."""
        self._tracker.close()
        if self._owned_transport is not None:
            self._owned_transport.close()
            self._owned_transport = None

    def read_sample(self) -> TactileSample:
        """Update the tracker and return what this step emits (called by every graph run)."""
        if self._step == "replay":
            self.last_frame = self._next_replay_frame()
            return TactileSample(self._tracker.get_metadata(), self.last_frame)
        delivered = self._tracker.update()
        now = time.monotonic_ns()
        if delivered:
            self._last_new_frame_ns = now
        frame = self._tracker.get_data()
        if self._stale_after_ns is not None and frame is not None and (
                self._last_new_frame_ns is None or now - self._last_new_frame_ns > self._stale_after_ns):
            frame = None
        self.last_frame = frame
        return TactileSample(self._tracker.get_metadata(), frame)

    def _next_replay_frame(self) -> TactileFrame | None:
        """The next recorded frame, or None when none is available this step (end of the file,
        or a paced replay whose next frame is not due yet)."""
        for _ in range(2):  # the current drain, then one fresh drain
            if self._frames is None:
                self._frames = self._tracker.frames()
            frame = next(self._frames, None)
            if frame is not None:
                return frame
            self._frames = None
        return None

    def input_spec(self) -> RetargeterIOType:
        return {}

    def output_spec(self) -> RetargeterIOType:
        return {
            self.TAXEL_FORCES: OptionalType(TaxelForces(self._num_taxels)),
            self.TACTILE_LAYOUT: OptionalType(TactileLayout(self._num_segments, self._num_taxels)),
        }

    def _layout_arrays(self, metadata: TactileMetadata) -> tuple[np.ndarray, ...]:
        if self._layout_of is None or self._layout_of[0] is not metadata:
            if (metadata.num_segments, metadata.num_taxels) != (self._num_segments, self._num_taxels):
                raise DataLayoutError(
                    f"TactileSource {self.name!r}: collection {self._collection_id!r} was built for "
                    f"num_segments={self._num_segments}, num_taxels={self._num_taxels}, but its "
                    f"confirmed metadata has num_segments={metadata.num_segments}, "
                    f"num_taxels={metadata.num_taxels}")
            self._layout_of = (metadata, layout_from_metadata(metadata))
        return self._layout_of[1]

    def _compute_fn(self, inputs: RetargeterIO, outputs: RetargeterIO, context) -> None:
        sample = self.read_sample()
        forces_out = outputs[self.TAXEL_FORCES]
        layout_out = outputs[self.TACTILE_LAYOUT]
        if sample.metadata is None:
            forces_out.set_none()
            layout_out.set_none()
            return
        for i, array in enumerate(self._layout_arrays(sample.metadata)):
            layout_out[i] = array
        if sample.frame is None:
            forces_out.set_none()
            return
        forces = sample.frame.forces
        if forces.shape != (self._num_taxels, 3):
            raise DataLayoutError(f"TactileSource {self.name!r}: frame of collection "
                                  f"{self._collection_id!r} has shape {forces.shape}, expected "
                                  f"({self._num_taxels}, 3)")
        # Zero-copy: the tracker's array is a read-only float32 view of the received record, which
        # it keeps alive; downstream nodes cannot modify the tracker's data through it.
        forces_out[0] = forces


# ============================================================================
# TaxelSkinning
# ============================================================================

class TaxelSkinning(BaseRetargeter):
    """Taxel positions (and, for rigid attachments, forces) on the moving hand.

    Inputs:
        - `tactile_layout`: Optional `TactileLayout(num_segments, num_taxels)`;
        - `hand`: Optional `HandInput` — one hand's 26 OpenXR joint poses in the hand tracker's
          base space (e.g. `HandsSource.output("hand_right")`);
        - `taxel_forces`: Optional `TaxelForces(num_taxels)` [N, taxel axes] (leave unconnected
          when only positions are wanted).
    Outputs (Optional; absent while any input they need is absent or the wrist or a segment's
    joint is not valid in this hand sample):
        - `taxel_positions_wrist`: `(N, 3)` [m], current wrist frame (LBS);
        - `taxel_positions_base`: `(N, 3)` [m], base space: `T_base_wrist · p_wrist`;
        - `taxel_forces_base`: `(N, 3)` [N], forces rotated (never translated) into base space
          by each taxel's rigid transform. A layout with a taxel blended over several segments
          has no unique taxel frame: forces then raise `DataLayoutError` (positions still work).
    Current joint poses in the wrist frame come from the same hand sample:
    `T_root_joint = T_base_wrist⁻¹ · T_base_joint` (full rebasing, not a position subtraction).
    """

    TACTILE_LAYOUT = "tactile_layout"
    HAND = "hand"
    TAXEL_FORCES = "taxel_forces"
    POSITIONS_WRIST = "taxel_positions_wrist"
    POSITIONS_BASE = "taxel_positions_base"
    FORCES_BASE = "taxel_forces_base"

    def __init__(self, name: str, num_segments: int, num_taxels: int) -> None:
        _check_counts(f"TaxelSkinning {name!r}", num_segments, num_taxels)
        self._num_segments = int(num_segments)
        self._num_taxels = int(num_taxels)
        self._layout_cache: tuple[tuple[np.ndarray, ...], TactileMetadata] | None = None
        super().__init__(name)

    def input_spec(self) -> RetargeterIOType:
        return {
            self.TACTILE_LAYOUT: OptionalType(TactileLayout(self._num_segments, self._num_taxels)),
            self.HAND: OptionalType(HandInput()),
            self.TAXEL_FORCES: OptionalType(TaxelForces(self._num_taxels)),
        }

    def output_spec(self) -> RetargeterIOType:
        n = self._num_taxels
        return {
            self.POSITIONS_WRIST: OptionalType(TaxelPositions(n, "wrist")),
            self.POSITIONS_BASE: OptionalType(TaxelPositions(n, "base")),
            self.FORCES_BASE: OptionalType(TaxelForces(n)),
        }

    def _compute_fn(self, inputs: RetargeterIO, outputs: RetargeterIO, context) -> None:
        layout, hand, forces = inputs[self.TACTILE_LAYOUT], inputs[self.HAND], inputs[self.TAXEL_FORCES]
        pos_wrist, pos_base, forces_base = (outputs[self.POSITIONS_WRIST], outputs[self.POSITIONS_BASE],
                                            outputs[self.FORCES_BASE])
        if layout.is_none or hand.is_none:
            for out in (pos_wrist, pos_base, forces_base):
                out.set_none()
            return
        joint_ids = np.asarray(layout[TactileLayoutIndex.SEGMENT_JOINT_IDS], dtype=np.int64)
        valid = np.asarray(hand[HandInputIndex.JOINT_VALID]).astype(bool)
        if not (valid[int(HandJoint.WRIST)] and valid[joint_ids].all()):
            for out in (pos_wrist, pos_base, forces_base):
                out.set_none()
            return

        base_poses = np.concatenate([np.asarray(hand[HandInputIndex.JOINT_POSITIONS], dtype=np.float64),
                                     np.asarray(hand[HandInputIndex.JOINT_ORIENTATIONS], dtype=np.float64)],
                                    axis=1)  # (26, 7) in base space
        t_base_wrist = base_poses[int(HandJoint.WRIST)]
        current = geometry.rebase_to_root(t_base_wrist, base_poses[joint_ids])  # (J, 7) wrist frame
        metadata = self._metadata_of(layout)
        if forces.is_none:
            p_wrist = geometry.skin_taxel_positions(metadata, current)  # LBS
            forces_base.set_none()
        else:
            # Forces need each taxel's rigid frame C·B⁻¹·T_bind (refused for blended taxels); its
            # translation is the LBS position of a rigid taxel, so one call serves both.
            taxel_poses = geometry.rigid_taxel_poses(metadata, current)
            p_wrist = taxel_poses[:, :3]
            f_wrist = geometry.pose_rotate(taxel_poses, forces[0])
            forces_base[0] = geometry.pose_rotate(t_base_wrist, f_wrist).astype(np.float32)
        pos_wrist[0] = p_wrist.astype(np.float32)
        pos_base[0] = geometry.pose_apply(t_base_wrist, p_wrist).astype(np.float32)

    def _metadata_of(self, layout) -> TactileMetadata:
        """The layout as a `TactileMetadata` for the core geometry functions, rebuilt only when
        different arrays arrive (`TactileSource` sends the same arrays for a whole session)."""
        arrays = tuple(layout[i] for i in TactileLayoutIndex)
        if self._layout_cache is None or any(a is not b for a, b in zip(self._layout_cache[0], arrays, strict=True)):
            self._layout_cache = (arrays, TactileMetadata(*arrays))
        return self._layout_cache[1]


# ============================================================================
# PadForceMagnitude
# ============================================================================

class PadForceMagnitude(BaseRetargeter):
    """Magnitude of each finger pad's resultant force, thumb … pinky, `TactileVector(5)` [N].

    Each taxel force is rotated into its pad frame (see `wuji_tactile_device.contract.pads`) and summed
    per pad; the output is the Euclidean norm of that resultant — frame-invariant, so it feeds
    Isaac Teleop's `TactileVectorToFingerPower` directly.

    Inputs: `taxel_forces` (Optional `TaxelForces(N)`), `tactile_layout` (Optional
    `TactileLayout(J, N)`). Output: `finger_force` (required `TactileVector(5)`): while either
    input is absent it is all zeros — no contact known, so a haptic device stays silent (the
    engine's convention for required outputs of absent inputs, e.g. `DexHandRetargeter`).
    """

    TAXEL_FORCES = "taxel_forces"
    TACTILE_LAYOUT = "tactile_layout"
    FINGER_FORCE = "finger_force"

    def __init__(self, name: str, num_segments: int, num_taxels: int) -> None:
        _check_counts(f"PadForceMagnitude {name!r}", num_segments, num_taxels)
        self._num_segments = int(num_segments)
        self._num_taxels = int(num_taxels)
        self._pads: tuple[tuple[np.ndarray, ...], Any] | None = None
        super().__init__(name)

    def input_spec(self) -> RetargeterIOType:
        return {
            self.TAXEL_FORCES: OptionalType(TaxelForces(self._num_taxels)),
            self.TACTILE_LAYOUT: OptionalType(TactileLayout(self._num_segments, self._num_taxels)),
        }

    def output_spec(self) -> RetargeterIOType:
        return {self.FINGER_FORCE: TactileVector(NUM_PADS)}

    def _pad_layout(self, layout) -> Any:
        arrays = tuple(layout[i] for i in TactileLayoutIndex)
        # The layout is static per producer session: reuse the precomputed rotations while the
        # same arrays (TactileSource caches them per metadata) keep arriving.
        if self._pads is None or any(a is not b for a, b in zip(self._pads[0], arrays, strict=True)):
            self._pads = (arrays, pad_layout(TactileMetadata(*arrays)))
        return self._pads[1]

    def _compute_fn(self, inputs: RetargeterIO, outputs: RetargeterIO, context) -> None:
        forces, layout = inputs[self.TAXEL_FORCES], inputs[self.TACTILE_LAYOUT]
        if forces.is_none or layout.is_none:
            outputs[self.FINGER_FORCE][0] = np.zeros(NUM_PADS, dtype=np.float32)
            return
        resultants = pad_resultants(self._pad_layout(layout), np.asarray(forces[0]))
        outputs[self.FINGER_FORCE][0] = np.linalg.norm(resultants, axis=1).astype(np.float32)


def graph_time_of(frame: TactileFrame) -> ComputeContext:
    """A `ComputeContext` whose graph time is the frame's sample time (replay keeps its clock)."""
    t = int(frame.timestamp.sample_time_local_common_clock)
    return ComputeContext(graph_time=GraphTime(sim_time_ns=t, real_time_ns=t))
