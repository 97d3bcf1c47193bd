"""`wuji-tactile replay`: play an MCAP recording through TactileTracker (printing frames) or onto
Zenoh for other processes, as fast as possible, in real time, or at any speed."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from ..errors import RecordingError
from .common import add_zenoh_arguments, exit_code, open_zenoh, run_producers


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "replay", help="replay an MCAP recording through the tracker or onto Zenoh",
        description="Without --publish: run a TactileTracker per collection on the file (metadata "
                    "validated first, exactly as live) and print one line per frame. With --publish: "
                    "republish the recorded streams on Zenoh with their producer sessions (default real time).")
    p.add_argument("input", metavar="FILE.mcap")
    p.add_argument("--collection", "-c", action="append", metavar="ID", help="only this collection (repeatable)")
    speed = p.add_mutually_exclusive_group()
    speed.add_argument("--speed", type=float, metavar="X", help="real time times X (1 = real time)")
    speed.add_argument("--fast", action="store_true", help="as fast as possible (default without --publish)")
    p.add_argument("--start", type=float, metavar="S", help="start S seconds after the first message")
    p.add_argument("--end", type=float, metavar="S", help="stop S seconds after the first message")
    p.add_argument("--loop", action="store_true", help="start over at the end (until Ctrl-C)")
    p.add_argument("--clock", choices=("log", "sample"), default="log",
                   help="pace, window and print by log time (when the data became available; default) or by "
                        "sample time (when it was sensed: plays a simulation recorded as fast as possible at "
                        "its simulated pace)")
    p.add_argument("--every", type=int, default=1, metavar="K", help="print every K-th frame (default 1)")
    p.add_argument("--publish", action="store_true", help="republish on Zenoh instead of printing")
    add_zenoh_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..recording import McapReplay

    speed = None if args.fast else args.speed if args.speed is not None else (1.0 if args.publish else None)
    probe = McapReplay(args.input, collections=args.collection, clock=args.clock)
    t0 = probe.first_time_ns()
    probe.close()
    start_ns = None if args.start is None or t0 is None else t0 + int(args.start * 1e9)
    end_ns = None if args.end is None or t0 is None else t0 + int(args.end * 1e9)
    if args.every < 1:
        raise RecordingError(f"--every must be >= 1, got {args.every}")
    with McapReplay(args.input, speed=speed, start_ns=start_ns, end_ns=end_ns, loop=args.loop,
                    collections=args.collection, clock=args.clock) as replay:
        if args.publish:
            return _publish(replay, args)
        return _print(replay, args, t0 or 0)


def _print(replay, args, t0: int) -> int:
    from ..streams.tracker import TactileTracker

    trackers = [TactileTracker(cid, replay) for cid in replay.collections]
    counts = dict.fromkeys(replay.collections, 0)
    out = sys.stdout
    while not replay.finished:
        progressed = False
        for tr in trackers:
            if tr.update():
                progressed = True
                counts[tr.collection_id] += 1
                if counts[tr.collection_id] % args.every == 0:
                    f = tr.get_data()
                    # Components are in each taxel's own axes: only the normal (z) parts add up
                    # meaningfully (total pressing load; negative = pressed, the force ON the taxel).
                    fz = float(f.forces[:, 2].sum(dtype=np.float64))
                    mag = np.linalg.norm(f.forces, axis=1)
                    ts = f.timestamp
                    t = ((ts.sample_time_local_common_clock if args.clock == "sample"
                          else ts.available_time_local_common_clock) - t0) / 1e9
                    out.write(f"{t:10.4f} s  {tr.collection_id:<16} seq {f.sequence:>7}  "
                              f"sum fz = {fz:+9.3f} N  max |F| = {mag.max():7.3f} N  "
                              f"taxels loaded {int(np.count_nonzero(mag)):>4}/{len(mag)}\n")
        if not progressed and replay.speed is not None:
            time.sleep(0.001)
    for tr in trackers:
        c = tr.counters
        print(f"{tr.collection_id}: {c.delivered} frames delivered, {c.dropped_before_confirmation} dropped before "
              f"metadata confirmation, {c.rejected} rejected, {c.sequence_gaps} sequence gaps", file=sys.stderr)
    return 0


def _publish(replay, args) -> int:
    """Each recorded collection as a producer on the shared run loop (`cli.common.run_producers`):
    its frames published on Zenoh at the replay's pace under the recorded producer session, its
    layout republished every second for late joiners."""
    from ..producers.replay import ReplayProducer

    transport = open_zenoh(args)
    try:
        producers = ReplayProducer.for_collections(replay, replay.collections)
    except BaseException:
        transport.close()
        raise
    runs = run_producers(producers, args, transport=transport, desc=f"replay {Path(args.input).name}")
    records = sum(p.records for p in producers)
    frames = sum(r.published for r in runs)
    print(f"published {records} recorded messages ({records - frames} metadata layouts, {frames} data frames) of "
          f"{', '.join(p.collection_id for p in producers)}", file=sys.stderr)
    return exit_code(runs[0])
