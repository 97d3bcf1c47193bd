"""Scenarios for the simulated hand, each with the checks it prints at the end.

- `press`: the thumb opposes the four fingers on a fixed object; 0–3 s approach and light
  contact, 3–7 s per-finger target ramp 0.05 → 0.50 N, 7–10.5 s hold, then release. Force is
  reached by feeding the measured pad resultant magnitude back into the joint targets (never by
  scaling outputs).
- `lift`: thumb and index pinch a 30 g free block on a pedestal, grip by the same feedback, and
  the hand mount lifts it 80 mm; while airborne the world-vertical force the pads carry must equal
  the block's weight and the pedestal must carry nothing.
- `grasp-sphere` / `grasp-cylinder` / `grasp-box`, `release`, `roll` (`grasp`), `slip`,
  `nail-contact` (`nail`), `playback`: joint targets from a file (20 angles per row, firmware
  order) at a given rate. `base` holds what they share; `docs/sim.md` lists every check.

Object placement comes from the hand's forward kinematics at a pre-grasp pose, jittered by up to
±0.2 mm from the seed (same seed → bit-identical run).
"""
from __future__ import annotations

from pathlib import Path

from ....errors import ProducerError
from .base import BLOCK_MASS, FRAME_S, GRAVITY, Check, Scenario, ScenarioResult
from .press import PressScenario
from .grasp import LiftScenario, GraspScenario, ReleaseScenario, RollScenario
from .slip import SlipScenario
from .nail import NailContactScenario
from .playback import load_joint_file, PlaybackScenario

SCENARIOS = ("press", "lift", "playback", "nail-contact", "grasp-sphere", "grasp-cylinder", "grasp-box",
             "release", "slip", "roll")


def make_scenario(name: str, *, playback_file: str | Path | None = None, playback_rate: float = 100.0) -> Scenario:
    if name == "press":
        return PressScenario()
    if name == "lift":
        return LiftScenario()
    if name == "nail-contact":
        return NailContactScenario()
    if name == "roll":
        return RollScenario()
    if name == "slip":
        return SlipScenario()
    if name == "release":
        return ReleaseScenario()
    if name.startswith("grasp-") and name[len("grasp-"):] in GraspScenario.SHAPES:
        return GraspScenario(name[len("grasp-"):])
    if name == "playback":
        if playback_file is None:
            raise ProducerError("scenario playback needs a joint file (--joints FILE)")
        return PlaybackScenario(load_joint_file(playback_file), playback_rate)
    raise ProducerError(f"unknown scenario {name!r}; choose one of {', '.join(SCENARIOS)}")


__all__ = ['BLOCK_MASS', 'Check', 'FRAME_S', 'GraspScenario', 'GRAVITY', 'LiftScenario', 'load_joint_file', 'make_scenario', 'NailContactScenario', 'PlaybackScenario', 'PressScenario', 'ReleaseScenario', 'RollScenario', 'Scenario', 'ScenarioResult', 'SCENARIOS', 'SlipScenario']
