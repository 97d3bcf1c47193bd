"""Contract self-demo: build a 176-taxel layout, validate it, encode and verify-decode a frame.

Run: python -m wuji_tactile_device.demo"""
from __future__ import annotations

import time

import numpy as np

from . import DeviceDataTimestamp, HandJoint, TactileMetadata, decode_tactile_record, encode_tactile_record
from .errors import InvalidMessageError


def main() -> int:
    counts = {HandJoint.THUMB_DISTAL: 40, HandJoint.INDEX_DISTAL: 34, HandJoint.MIDDLE_DISTAL: 34,
              HandJoint.RING_DISTAL: 34, HandJoint.LITTLE_DISTAL: 34}
    segment = np.repeat(np.arange(5), list(counts.values()))
    n = segment.size
    poses = np.tile([0.0, 0, 0, 0, 0, 0, 1], (n, 1))
    poses[:, 0] = segment * 0.02  # synthetic geometry: one row of taxels per segment
    metadata = TactileMetadata.rigid(tuple(counts), np.tile([0.0, 0, 0, 0, 0, 0, 1], (5, 1)), poses, segment).validate()
    print(f"metadata: {metadata}, {len(metadata.encode())} bytes encoded, valid")
    forces = np.zeros((n, 3), np.float32)
    forces[:40, 2] = -0.0125  # 0.5 N pressing into the thumb pad, spread over its 40 taxels
    now = time.monotonic_ns()
    buf = encode_tactile_record(forces, DeviceDataTimestamp(now, now, now))
    record = decode_tactile_record(buf)
    print(f"frame: {len(buf)} bytes; decoded {record.forces.shape} {record.forces.dtype}, "
          f"thumb pad sum fz = {record.forces[:40, 2].sum():+.3f} N (pressing gives fz < 0)")
    try:
        decode_tactile_record(buf[:-7])
    except InvalidMessageError as exc:
        print(f"truncated frame refused: {exc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
