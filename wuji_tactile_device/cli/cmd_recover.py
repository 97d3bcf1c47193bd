"""`wuji-tactile recover`: rewrite a damaged recording into a complete one and say what was lost."""
from __future__ import annotations

import argparse


def register(subparsers) -> None:
    p = subparsers.add_parser("recover", help="rewrite a damaged MCAP recording into a valid one",
                              description="Keep every message of every intact chunk of DAMAGED.mcap (cut off by a "
                                          "crash or with corrupt chunks) and write them to OUT.mcap, a complete "
                                          "indexed file; report what was kept and lost. Exit 1 if anything was lost.")
    p.add_argument("input", metavar="DAMAGED.mcap")
    p.add_argument("output", metavar="OUT.mcap")
    p.add_argument("--overwrite", action="store_true", help="replace OUT.mcap if it exists")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..recording.repair import recover

    report = recover(args.input, args.output, overwrite=args.overwrite)
    print(report.text())
    return 0 if report.lossless else 1
