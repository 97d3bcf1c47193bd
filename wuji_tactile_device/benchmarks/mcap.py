"""Benchmark `mcap`: record 60 s of two hands at 100 Hz (12,000 frames of 176 taxels + metadata) as
fast as possible, then replay it through TactileTracker as fast as possible, side by side with the
bare `mcap` writer / reader on the same messages in the same run.

- recording = `McapRecorder.poll()` writing events queued on an in-process bus subscription
  (publication into the bus is done in untimed batches of 1,000 frames: it is transport cost),
  plus `close()`; bare writer = `mcap.Writer.add_message` of the same payloads + `finish()`;
- replay = open the file with `McapReplay`, two `TactileTracker`s `update()` until finished (every
  record verified and decoded, metadata validated); bare reader = `make_reader(f).iter_messages()`
  over the same file, touching each message;
- size: the recorder's file with its crash-safe flushes at the real-time cadence (a chunk per
  0.5 s of data) against the bare writer's default 1 MiB zstd chunks.
"""
from __future__ import annotations

import gc
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from mcap.reader import make_reader
from mcap.writer import CompressionType, Writer

from . import Row, Section, Target

HANDS = ("tactile/right", "tactile/left")
TAXELS = 176
RATE_HZ = 100
SECONDS = 60
BATCH = 1000


def _metadata():
    from ..contract.geometry import matrix_to_quat, rpy_to_matrix
    from ..contract import HandJoint
    from ..contract import TactileMetadata

    joints = (HandJoint.THUMB_DISTAL, HandJoint.INDEX_DISTAL, HandJoint.MIDDLE_DISTAL, HandJoint.RING_DISTAL,
              HandJoint.LITTLE_DISTAL)
    rng = np.random.default_rng(0)
    seg = np.zeros((5, 7))
    seg[:, :3] = rng.uniform(-0.08, 0.08, (5, 3))
    seg[:, 3:] = matrix_to_quat(rpy_to_matrix(rng.uniform(-1, 1, (5, 3))))
    tax = np.zeros((TAXELS, 7))
    tax[:, :3] = rng.uniform(-0.1, 0.1, (TAXELS, 3))
    tax[:, 3:] = matrix_to_quat(rpy_to_matrix(rng.uniform(-1, 1, (TAXELS, 3))))
    counts = (40, 34, 34, 34, 34)
    return TactileMetadata.rigid(joints, seg, tax, np.repeat(np.arange(5), counts))


def _messages():
    """Two hands' streams as they arrive: [(collection, stream, payload, session, sequence, log, pub)]."""
    from ..contract import DeviceDataTimestamp, encode_metadata_record, encode_tactile_record
    from ..streams.base import Stream

    md = _metadata()
    rng = np.random.default_rng(1)
    t0 = 1_000_000_000_000
    out = []
    for h, cid in enumerate(HANDS):
        ts = DeviceDataTimestamp(t0 + h, t0 + h, t0 + h)
        out.append((cid, Stream.METADATA, encode_metadata_record(md, ts), 0x1000 + h, 0, t0 + h, t0 + h))
    # Pads as a sensor reports them: a contact blob moving over the taxels, quantized to the
    # firmware's 1/256 N steps, unloaded taxels exactly 0 (white noise would be incompressible).
    pos = rng.uniform(0, 1, TAXELS)
    direction = rng.normal(0, 1, (TAXELS, 3)).astype(np.float32) * np.float32(0.2)
    direction[:, 2] = -1.0
    for i in range(SECONDS * RATE_HZ):
        for h, cid in enumerate(HANDS):
            centre = 0.5 + 0.4 * np.sin(i * 0.01 + h)
            load = np.clip(1.0 - np.abs(pos - centre) / 0.15, 0.0, None) * (2.0 + np.sin(i * 0.05))
            f = np.round(direction * load[:, None].astype(np.float32) * 256) / 256
            sample = t0 + i * 10_000_000 + h * 1000
            ts = DeviceDataTimestamp(sample + 400_000, sample, sample)
            out.append((cid, Stream.DATA, encode_tactile_record(f.astype(np.float32), ts), 0x1000 + h, i,
                        sample + 400_000, sample))
    return out


def _bare_write(path: Path, msgs) -> float:
    from ..contract import bfbs
    from ..streams.base import Stream

    t = time.perf_counter()
    with open(path, "wb") as f:
        w = Writer(f, compression=CompressionType.ZSTD)
        w.start()
        sid = {Stream.DATA: w.register_schema("core.TactileDataArrayRecord", "flatbuffer", bfbs("TactileDataArrayRecord")),
               Stream.METADATA: w.register_schema("core.TactileMetadataRecord", "flatbuffer", bfbs("TactileMetadataRecord"))}
        ch: dict[tuple[str, Stream], int] = {}  # (collection, stream) -> MCAP channel id
        for cid, stream, payload, _session, seq, log, pub in msgs:
            c = ch.get((cid, stream))
            if c is None:
                c = ch[(cid, stream)] = w.register_channel(cid if stream is Stream.DATA else cid + "/metadata",
                                                            "flatbuffer", sid[stream])
            w.add_message(c, log, payload, pub, seq)
        w.finish()
    return time.perf_counter() - t


def _record(path: Path, msgs) -> float:
    from ..recording import McapRecorder
    from ..streams.base import ProducerLink
    from ..streams.inproc import InProcessBus

    bus = InProcessBus()
    links: dict[str, ProducerLink] = {}
    elapsed = 0.0
    rec = McapRecorder(path, overwrite=True)
    for cid in HANDS:
        rec.add_collection(bus, cid)
    for start in range(0, len(msgs), BATCH):
        for cid, stream, payload, session, seq, _, _ in msgs[start:start + BATCH]:
            link = links.get(cid) or links.setdefault(cid, bus.open_producer(cid, session))
            link.publish(stream, payload, seq)
        t = time.perf_counter()
        rec.poll()
        elapsed += time.perf_counter() - t
    t = time.perf_counter()
    rec.close()
    return elapsed + time.perf_counter() - t


def _record_realtime_chunks(path: Path, msgs) -> None:
    """The same messages with one flush per 0.5 s of log time, as a live recording flushes."""
    from ..recording import McapRecorder

    with McapRecorder(path, overwrite=True) as rec:
        next_flush = msgs[0][5] + 500_000_000
        for cid, stream, payload, session, seq, log, _pub in msgs:
            if log >= next_flush:
                rec.flush()
                next_flush += 500_000_000
            rec.write(cid, stream, payload, session, seq)


def _bare_read(path: Path) -> tuple[float, int]:
    t = time.perf_counter()
    n = 0
    with open(path, "rb") as f:
        for _, _, m in make_reader(f).iter_messages():
            n += len(m.data) > 0
    return time.perf_counter() - t, n


def _replay(path: Path) -> tuple[float, int]:
    from ..recording import McapReplay
    from ..streams.tracker import TactileTracker

    t = time.perf_counter()
    with McapReplay(path) as replay:
        trackers = [TactileTracker(cid, replay) for cid in HANDS]
        frames = 0
        while not replay.finished:
            for tr in trackers:
                frames += tr.update()
    return time.perf_counter() - t, frames


def run(quick: bool = False) -> Section:
    msgs = _messages()
    frames = sum(1 for m in msgs if m[1].value == "data")
    repeat = 1 if quick else 5
    samples: dict[str, list[float]] = {k: [] for k in ("bare_write", "record", "bare_read", "replay")}
    with tempfile.TemporaryDirectory() as d:
        bare, ours, rt = Path(d) / "bare.mcap", Path(d) / "ours.mcap", Path(d) / "realtime.mcap"
        gc_was = gc.isenabled()
        gc.disable()
        try:
            for _ in range(repeat):  # interleaved: noise hits all four alike
                samples["bare_write"].append(_bare_write(bare, msgs))
                samples["record"].append(_record(ours, msgs))
                t, n = _bare_read(ours)
                assert n == len(msgs)
                samples["bare_read"].append(t)
                t, n = _replay(ours)
                if n != frames:
                    raise AssertionError(f"replay delivered {n} frames, expected {frames}")
                samples["replay"].append(t)
        finally:
            if gc_was:
                gc.enable()
        _record_realtime_chunks(rt, msgs)
        size_bare, size_ours, size_rt = os.path.getsize(bare), os.path.getsize(ours), os.path.getsize(rt)
    med = {k: statistics.median(v) for k, v in samples.items()}
    rate = {k: frames / v for k, v in med.items()}
    raw = sum(len(m[2]) for m in msgs)
    s = Section(f"mcap — {SECONDS} s of two hands at {RATE_HZ} Hz ({frames:,} frames of {TAXELS} taxels + metadata)")
    s.rows += [
        Row("bare mcap writer", rate["bare_write"], "frames/s", "Writer.add_message + finish, zstd 1 MiB chunks"),
        Row("McapRecorder (poll from bus subscription + close)", rate["record"], "frames/s",
            "timestamps read from each record, one channel per producer session"),
        Row("bare mcap reader", rate["bare_read"], "frames/s", "make_reader(f).iter_messages() on the recorder's file"),
        Row("McapReplay → 2 × TactileTracker", rate["replay"], "frames/s",
            "every record verified + decoded, metadata validated"),
        Row("payload bytes (uncompressed)", raw / 1e6, "MB", ""),
        Row("bare writer file", size_bare / 1e6, "MB", "1 MiB zstd chunks"),
        Row("recorder file, fast run", size_ours / 1e6, "MB", "flushes every 0.5 s of the data's time"),
        Row("recorder file, real-time flush cadence", size_rt / 1e6, "MB", "one chunk per 0.5 s of data"),
    ]
    s.targets += [
        Target("replay / bare reader (frames/s)", rate["replay"] / rate["bare_read"], ">=", 0.5),
        Target("recording / bare writer (frames/s)", rate["record"] / rate["bare_write"], ">=", 0.5),
        Target("recorder file (real-time cadence) / bare zstd", size_rt / size_bare, "<=", 1.2),
    ]
    return s
