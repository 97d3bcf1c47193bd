"""Pictures of a tactile recording (matplotlib, Agg backend, PNG files).

Three figures, each readable at a glance, with units and frames in the labels:
1. `plot_resultants`: the 15 pad resultant components over time — rows thumb → pinky, columns
   Fx / Fy / Fz in each pad's frame (see `pads`), [N].
2. `plot_taxel_maps`: per-pad taxel force maps at one time — rows fx / fy / fz in taxel axes,
   one column per pad, taxels drawn at their pad-frame positions, one fixed symmetric colour range.
3. `plot_layout`: the taxel layout in the wrist frame (bind configuration), a 3-D scatter
   coloured by |f| at one time.

The figure functions take arrays (testable without a recording); `plot_recording` reads an MCAP
file through the same `TactileTracker` an application uses and writes the three PNGs.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .errors import DataLayoutError, RecordingError, TactileError
from .contract import TactileMetadata
from .contract.pads import FINGERS, NUM_PADS, PadLayout, pad_layout, pad_resultants

COMPONENTS = ("Fx", "Fy", "Fz")
_PAD_AXIS = ("x", "y (+ nail side)", "z (+ toward wrist)")
_PAD_FRAME = "pad frame: distal-segment bind axes (OpenXR joint: +Z toward wrist, +Y toward nail)"


def _pyplot():
    """matplotlib.pyplot on the Agg backend (no display needed); clear error if not installed."""
    try:
        import matplotlib
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise TactileError("plotting needs matplotlib: pip install 'wuji-tactile-device[plot]'") from exc
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    return plt


class Recording(NamedTuple):
    """One collection of a recording, all frames in memory.

    `times_s` (T,) [s] sample time relative to the first frame; `forces` (T, N, 3) float32 [N,
    taxel axes]; `start_ns`: sample time of the first frame (monotonic clock, ns)."""

    collection_id: str
    metadata: TactileMetadata
    times_s: np.ndarray
    forces: np.ndarray
    start_ns: int


def plot_resultants(times_s: np.ndarray, resultants: np.ndarray, *, title: str = "",
                    mark_time_s: float | None = None):
    """Figure with 5×3 panels: pad resultants `(T, 5, 3)` [N, pad frame] against `times_s` (T,)
    [s]. Columns share their y range so fingers compare at a glance."""
    plt = _pyplot()
    times_s = np.asarray(times_s, dtype=np.float64)
    resultants = np.asarray(resultants, dtype=np.float64)
    if resultants.shape != (times_s.shape[0], NUM_PADS, 3):
        raise DataLayoutError(f"resultants must have shape ({times_s.shape[0]}, {NUM_PADS}, 3), got {resultants.shape}")
    fig, axes = plt.subplots(NUM_PADS, 3, figsize=(13, 10), sharex=True, sharey="col", squeeze=False,
                             layout="constrained")
    colours = ("tab:red", "tab:green", "tab:blue")
    for pad, finger in enumerate(FINGERS):
        for c, comp in enumerate(COMPONENTS):
            ax = axes[pad, c]
            ax.plot(times_s, resultants[:, pad, c], color=colours[c], linewidth=1.2)
            ax.axhline(0.0, color="0.6", linewidth=0.6)
            if mark_time_s is not None:
                ax.axvline(mark_time_s, color="0.3", linestyle=":", linewidth=0.8)
            ax.grid(True, alpha=0.3)
            ax.set_title(f"{finger} {comp}", fontsize=10)
            if c == 0:
                ax.set_ylabel(f"{finger}\nforce [N]")
            if pad == NUM_PADS - 1:
                ax.set_xlabel("time since first frame [s]")
    fig.suptitle((title + "\n" if title else "")
                 + "Resultant force on each pad [N]: Σ of its taxel forces rotated into the\n" + _PAD_FRAME,
                 fontsize=10)
    return fig


def plot_taxel_maps(layout: PadLayout, forces: np.ndarray, *, vmax: float, title: str = ""):
    """Figure with 3×5 panels: taxel force components `forces` (N,3) [N, taxel axes] at one time,
    drawn at each taxel's bind position in its pad frame, colour range fixed to ±`vmax` [N]."""
    plt = _pyplot()
    forces = np.asarray(forces, dtype=np.float64)
    n = layout.pad_of_taxel.shape[0]
    if forces.shape != (n, 3):
        raise DataLayoutError(f"forces must have shape ({n}, 3), got {forces.shape}")
    if not vmax > 0:
        raise ValueError(f"vmax must be > 0 [N], got {vmax}")
    fig, axes = plt.subplots(3, NUM_PADS, figsize=(15, 10), squeeze=False, layout="constrained")
    mappable = None
    for pad, finger in enumerate(FINGERS):
        members = np.flatnonzero(layout.pad_of_taxel == pad)
        pos_mm = layout.taxel_pad_positions[members] * 1e3
        # View each pad along its thinnest pad-frame axis; draw the other two.
        keep = np.sort(np.argsort(np.ptp(pos_mm, axis=0) if members.size else np.arange(3))[1:])
        h_axis, v_axis = (int(keep[0]), int(keep[1]))
        for c, comp in enumerate(("fx", "fy", "fz")):
            ax = axes[c, pad]
            if members.size == 0:
                ax.text(0.5, 0.5, "no taxels", ha="center", va="center", transform=ax.transAxes)
                ax.set_axis_off()
                continue
            mappable = ax.scatter(pos_mm[:, h_axis], pos_mm[:, v_axis], c=forces[members, c],
                                  cmap="RdBu_r", vmin=-vmax, vmax=vmax, s=90, edgecolors="0.4",
                                  linewidths=0.4)
            ax.set_aspect("equal", adjustable="datalim")
            ax.set_title(f"{finger} {comp} ({members.size} taxels)", fontsize=10)
            ax.set_xlabel(f"pad {_PAD_AXIS[h_axis]} [mm]", fontsize=8)
            ax.set_ylabel(f"pad {_PAD_AXIS[v_axis]} [mm]", fontsize=8)
            ax.tick_params(labelsize=7)
    if mappable is not None:
        bar = fig.colorbar(mappable, ax=axes, shrink=0.8, extend="both")
        bar.set_label(f"force component in taxel axes [N] (fixed range ±{vmax:.3g} N)")
    fig.suptitle((title + "\n" if title else "")
                 + "Taxel force components in taxel axes (+z = outward normal: pressing gives fz < 0)\n"
                   "taxels drawn at their bind positions in the " + _PAD_FRAME, fontsize=10)
    return fig


def plot_layout(metadata: TactileMetadata, forces: np.ndarray, *, vmax: float, title: str = ""):
    """3-D scatter of the taxel bind positions in the wrist frame [mm], coloured by |f| (N,)
    [N] on a fixed 0…`vmax` scale, with each pad's name at its centroid."""
    plt = _pyplot()
    forces = np.asarray(forces, dtype=np.float64)
    if forces.shape != (metadata.num_taxels, 3):
        raise DataLayoutError(f"forces must have shape ({metadata.num_taxels}, 3), got {forces.shape}")
    layout = pad_layout(metadata)
    pos_mm = np.asarray(metadata.taxel_bind_poses, dtype=np.float64)[:, :3] * 1e3
    magnitude = np.linalg.norm(forces, axis=1)
    fig = plt.figure(figsize=(10, 8.5))
    ax = fig.add_subplot(projection="3d")
    sc = ax.scatter(pos_mm[:, 0], pos_mm[:, 1], pos_mm[:, 2], c=magnitude, cmap="viridis",
                    vmin=0.0, vmax=vmax if vmax > 0 else 1.0, s=28, depthshade=False,
                    edgecolors="0.3", linewidths=0.2)
    ax.scatter([0], [0], [0], marker="x", color="k", s=60)
    ax.text(0, 0, 4, "wrist", fontsize=9, ha="center")
    below = np.array([0.0, 0.0, -12.0])  # labels under each pad (fingertip side) keep dots visible
    for pad, finger in enumerate(FINGERS):
        members = layout.pad_of_taxel == pad
        if members.any():
            tip = pos_mm[members][np.argmin(pos_mm[members, 2])]
            ax.text(*(tip + below), finger, fontsize=10, ha="center", va="top")
    lo = np.minimum(pos_mm.min(axis=0), 0.0) - [5.0, 5.0, 20.0]
    hi = np.maximum(pos_mm.max(axis=0), 0.0) + [5.0, 5.0, 8.0]
    ax.set_xlim(lo[0], hi[0]), ax.set_ylim(lo[1], hi[1]), ax.set_zlim(lo[2], hi[2])
    span = hi - lo
    ax.set_box_aspect(np.maximum(span, 0.3 * span.max()))  # true scale, but never a flat sliver
    ax.view_init(elev=18, azim=-75)  # from the palm side, slightly from the thumb's side
    from matplotlib.ticker import MaxNLocator
    ax.yaxis.set_major_locator(MaxNLocator(4))
    ax.set_xlabel("x [mm] (wrist frame)")
    ax.set_ylabel("y [mm] (+ back of hand)")
    ax.set_zlabel("z [mm] (+ toward forearm)")
    bar = fig.colorbar(sc, ax=ax, shrink=0.6, pad=0.1, extend="max")
    bar.set_label(f"|f| per taxel [N] (fixed range 0…{vmax:.3g} N)")
    ax.set_title((title + "\n" if title else "")
                 + "Taxel layout in the wrist frame (OpenXR), bind configuration", fontsize=10)
    return fig


#: Percentile of the recording's nonzero |force| values that sets the default colour range: a few
#: transient spikes would otherwise wash every map out; larger values saturate (the colour bar
#: shows the arrows).
RANGE_PERCENTILE = 99.9


def colour_range(values: np.ndarray) -> float:
    """Default fixed colour range [N] of `values` (any shape): the `RANGE_PERCENTILE` percentile
    of the nonzero absolute values, 1 N when all are zero."""
    a = np.abs(np.asarray(values, dtype=np.float64)).ravel()
    a = a[a > 0]
    return float(np.percentile(a, RANGE_PERCENTILE)) if a.size else 1.0


def resultants_of(recording: Recording) -> np.ndarray:
    """Pad resultants `(T, 5, 3)` [N, pad frame] of a recording."""
    return pad_resultants(pad_layout(recording.metadata), recording.forces)


#: Window [frames] of the running median that picks the default time: contact transients of a few
#: frames (impacts, releases) must not be mistaken for the representative load.
PEAK_MEDIAN_FRAMES = 31


def frame_index_at(recording: Recording, time_s: float | None) -> int:
    """Index of the frame nearest `time_s` [s since the first frame]. `None`: the frame where the
    total pad force (Σ of the five resultant magnitudes), after a running median over
    `PEAK_MEDIAN_FRAMES` frames, is largest — the sustained peak, not a one-frame spike.
    Raises `TactileError` when `time_s` lies outside the recording."""
    times = recording.times_s
    if time_s is None:
        total = np.linalg.norm(resultants_of(recording), axis=2).sum(axis=1)
        w = min(PEAK_MEDIAN_FRAMES, total.shape[0])
        padded = np.pad(total, (w // 2, w - 1 - w // 2), mode="edge")
        smooth = np.median(np.lib.stride_tricks.sliding_window_view(padded, w), axis=1)
        return int(np.argmax(smooth))
    if not (times[0] - 1e-9 <= time_s <= times[-1] + 1e-9):
        raise TactileError(f"time {time_s} s is outside the recording of {recording.collection_id!r} "
                           f"({times[0]:.3f} … {times[-1]:.3f} s since its first frame)")
    return int(np.argmin(np.abs(times - time_s)))


def load_recording(path: str | Path, collection_id: str | None = None) -> Recording:
    """Read every force frame of one collection of an MCAP file through `TactileTracker` over
    `McapReplay` (validated exactly as live data). `collection_id` may be omitted when the file
    holds exactly one collection."""
    from .recording import McapReplay
    from .streams.tracker import TactileTracker

    path = Path(path)
    replay = McapReplay(path, collections=None if collection_id is None else [collection_id])
    try:
        if collection_id is None:
            if len(replay.collections) != 1:
                raise RecordingError(f"{path}: holds {len(replay.collections)} collections "
                                     f"({', '.join(replay.collections) or 'none'}); choose one with --collection")
            collection_id = replay.collections[0]
        with TactileTracker(collection_id, replay) as tracker:
            frames = []
            while True:  # speed=None: the replay hands out one frame per update, so none is skipped
                finished = replay.finished
                frames.extend(tracker.frames())
                if finished:
                    break
            metadata = tracker.get_metadata()
    finally:
        replay.close()
    if metadata is None or not frames:
        raise RecordingError(f"{path}: collection {collection_id!r} has no confirmed metadata and "
                             f"force frames ({len(frames)} frame(s) delivered)")
    stamps = np.array([f.timestamp.sample_time_local_common_clock for f in frames], dtype=np.int64)
    forces = np.stack([f.forces for f in frames]).astype(np.float32, copy=False)
    return Recording(collection_id, metadata, (stamps - stamps[0]) * 1e-9, forces, int(stamps[0]))


def plot_recording(path: str | Path, out_dir: str | Path | None = None, *, time_s: float | None = None,
                   collection_id: str | None = None, vmax: float | None = None,
                   progress: bool = False) -> list[Path]:
    """Write `<stem>_resultants.png`, `<stem>_taxel_maps.png`, `<stem>_layout.png` for one
    collection of an MCAP file into `out_dir` (default: next to the file); returns the paths.
    `time_s` [s since the first frame] picks the frame of the maps and the layout (default: the
    sustained largest total pad force). `vmax` [N]: colour range of the maps (±vmax) and the
    layout (0…vmax); default: the 99.9th percentile of the recording's nonzero values.
    `progress`: a tqdm bar on stderr. Each PNG is written to a temporary name and renamed, so an
    interruption never leaves a truncated picture."""
    from tqdm import tqdm

    if vmax is not None and not (np.isfinite(vmax) and vmax > 0):
        raise TactileError(f"colour range must be a finite number of newtons > 0, got {vmax!r}")
    vmax_norm = vmax
    plt = _pyplot()
    path = Path(path)
    out_dir = path.parent if out_dir is None else Path(out_dir)
    with tqdm(total=4, desc=f"plot {path.name}", unit="step", file=sys.stderr, disable=not progress) as bar:
        rec = load_recording(path, collection_id)
        bar.update()
        layout = pad_layout(rec.metadata)
        resultants = pad_resultants(layout, rec.forces)
        k = frame_index_at(rec, time_s)
        t_k = float(rec.times_s[k])
        when = f"t = {t_k:.3f} s" + (" (sustained peak of total pad force)" if time_s is None else "")
        # Colour ranges fixed over the whole recording (same colour = same force at every time).
        vmax = colour_range(rec.forces) if vmax is None else vmax
        vmax_norm = colour_range(np.linalg.norm(rec.forces, axis=2)) if vmax_norm is None else vmax_norm
        head = f"{path.name} — {rec.collection_id} — {rec.forces.shape[0]} frames, {rec.forces.shape[1]} taxels"
        figures = (
            ("resultants", lambda: plot_resultants(rec.times_s, resultants, title=head, mark_time_s=t_k)),
            ("taxel_maps", lambda: plot_taxel_maps(layout, rec.forces[k], vmax=vmax, title=f"{head} — {when}")),
            ("layout", lambda: plot_layout(rec.metadata, rec.forces[k], vmax=vmax_norm, title=f"{head} — {when}")),
        )
        out_dir.mkdir(parents=True, exist_ok=True)
        outputs = []
        for suffix, make in figures:
            target = out_dir / f"{path.stem}_{suffix}.png"
            partial = target.with_name(target.name + ".partial")
            fig = make()
            try:
                fig.savefig(partial, dpi=110, format="png")
                os.replace(partial, target)
            finally:
                plt.close(fig)
                partial.unlink(missing_ok=True)
            outputs.append(target)
            bar.update()
    return outputs
