"""`wuji-tactile inspect`: per-topic counts, time range, rate and schema of a recording, with every
chunk, record and metadata checked (see `recording.inspect`)."""
from __future__ import annotations

import argparse


def register(subparsers) -> None:
    p = subparsers.add_parser("inspect", help="summarise and check an MCAP recording",
                              description="Print per-topic counts, time range, rate, schema names and "
                                          "producer sessions; check every chunk CRC, every record through the "
                                          "verifier and every metadata through validation. Exit 0 when the "
                                          "file could be read (see `validate` for a strict verdict).")
    p.add_argument("input", metavar="FILE.mcap")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..recording.inspect import inspect_file

    print(inspect_file(args.input).text())
    return 0
