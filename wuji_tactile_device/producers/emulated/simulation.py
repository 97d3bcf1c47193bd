"""What the emulated hand borrows from the simulation: its pad layout (a fallback for device
formats that declare no placement) and its per-tick taxel forces (what the emulated device
"senses"). The hardware producer itself never imports the simulation; this module does."""
from __future__ import annotations

from typing import Iterator

import numpy as np

from ...contract.joints import FINGERS


def simulation_layout(side: str) -> dict[str, np.ndarray]:
    """The simulation's pad layout as a fallback for fingers whose format declares no placement:
    per finger (P, 7) taxel poses in tip_sensor_frame (synthetic sensing locations, not measured)."""
    from ..sim.taxels import taxel_poses_in_distal  # MuJoCo only when a fallback is asked for

    return dict(zip(FINGERS, taxel_poses_in_distal(side)))


def simulation_forces(side: str, scenario: str = "press", *, seed: int = 0, duration_s: float | None = None,
                      playback_file=None, playback_rate: float = 100.0) -> Iterator[np.ndarray]:
    """The simulation's per-tick taxel forces (176, 3) [N, taxel axes, force on the taxel] for one
    scenario run, 100 Hz of simulation time — exactly what the simulated producer publishes. Stops
    at the scenario's end or after `duration_s` of simulation time, whichever is first."""
    from ..sim.scenarios import FRAME_S, make_scenario

    sc = make_scenario(scenario, playback_file=playback_file, playback_rate=playback_rate)
    sim = sc.build(side, seed)
    frames = sc.num_frames if duration_s is None else min(sc.num_frames, int(round(duration_s / FRAME_S)))
    for i in range(frames):
        t = i * FRAME_S
        sc.control(sim, t)
        sim.step_frame()
        reading = sim.read()
        sc.observe(sim, reading, t + FRAME_S)
        yield reading.taxel_forces
