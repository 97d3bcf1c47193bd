"""The simulated producer loop: 1 ms physics, every 10 steps `mj_forward` + read + publish.

`run_scenario` drives one scenario frame by frame and, when given a `TactilePublisher`, publishes
each frame's taxel forces at 100 Hz of simulation time. Timestamps: the raw device clock is the
simulation time [ns]; the common-clock sample time is the monotonic clock at the start of the
run plus the simulation time (so with `realtime=True` it tracks the wall clock, and as fast as
possible it runs ahead of it).
"""
from __future__ import annotations

import time
from typing import Callable

from ...streams.publisher import TactilePublisher
from .contact_forces import TactileReading
from .hand_sim import HandSimulation
from .scenarios import FRAME_S, Scenario, ScenarioResult

FrameCallback = Callable[[HandSimulation, TactileReading], None]


def run_scenario(scenario: Scenario, *, side: str = "right", seed: int = 0,
                 publisher: TactilePublisher | None = None, images: bool = False, realtime: bool = False,
                 on_frame: FrameCallback | None = None, progress=None,
                 max_frames: int | None = None) -> ScenarioResult:
    """Run `scenario` to its end (or `max_frames`); returns its checks.

    `on_frame(sim, reading)` runs after every frame (e.g. a recorder poll or image sink);
    `progress` is anything with `update(n)` (a tqdm bar)."""
    sim = scenario.build(side, seed)
    frames = scenario.num_frames if max_frames is None else min(max_frames, scenario.num_frames)
    start_ns = time.monotonic_ns()
    for i in range(frames):
        t = i * FRAME_S
        scenario.control(sim, t)
        sim.step_frame()
        reading = sim.read(images=images)
        scenario.observe(sim, reading, t + FRAME_S)
        if publisher is not None:
            publisher.publish(reading.taxel_forces, sample_time_ns=start_ns + sim.time_ns, device_time_ns=sim.time_ns)
        if on_frame is not None:
            on_frame(sim, reading)
        if progress is not None:
            progress.update(1)
        if realtime:
            delay = (start_ns + sim.time_ns - time.monotonic_ns()) / 1e9
            if delay > 0:
                time.sleep(delay)
    return ScenarioResult(scenario.name, side, frames, scenario.checks())
