"""`wuji-tactile validate`: exit 0 only if a recording is complete and every check passes."""
from __future__ import annotations

import argparse


def register(subparsers) -> None:
    p = subparsers.add_parser("validate", help="check an MCAP recording; exit 1 on any fault",
                              description="Check every chunk CRC, every record through the verifier, every "
                                          "metadata through validation, and that the file is complete. "
                                          "A file without any tactile collection is not "
                                          "valid. Prints the faults; exit 0 = valid, 1 = not.")
    p.add_argument("input", metavar="FILE.mcap", nargs="+")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..errors import TactileError
    from ..recording.inspect import inspect_file

    bad = 0
    for path in args.input:
        try:
            report = inspect_file(path)
        except TactileError as exc:  # not MCAP, unreadable, not a regular file: this file is invalid, go on
            bad += 1
            print(f"{path}: INVALID\n  {exc}")
            continue
        if report.valid:
            print(f"{path}: valid ({report.checked_messages} messages checked)")
            continue
        bad += 1
        print(f"{path}: INVALID")
        if report.scan.truncation is not None:
            print(f"  truncated: {report.scan.truncation.reason} "
                  f"({report.scan.truncation.bytes_lost} bytes unreadable; `wuji-tactile recover` keeps the rest)")
        for p in report.problems:
            print(f"  {p}")
        if report.problem_count > len(report.problems):
            print(f"  ... and {report.problem_count - len(report.problems)} more")
        if not report.collections:
            print(f"  {report.NO_COLLECTION}")
    return 1 if bad else 0
