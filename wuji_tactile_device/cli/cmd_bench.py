"""`wuji-tactile bench`: run the benchmarks and print their markdown tables (figures, floors measured
in the same run, ratio targets). Exit status 1 when a target is missed."""
from __future__ import annotations

import argparse

from ..benchmarks import SECTIONS


def _section(text: str) -> str:
    if text not in SECTIONS:
        raise argparse.ArgumentTypeError(f"unknown section {text!r}; choose from {', '.join(SECTIONS)}")
    return text


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "bench", help="run the benchmarks, print markdown tables",
        description="Measure per-frame costs side by side with their floors in one run and print markdown "
                    "tables; exit 1 if any ratio target fails. This machine's absolute numbers are orders of "
                    "magnitude only; the targets are ratios.")
    p.add_argument("sections", nargs="*", metavar="SECTION", type=_section,
                   help=f"any of {', '.join(SECTIONS)} (default: all)")
    p.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run, noisier figures)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..benchmarks import run_sections

    names = tuple(dict.fromkeys(args.sections)) or SECTIONS
    failed = 0
    for section in run_sections(names, quick=args.quick):
        print(section.markdown(), end="\n\n", flush=True)
        failed += sum(not t.passed for t in section.targets)
    print(f"{failed} target(s) failed" if failed else "all targets met")
    return 1 if failed else 0
