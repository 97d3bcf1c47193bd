"""`HandSimulation`: one compiled hand + objects, stepped in 10 ms frames of ten 1 ms steps.

Each frame: set targets → `mj_step` × 10 → `mj_forward` (makes contacts and forces consistent
with the integrated state; does not advance time) → read the contact forces.
"""
from __future__ import annotations

from collections.abc import Iterable

import mujoco
import numpy as np

from ...errors import ProducerError
from ...hands.wuji_hand2 import SEGMENT_IN_DISTAL, WRIST_TO_OPENXR, hand_kinematics, matrix_to_pose
from .compliance import add_pad_pairs, set_pad_stiffness
from .contact_forces import ContactForceModel, TactileReading, contact_frame_forces
from .sensor_model import SensorModel
from .model import LIFT_JOINT, distal_body_ids, hand_actuator_ids, hand_qpos_adr

STEPS_PER_FRAME = 10  # 1 ms physics, 100 Hz output


class HandSimulation:
    """A compiled simulated hand. `object_geoms`: names of the geoms whose contacts the pads
    measure (the chosen object). `contact_model`: how a pad's force spreads over its taxels,
    "distributed" (footprint from the contact geometry; default) or "gaussian" (fixed blob).
    `sensor_model`: a `SensorModel` applied to the taxel forces of each frame (None: ideal).
    `layer_compliance`: the pads' contacts with the object get the elastomer layer's compliance
    (`compliance.py`: penetration = the layer's indentation, bounded at its thickness); False:
    MuJoCo's default soft contact (the behaviour before)."""

    def __init__(self, side: str, spec: mujoco.MjSpec, object_geoms: Iterable[str], *,
                 contact_model: str = "distributed", sensor_model: SensorModel | None = None,
                 layer_compliance: bool = True) -> None:
        self.side = side
        names = list(object_geoms)
        if layer_compliance:
            add_pad_pairs(spec, side, names)
        self.model = spec.compile()
        if layer_compliance:
            set_pad_stiffness(self.model, side)
        self.data = mujoco.MjData(self.model)
        try:
            ids = [self.model.geom(n).id for n in names]
        except KeyError as exc:
            raise ProducerError(f"sim: object geom {exc} not in the model") from None
        self.object_geom_ids = np.array(ids, dtype=np.int64)
        self.contacts = ContactForceModel(self.model, side, ids, contact_model=contact_model)
        self.actuators = hand_actuator_ids(self.model, side)
        self.qpos_adr = hand_qpos_adr(self.model, side)
        self.lift_actuator = self.model.actuator(LIFT_JOINT).id
        self.lift_qpos = self.model.jnt_qposadr[self.model.joint(LIFT_JOINT).id]
        self.wrist_body = self.model.body(hand_kinematics(side).wrist_body).id
        self.distal_bodies = distal_body_ids(self.model, side)
        self.frames = 0
        self.sensor_model = sensor_model
        self._sensed: tuple[int, np.ndarray] | None = None   # (frame, measured forces) of the last read
        mujoco.mj_forward(self.model, self.data)

    # -- control ----------------------------------------------------------------------------------
    def set_joint_targets(self, q: np.ndarray) -> None:
        """Position-servo targets of the 20 hand joints [rad], firmware order (clipped to range)."""
        self.data.ctrl[self.actuators] = q

    def set_lift(self, z: float) -> None:
        """Target height of the hand mount's vertical slide [m]."""
        self.data.ctrl[self.lift_actuator] = z

    def step_frame(self) -> None:
        """Advance one output frame: ten 1 ms steps, then `mj_forward`."""
        m, d = self.model, self.data
        for _ in range(STEPS_PER_FRAME):
            mujoco.mj_step(m, d)
        mujoco.mj_forward(m, d)
        self.frames += 1

    # -- readout ----------------------------------------------------------------------------------
    @property
    def time_ns(self) -> int:
        """Simulation time [ns] (exact: frames × 10 ms)."""
        return self.frames * STEPS_PER_FRAME * int(round(self.model.opt.timestep * 1e9))

    def read(self, *, images: bool = False) -> TactileReading:
        """This frame's reading. With a sensor model, `taxel_forces` is the measured output (the
        model advances once per frame, however often the frame is read) and
        `ideal_taxel_forces` the ideal shares; resultants, images and the distal/pad-frame
        shares stay ideal."""
        r = self.contacts.read(self.data, images=images)
        if self.sensor_model is None:
            return r
        if self._sensed is None or self._sensed[0] != self.frames:
            self._sensed = (self.frames, self.sensor_model.apply(r.taxel_forces))
        return r._replace(taxel_forces=self._sensed[1], ideal_taxel_forces=r.taxel_forces)

    def joint_angles(self) -> np.ndarray:
        return self.data.qpos[self.qpos_adr].copy()

    def _T_openxr_world(self) -> np.ndarray:
        T = np.eye(4)
        R = self.data.xmat[self.wrist_body].reshape(3, 3)
        T[:3, :3] = R.T
        T[:3, 3] = -R.T @ self.data.xpos[self.wrist_body]
        return WRIST_TO_OPENXR[self.side] @ T

    def distal_transforms_in_wrist(self) -> np.ndarray:
        """(5, 4, 4) distal body (tip_sensor_frame) transforms in the OpenXR wrist frame, now."""
        Tw = self._T_openxr_world()
        T = np.tile(np.eye(4), (5, 1, 1))
        T[:, :3, :3] = self.data.xmat[self.distal_bodies].reshape(-1, 3, 3)
        T[:, :3, 3] = self.data.xpos[self.distal_bodies]
        return Tw @ T

    def segment_poses_in_wrist(self) -> np.ndarray:
        """(5, 7) current distal segment poses (OpenXR joint axes) in the OpenXR wrist frame —
        the LBS `current_segment_poses` for the published metadata."""
        T = self.distal_transforms_in_wrist() @ SEGMENT_IN_DISTAL[self.side]
        return np.stack([matrix_to_pose(t) for t in T])

    def taxel_positions_in_wrist(self) -> np.ndarray:
        """(176, 3) current taxel positions in the OpenXR wrist frame [m], from the simulator."""
        T = self.distal_transforms_in_wrist()[self.contacts.taxel_pad]
        return np.einsum("nij,nj->ni", T[:, :3, :3], self.contacts.taxel_pos) + T[:, :3, 3]

    def object_support_force(self, geom_ids: np.ndarray, body_geoms: np.ndarray) -> np.ndarray:
        """World force (3,) that geoms `geom_ids` (e.g. a pedestal) exert on geoms `body_geoms`."""
        total = np.zeros(3)
        d = self.data
        if d.ncon == 0:
            return total
        g = d.contact.geom
        a = np.isin(g[:, 0], geom_ids) & np.isin(g[:, 1], body_geoms)
        b = np.isin(g[:, 1], geom_ids) & np.isin(g[:, 0], body_geoms)
        idx = np.flatnonzero((a | b) & (d.contact.efc_address >= 0))
        if idx.size == 0:
            return total
        f = contact_frame_forces(self.model, d, idx)
        frame = d.contact.frame[idx].reshape(-1, 3, 3)
        on_g1 = np.einsum("cki,ck->ci", frame, f)           # force on geom[1]
        sign = np.where(b[idx], -1.0, 1.0)                    # body is geom[0] in case b
        return (sign[:, None] * on_g1).sum(axis=0)
