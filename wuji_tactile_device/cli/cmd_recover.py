"""`wuji-tactile recover`: rewrite a damaged recording into a complete one and say what was lost."""
from __future__ import annotations

import argparse
import dataclasses


def register(subparsers) -> None:
    p = subparsers.add_parser("recover", help="rewrite a damaged MCAP recording into a valid one",
                              description="Keep every message of every intact chunk of DAMAGED.mcap (cut off by a "
                                          "crash or with corrupt chunks) and write them to OUT.mcap, a complete "
                                          "indexed file; report what was kept and lost. Exit 0 when nothing was lost, 1 if anything was.")
    p.add_argument("input", metavar="DAMAGED.mcap")
    p.add_argument("output", metavar="OUT.mcap")
    p.add_argument("--overwrite", action="store_true", help="replace OUT.mcap if it exists")
    p.add_argument("--profile", choices=("default", "isaac"), default="default",
                   help="layout of OUT.mcap: default (zstd) or isaac (uncompressed, header profile teleop, Isaac "
                        "Teleop's exact hand schema: converts any recording into one its ReplaySession reads)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..recording.repair import recover

    report = recover(args.input, args.output, overwrite=args.overwrite, profile=args.profile)
    lost = not nothing_lost(report)
    for line in report.text().splitlines():
        if not lost and line.startswith("lost: 0 bytes"):
            t = report.truncation
            line = (f"nothing lost: the file ends at a record boundary, only its index was missing ({t.reason}); "
                    "messages the recorder had not flushed when it stopped were never in the file")
        print(line)
    return 1 if lost else 0


def nothing_lost(report) -> bool:
    """The library's `lossless`, except that a source cut exactly at a record boundary (0 bytes
    after the last complete record, no cut-off chunk) lost nothing: only its index was missing,
    and recover rebuilt it."""
    t = report.truncation
    if t is not None and t.bytes_lost == 0 and t.partial_chunk_range is None:
        return dataclasses.replace(report, truncation=None).lossless
    return report.lossless
