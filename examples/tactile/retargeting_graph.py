#!/usr/bin/env python3
"""Tactile recording → Isaac Teleop retargeting graph → five finger powers for a haptic glove.

    TactileSource ──taxel_forces──┐
        (tracker over replay)     ├─> PadForceMagnitude ──finger_force [N]──> TactileVectorToFingerPower
                  ──tactile_layout┘    (|pad resultant|)                      (Isaac Teleop's own; 0..1)

Replays FILE.mcap (e.g. from `wuji-tactile sim --record`) as fast as possible, every recorded
frame once, through a real Isaac Teleop graph (no XR runtime needed) and prints the five finger
powers over time. Requires the extra: pip install 'wuji-tactile-device[isaacteleop]'.

Usage: python examples/tactile/retargeting_graph.py FILE.mcap [--collection tactile/right]
       [--full-scale 1.0] [--deadband 0.05] [--every 10]
"""
from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

from wuji_tactile_device.errors import TactileError
from wuji_tactile_device.contract.pads import FINGERS
from wuji_tactile_device.hands.wuji_hand2 import TAXELS_PER_FINGER
from wuji_tactile_device.recording import McapReplay

try:  # the optional extra: without it, one line naming the install, not a traceback
    from wuji_tactile_device.integrations.isaacteleop import PadForceMagnitude, TactileSource
    from isaacteleop.retargeters.tactile_retargeters import TactileVectorToFingerPower
except ImportError as exc:  # MissingIsaacTeleopError names the install; a bare ImportError gets it added
    message = str(exc) if "pip install" in str(exc) else f"{exc}: pip install 'wuji-tactile-device[isaacteleop]'"
    sys.exit(f"retargeting_graph.py: error: {message}")


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning (e.g. a truncated recording replayed up to its last complete record) as one line."""
    print(f"retargeting_graph.py: warning: {message}", file=sys.stderr)


warnings.showwarning = _one_line_warning

WUJI_HAND2_SEGMENTS = len(TAXELS_PER_FINGER)  # one distal segment per finger
WUJI_HAND2_TAXELS = sum(TAXELS_PER_FINGER)  # 176


def build_graph(replay: McapReplay, collection_id: str, num_segments: int, num_taxels: int,
                full_scale_n: float, deadband_n: float):
    """The graph and its source node. Powers = clip((|F_pad| − deadband) / full_scale, 0, 1)."""
    source = TactileSource("tactile", collection_id, num_segments, num_taxels, source=replay)
    magnitude = PadForceMagnitude("pad_force", num_segments, num_taxels).connect({
        PadForceMagnitude.TAXEL_FORCES: source.output(TactileSource.TAXEL_FORCES),
        PadForceMagnitude.TACTILE_LAYOUT: source.output(TactileSource.TACTILE_LAYOUT),
    })
    power = TactileVectorToFingerPower("finger_power", num_taxels=len(FINGERS), reduction="max",
                                       gain=1.0 / full_scale_n, deadband=deadband_n)
    graph = power.connect({TactileVectorToFingerPower.INPUT_TACTILE: magnitude.output(PadForceMagnitude.FINGER_FORCE)})
    return source, graph


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mcap", metavar="FILE.mcap")
    parser.add_argument("--collection", default="tactile/right", help="collection id (default tactile/right)")
    parser.add_argument("--num-segments", type=int, default=WUJI_HAND2_SEGMENTS,
                        help=f"layout segments (default {WUJI_HAND2_SEGMENTS}, Wuji Hand 2)")
    parser.add_argument("--num-taxels", type=int, default=WUJI_HAND2_TAXELS,
                        help=f"layout taxels (default {WUJI_HAND2_TAXELS}, Wuji Hand 2)")
    parser.add_argument("--full-scale", type=float, default=1.0, metavar="N",
                        help="pad force [N] above the deadband that gives full power (default 1)")
    parser.add_argument("--deadband", type=float, default=0.05, metavar="N",
                        help="pad force [N] below which a finger stays silent (default 0.05)")
    parser.add_argument("--every", type=int, default=10, metavar="K", help="print every K-th frame (default 10)")
    args = parser.parse_args(argv)
    if not args.full_scale > 0 or args.deadband < 0 or args.every < 1:
        parser.error("--full-scale must be > 0, --deadband >= 0 and --every >= 1")

    try:
        with McapReplay(args.mcap, collections=[args.collection]) as replay:
            source, graph = build_graph(replay, args.collection, args.num_segments, args.num_taxels,
                                        args.full_scale, args.deadband)
            print(f"{args.mcap}: {args.collection} → TactileSource → PadForceMagnitude → "
                  f"TactileVectorToFingerPower (full scale {args.full_scale:g} N, deadband {args.deadband:g} N)")
            print("finger power 0..1 per frame (time since the first frame):")
            print(f"{'t [s]':>8} " + " ".join(f"{f:>6}" for f in FINGERS))
            t0, peak, count = None, np.zeros(len(FINGERS)), 0
            while True:  # replay stepping: each run of the graph takes the next recorded frame
                out = graph.execute_pipeline({})
                frame = source.last_frame
                if frame is None:
                    if source.finished:
                        break
                    continue
                powers = out["powers"][0]
                t = frame.timestamp.sample_time_local_common_clock
                t0 = t if t0 is None else t0
                peak = np.maximum(peak, powers)
                if count % args.every == 0:
                    print(f"{(t - t0) * 1e-9:8.2f} " + " ".join(f"{p:6.3f}" for p in powers))
                count += 1
    except TactileError as exc:
        print(f"retargeting_graph: error: {exc}", file=sys.stderr)
        return 1
    if count == 0:
        print(f"retargeting_graph: error: {args.mcap} has no confirmed frames of {args.collection}", file=sys.stderr)
        return 1
    print(f"{count} frames; peak power " + ", ".join(f"{f} {p:.3f}" for f, p in zip(FINGERS, peak, strict=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
