#!/usr/bin/env python3
"""Run the benchmarks and print markdown tables (figures, floors, ratio targets).

Usage: python tools/bench.py [--quick] [SECTION ...]   (sections: contract streams mcap sim sim_batch hardware,
and isaacteleop: the live latency into an Isaac Teleop session, tools/bench_isaacteleop.py — it uses the
Isaac Teleop integration, which the package's benchmark layer stays below)
Each section prints the machine load average before and after it ran (a ratio measured while
other jobs slowed its reference is visible as such). Exit status 1 if any target fails."""
import argparse
import os
import sys

from wuji_tactile_device.benchmarks import SECTIONS as PACKAGE_SECTIONS
from wuji_tactile_device.benchmarks import load_text, machine_load, run_sections

SECTIONS = (*PACKAGE_SECTIONS, "isaacteleop")


def _run(names: tuple[str, ...], quick: bool) -> list:
    out = []
    for name in names:
        if name == "isaacteleop":
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            import bench_isaacteleop

            before = machine_load()
            section = bench_isaacteleop.run(quick=quick)
            section.load_before, section.load_after = before, machine_load()
            out.append(section)
        else:
            out += run_sections((name,), quick=quick)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sections", nargs="*", metavar="SECTION", help=f"any of {', '.join(SECTIONS)} (default: all)")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (smoke run, noisier)")
    args = parser.parse_args()
    unknown = [s for s in args.sections if s not in SECTIONS]
    if unknown:
        parser.error(f"unknown section {unknown[0]!r}; choose from {', '.join(SECTIONS)}")
    start_load = machine_load()
    sections = _run(tuple(args.sections) or SECTIONS, quick=args.quick)
    print(f"machine load average (1/5/15 min) at start: {load_text(start_load)}, at end: "
          f"{load_text(machine_load())}", end="\n\n")
    failed = 0
    for s in sections:
        print(s.markdown(), end="\n\n", flush=True)
        failed += sum(not t.passed for t in s.targets)
    print(f"{failed} target(s) failed" if failed else "all targets met")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
