"""`wuji-tactile plot`: PNG pictures of a recording — pad resultants over time, per-pad taxel force
maps and the taxel layout in the wrist frame (see `wuji_tactile_device.plot`)."""
from __future__ import annotations

import argparse
import math


def _newtons(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of newtons: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"colour range must be a finite number of newtons > 0, got {text!r}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"time must be a finite number of seconds >= 0, got {text!r}")
    return value


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "plot", help="write PNG pictures of an MCAP recording",
        description="Write three PNGs for one collection of FILE.mcap and print their paths: "
                    "<stem>_resultants.png (the 15 pad resultant components over time, thumb → pinky rows, "
                    "Fx/Fy/Fz columns, pad frame), <stem>_taxel_maps.png (every taxel's force at one time, "
                    "fixed symmetric colour range) and <stem>_layout.png (taxel positions in the wrist frame "
                    "coloured by |f|).")
    p.add_argument("input", metavar="FILE.mcap", help="a recording made by `wuji-tactile record` or `sim --record`")
    p.add_argument("--out", metavar="DIR", default=None, help="output directory (default: next to FILE.mcap)")
    p.add_argument("--time", metavar="T", type=_seconds, default=None,
                   help="time of the maps and layout [s since the first frame] (default: the frame with the "
                        "largest total pad force)")
    p.add_argument("--range", metavar="N", type=_newtons, default=None, dest="vmax",
                   help="colour range [N] of the maps (±N) and the layout (0…N), e.g. to compare recordings "
                        "(default: the 99.9th percentile of the recording's nonzero values)")
    p.add_argument("--collection", metavar="C", default=None,
                   help="collection to plot, e.g. tactile/right (default: the file's only collection)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..plot import plot_recording

    for path in plot_recording(args.input, args.out, time_s=args.time, collection_id=args.collection,
                               vmax=args.vmax, progress=True):
        print(path)
    return 0
