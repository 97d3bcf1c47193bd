"""Batched simulation for data generation: `producers.sim.batch.BatchedScenes` of the `press` scene
in its hold (t = 8 s: all five pads loaded, as the `sim` section's frame), measured in one run:

- bare batched step: every scene's frame (ten 1 ms `mj_step` + `mj_forward`) on the thread pool;
- full: the same plus every scene's taxel read (contacts → 176 taxel forces, stacked).

Rounds of both alternate. Figures are CPU time of this process (all threads) per scene-frame, so
"frames/s per core" = 1 / that; the target is full / bare frames per CPU-second ≥ 0.6 (what the
taxel read costs against the physics it reads). Wall-clock frames/s are informative: they depend
on how many cores are free.
"""
from __future__ import annotations

import os
import statistics
import time

from . import Row, Section, Target

SCENES = 8


def run(quick: bool = False) -> Section:
    from ..producers.sim.batch import BatchedScenes
    from .sim import _hold_state_sim

    rounds, frames = (3, 8) if quick else (7, 20)
    sim = _hold_state_sim()
    section = Section(f"Batched simulation ({SCENES} scenes of the press hold, 176 taxels each)")
    samples: dict[str, list[tuple[float, float]]] = {"bare": [], "full": []}  # (cpu, wall) per scene-frame
    with BatchedScenes(sim, SCENES) as batch:
        batch.step_frame()
        batch.read()  # warm up
        contacts = sum(d.ncon for d in batch.datas) / SCENES

        def bare() -> None:
            batch.step_frame()

        def full() -> None:
            batch.step_frame()
            batch.read()

        for _ in range(rounds):
            for name, fn in (("bare", bare), ("full", full)):
                c0, t0 = time.process_time(), time.perf_counter()
                for _ in range(frames):
                    fn()
                n = frames * SCENES
                samples[name].append(((time.process_time() - c0) / n, (time.perf_counter() - t0) / n))
        threads = batch.threads
    dm = sim.contacts.distributed
    backend = "gaussian" if dm is None else dm.backend
    cpu = {k: statistics.median(c for c, _ in v) for k, v in samples.items()}
    wall = {k: statistics.median(w for _, w in v) for k, v in samples.items()}
    section.rows += [
        Row("bare batched step, CPU per scene-frame", cpu["bare"] * 1e6, "µs",
            f"{1 / cpu['bare']:,.0f} frames/s per core; wall {1 / wall['bare']:,.0f} frames/s on {threads} threads "
            f"({os.cpu_count()} CPUs); {contacts:.1f} contacts per scene"),
        Row("full: step + taxel read, CPU per scene-frame", cpu["full"] * 1e6, "µs",
            f"{1 / cpu['full']:,.0f} frames/s per core; wall {1 / wall['full']:,.0f} frames/s"),
        Row("taxel read, CPU per scene-frame", (cpu["full"] - cpu["bare"]) * 1e6, "µs",
            f"the hand's contact model (read_many, {backend} backend: "
            + ("one compiled read per scene)" if backend == "native" else "all scenes' pairs in one pass)")),
    ]
    section.targets.append(Target("batched full / bare frames per CPU-second", cpu["bare"] / cpu["full"], ">=", 0.6))
    return section
