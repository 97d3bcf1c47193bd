"""Helpers for the retargeting / plot tests: a curved-pad layout whose construction is known
independently of the package's geometry (axis-angle rotations, Rodrigues matrices), so tests can
compute expected values by hand. Not a fixture module: imported explicitly."""
from __future__ import annotations

import dataclasses

import numpy as np

from wuji_tactile_device.contract import HandJoint
from wuji_tactile_device.contract import TactileMetadata

DISTAL = (HandJoint.THUMB_DISTAL, HandJoint.INDEX_DISTAL, HandJoint.MIDDLE_DISTAL,
          HandJoint.RING_DISTAL, HandJoint.LITTLE_DISTAL)
PAD_RADIUS = 0.008  # [m]


def rot(axis, angle: float) -> np.ndarray:
    """Rodrigues rotation matrix about `axis` by `angle` [rad] (independent of the package)."""
    a = np.asarray(axis, dtype=np.float64)
    a = a / np.linalg.norm(a)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k


def quat_of(axis, angle: float) -> np.ndarray:
    """(qx, qy, qz, qw) of the same rotation as `rot(axis, angle)`."""
    a = np.asarray(axis, dtype=np.float64)
    a = a / np.linalg.norm(a)
    return np.concatenate([np.sin(angle / 2) * a, [np.cos(angle / 2)]])


def matrix_to_quat(r: np.ndarray) -> np.ndarray:
    """(qx, qy, qz, qw) of a rotation matrix (Shepperd's method, enough for test poses)."""
    w = np.sqrt(max(0.0, 1 + r[0, 0] + r[1, 1] + r[2, 2])) / 2
    if w > 1e-3:
        return np.array([(r[2, 1] - r[1, 2]) / (4 * w), (r[0, 2] - r[2, 0]) / (4 * w),
                         (r[1, 0] - r[0, 1]) / (4 * w), w])
    i = int(np.argmax(np.diag(r)))
    j, k = (i + 1) % 3, (i + 2) % 3
    s = np.sqrt(1 + r[i, i] - r[j, j] - r[k, k]) * 2
    q = np.zeros(4)
    q[i] = s / 4
    q[j] = (r[j, i] + r[i, j]) / s
    q[k] = (r[k, i] + r[i, k]) / s
    q[3] = (r[k, j] - r[j, k]) / s
    return q


def homogeneous(r: np.ndarray, t) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3] = r
    m[:3, 3] = t
    return m


def pose_of(m: np.ndarray) -> np.ndarray:
    return np.concatenate([m[:3, 3], matrix_to_quat(m[:3, :3])])


class CurvedPadLayout:
    """Five distal segments (generic bind rotations) with `per_pad` taxels each on a cylindrical
    pad (radius 8 mm around the segment's z axis, on its −Y side). Keeps the construction:
    `seg_m[j]` (4×4 segment → wrist), `local_m[n]` (4×4 taxel → its segment), `seg_of[n]`."""

    def __init__(self, per_pad: int = 6, *, blended_taxel: int | None = None):
        self.per_pad = per_pad
        seg_m, local_m, seg_of = [], [], []
        for j in range(len(DISTAL)):
            r = rot([0.3, 1.0, 0.2 * j], 0.4 + 0.3 * j)
            seg_m.append(homogeneous(r, [0.02 * j - 0.04, 0.01 * j, -0.09 - 0.005 * j]))
            for i in range(per_pad):
                phi = np.pi + (i % 3 - 1) * 0.6  # around the bone axis, centred on −Y
                z = -0.006 - 0.004 * (i // 3)
                normal = np.array([np.sin(phi), np.cos(phi), 0.0])  # outward
                tangent = np.array([0.0, 0.0, -1.0])  # toward the fingertip
                r_local = np.column_stack([tangent, np.cross(normal, tangent), normal])
                local_m.append(homogeneous(r_local, PAD_RADIUS * normal + [0, 0, z]))
                seg_of.append(j)
        self.seg_m = np.array(seg_m)
        self.local_m = np.array(local_m)
        self.seg_of = np.array(seg_of)
        taxel_m = self.seg_m[self.seg_of] @ self.local_m
        self.metadata = TactileMetadata.rigid(DISTAL, np.array([pose_of(m) for m in self.seg_m]),
                                              np.array([pose_of(m) for m in taxel_m]), self.seg_of)
        if blended_taxel is not None:  # split one taxel between its segment and the next one
            indices, weights = self.metadata.segment_indices.copy(), self.metadata.segment_weights.copy()
            indices[blended_taxel, 1] = (self.seg_of[blended_taxel] + 1) % len(DISTAL)
            weights[blended_taxel, :2] = 0.5
            self.metadata = dataclasses.replace(self.metadata, segment_indices=indices, segment_weights=weights)
        self.metadata.validate()
        # The metadata stores float32: keep the exact stored transforms for expected values.
        self.seg_m = np.array([_matrix_of(p) for p in self.metadata.segment_bind_poses])
        self.taxel_m = np.array([_matrix_of(p) for p in self.metadata.taxel_bind_poses])

    @property
    def num_taxels(self) -> int:
        return len(self.seg_of)


def _matrix_of(pose) -> np.ndarray:
    """4×4 of a pose, by the textbook quaternion formula (independent of the package)."""
    x, y, z, w = np.asarray(pose[3:], dtype=np.float64) / np.linalg.norm(np.asarray(pose[3:], dtype=np.float64))
    r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                  [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                  [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    return homogeneous(r, np.asarray(pose[:3], dtype=np.float64))




def press_profile(layout: CurvedPadLayout, frames: int = 100) -> np.ndarray:
    """(frames, N, 3) float32 taxel forces [N, taxel axes]: the index pad pressed along its taxel
    normals with a half-sine (peak at frame frames//2; fz < 0 = pressing) plus a small +x shear;
    the thumb pressed at a constant 0.5 N per taxel during the second half. Others unloaded."""
    t = np.arange(frames)
    amplitude = np.sin(np.pi * t / (frames - 1))
    forces = np.zeros((frames, layout.num_taxels, 3), np.float32)
    index, thumb = layout.seg_of == 1, layout.seg_of == 0
    forces[:, index, 2] = -amplitude[:, None] * np.linspace(0.2, 1.0, index.sum())[None, :]
    forces[:, index, 0] = 0.1 * amplitude[:, None]
    forces[t >= frames // 2, :, 2] += np.where(thumb, -0.5, 0.0)[None, :].astype(np.float32)
    return forces


def record_synthetic(path, layout: CurvedPadLayout, forces: np.ndarray, *, collection_id: str = "tactile/right",
                     period_ns: int = 10_000_000, bus=None, recorder=None, paced_log: bool = False) -> None:
    """Record `forces` (T, N, 3) as one collection into an MCAP file through the real pipeline
    (TactilePublisher → in-process bus → McapRecorder), sample times `k * period_ns`. The log
    (available) times are those of the fast run, unless `paced_log`: then they equal the sample
    times, as if recorded in real time (a real-time replay then takes T × period)."""
    from wuji_tactile_device.streams.publisher import TactilePublisher
    from wuji_tactile_device.recording import McapRecorder
    from wuji_tactile_device.streams.inproc import InProcessBus

    own = recorder is None
    bus = bus or InProcessBus()
    recorder = recorder or McapRecorder(path)
    try:
        recorder.add_collection(bus, collection_id)
        with TactilePublisher(collection_id, layout.metadata, bus) as publisher:
            for k, frame in enumerate(forces):
                t = 1_000_000_000 + k * period_ns
                publisher.publish(frame, sample_time_ns=t, available_time_ns=t if paced_log else None)
                recorder.poll()
        recorder.poll()
    finally:
        if own:
            recorder.close()
