"""`wuji-tactile`: one program, one subcommand per job.

Each subcommand lives in `cli/cmd_<name>.py` and exposes `register(subparsers)`, which adds its
parser and sets `run=<function(args) -> int>` as a default; `common` holds what they share
(transport and recording options, the one producer run path, safe shutdown). User mistakes (any
`TactileError`) print one line on stderr and exit 1, without a traceback; Ctrl-C exits 130, and a
producer command (`sim`, `hw`, `replay --publish`) stopped by SIGTERM exits 143, its recording
finished.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

from ..errors import TactileError

SUBCOMMANDS = ("sim", "hw", "record", "replay", "echo", "inspect", "validate", "recover", "plot", "view", "bench",
               "router")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wuji-tactile",
        description="Wuji Hand 2 fingertip tactile data: simulate, stream, record, replay, inspect.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in SUBCOMMANDS:
        importlib.import_module(f"{__name__}.cmd_{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except TactileError as exc:
        print(f"wuji-tactile {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"wuji-tactile {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`wuji-tactile replay x.mcap | head`): stop quietly, like Unix tools.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
