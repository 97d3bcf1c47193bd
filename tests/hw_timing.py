"""Run the whole hardware path (emulated hand → SDK adapter → producer) with fingers sampled on
their own clocks, and measure what was published against what could have been.

`run_pattern(timing, ticks)` → `TimingResult`: `published` ticks; `expected` = the most ticks
the fingers' samples allow (every finger's samples used at most once: the smallest per-finger
sample count over the run); `worst_spread_us` = the largest timestamp spread inside a published
tick (how stale its oldest finger was against its newest); `reused` = finger samples published
twice (must be 0); `over_period` = ticks spanning a full tick period or more (must be 0).

`python tests/hw_timing.py` prints the assembly table of docs/hardware.md.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from hw_loop import OnLoop
from wuji_tactile_device.hands.wuji_hand2 import FINGERS
from wuji_tactile_device.producers.emulated import EmulatedHand2
from wuji_tactile_device.producers.hardware import HardwareConfig, HardwareProducer, SdkFingertipDevice
from wuji_tactile_device.streams.inproc import InProcessBus

PERIOD_US = 10_000
_ZERO = np.zeros((176, 3))
_LAYOUT: dict[str, object] = {}


class TimingResult(NamedTuple):
    published: int
    expected: int
    worst_spread_us: int
    reused: int
    over_period: int
    samples: dict[str, int]

    @property
    def ratio(self) -> float:
        return self.published / self.expected if self.expected else float("nan")


def _hand(seed: int) -> EmulatedHand2:
    # the pad layout comes from the simulation (MuJoCo, ~0.3 s): build it once per process
    if "layout" not in _LAYOUT:
        from wuji_tactile_device.producers.sim.taxels import pad_taxels

        _LAYOUT["layout"] = pad_taxels("right")
    return EmulatedHand2("right", pad_taxels=_LAYOUT["layout"], seed=seed, diagnostics_every=0)


def run_pattern(timing: dict[str, dict], ticks: int = 600, *, seed: int = 0, warmup: int = 0) -> TimingResult:
    """`timing`: finger → `EmulatedHand2.set_timing` keyword arguments. `ticks` hand periods are
    emitted, one per period of a virtual local clock (arrivals are stamped on it, so the result
    does not depend on the machine's load); the first `warmup` periods' samples are not counted
    as expected."""
    emu = _hand(seed)
    for f, kw in timing.items():
        emu.set_timing(f, **kw)
    clock = [1_000_000_000]  # local arrival time [ns]: one hand period per emitted tick, never the machine's
    device = SdkFingertipDevice(emu, clock_ns=lambda: clock[0])
    producer = OnLoop(HardwareProducer(device, HardwareConfig(side="right", stale_after_s=3600.0, metadata_period_s=3600.0)), InProcessBus())
    seen: dict[str, set] = {f: set() for f in FINGERS}
    out = {"reused": 0, "over": 0, "worst": 0}
    counts = {f: 0 for f in FINGERS}
    assembler = producer.assembler

    def on_tick(p):
        times = [p.last_tick.resultants[f].device_time_us for f in FINGERS]
        for f, t in zip(FINGERS, times, strict=True):
            if t in seen[f]:
                out["reused"] += 1
            seen[f].add(t)
        spread = max(times) - min(times)
        out["worst"] = max(out["worst"], spread)
        if spread >= (assembler.tick_period_us or PERIOD_US):
            out["over"] += 1

    inner = producer.producer
    on_published = inner.on_published

    def spy(frame, sequence, timestamp):  # measure every published tick
        on_published(frame, sequence, timestamp)
        on_tick(inner)

    inner.on_published = spy
    sub_counts = {f: 0 for f in FINGERS}
    for k in range(ticks):
        before = {f: emu.pad(f).seq for f in FINGERS}
        emu.emit(_ZERO)
        producer.step()
        clock[0] += PERIOD_US * 1000
        for f in FINGERS:
            n = (emu.pad(f).seq - before[f]) % (1 << 32)
            sub_counts[f] += n
            if k >= warmup:
                counts[f] += n
    return TimingResult(producer.published, min(counts.values()), out["worst"], out["reused"], out["over"],
                        sub_counts)


def random_offsets(rng: np.random.Generator) -> dict[str, dict]:
    return {f: {"phase_us": float(rng.uniform(0, PERIOD_US))} for f in FINGERS}


def spread_offsets(spread_us: float) -> dict[str, dict]:
    return {f: {"phase_us": spread_us * i / 4} for i, f in enumerate(FINGERS)}


PATTERNS: list[tuple[str, dict, int]] = [
    ("identical timestamps (the old emulator)", {}, 0),
    ("fixed offsets, 4.9 ms spread", spread_offsets(4900), 0),
    ("fixed offsets, 6 ms spread", spread_offsets(6000), 0),
    ("fixed offsets, 9.9 ms spread (a full period)", spread_offsets(9900), 0),
    ("random fixed offsets in [0, 10 ms)", "random", 0),
    ("random offsets + jitter ±1 ms", "random_jitter_1000", 0),
    ("random offsets + jitter ±2.5 ms", "random_jitter_2500", 0),
    ("random offsets, index drifts +2000 ppm, ring −2000 ppm", "random_drift", 0),
    ("random offsets, drift ±2000 ppm + jitter ±1 ms", "random_drift_jitter", 0),
    ("pinky at 50 Hz, others 100 Hz", {"pinky": {"rate_hz": 50.0}}, 0),
    ("middle at 120 Hz, others 100 Hz", {"middle": {"rate_hz": 120.0}}, 0),
    ("thumb at 99 Hz, others 100 Hz", {"thumb": {"rate_hz": 99.0}}, 0),
]


def build(pattern, seed: int) -> dict[str, dict]:
    if isinstance(pattern, dict):
        return pattern
    rng = np.random.default_rng(seed)
    timing = random_offsets(rng)
    if "jitter" in pattern:
        j = 1000.0 if pattern.endswith("1000") or "drift" in pattern else 2500.0
        for kw in timing.values():
            kw["jitter_us"] = j
    if "drift" in pattern:
        timing["index"]["drift_ppm"] = 2000.0
        timing["ring"]["drift_ppm"] = -2000.0
    return timing


def table(ticks: int = 1200, hands: int = 20) -> str:
    rows = ["| offset pattern | ticks published / expected | worst staleness (spread in a tick) | reused samples |",
            "|---|---:|---:|---:|"]
    for name, pattern, warmup in PATTERNS:
        seeds = range(hands) if isinstance(pattern, str) else range(1)
        res = [run_pattern(build(pattern, s), ticks, seed=s, warmup=warmup) for s in seeds]
        pub = sum(r.published for r in res)
        exp = sum(r.expected for r in res)
        worst = max(r.worst_spread_us for r in res)
        reused = sum(r.reused + r.over_period for r in res)
        label = name + (f" ({hands} hands)" if len(res) > 1 else "")
        rows.append(f"| {label} | {pub} / {exp} ({100 * pub / exp:.2f} %) | {worst} µs | {reused} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(table())
