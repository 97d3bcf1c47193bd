"""Scenarios for the simulated hand, each with the checks it prints at the end.

- `press`: the thumb opposes the four fingers on a fixed object; 0–3 s approach and light
  contact, 3–7 s per-finger target ramp 0.05 → 0.50 N, 7–10.5 s hold, then release. Force is
  reached by feeding the measured pad resultant magnitude back into the joint targets (never by
  scaling outputs).
- `lift`: thumb and index pinch a 30 g free block on a pedestal, grip by the same feedback, and
  the hand mount lifts it 80 mm; while airborne the world-vertical force the pads carry must equal
  the block's weight and the pedestal must carry nothing.
- `playback`: joint targets from a file (20 angles per row, firmware order) at a given rate.

Object placement comes from the hand's forward kinematics at a pre-grasp pose, jittered by up to
±0.2 mm from the seed (same seed → bit-identical run).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import mujoco
import numpy as np

from ...errors import ProducerError
from ...hands.wuji_hand2 import FINGERS, NUM_ACTUATED_JOINTS, hand_kinematics, link_transforms
from .hand_sim import HandSimulation
from .model import SERVO, build_hand_spec
from .taxels import pad_taxels

GRAVITY = 9.81
BLOCK_MASS = 0.030
FRAME_S = 0.01


@dataclass
class Check:
    """One scenario check: `value` compared with `limit` by `op` ('<=', '>=', '==').

    `missing`: why the phase the check judges was not (fully) simulated, e.g. a run stopped
    before the hold; such a check fails whatever its value, and says why."""

    name: str
    value: float
    op: str
    limit: float
    unit: str = ""
    missing: str = ""
    limit_unit: str | None = None   # unit printed after the limit (default: `unit`)

    @property
    def passed(self) -> bool:
        if self.missing:
            return False
        if self.op == "<=":
            return self.value <= self.limit
        if self.op == ">=":
            return self.value >= self.limit
        return self.value == self.limit

    def line(self) -> str:
        unit = self.unit if self.limit_unit is None else self.limit_unit
        op = "" if self.op == "==" else f"{self.op} "
        required = f"(required {op}{self.limit:g}{(' ' + unit) if unit else ''})"
        if self.missing and not np.isfinite(self.value):
            return f"[FAIL] {self.name}: not reached — {self.missing} {required}"
        value = f"{self.value:.6g}{(' ' + self.unit) if self.unit else ''}"
        if self.missing:
            return f"[FAIL] {self.name}: {value}, incomplete — {self.missing} {required}"
        return f"[{'PASS' if self.passed else 'FAIL'}] {self.name}: {value} {required}"


@dataclass
class ScenarioResult:
    scenario: str
    side: str
    frames: int
    checks: list[Check] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def report(self) -> str:
        head = f"scenario {self.scenario} ({self.side} hand, {self.frames} frames, {self.frames * FRAME_S:.2f} s simulated)"
        return "\n".join([head] + ["  " + c.line() for c in self.checks])


def _smoothstep(x: float) -> float:
    x = min(max(x, 0.0), 1.0)
    return x * x * x * (10 - 15 * x + 6 * x * x)  # minimum-jerk profile


def _pad_points(side: str, q: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per finger: (pad centre on the surface, outward pad normal, distal rotation), wrist frame."""
    T = link_transforms(side, q)
    out = {}
    for f, pad in zip(hand_kinematics(side).fingers, pad_taxels(side)):
        Td = T[f.pad_body]
        n = Td[:3, :3] @ np.array([0.0, pad.geometry.pad_side, 0.0])
        out[f.finger] = (Td[:3, :3] @ pad.pad_origin + Td[:3, 3], n, Td[:3, :3])
    return out


def _closing_directions(side: str, q: np.ndarray, joints: dict[str, list[int]],
                        servo_kp: np.ndarray | None = None) -> np.ndarray:
    """(5, 20) joint-space directions moving each pad centre 1 m along its outward normal, from
    finite differences of the kinematics, over each finger's `joints`.

    `servo_kp` None: the least-squares (minimum-norm) direction. Given the 20 position-servo
    gains [N·m/rad]: the compliance-weighted direction K⁻¹·Jᵀ·n (scaled to 1 m of normal travel
    in free space) — in contact, moving the servo targets this way changes the pad force along
    the normal only, so loading and unloading do not drag the pad sideways (friction build-up)."""
    base = _pad_points(side, q)
    out = np.zeros((5, NUM_ACTUATED_JOINTS))
    eps = 1e-6
    for k, f in enumerate(FINGERS):
        cols = []
        for j in joints[f]:
            dq = np.zeros(NUM_ACTUATED_JOINTS)
            dq[j] = eps
            cols.append((_pad_points(side, q + dq)[f][0] - base[f][0]) / eps)
        J, n = np.stack(cols, axis=1), base[f][1]
        if servo_kp is None:
            out[k, joints[f]] = np.linalg.pinv(J) @ n
        else:
            d = (J.T @ n) / servo_kp[joints[f]]
            out[k, joints[f]] = d / (n @ J @ d)
    return out


class _ForceFeedback:
    """Per-pad integral law on the closure c [m of pad travel along the pad normal]:
    dc = ki·(target − ‖F‖)·dt + ff·Δtarget; joint targets = q0 + Σ c·direction. `ff` ≈ 1 / pad
    stiffness along the directions removes the lag behind a ramping target; the measured force
    is the only feedback. Default gains: for the least-squares directions (stiffness measured
    once on this model: thumb ≈ 830 N/m, fingers ≈ 95 N/m); `ki`/`ff` override them.

    Options for a gentle first contact: `c0` [m] starting closure (negative: held back from the
    pre-grasp); `seek_speed` [m/s] per pad — until a pad first measures a force it closes at this
    constant speed instead (a guarded move: every mm of over-travel past first touch becomes
    0.1–0.25 N, so pads must arrive slowly); `max_speed` [m/s] limits the feedback's |dc/dt| (the
    command never runs away, whatever the force error; the seek has its own speed)."""

    KI = np.array([0.03, 0.12, 0.12, 0.12, 0.12])       # [m/(N·s)]
    FF = 0.8 * np.array([1 / 830, 1 / 95, 1 / 95, 1 / 95, 1 / 95])  # [m/N]

    def __init__(self, q0: np.ndarray, directions: np.ndarray, active: np.ndarray, *,
                 c0: np.ndarray | None = None, seek_speed: np.ndarray | None = None,
                 max_speed: float | None = None, ki: np.ndarray | None = None, ff: np.ndarray | None = None):
        self.q0, self.dirs, self.active = q0, directions, active
        self.ki = self.KI if ki is None else ki
        self.ff = self.FF if ff is None else ff
        self.c = np.zeros(5) if c0 is None else np.array(c0, dtype=np.float64)
        self.seek_speed, self.max_speed = seek_speed, max_speed
        self.touched = np.full(5, seek_speed is None)   # pads that have measured a force
        self.last_target: np.ndarray | None = None

    def command(self) -> np.ndarray:
        """Joint targets [rad] for the current closures."""
        return self.q0 + self.c @ self.dirs

    def update(self, magnitudes: np.ndarray, targets: np.ndarray) -> np.ndarray:
        step = np.zeros(5) if self.last_target is None else targets - self.last_target
        self.last_target = targets.copy()
        dc = self.ki * (targets - magnitudes) * FRAME_S + self.ff * step
        if self.max_speed is not None:
            dc = np.clip(dc, -self.max_speed * FRAME_S, self.max_speed * FRAME_S)
        if self.seek_speed is not None:
            self.touched |= magnitudes > 0
            dc = np.where(self.touched, dc, self.seek_speed * FRAME_S)
        self.c += self.active * dc
        return self.command()


def _servo_kp() -> np.ndarray:
    """(20,) position-servo gains [N·m/rad] of the hand joints, firmware order."""
    return np.array([SERVO[j % 4]["kp"] for j in range(NUM_ACTUATED_JOINTS)])


def _flex_joints(side: str) -> dict[str, list[int]]:
    out = {}
    for i, f in enumerate(hand_kinematics(side).fingers):
        out[f.finger] = [4 * i + j for j, link in enumerate(f.links) if f.finger == "thumb" or link.kind == "flex"]
    return out


def _add_box(body, name: str, centre, R: np.ndarray, half, rgba) -> None:
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(R).ravel())
    body.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_BOX, pos=list(centre), quat=list(q), size=list(half),
                  friction=[1.0, 0.005, 0.0001], condim=4, rgba=rgba)


class Scenario:
    name = ""
    duration_s = 0.0

    def build(self, side: str, seed: int) -> HandSimulation:
        raise NotImplementedError

    def control(self, sim: HandSimulation, t: float) -> None:
        """Set targets for the frame that ends at `t + 10 ms` (uses the last reading)."""
        raise NotImplementedError

    def observe(self, sim: HandSimulation, reading, t: float) -> None:
        raise NotImplementedError

    def checks(self) -> list[Check]:
        raise NotImplementedError

    @property
    def num_frames(self) -> int:
        return int(round(self.duration_s / FRAME_S))


# ------------------------------------------------------------------------------------------------
class PressScenario(Scenario):
    """Thumb opposes the four fingers on a fixed object; force ramp by resultant feedback.

    Contact is made and broken gently: the approach stops `STANDOFF` short of the pre-grasp,
    each pad then closes at `SEEK_SPEED` until it first measures a force (guarded move), the
    feedback's closure rate is limited to `MAX_SPEED`; the release first ramps the force target
    down to 0, then backs every pad off along its normal, and only then opens the hand."""

    name = "press"
    duration_s = 13.0
    APPROACH_END, RAMP_END, HOLD_END = 3.0, 7.0, 10.5
    UNLOAD_END, RETREAT_END, RELEASE_END = 11.0, 11.3, 12.0   # force → 0, back off, hand open
    ZERO_FROM = 12.0        # forces must be exactly zero from here on [s]
    F_START, F_END = 0.05, 0.50
    PRE_S = 1.2     # approach (to the pre-grasp held back by STANDOFF) ends at
    GAP = 0.003     # pad-to-object gap at the pre-grasp [m]
    STANDOFF = np.array([0.003, 0.003, 0.003, 0.003, 0.003])      # [m] approach held back by
    SEEK_SPEED = np.array([0.004, 0.012, 0.012, 0.012, 0.012])    # [m/s] guarded closing speed
    MAX_SPEED = 0.005       # [m/s] feedback closure rate limit (seek excluded)
    # Feedback gains for the compliance-weighted directions: pad stiffness along them, measured on
    # this model during the ramp, ≈ 115 N/m (thumb), 80 N/m (index, middle, ring), 85 N/m (pinky).
    KI = np.full(5, 0.15)                                       # [m/(N·s)]
    FF = 0.8 / np.array([115.0, 80.0, 80.0, 80.0, 85.0])        # [m/N]
    RETREAT = 0.005         # [m] pads back off along their normals before the hand opens
    MOUNT_KP = 4e4          # [N/m] hand mount slide servo (the lift scenario's 4000 N/m sags 2.8 mm)
    HOLD_TOLERANCE = 0.01  # [N] max |‖F‖ − target| during the hold
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
        # A stiff mount: the wrist is held in place (the press never lifts), so the fingers
        # landing on their plates cannot bounce the hand and with it the thumb's force.
        spec = build_hand_spec(side, lift_kp=self.MOUNT_KP)
        mount = np.array([0.0, 0.0, 0.3])
        body = spec.worldbody.add_body(name="press_object", pos=[0, 0, 0])
        names = []
        pads = _pad_points(side, self.q_pre)
        for f in FINGERS:
            c, n, R = pads[f]
            half_t = 0.004
            centre = mount + c + n * (self.GAP + half_t) + rng.uniform(-2e-4, 2e-4, 3)
            # Plate axes: distal x (across the pad), distal z (along the finger), pad normal.
            Rb = np.stack([R[:, 0], np.cross(n, R[:, 0]), n], axis=1)
            name = f"press_object_{f}_plate"
            _add_box(body, name, centre, Rb, (0.0065, 0.0085, half_t), [0.8, 0.6, 0.3, 1])
            names.append(name)
        sim = HandSimulation(side, spec, names)
        directions = _closing_directions(side, self.q_pre, _flex_joints(side), _servo_kp())
        self.feedback = _ForceFeedback(self.q_pre, directions, np.ones(5), c0=-self.STANDOFF,
                                       seek_speed=self.SEEK_SPEED, max_speed=self.MAX_SPEED,
                                       ki=self.KI, ff=self.FF)
        self.q_approach = self.feedback.command()
        self.c_unloaded: np.ndarray | None = None
        self.t, self.mag, self.target = [], [], []
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
        if t >= self.ZERO_FROM:
            self.zero_after_release.append(bool(np.all(reading.taxel_forces == 0) and np.all(reading.resultants == 0)))

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
        ]


# ------------------------------------------------------------------------------------------------
class LiftScenario(Scenario):
    """Thumb and index pinch a 30 g block on a pedestal and the hand lifts it 80 mm."""

    name = "lift"
    duration_s = 9.0
    PRE_S, GRIP_START, GRIP_END, LIFT_START, LIFT_END = 1.5, 3.0, 4.0, 4.5, 6.5
    HOLD_CHECK_START = 7.0
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
        block.add_geom(name="lift_block_geom", type=mujoco.mjtGeom.mjGEOM_BOX, size=list(half), mass=BLOCK_MASS,
                       friction=[1.0, 0.02, 0.0001], condim=6, rgba=[0.2, 0.5, 0.9, 1])
        ped_half = (0.007, 0.007, 0.03)
        pedestal = spec.worldbody.add_body(name="pedestal", pos=[centre_w[0], centre_w[1], centre_w[2] - half[2] - ped_half[2]])
        pedestal.add_geom(name="pedestal_geom", type=mujoco.mjtGeom.mjGEOM_BOX, size=list(ped_half),
                          friction=[1.0, 0.005, 0.0001], rgba=[0.4, 0.4, 0.4, 1])
        sim = HandSimulation(side, spec, ["lift_block_geom"])
        self.block_geom = np.array([sim.model.geom("lift_block_geom").id])
        self.pedestal_geom = np.array([sim.model.geom("pedestal_geom").id])
        self.block_body = sim.model.body("lift_block").id
        self.z0 = float(sim.data.xpos[self.block_body][2])
        active = np.array([1.0, 1.0, 0.0, 0.0, 0.0])
        self.feedback = _ForceFeedback(self.q_pre, _closing_directions(side, self.q_pre, _flex_joints(side)), active)
        self.t, self.support, self.pedestal, self.height, self.mag = [], [], [], [], []
        self.last = np.zeros(5)
        return sim

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
        air = (t >= self.HOLD_CHECK_START) & (h > 0.001)
        nan = float("nan")
        # The airborne checks judge the hold after the lift: a run that stops earlier fails them.
        air_missing = "" if end >= self.duration_s - 1e-9 else (
            f"the run ended at {end:.2f} s, the airborne hold is {self.HOLD_CHECK_START:g}-{self.duration_s:g} s")
        if air.any():
            rel = float(np.max(np.abs(support[air] - weight)) / weight)
            mean, ped_max = float(support[air].mean()), float(np.max(np.abs(ped[air])))
        else:
            rel = mean = ped_max = nan
            air_missing = air_missing or "the block never left the pedestal after 7 s"
        return [
            Check("block lifted (height gain at the end)", 1e3 * float(h[-1]) if len(h) else nan, ">=", 75.0, "mm",
                  "" if end >= self.LIFT_END - 1e-9 else f"the run ended at {end:.2f} s, the lift ends at {self.LIFT_END:g} s"),
            Check("airborne hold frames (t >= 7 s, block off the pedestal)", float(air.sum()), ">=", 150, "frames"),
            Check("max |pad world-vertical support - weight 0.2943 N| / weight while airborne", rel, "<=", 0.02,
                  "", air_missing),
            Check("mean pad world-vertical support while airborne", mean, ">=", 0.98 * weight, "N", air_missing),
            Check("max pedestal support while airborne", ped_max, "==", 0.0, "N", air_missing),
        ]


# ------------------------------------------------------------------------------------------------
def load_joint_file(path: str | Path) -> np.ndarray:
    """(T, 20) joint angles [rad] from a CSV/whitespace text file (one row per sample, firmware
    order, '#' comments, optional header row) or a `.npy` array."""
    path = Path(path)
    if not path.exists():
        raise ProducerError(f"playback file {str(path)!r} does not exist")
    if not path.is_file():
        raise ProducerError(f"playback file {str(path)!r} is not a regular file")
    if path.suffix == ".npy":
        try:
            q = np.load(path, allow_pickle=False)
        except (ValueError, OSError, EOFError) as exc:  # object arrays, corrupt or cut-off .npy
            raise ProducerError(f"playback file {str(path)!r} is not a readable numeric .npy array ({exc})") from None
        if not isinstance(q, np.ndarray) or q.dtype.kind not in "fiu":
            raise ProducerError(f"playback file {str(path)!r}: need a numeric array of joint angles, got "
                                f"{getattr(q, 'dtype', type(q).__name__)}")
    else:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError) as exc:
            raise ProducerError(f"playback file {str(path)!r} is not UTF-8 text (CSV) nor .npy ({exc})") from None
        rows = []
        for lineno, line in enumerate(text.splitlines(), 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.replace(",", " ").split()
            try:
                rows.append([float(p) for p in parts])
            except ValueError:
                if rows:
                    raise ProducerError(f"playback file {str(path)!r} line {lineno}: not numbers: {line[:60]!r}") from None
                continue  # header row
            if len(rows[-1]) != NUM_ACTUATED_JOINTS:
                raise ProducerError(f"playback file {str(path)!r} line {lineno}: {len(rows[-1])} values, "
                                    f"need {NUM_ACTUATED_JOINTS} joint angles in firmware order")
        q = np.array(rows, dtype=np.float64).reshape(-1, NUM_ACTUATED_JOINTS)
    if q.ndim != 2 or q.shape[1] != NUM_ACTUATED_JOINTS or q.shape[0] == 0:
        raise ProducerError(f"playback file {str(path)!r}: need rows of {NUM_ACTUATED_JOINTS} angles, got shape {q.shape}")
    if not np.all(np.isfinite(q)):
        raise ProducerError(f"playback file {str(path)!r}: non-finite joint angle in row {int(np.argwhere(~np.isfinite(q))[0, 0])}")
    return q


class PlaybackScenario(Scenario):
    """Joint targets from a file at `rate_hz` (linear interpolation), with the press object."""

    name = "playback"

    def __init__(self, joints: np.ndarray, rate_hz: float):
        if not (isinstance(rate_hz, (int, float)) and 1e-3 <= rate_hz <= 1e6):  # NaN fails too
            raise ValueError(f"playback rate must be a finite number of rows per second in [0.001, 1e6], got {rate_hz!r}")
        self.joints, self.rate = np.asarray(joints, dtype=np.float64), float(rate_hz)
        self.duration_s = (len(self.joints) - 1) / self.rate + 0.5

    def build(self, side: str, seed: int) -> HandSimulation:
        ranges = hand_kinematics(side).joint_ranges
        out = (self.joints < ranges[:, 0] - 1e-9) | (self.joints > ranges[:, 1] + 1e-9)
        if out.any():
            r, j = np.argwhere(out)[0]
            raise ProducerError(f"playback row {r}: joint {hand_kinematics(side).joint_names[j]} = "
                                f"{self.joints[r, j]:.4f} rad is outside its range {ranges[j].tolist()}")
        press = PressScenario()
        sim = press.build(side, seed)
        self.frames_with_contact = 0
        self.finite = True
        self.last_t = 0.0
        self.times = np.arange(len(self.joints)) / self.rate
        return sim

    def control(self, sim: HandSimulation, t: float) -> None:
        q = np.array([np.interp(t + FRAME_S, self.times, self.joints[:, j]) for j in range(NUM_ACTUATED_JOINTS)])
        self.q_target = q
        sim.set_joint_targets(q)

    def observe(self, sim: HandSimulation, reading, t: float) -> None:
        self.frames_with_contact += int(reading.num_contacts > 0)
        self.finite &= bool(np.isfinite(reading.taxel_forces).all())
        self.last_t = t

    def checks(self) -> list[Check]:
        played = int(np.sum(self.times <= self.last_t + 1e-9))
        return [Check("file rows reached by the simulation clock", float(played), "==", float(len(self.joints)), "rows"),
                Check("all forces finite", float(self.finite), "==", 1.0),
                Check("frames with pad contact (information)", float(self.frames_with_contact), ">=", 0, "frames")]


SCENARIOS = ("press", "lift", "playback")


def make_scenario(name: str, *, playback_file: str | Path | None = None, playback_rate: float = 100.0) -> Scenario:
    if name == "press":
        return PressScenario()
    if name == "lift":
        return LiftScenario()
    if name == "playback":
        if playback_file is None:
            raise ProducerError("scenario playback needs a joint file (--joints FILE)")
        return PlaybackScenario(load_joint_file(playback_file), playback_rate)
    raise ProducerError(f"unknown scenario {name!r}; choose one of {', '.join(SCENARIOS)}")
