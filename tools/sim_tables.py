"""Issue-21 measurements of the simulated pads (prints tables; `--figures DIR` saves taxel maps).

    python tools/sim_tables.py penetration      # MuJoCo penetration vs the layer model (10–500 g, 8 N edge)

Not part of the package: a measuring script over `wuji_tactile_device.producers.sim`.
"""
from __future__ import annotations

import argparse
import sys

import mujoco
import numpy as np

from wuji_tactile_device.producers.sim.contact_model import LAYER_THICKNESS
from wuji_tactile_device.producers.sim.hand_sim import HandSimulation
from wuji_tactile_device.producers.sim.model import build_hand_spec
from wuji_tactile_device.producers.sim.scenarios.base import _pad_points
from wuji_tactile_device.hands.wuji_hand2 import NUM_ACTUATED_JOINTS, hand_kinematics

SIDE = "right"
MOUNT = np.array([0.0, 0.0, 0.3])


def _finger_pose() -> np.ndarray:
    q = np.zeros(NUM_ACTUATED_JOINTS)
    q[4:8] = (0.6, 0.0, 0.65, 0.4)          # index flexed (the slip scenario's pose)
    return q


def pressed_object(kind: str, mass: float, force: float, *, layer_compliance: bool = True,
                   tilt_deg: float = 0.0, seconds: float = 1.5, axis: np.ndarray | None = None):
    """An object of `kind` (sphere R 10 mm | box) and `mass` [kg], on a slide along the index pad's normal, no gravity, pushed into the
    index pad's centre with `force` [N] along the pad normal; returns (MuJoCo penetration [m],
    solver normal force [N], the layer model's approach δ [m] for that contact, sim)."""
    q = _finger_pose()
    spec = build_hand_spec(SIDE, lift_kp=4e4)
    spec.option.gravity = [0.0, 0.0, 0.0]
    c, n, R = _pad_points(SIDE, q)["index"]
    push = n if axis is None else axis       # slide and push direction (outward contact normal)
    body = spec.worldbody.add_body(name="obj")
    # A slide along the pad normal: a free body rolls off the convex pad; the slide keeps the
    # object's inverse mass 1/m along the normal, which is what sets MuJoCo's penetration.
    body.add_joint(name="obj_slide", type=mujoco.mjtJoint.mjJNT_SLIDE, axis=list(push))
    if kind == "sphere":
        size, gtype = [0.01, 0, 0], mujoco.mjtGeom.mjGEOM_SPHERE
        centre = MOUNT + c + n * size[0]
        quat = [1, 0, 0, 0]
    else:                                   # a box face (or, tilted, an edge) on the pad
        size, gtype = [0.004, 0.006, 0.004], mujoco.mjtGeom.mjGEOM_BOX
        t = np.radians(tilt_deg)
        Rb = np.stack([R[:, 0], np.cross(n, R[:, 0]), n], axis=1)
        # tilted about its own axis across the finger: the lowest edge crosses the pad cylinder
        Rt = Rb @ np.array([[1, 0, 0], [0, np.cos(t), -np.sin(t)], [0, np.sin(t), np.cos(t)]])
        qb = np.zeros(4)
        mujoco.mju_mat2Quat(qb, np.ascontiguousarray(Rt).ravel())
        quat = list(qb)
        reach = float(np.abs(Rt.T @ n) @ np.asarray(size))
        centre = MOUNT + c + n * (reach + 1e-4)
    body.pos = list(centre)
    body.quat = quat
    body.add_geom(name="obj_geom", type=gtype, size=size, mass=mass, friction=[1.0, 0.005, 0.0001], condim=4)
    sim = HandSimulation(SIDE, spec, ["obj_geom"], layer_compliance=layer_compliance)
    sim.data.qpos[sim.qpos_adr] = q          # start in the pose (the object sits at the pad)
    # Hold the finger on its joint limits (range = the pose ± 1 mrad): the servos would yield
    # under 8 N; the penetration does not depend on how the finger is held (Â is fixed).
    jnt = [sim.model.joint(n).id for n in hand_kinematics(SIDE).joint_names]
    sim.model.jnt_range[jnt] = np.stack([q - 1e-3, q + 1e-3], axis=1)
    sim.set_joint_targets(q)
    sim.set_lift(0.0)
    mujoco.mj_forward(sim.model, sim.data)
    bid = sim.model.body("obj").id
    frames = int(seconds / 0.01)
    for k in range(frames):
        ramp = min(1.0, (k + 1) / (0.5 * frames))
        sim.data.xfrc_applied[bid, :3] = -push * force * ramp
        sim.step_frame()
    d = sim.data
    obj = sim.object_geom_ids[0]
    g = d.contact.geom[:d.ncon]
    sel = np.flatnonzero(((g == obj).any(axis=1)) & (d.contact.efc_address[:d.ncon] >= 0))
    pen = float(-d.contact.dist[sel].min()) if sel.size else 0.0
    fn = 0.0
    for i in sel:
        f6 = np.zeros(6)
        mujoco.mj_contactForce(sim.model, d, int(i), f6)
        fn += f6[0]
    return pen, fn, _layer_delta(sim, fn), sim


def contact_normal(sim: HandSimulation) -> np.ndarray:
    """World outward normal of the (first) pad–object contact, from the pad to the object."""
    d = sim.data
    i = int(np.flatnonzero((d.contact.geom[:d.ncon] == sim.object_geom_ids[0]).any(axis=1))[0])
    nrm = d.contact.frame[i][:3].copy()
    return nrm if d.contact.geom[i][1] == sim.object_geom_ids[0] else -nrm


def _layer_delta(sim: HandSimulation, fn: float) -> float:
    """The distributed model's approach δ for the index pad's object contact (its own quadrature)."""
    cm = sim.contacts.distributed
    pad = np.array([1])
    geom = sim.object_geom_ids[:1]
    quad = cm.pixel_quad
    local = cm._transforms(sim.data, pad, geom) @ quad.points_h.take(pad, axis=0)
    sdf = cm._sdf(geom, local)
    _, _, lam = cm.weights(sim.data, quad, pad, geom, np.array([fn]))
    return float(lam[0] - sdf.min())


def penetration_table() -> None:
    print("| object | mass | MuJoCo penetration at 0.5 N [mm] | layer model δ [mm] | ratio | default contact [mm] |")
    print("|---|---:|---:|---:|---:|---:|")
    for kind in ("sphere", "box"):
        for mass in (0.01, 0.05, 0.1, 0.5):
            pen, fn, delta, _ = pressed_object(kind, mass, 0.5)
            pen0, _, _, _ = pressed_object(kind, mass, 0.5, layer_compliance=False)
            print(f"| {kind} | {mass * 1e3:.0f} g | {pen * 1e3:.3f} (F {fn:.3f} N) | {delta * 1e3:.3f} | {pen / delta:.3f} | {pen0 * 1e3:.3f} |")
    print()
    print("| object (100 g), layer vs default contact | push [N] | solver normal force [N] | penetration [mm] | / layer thickness |")
    print("|---|---:|---:|---:|---:|")
    for kind, tilt in (("sphere", 0.0), ("box", 0.0), ("box", 45.0)):
        for force in (0.5, 2.0, 8.0, 20.0):
            for lc in (True, False):
                pen, fn, _, _ = pressed_object(kind, 0.1, force, tilt_deg=tilt, layer_compliance=lc)
                what = f"{kind}{' edge 45°' if tilt else ''}, {'layer' if lc else 'default'}"
                if fn == 0.0:
                    print(f"| {what} | {force:g} | 0 (no contact at the end: pushed through or off) | — | — |")
                else:
                    print(f"| {what} | {force:g} | {fn:.2f} | {pen * 1e3:.3f} | {pen / LAYER_THICKNESS:.2f} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table", choices=["penetration"])
    a = ap.parse_args(argv)
    if a.table == "penetration":
        penetration_table()
    return 0


if __name__ == "__main__":
    sys.exit(main())
