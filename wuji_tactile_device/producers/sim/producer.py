"""The simulated producer: 1 ms physics, every 10 steps `mj_forward` + read, one frame per 10 ms.

`scenario_frames` is THE stepping loop of a scenario (control → step → read → observe), used by
`SimProducer` (the `Producer` the run loop drives) and by the emulated hand
(`producers.emulated.simulation_forces`).

Timestamps of a `SimProducer` frame: the device clock is the simulation time [ns]; the sample
time is the simulated clock on the monotonic time line, `start_ns + simulation time`, where
`start_ns` is one frame period before the first frame was asked for (so frame k carries the
moment its computation began when paced to real time; as fast as possible it runs ahead of the
wall clock). By default (`log_clock="simulated"`) the available time — and so a recording's log
time — is that simulated instant too: a 13 s press lasts 13 s in every tool (replay, echo,
Foxglove), however fast it was computed. `log_clock="wall"` keeps the real publication instants
as available and log times.

Hand motion: the producer declares the hand's 26 OpenXR joint poses in the simulation world as
side data (`extras_provided`: `EXTRA_HAND_JOINT_POSES` for a view, `EXTRA_HAND_POSES` for the
recording, ≈ 60 µs per frame, `SimHandPoses`), computed when wanted (`hand_poses=True`, or
`extras_wanted` set by the run function when the run is recorded or viewed); the recording
(`recording.side_channels`) writes them on Isaac Teleop's hand channels (`<hands_name>/left_hand`, `<hands_name>/right_hand`,
`core.HandPoseRecord`) with the tactile record's exact `DeviceDataTimestamp` and log time, so
Isaac Teleop's `HandsSource` replays the simulated hand next to the forces. With `images=True`
the pad force images are in `Frame.extras[EXTRA_FORCE_IMAGES]`. Every frame of the distributed
contact model carries the pads' slip velocity and stuck fraction in `Frame.extras[EXTRA_PAD_SLIP]`.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import numpy as np

from ...contract.geometry import matrix_to_quat
from ...hands.openxr_pose import JOINT_RADIUS_M
from ...contract.side_data import DEFAULT_HAND_BASE_NAME, EXTRA_HAND_POSES, EXTRA_PAD_SLIP, HandChannels, HandPoses
from ..base import EXTRA_FORCE_IMAGES, EXTRA_HAND_JOINT_POSES, EXTRA_OBJECT_GEOMS, Frame, Producer
from .contact_forces import TactileReading
from .hand_pose import SIM_BASE_SPACE, SimHandPoses
from .hand_sim import HandSimulation
from .layout_metadata import sim_metadata
from .scenarios import FRAME_S, Scenario, ScenarioResult

#: `Frame.extras[EXTRA_PAD_SLIP]` (distributed contact model; `contract.side_data`): (5, 4) per
#: pad, thumb → pinky, the pad's slip velocity [m/s] in its pad frame (x, y, z: the object's
#: tangential velocity relative to the pad while the footprint slides as a whole, 0 while any of it
#: sticks) and the stuck fraction of its footprint's area [1] (1 without contact). Overwritten in
#: place every frame: copy to keep. Declared (and so recorded) only with the distributed model.

FrameCallback = Callable[[HandSimulation, TactileReading], None]
#: `log_clock` values: log recordings at the simulated clock (default) or at the wall clock.
LOG_CLOCKS = ("simulated", "wall")


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
    gives the scenario's checks on the frames stepped so far.

    `log_clock`: "simulated" (available and log times = start + simulated time) or "wall" (the
    real publication time). `start_ns`: monotonic time [ns] of simulated t = 0 (None: one frame
    period before the first frame is asked for, i.e. after the publisher announced the layout).
    `hand_poses`: put the hand's joint poses in every frame's extras (also switched on by
    recording or viewing the run). `hands_name`: the Isaac Teleop `HandsSource` name the recorded
    hand channels are for."""

    period_s = FRAME_S
    extras_provided = frozenset({EXTRA_HAND_JOINT_POSES, EXTRA_HAND_POSES, EXTRA_FORCE_IMAGES, EXTRA_OBJECT_GEOMS})

    def __init__(self, scenario: Scenario, *, side: str = "right", seed: int = 0, collection_id: str | None = None,
                 images: bool = False, max_frames: int | None = None, log_clock: str = "simulated",
                 start_ns: int | None = None, hand_poses: bool = False, hands_name: str = DEFAULT_HAND_BASE_NAME):
        if log_clock not in LOG_CLOCKS:
            raise ValueError(f"log_clock must be one of {', '.join(LOG_CLOCKS)}, got {log_clock!r}")
        self.scenario, self.side, self.seed = scenario, side, seed
        self.collection_id = collection_id or f"tactile/{side}"
        self.metadata = sim_metadata(side)
        self.log_clock = log_clock
        self.hands_name = hands_name
        self.sim = scenario.build(side, seed)
        if self.sim.contacts.distributed is not None:     # the slip output exists: declare it
            self.extras_provided = frozenset(type(self).extras_provided | {EXTRA_PAD_SLIP})
        self.num_frames = scenario.num_frames if max_frames is None else min(max_frames, scenario.num_frames)
        self.frames = 0
        self.reading: TactileReading | None = None
        self._images = images
        self._steps = scenario_frames(scenario, self.sim, images=images, max_frames=self.num_frames)
        self._start_ns = start_ns
        self._frame = Frame(np.zeros((self.metadata.num_taxels, 3), np.float32), 0, extras={})
        self._slip = np.zeros((5, 4))
        self._hand_poses: SimHandPoses | None = None
        self._objects: SimObjects | None = None
        #: Isaac Teleop's hand channels the recording writes the poses on (simulation world).
        self.hand_channels = HandChannels(hands_name, SIM_BASE_SPACE)
        if hand_poses:
            self.enable_hand_poses()
        self.finished = self.num_frames == 0

    def enable_hand_poses(self) -> None:
        """From the next frame on, carry the hand's joint poses (both keys) and the scenario's
        objects in `Frame.extras`."""
        self.extras_wanted = frozenset(self.extras_wanted | {EXTRA_HAND_JOINT_POSES, EXTRA_HAND_POSES,
                                                             EXTRA_OBJECT_GEOMS})

    def next_frame(self) -> Frame | None:
        if self._start_ns is None:
            self._start_ns = time.monotonic_ns() - int(round(FRAME_S * 1e9))
        reading = next(self._steps, None)
        if reading is None:
            self.finished = True
            return None
        self.reading = reading
        self.frames += 1
        self.finished = self.frames >= self.num_frames
        frame, t = self._frame, self.sim.time_ns
        assert frame.extras is not None, "made with the frame in __init__"
        frame.forces, frame.sample_time_ns, frame.device_time_ns = reading.taxel_forces, self._start_ns + t, t
        frame.available_time_ns = frame.sample_time_ns if self.log_clock == "simulated" else None
        wanted = self.extras_wanted
        if EXTRA_HAND_JOINT_POSES in wanted or EXTRA_HAND_POSES in wanted:
            if self._hand_poses is None:
                self._hand_poses = SimHandPoses(self.sim)
            poses = self._hand_poses.poses()
            frame.extras[EXTRA_HAND_JOINT_POSES] = poses
            frame.extras[EXTRA_HAND_POSES] = HandPoses({self.side: poses}, True, JOINT_RADIUS_M)
        if EXTRA_OBJECT_GEOMS in wanted:
            if self._objects is None:
                self._objects = SimObjects(self.sim)
            frame.extras[EXTRA_OBJECT_GEOMS] = self._objects.geoms()
        if self._images:
            frame.extras[EXTRA_FORCE_IMAGES] = reading.images
        if reading.pad_slip_velocity is not None:
            slip = self._slip
            slip[:, :3], slip[:, 3] = reading.pad_slip_velocity, reading.pad_stuck_fraction
            frame.extras[EXTRA_PAD_SLIP] = slip
        return frame

    def file_metadata(self) -> dict[str, str]:
        return {"producer_kind": "sim", "hand_side": self.side, "scenario": self.scenario.name,
                "seed": str(self.seed), "hand_channels": self.hands_name,
                "log_clock": ("simulated: available = log = sample time = start + simulated time"
                              if self.log_clock == "simulated" else "wall: available = log time = when published")}

    def result(self) -> ScenarioResult:
        return ScenarioResult(self.scenario.name, self.side, self.frames, self.scenario.checks())


class SimObjects:
    """The scenario's objects for the view (`Frame.extras[EXTRA_OBJECT_GEOMS]`): every collidable
    box/sphere/cylinder/capsule/ellipsoid geom outside the hand (not the floor plane), at its
    current pose in the simulation world (the hand joint poses' base space)."""

    _KINDS = {2: "sphere", 3: "capsule", 4: "ellipsoid", 5: "cylinder", 6: "box"}  # mjtGeom values

    def __init__(self, sim):
        from .hand_pose import _descends

        m = sim.model
        self._sim = sim
        self._ids = np.array([g for g in range(m.ngeom) if int(m.geom_type[g]) in self._KINDS
                              and (m.geom_contype[g] or m.geom_conaffinity[g])
                              and not _descends(m, int(m.geom_bodyid[g]), sim.wrist_body)], dtype=np.intp)
        self._kinds = [self._KINDS[int(m.geom_type[g])] for g in self._ids]
        self._names = [m.geom(int(g)).name or f"geom {int(g)}" for g in self._ids]

    def geoms(self) -> dict:
        """{"kinds", "sizes" (K, 3) [m, MuJoCo geom size], "poses" (K, 7) [m, xyzw, world], "names"}."""
        d, m = self._sim.data, self._sim.model
        poses = np.concatenate([d.geom_xpos[self._ids], matrix_to_quat(d.geom_xmat[self._ids].reshape(-1, 3, 3))], axis=1)
        return {"kinds": self._kinds, "sizes": m.geom_size[self._ids].copy(), "poses": poses, "names": self._names}
