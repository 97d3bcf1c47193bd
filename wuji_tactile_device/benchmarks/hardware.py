"""Hardware producer per-tick cost: five device frames (176 taxels, i16 with scale) → checked,
assembled, decoded, unit/axis-mapped, encoded and published by one `ProducerRunner.step()` of the
run loop — against the bare `np.frombuffer` of the same bytes, measured interleaved in one run."""
from __future__ import annotations

import time

import numpy as np

from ..contract import DeviceDataTimestamp, encode_tactile_record
from ..producers.hardware.assembly import TickAssembler
from ..producers.hardware.device import FingertipFrame, FingertipInfo, FingertipStatus
from ..producers.emulated import EmulatedHand2
from ..producers.base import ProducerRunner
from ..producers.hardware.producer import HardwareConfig, HardwareProducer
from ..hands.wuji_hand2 import FINGERS
from ..streams.inproc import InProcessBus
from . import Row, Section, Target, compare

PERIOD_US = 10_000


class _ReplayDevice:
    """A `FingertipDevice` whose poll returns one tick of five fixed frames (bytes made by the
    emulator from a random load), with fresh device timestamps and receive times, once per
    `arm()` (then nothing, as a real device between ticks)."""

    def __init__(self, emu: EmulatedHand2, forces: np.ndarray):
        self.serial_number = emu.serial_number
        self._emu = emu
        self.payloads = {f: emu.encode_frame(f, forces) for f in FINGERS}
        self._digests = {f: emu.pad(f).digest for f in FINGERS}
        self._seq = 0
        self._armed = False

    def arm(self) -> None:
        self._armed = True

    def fingertip_info(self, finger: str) -> FingertipInfo:
        pad = self._emu.pad(finger)
        return FingertipInfo(finger, pad.digest, "bench", 0, 100.0, pad.format_text)

    def fingertip_status(self, finger: str) -> FingertipStatus:
        return FingertipStatus(0, 0)

    def fingertip_online(self) -> list[bool]:
        return [True] * 5

    def open_streams(self) -> None:
        pass

    def poll(self) -> list[FingertipFrame]:
        if not self._armed:
            return []
        self._armed = False
        self._seq += 1
        ts, now = self._seq * PERIOD_US, time.monotonic_ns()
        return [FingertipFrame(f, self._seq, ts, self._digests[f], self.payloads[f], now) for f in FINGERS]

    def calibrate_fingertip(self) -> None:
        pass

    def close(self) -> None:
        pass


def run(quick: bool = False) -> Section:
    number, repeat = (200, 5) if quick else (1000, 15)
    section = Section("Hardware producer (one 176-taxel tick, median)")
    emu = EmulatedHand2("right")
    load = np.random.default_rng(6).normal(size=(176, 3)) * 0.8
    device = _ReplayDevice(emu, load)
    producer = HardwareProducer(device, HardwareConfig(side="right", stale_after_s=3600.0))
    runner = ProducerRunner(producer, InProcessBus(), metadata_period_s=3600.0)

    def tick():
        device.arm()
        runner.step()

    payloads = [device.payloads[f] for f in FINGERS]
    formats = [producer._fingers[f] for f in FINGERS]
    out = np.empty((176, 3), dtype=np.float32)
    seq = [0]

    def decode_only():
        for fmt, data in zip(formats, payloads, strict=True):
            fmt.fmt.decode_into(data, out[fmt.taxels])

    assembler: TickAssembler[FingertipFrame] = TickAssembler(tolerance_us=5000)

    def assemble_only():
        seq[0] += 1
        now = time.monotonic_ns()
        for f, data in zip(FINGERS, payloads, strict=True):
            assembler.push(FingertipFrame(f, seq[0], seq[0] * PERIOD_US, 0, data, now))
        assembler.pop_ready()

    ts = DeviceDataTimestamp(1, 2, 3)

    def floor():
        for data in payloads:
            np.frombuffer(data, dtype="<i2")

    t = compare({
        "tick": tick,
        "decode": decode_only,
        "assemble": assemble_only,
        "encode": lambda: encode_tactile_record(out, ts),
        "floor": floor,
    }, number=number, repeat=repeat)
    assert runner.counters.published > 0 and producer.unavailable_fingers == ()
    section.rows += [
        Row("whole tick: poll → check → decode → assemble → map → encode → publish", t["tick"] * 1e6, "µs",
            "ProducerRunner.step() of a HardwareProducer, in-process bus"),
        Row("decode five frames (strided i16 read × scale)", t["decode"] * 1e6, "µs"),
        Row("assemble five frames by device timestamp", t["assemble"] * 1e6, "µs"),
        Row("encode the 176-taxel record", t["encode"] * 1e6, "µs"),
        Row("floor: np.frombuffer of the five frames", t["floor"] * 1e6, "µs"),
        Row("whole tick / floor", t["tick"] / t["floor"], "×"),
    ]
    section.targets.append(Target("whole per-tick path [ms]", t["tick"] * 1e3, "<=", 0.5))
    return section
