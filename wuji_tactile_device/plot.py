"""Pictures of a tactile recording (matplotlib `Figure` objects, PNG files; no pyplot state, the
process's backend is left alone).

One sign convention in every figure, stated in each title: forces are the force exerted ON the
hand by the contact (the contract's convention), expressed in each finger pad's frame (`pads`:
the bind frame of the finger's distal segment, OpenXR axes, +Y toward the nail, +Z toward the
wrist). Pressing a fingertip pad therefore reads Fy > 0 everywhere, and a pad's taxel map adds up
to the resultant drawn for that pad.

1. `plot_resultants`: the 15 pad resultant components and |F| over time — rows thumb → pinky,
   columns Fx / Fy / Fz; one y-scale per row by default (`share="all"`: one for the figure).
2. `plot_taxel_maps`: per-pad maps at one time — rows |f|, Fx, Fy, Fz, one column per pad, each
   pad unrolled around its long axis so no taxel hides another; colour range per figure (the
   largest |f| at that time) unless a fixed one is given.
3. `plot_layout`: the taxels in the wrist frame at the hand's pose (bind pose when none is
   given), palm and side views, loaded taxels drawn on top and larger.

The figure functions take arrays (testable without a recording); `plot_recording` reads an MCAP
file through the same `TactileTracker` an application uses and writes the three PNGs.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .errors import DataLayoutError, RecordingError, TactileError
from .contract import TactileMetadata
from .contract.geometry import skin_taxel_positions
from .contract.pads import FINGERS, NUM_PADS, PadLayout, pad_layout, pad_resultants

COMPONENTS = ("Fx", "Fy", "Fz")
_PAD_FRAME = "pad frame: distal-segment bind axes (OpenXR joint: +Y toward nail, +Z toward wrist)"
#: The sign convention, as every figure states it.
CONVENTION = ("sign: force ON the hand by the contact (the contract's convention), in each pad's frame, "
              "so pressing a fingertip pad gives Fy > 0 in every figure")
UNLOADED = "0.78"  # colour of taxels with exactly zero force
SHARE = ("row", "all")
#: A pad whose |F| stays below this [N] for the whole plot is drawn as unloaded (fixed ±10 mN scale).
NO_LOAD_N = 1e-3


def _figure(**kwargs):
    """A matplotlib Figure not registered with pyplot (no global backend switch); clear error
    if matplotlib is not installed."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise TactileError("plotting needs matplotlib: pip install 'wuji-tactile-device[plot]'") from exc
    return Figure(**kwargs)


def _cmap(name: str):
    """A named colormap that draws NaN (a taxel with exactly zero force) in `UNLOADED` grey."""
    from matplotlib import colormaps
    return colormaps[name].with_extremes(bad=UNLOADED)


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
                    mark_time_s: float | None = None, share: str = "row"):
    """Figure with 5×3 panels: pad resultants `(T, 5, 3)` [N, pad frame] against `times_s` (T,)
    [s], each panel with its component and the pad's |F|. `share="row"`: the three panels of a
    pad share one y-scale (a small tangential blip is drawn at the scale of that pad's load);
    `"all"`: every panel shares one y-scale (fingers compare directly)."""
    if share not in SHARE:
        raise ValueError(f"share must be one of {SHARE}, got {share!r}")
    times_s = np.asarray(times_s, dtype=np.float64)
    resultants = np.asarray(resultants, dtype=np.float64)
    if resultants.shape != (times_s.shape[0], NUM_PADS, 3):
        raise DataLayoutError(f"resultants must have shape ({times_s.shape[0]}, {NUM_PADS}, 3), got {resultants.shape}")
    magnitude = np.linalg.norm(resultants, axis=2)
    fig = _figure(figsize=(13, 11), layout="constrained")
    axes = fig.subplots(NUM_PADS, 3, sharex=True, sharey="row" if share == "row" else True, squeeze=False)
    colours = ("tab:red", "tab:green", "tab:blue")
    for pad, finger in enumerate(FINGERS):
        for c, comp in enumerate(COMPONENTS):
            ax = axes[pad, c]
            ax.plot(times_s, resultants[:, pad, c], color=colours[c], linewidth=1.2, label=f"{comp} (pad frame)")
            ax.plot(times_s, magnitude[:, pad], color="k", linestyle="--", linewidth=0.9, label="|F| of the pad")
            ax.axhline(0.0, color="0.6", linewidth=0.6, label="0 N")
            if mark_time_s is not None:
                ax.axvline(mark_time_s, color="0.3", linestyle=":", linewidth=1.0,
                           label=f"t = {mark_time_s:.3f} s (taxel maps, layout)")
            ax.grid(True, alpha=0.3)
            ax.set_title(f"{finger} {comp}", fontsize=10)
            if c == 0:
                ax.set_ylabel(f"{finger}\nforce [N]")
            if pad == NUM_PADS - 1:
                ax.set_xlabel("time since first frame [s]")
    for pad in range(len(FINGERS)):
        if magnitude[:, pad].max(initial=0.0) < NO_LOAD_N:  # else the axis autoscales float noise to ±1e-17
            axes[pad, 0].set_ylim(-10 * NO_LOAD_N, 10 * NO_LOAD_N)
            axes[pad, 1].text(0.5, 0.75, f"no load: |F| < {NO_LOAD_N * 1e3:g} mN throughout", ha="center",
                              va="center", transform=axes[pad, 1].transAxes, fontsize=9, color="0.3")
    # One legend for the figure: every line kind, with the component colours of the three columns.
    handles = [axes[0, c].lines[0] for c in range(3)] + list(axes[0, 0].lines[1:])
    fig.legend(handles=handles, labels=[h.get_label() for h in handles], loc="outside lower center",
               ncol=len(handles), fontsize=9)
    scale = "each row (pad) has one y-scale" if share == "row" else "all panels share one y-scale"
    fig.suptitle((title + "\n" if title else "")
                 + f"Resultant force on each pad [N] (Σ of its taxel forces in the pad frame); {scale}\n"
                 + CONVENTION + "\n" + _PAD_FRAME, fontsize=10)
    return fig


def unrolled_positions(layout: PadLayout) -> np.ndarray:
    """Per-taxel 2-D map coordinates `(N, 2)` [mm]: each pad unrolled around its long axis (pad z).
    A circle is fitted to the pad's taxels seen along z; u = radius · angle around it, measured
    from the pad's centre line (+ toward pad +x), v = pad z (+ toward the wrist), where the pad
    closes in at the fingertip moved on by how far the taxel is inside the circle. A flat pad
    (radius ≫ its width) keeps u = x. Distinct taxels of a curved pad stay apart, none is hidden."""
    pos = layout.taxel_pad_positions * 1e3
    out = np.empty((pos.shape[0], 2))
    out[:, 1] = pos[:, 2]
    for pad in range(NUM_PADS):  # five pads, each fit vectorised over its taxels
        members = np.flatnonzero(layout.pad_of_taxel == pad)
        if members.size == 0:
            continue
        x, y = pos[members, 0], pos[members, 1]
        width = max(np.ptp(x), np.ptp(y), 1e-9)
        u = x
        if members.size >= 3:
            # Algebraic circle fit: x² + y² = a x + b y + c.
            A = np.stack([x, y, np.ones_like(x)], axis=1)
            (a, b, c), *_ = np.linalg.lstsq(A, x * x + y * y, rcond=None)
            cx, cy = a / 2, b / 2
            r2 = c + cx * cx + cy * cy
            if r2 > 0 and np.sqrt(r2) < 5 * width:
                r = np.sqrt(r2)
                d = np.array([x.mean() - cx, y.mean() - cy])
                d /= max(np.linalg.norm(d), 1e-12)
                vx, vy = x - cx, y - cy
                u = r * np.arctan2(-(d[0] * vy - d[1] * vx), d[0] * vx + d[1] * vy)
                if np.corrcoef(u, x)[0, 1] < 0:
                    u = -u  # + toward pad +x
                # Toward the fingertip the pad closes in (r < radius): unroll that cap too, a taxel
                # nearer the axis is further along the surface, beyond the tip.
                tip = np.sign(np.median(pos[members, 2]))  # the tip lies away from the wrist
                out[members, 1] += tip * np.maximum(r - np.hypot(vx, vy), 0.0)
        out[members, 0] = u
    return out


def _range(forces: np.ndarray, vmax: float | None) -> tuple[float, str]:
    """Colour range [N] and its description: fixed `vmax`, else the largest |f| of `forces`."""
    if vmax is not None:
        if not (np.isfinite(vmax) and vmax > 0):
            raise ValueError(f"vmax must be a finite number > 0 [N], got {vmax!r}")
        return float(vmax), f"fixed range {vmax:.3g} N"
    peak = float(np.linalg.norm(np.asarray(forces, dtype=np.float64), axis=-1).max(initial=0.0))
    if peak == 0:
        return 1.0, "no load at this time (range 1 N)"
    return peak, f"range per figure: largest |f| at this time = {peak:.3g} N"


def plot_taxel_maps(layout: PadLayout, forces: np.ndarray, *, vmax: float | None = None, title: str = ""):
    """Figure with 4×5 panels: rows |f|, Fx, Fy, Fz of each taxel at one time, `forces` (N,3) [N,
    taxel axes] rotated into the pad frame; columns the pads, each unrolled (`unrolled_positions`).
    Colour range: `vmax` [N] when given (|f| 0…vmax, components ±vmax), else the largest |f| in
    `forces` (per figure: a light contact fills the scale)."""
    forces = np.asarray(forces, dtype=np.float64)
    n = layout.pad_of_taxel.shape[0]
    if forces.shape != (n, 3):
        raise DataLayoutError(f"forces must have shape ({n}, 3), got {forces.shape}")
    rng, rng_text = _range(forces, vmax)
    pad_f = np.einsum("nij,nj->ni", layout.taxel_to_pad, forces)  # pad frame
    magnitude = np.linalg.norm(forces, axis=1)
    uv = unrolled_positions(layout)
    rows = (("|f|", magnitude, "viridis", 0.0), ("Fx", pad_f[:, 0], "RdBu_r", -rng),
            ("Fy", pad_f[:, 1], "RdBu_r", -rng), ("Fz", pad_f[:, 2], "RdBu_r", -rng))
    fig = _figure(figsize=(15, 13), layout="constrained")
    axes = fig.subplots(len(rows), NUM_PADS, squeeze=False, sharey=True)
    mappables = [None] * len(rows)
    for pad, finger in enumerate(FINGERS):
        members = np.flatnonzero(layout.pad_of_taxel == pad)
        for r, (name, values, cmap, lo) in enumerate(rows):
            ax = axes[r, pad]
            if members.size == 0:
                ax.text(0.5, 0.5, "no taxels", ha="center", va="center", transform=ax.transAxes)
                ax.set_axis_off()
                continue
            v = values[members]
            colours = np.where(magnitude[members] == 0, np.nan, v)  # exact zero: grey, not a colour
            sc = ax.scatter(uv[members, 0], uv[members, 1], c=colours, cmap=_cmap(cmap), vmin=lo, vmax=rng, s=85,
                            edgecolors="0.35", linewidths=0.4, plotnonfinite=True)
            mappables[r] = sc
            ax.set_aspect("equal", adjustable="datalim")
            ax.set_title(f"{finger} {name}", fontsize=10)
            if r == len(rows) - 1:
                ax.set_xlabel("around pad [mm] (+ toward pad +x)", fontsize=8)
            if pad == 0:
                ax.set_ylabel(f"{name}\nalong pad [mm] (pad z, + toward wrist)", fontsize=8)
            ax.tick_params(labelsize=7)
    if mappables[0] is not None:
        bar = fig.colorbar(mappables[0], ax=axes[0, :], shrink=0.9, extend="max" if vmax is not None else "neither")
        bar.set_label("|f| per taxel [N]", fontsize=9)
    if mappables[1] is not None:
        bar = fig.colorbar(mappables[1], ax=axes[1:, :], shrink=0.8, extend="both" if vmax is not None else "neither")
        bar.set_label("force component, pad frame [N]", fontsize=9)
    fig.suptitle((title + "\n" if title else "")
                 + f"Taxel forces at one time [N] ({rng_text}; grey: exactly 0 N)\n" + CONVENTION
                 + "\nEach pad unrolled around its long axis; " + _PAD_FRAME, fontsize=10)
    return fig


def plot_layout(metadata: TactileMetadata, forces: np.ndarray, *, vmax: float | None = None,
                segment_poses: np.ndarray | None = None, title: str = ""):
    """The taxels in the wrist frame [mm] at the hand's pose: `segment_poses` (J, 7) in the wrist
    frame (LBS), or the bind pose when None. Palm view (x, z) and side view (y, z); colour and
    size by |f| `forces` (N, 3) [N] (range: `vmax`, else the largest |f|); taxels drawn in order
    of increasing |f| so a loaded taxel is never hidden behind an unloaded one."""
    forces = np.asarray(forces, dtype=np.float64)
    if forces.shape != (metadata.num_taxels, 3):
        raise DataLayoutError(f"forces must have shape ({metadata.num_taxels}, 3), got {forces.shape}")
    rng, rng_text = _range(forces, vmax)
    poses = metadata.segment_bind_poses if segment_poses is None else segment_poses
    pose_text = "bind pose (no hand pose given)" if segment_poses is None else "hand's pose at this time"
    pos = skin_taxel_positions(metadata, poses) * 1e3
    magnitude = np.linalg.norm(forces, axis=1)
    order = np.argsort(magnitude, kind="stable")  # loaded last = on top
    layout = pad_layout(metadata)
    fig = _figure(figsize=(13, 8), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True, width_ratios=[3, 2])
    views = ((0, "x [mm] (wrist frame)", "palm view (looking from the palm, toward the back of the hand)"),
             (1, "y [mm] (wrist frame, + back of hand)", "side view (looking along -x)"))
    sc = None
    for ax, (h, xlabel, name) in zip(axes, views, strict=True):
        m = magnitude[order]
        colours = np.where(m == 0, np.nan, m)
        sc = ax.scatter(pos[order, h], pos[order, 2], c=colours, cmap=_cmap("viridis"), vmin=0.0, vmax=rng,
                        s=12 + 70 * np.clip(m / rng, 0, 1), edgecolors="0.3", linewidths=0.3, plotnonfinite=True)
        ax.plot([0], [0], marker="x", color="k", linestyle="none", label="wrist (origin)")
        for pad, finger in enumerate(FINGERS if h == 0 else ()):  # side view: pads overlap, no labels
            members = layout.pad_of_taxel == pad
            if members.any():
                tip = pos[members][np.argmin(pos[members, 2])]
                ax.annotate(finger, (tip[h], tip[2]), xytext=(0, -10), textcoords="offset points",
                            ha="center", va="top", fontsize=9)
        ax.set_aspect("equal", adjustable="datalim")
        ax.margins(0.08)
        ax.grid(True, alpha=0.3)
        ax.set_title(name, fontsize=10)
        ax.set_xlabel(xlabel)
    axes[0].set_ylabel("z [mm] (wrist frame, + toward forearm)")
    axes[0].legend(loc="upper left", fontsize=8)
    bar = fig.colorbar(sc, ax=axes, shrink=0.7, extend="max" if vmax is not None else "neither")
    bar.set_label(f"|f| per taxel [N], colour and size\n{rng_text}; grey: 0 N")
    fig.suptitle((title + "\n" if title else "")
                 + f"Taxels in the wrist frame (OpenXR) at the {pose_text}; loaded taxels drawn on top\n"
                 + CONVENTION, fontsize=10)
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
    from .streams.tracker import TactileFrame, TactileTracker

    path = Path(path)
    replay = McapReplay(path, collections=None if collection_id is None else [collection_id])
    try:
        if collection_id is None:
            if len(replay.collections) != 1:
                raise RecordingError(f"{path}: holds {len(replay.collections)} collections "
                                     f"({', '.join(replay.collections) or 'none'}); choose one with --collection")
            collection_id = replay.collections[0]
        with TactileTracker(collection_id, replay) as tracker:
            frames: list[TactileFrame] = []
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


def segment_poses_at(path: str | Path, rec: Recording, k: int) -> np.ndarray | None:
    """The layout's segment poses `(J, 7)` in the wrist frame at frame `k` of `rec`, from the file's
    recorded hand poses (Isaac Teleop hand channels): the hand record of the collection's side
    (the side named by the collection id's last segment, `right` or `left`) whose sample time is
    nearest the frame's, rebased to the wrist (`T_wrist_joint = T_base_wrist⁻¹ · T_base_joint`).
    None when the file has no tracked record of that side within one frame period (2 × 10 ms)."""
    from .contract.geometry import rebase_to_root
    from .contract.joints import HandJoint
    from .recording.export import iter_hand_poses

    side = rec.collection_id.rsplit("/", 1)[-1]
    if side not in ("right", "left"):
        return None
    target = rec.start_ns + int(round(float(rec.times_s[k]) * 1e9))
    best, best_dt = None, 20_000_000  # ns: nothing older or newer than two frames stands for this one
    for hand_side, _topic, sample in iter_hand_poses(path):
        if hand_side != side or sample.poses is None:
            continue
        dt = abs(int(sample.timestamp.sample_time_local_common_clock) - target)
        if dt <= best_dt:
            best, best_dt = sample.poses, dt
    if best is None:
        return None
    joints = best.astype(np.float64)
    in_wrist = rebase_to_root(joints[int(HandJoint.WRIST)], joints)
    return np.stack([in_wrist[int(j)] for j in rec.metadata.joint_ids])  # J segments, not per taxel


def recording_figures(rec: Recording, name: str, *, time_s: float | None = None,
                      vmax: float | str | None = None, share: str = "row",
                      path: str | Path | None = None) -> dict:
    """The three figures of `plot_recording` as `{"resultants"|"taxel_maps"|"layout": () -> Figure}`
    (made on call), for a loaded recording named `name` in the titles. With the file's `path` the
    layout figure is drawn at the hand's recorded pose at that time (`segment_poses_at`)."""
    layout = pad_layout(rec.metadata)
    resultants = pad_resultants(layout, rec.forces)
    k = frame_index_at(rec, time_s)
    t_k = float(rec.times_s[k])
    when = f"t = {t_k:.3f} s" + (" (sustained peak of total pad force)" if time_s is None else "")
    scale: float | None
    if isinstance(vmax, str):
        if vmax != "recording":
            raise ValueError(f"vmax must be a number [N], None or 'recording', got {vmax!r}")
        scale = colour_range(np.linalg.norm(rec.forces, axis=2))
    else:
        scale = vmax
    head = f"{name} — {rec.collection_id} — {rec.forces.shape[0]} frames, {rec.forces.shape[1]} taxels"
    return {
        "resultants": lambda: plot_resultants(rec.times_s, resultants, title=head, mark_time_s=t_k, share=share),
        "taxel_maps": lambda: plot_taxel_maps(layout, rec.forces[k], vmax=scale, title=f"{head} — {when}"),
        "layout": lambda: plot_layout(rec.metadata, rec.forces[k], vmax=scale, title=f"{head} — {when}",
                                      segment_poses=None if path is None else segment_poses_at(path, rec, k)),
    }


#: The PNGs `plot_recording` writes, `<stem>_<suffix>.png`, in this order.
FIGURE_SUFFIXES = ("resultants", "taxel_maps", "layout")


def plot_recording(path: str | Path, out_dir: str | Path | None = None, *, time_s: float | None = None,
                   collection_id: str | None = None, vmax: float | str | None = None, share: str = "row",
                   progress: bool = False, overwrite: bool = False) -> list[Path]:
    """Write `<stem>_resultants.png`, `<stem>_taxel_maps.png`, `<stem>_layout.png` for one
    collection of an MCAP file into `out_dir` (default: next to the file); returns the paths. With
    `collection_id` given, the names carry it (`<stem>_tactile_left_resultants.png`), so the plots
    of two collections of one file never replace each other; an existing PNG is refused unless
    `overwrite` (checked before any work).
    `time_s` [s since the first frame] picks the frame of the maps and the layout (default: the
    sustained largest total pad force). `vmax`: colour range [N] of the maps and the layout —
    None: per figure (the largest |f| at that time); a number: fixed; `"recording"`: fixed to the
    recording's `colour_range` of |f| (same colour = same force at every time). `share`: y-scale
    of the resultant panels ("row" or "all"). `progress`: a tqdm bar on stderr. Each PNG is
    written to a temporary name and renamed, so an interruption never leaves a truncated picture."""
    from tqdm import tqdm

    if share not in SHARE:
        raise ValueError(f"share must be one of {SHARE}, got {share!r}")
    if vmax is not None and vmax != "recording" and not (
            isinstance(vmax, (int, float)) and np.isfinite(vmax) and vmax > 0):
        raise TactileError(f"colour range must be a finite number of newtons > 0 or 'recording', got {vmax!r}")
    path = Path(path)
    if not path.is_file():  # before any progress bar: the error is the only output
        raise RecordingError(f"{path}: no such file" if not path.exists() else f"{path}: not a file")
    out_dir = path.parent if out_dir is None else Path(out_dir)
    from .recording.export import output_stem
    from .recording.safe_files import check_target, publish, temporary_beside

    stem = path.stem if collection_id is None else f"{path.stem}_{output_stem(collection_id)}"
    if out_dir.is_dir():
        for suffix in FIGURE_SUFFIXES:
            check_target(out_dir / f"{stem}_{suffix}.png", overwrite)
    with tqdm(total=4, desc=f"plot {path.name}", unit="step", file=sys.stderr, disable=not progress) as bar:
        rec = load_recording(path, collection_id)
        bar.update()
        figures = recording_figures(rec, path.name, time_s=time_s, vmax=vmax, share=share, path=path)
        out_dir.mkdir(parents=True, exist_ok=True)
        outputs = []
        for suffix, make in figures.items():
            target = out_dir / f"{stem}_{suffix}.png"
            check_target(target, overwrite)
            partial = temporary_beside(target)  # created exclusively: a planted link is never followed
            fig = make()
            try:
                fig.savefig(partial, dpi=110, format="png")
            except BaseException:
                partial.unlink(missing_ok=True)
                raise
            publish(partial, target, overwrite)
            outputs.append(target)
            bar.update()
    return outputs
