"""Benchmarks: per-frame costs measured side by side with their floors in one run.

Each section module `benchmarks/<name>.py` exposes `run(quick: bool) -> Section`. Figures are
medians; targets are ratios to a floor measured in the same run (this machine is shared and
noisy, so absolute numbers are orders of magnitude only). Every section records the machine
load average (`os.getloadavg()`) before and after it runs, so a ratio earned against a reference
slowed by other jobs is visible as such. Run with `python tools/bench.py` or `wuji-tactile bench`.
"""
from __future__ import annotations

import gc
import importlib
import os
import statistics
import time
from dataclasses import dataclass, field
from collections.abc import Callable

SECTIONS = ("contract", "streams", "mcap", "sim", "sim_batch", "hardware")


@dataclass
class Row:
    """One measured figure."""

    name: str
    value: float
    unit: str
    note: str = ""


@dataclass
class Target:
    """A ratio target: `measured <op> limit`, op one of '<=' or '>='."""

    description: str
    measured: float
    op: str
    limit: float

    @property
    def passed(self) -> bool:
        return self.measured <= self.limit if self.op == "<=" else self.measured >= self.limit


def machine_load() -> tuple[float, float, float]:
    """The machine's load average over 1, 5 and 15 minutes (`os.getloadavg()`)."""
    return os.getloadavg()


def load_text(load: tuple[float, float, float]) -> str:
    return "/".join(f"{v:.2f}" for v in load)


@dataclass
class Section:
    title: str
    rows: list[Row] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    load_before: tuple[float, float, float] | None = None  # machine load (1/5/15 min) when it started
    load_after: tuple[float, float, float] | None = None  # ... and when it ended

    def markdown(self) -> str:
        lines = [f"### {self.title}", ""]
        if self.load_before is not None and self.load_after is not None:
            lines += [f"machine load average (1/5/15 min) before: {load_text(self.load_before)}, after: "
                      f"{load_text(self.load_after)} ({os.cpu_count()} CPUs)", ""]
        lines += ["| measurement | value | unit | note |", "|---|---:|---|---|"]
        lines += [f"| {r.name} | {_fmt(r.value)} | {r.unit} | {r.note} |" for r in self.rows]
        if self.targets:
            lines += ["", "| target | measured | limit | result |", "|---|---:|---:|---|"]
            lines += [f"| {t.description} | {_fmt(t.measured)} | {t.op} {_fmt(t.limit)} | "
                      f"{'PASS' if t.passed else 'FAIL'} |" for t in self.targets]
        return "\n".join(lines)


def _fmt(v: float) -> str:
    if v == 0 or 0.01 <= abs(v) < 100_000:
        return f"{v:.3g}" if abs(v) < 100 else f"{v:,.0f}"
    return f"{v:.3g}"


def compare(fns: dict[str, Callable[[], object]], *, number: int, repeat: int,
            clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """Median seconds per call of each function, measured interleaved (round-robin per repeat) so
    that machine noise hits all of them alike. `clock`: wall time by default; `time.thread_time`
    measures this thread's CPU time instead (what other processes on the machine take is not
    counted: ratios of such figures hold beside other jobs)."""
    samples: dict[str, list[float]] = {k: [] for k in fns}
    for fn in fns.values():  # warm up
        for _ in range(min(number, 100)):
            fn()
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            for name, fn in fns.items():
                t0 = clock()
                for _ in range(number):
                    fn()
                samples[name].append((clock() - t0) / number)
    finally:
        if gc_was:
            gc.enable()
    return {k: statistics.median(v) for k, v in samples.items()}


def run_sections(names: tuple[str, ...] = SECTIONS, *, quick: bool = False) -> list[Section]:
    out = []
    for name in names:
        module = importlib.import_module(f"{__name__}.{name}")
        before = machine_load()
        section = module.run(quick=quick)
        section.load_before, section.load_after = before, machine_load()
        out.append(section)
    return out
