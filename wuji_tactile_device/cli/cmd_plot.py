"""`wuji-tactile plot`: PNG pictures of a recording — pad resultants over time, per-pad taxel force
maps and the taxels in the wrist frame (see `wuji_tactile_device.plot`)."""
from __future__ import annotations

import argparse

from .args import nonnegative_seconds, positive_newtons
from .output import require_extra


def _newtons(text: str) -> float | str:
    if text == "recording":
        return text
    try:
        return positive_newtons(text)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{exc}, or 'recording'") from None


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "plot", help="write PNG pictures of an MCAP recording",
        description="Write three PNGs for one collection of FILE.mcap and print their paths: "
                    "<stem>_resultants.png (the 15 pad resultant components and each pad's |F| over time, "
                    "thumb → pinky rows, one y-scale per row), <stem>_taxel_maps.png (every taxel's |f|, Fx, Fy, "
                    "Fz at one time, each pad unrolled) and <stem>_layout.png (the taxels in the wrist frame, "
                    "palm and side views, loaded taxels on top). One sign convention everywhere: the force on "
                    "the hand in each pad's frame, so pressing a fingertip pad gives Fy > 0.")
    p.add_argument("input", metavar="FILE.mcap", help="a recording made by `wuji-tactile record` or `sim --record`")
    p.add_argument("--out", metavar="DIR", default=None, help="output directory (default: next to FILE.mcap)")
    p.add_argument("--time", metavar="T", type=nonnegative_seconds, default=None,
                   help="time of the maps and layout [s since the first frame] (default: the frame with the "
                        "largest sustained total pad force)")
    p.add_argument("--range", metavar="N", type=_newtons, default=None, dest="vmax",
                   help="colour range [N] of the maps (|f| 0…N, components ±N) and the layout, fixed (e.g. to "
                        "compare recordings), or 'recording' for the recording's 99.9th percentile of |f| "
                        "(default: per figure, the largest |f| at the chosen time)")
    p.add_argument("--y-scale", choices=("row", "all"), default="row", dest="share",
                   help="resultant panels: one y-scale per pad row (default) or one for all panels")
    p.add_argument("--collection", metavar="C", default=None,
                   help="collection to plot, e.g. tactile/right (default: the file's only collection); the PNG "
                        "names then carry it: <stem>_tactile_right_resultants.png ...")
    p.add_argument("--overwrite", action="store_true", help="replace existing PNGs (default: refuse them)")
    p.add_argument("--quiet", "-q", action="store_true",
                   help="no progress bar (none either when stderr is not a terminal, unless --progress)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..plot import plot_recording

    require_extra("matplotlib", "plot")  # before reading the recording: the missing extra is the only output
    for path in plot_recording(args.input, args.out, time_s=args.time, collection_id=args.collection,
                               vmax=args.vmax, share=args.share, progress=args.progress,
                               overwrite=args.overwrite):
        print(path)
    return 0
