"""Simulation runs in one call, on the one run function (`run.run`).

`record_simulation` is `wuji-tactile sim --record FILE --compression none` as a function: it
drives a `SimProducer` on an in-process bus and records the tactile collection plus the
simulated hand's joint poses on Isaac Teleop's hand channels (the producer's side topics), both
with the same `DeviceDataTimestamp` per frame and logged on the simulated time line, so a
`TeleopSession` in replay mode sees hand frame k next to tactile frame k and the file plays for
as long as the simulation ran. The file is uncompressed by default (`ISAAC_TELEOP_COMPRESSION`),
the only chunk encoding Isaac Teleop 1.5's `ReplaySession` reads.

`run_scenario` runs a scenario to its end for its checks (optionally publishing on a transport).
"""
from __future__ import annotations

import os
from collections.abc import Callable

from ..contract.records import DeviceDataTimestamp
from ..producers.base import FrameSink
from ..producers.sim.hand_sim import HandSimulation
from ..producers.sim.producer import SimProducer
from ..producers.sim.scenarios import Scenario, ScenarioResult
from ..recording.hand_channels import DEFAULT_HAND_BASE_NAME, ISAAC_TELEOP_COMPRESSION
from ..streams.base import Transport
from . import RecordOptions, run

FrameCallback = Callable[[HandSimulation, object, DeviceDataTimestamp], None]
#: `run_scenario`'s per-frame callback: (the simulation, its last reading).
ScenarioCallback = Callable[[HandSimulation, object], None]


def record_simulation(path: str | os.PathLike, scenario: Scenario, *, side: str = "right", seed: int = 0,
                      max_frames: int | None = None, collection_id: str | None = None,
                      hands_name: str = DEFAULT_HAND_BASE_NAME, compression: str | None = None,
                      overwrite: bool = False, on_frame: FrameCallback | None = None, profile: str | None = None,
                      log_time_base: str = "epoch") -> int:
    """Run `scenario` (at most `max_frames` frames) as fast as possible and record it to `path`;
    returns the frame count. `on_frame(sim, reading, timestamp)` runs after each recorded frame
    with the frame's published timestamp (e.g. to keep the simulator's ground truth). `profile`
    (`recording.profiles`): "isaac" (uncompressed, what Isaac Teleop's replay reads) by default,
    "default" when a compression is given."""
    if profile is None:
        profile = "isaac" if compression in (None, ISAAC_TELEOP_COMPRESSION) else "default"
    producer = SimProducer(scenario, side=side, seed=seed, collection_id=collection_id, max_frames=max_frames,
                           hands_name=hands_name)
    sinks = [] if on_frame is None else [_Callback(producer, lambda sim, reading, ts: on_frame(sim, reading, ts))]
    run([producer], transport="inproc", record=RecordOptions(path, overwrite=overwrite, compression=compression,
                                                             profile=profile, log_time_base=log_time_base),
        sinks=sinks, handle_signals=False)
    return producer.frames


def run_scenario(scenario: Scenario, *, side: str = "right", seed: int = 0, transport: Transport | None = None,
                 collection_id: str | None = None, images: bool = False, realtime: bool = False,
                 on_frame: ScenarioCallback | None = None, progress=None,
                 max_frames: int | None = None) -> ScenarioResult:
    """Run `scenario` to its end (or `max_frames`) on the run loop; returns its checks.

    `transport`: publish every frame on it (collection `collection_id`, default `tactile/<side>`;
    it stays open for the caller); None: an in-process bus nobody reads (only the checks count).
    `on_frame(sim, reading)` runs after every frame; `progress` is anything with `update(n)`."""
    producer = SimProducer(scenario, side=side, seed=seed, images=images, max_frames=max_frames,
                           collection_id=collection_id)
    sinks = [] if on_frame is None else [_Callback(producer, lambda sim, reading, _ts: on_frame(sim, reading))]
    run([producer], transport=transport if transport is not None else "inproc", sinks=sinks,
        speed=1.0 if realtime else None, progress=progress, handle_signals=False)
    return producer.result()


class _Callback(FrameSink):
    def __init__(self, producer: SimProducer, call: Callable[[HandSimulation, object, DeviceDataTimestamp], None]):
        self._producer, self._call = producer, call

    def on_frame(self, frame, sequence, timestamp) -> None:
        self._call(self._producer.sim, self._producer.reading, timestamp)
