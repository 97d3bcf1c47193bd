"""Record a simulation run with Isaac Teleop's replay profile, in one call.

`record_simulation` is `wuji-tactile sim --record FILE --compression none` as a function: the
run loop (`ProducerRunner`) drives a `SimProducer` on an in-process bus and records the tactile
collection plus the simulated hand's joint poses on Isaac Teleop's hand channels (the producer's
`recording_outputs`), both with the same `DeviceDataTimestamp` per frame and logged on the
simulated clock, so a `TeleopSession` in replay mode sees hand frame k next to tactile frame k
and the file plays for as long as the simulation ran. The file is uncompressed by default
(`ISAAC_TELEOP_COMPRESSION`), the only chunk encoding Isaac Teleop 1.5's `ReplaySession` reads.
"""
from __future__ import annotations

import os
from typing import Callable

from ..contract.records import DeviceDataTimestamp
from ..producers.base import FrameSink, ProducerRunner
from ..producers.sim.hand_sim import HandSimulation
from ..producers.sim.producer import SimProducer
from ..producers.sim.scenarios import Scenario
from ..recording.hand_channels import DEFAULT_HAND_BASE_NAME, ISAAC_TELEOP_COMPRESSION
from ..recording.recorder import McapRecorder
from ..streams.inproc import InProcessBus

FrameCallback = Callable[[HandSimulation, object, DeviceDataTimestamp], None]


def record_simulation(path: str | os.PathLike, scenario: Scenario, *, side: str = "right", seed: int = 0,
                      max_frames: int | None = None, collection_id: str | None = None,
                      hands_name: str = DEFAULT_HAND_BASE_NAME, compression: str = ISAAC_TELEOP_COMPRESSION,
                      overwrite: bool = False, on_frame: FrameCallback | None = None) -> int:
    """Run `scenario` (at most `max_frames` frames) as fast as possible and record it to `path`;
    returns the frame count. `on_frame(sim, reading, timestamp)` runs after each recorded frame
    with the frame's published timestamp (e.g. to keep the simulator's ground truth)."""
    producer = SimProducer(scenario, side=side, seed=seed, collection_id=collection_id, max_frames=max_frames,
                           hands_name=hands_name)
    sinks = [] if on_frame is None else [_Callback(producer, on_frame)]
    bus = InProcessBus()
    with McapRecorder(path, compression=compression, overwrite=overwrite,
                      file_metadata=producer.file_metadata()) as recorder:
        with ProducerRunner(producer, bus, recorder=recorder, sinks=sinks) as runner:
            runner.run(handle_signals=False)
    producer.close()
    return producer.frames


class _Callback(FrameSink):
    def __init__(self, producer: SimProducer, on_frame: FrameCallback):
        self._producer, self._on_frame = producer, on_frame

    def on_frame(self, frame, sequence, timestamp) -> None:
        self._on_frame(self._producer.sim, self._producer.reading, timestamp)
