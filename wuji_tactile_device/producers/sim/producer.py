"""The simulated producer: 1 ms physics, every 10 steps `mj_forward` + read, one frame per 10 ms.

`scenario_frames` is THE stepping loop of a scenario (control → step → read → observe), used by
`SimProducer` (the `Producer` the run loop drives) and by the emulated hand
(`producers.emulated.simulation_forces`). Timestamps of a `SimProducer` frame: the device clock is
the simulation time [ns]; the sample time is the monotonic clock when the producer started plus
the simulation time (paced to real time it tracks the wall clock; as fast as possible it runs
ahead of it).
"""
from __future__ import annotations

import time
from typing import Callable, Iterator

import numpy as np

from ...streams.publisher import TactilePublisher
from ..base import Frame, FrameSink, Producer, ProducerRunner
from .contact_forces import TactileReading
from .hand_sim import HandSimulation
from .layout_metadata import sim_metadata
from .scenarios import FRAME_S, Scenario, ScenarioResult

FrameCallback = Callable[[HandSimulation, TactileReading], None]


def scenario_frames(scenario: Scenario, sim: HandSimulation, *, images: bool = False,
                    max_frames: int | None = None) -> Iterator[TactileReading]:
    """Step `sim` through `scenario` (built on it) one 10 ms frame at a time, yielding each
    frame's reading after the scenario observed it; stops at the scenario's end or `max_frames`."""
    frames = scenario.num_frames if max_frames is None else min(max_frames, scenario.num_frames)
    for i in range(frames):
        t = i * FRAME_S
        scenario.control(sim, t)
        sim.step_frame()
        reading = sim.read(images=images)
        scenario.observe(sim, reading, t + FRAME_S)
        yield reading


class SimProducer(Producer):
    """One scenario on the simulated hand as a `Producer` (on demand, one frame per 10 ms of
    simulation time). `sim` and `reading` are the simulation and its last reading; `result()`
    gives the scenario's checks on the frames stepped so far."""

    period_s = FRAME_S

    def __init__(self, scenario: Scenario, *, side: str = "right", seed: int = 0, collection_id: str | None = None,
                 images: bool = False, max_frames: int | None = None):
        self.scenario, self.side, self.seed = scenario, side, seed
        self.collection_id = collection_id or f"tactile/{side}"
        self.metadata = sim_metadata(side)
        self.sim = scenario.build(side, seed)
        self.num_frames = scenario.num_frames if max_frames is None else min(max_frames, scenario.num_frames)
        self.frames = 0
        self.reading: TactileReading | None = None
        self._steps = scenario_frames(scenario, self.sim, images=images, max_frames=self.num_frames)
        self._start_ns = time.monotonic_ns()
        self._frame = Frame(np.zeros((self.metadata.num_taxels, 3), np.float32), 0)
        self.finished = self.num_frames == 0

    def next_frame(self) -> Frame | None:
        reading = next(self._steps, None)
        if reading is None:
            self.finished = True
            return None
        self.reading = reading
        self.frames += 1
        self.finished = self.frames >= self.num_frames
        frame, t = self._frame, self.sim.time_ns
        frame.forces, frame.sample_time_ns, frame.device_time_ns = reading.taxel_forces, self._start_ns + t, t
        return frame

    def file_metadata(self) -> dict[str, str]:
        return {"producer_kind": "sim", "hand_side": self.side, "scenario": self.scenario.name,
                "seed": str(self.seed)}

    def result(self) -> ScenarioResult:
        return ScenarioResult(self.scenario.name, self.side, self.frames, self.scenario.checks())


class _Callback(FrameSink):
    def __init__(self, producer: SimProducer, on_frame: FrameCallback):
        self._producer, self._on_frame = producer, on_frame

    def on_frame(self, frame, sequence, timestamp) -> None:
        self._on_frame(self._producer.sim, self._producer.reading)


def run_scenario(scenario: Scenario, *, side: str = "right", seed: int = 0,
                 publisher: TactilePublisher | None = None, images: bool = False, realtime: bool = False,
                 on_frame: FrameCallback | None = None, progress=None,
                 max_frames: int | None = None) -> ScenarioResult:
    """Run `scenario` to its end (or `max_frames`) on the run loop; returns its checks.

    `publisher`: publish every frame through it (its collection; None = publish nothing);
    `on_frame(sim, reading)` runs after every frame; `progress` is anything with `update(n)`."""
    producer = SimProducer(scenario, side=side, seed=seed, images=images, max_frames=max_frames,
                           collection_id=None if publisher is None else publisher.collection_id)
    sinks = [] if on_frame is None else [_Callback(producer, on_frame)]
    runner = ProducerRunner(producer, publisher=publisher, sinks=sinks, speed=1.0 if realtime else None,
                            progress=progress)
    runner.run(handle_signals=False)
    return producer.result()
