"""`nail-contact`: a contact on the nail side, which the sensing mask must reject (with a
palm-side control contact that must be read)."""
from __future__ import annotations

import numpy as np

from ....hands.wuji_hand2 import FINGERS, NUM_ACTUATED_JOINTS, hand_kinematics, link_transforms
from ..hand_sim import HandSimulation
from ..model import build_hand_spec
from ..taxels import pad_taxels
from .base import Check, Scenario, _add_box


# ------------------------------------------------------------------------------------------------
class NailContactScenario(Scenario):
    """The sensing mask under test: the open hand between two fixed plates, one touching the
    index finger's nail side, one the middle finger's pad. The index MCP servo extends the finger
    into its plate (a real, loaded contact on the back of the distal segment), the middle MCP
    servo flexes into its plate. The index pad must report exactly nothing while the solver
    carries a force there; the middle pad must report its solver force (the mask is not simply
    rejecting everything)."""

    # the measured series, one entry per observed frame (set in build(), appended by observe())
    t: list[float]
    index_solver: list[float]
    index_out: list[float]
    rejected: list[int]
    middle_solver: list[np.ndarray]
    middle_out: list[np.ndarray]

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
        self.index_out.append(float(np.abs(reading.true_taxel_forces[40:74]).max() + np.abs(reading.resultants[1]).max()))
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
