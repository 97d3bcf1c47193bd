"""Recordings for the LeRobot export tests, written through the project's own recorder (publisher →
in-process bus → McapRecorder, hand poses on the recorder's hand channels), with chosen sample
times so the grid alignment can be checked against known answers.

Run as a script to make a long two-hand recording for the memory measurement:
`python tests/lerobot_helpers.py --minutes 30 long.mcap`.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from conftest import make_metadata

from wuji_tactile_device.contract.records import DeviceDataTimestamp
from wuji_tactile_device.recording import McapRecorder
from wuji_tactile_device.recording.hand_channels import HandPoseChannels
from wuji_tactile_device.streams.inproc import InProcessBus
from wuji_tactile_device.streams.publisher import TactilePublisher

T0 = 5_000_000_000


def forces_at(i: int, n: int, salt: int = 0) -> np.ndarray:
    """Deterministic forces of frame i [N]: distinct per frame, taxel and axis, float32-exact."""
    k = np.arange(n * 3, dtype=np.float64).reshape(n, 3)
    return (np.sin(0.37 * k + 0.011 * i + salt) * 0.25).astype(np.float32)


def pose_at(i: int, side_salt: int = 0) -> np.ndarray:
    p = np.zeros((26, 7), np.float32)
    p[:, 0] = 0.001 * i + side_salt
    p[:, 1] = np.arange(26, dtype=np.float32) * 0.01
    p[:, 2] = 0.05
    p[:, 6] = 1.0
    return p


def write_recording(path: Path, sample_times: dict[str, list[int]], *, num_taxels: int = 24,
                    hand_times: dict[str, list[int]] | None = None, layouts: dict | None = None,
                    file_metadata: dict | None = None, salt: int = 0) -> dict:
    """One file: each collection publishes one frame per entry of `sample_times[cid]` (frame i gets
    `forces_at(i)`); each side of `hand_times` writes a tracked pose per time (`pose_at(i)`), the
    other side untracked. Log time = sample time + 1 ms. Returns {cid: (times, forces)}."""
    bus = InProcessBus()
    sent = {}
    with McapRecorder(path, file_metadata=file_metadata or {}) as rec:
        hands = HandPoseChannels(rec, "hands") if hand_times is not None else None
        pubs, taxels = {}, {}
        for cid in sample_times:
            rec.add_collection(bus, cid)
            md = (layouts or {}).get(cid) or make_metadata(num_taxels)
            pubs[cid] = TactilePublisher(cid, md, bus, metadata_period_s=1e9)
            taxels[cid] = md.num_taxels
        events = sorted((t, 0, cid, i) for cid, ts in sample_times.items() for i, t in enumerate(ts))
        if hand_times:
            events += [(t, 1, side, i) for side, ts in hand_times.items() for i, t in enumerate(ts)]
            events.sort()
        for t, kind, name, i in events:
            if kind == 0:
                f = forces_at(i, taxels[name], salt)
                pubs[name].publish(f, sample_time_ns=t, available_time_ns=t + 1_000_000)
                sent.setdefault(name, ([], []))
                sent[name][0].append(t)
                sent[name][1].append(f)
                rec.poll()
            else:
                hands.write({name: pose_at(i, salt)}, DeviceDataTimestamp(t + 1_000_000, t, i))
        for pub in pubs.values():
            pub.close()
        rec.poll()
    return {cid: (np.array(ts, np.int64), np.stack(fs)) for cid, (ts, fs) in sent.items()}


def long_recording(path: Path, minutes: float, *, rate_hz: int = 100) -> int:
    """Two hands (tactile/left, tactile/right, 176 taxels each) plus both hand channels for
    `minutes` at `rate_hz`, written frame by frame (memory stays flat). Returns frames per hand."""
    frames = int(minutes * 60 * rate_hz)
    step = 1_000_000_000 // rate_hz
    bus = InProcessBus()
    md = make_metadata(176)
    rng = np.random.default_rng(0)
    with McapRecorder(path) as rec:
        hands = HandPoseChannels(rec, "hands")
        pubs = []
        for cid in ("tactile/left", "tactile/right"):
            rec.add_collection(bus, cid)
            pubs.append(TactilePublisher(cid, md, bus))
        base = rng.normal(0.0, 0.2, (176, 3)).astype(np.float32)
        for i in range(frames):
            t = T0 + i * step
            for k, pub in enumerate(pubs):
                pub.publish(np.roll(base, i + k, axis=0), sample_time_ns=t, available_time_ns=t + 1_000_000)
            rec.poll()
            hands.write({"left": pose_at(i, 0), "right": pose_at(i, 1)}, DeviceDataTimestamp(t + 1_000_000, t, i))
        for pub in pubs:
            pub.close()
        rec.poll()
    return frames


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--minutes", type=float, default=30.0)
    a = ap.parse_args()
    n = long_recording(a.out, a.minutes)
    print(f"{a.out}: {n} frames per hand, {a.out.stat().st_size / 2**20:.1f} MiB")
