"""`press`: the thumb opposes the four fingers on a fixed object; 0–3 s approach and light
contact, 3–7 s per-finger target ramp 0.05 → 0.50 N, 7–10.5 s hold, then release. Force is
reached by feeding the measured pad resultant magnitude back into the joint targets (never by
scaling outputs)."""
from __future__ import annotations

import mujoco
import numpy as np

from ....hands.wuji_hand2 import FINGERS, NUM_ACTUATED_JOINTS, hand_kinematics
from ..hand_sim import HandSimulation
from ..model import build_hand_spec
from ..taxels import pad_taxels
from .base import Check, Scenario, _add_box, _closing_directions, _flex_joints, _ForceFeedback, _level_pads_rotation, _pad_points, _servo_kp, _smoothstep, _vecmat_rows


# ------------------------------------------------------------------------------------------------
class PressScenario(Scenario):
    """Thumb opposes the four fingers on a fixed object; force ramp by resultant feedback.

    Contact is made and broken gently: the approach stops `STANDOFF` short of the pre-grasp,
    each pad then closes at `SEEK_SPEED` until it first measures a force (guarded move), the
    feedback's closure rate is limited to `MAX_SPEED`; the release first ramps the force target
    down to 0, then backs every pad off along its normal, and only then opens the hand."""

    # the measured series, one entry per observed frame (set in build(), appended by observe())
    t: list[float]
    mag: list[np.ndarray]
    target: list[float]
    height_spread: list[float]
    opposition: list[float]
    zero_after_release: list[bool]

    name = "press"
    duration_s = 13.0
    APPROACH_END, RAMP_END, HOLD_END = 3.0, 7.0, 10.5
    UNLOAD_END, RETREAT_END, RELEASE_END = 11.0, 11.3, 12.0   # force → 0, back off, hand open
    ZERO_FROM = 12.0        # forces must be exactly zero from here on [s]
    F_START, F_END = 0.05, 0.50
    PRE_S = 1.2     # approach (to the pre-grasp held back by STANDOFF) ends at
    GAP = 0.003     # pad-to-object gap at the pre-grasp [m]
    STANDOFF = np.array([0.0015, 0.003, 0.003, 0.003, 0.003])     # [m] approach held back by
    SEEK_SPEED = np.array([0.004, 0.012, 0.012, 0.012, 0.012])    # [m/s] guarded closing speed
    MAX_SPEED = 0.005       # [m/s] feedback closure rate limit (seek excluded)
    # Feedback gains for the compliance-weighted directions: pad stiffness along them, measured on
    # this model during the ramp, ≈ 115 N/m (thumb), 80 N/m (index, middle, ring), 85 N/m (pinky).
    # KI 0.5 (was 0.15): the error left by the ramp decays ~3× faster, so the 8-10.3 s hold
    # error falls from 0.0013 N to 0.0004 N without changing the gentle-contact figures.
    KI = np.full(5, 0.5)                                        # [m/(N·s)]
    FF = 0.8 / np.array([115.0, 80.0, 80.0, 80.0, 85.0])        # [m/N]
    RETREAT = 0.005         # [m] pads back off along their normals before the hand opens
    MOUNT_KP = 4e4          # [N/m] hand mount slide servo (the lift scenario's 4000 N/m sags 2.8 mm)
    HOLD_TOLERANCE = 0.01  # [N] max |‖F‖ − target| during the hold
    LEVEL_PADS = True       # tilt the wrist so the five pad centres lie level (≈ 86° turn)
    GRAVITY_COMPENSATION = True  # the finger servos carry the fingers' weight
    WINDOW = (8.0, 10.3)    # [s] the settled hold window of the tighter checks
    WINDOW_TOLERANCE = 0.001  # [N] max |‖F‖ − target| in WINDOW
    MAX_HEIGHT_SPREAD = 5.80  # [mm] pad-centre world-z spread in WINDOW (wrist tilted to level the pads)
    MIN_OPPOSITION = 120.59   # [deg] angle between the thumb's and each finger's outward pad normal
    APPROACH_LIMIT = 0.075  # [N] max pad ‖F‖ before 3 s: the 0.05 N light-contact target + half of it

    def pregrasp(self) -> np.ndarray:
        q = np.zeros(NUM_ACTUATED_JOINTS)
        q[:4] = (1.2, 0.0, -0.45, -0.9)
        for i in range(1, 5):
            q[4 * i:4 * i + 4] = (0.6, 0.0, 0.65, 0.4)
        return q

    def build(self, side: str, seed: int) -> HandSimulation:
        rng = np.random.default_rng(seed)
        self.side = side
        self.q_pre = self.pregrasp()
        pads = _pad_points(side, self.q_pre)
        # The wrist tilted so the pads lie level (their best-fit plane horizontal), as in a
        # press where every pad centre is at about the same height.
        R_m = _level_pads_rotation(np.stack([pads[f][0] for f in FINGERS])) if self.LEVEL_PADS else np.eye(3)
        q_m = np.zeros(4)
        mujoco.mju_mat2Quat(q_m, np.ascontiguousarray(R_m).ravel())
        # A stiff mount: the wrist is held in place (the press never lifts), so the fingers
        # landing on their plates cannot bounce the hand and with it the thumb's force.
        spec = build_hand_spec(side, lift_kp=self.MOUNT_KP, mount_quat_wxyz=q_m)
        # The fingers' servos hold their own weight (gravity compensation, as a real hand's
        # controller does): tilted, the soft thumb servo would otherwise sag ~1 mm off its
        # plate and the guarded approach would reach it a second late.
        for b in spec.bodies if self.GRAVITY_COMPENSATION else ():
            if b.name.startswith(hand_kinematics(side).prefix) and b.name != hand_kinematics(side).wrist_body:
                b.gravcomp = 1.0
        mount = np.array([0.0, 0.0, 0.3])
        body = spec.worldbody.add_body(name="press_object", pos=[0, 0, 0])
        names = []
        for f in FINGERS:
            c, n, R = pads[f]
            c, n, R = R_m @ c, R_m @ n, R_m @ R
            half_t = 0.004
            centre = mount + c + n * (self.GAP + half_t) + rng.uniform(-2e-4, 2e-4, 3)
            # Plate axes: distal x (across the pad), distal z (along the finger), pad normal.
            Rb = np.stack([R[:, 0], np.cross(n, R[:, 0]), n], axis=1)
            name = f"press_object_{f}_plate"
            _add_box(body, name, centre, Rb, (0.0065, 0.0085, half_t), [0.8, 0.6, 0.3, 1])
            names.append(name)
        sim = self.simulation(side, spec, names)
        directions = _closing_directions(side, self.q_pre, _flex_joints(side), _servo_kp())
        self.feedback = _ForceFeedback(self.q_pre, directions, np.ones(5), c0=-self.STANDOFF,
                                       seek_speed=self.SEEK_SPEED, max_speed=self.MAX_SPEED,
                                       ki=self.KI, ff=self.FF)
        self.q_approach = self.feedback.command()
        self.c_unloaded: np.ndarray | None = None
        self.t, self.mag, self.target = [], [], []
        self.height_spread, self.opposition = [], []
        self.zero_after_release = []
        self.last = np.zeros(5)
        return sim

    def target_force(self, t: float) -> float:
        """Per-pad force target [N]: light contact, ramp, hold, then unloading to 0."""
        if t < self.APPROACH_END:
            return self.F_START
        if t < self.RAMP_END:
            return self.F_START + (self.F_END - self.F_START) * (t - self.APPROACH_END) / (self.RAMP_END - self.APPROACH_END)
        if t < self.HOLD_END:
            return self.F_END
        return self.F_END * max(0.0, (self.UNLOAD_END - t) / (self.UNLOAD_END - self.HOLD_END))

    def control(self, sim: HandSimulation, t: float) -> None:
        if t < self.PRE_S:
            sim.set_joint_targets(self.q_approach * _smoothstep(t / self.PRE_S))
        elif t < self.UNLOAD_END:
            sim.set_joint_targets(self.feedback.update(self.last, np.full(5, self.target_force(t))))
        else:
            if self.c_unloaded is None:
                self.c_unloaded = self.feedback.c.copy()
            back = self.RETREAT * _smoothstep((t - self.UNLOAD_END) / (self.RETREAT_END - self.UNLOAD_END))
            q_backed = self.q_pre + (self.c_unloaded - back) @ self.feedback.dirs
            s = _smoothstep((t - self.RETREAT_END) / (self.RELEASE_END - self.RETREAT_END))
            sim.set_joint_targets(q_backed * (1.0 - s))

    def observe(self, sim: HandSimulation, reading, t: float) -> None:
        self.last = np.linalg.norm(reading.resultants, axis=1)
        self.t.append(t)
        self.mag.append(self.last)
        self.target.append(self.target_force(t))
        # Pad centres and outward normals in the world: height spread [mm], thumb-finger angles [deg].
        R = reading.distal_rotations
        pads = pad_taxels(self.side)
        centres = _vecmat_rows(R, np.stack([p.pad_origin for p in pads])) + sim.data.xpos[sim.distal_bodies]
        normals = R[:, :, 1] * pads[0].geometry.pad_side
        self.height_spread.append(1e3 * float(np.ptp(centres[:, 2])))
        self.opposition.append(float(np.degrees(np.arccos(np.clip(normals[1:] @ normals[0], -1, 1))).min()))
        if t >= self.ZERO_FROM:
            self.zero_after_release.append(bool(np.all(reading.true_taxel_forces == 0) and np.all(reading.resultants == 0)))

    def checks(self) -> list[Check]:
        t, mag, target = np.array(self.t), np.array(self.mag).reshape(-1, 5), np.array(self.target)
        end = float(t[-1]) if len(t) else 0.0
        hold = (t >= self.RAMP_END) & (t <= self.HOLD_END)
        # The hold checks judge the whole hold: a run that stops before its end fails them.
        hold_missing = "" if end >= self.HOLD_END - 1e-9 else (
            f"the run ended at {end:.2f} s, the hold is {self.RAMP_END:g}-{self.HOLD_END:g} s")
        nan = float("nan")
        if hold.any():
            in_contact = float(np.sum(np.all(mag[hold] > 0, axis=0)))
            err = float(np.max(np.abs(mag[hold] - target[hold, None])))
            mean = float(mag[hold].mean())
        else:
            in_contact = err = mean = nan
        zero = 100.0 * float(np.mean(self.zero_after_release)) if self.zero_after_release else nan
        win = (t >= self.WINDOW[0] - 1e-9) & (t <= self.WINDOW[1] + 1e-9)
        win_missing = "" if end >= self.WINDOW[1] - 1e-9 else (
            f"the run ended at {end:.2f} s, the window is {self.WINDOW[0]:g}-{self.WINDOW[1]:g} s")
        if win.any():
            win_err = float(np.max(np.abs(mag[win] - target[win, None])))
            spread = float(np.max(np.array(self.height_spread)[win]))
            opposition = float(np.min(np.array(self.opposition)[win]))
        else:
            win_err = spread = opposition = nan
        # Gentle contact, judged over the whole phase: first contact may overshoot the 0.05 N
        # light-contact target by at most half of it (an impact on the stiff thumb gave 0.28 N),
        # and unloading must never press harder than the hold was allowed to (0.5 N + tolerance).
        approach = t < self.APPROACH_END
        approach_max = float(mag[approach].max()) if approach.any() else nan
        approach_missing = "" if end >= self.APPROACH_END - 1e-9 else (
            f"the run ended at {end:.2f} s, approach and light contact last until {self.APPROACH_END:g} s")
        release = t >= self.HOLD_END
        release_max = float(mag[release].max()) if release.any() else nan
        release_missing = "" if end >= self.RELEASE_END - 1e-9 else (
            f"the run ended at {end:.2f} s, the release is {self.HOLD_END:g}-{self.RELEASE_END:g} s")
        return [
            Check(f"max pad ‖F‖ during approach/light contact (t < {self.APPROACH_END:g} s, target 0.05 N)",
                  approach_max, "<=", self.APPROACH_LIMIT, "N", approach_missing),
            Check("pads in contact during the whole hold (7-10.5 s)", in_contact, ">=", 5, "of 5", hold_missing),
            Check("max |‖F‖ - target| during the hold", err, "<=", self.HOLD_TOLERANCE, "N", hold_missing),
            Check("mean ‖F‖ during the hold (target 0.5 N)", mean, ">=", 0.49, "N", hold_missing),
            Check(f"max pad ‖F‖ during release (t >= {self.HOLD_END:g} s)", release_max, "<=",
                  self.F_END + self.HOLD_TOLERANCE, "N", release_missing),
            Check(f"frames with all forces exactly zero after release (t >= {self.ZERO_FROM:g} s)", zero, "==", 100.0,
                  "% of frames", "" if self.zero_after_release else f"the run ended at {end:.2f} s", limit_unit="%"),
            Check("max |‖F‖ - target| in 8-10.3 s (settled)", win_err, "<=", self.WINDOW_TOLERANCE, "N",
                  win_missing),
            Check("max pad-centre height difference (world z) in 8-10.3 s", spread, "<=", self.MAX_HEIGHT_SPREAD, "mm",
                  win_missing),
            Check("min thumb-finger pad-normal opposition angle in 8-10.3 s", opposition, ">=", self.MIN_OPPOSITION,
                  "deg", win_missing),
        ]
