"""`slip`: a pad dragged across a surface at constant normal load; tangential force ≤ μ·normal
at the pad, the stick-to-slip transition in the taxels' shear, the slip onset time."""
from __future__ import annotations

import mujoco
import numpy as np

from ....hands.wuji_hand2 import NUM_ACTUATED_JOINTS
from ..hand_sim import HandSimulation
from ..model import build_hand_spec
from ..taxels import pad_taxels
from .base import Check, Scenario, _closing_directions, _flex_joints, _ForceFeedback, _pad_points, _servo_kp, _smoothstep


# ------------------------------------------------------------------------------------------------
class SlipScenario(Scenario):
    """A plate dragged under the index pad at constant normal load: stick, then slip.

    The index finger closes onto a plate on a servo slide (guarded approach as in `press`) and
    holds 0.3 N normal by feedback on the pad-frame normal component; from 3 s the slide drags the
    plate across the pad (distal x) at 10 mm/s. The finger's abduction servo lets the pad follow
    (stick: friction builds) until the friction reaches μ·normal, then the pad slides. Checks:
    tangential ≤ μ·normal at the pad level, the stick (no relative motion) and the slip (relative
    speed ≈ drag speed), the onset time, the normal load held, and the shear visible in the taxels."""

    # the measured series, one entry per observed frame (set in build(), appended by observe())
    t: list[float]
    normal: list[float]
    tangential: list[float]
    shear_taxels: list[float]
    rel: list[float]

    name = "slip"
    duration_s = 4.5
    PRE_S, LOAD_START = 1.0, 2.0
    DRAG_START, DRAG_SPEED, DRAG_END = 3.0, 0.010, 4.5     # [s], [m/s], [s]
    NORMAL = 0.3             # [N] pad-frame normal load held during the drag
    MU = 1.0                 # friction of pad and plate (MuJoCo takes the larger)
    GAP, STANDOFF = 0.003, 0.003
    SEEK_SPEED = 0.012       # [m/s]
    KI, FF = 0.5, 0.8 / 80.0
    SLIDE_KP = 2000.0        # [N/m] plate slide servo

    def build(self, side: str, seed: int) -> HandSimulation:
        rng = np.random.default_rng(seed)
        self.side = side
        q = np.zeros(NUM_ACTUATED_JOINTS)
        q[4:8] = (0.6, 0.0, 0.65, 0.4)
        self.q_pre = q
        spec = build_hand_spec(side, lift_kp=4e4)
        mount = np.array([0.0, 0.0, 0.3])
        c, n, R = _pad_points(side, q)["index"]
        half = (0.02, 0.0085, 0.004)
        centre = mount + c + n * (self.GAP + half[2]) + rng.uniform(-2e-4, 2e-4, 3)
        Rb = np.stack([R[:, 0], np.cross(n, R[:, 0]), n], axis=1)
        qb = np.zeros(4)
        mujoco.mju_mat2Quat(qb, np.ascontiguousarray(Rb).ravel())
        plate = spec.worldbody.add_body(name="slip_plate", pos=list(centre), quat=list(qb))
        plate.add_joint(name="slip_slide", type=mujoco.mjtJoint.mjJNT_SLIDE, axis=[1, 0, 0], damping=1.0)
        plate.add_geom(name="slip_plate_geom", type=mujoco.mjtGeom.mjGEOM_BOX, size=list(half), mass=0.1,
                       friction=[self.MU, 0.005, 0.0001], condim=4, rgba=[0.5, 0.7, 0.4, 1])
        slide = spec.add_actuator(name="slip_drive", target="slip_slide", trntype=mujoco.mjtTrn.mjTRN_JOINT)
        slide.set_to_position(kp=self.SLIDE_KP, dampratio=1.0)
        sim = self.simulation(side, spec, ["slip_plate_geom"])
        self.drive = sim.model.actuator("slip_drive").id
        self.plate_body = sim.model.body("slip_plate").id
        self.axis = R[:, 0]                                    # drag direction (wrist = world here)
        active = np.array([0.0, 1.0, 0.0, 0.0, 0.0])
        dirs = _closing_directions(side, q, _flex_joints(side), _servo_kp())
        self.feedback = _ForceFeedback(q, dirs, active, c0=np.full(5, -self.STANDOFF),
                                       seek_speed=np.full(5, self.SEEK_SPEED), max_speed=0.005,
                                       ki=np.full(5, self.KI), ff=np.full(5, self.FF))
        self.q_approach = self.feedback.command()
        self.pad_origin = pad_taxels(side)[1].pad_origin
        self.t, self.normal, self.tangential, self.shear_taxels, self.rel = [], [], [], [], []
        self.last = np.zeros(5)
        return sim

    def drag(self, t: float) -> float:
        """Plate slide target [m]."""
        return self.DRAG_SPEED * min(max(t - self.DRAG_START, 0.0), self.DRAG_END - self.DRAG_START)

    def control(self, sim: HandSimulation, t: float) -> None:
        if t < self.PRE_S:
            sim.set_joint_targets(self.q_approach * _smoothstep(t / self.PRE_S))
        else:
            target = 0.05 + (self.NORMAL - 0.05) * _smoothstep((t - self.LOAD_START) / 0.5)
            sim.set_joint_targets(self.feedback.update(self.last, np.full(5, target)))
        sim.data.ctrl[self.drive] = self.drag(t)

    def observe(self, sim: HandSimulation, reading, t: float) -> None:
        F = reading.resultants[1]                         # pad frame: Fy normal (pressing > 0)
        self.last = np.full(5, F[1])
        self.t.append(t)
        self.normal.append(F[1])
        self.tangential.append(float(np.hypot(F[0], F[2])))
        # Shear along the drag, summed over the index taxels in the pad frame.
        shear = reading.taxel_forces_pad[40:74].sum(axis=0)
        self.shear_taxels.append(float(abs(shear[0])))
        d = sim.distal_bodies[1]
        pad = sim.data.xmat[d].reshape(3, 3) @ self.pad_origin + sim.data.xpos[d]
        self.rel.append(float((sim.data.xpos[self.plate_body] - pad) @ self.axis))

    def checks(self) -> list[Check]:
        t = np.array(self.t)
        fn, ft, shear, rel = (np.array(a) for a in (self.normal, self.tangential, self.shear_taxels, self.rel))
        end = float(t[-1]) if len(t) else 0.0
        nan = float("nan")
        missing = "" if end >= self.DRAG_END - 1e-9 else f"the run ended at {end:.2f} s, the drag is {self.DRAG_START:g}-{self.DRAG_END:g} s"
        drag = (t > self.DRAG_START) & (t <= self.DRAG_END)
        onset = onset_ratio = stick_slip = slip_speed = normal_err = shear_onset = shear_start = nan
        if drag.any() and not missing:
            rel_d = rel - rel[np.argmin(np.abs(t - self.DRAG_START))]
            speed = np.gradient(rel, t)
            sliding = drag & (np.abs(speed) > 0.5 * self.DRAG_SPEED)
            if sliding.any():
                k = int(np.argmax(sliding))
                onset = float(t[k])
                onset_ratio = float(ft[k] / fn[k])
                stick_slip = 1e3 * float(np.max(np.abs(rel_d[drag & (t < onset - 0.05)]), initial=0.0))
                late = drag & (t > onset + 0.1)
                slip_speed = float(np.mean(np.abs(speed[late]))) if late.any() else nan
                shear_onset = float(shear[k] / (self.MU * fn[k]))
                i0 = int(np.argmin(np.abs(t - self.DRAG_START)))
                shear_start = float(shear[i0] / (self.MU * fn[i0]))
            normal_err = float(np.max(np.abs(fn[drag] - self.NORMAL)))
        ratio = float(np.max(ft[drag] / fn[drag])) if drag.any() else nan
        return [
            Check("max tangential / normal at the index pad during the drag", ratio, "<=", self.MU + 1e-6, "", missing),
            Check("slip onset time (relative speed > half the drag speed)", onset, "<=", self.DRAG_END, "s", missing),
            Check("tangential / normal at slip onset (stick until the friction cone)", onset_ratio, ">=", 0.9 * self.MU,
                  "", missing),
            Check("max pad-plate relative motion while sticking (until 50 ms before onset)", stick_slip, "<=", 0.5,
                  "mm", missing),
            Check("mean relative speed while slipping (drag 10 mm/s)", slip_speed, ">=", 0.5 * self.DRAG_SPEED, "m/s",
                  missing),
            Check("max |normal - 0.3 N| during the drag", normal_err, "<=", 0.05, "N", missing),
            Check("taxel shear along the drag / (μ·normal) at drag start", shear_start, "<=", 0.1, "", missing),
            Check("taxel shear along the drag / (μ·normal) at slip onset (built up while sticking)", shear_onset, ">=",
                  0.9, "", missing),
        ]
