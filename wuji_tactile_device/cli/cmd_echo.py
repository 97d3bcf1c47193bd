"""`wuji-tactile echo`: a live terminal view of tactile collections (Zenoh, or an MCAP file).

One TactileTracker per collection, exactly as an application would use it: metadata first, then
frames. The view shows, per collection, the adopted layout, the newest frame (sequence, age,
per-segment pressing force and peak taxel force) and the tracker's counters. Metadata problems
(mismatch, invalid) are shown, not fatal: the tracker keeps its adopted layout and the view keeps
running; faulty force frames are counted as rejected (error_policy="drop").
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from ..errors import TactileError, TransportError
from .args import positive_int, positive_rate, positive_seconds
from .common import add_zenoh_arguments, open_zenoh

#: Seconds without any message from a collection before echo says that nothing is publishing it.
NO_PRODUCER_NOTICE_S = 3.0


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "echo", help="live terminal view of tactile collections (Zenoh or an MCAP file)",
        description="Subscribe to one or more collections with TactileTracker and show the newest frame "
                    "and the counters, refreshed --rate times per second (on a terminal the view redraws "
                    "in place; otherwise, or with --plain, one line per collection and refresh). "
                    "With --file, read an MCAP recording in real time instead of Zenoh.")
    p.add_argument("--collection", "-c", action="append", metavar="ID",
                   help="collection id, e.g. tactile/right (repeatable; default tactile/right)")
    p.add_argument("--file", metavar="FILE.mcap", help="echo a recording (real time) instead of Zenoh")
    p.add_argument("--rate", type=positive_rate, default=10.0, metavar="HZ", help="view refresh rate (default 10)")
    p.add_argument("--duration", type=positive_seconds, metavar="S", help="stop after S seconds (default: until Ctrl-C)")
    p.add_argument("--count", type=positive_int, metavar="N", help="stop once every collection delivered N frames")
    p.add_argument("--timeout", type=positive_seconds, metavar="S",
                   help="exit 1 if a collection has not delivered its first frame (with --count: N frames) "
                        f"within S seconds (default: wait; after {NO_PRODUCER_NOTICE_S:g} s without a message, "
                        "say so on stderr once and keep waiting)")
    p.add_argument("--plain", action="store_true", help="print lines instead of redrawing the terminal")
    add_zenoh_arguments(p)
    p.set_defaults(run=run)


class _View:
    """What echo knows about one collection."""

    def __init__(self, tracker, replay: bool) -> None:
        self.tracker = tracker
        self.replay = replay  # recorded clocks: show time since the first frame, not age
        self.t0: int | None = None
        self.error = ""
        self.segment_of_taxel: np.ndarray | None = None
        self.names: list[str] = []

    def update(self) -> None:
        try:
            self.tracker.update()
        except TactileError as exc:  # metadata mismatch / invalid: shown, tracker keeps its layout
            self.error = str(exc)
        md = self.tracker.get_metadata()
        if md is not None and self.segment_of_taxel is None:
            self.names = [j.name.removesuffix("_DISTAL").lower() if hasattr(j, "name") else str(j)
                          for j in md.joint_ids]
            primary = md.segment_weights.argmax(axis=1)
            self.segment_of_taxel = md.segment_indices[np.arange(md.num_taxels), primary]

    def lines(self) -> list[str]:
        tr = self.tracker
        c = tr.counters
        md = tr.get_metadata()
        out = [f"{tr.collection_id}: " + (f"{md.num_taxels} taxels on {md.num_segments} segments"
                                          if md is not None else "waiting for metadata")]
        frame = tr.get_data()
        if frame is not None and self.segment_of_taxel is not None:  # a frame comes after its layout
            available = frame.timestamp.available_time_local_common_clock
            if self.replay:
                self.t0 = available if self.t0 is None else self.t0
                when = f"t {(available - self.t0) / 1e9:.3f} s"
            else:
                when = f"age {(time.monotonic_ns() - available) / 1e6:.1f} ms"
            press = np.bincount(self.segment_of_taxel, weights=-frame.forces[:, 2].astype(np.float64),
                                minlength=len(self.names))
            peak = np.linalg.norm(frame.forces, axis=1)
            k = int(peak.argmax())
            out.append(f"  seq {frame.sequence}  session {frame.producer_session:016x}  {when}  "
                       f"peak |F| {peak[k]:.3f} N at taxel {k}")
            out.append("  press [N] (-fz summed per segment): " +
                       "  ".join(f"{n} {p:+.3f}" for n, p in zip(self.names, press, strict=True)))
        out.append(f"  received {c.received}  delivered {c.delivered}  dropped before metadata "
                   f"{c.dropped_before_confirmation}  rejected {c.rejected}  gaps {c.sequence_gaps} "
                   f"(missing {c.frames_missing})  overflow {c.overflowed}")
        if self.error:
            out.append(f"  error: {self.error}")
        return out


def run(args: argparse.Namespace) -> int:
    from ..streams.tracker import TactileTracker

    collections = args.collection or ["tactile/right"]
    if args.file:
        from ..recording import McapReplay

        source = McapReplay(args.file, speed=1.0, collections=collections)
    else:
        source = open_zenoh(args)
    redraw = sys.stdout.isatty() and not args.plain
    views = [_View(TactileTracker(cid, source, error_policy="drop"), replay=bool(args.file)) for cid in collections]
    wanted = args.count or 1
    start = time.monotonic()
    said_waiting: set[str] = set()
    try:
        while True:
            frame_deadline = time.monotonic() + 1.0 / args.rate
            while time.monotonic() < frame_deadline:
                for v in views:
                    v.update()
                time.sleep(0.002)
            text = [line for v in views for line in v.lines()]
            if redraw:
                sys.stdout.write("\x1b[H\x1b[J" + "\n".join(text) + "\n")
            else:
                sys.stdout.write("\n".join(text) + "\n")
            sys.stdout.flush()
            elapsed = time.monotonic() - start
            if args.count is not None and all(v.tracker.counters.delivered >= args.count for v in views):
                break
            if args.timeout is not None and elapsed >= args.timeout:
                short = [v for v in views if v.tracker.counters.delivered < wanted]
                if short:
                    raise TransportError("; ".join(_shortfall(v.tracker, wanted, elapsed) for v in short))
            if args.duration is not None and elapsed >= args.duration:
                break
            if args.file and source.finished:
                break
            if args.timeout is None and elapsed >= NO_PRODUCER_NOTICE_S:
                for v in views:
                    if v.tracker.counters.received == 0 and v.tracker.collection_id not in said_waiting:
                        said_waiting.add(v.tracker.collection_id)
                        args.console.note(f"no producer on {v.tracker.collection_id} after {elapsed:.0f} s "
                                          "(still waiting; Ctrl-C to stop)")
    finally:
        for v in views:
            v.tracker.close()
        source.close()
    silent = [v for v in views if v.tracker.counters.delivered == 0]
    if silent:  # ended by --duration or the end of a file without a single frame from some collection
        raise TransportError("; ".join(_shortfall(v.tracker, 1, time.monotonic() - start) for v in silent))
    if args.count is not None and args.file:
        short = [v for v in views if v.tracker.counters.delivered < args.count]
        if short:
            raise TransportError("; ".join(f"{v.tracker.collection_id}: the file ended after "
                                           f"{v.tracker.counters.delivered} of {args.count} frames" for v in short))
    return 0


def _shortfall(tracker, wanted: int, elapsed: float) -> str:
    """Why a collection has fewer than `wanted` frames after `elapsed` seconds, in one clause."""
    c = tracker.counters
    if c.received == 0:
        return f"no producer on {tracker.collection_id} after {elapsed:.1f} s (nothing received)"
    if c.delivered == 0:
        return (f"{tracker.collection_id}: {c.received} frames received after {elapsed:.1f} s but none delivered "
                f"({c.dropped_before_confirmation} before its metadata was confirmed, {c.rejected} rejected)")
    return f"{tracker.collection_id}: {c.delivered} of {wanted} frames after {elapsed:.1f} s"
