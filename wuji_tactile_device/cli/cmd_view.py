"""`wuji-tactile view`: a live 3-D view of tactile collections in Foxglove (needs the `view` extra).

    wuji-tactile view --collection tactile/right          # live, from Zenoh
    wuji-tactile view press.mcap                         # a recording, in real time

Starts a Foxglove WebSocket server (loopback by default) and publishes what
`integrations.foxglove_view.FoxgloveView` documents: the contract channels, the taxel scene, the
pad resultants. A recording with hand channels (Isaac Teleop's `core.HandPoseRecord`, as every
`sim --record` writes) places the taxels on the recorded hand; otherwise the bind pose. The
objects (pressed plates, held objects) are those the recording's own scene topic drew at each
frame (`integrations.scene_objects`). Runs until Ctrl-C (or `--duration`); a file's last frame
stays on view after its end.
"""
from __future__ import annotations

import argparse
import os
import time

from ..errors import TactileError
from .output import require_extra
from .common import add_zenoh_arguments, open_transport_from


from .args import positive_float, positive_newtons, positive_rate, positive_seconds, tcp_port


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "view", help="live 3-D view of tactile data in Foxglove (WebSocket server)",
        description="Serve tactile collections to Foxglove (open the printed ws:// address with 'Open connection' "
                    "→ 'Foxglove WebSocket'; layout: examples/foxglove/tactile_view.json). Without FILE: live "
                    "collections from Zenoh (--collection, repeatable). With FILE.mcap: the recording through "
                    "the same tracker, in real time (--speed). Taxels are coloured and sized by |f| on a fixed "
                    "range (--range); arrows are the pad resultants (force on the hand).")
    p.add_argument("input", metavar="FILE.mcap", nargs="?", help="a recording (default: live from Zenoh)")
    p.add_argument("--collection", "-c", action="append", metavar="ID",
                   help="collection to show, e.g. tactile/right (repeatable; live default tactile/right, "
                        "file default: all of its collections)")
    p.add_argument("--host", default="127.0.0.1", help="address to serve on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=tcp_port, default=8765, help="TCP port (default 8765; 0: any free port)")
    p.add_argument("--range", type=positive_newtons, default=None, dest="force_range", metavar="N",
                   help="fixed |f| range of the taxel colours and sizes [N] (default 0.25)")
    p.add_argument("--arrow-scale", type=positive_float("mm per newton"), default=40.0, metavar="MM_PER_N",
                   help="pad resultant arrow length [mm per N] (default 40)")
    p.add_argument("--scene-rate", type=positive_rate, default=30.0, metavar="HZ",
                   help="most scene updates per second of data (default 30; every frame still goes out on "
                        "the data and resultant topics)")
    p.add_argument("--speed", type=positive_rate, default=1.0, metavar="X",
                   help="file: play at X times real time (default 1)")
    p.add_argument("--loop", action="store_true", help="file: start over at the end")
    p.add_argument("--clock", choices=("sample", "log"), default="sample",
                   help="file: pace by sample time (when it was sensed: a simulation recorded as fast as "
                        "possible plays at its simulated pace; default) or by log time")
    p.add_argument("--save", metavar="OUT.mcap",
                   help="also write the derived topics (scene, transforms, resultants) into OUT.mcap; "
                        "open it in Foxglove together with the recording")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --save file")
    p.add_argument("--duration", type=positive_seconds, metavar="S", help="stop after S seconds (default: Ctrl-C)")
    add_zenoh_arguments(p)  # live only: --transport and the Zenoh session (cli.common)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    require_extra("foxglove", "view")  # before opening the file or Zenoh
    if args.save and os.path.exists(args.save) and not args.overwrite:
        # the SDK's own refusal reads "cannot start the Foxglove view ...: File exists (os error 17)"
        raise TactileError(f"{args.save} already exists (use --overwrite to replace it)")
    from ..integrations.foxglove_live import attach_recording, attach_with_hands
    from ..integrations.foxglove_view import DEFAULT_FORCE_RANGE_N, FoxgloveView
    from ..streams.tracker import TactileTracker

    source = _open_source(args)
    view = guard = objects = None
    trackers = []
    try:
        collections = list(source.collections) if args.input else (args.collection or ["tactile/right"])
        if not collections:
            raise TactileError(f"{args.input}: holds no tactile collection to show")
        view = FoxgloveView(collections, host=args.host, port=args.port,
                            force_range_n=args.force_range or DEFAULT_FORCE_RANGE_N,
                            arrow_m_per_n=args.arrow_scale / 1000.0, scene_rate_hz=args.scene_rate,
                            mcap_path=args.save, overwrite=args.overwrite)
        for cid in collections:  # a faulty frame (a peer's, a file's) is counted and skipped, not fatal
            trackers.append(TactileTracker(cid, source, error_policy="drop"))
        if args.input:
            guard, hands, objects = attach_recording(view, trackers, args.input, collections)
        else:
            guard, hands = attach_with_hands(view, trackers, None), None
        what = args.input or "Zenoh"
        if args.input:
            what += (f" on its recorded hand poses ({hands.name}/left_hand, {hands.name}/right_hand)" if hands
                     else " (bind pose: the file has no hand channels)")
            if objects is not None:
                what += f", with the objects of its scene ({', '.join(f'{c}/view/scene' for c in objects.collections)})"
        args.console.line("", f"serving {', '.join(collections)} from {what} on ws://{args.host}:{view.port} "
                              "(Foxglove: Open connection → Foxglove WebSocket); Ctrl-C to stop")
        _loop(args, source, trackers, guard)
    finally:
        for tracker in trackers:
            tracker.close()
        if view is not None:
            view.close()
        if objects is not None:
            objects.close()
        source.close()
    for tracker in trackers:
        c = tracker.counters
        args.console.note(f"{tracker.collection_id}: {c.delivered} frames shown, {c.dropped_before_confirmation} "
                          f"dropped before metadata confirmation, {c.rejected} rejected")
    if guard is not None and guard.skipped:
        args.console.note(f"{guard.skipped} record(s) skipped by the view (last: {guard.last_reason})")
    if view is not None and view.server_counters is not None:
        args.console.note(f"foxglove: {view.server_counters.summary()}")
    return 0


def _open_source(args: argparse.Namespace):
    if args.input:
        from ..recording import McapReplay

        if args.zenoh or args.zenoh_listen or args.zenoh_config or args.transport:
            raise TactileError("--transport/--zenoh/--zenoh-listen/--zenoh-config apply to live viewing, not to a FILE")
        return McapReplay(args.input, speed=args.speed, loop=args.loop, collections=args.collection, clock=args.clock)
    if args.loop or args.speed != 1.0 or args.clock != "sample":
        raise TactileError("--speed, --loop and --clock apply to a FILE, not to live viewing")
    return open_transport_from(args)


def _loop(args: argparse.Namespace, source, trackers, guard) -> None:
    deadline = None if args.duration is None else time.monotonic() + args.duration
    replay = source if args.input else None
    ended = False
    while deadline is None or time.monotonic() < deadline:
        moved = sum(guard.update(tracker) for tracker in trackers)
        if replay is not None and replay.finished and not ended:
            ended = True
            args.console.note(f"end of {args.input}; its last frame stays on view until Ctrl-C")
        if not moved:
            time.sleep(0.002)
