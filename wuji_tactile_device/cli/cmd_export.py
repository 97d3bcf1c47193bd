"""`wuji-tactile export`: a recording's collections (and hand poses) as NPZ or CSV files, streamed
(see `recording.export`, whose `load_recording` is the same data as numpy arrays in Python)."""
from __future__ import annotations

import argparse


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "export", help="write a recording's frames and layout as NPZ or CSV files",
        description="Read FILE.mcap through the tracker (metadata validated first, exactly as live) and write, "
                    "per collection, <stem>_<collection>.npz (arrays sample_time_ns, available_time_ns, "
                    "device_time_ns, times_s, sequence, producer_session, forces (T, N, 3) [N, taxel axes, force "
                    "on the taxel], joint_ids, segment_bind_poses, taxel_bind_poses, segment_indices, "
                    "segment_weights) or, with --format csv, <stem>_<collection>.csv (the frames) plus "
                    "_taxels.csv and _segments.csv (the layout); recorded hand poses as <stem>_hand_<side>.*. "
                    "Streamed: memory stays bounded however long the recording. Prints the files written.")
    p.add_argument("input", metavar="FILE.mcap")
    p.add_argument("--format", choices=("npz", "csv"), default="npz", dest="fmt", help="output format (default npz)")
    p.add_argument("--layout", choices=("wide", "long"), default="wide",
                   help="CSV rows: wide = one per frame, columns f<k>_x f<k>_y f<k>_z per taxel k (default); "
                        "long = one per taxel per frame, columns taxel fx fy fz")
    p.add_argument("--out", metavar="DIR", help="output directory (default: next to FILE.mcap)")
    p.add_argument("--collection", "-c", action="append", metavar="ID",
                   help="only this collection (repeatable; default: all)")
    p.add_argument("--no-hands", action="store_true", help="leave out the recorded hand poses")
    p.add_argument("--overwrite", action="store_true", help="replace existing output files")
    p.set_defaults(run=run, export_parser=p)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..recording.export import export_recording

    out = Path(args.out) if args.out else Path(args.input).parent
    if args.layout != "wide" and args.fmt != "csv":
        args.export_parser.error("--layout applies to --format csv only")
    with args.console.bar(desc=f"export {Path(args.input).name}", unit=" frames") as bar:
        paths = export_recording(args.input, out, fmt=args.fmt, csv_layout=args.layout, collections=args.collection,
                                 hands=not args.no_hands, overwrite=args.overwrite, progress=bar)
    for path in paths:
        print(path)
    return 0
