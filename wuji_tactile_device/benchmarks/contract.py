"""Contract codec costs: encode and verify+decode of force records, against their floors, in this
thread's CPU time (what other jobs on the machine take is not counted: the ratios hold beside them;
the two sizes are measured in separate loops, so wall time let a busy machine move one against the
other: 2.0 instead of ≤ 1.3 beside two CPU burners)."""
from __future__ import annotations

import time

import flatbuffers
import numpy as np

from ..contract.records import DeviceDataTimestamp, _decode_record_full, decode_tactile_record, encode_tactile_record
from ..contract import TactileMetadata
from . import Row, Section, Target, compare


def run(quick: bool = False) -> Section:
    number, repeat = (500, 5) if quick else (3000, 15)
    section = Section("Contract codec (per message, median)")
    ts = DeviceDataTimestamp(1, 2, 3)
    results = {}
    for n in (176, 4096):
        forces = np.random.default_rng(n).normal(size=(n, 3)).astype(np.float32)
        flat = forces.reshape(-1)
        buf = encode_tactile_record(forces, ts)
        start = len(buf) - forces.nbytes

        # Each timed function binds this iteration's arrays as defaults (one Python call each).
        def encode(f: np.ndarray = forces) -> object:
            return encode_tactile_record(f, ts)

        def floor_encode(flat: np.ndarray = flat, size: int = forces.nbytes + 96) -> None:
            builder = flatbuffers.Builder(size)
            builder.CreateNumpyVector(flat)

        def decode(b: bytes = buf) -> object:
            return decode_tactile_record(b)

        def decode_full(b: bytes = buf) -> object:
            return _decode_record_full(b, len(b))

        def floor_decode(b: bytes = buf, n: int = n, s: int = start) -> object:
            return np.frombuffer(b, np.float32, 3 * n, s)

        t = compare({"encode": encode, "floor_encode": floor_encode, "decode": decode, "decode_full": decode_full,
                     "floor_decode": floor_decode}, number=number, repeat=repeat, clock=time.thread_time)
        results[n] = t
        section.rows += [
            Row(f"encode record, N={n}", t["encode"] * 1e6, "µs", "template from the Builder, patched"),
            Row(f"floor: Builder + CreateNumpyVector, N={n}", t["floor_encode"] * 1e6, "µs"),
            Row(f"verify+decode record, N={n}", t["decode"] * 1e6, "µs", "known layout: structural bytes compared"),
            Row(f"verify+decode record, full walk, N={n}", t["decode_full"] * 1e6, "µs", "any writer's layout"),
            Row(f"floor: np.frombuffer, N={n}", t["floor_decode"] * 1e6, "µs"),
        ]
    from ..contract.validation import validate_metadata

    md_buf = _metadata_176().encode()
    tm = compare({"metadata": lambda: validate_metadata(TactileMetadata.decode(md_buf))}, number=max(number // 20, 50), repeat=5,
                 clock=time.thread_time)
    section.rows.append(Row("decode + validate metadata, N=176", tm["metadata"] * 1e6, "µs", "once per producer session"))
    r176, r4096 = results[176], results[4096]
    section.targets += [
        Target("verify+decode N=4096 / N=176", r4096["decode"] / r176["decode"], "<=", 1.3),
        Target("full-walk verify+decode N=4096 / N=176", r4096["decode_full"] / r176["decode_full"], "<=", 1.3),
        Target("encode N=176 / CreateNumpyVector floor", r176["encode"] / r176["floor_encode"], "<=", 1.5),
        Target("encode N=4096 / CreateNumpyVector floor", r4096["encode"] / r4096["floor_encode"], "<=", 1.5),
        Target("verify+decode N=176 / np.frombuffer floor", r176["decode"] / r176["floor_decode"], "<=", 15.0),
    ]
    section.rows.append(Row("full-walk verify+decode N=176 / floor (no target)",
                            r176["decode_full"] / r176["floor_decode"], "×"))
    return section


def _metadata_176() -> TactileMetadata:
    n = 176
    poses = np.tile([0.0, 0, 0, 0, 0, 0, 1], (n, 1))
    from ..contract import HandJoint

    joints = (HandJoint.THUMB_DISTAL, HandJoint.INDEX_DISTAL, HandJoint.MIDDLE_DISTAL, HandJoint.RING_DISTAL,
              HandJoint.LITTLE_DISTAL)
    return TactileMetadata.rigid(joints, np.tile([0.0, 0, 0, 0, 0, 0, 1], (5, 1)), poses, np.arange(n) % 5)
