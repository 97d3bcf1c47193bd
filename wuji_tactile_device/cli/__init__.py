"""`wuji-tactile`: one program, one subcommand per job.

Each subcommand lives in `cli/cmd_<name>.py` and exposes `register(subparsers)`, which adds its
parser and sets `run=<function(args) -> int>` as a default; `common` holds what the producer
commands share, `output` the console conventions of every command (one-line warnings and errors,
progress bars only on a terminal, the exit statuses). The global options `--quiet` and
`--progress` are accepted before or after the subcommand; `--version` prints the package version.

Exit status, the same for every command: 0 ok; 1 a user or data error (`TactileError`, an
unreadable file, a missing optional extra: one line on stderr, no traceback); 2 a usage error;
130 Ctrl-C; 143 SIGTERM (files finished first); 141 stdout closed by its reader.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

from .. import __version__
from ..errors import TactileError
from . import output
from .args import OneLineParser
from .output import Console, Terminated

SUBCOMMANDS = ("sim", "hw", "record", "replay", "echo", "inspect", "validate", "recover", "export", "plot", "view",
               "bench", "router", "layout", "certs", "sensor-model")


def _add_console_options(parser: argparse.ArgumentParser, default) -> None:
    g = parser.add_argument_group("console (any command, before or after its name)")
    taken = parser._option_string_actions  # sim declares its own --quiet (same dest, same meaning)
    names = [n for n in ("--quiet", "-q") if n not in taken]
    if names:
        g.add_argument(*names, dest="quiet", action="store_true", default=default,
                       help="no progress bars and no notices; results, warnings and errors still print")
    g.add_argument("--progress", action="store_true", default=default,
                   help="show progress bars even when stderr is not a terminal (e.g. a CI log)")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="wuji-tactile",
        description="Wuji Hand 2 fingertip tactile data: simulate, stream, record, replay, inspect, export.",
        epilog="Exit status: 0 ok, 1 user or data error, 2 usage error, 130 Ctrl-C, 143 SIGTERM, "
               "141 output pipe closed.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    # Before the subcommand these set `global_*`: a subparser's own defaults would overwrite the
    # same name (argparse copies the subcommand's namespace over the top-level one).
    parser.add_argument("--quiet", "-q", dest="global_quiet", action="store_true",
                        help="no progress bars and no notices; results, warnings and errors still print")
    parser.add_argument("--progress", dest="global_progress", action="store_true",
                        help="show progress bars even when stderr is not a terminal")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=OneLineParser)
    for name in SUBCOMMANDS:
        importlib.import_module(f"{__name__}.cmd_{name.replace('-', '_')}").register(sub)
    for p in sub.choices.values():
        _add_console_options(p, default=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)  # SystemExit: 0 for --help/--version, 2 for a usage error
    args.quiet = bool(getattr(args, "quiet", False) or args.global_quiet)
    wants_progress = bool(getattr(args, "progress", False) or args.global_progress)
    if args.quiet and wants_progress:
        parser.error("--quiet and --progress contradict each other")
    args.console = Console(args.command, quiet=args.quiet, progress=True if wants_progress else None)
    args.progress = args.console.progress
    # `args.quiet` is what the producer commands hand to `common.run_producers(quiet=)`, which
    # only switches their progress bar off: no bar either when stderr is not a terminal.
    args.quiet = args.quiet or not args.progress
    try:
        with args.console.installed() as console:
            return _run(args, console)
    except KeyboardInterrupt:  # a signal in the instant before or after the command ran
        return output.EXIT_SIGINT
    except Terminated:
        return output.EXIT_SIGTERM


def _run(args: argparse.Namespace, console: Console) -> int:
    """The command, its failures mapped to the exit statuses of the module doc."""
    try:
        return int(args.run(args) or 0)
    except TactileError as exc:
        console.error(str(exc))
        return output.EXIT_ERROR
    except KeyboardInterrupt:
        console.note("interrupted")
        return output.EXIT_SIGINT
    except Terminated:
        console.note("terminated")
        return output.EXIT_SIGTERM
    except BrokenPipeError:
        # The reader went away (`wuji-tactile replay x.mcap | head`): stop quietly, like Unix tools.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return output.EXIT_BROKEN_PIPE
    except ModuleNotFoundError as exc:
        message = output.missing_extra(exc)
        if message is None:
            raise
        console.error(message)
        return output.EXIT_ERROR
    except OSError as exc:  # a file the user named cannot be read or written
        where = f"{exc.filename}: " if exc.filename else ""
        console.error(f"{where}{exc.strerror or exc}")
        return output.EXIT_ERROR

if __name__ == "__main__":
    sys.exit(main())
