"""What the emulated hand borrows from the simulation: its pad layout (a fallback for device
formats that declare no placement) and its per-tick taxel forces (what the emulated device
"senses"); and `EmulatedHandProducer`, the whole emulated hardware path as one `Producer`
(simulation → emulated hand bytes → hardware producer). The hardware producer itself never
imports the simulation; this module does."""
from __future__ import annotations

from typing import Callable, Iterator

import numpy as np

from ...contract.joints import FINGERS
from ..base import Frame, FrameSink, Producer
from ..hardware.producer import HardwareConfig, HardwareCounters, HardwareProducer


def simulation_layout(side: str) -> dict[str, np.ndarray]:
    """The simulation's pad layout as a fallback for fingers whose format declares no placement:
    per finger (P, 7) taxel poses in tip_sensor_frame (synthetic sensing locations, not measured)."""
    from ..sim.taxels import taxel_poses_in_distal  # MuJoCo only when a fallback is asked for

    return dict(zip(FINGERS, taxel_poses_in_distal(side)))


def simulation_forces(side: str, scenario: str = "press", *, seed: int = 0, duration_s: float | None = None,
                      playback_file=None, playback_rate: float = 100.0, contact_model: str = "distributed",
                      sensor_model=None) -> Iterator[np.ndarray]:
    """The simulation's per-tick taxel forces (176, 3) [N, taxel axes, force on the taxel] for one
    scenario run, 100 Hz of simulation time — exactly what the simulated producer publishes (with
    the same `contact_model` and optional `sensor_model`, so the emulated pads sense what the
    simulated ones do). Stops at the scenario's end or after `duration_s` of simulation time."""
    from ..sim.producer import scenario_frames
    from ..sim.scenarios import FRAME_S, make_scenario

    sc = make_scenario(scenario, playback_file=playback_file, playback_rate=playback_rate)
    sc.contact_model, sc.sensor_model = contact_model, sensor_model
    frames = None if duration_s is None else int(round(duration_s / FRAME_S))
    for reading in scenario_frames(sc, sc.build(side, seed), max_frames=frames):
        yield reading.taxel_forces


class EmulatedHandProducer(Producer):
    """The hardware producer reading an emulated hand (`SdkFingertipDevice(EmulatedHand2)`) fed
    tick by tick from `forces` ((N, 3) [N] per tick). On demand: each `next_frame()` emits one
    tick (period 1 / the emulator's rate) unless an assembled tick is still waiting.
    `before_tick(emulator, t)` runs before tick k is emitted, t = k × period [s] (fault injection)."""

    def __init__(self, emulator, hardware: HardwareProducer, forces: Iterator[np.ndarray], *,
                 before_tick: Callable[[object, float], None] | None = None):
        self.emulator, self.hardware = emulator, hardware
        self.collection_id, self.metadata = hardware.collection_id, hardware.metadata
        self.period_s = 1.0 / emulator.rate_hz
        self._forces, self._before_tick = forces, before_tick
        self.ticks = 0

    @classmethod
    def from_config(cls, emulator, config: HardwareConfig, forces: Iterator[np.ndarray], **kwargs) -> "EmulatedHandProducer":
        from ..hardware.device import SdkFingertipDevice

        return cls(emulator, HardwareProducer(SdkFingertipDevice(emulator), config), forces, **kwargs)

    def next_frame(self) -> Frame | None:
        if self.hardware.frames_waiting():
            return self.hardware.next_frame()
        forces = next(self._forces, None)
        if forces is None:
            self.finished = True
            return None
        if self._before_tick is not None:
            self._before_tick(self.emulator, self.ticks * self.period_s)
        self.emulator.emit(forces)
        self.ticks += 1
        return self.hardware.next_frame()

    def on_published(self, frame, sequence, timestamp) -> None:
        self.hardware.on_published(frame, sequence, timestamp)

    def recording_outputs(self, recorder) -> list[FrameSink]:
        return self.hardware.recording_outputs(recorder)

    def file_metadata(self) -> dict[str, str]:
        return {**self.hardware.file_metadata(), "producer_kind": "hardware-emulated"}

    @property
    def counters(self) -> HardwareCounters:
        return self.hardware.counters

    def close(self) -> None:
        self.hardware.close()
