"""Helpers shared by the stream tests (and the two-process Zenoh peer): a small valid metadata
and deterministic force frames. Not a fixture module: imported explicitly."""
from __future__ import annotations

import socket

import numpy as np

from wuji_tactile_device.contract import HandJoint
from wuji_tactile_device.contract import TactileMetadata

DISTAL = (HandJoint.THUMB_DISTAL, HandJoint.INDEX_DISTAL, HandJoint.MIDDLE_DISTAL,
          HandJoint.RING_DISTAL, HandJoint.LITTLE_DISTAL)


def small_metadata(taxels_per_segment: int = 3, *, x_offset: float = 0.0) -> TactileMetadata:
    """5 distal segments (bind poses spread along x, rotated 90° about z), `taxels_per_segment`
    taxels rigidly on each (one segment, weight 1). `x_offset` [m] shifts every taxel: a second,
    different but valid layout."""
    J = len(DISTAL)
    s = np.sqrt(0.5)
    segment_poses = np.array([[0.02 * j - 0.04, 0.0, -0.1, 0.0, 0.0, s, s] for j in range(J)])
    n = J * taxels_per_segment
    seg = np.repeat(np.arange(J), taxels_per_segment)
    taxel_poses = np.zeros((n, 7))
    taxel_poses[:, 0] = segment_poses[seg, 0] + x_offset
    taxel_poses[:, 1] = 0.008
    taxel_poses[:, 2] = -0.1 - 0.004 * np.tile(np.arange(taxels_per_segment), J)
    taxel_poses[:, 6] = 1.0
    return TactileMetadata.rigid(DISTAL, segment_poses, taxel_poses, seg)


def forces_for(sequence: int, num_taxels: int) -> np.ndarray:
    """A frame whose every value encodes `sequence` and the taxel index: fz = -(seq + taxel/1000)."""
    f = np.zeros((num_taxels, 3), dtype=np.float32)
    f[:, 0] = np.arange(num_taxels, dtype=np.float32) * 0.01
    f[:, 2] = -(sequence + np.arange(num_taxels, dtype=np.float32) / 1000.0)
    return f


def free_port() -> int:
    """A TCP port free on loopback right now (tests bind their Zenoh endpoints to it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
