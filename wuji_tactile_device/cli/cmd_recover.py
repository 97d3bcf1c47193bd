"""`wuji-tactile recover`: rewrite a damaged recording into a complete one and say what was lost."""
from __future__ import annotations

import argparse
import dataclasses


def register(subparsers) -> None:
    p = subparsers.add_parser("recover", help="rewrite a damaged MCAP recording into a valid one",
                              description="Keep every message of every intact chunk of DAMAGED.mcap (cut off by a "
                                          "crash or with corrupt chunks) and write them to OUT.mcap, a complete "
                                          "indexed file; report what was kept and lost, and whether the result is valid (the faults recover copies "
                                          "as they are, e.g. a peer's NaN frame, keep it invalid). Exit 0 when "
                                          "nothing was lost and the result is valid, 1 otherwise.")
    p.add_argument("input", metavar="DAMAGED.mcap")
    p.add_argument("output", metavar="OUT.mcap")
    p.add_argument("--overwrite", action="store_true", help="replace OUT.mcap if it exists")
    p.add_argument("--profile", choices=("default", "isaac"), default="default",
                   help="layout of OUT.mcap: default (zstd) or isaac (uncompressed, header profile teleop, Isaac "
                        "Teleop's exact hand schema: converts any recording into one its ReplaySession reads)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..recording.repair import recover

    from ..recording.inspect import inspect_file

    report = recover(args.input, args.output, overwrite=args.overwrite, profile=args.profile)
    lost = not nothing_lost(report)
    # What validate says of the result: "nothing lost" is never printed beside a file validate refuses.
    check = inspect_file(args.output)
    for line in report.text().splitlines():
        if line.startswith("nothing lost") and not check.valid:
            continue
        if not lost and line.startswith("lost: 0 bytes"):
            if not check.valid:
                continue
            t = report.truncation
            line = (f"nothing lost: the file ends at a record boundary, only its index was missing ({t.reason if t else 'no truncation found'}); "
                    "messages the recorder had not flushed when it stopped were never in the file")
        print(line)
    if not check.valid:
        first = check.problems[0] if check.problems else check.NO_COLLECTION
        print(f"not valid: {args.output} has {check.problem_count} problem(s) `wuji-tactile validate` reports "
              f"(first: {first})")
        return 1
    return 1 if lost else 0


def nothing_lost(report) -> bool:
    """The library's `lossless`, except that a source cut exactly at a record boundary (0 bytes
    after the last complete record, no cut-off chunk) lost nothing: only its index was missing,
    and recover rebuilt it."""
    t = report.truncation
    if t is not None and t.bytes_lost == 0 and t.partial_chunk_range is None:
        return dataclasses.replace(report, truncation=None).lossless
    return report.lossless
