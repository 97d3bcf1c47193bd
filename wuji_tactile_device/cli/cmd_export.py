"""`wuji-tactile export`: a recording's collections (and hand poses) as NPZ or CSV files, streamed
(see `recording.export`, whose `load_recording` is the same data as numpy arrays in Python), or
several recordings as one LeRobot v3.0 dataset (`--format lerobot`, `recording.lerobot_export`)."""
from __future__ import annotations

import argparse

from .args import int_in


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "export", help="write a recording's frames and layout as NPZ or CSV files, or recordings as a LeRobot dataset",
        description="Read FILE.mcap through the tracker (metadata validated first, exactly as live) and write, "
                    "per collection, <stem>_<collection>.npz (arrays sample_time_ns, available_time_ns, "
                    "device_time_ns, times_s, sequence, producer_session, forces (T, N, 3) [N, taxel axes, force "
                    "on the taxel], joint_ids, segment_bind_poses, taxel_bind_poses, segment_indices, "
                    "segment_weights) or, with --format csv, <stem>_<collection>.csv (the frames) plus "
                    "_taxels.csv and _segments.csv (the layout); recorded hand poses as <stem>_hand_<side>.*. "
                    "Streamed: memory stays bounded however long the recording. Prints the files written. "
                    "--format lerobot: FILE.mcap ... OUT_DIR writes one LeRobot v3.0 dataset, one episode per "
                    "recording, on a --fps grid (docs/lerobot.md); prints the dataset directory.")
    p.add_argument("input", metavar="FILE.mcap", nargs="+",
                   help="the recording (npz/csv: exactly one); lerobot: one or more recordings, then OUT_DIR "
                        "unless --out is given")
    p.add_argument("--format", choices=("npz", "csv", "lerobot"), default="npz", dest="fmt",
                   help="output format (default npz)")
    p.add_argument("--fps", type=int_in(1, 10_000), default=None, metavar="HZ",
                   help="lerobot: frame rate of the dataset's time grid (default 100)")
    p.add_argument("--task", metavar="TEXT", help="lerobot: task text of every episode (default: the recording's "
                                                  "scenario, else its file name)")
    p.add_argument("--layout", choices=("wide", "long"), default="wide",
                   help="CSV rows: wide = one per frame, columns f<k>_x f<k>_y f<k>_z per taxel k (default); "
                        "long = one per taxel per frame, columns taxel fx fy fz")
    p.add_argument("--out", metavar="DIR", help="output directory (default: next to FILE.mcap)")
    p.add_argument("--collection", "-c", action="append", metavar="ID",
                   help="only this collection (repeatable; default: all)")
    p.add_argument("--no-hands", action="store_true", help="leave out the recorded hand poses")
    p.add_argument("--overwrite", action="store_true", help="replace existing output files")
    p.set_defaults(run=run, export_parser=p)
    _accept_positionals_after_options(p)


def _accept_positionals_after_options(p: argparse.ArgumentParser) -> None:
    """`export a.mcap b.mcap --format lerobot ds/`: positionals may follow options (argparse's
    intermixed parsing, used for this sub-command only)."""
    plain = p.parse_known_args

    def intermixed(args=None, namespace=None):
        p.parse_known_args = plain  # parse_known_intermixed_args calls parse_known_args itself
        try:
            return p.parse_known_intermixed_args(args, namespace)
        finally:
            p.parse_known_args = intermixed

    # argparse has no per-subparser switch to intermixed parsing: the bound method is replaced.
    p.parse_known_args = intermixed  # type: ignore[method-assign]


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..recording.export import export_recording

    if args.layout != "wide" and args.fmt != "csv":
        args.export_parser.error("--layout applies to --format csv only")
    if args.fmt == "lerobot":
        return _run_lerobot(args)
    for option in ("fps", "task"):
        if getattr(args, option) is not None:
            args.export_parser.error(f"--{option} applies to --format lerobot only")
    if len(args.input) != 1:
        args.export_parser.error(f"--format {args.fmt} exports one recording at a time (got {len(args.input)})")
    source = args.input[0]
    out = Path(args.out) if args.out else Path(source).parent
    with args.console.bar(desc=f"export {Path(source).name}", unit=" frames") as bar:
        paths = export_recording(source, out, fmt=args.fmt, csv_layout=args.layout, collections=args.collection,
                                 hands=not args.no_hands, overwrite=args.overwrite, progress=bar)
    for path in paths:
        print(path)
    return 0


def _run_lerobot(args: argparse.Namespace) -> int:
    from ..recording.lerobot_export import DEFAULT_FPS, export_lerobot

    inputs = list(args.input)
    if args.out is None:
        if len(inputs) < 2:
            args.export_parser.error("--format lerobot needs FILE.mcap ... OUT_DIR (or --out OUT_DIR)")
        out = inputs.pop()
    else:
        out = args.out
    if args.overwrite:
        args.export_parser.error("--overwrite does not apply to --format lerobot: it always writes a new directory")
    fps = DEFAULT_FPS if args.fps is None else args.fps
    with args.console.bar(desc=f"export {len(inputs)} recording(s)", unit=" frames") as bar:
        result = export_lerobot(inputs, out, fps=fps, task=args.task, collections=args.collection,
                                hands=not args.no_hands, progress=bar)
    print(result.root)
    print(f"{len(result.episode_lengths)} episode(s), {sum(result.episode_lengths)} frames at {result.fps} Hz")
    return 0
