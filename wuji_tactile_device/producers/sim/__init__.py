"""The simulated Wuji Hand 2 (MuJoCo 4.0): model, taxel layout, contact-solution forces,
metadata, producer loop and scenarios.

For the hardware emulator: `pad_taxel_layouts(side)` gives each pad's taxels (positions, normals,
tangents in the distal = tip_sensor_frame) and `pad_taxel_forces_per_tick(side, scenario)` yields,
per 10 ms tick, the five pads' taxel forces in each taxel's own axes.
"""
from __future__ import annotations

from typing import Iterator, NamedTuple

import numpy as np


class PadTaxels(NamedTuple):
    """One pad's taxels in the distal body (= tip_sensor_frame) frame [m]."""

    finger: str
    positions: np.ndarray  # (n, 3)
    normals: np.ndarray    # (n, 3) taxel +Z, outward
    tangents: np.ndarray   # (n, 3) taxel +X (toward the fingertip, projected); +Y = Z × X


def pad_taxel_layouts(side: str) -> tuple[PadTaxels, ...]:
    """The five pads' taxel layouts (thumb → pinky)."""
    from .taxels import pad_layouts
    return tuple(PadTaxels(p.finger, p.positions, p.normals, p.tangents) for p in pad_layouts(side))


def pad_taxel_forces_per_tick(side: str, scenario: str = "press", *, seed: int = 0,
                              playback_file=None) -> Iterator[tuple[int, tuple[np.ndarray, ...]]]:
    """Per 10 ms tick of `scenario`: (simulation time [ns], five (n_f, 3) float32 arrays of taxel
    forces [N] in each taxel's own axes, force ON the taxel — thumb → pinky)."""
    from .scenarios import FRAME_S, make_scenario

    sc = make_scenario(scenario, playback_file=playback_file)
    sim = sc.build(side, seed)
    bounds = np.cumsum([0] + [len(p.positions) for p in pad_taxel_layouts(side)])
    for i in range(sc.num_frames):
        sc.control(sim, i * FRAME_S)
        sim.step_frame()
        reading = sim.read()
        sc.observe(sim, reading, (i + 1) * FRAME_S)
        f = reading.taxel_forces
        yield sim.time_ns, tuple(f[bounds[k]:bounds[k + 1]] for k in range(5))
