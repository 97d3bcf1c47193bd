"""What every scenario shares: the frame period, checks and their report, the `Scenario` base
class, and the closing-direction / force-feedback helpers the grasping scenarios use."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import mujoco
import numpy as np

from ....hands.wuji_hand2 import FINGERS, NUM_ACTUATED_JOINTS, hand_kinematics, link_transforms
from ..hand_sim import HandSimulation
from ..model import SERVO
from ..taxels import pad_taxels

if TYPE_CHECKING:
    from ..sensor_model import SensorModel


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
    for f, pad in zip(hand_kinematics(side).fingers, pad_taxels(side), strict=True):
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
    sensor_model: SensorModel | None = None

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
