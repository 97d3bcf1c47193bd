"""`lift` (thumb and index pinch a 30 g free block on a pedestal, grip by force feedback, the
hand mount lifts it 80 mm; airborne, the pads' world-vertical force must equal the weight),
`grasp-sphere` / `grasp-cylinder` / `grasp-box` (free objects of those shapes), `release` (let
go under load) and `roll` (a cylinder rolled between thumb and index)."""
from __future__ import annotations

import mujoco
import numpy as np

from ....hands.wuji_hand2 import NUM_ACTUATED_JOINTS
from ..hand_sim import HandSimulation
from ..model import build_hand_spec
from ..taxels import pad_taxels
from .base import BLOCK_MASS, Check, GRAVITY, Scenario, _closing_directions, _flex_joints, _ForceFeedback, _pad_points, _smoothstep


# ------------------------------------------------------------------------------------------------
class LiftScenario(Scenario):
    """Thumb and index pinch a 30 g block on a pedestal and the hand lifts it 80 mm."""

    # the measured series, one entry per observed frame (set in build(), appended by observe())
    t: list[float]
    mag: list[np.ndarray]
    support: list[float]
    pedestal: list[float]
    height: list[float]

    name = "lift"
    duration_s = 9.0
    PRE_S, GRIP_START, GRIP_END, LIFT_START, LIFT_END = 1.5, 3.0, 4.0, 4.5, 6.5
    HOLD_CHECK_START = 7.0
    AIR_END = float("inf")   # [s] the airborne hold ends here (a release scenario opens the hand)
    LIFT_HEIGHT = 0.080
    CONTACT_BELOW_CENTRE = 0.009  # the pads close onto the block this far below the FK touch points [m]
    GRIP = 0.8      # [N] pad resultant target while gripping
    GAP = 0.0015

    def pregrasp(self) -> np.ndarray:
        q = np.zeros(NUM_ACTUATED_JOINTS)
        q[:4] = (1.241, -0.109, -0.082, -0.997)
        q[4:8] = (0.54, -0.2, 0.6, 0.36)
        return q

    def build(self, side: str, seed: int) -> HandSimulation:
        rng = np.random.default_rng(seed)
        self.side = side
        self.q_pre = self.pregrasp()
        pads = _pad_points(side, self.q_pre)
        ci, ni, _ = pads["index"]
        ct, nt, _ = pads["thumb"]
        # Block faces normal to the bisector of the two (opposed) pad normals; world "up"
        # perpendicular to both normals (neither pad's grip pushes vertically), forearm side.
        axis = (ni - nt) / np.linalg.norm(ni - nt)
        up = np.cross(ni, nt)
        up *= np.sign(up[2]) / np.linalg.norm(up)
        R = np.stack([axis, np.cross(up, axis), up])        # rows: world axes in wrist coords
        qm = np.zeros(4)
        mujoco.mju_mat2Quat(qm, np.ascontiguousarray(R).ravel())
        mount = np.array([0.0, 0.0, 0.25])
        spec = build_hand_spec(side, mount_pos=mount, mount_quat_wxyz=qm)
        ri, rt = pad_taxels(side)[1].geometry.radius, pad_taxels(side)[0].geometry.radius
        touch_i = ci - ri * ni + ri * axis                  # capsule points whose normal is ±axis
        touch_t = ct - rt * nt - rt * axis
        thickness = float((touch_t - touch_i) @ axis) - 2 * self.GAP
        centre_w = mount + R @ (0.5 * (touch_i + touch_t)) + rng.uniform(-2e-4, 2e-4, 3)
        centre_w[2] -= self.CONTACT_BELOW_CENTRE
        half = (thickness / 2, 0.008, 0.010)
        block = spec.worldbody.add_body(name="lift_block", pos=list(centre_w))
        block.add_freejoint(name="lift_block_free")
        gtype, size = self.object_geometry(thickness)
        block.add_geom(name="lift_block_geom", type=gtype, size=list(size), mass=BLOCK_MASS,
                       friction=[1.0, 0.02, 0.0001], condim=6, rgba=[0.2, 0.5, 0.9, 1])
        ped_half = (0.007, 0.007, 0.03)
        pedestal = spec.worldbody.add_body(name="pedestal", pos=[centre_w[0], centre_w[1], centre_w[2] - half[2] - ped_half[2]])
        pedestal.add_geom(name="pedestal_geom", type=mujoco.mjtGeom.mjGEOM_BOX, size=list(ped_half),
                          friction=[1.0, 0.005, 0.0001], rgba=[0.4, 0.4, 0.4, 1])
        sim = self.simulation(side, spec, ["lift_block_geom"])
        self.block_geom = np.array([sim.model.geom("lift_block_geom").id])
        self.pedestal_geom = np.array([sim.model.geom("pedestal_geom").id])
        self.block_body = sim.model.body("lift_block").id
        self.z0 = float(sim.data.xpos[self.block_body][2])
        active = np.array([1.0, 1.0, 0.0, 0.0, 0.0])
        self.feedback = _ForceFeedback(self.q_pre, _closing_directions(side, self.q_pre, _flex_joints(side)), active)
        self.t, self.support, self.pedestal, self.height, self.mag = [], [], [], [], []
        self.last = np.zeros(5)
        return sim

    def object_geometry(self, thickness: float):
        """(MuJoCo geom type, size) of the lifted object; `thickness` [m] is the free width between
        the two pads along the grip axis (the body's x)."""
        return mujoco.mjtGeom.mjGEOM_BOX, (thickness / 2, 0.008, 0.010)

    def grip_target(self, t: float) -> float:
        if t < self.GRIP_START:
            return 0.05
        return 0.05 + (self.GRIP - 0.05) * _smoothstep((t - self.GRIP_START) / (self.GRIP_END - self.GRIP_START))

    def control(self, sim: HandSimulation, t: float) -> None:
        if t < self.PRE_S:
            sim.set_joint_targets(self.q_pre * _smoothstep(t / self.PRE_S))
        else:
            sim.set_joint_targets(self.feedback.update(self.last, np.full(5, self.grip_target(t))))
        sim.set_lift(self.LIFT_HEIGHT * _smoothstep((t - self.LIFT_START) / (self.LIFT_END - self.LIFT_START)))

    def observe(self, sim: HandSimulation, reading, t: float) -> None:
        self.last = np.linalg.norm(reading.resultants, axis=1)
        self.t.append(t)
        self.mag.append(self.last)
        self.support.append(-float(reading.pad_forces_world[:, 2].sum()))   # upward support of the block
        self.pedestal.append(sim.object_support_force(self.pedestal_geom, self.block_geom)[2])
        self.height.append(float(sim.data.xpos[self.block_body][2]) - self.z0)

    def checks(self) -> list[Check]:
        t = np.array(self.t)
        support, ped, h = np.array(self.support), np.array(self.pedestal), np.array(self.height)
        weight = BLOCK_MASS * GRAVITY
        end = float(t[-1]) if len(t) else 0.0
        air_end = min(self.duration_s, self.AIR_END)
        air = (t >= self.HOLD_CHECK_START) & (t <= air_end + 1e-9) & (h > 0.001)
        nan = float("nan")
        # The airborne checks judge the hold after the lift: a run that stops earlier fails them.
        air_missing = "" if end >= air_end - 1e-9 else (
            f"the run ended at {end:.2f} s, the airborne hold is {self.HOLD_CHECK_START:g}-{air_end:g} s")
        lifted = h[t <= air_end + 1e-9]
        if air.any():
            rel = float(np.max(np.abs(support[air] - weight)) / weight)
            mean, ped_max = float(support[air].mean()), float(np.max(np.abs(ped[air])))
        else:
            rel = mean = ped_max = nan
            air_missing = air_missing or "the block never left the pedestal after 7 s"
        return [
            Check("block lifted (height gain at the end)", 1e3 * float(lifted[-1]) if len(lifted) else nan,
                  ">=", 75.0, "mm",
                  "" if end >= self.LIFT_END - 1e-9 else f"the run ended at {end:.2f} s, the lift ends at {self.LIFT_END:g} s"),
            Check("airborne hold frames (t >= 7 s, block off the pedestal)", float(air.sum()), ">=", 150, "frames"),
            Check("max |pad world-vertical support - weight 0.2943 N| / weight while airborne", rel, "<=", 0.02,
                  "", air_missing),
            Check("mean pad world-vertical support while airborne", mean, ">=", 0.98 * weight, "N", air_missing),
            Check("max pedestal support while airborne", ped_max, "==", 0.0, "N", air_missing),
        ]


class GraspScenario(LiftScenario):
    """The lift with a free sphere, cylinder or box of 30 g taken from the pedestal: the same
    pinch, grip feedback, 80 mm lift and weight-balance checks; the pads' footprints differ with
    the shape (a sphere: a point contact; a vertical cylinder: a line across the pad; a box: a face)."""

    SHAPES = ("sphere", "cylinder", "box")

    def __init__(self, shape: str):
        if shape not in self.SHAPES:
            raise ValueError(f"grasp shape must be one of {', '.join(self.SHAPES)}, got {shape!r}")
        self.shape = shape
        self.name = f"grasp-{shape}"

    def object_geometry(self, thickness: float):
        r = self.radius = thickness / 2
        if self.shape == "sphere":
            return mujoco.mjtGeom.mjGEOM_SPHERE, (r, 0.0, 0.0)
        if self.shape == "cylinder":        # axis vertical (body z = world up)
            return mujoco.mjtGeom.mjGEOM_CYLINDER, (r, 0.010, 0.0)
        return mujoco.mjtGeom.mjGEOM_BOX, (r, 0.008, 0.010)


class ReleaseScenario(GraspScenario):
    """Release under load: the box lifted and held as in `grasp-box`, then at 9 s the fingers
    open within 0.2 s while the pads still carry the grip. The pads must let go without a
    squeeze transient, read exactly zero once separated, and the box must fall."""

    name = "release"
    duration_s = 10.0
    AIR_END = 9.0
    OPEN_S = 0.2             # [s] fingers back to the open hand
    ZERO_AFTER = 0.3         # [s] after the release command, every pad force must be exactly zero

    def __init__(self):
        super().__init__("box")
        self.name = "release"

    def simulation(self, side: str, spec: mujoco.MjSpec, object_geoms) -> HandSimulation:
        # A floor to land on (the box may tip off the small pedestal).
        spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0.5, 0.5, 0.01])
        return super().simulation(side, spec, object_geoms)

    def control(self, sim: HandSimulation, t: float) -> None:
        if t < self.AIR_END:
            return super().control(sim, t)
        if not hasattr(self, "q_release"):
            self.q_release = self.feedback.command()
        sim.set_joint_targets(self.q_release * (1.0 - _smoothstep((t - self.AIR_END) / self.OPEN_S)))

    def observe(self, sim: HandSimulation, reading, t: float) -> None:
        super().observe(sim, reading, t)
        if not hasattr(self, "exact_zero"):
            self.exact_zero = []
        self.exact_zero.append(bool(not reading.true_taxel_forces.any() and not reading.resultants.any()))

    def checks(self) -> list[Check]:
        out = super().checks()
        t, mag, h = np.array(self.t), np.array(self.mag).reshape(-1, 5), np.array(self.height)
        end = float(t[-1]) if len(t) else 0.0
        missing = "" if end >= self.duration_s - 1e-9 else f"the run ended at {end:.2f} s, the release is {self.AIR_END:g}-{self.duration_s:g} s"
        after = t > self.AIR_END
        zero_from = t >= self.AIR_END + self.ZERO_AFTER
        nan = float("nan")
        before = mag[(t > self.AIR_END - 0.5) & (t <= self.AIR_END)]
        grip = float(before.max()) if len(before) else nan
        out += [
            Check("max pad ‖F‖ while the hand opens (no squeeze transient)", float(mag[after].max()) if after.any() else nan,
                  "<=", grip + 0.02 if np.isfinite(grip) else nan, "N", missing),
            Check(f"frames with all forces exactly zero from {self.AIR_END + self.ZERO_AFTER:g} s",
                  100.0 * float(np.mean(np.array(self.exact_zero)[zero_from])) if zero_from.any() else nan,
                  "==", 100.0, "% of frames", missing, limit_unit="%"),
            Check("box dropped after the release (height lost by the end)",
                  1e3 * float(h[t <= self.AIR_END][-1] - h[-1]) if after.any() else nan, ">=", 50.0, "mm", missing),
        ]
        return out


class RollScenario(GraspScenario):
    """A cylinder rolled between thumb and index: `grasp-cylinder` lifted and held, then from 7.5 s
    the index abduction target turns 0.2 rad in 1 s while the grip feedback keeps 0.8 N. The
    cylinder rolls about its own axis, its contact lines travel across both pads, and the pads keep
    carrying its weight."""

    name = "roll"
    duration_s = 9.5
    ROLL_START, ROLL_S, ROLL_JOINT, ROLL_ANGLE = 7.5, 1.0, 5, 0.2    # [s], [s], index mcp_abd, [rad]

    def __init__(self):
        super().__init__("cylinder")
        self.name = "roll"

    def control(self, sim: HandSimulation, t: float) -> None:
        super().control(sim, t)
        if t >= self.ROLL_START:
            q = sim.data.ctrl[sim.actuators].copy()
            q[self.ROLL_JOINT] += self.ROLL_ANGLE * _smoothstep((t - self.ROLL_START) / self.ROLL_S)
            sim.set_joint_targets(q)

    def observe(self, sim: HandSimulation, reading, t: float) -> None:
        super().observe(sim, reading, t)
        if not hasattr(self, "pose"):
            self.pose, self.centroid, self.pads = [], [], []
        self.pose.append((sim.data.xmat[self.block_body].reshape(3, 3).copy(), sim.data.xpos[self.block_body].copy()))
        d = sim.distal_bodies[:2]
        R = sim.data.xmat[d].reshape(2, 3, 3)
        origins = np.stack([p.pad_origin for p in pad_taxels(self.side)[:2]])
        self.pads.append(np.einsum("kij,kj->ki", R, origins) + sim.data.xpos[d])     # thumb, index centres
        n = np.linalg.norm(reading.taxel_forces_distal, axis=1)
        pos = sim.contacts.taxel_pos
        self.centroid.append([(n[s] @ pos[s]) / max(float(n[s].sum()), 1e-12) for s in (slice(0, 40), slice(40, 74))])

    def checks(self) -> list[Check]:
        out = super().checks()
        t = np.array(self.t)
        end = float(t[-1]) if len(t) else 0.0
        roll_end = self.ROLL_START + self.ROLL_S
        missing = "" if end >= roll_end - 1e-9 else f"the run ended at {end:.2f} s, the roll is {self.ROLL_START:g}-{roll_end:g} s"
        nan = float("nan")
        angle = tilt = travel = rolling = grip = nan
        if not missing:
            i0, i1 = int(np.argmin(np.abs(t - self.ROLL_START))), len(t) - 1
            (R0, _x0), (R1, _x1) = self.pose[i0], self.pose[i1]
            rot = R0.T @ R1
            angle = float(np.degrees(abs(np.arctan2(rot[1, 0], rot[0, 0]))))
            tilt = float(np.degrees(np.arccos(np.clip(R0[:, 2] @ R1[:, 2], -1.0, 1.0))))
            c0, c1 = np.array(self.centroid[i0]), np.array(self.centroid[i1])
            travel = 1e3 * float(np.linalg.norm(c1 - c0, axis=1).min())
            # Rolling without slip between the pads: their relative tangential travel is 2·r·θ.
            p0, p1 = self.pads[i0], self.pads[i1]
            grip_dir = p0[1] - p0[0]
            u = np.cross(R0[:, 2], grip_dir)
            u /= np.linalg.norm(u)
            rel = float(abs(((p1[1] - p1[0]) - (p0[1] - p0[0])) @ u))
            rolling = rel / (2 * self.radius * np.radians(angle)) if angle > 0 else nan
            grip = float(np.array(self.mag).reshape(-1, 5)[i0:, :2].min())
        return out + [
            Check("cylinder rotation about its own axis during the roll", angle, ">=", 15.0, "deg", missing),
            Check("cylinder axis tilt during the roll", tilt, "<=", 15.0, "deg", missing),
            Check("min contact travel across the thumb and index pads (taxel force centroid)", travel, ">=", 1.0, "mm",
                  missing),
            Check("pads' relative travel / (2 × radius × rotation) (1 = rolling without slip)",
                  abs(rolling - 1.0) if np.isfinite(rolling) else nan, "<=", 0.3, "(|ratio - 1|)", missing),
            Check("min thumb / index pad ‖F‖ during the roll (grip kept)", grip, ">=", 0.5, "N", missing),
        ]
