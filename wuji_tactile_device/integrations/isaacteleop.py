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
  In replay, `hand_clock=RecordedHandClock(hands_file)` pairs each step's tactile output with that
  step's hand record by time (`TimePairing`, counted): `pairing="interpolate"` (default) blends the
  two frames bracketing the hand time, so forces and skinned positions refer to one instant;
  `"nearest"` takes the nearest measured frame within half a tactile period.
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

import threading
import time
import weakref
from collections import deque
from dataclasses import dataclass
from enum import IntEnum
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from ..contract import ARRAY_FIELDS, DEFAULT_MAX_FLATBUFFER_SIZE, HandJoint, TactileMetadata, geometry, validate_collection_id
from ..contract.pads import NUM_PADS, pad_layout, pad_resultants
from ..recording.hand_channels import DEFAULT_HAND_BASE_NAME, hand_record_times
from ..streams.tracker import TactileFrame, TactileTracker
from ..errors import DataLayoutError, RecordingError, TactileError

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
    "RecordedHandClock", "TimePairing", "PairingCounters", "PairedOutput", "PAIRING_MODES",
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
        NDArrayType("segment_joint_ids", shape=(num_segments,), dtype=_GRAPH_DTYPE["index"][0],
                    dtype_bits=_GRAPH_DTYPE["index"][1]),
        *(NDArrayType(f.name, shape=(rows[f.rows], f.width), dtype=_GRAPH_DTYPE[f.kind][0],
                      dtype_bits=_GRAPH_DTYPE[f.kind][1]) for f in _LAYOUT_FIELDS),
    ])


#: Graph dtype (DLPack type, bits) of each metadata array kind (indices as int32; poses, weights
#: and values float32, as on the wire).
_GRAPH_DTYPE: dict[str, tuple[DLDataType, int]] = {"pose": (DLDataType.FLOAT, 32), "weight": (DLDataType.FLOAT, 32),
                                                   "value": (DLDataType.FLOAT, 32), "index": (DLDataType.INT, 32)}
_NUMPY_DTYPE = {"pose": np.float32, "weight": np.float32, "value": np.float32, "index": np.int32}
#: The metadata arrays a `TactileLayout` carries: the declared arrays that are always present (a
#: graph tensor cannot be absent, so an optional array joins the layout once it is required).
_LAYOUT_FIELDS = tuple(f for f in ARRAY_FIELDS if not f.optional)

#: Tensor positions inside a `TactileLayout` group: SEGMENT_JOINT_IDS, then one per metadata array
#: (SEGMENT_BIND_POSES, TAXEL_BIND_POSES, SEGMENT_INDICES, SEGMENT_WEIGHTS).
#: The members follow the declared arrays at import, which mypy cannot see (it needs literal member names).
TactileLayoutIndex = IntEnum("TactileLayoutIndex",  # type: ignore[misc]
                             ["SEGMENT_JOINT_IDS", *(f.name.upper() for f in _LAYOUT_FIELDS)], start=0, module=__name__)


class TactileSample(NamedTuple):
    """What `TactileSource` emits in one step: the confirmed metadata (None until confirmed) and
    the frame (None: none yet, stale, or the replay has ended)."""

    metadata: TactileMetadata | None
    frame: TactileFrame | None


def layout_from_metadata(metadata: TactileMetadata) -> tuple[np.ndarray, ...]:
    """The five `TactileLayout` arrays of a metadata (new, read-only, contiguous)."""
    arrays = (
        np.asarray([int(j) for j in metadata.joint_ids], dtype=np.int32),
        *(np.ascontiguousarray(getattr(metadata, f.name), dtype=_NUMPY_DTYPE[f.kind]) for f in _LAYOUT_FIELDS),
    )
    for a in arrays:
        a.flags.writeable = False
    return arrays


def metadata_from_layout(arrays) -> TactileMetadata:
    """The `TactileMetadata` of the `TactileLayout` arrays (the inverse of `layout_from_metadata`)."""
    return TactileMetadata(joint_ids=arrays[0], **{f.name: a for f, a in zip(_LAYOUT_FIELDS, arrays[1:], strict=True)})


def _check_counts(what: str, num_segments: int, num_taxels: int) -> None:
    for label, value in (("num_segments", num_segments), ("num_taxels", num_taxels)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{what}: {label} must be a positive int, got {value!r}")


# ============================================================================
# Time pairing (replay): which tactile frame goes with which hand sample
# ============================================================================

class RecordedHandClock:
    """The sample times of the hand records Isaac Teleop's `ReplaySession` replays, one per
    `TeleopSession.step()`: Isaac Teleop's graph gives a node no hand time (its replay graph time
    is the wall clock), so the time of step k is the k-th hand record's own timestamp
    (`sample_time_local_common_clock`), read from the file the session replays.

    `RecordedHandClock(path, base_name="hands", side=None)`: `<base_name>/<side>_hand` of `path`
    (side None: the right hand's channel, else the left's) — Isaac Teleop's own recording, or
    this package's. `times` (H,) int64 [ns]; `len()` is the number of steps with a hand sample."""

    def __init__(self, path, base_name: str = DEFAULT_HAND_BASE_NAME, side: str | None = None) -> None:
        self.path = path
        self.base_name = base_name
        self.times = hand_record_times(path, base_name, side)
        self.times.flags.writeable = False
        self._next = 0

    def __len__(self) -> int:
        return len(self.times)

    @property
    def steps_taken(self) -> int:
        return self._next

    @property
    def exhausted(self) -> bool:
        """True once every hand record has been stepped (the next step would find no hand data)."""
        return self._next >= len(self.times)

    def advance(self) -> int | None:
        """The next step's hand sample time [ns], or None past the last hand record."""
        if self._next >= len(self.times):
            self._next += 1
            return None
        t = int(self.times[self._next])
        self._next += 1
        return t


@dataclass
class LiveStepCounters:
    """What live stepping did (`TactileSource.live_counters`)."""

    steps: int = 0  # graph steps
    reused: int = 0  # steps that repeated the previous step's frame
    stale: int = 0  # steps withheld: no new frame for `stale_after_s`
    none_yet: int = 0  # steps before the first frame arrived


@dataclass
class PairingCounters:
    """What the time pairing did, per step (`TactileSource.pairing`).

    - `steps`: graph steps with a target time (a hand sample);
    - `paired`: steps that got forces (interpolated, exact or nearest);
    - `interpolated`: paired steps whose forces were interpolated between the two frames bracketing
      the hand time (mode "interpolate"; output time = the hand time);
    - `exact`: paired steps with a frame sampled at exactly the hand time;
    - `nearest`: paired steps given the nearest frame within half a tactile period (mode
      "nearest", or "interpolate" with no bracketing pair within the gap limit: a gap, the edges);
    - `missing`: steps with nothing within the tolerance (forces absent);
    - `reused`: paired steps whose frame(s) were already used by the step before (hands faster than tactile);
    - `skipped`: tactile frames that went into no output (tactile faster than hands, or outside the hands' span);
    - `max_abs_dt_ns`: the largest |output time − hand sample time| of a paired step (0 for interpolated);
    - `max_gap_ns`: the largest spacing of two frames interpolated between;
    - `past_hands`: steps after the last hand record (no hand sample to pair with)."""

    steps: int = 0
    paired: int = 0
    interpolated: int = 0
    exact: int = 0
    nearest: int = 0
    missing: int = 0
    reused: int = 0
    skipped: int = 0
    max_abs_dt_ns: int = 0
    max_gap_ns: int = 0
    past_hands: int = 0

    def text(self) -> str:
        return (f"time pairing: {self.steps} hand steps, {self.paired} paired with tactile "
                f"({self.interpolated} interpolated at the hand time, {self.exact} exact, {self.nearest} nearest frame; "
                f"max |dt| {self.max_abs_dt_ns / 1e6:.2f} ms), {self.missing} without one within the tolerance, "
                f"{self.reused} reused the previous step's frame(s), {self.skipped} tactile frames not used"
                + (f", {self.past_hands} steps past the last hand record" if self.past_hands else ""))


class PairedOutput(NamedTuple):
    """How one step's tactile output was made (`TactileSource.last_pairing`).

    `time_ns`: the sample time the output's forces refer to [ns, the tactile sample clock] — the
    hand sample's time when interpolated or exact, the frame's own time when nearest;
    `how`: "interpolated", "exact" or "nearest"; `sequences`: the recorded frames used (two when
    interpolated, else one); `alpha`: weight of the later frame (0 unless interpolated)."""

    time_ns: int
    how: str
    sequences: tuple[int, ...]
    alpha: float


PAIRING_MODES = ("interpolate", "nearest")


class TimePairing:
    """Tactile output for each target time (a hand sample's time), from the recorded frames.

    `frames` is a callable returning the next frame in sample-time order or None when none is
    left. Targets must not decrease. `mode`:

    - `"interpolate"` (default): the two frames bracketing the target (t0 ≤ target < t1, same
      producer session, t1 − t0 ≤ 1.5 tactile periods — a longer spacing means a lost frame) are
      blended linearly in time, per taxel: F = (1 − α)·F0 + α·F1, α = (target − t0)/(t1 − t0), so
      forces refer to the hand sample's own instant (the returned frame's sample time is the
      target; its other two timestamps are blended likewise). A frame exactly at the target is
      returned as recorded. Without such a pair (a gap, before the first or after the last frame)
      it falls back to `"nearest"` — never extrapolates.
    - `"nearest"`: the frame whose `sample_time_local_common_clock` is nearest to the target if
      |dt| ≤ tolerance; forces exactly as measured, but they refer to the frame's time.

    Otherwise none (counted `missing`). `tolerance_ns`: default half the tactile period, measured
    as the median spacing of the frames read so far. The reader looks ahead by at most one frame.
    `last` is the `PairedOutput` of the latest `pick` (None when it returned None)."""

    _PERIOD_WINDOW = 64
    #: Interpolate only between frames at most this many tactile periods apart.
    MAX_GAP_PERIODS = 1.5

    def __init__(self, frames, *, tolerance_ns: int | None = None, mode: str = "interpolate") -> None:
        if tolerance_ns is not None and not tolerance_ns >= 0:
            raise ValueError(f"tolerance_ns must be None or >= 0 [ns], got {tolerance_ns!r}")
        if mode not in PAIRING_MODES:
            raise ValueError(f"time pairing: mode must be one of {PAIRING_MODES}, got {mode!r}")
        self.mode = mode
        self._read = frames
        self._tolerance_ns = tolerance_ns
        self._behind: TactileFrame | None = None  # latest frame at or before the last target
        self._ahead: TactileFrame | None = None  # first frame after it
        self._behind_i = self._ahead_i = -1  # their read indices
        self._ended = False
        self._last_t: int | None = None
        self._spacings: deque[int] = deque(maxlen=self._PERIOD_WINDOW)
        self._last_used: tuple[int, ...] = ()
        self._used: set[int] = set()
        self._last_target: int | None = None
        self._read_count = 0
        self.last: PairedOutput | None = None
        self.counters = PairingCounters()

    @staticmethod
    def _t(frame: TactileFrame) -> int:
        return int(frame.timestamp.sample_time_local_common_clock)

    def _pull(self) -> TactileFrame | None:
        if self._ended:
            return None
        frame = self._read()
        if frame is None:
            self._ended = True
            return None
        t = self._t(frame)
        if self._last_t is not None and t > self._last_t:
            self._spacings.append(t - self._last_t)
        self._last_t = t
        self._read_count += 1
        return frame

    def _period_ns(self) -> int:
        if not self._spacings:
            return 0
        return int(np.median(np.fromiter(self._spacings, np.int64, len(self._spacings))))

    def tolerance_ns(self) -> int:
        """The current tolerance [ns] of the nearest rule (half the measured tactile period unless given)."""
        if self._tolerance_ns is not None:
            return self._tolerance_ns
        return self._period_ns() // 2

    def _use(self, indices: tuple[int, ...], output: PairedOutput) -> None:
        c = self.counters
        c.paired += 1
        target_ns = self._last_target
        assert target_ns is not None, "set by pick(), the only caller"
        c.max_abs_dt_ns = max(c.max_abs_dt_ns, abs(output.time_ns - target_ns))
        if indices == self._last_used:
            c.reused += 1
        self._used.update(indices)
        self._last_used = indices
        self.last = output

    def pick(self, target_ns: int) -> TactileFrame | None:
        """The tactile output for a step whose hand sample was taken at `target_ns`, or None:
        a recorded frame, or (mode "interpolate") a frame blended at `target_ns`."""
        if self._last_target is not None and target_ns < self._last_target:
            raise ValueError(f"time pairing: target time {target_ns} ns goes back before {self._last_target} ns")
        self._last_target = target_ns
        self.last = None
        c = self.counters
        c.steps += 1
        if self._ahead is None:
            self._ahead = self._pull()
            self._ahead_i = self._read_count - 1
        while self._ahead is not None and self._t(self._ahead) <= target_ns:
            self._behind, self._behind_i = self._ahead, self._ahead_i
            self._ahead = self._pull()
            self._ahead_i = self._read_count - 1
        behind, ahead = self._behind, self._ahead
        if behind is not None and self._t(behind) == target_ns:
            c.exact += 1
            self._use((self._behind_i,), PairedOutput(target_ns, "exact", (behind.sequence,), 0.0))
            return behind
        if self.mode == "interpolate" and behind is not None and ahead is not None:
            t0, t1 = self._t(behind), self._t(ahead)
            gap = t1 - t0
            if behind.producer_session == ahead.producer_session and gap <= self.MAX_GAP_PERIODS * self._period_ns():
                alpha = (target_ns - t0) / gap
                c.interpolated += 1
                c.max_gap_ns = max(c.max_gap_ns, gap)
                self._use((self._behind_i, self._ahead_i),
                          PairedOutput(target_ns, "interpolated", (behind.sequence, ahead.sequence), alpha))
                return _blend(behind, ahead, alpha, target_ns)
        candidates = [(f, i) for f, i in ((behind, self._behind_i), (ahead, self._ahead_i)) if f is not None]
        if not candidates:
            c.missing += 1
            return None
        best, index = min(candidates, key=lambda fi: abs(self._t(fi[0]) - target_ns))
        if abs(self._t(best) - target_ns) > self.tolerance_ns():
            c.missing += 1
            return None
        c.nearest += 1
        self._use((index,), PairedOutput(self._t(best), "nearest", (best.sequence,), 0.0))
        return best

    def finish(self) -> PairingCounters:
        """Count the frames left unread or unused (call at the end of the run); the counters."""
        c = self.counters
        while self._pull() is not None:
            pass
        c.skipped = self._read_count - len(self._used)
        return c


def _blend(f0: TactileFrame, f1: TactileFrame, alpha: float, t_ns: int) -> TactileFrame:
    """`f0` and `f1` blended linearly: forces (1 − α)·F0 + α·F1 per taxel (float32, read-only), the
    timestamps likewise with the sample time exactly `t_ns`; `f0`'s sequence and session."""
    forces = f0.forces + np.float32(alpha) * (f1.forces - f0.forces)
    forces.flags.writeable = False
    a0, _, r0 = f0.timestamp
    a1, _, r1 = f1.timestamp
    ts = type(f0.timestamp)(int(round(a0 + alpha * (a1 - a0))), int(t_ns), int(round(r0 + alpha * (r1 - r0))))
    return TactileFrame(forces, ts, f0.sequence, f0.producer_session)


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
    - `"replay"` (default for an `McapReplay` source) with `hand_clock=RecordedHandClock(...)`:
      each run is one hand record of the file Isaac Teleop's `ReplaySession` replays (one per
      `update()`). `pairing="interpolate"` (default) emits the two recorded frames bracketing
      that record's sample time blended linearly to it (forces at the hand's instant; falls back
      to nearest at a gap or the edges, never extrapolates); `pairing="nearest"` the recorded
      frame nearest in time, within half a tactile period (`pairing_tolerance_s` to fix it) —
      any rates, separate files (`TimePairing`; counters in `pairing`, one line in
      `pairing_report()`, the time each output refers to in `last_pairing.time_ns` and
      `last_frame.timestamp`); `finished` once every hand record was stepped. Without a hand clock each run takes the NEXT recorded frame
      (one per step, by count); after the last frame, forces are absent and `finished` is True.

    `close()` (or `with TactileSource(...) as source:`) releases a Zenoh session the node opened;
    a script that never closes it still exits (released at interpreter exit).

    Outputs (Optional; absent until the metadata is confirmed / the first frame arrived):
        - `taxel_forces`: `TaxelForces(num_taxels)` [N, taxel axes];
        - `tactile_layout`: `TactileLayout(num_segments, num_taxels)`.
    `last_frame` is the frame the latest run emitted (its timestamp, sequence), or None; an
    interpolated one carries the hand sample's time as its sample time and the earlier frame's
    sequence (`last_pairing.sequences` names both frames).
    """

    TAXEL_FORCES = "taxel_forces"
    TACTILE_LAYOUT = "tactile_layout"
    STEPS = ("live", "replay")

    def __init__(self, name: str, collection_id: str, num_segments: int, num_taxels: int, *,
                 source: Any = None, tracker: TactileTracker | None = None, step: str | None = None,
                 max_flatbuffer_size: int = DEFAULT_MAX_FLATBUFFER_SIZE,
                 stale_after_s: float | None = DEFAULT_STALE_AFTER_S,
                 hand_clock: RecordedHandClock | None = None, pairing_tolerance_s: float | None = None,
                 pairing: str = "interpolate") -> None:
        _check_counts(f"TactileSource {name!r}", num_segments, num_taxels)
        if pairing not in PAIRING_MODES:
            raise ValueError(f"TactileSource {name!r}: pairing must be one of {PAIRING_MODES}, got {pairing!r}")
        if pairing_tolerance_s is not None and not (np.isfinite(pairing_tolerance_s) and pairing_tolerance_s >= 0):
            raise ValueError(f"TactileSource {name!r}: pairing_tolerance_s must be None or >= 0 [s], "
                             f"got {pairing_tolerance_s!r}")
        if hand_clock is not None and not isinstance(hand_clock, RecordedHandClock):
            raise TypeError(f"TactileSource {name!r}: hand_clock must be a RecordedHandClock, got "
                            f"{type(hand_clock).__name__}")
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
        if self._replay is not None and collection_id not in getattr(self._replay, "collections", (collection_id,)):
            raise RecordingError(f"TactileSource {name!r}: {getattr(self._replay, 'path', 'the replay')} has no "
                                 f"collection {collection_id!r}; it holds: "
                                 f"{', '.join(self._replay.collections) or 'no tactile collections'}")
        self._step = step or ("replay" if self._replay is not None else "live")
        if hand_clock is not None and self._step != "replay":
            raise ValueError(f"TactileSource {name!r}: hand_clock pairs recorded hands with a replayed collection "
                             "(step='replay'); live stepping takes the newest frame")
        self._hand_clock = hand_clock
        self._pairing = None if hand_clock is None else TimePairing(
            self._next_replay_frame, tolerance_ns=None if pairing_tolerance_s is None else int(pairing_tolerance_s * 1e9),
            mode=pairing)
        #: Live stepping: steps, steps that repeated the previous step's frame, steps withheld as stale.
        self.live_counters = LiveStepCounters()
        self._live_last: TactileFrame | None = None
        if self._owned_transport is not None:
            # A script that never calls close() must still exit. Zenoh runs each subscription's
            # callbacks on its own non-daemon Python thread, and the interpreter joins those
            # BEFORE `atexit` handlers run — so the release is registered with `threading`'s own
            # pre-join exit hook (what `concurrent.futures` uses). The finalizer holds the
            # tracker and transport, not the node, so a dropped node is released too.
            self._finalizer = weakref.finalize(self, _close_quietly, tracker, self._owned_transport)
            self._finalizer.atexit = False
            threading._register_atexit(self._finalizer)  # type: ignore[attr-defined]  # private: not in typeshed
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
        """Replay stepping: True once every recorded frame was emitted — with a `hand_clock`, once
        every hand record has been stepped (the session would find no more hand data); never
        for live."""
        if self._hand_clock is not None:
            return self._hand_clock.exhausted
        return self._step == "replay" and self._replay is not None and self._replay.finished and self.last_frame is None

    @property
    def hand_clock(self) -> RecordedHandClock | None:
        return self._hand_clock

    def get_tracker(self) -> TactileTracker:
        """The `TactileTracker` this node reads."""
        return self._tracker

    @property
    def pairing(self) -> PairingCounters | None:
        """Time pairing with `hand_clock` (replay): what it did so far, or None without a hand clock."""
        return None if self._pairing is None else self._pairing.counters

    @property
    def last_pairing(self) -> PairedOutput | None:
        """Time pairing with `hand_clock`: how the latest step's output was made — the time its
        forces refer to (`time_ns`), "interpolated"/"exact"/"nearest", the frames used — or None
        (no output that step, or no hand clock)."""
        return None if self._pairing is None else self._pairing.last

    def pairing_report(self) -> str:
        """One line: the time pairing's counters (replay with `hand_clock`) or the live counters."""
        if self._pairing is not None:
            return self._pairing.counters.text()
        c = self.live_counters
        return (f"live stepping: {c.steps} steps, {c.reused} repeated the previous frame, {c.stale} withheld "
                f"as stale (no new frame for {self._stale_after_ns / 1e9 if self._stale_after_ns else 0:g} s), "
                f"{c.none_yet} before the first frame")

    def close(self) -> None:
        """Close the tracker and the Zenoh transport the node opened itself (idempotent). Also
        done at interpreter exit for a node that was never closed; `with TactileSource(...) as
        source:` closes at the end of the block."""
        self._tracker.close()
        if self._owned_transport is not None:
            self._finalizer.detach()
            self._owned_transport.close()
            self._owned_transport = None

    def __enter__(self) -> TactileSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def read_sample(self) -> TactileSample:
        """Update the tracker and return what this step emits (called by every graph run)."""
        if self._step == "replay":
            hand_clock = self._hand_clock  # set together with the pairing
            if self._pairing is None or hand_clock is None:
                self.last_frame = self._next_replay_frame()
            else:
                target = hand_clock.advance()
                if target is None:
                    self._pairing.counters.past_hands += 1
                    self.last_frame = None
                else:
                    self.last_frame = self._pairing.pick(target)
                    if hand_clock.exhausted:
                        self._pairing.finish()  # the last step: count the tactile frames never used
            return TactileSample(self._tracker.get_metadata(), self.last_frame)
        delivered = self._tracker.update()
        now = time.monotonic_ns()
        if delivered:
            self._last_new_frame_ns = now
        frame = self._tracker.get_data()
        c = self.live_counters
        c.steps += 1
        if frame is None:
            c.none_yet += 1
        elif self._stale_after_ns is not None and (
                self._last_new_frame_ns is None or now - self._last_new_frame_ns > self._stale_after_ns):
            frame = None
            c.stale += 1
        elif frame is self._live_last:
            c.reused += 1
        if frame is not None:
            self._live_last = frame
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
        joint_ids = np.asarray(layout[TactileLayoutIndex["SEGMENT_JOINT_IDS"]], dtype=np.int64)
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
            self._layout_cache = (arrays, metadata_from_layout(arrays))
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
            self._pads = (arrays, pad_layout(metadata_from_layout(arrays)))
        return self._pads[1]

    def _compute_fn(self, inputs: RetargeterIO, outputs: RetargeterIO, context) -> None:
        forces, layout = inputs[self.TAXEL_FORCES], inputs[self.TACTILE_LAYOUT]
        if forces.is_none or layout.is_none:
            outputs[self.FINGER_FORCE][0] = np.zeros(NUM_PADS, dtype=np.float32)
            return
        resultants = pad_resultants(self._pad_layout(layout), np.asarray(forces[0]))
        outputs[self.FINGER_FORCE][0] = np.linalg.norm(resultants, axis=1).astype(np.float32)


def _close_quietly(tracker: TactileTracker, transport: Any) -> None:
    """Interpreter-exit close of a `TactileSource`'s own tracker and transport."""
    tracker.close()
    transport.close()


def graph_time_of(frame: TactileFrame) -> ComputeContext:
    """A `ComputeContext` whose graph time is the frame's sample time (replay keeps its clock)."""
    t = int(frame.timestamp.sample_time_local_common_clock)
    return ComputeContext(graph_time=GraphTime(sim_time_ns=t, real_time_ns=t))
