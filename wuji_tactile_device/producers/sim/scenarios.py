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


def _vecmat_rows(R: np.ndarray, v: np.ndarray) -> np.ndarray:
    """(K, 3) R[k] @ v[k] for rotations R (K, 3, 3) and vectors v (K, 3)."""
    return np.einsum("kij,kj->ki", R, v)


def _level_pads_rotation(centres: np.ndarray) -> np.ndarray:
    """Rotation (wrist → world) turning the best-fit plane of `centres` (N, 3) horizontal by the
    smallest turn (fingers keep pointing roughly down)."""
    u = np.linalg.svd(centres - centres.mean(axis=0))[2][2]
    u = u if u[2] >= 0 else -u                          # the plane normal closest to world +z
    z = np.array([0.0, 0.0, 1.0])
    axis = np.cross(u, z)
    s, c = np.linalg.norm(axis), float(u @ z)
    if s < 1e-12:
        return np.eye(3)
    k = axis / s
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + s * K + (1 - c) * K @ K


def _add_box(body, name: str, centre, R: np.ndarray, half, rgba) -> None:
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(R).ravel())
    body.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_BOX, pos=list(centre), quat=list(q), size=list(half),
                  friction=[1.0, 0.005, 0.0001], condim=4, rgba=rgba)


class Scenario:
    """A scripted run. `contact_model` ("distributed" | "gaussian") and `sensor_model` (a
    `SensorModel` or None) are passed to the `HandSimulation` it builds."""

    name = ""
    duration_s = 0.0
    contact_model = "distributed"
    sensor_model = None

    def simulation(self, side: str, spec: mujoco.MjSpec, object_geoms) -> HandSimulation:
        return HandSimulation(side, spec, object_geoms, contact_model=self.contact_model,
                              sensor_model=self.sensor_model)

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


# ------------------------------------------------------------------------------------------------
class LiftScenario(Scenario):
    """Thumb and index pinch a 30 g block on a pedestal and the hand lifts it 80 mm."""

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
        self.exact_zero.append(bool(not reading.taxel_forces.any() and not reading.resultants.any()))

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
            (R0, x0), (R1, x1) = self.pose[i0], self.pose[i1]
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


# ------------------------------------------------------------------------------------------------
class SlipScenario(Scenario):
    """A plate dragged under the index pad at constant normal load: stick, then slip.

    The index finger closes onto a plate on a servo slide (guarded approach as in `press`) and
    holds 0.3 N normal by feedback on the pad-frame normal component; from 3 s the slide drags the
    plate across the pad (distal x) at 10 mm/s. The finger's abduction servo lets the pad follow
    (stick: friction builds) until the friction reaches μ·normal, then the pad slides. Checks:
    tangential ≤ μ·normal at the pad level, the stick (no relative motion) and the slip (relative
    speed ≈ drag speed), the onset time, the normal load held, and the shear visible in the taxels."""

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


# ------------------------------------------------------------------------------------------------
class NailContactScenario(Scenario):
    """The sensing mask under test: the open hand between two fixed plates, one touching the
    index finger's nail side, one the middle finger's pad. The index MCP servo extends the finger
    into its plate (a real, loaded contact on the back of the distal segment), the middle MCP
    servo flexes into its plate. The index pad must report exactly nothing while the solver
    carries a force there; the middle pad must report its solver force (the mask is not simply
    rejecting everything)."""

    name = "nail-contact"
    duration_s = 1.0
    SETTLE_S = 0.3      # checks judge the frames from here on
    PUSH = 0.08         # [rad] MCP target into each plate
    MIN_FORCE = 0.05    # [N] the contacts must really be loaded

    def build(self, side: str, seed: int) -> HandSimulation:
        rng = np.random.default_rng(seed)
        self.side = side
        spec = build_hand_spec(side)
        mount = np.array([0.0, 0.0, 0.3])
        T = link_transforms(side)
        fingers = hand_kinematics(side).fingers
        names = []
        for finger, back in (("index", True), ("middle", False)):
            k = FINGERS.index(finger)
            pad = pad_taxels(side)[k]
            Td = T[fingers[k].pad_body]
            flip = np.array([1.0, -1.0 if back else 1.0, 1.0])
            n = Td[:3, :3] @ (np.array([0.0, pad.geometry.pad_side, 0.0]) * flip)
            c = mount + Td[:3, :3] @ (pad.pad_origin * flip) + Td[:3, 3]
            R = Td[:3, :3]
            Rb = np.stack([R[:, 0], np.cross(n, R[:, 0]), n], axis=1)
            half_t = 0.004
            name = f"nail_test_{finger}_plate"
            _add_box(spec.worldbody, name, c + n * half_t + rng.uniform(-1e-4, 1e-4, 3) * n, Rb,
                     (0.005, 0.005, half_t), [0.8, 0.4, 0.3, 1])
            names.append(name)
        sim = self.simulation(side, spec, names)
        self.plates = [sim.model.geom(n).id for n in names]
        self.distal_geoms = [sim.model.geom(f"{fingers[k].links[3].body}_collision").id for k in (1, 2)]
        self.t, self.index_solver, self.index_out, self.rejected = [], [], [], []
        self.middle_solver, self.middle_out = [], []
        q = np.zeros(NUM_ACTUATED_JOINTS)
        q[4] = -self.PUSH                    # index MCP extends: the nail side meets its plate
        q[8] = self.PUSH                     # middle MCP flexes: the pad meets its plate
        self.q = q
        return sim

    def control(self, sim: HandSimulation, t: float) -> None:
        sim.set_joint_targets(self.q)

    def observe(self, sim: HandSimulation, reading, t: float) -> None:
        ids = np.array
        self.t.append(t)
        self.index_solver.append(float(np.linalg.norm(
            sim.object_support_force(ids([self.plates[0]]), ids([self.distal_geoms[0]])))))
        self.middle_solver.append(sim.object_support_force(ids([self.plates[1]]), ids([self.distal_geoms[1]])))
        self.index_out.append(float(np.abs(reading.taxel_forces[40:74]).max() + np.abs(reading.resultants[1]).max()))
        self.middle_out.append(reading.pad_forces_world[2].copy())
        self.rejected.append(reading.num_rejected)

    def checks(self) -> list[Check]:
        t = np.array(self.t)
        judged = t >= self.SETTLE_S
        nan = float("nan")
        missing = "" if judged.any() else f"the run ended before {self.SETTLE_S:g} s"
        if judged.any():
            solver = np.array(self.index_solver)[judged]
            out = np.array(self.index_out)[judged]
            rej = np.array(self.rejected)[judged]
            mid_solver = np.array(self.middle_solver)[judged]
            mid_out = np.array(self.middle_out)[judged]
            solver_min, out_max = float(solver.min()), float(out.max())
            rej_pct = 100.0 * float(np.mean(rej >= 1))
            mid_min = float(np.linalg.norm(mid_out, axis=1).min())
            mid_err = float(np.abs(mid_out - mid_solver).max())
        else:
            solver_min = out_max = rej_pct = mid_min = mid_err = nan
        return [
            Check("min solver force on the index nail side (t >= 0.3 s)", solver_min, ">=", self.MIN_FORCE, "N", missing),
            Check("max |index pad output| (taxels and resultant) while it is loaded", out_max, "==", 0.0, "N", missing),
            Check("frames with the nail-side contact rejected by the mask", rej_pct, "==", 100.0, "% of frames", missing,
                  limit_unit="%"),
            Check("min middle pad ‖F‖ (palm-side control contact)", mid_min, ">=", self.MIN_FORCE, "N", missing),
            Check("max |middle pad world force - solver force|", mid_err, "<=", 1e-9, "N", missing),
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
        press.contact_model, press.sensor_model = self.contact_model, self.sensor_model
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


SCENARIOS = ("press", "lift", "playback", "nail-contact", "grasp-sphere", "grasp-cylinder", "grasp-box",
             "release", "slip", "roll")


def make_scenario(name: str, *, playback_file: str | Path | None = None, playback_rate: float = 100.0) -> Scenario:
    if name == "press":
        return PressScenario()
    if name == "lift":
        return LiftScenario()
    if name == "nail-contact":
        return NailContactScenario()
    if name == "roll":
        return RollScenario()
    if name == "slip":
        return SlipScenario()
    if name == "release":
        return ReleaseScenario()
    if name.startswith("grasp-") and name[len("grasp-"):] in GraspScenario.SHAPES:
        return GraspScenario(name[len("grasp-"):])
    if name == "playback":
        if playback_file is None:
            raise ProducerError("scenario playback needs a joint file (--joints FILE)")
        return PlaybackScenario(load_joint_file(playback_file), playback_rate)
    raise ProducerError(f"unknown scenario {name!r}; choose one of {', '.join(SCENARIOS)}")
