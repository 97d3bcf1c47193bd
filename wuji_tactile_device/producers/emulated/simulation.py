"""What the emulated hand borrows from the simulation: its pad layout (a fallback for device
formats that declare no placement), its per-tick taxel forces (what the emulated device
"senses") and joint angles (what its joint encoders report); and `EmulatedHandProducer`, the
whole emulated hardware path as one `Producer` (simulation → emulated hand bytes → hardware
producer). The hardware producer itself never
imports the simulation; this module does."""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ...contract.joints import FINGERS
from ..base import Frame, FrameSink, Producer
from ..hardware.producer import HardwareConfig, HardwareCounters, HardwareProducer

if TYPE_CHECKING:
    from .emulator import EmulatedHand2


def simulation_layout(side: str) -> dict[str, np.ndarray]:
    """The simulation's pad layout as a fallback for fingers whose format declares no placement:
    per finger (P, 7) taxel poses in tip_sensor_frame (synthetic sensing locations, not measured)."""
    from ..sim.taxels import taxel_poses_in_distal  # MuJoCo only when a fallback is asked for

    return dict(zip(FINGERS, taxel_poses_in_distal(side), strict=True))


class SimulationTick(NamedTuple):
    """One simulated frame as the emulated hand senses it."""

    forces: np.ndarray        # (176, 3) [N], taxel axes, force on the taxel
    joint_angles: np.ndarray  # (20,) [rad], firmware order: the simulated joints' positions (qpos)


def simulation_ticks(side: str, scenario: str = "press", *, seed: int = 0, duration_s: float | None = None,
                     playback_file=None, playback_rate: float = 100.0, contact_model: str = "distributed",
                     sensor_model=None, on_frame: Callable[[Any, Any], None] | None = None) -> Iterator[SimulationTick]:
    """The simulation's per-tick taxel forces and joint angles for one scenario run, 100 Hz of
    simulation time — the forces exactly what the simulated producer publishes (with the same
    `contact_model` and optional `sensor_model`, so the emulated pads sense what the simulated
    ones do), the angles the state its hand-pose channels are computed from. Stops at the
    scenario's end or after `duration_s` of simulation time. `on_frame(sim, reading)` runs for
    every frame before it is yielded (e.g. to keep the simulator's own joint poses)."""
    from ..sim.producer import scenario_frames
    from ..sim.scenarios import FRAME_S, make_scenario

    sc = make_scenario(scenario, playback_file=playback_file, playback_rate=playback_rate)
    sc.contact_model, sc.sensor_model = contact_model, sensor_model
    frames = None if duration_s is None else int(round(duration_s / FRAME_S))
    sim = sc.build(side, seed)
    for reading in scenario_frames(sc, sim, max_frames=frames):
        if on_frame is not None:
            on_frame(sim, reading)
        yield SimulationTick(reading.taxel_forces, sim.joint_angles())


def simulation_forces(side: str, scenario: str = "press", *, seed: int = 0, duration_s: float | None = None,
                      playback_file=None, playback_rate: float = 100.0, contact_model: str = "distributed",
                      sensor_model=None) -> Iterator[np.ndarray]:
    """The simulation's per-tick taxel forces (176, 3) [N, taxel axes, force on the taxel] only
    (`simulation_ticks` without the joint angles)."""
    for tick in simulation_ticks(side, scenario, seed=seed, duration_s=duration_s, playback_file=playback_file,
                                 playback_rate=playback_rate, contact_model=contact_model, sensor_model=sensor_model):
        yield tick.forces


class EmulatedHandProducer(Producer):
    """The hardware producer reading an emulated hand (`SdkFingertipDevice(EmulatedHand2)`) fed
    tick by tick from `forces`: per tick an (N, 3) [N] array, or a `SimulationTick` (forces and
    the joint angles the hand then reports — `simulation_ticks`). On demand: each `next_frame()`
    emits one tick (period 1 / the emulator's rate) unless an assembled tick is still waiting.
    `before_tick(emulator, t)` runs before tick k is emitted, t = k × period [s] (fault injection).

    Time line (like the simulation's): the hardware path runs on the scenario's clock — tick k
    arrives at `start_ns + k × period` of the local monotonic time line, the device and the
    hardware producer share that clock (staleness, backoff, sample times) and each frame is
    available at its tick's instant — so a run computed as fast as possible (`hw --emulate
    --fast`) is recorded with the scenario's duration and rate, not the wall clock's."""

    def __init__(self, emulator, hardware: HardwareProducer, forces: Iterator[np.ndarray | SimulationTick], *,
                 before_tick: Callable[[EmulatedHand2, float], None] | None = None, start_ns: int | None = None):
        self.emulator, self.hardware = emulator, hardware
        self.collection_id, self.metadata = hardware.collection_id, hardware.metadata
        self.period_s: float = 1.0 / emulator.rate_hz
        self._forces, self._before_tick = forces, before_tick
        self.ticks = 0
        self._period_ns = int(round(self.period_s * 1e9))
        self._start_ns = time.monotonic_ns() if start_ns is None else int(start_ns)
        # the scenario clock: the device stamps arrivals with it, the hardware producer checks on it
        hardware.clock_ns = self.scenario_clock_ns
        if hasattr(hardware.device, "clock_ns"):
            hardware.device.clock_ns = self.scenario_clock_ns

    def scenario_clock_ns(self) -> int:
        """The scenario's instant of the last emitted tick on the local time line [ns]."""
        return self._start_ns + self.ticks * self._period_ns

    @classmethod
    def from_config(cls, emulator, config: HardwareConfig, forces: Iterator[np.ndarray | SimulationTick],
                    **kwargs) -> EmulatedHandProducer:
        from ..hardware.device import SdkFingertipDevice

        return cls(emulator, HardwareProducer(SdkFingertipDevice(emulator), config), forces, **kwargs)

    def next_frame(self) -> Frame | None:
        if self.hardware.frames_waiting():
            return self._on_scenario_time(self.hardware.next_frame())
        item = next(self._forces, None)
        if item is None:
            self.finished = True
            return None
        if self._before_tick is not None:
            self._before_tick(self.emulator, self.ticks * self.period_s)
        if isinstance(item, SimulationTick):
            self.emulator.emit(item.forces, joint_angles=item.joint_angles)
        else:
            self.emulator.emit(item)
        self.ticks += 1
        return self._on_scenario_time(self.hardware.next_frame())

    def _on_scenario_time(self, frame: Frame | None) -> Frame | None:
        if frame is not None:
            frame.available_time_ns = self.scenario_clock_ns()
        return frame

    def on_published(self, frame, sequence, timestamp) -> None:
        self.hardware.on_published(frame, sequence, timestamp)

    # the hardware producer's side data and device topics are this producer's
    @property
    def extras_provided(self) -> frozenset[str]:  # type: ignore[override]
        return self.hardware.extras_provided

    @property
    def extras_wanted(self) -> frozenset[str]:
        return self.hardware.extras_wanted

    @extras_wanted.setter
    def extras_wanted(self, keys: frozenset[str]) -> None:
        self.hardware.extras_wanted = frozenset(keys)

    @property
    def hand_channels(self):
        return self.hardware.hand_channels

    def device_topics(self, recorder) -> list[FrameSink]:
        return self.hardware.device_topics(recorder)

    def file_metadata(self) -> dict[str, str]:
        return {**self.hardware.file_metadata(), "producer_kind": "hardware-emulated"}

    @property
    def counters(self) -> HardwareCounters:
        return self.hardware.counters

    def close(self) -> None:
        self.hardware.close()
