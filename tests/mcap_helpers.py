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


# -- hand-made MCAP files (record framing per the public MCAP specification) -------------------
# An independent writer: hostile files need what no well-behaved writer produces (lying sizes,
# missing records, odd channel metadata), and the expected values must not come from our reader.
import struct  # noqa: E402
import zlib  # noqa: E402

MAGIC = b"\x89MCAP0\r\n"
DATA_SCHEMA, META_SCHEMA = "core.TactileDataArrayRecord", "core.TactileMetadataRecord"


def _str(x) -> bytes:
    b = x.encode() if isinstance(x, str) else bytes(x)
    return struct.pack("<I", len(b)) + b


def _map(d: dict) -> bytes:
    body = b"".join(_str(k) + _str(v) for k, v in d.items())
    return struct.pack("<I", len(body)) + body


def rec(opcode: int, body: bytes) -> bytes:
    return struct.pack("<BQ", opcode, len(body)) + body


def header(profile: str = "", library: str = "hand-made") -> bytes:
    return rec(0x01, _str(profile) + _str(library))


def schema(sid: int, name: str, encoding: str, data: bytes) -> bytes:
    return rec(0x03, struct.pack("<H", sid) + _str(name) + _str(encoding) + _str(data))


def channel(cid: int, sid: int, topic: str, encoding: str, metadata: dict) -> bytes:
    return rec(0x04, struct.pack("<HH", cid, sid) + _str(topic) + _str(encoding) + _map(metadata))


def message(cid: int, seq: int, log_time: int, publish_time: int, data: bytes) -> bytes:
    return rec(0x05, struct.pack("<HIQQ", cid, seq, log_time, publish_time) + data)


def compress(records: bytes, compression: str) -> bytes:
    if compression == "zstd":
        import zstandard

        return zstandard.ZstdCompressor().compress(records)
    if compression == "lz4":
        import lz4.frame

        return lz4.frame.compress(records)
    return records


def chunk(records: bytes, *, compression: str = "zstd", start: int = 0, end: int = 0, declared: int | None = None,
          compressed: bytes | None = None, crc: int | None = None) -> bytes:
    """A chunk record; `declared` (uncompressed size) and `compressed` may lie about `records`."""
    data = compress(records, compression) if compressed is None else compressed
    body = (struct.pack("<QQQI", start, end, len(records) if declared is None else declared,
                        zlib.crc32(records) if crc is None else crc)
            + _str(compression) + struct.pack("<Q", len(data)) + data)
    return rec(0x06, body)


def message_index(cid: int, entries: list[tuple[int, int]]) -> bytes:
    return rec(0x07, struct.pack("<HI", cid, 16 * len(entries)) + b"".join(struct.pack("<QQ", t, o) for t, o in entries))


def mcap_file(*records: bytes, complete: bool = True) -> bytes:
    """Magic, header, `records`, then (complete) a data-end record, a footer without summary and the magic."""
    tail = rec(0x0F, struct.pack("<I", 0)) + rec(0x02, struct.pack("<QQI", 0, 0, 0)) + MAGIC if complete else b""
    return MAGIC + header() + b"".join(records) + tail


def tactile_definitions(session: str = "00000000000000aa", topic: str = "tactile/right", data_sid: int = 1,
                        meta_sid: int = 2) -> bytes:
    """Schemas and channels 1 (data) and 2 (metadata) of one tactile collection."""
    from wuji_tactile_device.contract import bfbs

    return (schema(data_sid, DATA_SCHEMA, "flatbuffer", bfbs("TactileDataArrayRecord"))
            + schema(meta_sid, META_SCHEMA, "flatbuffer", bfbs("TactileMetadataRecord"))
            + channel(1, 1, topic, "flatbuffer", {"producer_session": session})
            + channel(2, 2, topic + "/metadata", "flatbuffer", {"producer_session": session}))


def tactile_messages(frames: int, *, num_taxels: int = 12, t0: int = 1_000_000_000, step: int = STEP_NS,
                     times: list[int] | None = None, seed: int = 0) -> tuple[bytes, list[int]]:
    """Metadata (channel 2) then `frames` data records (channel 1) as message records.
    Returns (records, the data messages' log times)."""
    from wuji_tactile_device.contract import DeviceDataTimestamp, encode_metadata_record, encode_tactile_record

    rng = np.random.default_rng(seed)
    md = encode_metadata_record(make_metadata(num_taxels), DeviceDataTimestamp(t0, t0, t0))
    out = [message(2, 0, t0, t0, md)]
    log_times = times if times is not None else [t0 + (i + 1) * step for i in range(frames)]
    for i, t in enumerate(log_times):
        out.append(message(1, i, t, t, encode_tactile_record(forces_for(rng, num_taxels), DeviceDataTimestamp(t, t, t))))
    return b"".join(out), log_times
