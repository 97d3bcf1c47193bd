"""Burn CPU beside a test run, bounded: `python tools/cpu_burn.py --procs 2 --seconds 300`.

Starts `--procs` busy processes (pure Python arithmetic, no I/O) that each stop by themselves
after `--seconds` [s] of wall time, so a forgotten burner cannot outlive its purpose; the parent
waits for them and exits (Ctrl-C / SIGTERM end them at once). Used to check that tests are
deterministic under load: they take time from an injectable clock, never from the machine's speed.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import signal
import sys
import time

#: Longest burn allowed [s]: a burner is a test aid, never a background service.
MAX_SECONDS = 3600.0


def burn(seconds: float) -> int:
    """Spin until `seconds` [s] of monotonic time have passed; returns the loop count."""
    end = time.monotonic() + seconds
    n, x = 0, 1
    while True:
        for _ in range(10_000):
            x = (x * 1_103_515_245 + 12_345) & 0x7FFFFFFF
        n += 1
        if time.monotonic() >= end:
            return n


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-n", "--procs", type=int, default=2, help="busy processes (default 2)")
    p.add_argument("--seconds", type=float, default=300.0, help=f"each stops after this [s] (default 300, at most "
                                                                 f"{MAX_SECONDS:g})")
    a = p.parse_args(argv)
    if not 1 <= a.procs <= 64:
        p.error(f"--procs must be 1..64, got {a.procs}")
    if not 0 < a.seconds <= MAX_SECONDS:
        p.error(f"--seconds must be in (0, {MAX_SECONDS:g}], got {a.seconds}")
    procs = [mp.Process(target=burn, args=(a.seconds,), daemon=True) for _ in range(a.procs)]
    for proc in procs:
        proc.start()

    def stop(signum, _frame) -> None:
        for proc in procs:
            proc.terminate()
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for proc in procs:
        proc.join(a.seconds + 10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
