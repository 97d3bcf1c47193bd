"""Helpers for the MCAP tests: record known frames through the real publisher → in-process bus →
recorder path, and read files back with the official `mcap` reader as an independent oracle."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from mcap.reader import make_reader

from conftest import make_metadata
from wuji_tactile_device.streams.publisher import TactilePublisher
from wuji_tactile_device.recording import McapRecorder
from wuji_tactile_device.streams.inproc import InProcessBus

STEP_NS = 10_000_000  # 100 Hz


def forces_for(rng: np.random.Generator, n: int) -> np.ndarray:
    """Random forces with awkward float32 values mixed in (−0.0, subnormal, max) so a lossy path shows."""
    f = rng.normal(0.0, 2.0, (n, 3)).astype(np.float32)
    f[0] = (-0.0, np.float32(1e-45), np.finfo(np.float32).max)
    return f


def record(path: Path, frames: int, *, collections=("tactile/right",), num_taxels: int = 176,
           flush_every: int | None = None, metadata_period_s: float = 1.0, seed: int = 0):
    """Record `frames` frames per collection (interleaved, as two live hands would be).
    Returns {collection: list of published (N,3) float32 arrays}, the metadata, the recorder."""
    md = make_metadata(num_taxels)
    rng = np.random.default_rng(seed)
    bus = InProcessBus()
    sent = {cid: [] for cid in collections}
    with McapRecorder(path) as rec:
        for cid in collections:
            rec.add_collection(bus, cid)
        pubs = [TactilePublisher(cid, md, bus, metadata_period_s=metadata_period_s) for cid in collections]
        for i in range(frames):
            for pub in pubs:
                f = forces_for(rng, num_taxels)
                pub.publish(f, sample_time_ns=1_000_000_000 + i * STEP_NS)
                sent[pub.collection_id].append(f)
            rec.poll()
            if flush_every and (i + 1) % flush_every == 0:
                rec.flush()
        for pub in pubs:
            pub.close()
        rec.poll()
    return sent, md, rec


def official_messages(path: Path) -> list:
    """(topic, log_time, sequence, data) of every message, read by the `mcap` package."""
    with open(path, "rb") as f:
        return [(ch.topic, m.log_time, m.sequence, m.data) for _, ch, m in make_reader(f).iter_messages(log_time_order=False)]


def official_chunks(path: Path) -> list:
    """Chunk indexes of a complete file, in file order, from the `mcap` package's summary."""
    with open(path, "rb") as f:
        summary = make_reader(f).get_summary()
    return sorted(summary.chunk_indexes, key=lambda c: c.chunk_start_offset)
