"""Record a simulation run as Isaac Teleop replays it: tactile collection + the hand's joint poses.

`record_simulation` runs a scenario (`producers.sim`) and writes, per 10 ms frame, the tactile
force record and both of Isaac Teleop's hand channels (`recording.hand_channels`) with the SAME
`DeviceDataTimestamp`, so a `TeleopSession` in replay mode sees hand frame k next to tactile frame
k. Log time is the simulated clock (`start_ns + simulated time`): the file plays for as long as
the simulation ran, however fast it was computed. The file is uncompressed by default
(`ISAAC_TELEOP_COMPRESSION`), the only chunk encoding Isaac Teleop 1.5's `ReplaySession` reads.

This is the library side of the simulator's hand recording; the CLI's run loop wires the same
three calls (`HandPoseChannels(...)`, `sim_hand_joint_poses(sim)`, `HandPoseChannels.write`).
"""
from __future__ import annotations

import os
import time
from typing import Callable

from ..contract.metadata import encode_metadata_record
from ..contract.naming import Stream
from ..contract.records import DeviceDataTimestamp, encode_tactile_record
from ..producers.sim.hand_pose import SIM_BASE_SPACE, sim_hand_joint_poses
from ..producers.sim.hand_sim import HandSimulation
from ..producers.sim.layout_metadata import sim_metadata
from ..producers.sim.scenarios import FRAME_S, Scenario
from ..recording.hand_channels import DEFAULT_HAND_BASE_NAME, ISAAC_TELEOP_COMPRESSION, HandPoseChannels
from ..recording.recorder import McapRecorder
from ..hands.openxr_pose import JOINT_RADIUS_M

FrameCallback = Callable[[HandSimulation, object, DeviceDataTimestamp], None]


def record_simulation(path: str | os.PathLike, scenario: Scenario, *, side: str = "right", seed: int = 0,
                      max_frames: int | None = None, collection_id: str | None = None,
                      hands_name: str = DEFAULT_HAND_BASE_NAME, start_ns: int | None = None,
                      compression: str = ISAAC_TELEOP_COMPRESSION, overwrite: bool = False,
                      on_frame: FrameCallback | None = None) -> int:
    """Run `scenario` (at most `max_frames` frames) and record it to `path`; returns the frame
    count. `start_ns`: monotonic time of simulated t = 0 (default: now). `on_frame(sim, reading,
    timestamp)` runs after each recorded frame (e.g. to keep the simulator's ground truth)."""
    cid = collection_id or f"tactile/{side}"
    sim = scenario.build(side, seed)
    frames = scenario.num_frames if max_frames is None else min(max_frames, scenario.num_frames)
    t0 = time.monotonic_ns() if start_ns is None else int(start_ns)
    session = 1
    with McapRecorder(path, compression=compression, overwrite=overwrite,
                      file_metadata={"producer_kind": "sim", "hand_side": side, "hand_channels": hands_name,
                                     "log_clock": "simulated"}) as recorder:
        hands = HandPoseChannels(recorder, hands_name, base_space=SIM_BASE_SPACE)
        ts0 = DeviceDataTimestamp(t0, t0, 0)
        recorder.write(cid, Stream.METADATA, encode_metadata_record(sim_metadata(side), ts0), session, 0)
        for i in range(frames):
            t = i * FRAME_S
            scenario.control(sim, t)
            sim.step_frame()
            reading = sim.read()
            scenario.observe(sim, reading, t + FRAME_S)
            ts = DeviceDataTimestamp(t0 + sim.time_ns, t0 + sim.time_ns, sim.time_ns)
            recorder.write(cid, Stream.DATA, encode_tactile_record(reading.taxel_forces, ts), session, i)
            hands.write({side: sim_hand_joint_poses(sim)}, ts, radius=JOINT_RADIUS_M)
            if on_frame is not None:
                on_frame(sim, reading, ts)
    return frames
