#!/usr/bin/env python3
"""Publish a synthetic tactile collection on Zenoh: metadata + force frames at a fixed rate.

SYNTHETIC GEOMETRY — this feeder exercises the transport only. Its taxel layout (five flat 6×6
grids, one per distal segment) and its forces (a pressing blob circling over each pad) are made up;
they are not the Wuji Hand 2's pads or calibration. For the real hand use `wuji-tactile sim` or
`wuji-tactile hw`.

Usage (terminal 1; terminal 2 runs tracker_consumer.py):
    python examples/tactile/synthetic_feeder.py [--collection tactile/right] [--rate 100] [--duration S]
By default it uses the loopback-only Zenoh configuration (tcp/127.0.0.1:7447); see --help.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from wuji_tactile_device.errors import TactileError
from wuji_tactile_device.contract import HandJoint
from wuji_tactile_device.contract import TactileMetadata
from wuji_tactile_device.streams.publisher import TactilePublisher
from wuji_tactile_device.streams.zenoh_transport import ZenohTransport

SEGMENTS = (HandJoint.THUMB_DISTAL, HandJoint.INDEX_DISTAL, HandJoint.MIDDLE_DISTAL, HandJoint.RING_DISTAL,
            HandJoint.LITTLE_DISTAL)
GRID = 6  # taxels per side of each synthetic pad
PITCH_M = 0.002


def synthetic_metadata() -> TactileMetadata:
    """Five distal segments 20 mm apart along the wrist x axis, 100 mm toward the fingertips (-z);
    on each, a flat GRID×GRID taxel grid on the +y face, taxel +Z = segment +Y (outward normal)."""
    J = len(SEGMENTS)
    segment_poses = np.zeros((J, 7))
    segment_poses[:, 0] = 0.02 * np.arange(J) - 0.04
    segment_poses[:, 2] = -0.10
    segment_poses[:, 6] = 1.0
    u, v = np.meshgrid(np.arange(GRID) - (GRID - 1) / 2, np.arange(GRID) - (GRID - 1) / 2, indexing="ij")
    per_pad = GRID * GRID
    seg = np.repeat(np.arange(J), per_pad)
    taxel_poses = np.zeros((J * per_pad, 7))
    taxel_poses[:, 0] = segment_poses[seg, 0] + np.tile(u.ravel(), J) * PITCH_M
    taxel_poses[:, 1] = 0.008  # pad surface 8 mm above the segment axis
    taxel_poses[:, 2] = segment_poses[seg, 2] + np.tile(v.ravel(), J) * PITCH_M
    taxel_poses[:, 3:7] = [-np.sqrt(0.5), 0.0, 0.0, np.sqrt(0.5)]  # -90° about x: taxel +Z = +Y
    indices = np.zeros((J * per_pad, 4), dtype=np.int64)
    indices[:, 0] = seg
    weights = np.zeros((J * per_pad, 4))
    weights[:, 0] = 1.0
    return TactileMetadata(SEGMENTS, segment_poses, taxel_poses, indices, weights)


def synthetic_forces(t: float, num_pads: int) -> np.ndarray:
    """A Gaussian press circling on each pad, 1–3 N total per pad (phase-shifted per pad);
    fz < 0 = pressing."""
    u, v = np.meshgrid(np.arange(GRID) - (GRID - 1) / 2, np.arange(GRID) - (GRID - 1) / 2, indexing="ij")
    phase = 2 * np.pi * (0.5 * t + np.arange(num_pads)[:, None] / num_pads)
    cu, cv = 1.5 * np.cos(phase), 1.5 * np.sin(phase)
    blob = np.exp(-((u.ravel() - cu) ** 2 + (v.ravel() - cv) ** 2) / 2.0)
    total = 2.0 + np.sin(2 * np.pi * 0.25 * t + np.arange(num_pads))[:, None]  # [N]
    fz = -total * blob / blob.sum(axis=1, keepdims=True)
    forces = np.zeros((num_pads * GRID * GRID, 3), np.float32)
    forces[:, 2] = fz.ravel()
    forces[:, 0] = 0.1 * fz.ravel() * np.cos(0.5 * t)  # a little shear
    return forces


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="tactile/right", help="collection id (default tactile/right)")
    parser.add_argument("--rate", type=float, default=100.0, help="frames per second (default 100)")
    parser.add_argument("--duration", type=float, help="stop after this many seconds (default: until Ctrl-C)")
    parser.add_argument("--zenoh", action="append", metavar="ENDPOINT", help="connect to this Zenoh endpoint")
    parser.add_argument("--zenoh-listen", action="append", metavar="ENDPOINT", help="listen on this Zenoh endpoint")
    parser.add_argument("--zenoh-config", metavar="FILE", help="a Zenoh JSON5 configuration file")
    args = parser.parse_args()
    print("synthetic feeder: made-up geometry and forces to exercise the transport — not the Wuji Hand's "
          "calibration", file=sys.stderr)
    metadata = synthetic_metadata()
    try:
        with ZenohTransport(args.zenoh_config, listen=args.zenoh_listen, connect=args.zenoh) as transport, \
                TactilePublisher(args.collection, metadata, transport) as publisher:
            print(f"publishing {args.collection!r}: {metadata.num_taxels} taxels on {metadata.num_segments} segments "
                  f"at {args.rate:g} Hz (producer session {publisher.producer_session:016x}); Ctrl-C to stop",
                  file=sys.stderr, flush=True)
            period = 1.0 / args.rate
            start = time.monotonic()
            k = 0
            while args.duration is None or time.monotonic() - start < args.duration:
                now = time.monotonic_ns()
                publisher.publish(synthetic_forces(now / 1e9, metadata.num_segments), sample_time_ns=now)
                k += 1
                time.sleep(max(0.0, start + k * period - time.monotonic()))
            print(f"published {k} frames", file=sys.stderr)
    except TactileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
