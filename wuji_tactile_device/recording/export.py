"""A recording as arrays: `load_recording` (in memory, for analysis) and `export_recording` (CSV
or NPZ files, streamed: memory stays bounded however long the file).

Both read the file through `McapReplay` and one `TactileTracker` per collection, exactly as an
application does live: metadata validated before any frame, frames of an unconfirmed producer
session dropped, a truncated file read up to its last complete chunk (with a `RecordingWarning`).
Hand poses (`recording.hand_channels`, Isaac Teleop's `<base>/left_hand`, `<base>/right_hand`
channels) come along when the file has them.

Per collection (T frames, N taxels, J segments):

| name | shape, type | meaning |
|---|---|---|
| `sample_time_ns` | (T,) int64 | when sensed, monotonic clock of this machine [ns] |
| `available_time_ns` | (T,) int64 | when it became available (the MCAP log time) [ns] |
| `device_time_ns` | (T,) int64 | when sensed, on the device's clock [ns] |
| `times_s` | (T,) float64 | sample time since the collection's first frame [s] |
| `sequence` | (T,) uint64 | per producer session |
| `producer_session` | (T,) uint64 | id of the producer session that sent the frame |
| `forces` | (T, N, 3) float32 | [N], each taxel's own axes, force ON the taxel (press: fz < 0) |
| `joint_ids` | (J,) int32 | `HandJoint` value of each segment |
| `segment_bind_poses` | (J, 7) float32 | x, y, z [m], qx, qy, qz, qw; wrist frame |
| `taxel_bind_poses` | (N, 7) float32 | as above |
| `segment_indices` | (N, 4) int64 | into the segment list |
| `segment_weights` | (N, 4) float32 | LBS weights, sum 1 per taxel |
| any further declared array | its (rows, width) | under its field name, when the metadata has it (`TactileMetadata.ARRAY_FIELDS`) |

Per tracked hand side (H records): `sample_time_ns`, `available_time_ns`, `device_time_ns` (H,)
int64; `tracked` (H,) bool (False: the record says the hand was not tracked); `poses` (H, 26, 7)
float32 in the recording's base space (NaN where not tracked); `valid` (H, 26) bool; `radius`
(H, 26) float32 [m].
"""
from __future__ import annotations

import csv
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Iterable, Iterator

import numpy as np

from ..contract import TactileMetadata
from ..contract.hand_pose import NUM_HAND_JOINTS, HandPoseSample
from ..errors import RecordingError, RecordingWarning
from ..streams.tracker import TactileFrame
from .hand_channels import iter_hand_records
from .scan import FileView, scan

#: `load_recording` refuses to hold more than this many bytes of arrays [B] (default 2 GiB).
DEFAULT_MAX_BYTES = 2 << 30
FORMATS = ("npz", "csv")
CSV_LAYOUTS = ("wide", "long")
_AXES = ("x", "y", "z")
_POSE = ("x", "y", "z", "qx", "qy", "qz", "qw")


@dataclass
class CollectionData:
    """Every delivered frame of one collection (see the module doc for units and frames)."""

    collection_id: str
    metadata: TactileMetadata
    sample_time_ns: np.ndarray
    available_time_ns: np.ndarray
    device_time_ns: np.ndarray
    sequence: np.ndarray
    producer_session: np.ndarray
    forces: np.ndarray

    @property
    def times_s(self) -> np.ndarray:
        """(T,) sample time since the first frame [s]."""
        return (self.sample_time_ns - self.sample_time_ns[0]) * 1e-9 if len(self.sample_time_ns) else np.zeros(0)


@dataclass
class HandPoses:
    """One hand's pose records (see the module doc)."""

    side: str
    topic: str
    sample_time_ns: np.ndarray
    available_time_ns: np.ndarray
    device_time_ns: np.ndarray
    tracked: np.ndarray
    poses: np.ndarray
    valid: np.ndarray
    radius: np.ndarray


@dataclass
class Recording:
    """A whole file: `collections[collection_id]`, `hands["left"|"right"]` (only the sides the file
    records), `file_metadata[name] = {key: value}` (the MCAP metadata records)."""

    path: Path
    collections: dict[str, CollectionData] = field(default_factory=dict)
    hands: dict[str, HandPoses] = field(default_factory=dict)
    file_metadata: dict[str, dict[str, str]] = field(default_factory=dict)

    def __getitem__(self, collection_id: str) -> CollectionData:
        try:
            return self.collections[collection_id]
        except KeyError:
            raise KeyError(f"{self.path} has no collection {collection_id!r}; it holds: "
                           f"{', '.join(self.collections) or 'none'}") from None


# -- reading, streamed ---------------------------------------------------------------------------
def iter_frames(path: str | os.PathLike, collections: Iterable[str] | None = None
                ) -> Iterator[tuple[str, TactileMetadata, TactileFrame]]:
    """(collection id, its adopted metadata, frame) for every frame the trackers deliver, in the
    file's log-time order; one frame in memory at a time. A faulty record (a peer's NaN frame, a
    session of another layout) costs that record: skipped, counted, and named at the end in one
    `RecordingWarning` per collection (`streams.file_tracker`). Raises `RecordingError` for a
    file that cannot be read."""
    import warnings

    from ..streams.file_tracker import FileTracker
    from .replay import McapReplay

    with McapReplay(path, collections=collections) as replay:
        trackers = [FileTracker(cid, replay) for cid in replay.collections]
        try:
            while True:
                finished = replay.finished  # read before draining: the last frames come with it
                for tracker in trackers:
                    for frame in tracker.frames():
                        metadata = tracker.get_metadata()
                        if metadata is None:  # a tracker delivers a frame only after adopting metadata
                            raise RecordingError(f"{path}: collection {tracker.collection_id!r} delivered frame "
                                                 f"{frame.sequence} without metadata")
                        yield tracker.collection_id, metadata, frame
                if finished:
                    for tracker in trackers:
                        if tracker.summary():
                            warnings.warn(f"{replay.path}: {tracker.summary()}", RecordingWarning, stacklevel=2)
                    return
        finally:
            for tracker in trackers:
                tracker.close()


def iter_hand_poses(path: str | os.PathLike) -> Iterator[tuple[str, str, HandPoseSample]]:
    """(side, topic, `HandPoseSample`) of every hand pose record, file order
    (`recording.hand_channels.iter_hand_records`, both recording profiles)."""
    return iter_hand_records(path)


def _file_metadata(path: str | os.PathLike) -> dict[str, dict[str, str]]:
    view = FileView(path)
    try:
        return {md.name: dict(md.metadata) for md in scan(view).metadata}
    finally:
        view.close()


# -- in memory -----------------------------------------------------------------------------------
def load_recording(path: str | os.PathLike, collections: Iterable[str] | None = None, *,
                   hands: bool = True, max_bytes: int = DEFAULT_MAX_BYTES) -> Recording:
    """Every frame of every collection (or of `collections`) and, with `hands`, the hand poses of
    `path`, as numpy arrays. Raises `RecordingError` before holding more than `max_bytes` of
    arrays (use `iter_frames` or `export_recording`, which stream, for such files), and when a
    selected collection delivers no frame."""
    path = Path(path)
    rec = Recording(path, file_metadata=_file_metadata(path))
    budget = _Budget(path, max_bytes)
    frames: dict[str, list[TactileFrame]] = {}
    meta: dict[str, TactileMetadata] = {}
    for cid, md, frame in iter_frames(path, collections):
        budget.take(frame.forces.nbytes + 40, cid)
        frames.setdefault(cid, []).append(frame)
        meta[cid] = md
    wanted = list(collections) if collections is not None else None
    for cid in wanted or []:
        if cid not in frames:
            raise RecordingError(f"{path}: collection {cid!r} delivered no frame (no confirmed metadata, or no data)")
    for cid, fs in frames.items():
        stamps = np.array([f.timestamp for f in fs], dtype=np.int64).reshape(len(fs), 3)
        rec.collections[cid] = CollectionData(
            cid, meta[cid], sample_time_ns=stamps[:, 1], available_time_ns=stamps[:, 0], device_time_ns=stamps[:, 2],
            sequence=np.array([f.sequence for f in fs], dtype=np.uint64),
            producer_session=np.array([f.producer_session for f in fs], dtype=np.uint64),
            forces=np.stack([f.forces for f in fs]).astype(np.float32, copy=False))
    if hands:
        rows: dict[tuple[str, str], list[HandPoseSample]] = {}
        for side, topic, sample in iter_hand_poses(path):
            budget.take(NUM_HAND_JOINTS * 36 + 32, f"hand {side}")
            rows.setdefault((side, topic), []).append(sample)
        for (side, topic), samples in rows.items():
            if side in rec.hands:
                raise RecordingError(f"{path}: two hand channels for the {side} hand ({rec.hands[side].topic!r}, "
                                     f"{topic!r}); which one to load is ambiguous")
            rec.hands[side] = HandPoses(side, topic, **_hand_columns(samples))
    return rec


class _Budget:
    def __init__(self, path: Path, max_bytes: int) -> None:
        if not max_bytes > 0:
            raise ValueError(f"max_bytes must be > 0, got {max_bytes!r}")
        self.path, self.max_bytes, self.used = path, max_bytes, 0

    def take(self, nbytes: int, what: str) -> None:
        self.used += nbytes
        if self.used > self.max_bytes:
            raise RecordingError(
                f"{self.path}: loading it needs more than {self.max_bytes / 2**20:.0f} MiB of arrays (reached at "
                f"{what}); read it frame by frame with iter_frames(), export it to files (`wuji-tactile export`, "
                "streamed), select fewer collections, or raise max_bytes")


def _hand_columns(samples: list) -> dict[str, np.ndarray]:
    h = len(samples)
    poses = np.full((h, NUM_HAND_JOINTS, 7), np.nan, np.float32)
    valid = np.zeros((h, NUM_HAND_JOINTS), bool)
    radius = np.zeros((h, NUM_HAND_JOINTS), np.float32)
    tracked = np.zeros(h, bool)
    for k, s in enumerate(samples):
        if s.poses is not None:
            tracked[k] = True
            poses[k], valid[k], radius[k] = s.poses, s.valid, s.radius
    stamps = np.array([s.timestamp for s in samples], dtype=np.int64).reshape(h, 3)
    return {"sample_time_ns": stamps[:, 1], "available_time_ns": stamps[:, 0], "device_time_ns": stamps[:, 2],
            "tracked": tracked, "poses": poses, "valid": valid, "radius": radius}


# -- to files, streamed --------------------------------------------------------------------------
def output_stem(collection_or_topic: str) -> str:
    """File-name part of a collection id or topic: `tactile/right` → `tactile_right`."""
    return collection_or_topic.strip("/").replace("/", "_")


def metadata_arrays(md: TactileMetadata) -> dict[str, np.ndarray]:
    """`joint_ids` and every declared metadata array present (`TactileMetadata.arrays()`), by name."""
    return {"joint_ids": np.array([int(j) for j in md.joint_ids], dtype=np.int32), **md.arrays()}


def export_recording(path: str | os.PathLike, out_dir: str | os.PathLike, *, fmt: str = "npz",
                     csv_layout: str = "wide", collections: Iterable[str] | None = None, hands: bool = True,
                     overwrite: bool = False, progress=None) -> list[Path]:
    """Write each collection of `path` (and each recorded hand) into `out_dir` as files named
    `<stem>_<collection>.npz` (arrays of the module doc), or as CSV: `<stem>_<collection>.csv`
    (frames: `csv_layout` "wide" = one row per frame with columns f<k>_x, f<k>_y, f<k>_z; "long" =
    one row per taxel per frame with columns taxel, fx, fy, fz), `<stem>_<collection>_taxels.csv`
    (per taxel: bind pose, segment indices and weights) and `<stem>_<collection>_segments.csv`
    (per segment: joint id and name, bind pose); hands as `<stem>_hand_<side>.npz|.csv`. Streamed:
    one frame in memory at a time (NPZ columns are staged in temporary files next to the output).
    Files appear only when complete (written under a temporary name, then renamed); an existing
    one is refused unless `overwrite`. `progress`: a tqdm-like bar updated per frame, or None.
    Returns the paths written, in that order."""
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {FORMATS}, got {fmt!r}")
    if csv_layout not in CSV_LAYOUTS:
        raise ValueError(f"csv_layout must be one of {CSV_LAYOUTS}, got {csv_layout!r}")
    path, out_dir = Path(path), Path(out_dir)
    if not path.is_file():
        raise RecordingError(f"{path}: no such file" if not path.exists() else f"{path}: not a file")
    out_dir.mkdir(parents=True, exist_ok=True)
    names = _Names(path)
    with tempfile.TemporaryDirectory(prefix=".export-", dir=out_dir) as staging:
        sinks: dict[str, _Sink] = {}
        for cid, md, frame in iter_frames(path, collections):
            sink = sinks.get(cid)
            if sink is None:
                target = out_dir / f"{path.stem}_{output_stem(cid)}.{fmt}"
                names.claim(target, f"collection {cid!r}", fmt)
                _refuse_existing(target, overwrite)
                sink = sinks[cid] = _make_sink(fmt, target, Path(staging), _tactile_columns(md.num_taxels),
                                                csv_layout, md)
            ts = frame.timestamp
            sink.row({"sample_time_ns": ts.sample_time_local_common_clock,
                      "available_time_ns": ts.available_time_local_common_clock,
                      "device_time_ns": ts.sample_time_raw_device_clock, "sequence": frame.sequence,
                      "producer_session": frame.producer_session, "forces": frame.forces})
            if progress is not None:
                progress.update(1)
        if not sinks:
            raise RecordingError(f"{path}: no tactile collection delivered a frame; nothing to export")
        hand_sinks: dict[str, _Sink] = {}
        if hands:
            for side, topic, s in iter_hand_poses(path):
                sink = hand_sinks.get(side)
                if sink is None:
                    target = out_dir / f"{path.stem}_hand_{side}.{fmt}"
                    names.claim(target, f"the {side} hand poses", None)
                    _refuse_existing(target, overwrite)
                    sink = hand_sinks[side] = _make_sink(fmt, target, Path(staging), _HAND_COLUMNS, "wide", None)
                    sink.topic = topic
                elif sink.topic != topic:
                    raise RecordingError(f"{path}: two hand channels for the {side} hand ({sink.topic!r}, {topic!r})")
                tracked = s.poses is not None
                ts = s.timestamp
                sink.row({"sample_time_ns": ts.sample_time_local_common_clock,
                          "available_time_ns": ts.available_time_local_common_clock,
                          "device_time_ns": ts.sample_time_raw_device_clock, "tracked": tracked,
                          "poses": s.poses if tracked else _NAN_POSES, "valid": s.valid if tracked else _NO_VALID,
                          "radius": s.radius if tracked else _NO_RADIUS})
        written: list[Path] = []
        for sink in [*sinks.values(), *hand_sinks.values()]:
            written += sink.finish(overwrite)
    return written


_NAN_POSES = np.full((NUM_HAND_JOINTS, 7), np.nan, np.float32)
_NO_VALID = np.zeros(NUM_HAND_JOINTS, bool)
_NO_RADIUS = np.zeros(NUM_HAND_JOINTS, np.float32)


class _Names:
    """The file names one export writes: two sources (`tactile/right` and `tactile_right`, or a
    collection `hand/left` and the left hand's poses) never share one, the export is refused."""

    def __init__(self, source: Path) -> None:
        self.source = source
        self.owners: dict[str, str] = {}  # exported file name -> what is exported under it

    def claim(self, target: Path, owner: str, fmt: str | None) -> None:
        files = [target]
        if fmt == "csv":  # the layout tables written beside a collection's CSV
            files += [target.with_name(f"{target.stem}_{suffix}.csv") for suffix in ("taxels", "segments")]
        for f in files:
            other = self.owners.get(f.name)
            if other is not None:
                raise RecordingError(
                    f"{self.source}: {other} and {owner} would both be exported as {f.name}; export one of them "
                    "(--collection ID / collections=[...]) or the other into another --out directory")
        for f in files:
            self.owners[f.name] = owner


def _refuse_existing(target: Path, overwrite: bool) -> None:
    if target.exists() and not overwrite:
        raise RecordingError(f"{target} already exists (pass overwrite=True / --overwrite to replace it)")


class _Column:
    """A named per-row array column: dtype, per-row shape and CSV header names."""

    def __init__(self, name: str, dtype, shape: tuple[int, ...] = (), csv_names: list[str] | None = None,
                 csv_fmt: str = "%d") -> None:
        self.name, self.dtype, self.shape, self.csv_fmt = name, np.dtype(dtype), shape, csv_fmt
        self.csv_names = csv_names or [name]


_TIME_COLUMNS = [_Column("sample_time_ns", np.int64), _Column("available_time_ns", np.int64),
                 _Column("device_time_ns", np.int64)]


def _tactile_columns(n: int) -> list[_Column]:
    return _TIME_COLUMNS + [
        _Column("sequence", np.uint64), _Column("producer_session", np.uint64),
        _Column("forces", np.float32, (n, 3), [f"f{k}_{a}" for k in range(n) for a in _AXES], "%.9g")]


_HAND_COLUMNS = _TIME_COLUMNS + [
    _Column("tracked", np.bool_, (), ["tracked"]),
    _Column("poses", np.float32, (NUM_HAND_JOINTS, 7), [f"j{k}_{c}" for k in range(NUM_HAND_JOINTS) for c in _POSE],
            "%.9g"),
    _Column("valid", np.bool_, (NUM_HAND_JOINTS,), [f"j{k}_valid" for k in range(NUM_HAND_JOINTS)]),
    _Column("radius", np.float32, (NUM_HAND_JOINTS,), [f"j{k}_radius" for k in range(NUM_HAND_JOINTS)], "%.9g")]


class _Sink:
    topic = ""

    def row(self, values: dict) -> None:
        raise NotImplementedError

    def finish(self, overwrite: bool) -> list[Path]:
        raise NotImplementedError


def _make_sink(fmt: str, target: Path, staging: Path, columns: list[_Column], layout: str,
               md: TactileMetadata | None) -> _Sink:
    if fmt == "npz":
        return _NpzSink(target, staging, columns, md)
    return _CsvSink(target, staging, columns, layout, md)


class _NpzSink(_Sink):
    """Each column appended to its own temporary raw file; at the end one `.npy` member per column
    (header + raw bytes) in a compressed zip, which `numpy.load` reads as an `.npz`."""

    def __init__(self, target: Path, staging: Path, columns: list[_Column], md: TactileMetadata | None) -> None:
        self.target, self.columns, self.md, self.rows = target, columns, md, 0
        self._dir = Path(tempfile.mkdtemp(prefix=target.stem + "-", dir=staging))
        self._files = {c.name: open(self._dir / c.name, "wb") for c in columns}

    def row(self, values: dict) -> None:
        for c in self.columns:
            a = np.asarray(values[c.name], dtype=c.dtype)
            if a.shape != c.shape:
                raise RecordingError(f"{self.target.name}: {c.name} has shape {a.shape} in frame {self.rows}, "
                                     f"the first frame's was {c.shape}")
            self._files[c.name].write(np.ascontiguousarray(a).tobytes())
        self.rows += 1

    def finish(self, overwrite: bool) -> list[Path]:
        for f in self._files.values():
            f.close()
        partial = self._dir / self.target.name
        with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True) as zf:
            for c in self.columns:
                _npy_member(zf, c.name, c.dtype, (self.rows, *c.shape), self._dir / c.name)
            if self.md is not None:
                times = np.fromfile(self._dir / "sample_time_ns", dtype=np.int64)
                extra = {"times_s": (times - times[0]) * 1e-9, **metadata_arrays(self.md)}
                for name, a in extra.items():
                    with zf.open(name + ".npy", "w", force_zip64=True) as member:
                        np.lib.format.write_array(member, np.ascontiguousarray(a))
        _publish(partial, self.target, overwrite)
        return [self.target]


def _npy_member(zf: zipfile.ZipFile, name: str, dtype: np.dtype, shape: tuple, raw: Path) -> None:
    with zf.open(name + ".npy", "w", force_zip64=True) as member:
        np.lib.format.write_array_header_2_0(member, {"descr": np.lib.format.dtype_to_descr(dtype),
                                                      "fortran_order": False, "shape": shape})
        with open(raw, "rb") as src:
            shutil.copyfileobj(src, member, 1 << 20)


class _CsvSink(_Sink):
    """Rows formatted in blocks (one `%`-format per row), written as they come."""

    BLOCK = 256

    def __init__(self, target: Path, staging: Path, columns: list[_Column], layout: str,
                 md: TactileMetadata | None) -> None:
        self.target, self.columns, self.layout, self.md = target, columns, layout, md
        self._partial = staging / (target.name + ".partial")
        self._f = open(self._partial, "w", newline="")
        self._block: list[dict] = []
        self._t0 = 0  # the first row's sample time [ns], set by row()
        self._started = False
        scalars = [c for c in columns if c.name != "forces"]
        if layout == "long":
            header = ["time_s", *[c.name for c in scalars], "taxel", "fx", "fy", "fz"]
        else:
            header = ["time_s", *[n for c in columns for n in c.csv_names]]
        self._f.write(",".join(header) + "\n")

    def row(self, values: dict) -> None:
        if not self._started:
            self._t0, self._started = int(values["sample_time_ns"]), True
        self._block.append(values)
        if len(self._block) >= self.BLOCK:
            self._flush()

    def _flush(self) -> None:
        if not self._block:
            return
        lines = []
        for values in self._block:
            t = f"{(int(values['sample_time_ns']) - self._t0) * 1e-9:.9f}"
            if self.layout == "long":
                head = ",".join([t, *(str(int(values[c.name])) for c in self.columns if c.name != "forces")])
                forces = np.asarray(values["forces"], dtype=np.float32)
                taxels = np.arange(forces.shape[0])
                lines += [f"{head},{k},{x:.9g},{y:.9g},{z:.9g}" for k, (x, y, z) in zip(taxels, forces.tolist(), strict=True)]
            else:
                cells = [t]
                for c in self.columns:
                    a = np.asarray(values[c.name], dtype=c.dtype).ravel()
                    if c.dtype == np.bool_:
                        cells += ["1" if v else "0" for v in a.tolist()]
                    elif c.csv_fmt == "%d":
                        cells += [str(int(v)) for v in a.tolist()]
                    else:
                        cells += [f"{v:.9g}" for v in a.tolist()]
                lines.append(",".join(cells))
        self._f.write("\n".join(lines) + "\n")
        self._block.clear()

    def finish(self, overwrite: bool) -> list[Path]:
        self._flush()
        self._f.close()
        _publish(self._partial, self.target, overwrite)
        written = [self.target]
        if self.md is not None:
            for suffix, rows, header in _metadata_tables(self.md):
                target = self.target.with_name(f"{self.target.stem}_{suffix}.csv")
                _refuse_existing(target, overwrite)
                partial = self._partial.with_name(target.name + ".partial")
                with open(partial, "w", newline="") as f:
                    w = csv.writer(f)
                    w.writerow(header)
                    w.writerows(rows)
                _publish(partial, target, overwrite)
                written.append(target)
        return written


#: CSV column prefixes of the contract's four arrays (kept from the first export format); any other
#: declared array gets `<name>_<column>` columns.
_CSV_PREFIX = {"taxel_bind_poses": "bind_", "segment_bind_poses": "bind_", "segment_indices": "segment",
               "segment_weights": "weight"}


def _columns(spec) -> list[str]:
    prefix = _CSV_PREFIX.get(spec.name, f"{spec.name}_")
    return [f"{prefix}{c}" for c in (_POSE if spec.kind == "pose" else range(spec.width))]


def _cells(spec, values: np.ndarray) -> list[list]:
    """Rows of one array as CSV cells: integers as they are, floats with float32's 9 digits."""
    rows: list[list] = values.tolist()
    return rows if spec.kind == "index" else [[f"{v:.9g}" for v in row] for row in rows]


def _metadata_tables(md: TactileMetadata):
    """The taxel and segment tables: one column group per declared array present, by its rows."""
    tables = []
    for rows_of, n, lead, header in (
            ("taxels", md.num_taxels, [[k] for k in range(md.num_taxels)], ["taxel"]),
            ("segments", md.num_segments, [[s, int(j), getattr(j, "name", str(j))] for s, j in enumerate(md.joint_ids)],
             ["segment", "joint_id", "joint_name"])):
        specs = [spec for spec in md.ARRAY_FIELDS if spec.rows == rows_of and getattr(md, spec.name) is not None]
        groups = [_cells(spec, getattr(md, spec.name)) for spec in specs]
        table = [sum((g[r] for g in groups), lead[r]) for r in range(n)]
        tables.append((rows_of, table, header + [c for spec in specs for c in _columns(spec)]))
    return tables


def _publish(partial: Path, target: Path, overwrite: bool) -> None:
    """Move a finished file into place; refuses to replace one that appeared meanwhile."""
    if not overwrite and target.exists():
        raise RecordingError(f"{target} already exists (pass overwrite=True / --overwrite to replace it)")
    os.replace(partial, target)
