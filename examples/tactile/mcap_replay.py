#!/usr/bin/env python3
"""Replay an MCAP recording through TactileTracker and print its frames.

The tracker is the same class a live application uses: it validates the recorded metadata before
it releases any force frame, exactly as it would on a live transport.

Usage: python examples/tactile/mcap_replay.py FILE.mcap [--collection tactile/right] [--realtime]
"""
from __future__ import annotations

import argparse
import sys
import warnings
import time

import numpy as np

from wuji_tactile_device.errors import TactileError
from wuji_tactile_device.recording import McapReplay
from wuji_tactile_device.streams.tracker import TactileTracker



def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning (e.g. a truncated recording replayed up to its last complete record) as one line."""
    print(f"mcap_replay.py: warning: {message}", file=sys.stderr)


warnings.showwarning = _one_line_warning

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", help="an .mcap recording (e.g. from `wuji-tactile record`)")
    parser.add_argument("--collection", default="tactile/right", help="collection id (default tactile/right)")
    parser.add_argument("--realtime", action="store_true", help="pace frames by their recorded times")
    args = parser.parse_args()
    try:
        with McapReplay(args.file, speed=1.0 if args.realtime else None) as replay:
            tracker = TactileTracker(args.collection, replay)
            while not replay.finished:
                if not tracker.update():  # one frame per update when replaying as fast as possible
                    time.sleep(0.001 if args.realtime else 0)
                    continue
                frame = tracker.get_data()
                if tracker.counters.delivered == 1:
                    t0 = frame.timestamp.sample_time_local_common_clock  # monotonic ns: print relative times
                    md = tracker.get_metadata()
                    print(f"metadata: {md.num_taxels} taxels on {md.num_segments} segments "
                          f"({', '.join(j.name for j in md.joint_ids)})")
                # Components are in each taxel's own axes (+z = outward normal): only the normal parts
                # add up meaningfully, as the total pressing load (negative = pressed).
                fz = float(frame.forces[:, 2].sum(dtype=np.float64))
                print(f"seq {frame.sequence:6d}  t = {(frame.timestamp.sample_time_local_common_clock - t0) / 1e9:7.3f} s  "
                      f"sum fz = {fz:+.3f} N  max |F| = {np.linalg.norm(frame.forces, axis=1).max():.3f} N")
            c = tracker.counters
            print(f"{c.delivered} frames, {c.dropped_before_confirmation} dropped before metadata, "
                  f"{c.rejected} rejected", file=sys.stderr)
    except TactileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
