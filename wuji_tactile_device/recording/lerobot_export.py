"""Recordings → one LeRobot v3.0 dataset (`export_lerobot`; `wuji-tactile export … --format lerobot`).

One episode per recording, both hands in it (one time grid for everything a policy sees at one
instant; splitting the hands into episodes would give two episodes of the same moment). Frames lie on
the grid `t_k = t0 + k / fps`, t0 = the earliest tactile sample time of the file; each stream (a
collection, a recorded hand) contributes to row k the sample NEAREST to t_k among those whose sample
time falls in `[t_k − T/2, t_k + T/2)` (T = 1/fps): values are the recording's own, never
interpolated. A row without such a sample is zero-filled and flagged `valid = False`; other samples
in the same window are not used (counted in `meta/wuji_tactile.json`).

Written as LeRobot 0.4's own writer lays a v3.0 dataset out: `data/chunk-000/file-NNN.parquet`
(episodes appended, a new file once one reaches 100 MB), `meta/info.json`, `meta/stats.json`,
`meta/tasks.parquet`, `meta/episodes/chunk-000/file-000.parquet` (with per-episode stats), and
`meta/wuji_tactile.json` (the layouts, stored once, and each episode's source file, grid origin and
clock anchors). Statistics follow LeRobot's `compute_episode_stats` / `aggregate_stats`: over every
row of an episode and every leading axis of a feature (a (176, 3) feature gets (3,) stats), min,
max, mean, std, count and the quantiles q01…q99 from a 5000-bin histogram between the episode's
min and max.

Streamed: each recording is first staged per stream to raw files (one frame in memory at a time),
then assembled CHUNK_ROWS rows at a time; memory does not grow with the recording's length.
Everything is written into a temporary directory next to the target, renamed into place when
complete, removed on any error.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, BinaryIO

import numpy as np

from ..contract import TactileMetadata
from ..contract.hand_pose import NUM_HAND_JOINTS
from ..contract.joints import FINGERS, HandJoint
from ..contract.pads import NUM_PADS, pad_layout
from ..errors import RecordingError

if TYPE_CHECKING:  # an optional dependency (the `lerobot` extra), imported when the export runs
    import pyarrow
    import pyarrow.parquet

CODEBASE_VERSION = "v3.0"
DEFAULT_FPS = 100
#: Grid rows assembled (and written as one parquet row group) at a time.
CHUNK_ROWS = 256
#: Raw staged samples read at a time.
_READ_BLOCK = 1024
DATA_FILES_SIZE_IN_MB = 100
CHUNKS_SIZE = 1000
_HIST_BINS = 5000
_QUANTILES = (0.01, 0.10, 0.50, 0.90, 0.99)
_DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
_AXES = ["x", "y", "z"]
_POSE = ["x", "y", "z", "qx", "qy", "qz", "qw"]
_JOINT_NAMES = [HandJoint(k).name for k in range(NUM_HAND_JOINTS)]


def _pyarrow():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise RecordingError("the LeRobot export needs pyarrow: pip install 'wuji-tactile-device[lerobot]'") from None
    return pa, pq


@dataclass
class LeRobotExport:
    """What `export_lerobot` wrote: the dataset root, frames per episode, the features."""

    root: Path
    fps: int
    episode_lengths: list[int]
    features: dict[str, dict]
    sources: list[dict] = field(default_factory=list)


# -- streams ---------------------------------------------------------------------------------
@dataclass
class _Stream:
    """One per-frame source of an episode: a collection or a recorded hand."""

    kind: str  # "tactile" | "hand" | "slip"
    name: str  # collection id (tactile, slip) or hand side
    dtype: np.dtype  # staged record: "t" (sample time ns) + values
    path: Path  # the staging file
    source: Path = Path()  # the recording
    samples: int = 0
    first_ns: int | None = None
    last_ns: int | None = None
    _buf: list = field(default_factory=list)
    _f: BinaryIO | None = None  # the staging file, opened at the first flush

    def add(self, t_ns: int, **values) -> None:
        if self.last_ns is not None and t_ns < self.last_ns:
            what = {"tactile": f"collection {self.name!r}", "slip": f"the pad slip channel of {self.name!r}"}.get(
                self.kind, f"the {self.name} hand channel")
            raise RecordingError(f"{self.source}: {what}: sample time goes back from {self.last_ns} ns to {t_ns} ns "
                                 f"(sample {self.samples}); its frames cannot be put on one time grid")
        rec = np.zeros((), self.dtype)
        rec["t"] = t_ns
        for k, v in values.items():
            rec[k] = v
        self._buf.append(rec)
        self.first_ns = t_ns if self.first_ns is None else self.first_ns
        self.last_ns = t_ns
        self.samples += 1
        if len(self._buf) >= 256:
            self.flush()

    def span(self) -> tuple[int, int]:
        """(first, last) sample time [ns] of the staged samples."""
        if self.first_ns is None or self.last_ns is None:  # a stream is made by its first sample
            raise RuntimeError(f"{self.source}: stream {self.kind}:{self.name} staged no sample")
        return self.first_ns, self.last_ns

    def _file(self) -> BinaryIO:
        if self._f is None:
            self._f = open(self.path, "wb")
        return self._f

    def flush(self) -> None:
        f = self._file()
        if self._buf:
            f.write(np.stack(self._buf).tobytes())
            self._buf.clear()

    def close(self) -> None:
        self.flush()
        self._file().close()


def _tactile_dtype(n: int) -> np.dtype:
    return np.dtype([("t", "<i8"), ("forces", "<f4", (n, 3))])


_HAND_DTYPE = np.dtype([("t", "<i8"), ("tracked", "?"), ("poses", "<f4", (NUM_HAND_JOINTS, 7)),
                        ("joint_valid", "?", (NUM_HAND_JOINTS,))])


_SLIP_DTYPE = np.dtype([("t", "<i8"), ("velocity", "<f4", (NUM_PADS, 3)), ("stuck", "<f4", (NUM_PADS,))])


def _collection_prefix(cid: str) -> str:
    return "observation." + cid.replace("/", ".")


def _features(layouts: dict[str, TactileMetadata], sides: Sequence[str], slips: Sequence[str] = ()) -> dict[str, dict]:
    """The LeRobot feature entries (dtype, shape, names) plus unit / frame / description; `slips`:
    the collections whose pad slip channel (`slip_channel`) was recorded."""
    feats: dict[str, dict] = {}
    for cid, md in layouts.items():
        p = _collection_prefix(cid)
        feats[f"{p}.forces"] = {
            "dtype": "float32", "shape": [md.num_taxels, 3], "names": ["taxel", "axis"], "unit": "N",
            "frame": "taxel", "description": f"{cid}: force ON each taxel in its own axes (x, y, z; press: z < 0); "
                                              "zeros where valid is false"}
        feats[f"{p}.pad_resultants"] = {
            "dtype": "float32", "shape": [NUM_PADS, 3], "names": ["pad", "axis"], "unit": "N", "frame": "pad",
            "pads": list(FINGERS),
            "description": f"{cid}: resultant of each finger pad's taxel forces in the pad frame (the pad "
                           "segment's bind frame); zeros where valid is false"}
        feats[f"{p}.valid"] = {
            "dtype": "bool", "shape": [1], "names": None,
            "description": f"{cid}: true when a recorded frame's sample time lies within half a period of this "
                           "row's time (its values are that frame's); false: no frame, values zero"}
        feats[f"{p}.time_offset"] = {
            "dtype": "float32", "shape": [1], "names": None, "unit": "s",
            "description": f"{cid}: sample time of the frame used minus the row's time (|x| <= half a period; "
                           "0 where valid is false)"}
    for cid in slips:
        p = _collection_prefix(cid)
        feats[f"{p}.pad_slip_velocity"] = {
            "dtype": "float32", "shape": [NUM_PADS, 3], "names": ["pad", "axis"], "unit": "m/s", "frame": "pad",
            "pads": list(FINGERS),
            "description": f"{cid}: each pad's slip velocity in its pad frame (the object's tangential velocity "
                           "relative to the pad while the footprint slides as a whole, 0 while any of it sticks), from "
                           "the recorded pad slip channel; zeros where pad_slip_valid is false"}
        feats[f"{p}.pad_stuck_fraction"] = {
            "dtype": "float32", "shape": [NUM_PADS], "names": list(FINGERS), "unit": "1",
            "description": f"{cid}: stuck share of each pad's footprint area (1 without contact); zeros where "
                           "pad_slip_valid is false"}
        feats[f"{p}.pad_slip_valid"] = {
            "dtype": "bool", "shape": [1], "names": None,
            "description": f"{cid}: true when a pad slip message lies within half a period of this row's time"}
    for side in sides:
        p = f"observation.hand.{side}"
        feats[f"{p}.joint_poses"] = {
            "dtype": "float32", "shape": [NUM_HAND_JOINTS, 7], "names": ["joint", "pose"], "unit": "m, quaternion",
            "frame": "recording base space", "joints": _JOINT_NAMES, "pose": _POSE,
            "description": f"{side} hand: 26 OpenXR joint poses (x, y, z [m], qx, qy, qz, qw) from the recorded "
                           "hand channel; zeros where the row's valid is false"}
        feats[f"{p}.joint_valid"] = {
            "dtype": "bool", "shape": [NUM_HAND_JOINTS], "names": _JOINT_NAMES,
            "description": f"{side} hand: the record's per-joint valid flag (false where the row's valid is false)"}
        feats[f"{p}.valid"] = {
            "dtype": "bool", "shape": [1], "names": None,
            "description": f"{side} hand: true when a pose record of a TRACKED hand lies within half a period of "
                           "this row's time; false: no record or the hand was not tracked, values zero"}
    for name, dtype in (("timestamp", "float32"), ("frame_index", "int64"), ("episode_index", "int64"),
                        ("index", "int64"), ("task_index", "int64")):
        feats[name] = {"dtype": dtype, "shape": [1], "names": None}
    feats["timestamp"]["unit"] = "s"
    return feats


# -- statistics, as LeRobot's compute_episode_stats / aggregate_stats -------------------------
@dataclass
class _Moments:
    """Per-column min, max, mean and sum of squared deviations (float64) of the rows seen so far."""

    min: np.ndarray
    max: np.ndarray
    mean: np.ndarray
    m2: np.ndarray


class _FeatureStats:
    """Two passes over one episode's values of a feature (rows reshaped to (-1, last axis))."""

    def __init__(self, dtype: str) -> None:
        self.dtype = dtype
        self.count = 0  # rows of the reshaped (-1, d) array
        self.frames = 0
        self._moments: _Moments | None = None  # set by the first first_pass
        self.hist: list[np.ndarray] | None = None  # per column, set by the first second_pass
        self.edges: list[np.ndarray] | None = None

    def moments(self) -> _Moments:
        if self._moments is None:
            raise RuntimeError("LeRobot statistics: no value went through first_pass (an episode has >= 1 row)")
        return self._moments

    @staticmethod
    def _flat(values: np.ndarray) -> np.ndarray:
        return values.reshape(-1, 1) if values.ndim == 1 else values.reshape(-1, values.shape[-1])

    def first_pass(self, values: np.ndarray) -> None:
        flat = self._flat(values)
        wide = flat.astype(np.float64)
        mn, mx = flat.min(axis=0), flat.max(axis=0)
        n, mean = flat.shape[0], wide.mean(axis=0)
        m2 = ((wide - mean) ** 2).sum(axis=0)
        m = self._moments
        if m is None:
            self._moments = _Moments(mn, mx, mean, m2)
        else:  # Chan et al.'s pairwise update: float64, no E[x²] − E[x]² cancellation
            m.min, m.max = np.minimum(m.min, mn), np.maximum(m.max, mx)
            total = self.count + n
            delta = mean - m.mean
            m.mean = m.mean + delta * (n / total)
            m.m2 = m.m2 + m2 + delta ** 2 * (self.count * n / total)
        self.count += n
        self.frames += values.shape[0]

    def second_pass(self, values: np.ndarray) -> None:
        flat = self._flat(values)
        if flat.dtype == np.bool_:
            flat = flat.astype(np.uint8)
        if self.edges is None or self.hist is None:  # the same edges LeRobot's histogram takes (same dtype arithmetic)
            m = self.moments()
            self.edges = [np.linspace(m.min[i] - 1e-10, m.max[i] + 1e-10, _HIST_BINS + 1)
                          for i in range(m.min.shape[0])]
            self.hist = [np.zeros(_HIST_BINS) for _ in self.edges]
        for i, edges in enumerate(self.edges):
            self.hist[i] += np.histogram(flat[:, i], bins=edges)[0]

    def result(self) -> dict[str, np.ndarray]:
        m = self.moments()
        mean = m.mean
        out = {"min": m.min, "max": m.max, "mean": mean, "std": np.sqrt(m.m2 / self.count),
               "count": np.array([self.frames], dtype=np.int64)}
        for q in _QUANTILES:
            key = f"q{int(q * 100):02d}"
            if self.count < 2:  # LeRobot: too few samples for quantiles, the mean stands in
                out[key] = mean.copy()
            else:
                if self.hist is None or self.edges is None:
                    raise RuntimeError("LeRobot statistics: quantiles asked before second_pass built the histograms")
                out[key] = np.array([_hist_quantile(h, e, q * self.count)
                                     for h, e in zip(self.hist, self.edges, strict=True)])
        return out


def _hist_quantile(hist: np.ndarray, edges: np.ndarray, target: float) -> float:
    """The value below which `target` counts lie, linear within its bin (LeRobot's estimate)."""
    cumulative = np.cumsum(hist)
    k = int(np.searchsorted(cumulative, target))
    if k == 0:
        return float(edges[0])
    if k >= len(cumulative):
        return float(edges[-1])
    below = cumulative[k - 1]
    inside = cumulative[k] - below
    if inside == 0:
        return float(edges[k])
    return float(edges[k] + (target - below) / inside * (edges[k + 1] - edges[k]))


def aggregate_stats(episodes: list[dict[str, dict[str, np.ndarray]]]) -> dict[str, dict[str, np.ndarray]]:
    """Dataset statistics from per-episode ones, as LeRobot aggregates them: min of mins, max of
    maxes, count-weighted mean, the parallel-variance std, count-weighted quantiles."""
    out: dict[str, dict[str, np.ndarray]] = {}
    for key in episodes[0]:
        ss = [e[key] for e in episodes]
        counts = np.stack([s["count"] for s in ss]).astype(np.float64)  # (E, 1)
        total = counts.sum(axis=0)
        means = np.stack([s["mean"] for s in ss])
        w = counts.reshape(-1, *([1] * (means.ndim - 1)))
        mean = (means * w).sum(axis=0) / total
        var = ((np.stack([s["std"] for s in ss]) ** 2 + (means - mean) ** 2) * w).sum(axis=0) / total
        agg = {"min": np.min(np.stack([s["min"] for s in ss]), axis=0),
               "max": np.max(np.stack([s["max"] for s in ss]), axis=0),
               "mean": mean, "std": np.sqrt(var), "count": total.astype(np.int64)}
        for q in _QUANTILES:
            k = f"q{int(q * 100):02d}"
            agg[k] = (np.stack([s[k] for s in ss]) * w).sum(axis=0) / total
        out[key] = agg
    return out


def _jsonable(stats: dict[str, dict[str, np.ndarray]]) -> dict:
    return {k: {s: np.asarray(v).tolist() for s, v in d.items()} for k, d in stats.items()}


# -- the export ------------------------------------------------------------------------------
def export_lerobot(paths: str | os.PathLike | Sequence[str | os.PathLike], out_dir: str | os.PathLike, *, fps: int = DEFAULT_FPS,
                   task: str | None = None, collections: Iterable[str] | None = None, hands: bool = True,
                   robot_type: str = "wuji_hand2", progress=None) -> LeRobotExport:
    """Write the recordings `paths` (one episode each, in order) as one LeRobot v3.0 dataset in
    `out_dir`, which must not exist. `fps`: the dataset's frame rate [Hz] (an int, as LeRobot
    stores it); `task`: every episode's task text (default: the recording's `scenario` metadata,
    else its file stem); `collections`: only these (default all; every file must hold the same
    ones, with the same layouts); `hands`: include the recorded hand channels. `progress`: a
    tqdm-like bar updated per staged frame. Raises `RecordingError` (nothing left on disk) for an
    existing `out_dir`, a file without tactile collections, a collection missing from a file,
    layouts that differ across files, or data the grid cannot hold."""
    if isinstance(fps, bool) or not isinstance(fps, int) or not 1 <= fps <= 10_000:
        raise ValueError(f"fps must be an int in [1, 10000] (LeRobot stores an integer rate), got {fps!r}")
    files = [Path(paths)] if isinstance(paths, (str, os.PathLike)) else [Path(p) for p in paths]
    if not files:
        raise ValueError("export_lerobot needs at least one recording")
    if task is not None and (not isinstance(task, str) or not task.strip()):
        raise ValueError(f"task must be a non-empty str or None, got {task!r}")
    out = Path(out_dir)
    if out.exists() or out.is_symlink():
        raise RecordingError(f"{out} already exists; the LeRobot export writes a new dataset directory "
                             "(remove it or choose another name)")
    for p in files:
        if not p.is_file():
            raise RecordingError(f"{p}: no such file" if not p.exists() else f"{p}: not a file")
    pa, pq = _pyarrow()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(staging, 0o777 & ~umask)  # a normal directory once renamed (mkdtemp makes it private)
        result = _Writer(pa, pq, staging, fps, robot_type).run(files, task, collections, hands, progress)
        if out.exists():
            raise RecordingError(f"{out} appeared while exporting; the dataset was not moved there")
        os.rename(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    result.root = out
    return result


class _Writer:
    def __init__(self, pa, pq, root: Path, fps: int, robot_type: str) -> None:
        self.pa, self.pq, self.root, self.fps, self.robot_type = pa, pq, root, fps, robot_type
        self.work = root / ".staging"
        self.work.mkdir()
        self.layouts: dict[str, TactileMetadata] | None = None
        self.sides: list[str] | None = None
        self.slips: list[str] = []
        self.first_path: Path | None = None
        self.features: dict[str, dict] = {}
        self.hf_schema: pyarrow.Schema | None = None  # of the data files; set with the first file's features
        self.data_writer: pyarrow.parquet.ParquetWriter | None = None  # the current data file's
        self.file_index = 0
        self.total = 0
        self.episodes: list[dict] = []
        self.episode_stats: list[dict] = []
        self.tasks: dict[str, int] = {}
        self.sources: list[dict] = []

    # -- per file ------------------------------------------------------------------------------
    def run(self, paths, task, collections, hands, progress) -> LeRobotExport:
        wanted = list(collections) if collections is not None else None
        for i, path in enumerate(paths):
            streams, layouts = self._stage(path, wanted, hands, progress)
            self._check_same(path, layouts, [s.name for s in streams if s.kind == "hand"],
                             [s.name for s in streams if s.kind == "slip"])
            self._episode(i, path, streams, task)
        self._finish()
        return LeRobotExport(self.root, self.fps, [e["length"] for e in self.episodes], self.features, self.sources)

    def _stage(self, path: Path, wanted, hands: bool, progress):
        from .export import iter_frames, iter_hand_poses
        from .replay import McapReplay

        with McapReplay(path, collections=wanted) as replay:
            present = list(replay.collections)
        self._refuse_slip(path, present)
        streams: dict[tuple[str, str], _Stream] = {}
        layouts: dict[str, TactileMetadata] = {}
        tag = len(self.sources)
        for cid, md, frame in iter_frames(path, present):
            s = streams.get(("tactile", cid))
            if s is None:
                layouts[cid] = md
                s = streams[("tactile", cid)] = _Stream("tactile", cid, _tactile_dtype(md.num_taxels),
                                                        self.work / f"ep{tag}_{cid.replace('/', '_')}.bin", path)
            elif md is not layouts[cid] and md != layouts[cid]:
                raise RecordingError(f"{path}: collection {cid!r} changes its layout during the recording; "
                                     "one episode holds one layout")
            s.add(int(frame.timestamp.sample_time_local_common_clock), forces=frame.forces)
            if progress is not None:
                progress.update(1)
        from .slip_channel import iter_pad_slip, pad_slip_topic

        for cid in present:
            for _topic, slip in iter_pad_slip(path, cid):
                s = streams.get(("slip", cid))
                if s is None:
                    s = streams[("slip", cid)] = _Stream("slip", cid, _SLIP_DTYPE,
                                                         self.work / f"ep{tag}_{pad_slip_topic(cid).replace('/', '_')}.bin", path)
                s.add(slip.sample_time_ns, velocity=slip.velocity, stuck=slip.stuck_fraction)
        missing = [c for c in present if ("tactile", c) not in streams]
        if missing:
            raise RecordingError(f"{path}: collection {missing[0]!r} delivered no frame (no confirmed metadata, "
                                 "or no data); nothing to export for it")
        if hands:
            topics: dict[str, str] = {}
            for side, topic, sample in iter_hand_poses(path):
                if topics.setdefault(side, topic) != topic:
                    raise RecordingError(f"{path}: two hand channels for the {side} hand ({topics[side]!r}, "
                                         f"{topic!r}); which one to export is ambiguous")
                s = streams.get(("hand", side))
                if s is None:
                    s = streams[("hand", side)] = _Stream("hand", side, _HAND_DTYPE, self.work / f"ep{tag}_hand_{side}.bin", path)
                tracked = sample.poses is not None
                s.add(int(sample.timestamp[1]), tracked=tracked,
                      **({"poses": sample.poses, "joint_valid": sample.valid} if tracked else {}))
        for s in streams.values():
            s.close()
        order = sorted(streams.values(), key=lambda s: ({"tactile": 0, "slip": 1}.get(s.kind, 2), s.name))
        return order, dict(sorted(layouts.items()))

    def _refuse_slip(self, path: Path, present: list[str]) -> None:
        """Refuse slip output the export cannot map (anything but this package's pad slip channel)."""
        from .scan import FileView, scan
        from .slip_channel import PAD_SLIP_SCHEMA_NAME

        view = FileView(path)
        try:
            sc = scan(view)
            names = {i: sch.name for i, sch in sc.schemas.items()}
            topics = {c.topic for c in sc.channels.values()
                      if not (c.topic.endswith("/pad_slip") and names.get(c.schema_id) == PAD_SLIP_SCHEMA_NAME)}
        finally:
            view.close()
        for cid in present:
            slip = sorted(t for t in topics if t.startswith(cid + "/") and "slip" in t.rsplit("/", 1)[-1])
            if slip:
                raise RecordingError(f"{path}: topic {slip[0]!r} holds slip output, which this export cannot map to a "
                                     "feature yet; export without it is not done silently (nothing written)")

    def _check_same(self, path: Path, layouts: dict[str, TactileMetadata], sides: list[str],
                    slips: list[str] | None = None) -> None:
        slips = slips or []
        if self.layouts is None:
            self.layouts, self.sides, self.slips, self.first_path = layouts, sides, slips, path
            self.features = _features(layouts, sides, slips)
            self.hf_schema = self._schema()
            return
        for cid in self.layouts:
            if cid not in layouts:
                raise RecordingError(f"{path}: collection {cid!r} is missing (it is in {self.first_path}); every "
                                     "episode of a dataset has the same features")
        for cid in layouts:
            if cid not in self.layouts:
                raise RecordingError(f"{path}: collection {cid!r} is not in {self.first_path}; every episode of a "
                                     "dataset has the same features (select collections with -c)")
            if layouts[cid] != self.layouts[cid]:
                raise RecordingError(f"{path}: collection {cid!r} has a different layout than in {self.first_path} "
                                     f"({layouts[cid]!r} vs {self.layouts[cid]!r}); one dataset stores one layout")
        if slips != self.slips:
            raise RecordingError(f"{path}: pad slip channels of {slips or 'no collection'} differ from "
                                 f"{self.first_path}'s ({self.slips or 'none'}); every episode has the same features")
        if sides != self.sides:
            raise RecordingError(f"{path}: recorded hands {sides or 'none'} differ from {self.first_path}'s "
                                 f"{self.sides or 'none'}; every episode has the same features (or use --no-hands)")

    # -- per episode -----------------------------------------------------------------------------
    def _episode(self, ep: int, path: Path, streams: list[_Stream], task: str | None) -> None:
        from .clock_anchor import read_clock_anchors
        from .export import _file_metadata

        fps = self.fps
        layouts, schema = self.layouts, self.hf_schema
        if layouts is None or schema is None:
            raise RuntimeError(f"{path}: LeRobot episode written before _check_same set the dataset's features")
        spans = [s.span() for s in streams if s.kind == "tactile"]  # McapReplay refused a file without any
        t0 = min(first for first, _last in spans)
        last_k = max(_grid_index(np.array([last]), t0, fps)[0] for _first, last in spans)
        length = int(last_k) + 1
        meta = _file_metadata(path)
        file_md = meta.get("wuji_tactile_device", {})
        text = task or file_md.get("scenario") or path.stem
        task_index = self.tasks.setdefault(text, len(self.tasks))
        if self.data_writer is not None and \
                os.path.getsize(self.root / self._data_path(self.file_index)) >= DATA_FILES_SIZE_IN_MB * 2 ** 20:
            self.data_writer.close()  # as LeRobot: a new data file once one reaches the size limit
            self.data_writer, self.file_index = None, self.file_index + 1
        if self.data_writer is None:
            target = self.root / self._data_path(self.file_index)
            target.parent.mkdir(parents=True, exist_ok=True)
            self.data_writer = self.pq.ParquetWriter(target, schema, compression="snappy")
        stats = {k: _FeatureStats(f["dtype"]) for k, f in self.features.items()}
        pads = {cid: pad_layout(md) for cid, md in layouts.items()}
        # pass 1 writes the rows and takes min/max/mean/std; pass 2 rebuilds the same rows from the
        # staged streams for the quantile histograms (their bins need the episode's min and max)
        for second in (False, True):
            aligners = [_Aligner(s, t0, fps, length) for s in streams]
            for a in range(0, length, CHUNK_ROWS):
                cols = self._rows(aligners, pads, a, min(length, a + CHUNK_ROWS), ep, task_index)
                for k, v in cols.items():
                    (stats[k].second_pass if second else stats[k].first_pass)(v)
                if not second:
                    self.data_writer.write_table(self._table(cols))
        for s in streams:  # this episode's staging is no longer needed
            s.path.unlink()
        ep_stats = {k: s.result() for k, s in stats.items()}
        self.episode_stats.append(ep_stats)
        self.episodes.append({"episode_index": ep, "tasks": [text], "length": length,
                              "data/chunk_index": 0, "data/file_index": self.file_index,
                              "dataset_from_index": self.total, "dataset_to_index": self.total + length,
                              "stats": ep_stats})
        self.total += length
        anchors = read_clock_anchors(path)
        self.sources.append({
            "episode_index": ep, "source_file": str(path.resolve()), "source_size_bytes": path.stat().st_size,
            "task": text, "fps": fps,
            "grid_origin_sample_time_ns": t0,
            "clock": "row k is at sample time grid_origin_sample_time_ns + k * 1e9 / fps on the recording's "
                     "sample clock (DeviceDataTimestamp.sample_time_local_common_clock)",
            "clock_anchors": [{"monotonic_ns": c.monotonic_ns, "realtime_ns": c.realtime_ns,
                               "uncertainty_ns": c.uncertainty_ns} for c in anchors],
            "file_metadata": meta.get("wuji_tactile_device", {}),
            "streams": {f"{s.kind}:{s.name}": a.report() for s, a in zip(streams, aligners, strict=True)},
        })

    def _rows(self, aligners, pads, a: int, b: int, ep: int, task_index: int) -> dict[str, np.ndarray]:
        n = b - a
        cols: dict[str, np.ndarray] = {}
        for al in aligners:
            s = al.stream
            rows, valid, offset = al.take(a, b)
            if s.kind == "tactile":
                p = _collection_prefix(s.name)
                forces = np.where(valid[:, None, None], rows["forces"], np.float32(0))
                cols[f"{p}.forces"] = forces
                cols[f"{p}.pad_resultants"] = pad_resultants_f32(pads[s.name], forces)
                cols[f"{p}.valid"] = valid
                cols[f"{p}.time_offset"] = offset
            elif s.kind == "slip":
                p = _collection_prefix(s.name)
                cols[f"{p}.pad_slip_velocity"] = np.where(valid[:, None, None], rows["velocity"], np.float32(0))
                cols[f"{p}.pad_stuck_fraction"] = np.where(valid[:, None], rows["stuck"], np.float32(0))
                cols[f"{p}.pad_slip_valid"] = valid
            else:
                ok = valid & rows["tracked"]
                p = f"observation.hand.{s.name}"
                cols[f"{p}.joint_poses"] = np.where(ok[:, None, None], rows["poses"], np.float32(0))
                cols[f"{p}.joint_valid"] = rows["joint_valid"] & ok[:, None]
                cols[f"{p}.valid"] = ok
        k = np.arange(a, b, dtype=np.int64)
        cols["timestamp"] = (k / self.fps).astype(np.float32)
        cols["frame_index"] = k
        cols["episode_index"] = np.full(n, ep, np.int64)
        cols["index"] = self.total + k
        cols["task_index"] = np.full(n, task_index, np.int64)
        return cols

    # -- arrow -----------------------------------------------------------------------------------
    def _schema(self):
        pa = self.pa
        fields, hf = [], {}
        for k, f in self.features.items():
            t = pa.float32() if f["dtype"] == "float32" else pa.bool_() if f["dtype"] == "bool" else pa.int64()
            shape = f["shape"]
            if shape == [1]:
                fields.append(pa.field(k, t))
                hf[k] = {"dtype": f["dtype"], "_type": "Value"}
            elif len(shape) == 1:
                fields.append(pa.field(k, pa.list_(t, shape[0])))
                hf[k] = {"feature": {"dtype": f["dtype"], "_type": "Value"}, "length": shape[0], "_type": "List"}
            else:  # datasets' Array2D: nested lists, tagged as its extension type
                meta = {b"ARROW:extension:name": b"datasets.features.features.Array2DExtensionType",
                        b"ARROW:extension:metadata": json.dumps([list(shape), f["dtype"]]).encode()}
                fields.append(pa.field(k, pa.list_(pa.list_(t)), metadata=meta))
                hf[k] = {"shape": list(shape), "dtype": f["dtype"], "_type": "Array2D"}
        return pa.schema(fields, metadata={b"huggingface": json.dumps({"info": {"features": hf}}).encode()})

    def _table(self, cols: dict[str, np.ndarray]):
        pa, schema = self.pa, self.hf_schema
        if schema is None:
            raise RuntimeError("LeRobot export: a data table built before _check_same set the dataset's schema")
        arrays = []
        for f in schema:
            v = np.ascontiguousarray(cols[f.name])
            n = v.shape[0]
            if v.ndim == 1:
                arrays.append(pa.array(v))
            elif v.ndim == 2:
                arrays.append(pa.FixedSizeListArray.from_arrays(pa.array(v.ravel()), v.shape[1]))
            else:
                inner = pa.ListArray.from_arrays(pa.array(np.arange(0, n * v.shape[1] * v.shape[2] + 1, v.shape[2],
                                                                    dtype=np.int32)), pa.array(v.ravel()))
                arrays.append(pa.ListArray.from_arrays(pa.array(np.arange(0, n * v.shape[1] + 1, v.shape[1],
                                                                          dtype=np.int32)), inner))
        return pa.Table.from_arrays(arrays, schema=schema)

    def _data_path(self, file_index: int) -> str:
        return _DATA_PATH.format(chunk_index=0, file_index=file_index)

    # -- metadata --------------------------------------------------------------------------------
    def _finish(self) -> None:
        pa, pq = self.pa, self.pq
        if self.data_writer is not None:
            self.data_writer.close()
        shutil.rmtree(self.work)
        meta = self.root / "meta"
        (meta / "episodes" / "chunk-000").mkdir(parents=True)
        info = {"codebase_version": CODEBASE_VERSION, "robot_type": self.robot_type,
                "total_episodes": len(self.episodes), "total_frames": self.total, "total_tasks": len(self.tasks),
                "chunks_size": CHUNKS_SIZE, "data_files_size_in_mb": DATA_FILES_SIZE_IN_MB,
                "video_files_size_in_mb": 200, "fps": self.fps, "splits": {"train": f"0:{len(self.episodes)}"},
                "data_path": _DATA_PATH, "video_path": None, "features": self.features}
        (meta / "info.json").write_text(json.dumps(info, indent=4))
        (meta / "stats.json").write_text(json.dumps(_jsonable(aggregate_stats(self.episode_stats)), indent=4))
        # tasks: LeRobot reads them with pandas, the task text as the index
        names = list(self.tasks)
        pandas_meta = {"index_columns": ["__index_level_0__"], "column_indexes": [
            {"name": None, "field_name": None, "pandas_type": "unicode", "numpy_type": "object",
             "metadata": {"encoding": "UTF-8"}}], "columns": [
            {"name": "task_index", "field_name": "task_index", "pandas_type": "int64", "numpy_type": "int64",
             "metadata": None},
            {"name": None, "field_name": "__index_level_0__", "pandas_type": "unicode", "numpy_type": "object",
             "metadata": None}], "attributes": {}, "creator": {"library": "pyarrow", "version": pa.__version__}}
        tasks = pa.table({"task_index": pa.array([self.tasks[t] for t in names], pa.int64()),
                          "__index_level_0__": pa.array(names, pa.string())})
        pq.write_table(tasks.replace_schema_metadata({b"pandas": json.dumps(pandas_meta).encode()}),
                       meta / "tasks.parquet")
        rows: dict[str, list] = {}
        for e in self.episodes:
            flat = {k: v for k, v in e.items() if k != "stats"}
            for feat, st in e["stats"].items():
                for s, v in st.items():
                    flat[f"stats/{feat}/{s}"] = np.asarray(v).tolist()
            flat["meta/episodes/chunk_index"] = 0
            flat["meta/episodes/file_index"] = 0
            for k, v in flat.items():
                rows.setdefault(k, []).append(v)
        pq.write_table(pa.Table.from_pydict(rows), meta / "episodes" / "chunk-000" / "file-000.parquet",
                       compression="snappy")
        layouts = {}
        for cid, md in (self.layouts or {}).items():
            pl = pad_layout(md)
            layouts[cid] = {
                "feature_prefix": _collection_prefix(cid), "num_taxels": md.num_taxels,
                "joint_ids": [int(j) for j in md.joint_ids],
                "joint_names": [HandJoint(int(j)).name for j in md.joint_ids],
                **{name: values.tolist() for name, values in md.arrays().items()},  # every declared array present
                "pad_of_taxel": pl.pad_of_taxel.tolist(), "pad_segment": pl.pad_segment.tolist(),
                "pads": list(FINGERS),
                "units": "bind poses: x, y, z [m], qx, qy, qz, qw in the wrist frame; weights: LBS, sum 1 per taxel"}
        (meta / "wuji_tactile.json").write_text(json.dumps({
            "format": "wuji_tactile_device LeRobot export 1",
            "grid": "row k of an episode takes, per stream, the sample nearest to t0 + k/fps among those within "
                    "[-T/2, +T/2) of it (no interpolation); rows without one are zero and valid=false",
            "layouts": layouts, "episodes": self.sources}, indent=1))


def pad_resultants_f32(layout, forces: np.ndarray) -> np.ndarray:
    """(rows, 5, 3) float32 pad resultants [N, pad frame] of (rows, N, 3) taxel forces."""
    flat = forces.reshape(forces.shape[0], -1).astype(np.float64)
    return (flat @ layout.resultant_matrix.T).reshape(-1, NUM_PADS, 3).astype(np.float32)


def _grid_index(t: np.ndarray, t0: int, fps: int) -> np.ndarray:
    """Row whose window [t_k − T/2, t_k + T/2) holds sample time t (exact integer arithmetic)."""
    return (2 * (t - t0) * fps + 1_000_000_000) // 2_000_000_000


class _Aligner:
    """Reads one staged stream in order and gives, for grid rows [a, b), the nearest sample of each window."""

    def __init__(self, stream: _Stream, t0: int, fps: int, length: int) -> None:
        self.stream, self.t0, self.fps, self.length = stream, t0, fps, length
        self._f = open(stream.path, "rb")
        self._pending = np.zeros(0, stream.dtype)
        self._eof = False
        self.used = self.unused_in_window = self.before_start = self.after_end = 0

    def _fill(self, b: int) -> None:
        while not self._eof and (len(self._pending) == 0 or
                                 _grid_index(self._pending["t"][-1:], self.t0, self.fps)[0] < b):
            block = np.fromfile(self._f, self.stream.dtype, count=_READ_BLOCK)
            if len(block) == 0:
                self._eof = True
                self._f.close()
                break
            self._pending = np.concatenate([self._pending, block])

    def take(self, a: int, b: int):
        self._fill(b)
        p = self._pending
        k = _grid_index(p["t"], self.t0, self.fps)
        cut = int(np.searchsorted(k, b, side="left"))
        here, kh = p[:cut], k[:cut]
        self._pending = p[cut:]
        early = kh < a  # before the grid's first row (only before row 0: earlier rows were taken)
        self.before_start += int(early.sum())
        here, kh = here[~early], kh[~early]
        rows = np.zeros(b - a, self.stream.dtype)
        valid = np.zeros(b - a, bool)
        offset = np.zeros(b - a, np.float32)
        if len(here):
            dist = np.abs((here["t"] - self.t0) * self.fps - kh * 1_000_000_000)
            order = np.lexsort((dist, kh))  # per row: nearest first, ties to the earlier (stable)
            first = np.ones(len(order), bool)
            first[1:] = kh[order][1:] != kh[order][:-1]
            pick = order[first]
            slot = kh[pick] - a
            rows[slot] = here[pick]
            valid[slot] = True
            grid_ns = self.t0 + (kh[pick] * 1_000_000_000) / self.fps
            offset[slot] = ((here["t"][pick] - self.t0) - (grid_ns - self.t0)) * 1e-9
            self.used += len(pick)
            self.unused_in_window += len(here) - len(pick)
        if b >= self.length:  # the episode ends: whatever is left lies after its last row
            self.after_end += len(self._pending)
            self._pending = self._pending[:0]
            while not self._eof:
                block = np.fromfile(self._f, self.stream.dtype, count=_READ_BLOCK)
                if len(block) == 0:
                    self._eof = True
                    self._f.close()
                self.after_end += len(block)
        return rows, valid, offset

    def report(self) -> dict:
        return {"samples": self.stream.samples, "rows_valid": self.used, "unused_same_window": self.unused_in_window,
                "before_first_row": self.before_start, "after_last_row": self.after_end}
