"""`wuji-tactile replay`: play an MCAP recording through TactileTracker (printing frames) or onto
Zenoh for other processes, as fast as possible, in real time, or at any speed; `--foxglove` shows
it in Foxglove's 3-D view too (on the recorded hand poses when the file has them).

Printing follows the replay's clock strictly: several collections come out in log-time order
(`McapReplay.next_collection()` as fast as possible; frames due in the same paced pass sorted by
time), whatever their rates, and `t` is the frame's log time (or sample time, `--clock sample`)
since the first message."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import RecordingError
from .args import nonnegative_seconds, positive_int, positive_rate, positive_seconds
from .common import add_foxglove_arguments, add_zenoh_arguments, exit_code, open_zenoh, run_producers

if TYPE_CHECKING:
    from ..streams.tracker import TactileFrame


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "replay", help="replay an MCAP recording through the tracker or onto Zenoh",
        description="Without --publish: run a TactileTracker per collection on the file (metadata "
                    "validated first, exactly as live) and print one line per frame. With --publish: "
                    "republish the recorded streams on Zenoh with their producer sessions (default real time).")
    p.add_argument("input", metavar="FILE.mcap")
    p.add_argument("--collection", "-c", action="append", metavar="ID", help="only this collection (repeatable)")
    speed = p.add_mutually_exclusive_group()
    speed.add_argument("--speed", type=positive_rate, metavar="X", help="real time times X (1 = real time)")
    speed.add_argument("--fast", action="store_true", help="as fast as possible (default without --publish or --foxglove)")
    p.add_argument("--start", type=nonnegative_seconds, metavar="S", help="start S seconds after the first message")
    p.add_argument("--end", type=positive_seconds, metavar="S", help="stop S seconds after the first message")
    p.add_argument("--loop", action="store_true", help="start over at the end (until Ctrl-C)")
    p.add_argument("--clock", choices=("log", "sample"), default="log",
                   help="pace, window and print by log time (when the data became available; default) or by "
                        "sample time (when it was sensed: plays a simulation recorded as fast as possible at "
                        "its simulated pace)")
    p.add_argument("--every", type=positive_int, default=1, metavar="K", help="print every K-th frame (default 1)")
    p.add_argument("--publish", action="store_true", help="republish on Zenoh instead of printing")
    add_zenoh_arguments(p)
    add_foxglove_arguments(p)
    p.set_defaults(run=run, replay_parser=p)


def run(args: argparse.Namespace) -> int:
    from ..recording import McapReplay

    if args.start is not None and args.end is not None and args.end <= args.start:
        args.replay_parser.error(f"--end {args.end:g} must be after --start {args.start:g} (both seconds after "
                                 "the first message)")
    paced_default = args.publish or args.foxglove  # a view or other processes want the recorded pace
    speed = None if args.fast else args.speed if args.speed is not None else (1.0 if paced_default else None)
    probe = McapReplay(args.input, collections=args.collection, clock=args.clock)
    t0 = probe.first_time_ns()
    args.replay_span = _span_text(probe, args)
    probe.close()
    start_ns = None if args.start is None or t0 is None else t0 + int(args.start * 1e9)
    end_ns = None if args.end is None or t0 is None else t0 + int(args.end * 1e9)
    with McapReplay(args.input, speed=speed, start_ns=start_ns, end_ns=end_ns, loop=args.loop,
                    collections=args.collection, clock=args.clock) as replay:
        if args.publish:
            return _publish(replay, args)
        return _print(replay, args, t0 or 0)


def _span_text(replay, args) -> str:
    """What the file spans, for the error of an empty window: its chunks' log-time range, in
    seconds after the first message, or that it holds no complete chunk."""
    first, last = replay.start_time_ns, replay.end_time_ns
    if first is None or last is None:
        return "the file holds no complete chunk of messages"
    return f"its messages span 0.000 .. {(last - first) / 1e9:.3f} s of log time after the first one"


def _no_frame(args) -> str:
    """A replay that delivered no frame is an error (a window past the end, an empty file)."""
    window = " ".join(f"--{name} {value:g}" for name, value in (("start", args.start), ("end", args.end))
                      if value is not None)
    where = f" in the window {window}" if window else ""
    return f"{args.input}: no frame{where}; {args.replay_span}"


class _Printed:
    """Tracker observer: every delivered frame with its time on the replay's clock (log time =
    the message's receive time in a replay; or the record's sample time)."""

    def __init__(self, clock: str):
        self._by_sample = clock == "sample"
        self.frames: list[tuple[int, str, TactileFrame]] = []

    def on_metadata(self, collection_id, message, record) -> None:
        pass

    def on_data(self, collection_id, message, frame) -> None:
        t = frame.timestamp.sample_time_local_common_clock if self._by_sample else message.receive_time_ns
        self.frames.append((t, collection_id, frame))


def _print(replay, args, t0: int) -> int:
    from ..streams.file_tracker import FileTracker

    trackers = {cid: FileTracker(cid, replay) for cid in replay.collections}
    printed = _Printed(args.clock)
    for tr in trackers.values():
        tr.add_observer(printed)
    view = _open_view(args, replay, list(trackers.values()))
    counts = dict.fromkeys(replay.collections, 0)
    out = sys.stdout
    try:
        while not replay.finished:
            if replay.speed is None:  # as fast as possible: the collection whose frame comes first
                cid = replay.next_collection()
                if cid is None:
                    break
                trackers[cid].update()
            else:  # paced: what is due now, every collection, then in time order
                for tr in trackers.values():
                    tr.update()
                if not printed.frames:
                    time.sleep(0.001)
            printed.frames.sort(key=lambda item: item[0])
            for t, cid, f in printed.frames:
                counts[cid] += 1
                if counts[cid] % args.every == 0:
                    # Components are in each taxel's own axes: only the normal (z) parts add up
                    # meaningfully (total pressing load; negative = pressed, the force ON the taxel).
                    fz = float(f.forces[:, 2].sum(dtype=np.float64))
                    mag = np.linalg.norm(f.forces, axis=1)
                    out.write(f"{(t - t0) / 1e9:10.4f} s  {cid:<16} seq {f.sequence:>7}  "
                              f"sum fz = {fz:+9.3f} N  max |F| = {mag.max():7.3f} N  "
                              f"taxels loaded {int(np.count_nonzero(mag)):>4}/{len(mag)}\n")
            printed.frames.clear()
    finally:
        if view is not None:
            view.close()
    out.flush()
    if not any(tr.counters.delivered for tr in trackers.values()) and not args.loop:
        raise RecordingError(_no_frame(args))
    for tr in trackers.values():
        c = tr.counters
        print(f"{tr.collection_id}: {c.delivered} frames delivered, {c.dropped_before_confirmation} dropped before "
              f"metadata confirmation, {c.rejected} rejected, {c.sequence_gaps} sequence gaps", file=sys.stderr)
        if tr.summary():
            args.console.warning(f"{replay.path}: {tr.summary()}")
    return 0


def _open_view(args, replay, trackers):
    """`--foxglove` while printing: a view on the replay's own trackers, the taxels placed by the
    file's hand channels when it has them."""
    if not args.foxglove:
        return None
    from ..integrations.foxglove_live import attach_recording
    from ..integrations.foxglove_view import DEFAULT_FORCE_RANGE_N, FoxgloveView

    collections = [t.collection_id for t in trackers]
    view = FoxgloveView(collections, host=args.foxglove_host, port=args.foxglove_port,
                        force_range_n=args.foxglove_range or DEFAULT_FORCE_RANGE_N)
    try:
        _, hands, objects = attach_recording(view, trackers, args.input, collections)
    except BaseException:
        view.close()
        raise
    print(f"foxglove: serving {', '.join(collections)} on ws://{args.foxglove_host}:{view.port}"
          f"{' with the recorded hand poses' if hands else ' (bind pose: the file has no hand channels)'}"
          f"{' and the objects of its scene' if objects is not None else ''}", file=sys.stderr, flush=True)
    return _ViewOfFile(view, objects)


class _ViewOfFile:
    """The `--foxglove` view of a printed replay and the recording's objects it reads: closed together."""

    def __init__(self, view, objects):
        self.view, self.objects = view, objects

    def close(self) -> None:
        self.view.close()
        if self.objects is not None:
            self.objects.close()


def _publish(replay, args) -> int:
    """Each recorded collection as a producer on the shared run loop (`cli.common.run_producers`):
    its frames published on Zenoh at the replay's pace under the recorded producer session, its
    layout republished every second for late joiners."""
    from ..producers.replay import ReplayProducer

    hands = objects = None
    if args.foxglove:  # the view: the recorded hand, and each frame carries the objects its recorded scene drew
        from ..integrations.foxglove_live import RecordedHands
        from ..integrations.scene_objects import RecordedObjects

        hands = RecordedHands.open(args.input)
        objects = RecordedObjects.open(args.input, replay.collections)
    try:
        transport = open_zenoh(args)
        try:
            producers = ReplayProducer.for_collections(replay, replay.collections,
                                                       objects=None if objects is None else objects.extra)
        except BaseException:
            transport.close()
            raise
        runs = run_producers(producers, args, transport=transport, desc=f"replay {Path(args.input).name}",
                             foxglove_hands=hands)
    finally:
        if objects is not None:
            objects.close()
    for p in producers:
        if p.tracker.summary():
            args.console.warning(f"{replay.path}: {p.tracker.summary()}")
    records = sum(p.records for p in producers)
    frames = sum(r.published for r in runs)
    if not frames and not args.loop:
        raise RecordingError(_no_frame(args))
    print(f"published {records} recorded messages ({records - frames} metadata layouts, {frames} data frames) of "
          f"{', '.join(p.collection_id for p in producers)}", file=sys.stderr)
    return exit_code(runs[0])
