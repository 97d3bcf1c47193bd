#!/usr/bin/env python3
"""Consume a tactile collection from Zenoh with TactileTracker and print what arrives.

The tracker adopts the producer's metadata first (validated) and only then releases force frames;
frames that arrive before are dropped and counted. Prints the adopted layout once, then one line
per `--every` frames: sequence, latency, per-segment pressing force, and the counters at the end.

Usage (terminal 2; terminal 1 runs synthetic_feeder.py, `wuji-tactile sim` or `wuji-tactile hw`):
    python examples/tactile/tracker_consumer.py [--collection tactile/right] [--every 50] [--count N]
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from wuji_tactile_device.errors import TactileError
from wuji_tactile_device.streams.tracker import TactileTracker
from wuji_tactile_device.streams.zenoh_transport import ZenohTransport


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="tactile/right", help="collection id (default tactile/right)")
    parser.add_argument("--every", type=int, default=50, help="print every N-th frame (default 50)")
    parser.add_argument("--count", type=int, help="exit after this many frames (default: until Ctrl-C)")
    parser.add_argument("--zenoh", action="append", metavar="ENDPOINT", help="connect to this Zenoh endpoint")
    parser.add_argument("--zenoh-listen", action="append", metavar="ENDPOINT", help="listen on this Zenoh endpoint")
    parser.add_argument("--zenoh-config", metavar="FILE", help="a Zenoh JSON5 configuration file")
    args = parser.parse_args()
    try:
        with ZenohTransport(args.zenoh_config, listen=args.zenoh_listen, connect=args.zenoh) as transport, \
                TactileTracker(args.collection, transport) as tracker:
            print(f"waiting for {args.collection!r} (metadata first) ...", file=sys.stderr, flush=True)
            try:
                run(tracker, args)
            except KeyboardInterrupt:
                pass
            c = tracker.counters
            print(f"{c.received} frames received, {c.delivered} delivered, {c.dropped_before_confirmation} dropped "
                  f"before metadata confirmation, {c.rejected} rejected, {c.frames_missing} missing in "
                  f"{c.sequence_gaps} sequence gaps", file=sys.stderr)
    except TactileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def run(tracker: TactileTracker, args: argparse.Namespace) -> None:
    segment_of_taxel = None
    names: list[str] = []
    n = 0
    while args.count is None or n < args.count:
        for frame in tracker.frames():  # every delivered frame, oldest first
            n += 1
            if segment_of_taxel is None:
                md = tracker.get_metadata()
                names = [j.name.removesuffix("_DISTAL").lower() for j in md.joint_ids]
                segment_of_taxel = md.segment_indices[np.arange(md.num_taxels), md.segment_weights.argmax(axis=1)]
                print(f"metadata adopted: {md.num_taxels} taxels on {md.num_segments} segments "
                      f"({', '.join(j.name for j in md.joint_ids)})", flush=True)
            if (n - 1) % args.every == 0:
                latency_ms = (time.monotonic_ns() - frame.timestamp.available_time_local_common_clock) / 1e6
                # pressing force per segment [N]: -fz summed over the segment's taxels (fz < 0 = pressing)
                press = np.bincount(segment_of_taxel, weights=-frame.forces[:, 2], minlength=len(names))
                pads = "  ".join(f"{name} {p:5.2f}" for name, p in zip(names, press, strict=True))
                print(f"seq {frame.sequence:7d}  latency {latency_ms:6.2f} ms  press [N]: {pads}", flush=True)
            if args.count is not None and n >= args.count:
                return
        tracker.update(timeout_s=0.1)  # wait for the next arrival without spinning


if __name__ == "__main__":
    sys.exit(main())
