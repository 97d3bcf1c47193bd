#!/usr/bin/env python3
"""Publish a synthetic tactile collection on Zenoh (loopback by default): a `Producer` on the run loop.

SYNTHETIC GEOMETRY — this feeder exercises the transport only. Its taxel layout (five flat 6×6
grids, one per distal segment) and its forces (a pressing blob circling over each pad) are made up;
they are not the Wuji Hand 2's pads or calibration. For the real hand use `wuji-tactile sim` or `hw`.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from wuji_tactile_device.contract import HandJoint, TactileMetadata
from wuji_tactile_device.producers.base import Frame, FrameSink, Producer, ProducerRunner
from wuji_tactile_device.streams.zenoh_transport import ZenohTransport
from wuji_tactile_device.streams.zenoh_watch import ConnectionWatch

SEGMENTS = (HandJoint.THUMB_DISTAL, HandJoint.INDEX_DISTAL, HandJoint.MIDDLE_DISTAL, HandJoint.RING_DISTAL,
            HandJoint.LITTLE_DISTAL)
GRID, PITCH_M = 6, 0.002  # 6×6 taxels per pad, 2 mm apart
U, V = (a.ravel() for a in np.meshgrid(np.arange(GRID) - (GRID - 1) / 2, np.arange(GRID) - (GRID - 1) / 2, indexing="ij"))


def synthetic_metadata() -> TactileMetadata:
    """Five distal segments 20 mm apart along wrist x, 100 mm toward the fingertips (-z); on each a
    flat grid 8 mm above the segment axis on its +y face, taxel +Z = segment +Y (outward normal)."""
    J, P = len(SEGMENTS), GRID * GRID
    segment_poses = np.zeros((J, 7))
    segment_poses[:, 0], segment_poses[:, 2], segment_poses[:, 6] = 0.02 * np.arange(J) - 0.04, -0.10, 1.0
    seg = np.repeat(np.arange(J), P)
    taxels = np.zeros((J * P, 7))
    taxels[:, 0] = segment_poses[seg, 0] + np.tile(U, J) * PITCH_M
    taxels[:, 1] = 0.008
    taxels[:, 2] = segment_poses[seg, 2] + np.tile(V, J) * PITCH_M
    taxels[:, 3:7] = [-np.sqrt(0.5), 0.0, 0.0, np.sqrt(0.5)]  # -90° about x: taxel +Z = +Y
    return TactileMetadata.rigid(SEGMENTS, segment_poses, taxels, seg)


def synthetic_forces(t: float, num_pads: int) -> np.ndarray:
    """A Gaussian press circling on each pad, 1–3 N per pad (phase-shifted); fz < 0 = pressing."""
    phase = 2 * np.pi * (0.5 * t + np.arange(num_pads)[:, None] / num_pads)
    blob = np.exp(-((U - 1.5 * np.cos(phase)) ** 2 + (V - 1.5 * np.sin(phase)) ** 2) / 2.0)
    total = 2.0 + np.sin(2 * np.pi * 0.25 * t + np.arange(num_pads))[:, None]  # [N]
    fz = (-total * blob / blob.sum(axis=1, keepdims=True)).ravel()
    return np.stack([0.1 * fz * np.cos(0.5 * t), np.zeros_like(fz), fz], axis=1).astype(np.float32)


class SyntheticFeeder(Producer):
    """The whole producer: a collection, its metadata, a period, and one frame per call."""

    def __init__(self, collection_id: str, rate_hz: float):
        self.collection_id, self.metadata, self.period_s = collection_id, synthetic_metadata(), 1.0 / rate_hz

    def next_frame(self) -> Frame:
        now = time.monotonic_ns()
        return Frame(synthetic_forces(now / 1e9, len(SEGMENTS)), sample_time_ns=now)


class SayUnconnected(FrameSink):
    """Prints a warning when the --zenoh endpoints reach nobody (after 3 s, then once a minute)."""

    def __init__(self, transport: ZenohTransport):
        self.watch = ConnectionWatch(transport)

    def poll(self) -> None:
        message = self.watch.check()
        if message is not None:
            print(f"synthetic feeder: warning: {message}", file=sys.stderr, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="tactile/right", help="collection id (default tactile/right)")
    parser.add_argument("--rate", type=float, default=100.0, help="frames per second (default 100)")
    parser.add_argument("--duration", type=float, help="stop after this many seconds (default: until Ctrl-C)")
    parser.add_argument("--zenoh", action="append", metavar="ENDPOINT", help="connect to this Zenoh endpoint")
    parser.add_argument("--zenoh-listen", action="append", metavar="ENDPOINT", help="listen on this Zenoh endpoint")
    args = parser.parse_args()
    feeder = SyntheticFeeder(args.collection, args.rate)
    print(f"synthetic feeder: made-up geometry and forces to exercise the transport — not the Wuji Hand's "
          f"calibration; {args.collection!r} at {args.rate:g} Hz, Ctrl-C to stop", file=sys.stderr, flush=True)
    with ZenohTransport(listen=args.zenoh_listen, connect=args.zenoh) as transport:
        watch = SayUnconnected(transport)
        with ProducerRunner(feeder, transport, speed=1.0, sinks=[watch]) as runner:  # real time; Ctrl-C / SIGTERM stop it
            counters = runner.run(duration_s=args.duration)
        reached = "" if transport.connected_zids() else "; nothing was connected, so no one received them"
    print(f"published {counters.published} frames ({counters.stop_reason}){reached}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
