#!/usr/bin/env python3
"""Slow the machine down on purpose: N processes spinning on arithmetic for a bounded time.

Usage: python tools/cpu_burn.py [-n PROCESSES] [--seconds S]   (defaults: 2 processes, 60 s)
Run it beside `tools/bench.py` to check that a benchmark target holds on a loaded machine. Every
process stops by itself after S seconds (at most 3600); Ctrl-C stops them all at once."""
import argparse
import multiprocessing
import time


def _burn(seconds: float) -> None:
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        for i in range(10_000):
            x = (x * 31 + i) & 0xFFFF


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--processes", type=int, default=2, help="burner processes (default 2)")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long each burns, 0 < S <= 3600 (default 60)")
    args = parser.parse_args()
    if not 1 <= args.processes <= 64:
        parser.error(f"--processes must be 1..64, got {args.processes}")
    if not 0 < args.seconds <= 3600:
        parser.error(f"--seconds must be in (0, 3600], got {args.seconds}")
    procs = [multiprocessing.Process(target=_burn, args=(args.seconds,), daemon=True) for _ in range(args.processes)]
    for p in procs:
        p.start()
    print(f"{args.processes} burner process(es) for {args.seconds:g} s: pids {[p.pid for p in procs]}", flush=True)
    try:
        for p in procs:
            p.join(args.seconds + 5)
    except KeyboardInterrupt:
        for p in procs:
            p.terminate()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
