"""A held fixture for MuJoCo's pad penetration (shared by tests/test_sim_compliance.py and
`tools/sim_tables.py penetration`).

An object on a slide along the index pad's outward normal (it can move only into and out of the
pad: it cannot roll or slide off the convex pad), no gravity, pushed with a fixed force. The finger
is held rigidly in a flexed pose: its joints sit on limits of ±10 µrad around the pose and those
limits are made hard (impedance 0.9999, 2 ms), so even 8 N on a box edge neither tilts a face
nor lets an edge slip off the finger. The penetration does not depend on how the finger is held:
MuJoCo's diagonal approximation Â of the pair (which sets it) is fixed at compile time.
"""
from __future__ import annotations

import mujoco
import numpy as np

from wuji_tactile_device.hands.wuji_hand2 import NUM_ACTUATED_JOINTS, hand_kinematics
from wuji_tactile_device.producers.sim.hand_sim import HandSimulation
from wuji_tactile_device.producers.sim.model import build_hand_spec
from wuji_tactile_device.producers.sim.taxels import PAD_BOUNDARY, PAD_TOP_Z, pad_taxels

SIDE = "right"
INDEX = 1
#: The objects measured: (kind, size [m], MuJoCo geom type). Box: an 8 × 12 × 8 mm block, its
#: 8 × 12 face on the pad with the 12 mm side along the finger; plate: a 13 × 17 mm face (17 mm
#: along the finger, longer than the pad); cylinder: R 5 mm, axis across the finger; edge: a
#: 10 mm cube on one edge, the edge across the finger.
SHAPES = {
    "sphere": ([0.010, 0.0, 0.0], mujoco.mjtGeom.mjGEOM_SPHERE),
    "box": ([0.004, 0.006, 0.004], mujoco.mjtGeom.mjGEOM_BOX),
    "plate": ([0.0065, 0.0085, 0.004], mujoco.mjtGeom.mjGEOM_BOX),
    "cylinder": ([0.005, 0.010, 0.0], mujoco.mjtGeom.mjGEOM_CYLINDER),
    "edge": ([0.005, 0.005, 0.005], mujoco.mjtGeom.mjGEOM_BOX),
}
#: Where the object touches the pad along the finger (distal z) [m]: the middle of the pad's
#: cylindrical part, so a 12 mm face lies on the cylinder from end to end.
CONTACT_Z = 0.5 * ((PAD_TOP_Z - PAD_BOUNDARY) + (-0.0185))


def finger_pose() -> np.ndarray:
    """The index finger flexed (the slip scenario's pose), every other joint at 0 [rad]."""
    q = np.zeros(NUM_ACTUATED_JOINTS)
    q[4:8] = (0.6, 0.0, 0.65, 0.4)
    return q


def _rot_x(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1.0, 0, 0], [0, c, -s], [0, s, c]])


def _distal_pose(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World position and rotation of the index distal body in pose `q` (hand on its mount)."""
    model = build_hand_spec(SIDE, lift_kp=4e4).compile()
    data = mujoco.MjData(model)
    names = hand_kinematics(SIDE).joint_names
    for name, v in zip(names, q, strict=True):
        data.qpos[model.jnt_qposadr[model.joint(name).id]] = v
    mujoco.mj_kinematics(model, data)
    b = model.body(hand_kinematics(SIDE).fingers[INDEX].links[3].body).id
    return data.xpos[b].copy(), data.xmat[b].reshape(3, 3).copy()


def pressed_object(kind: str, mass: float, force: float, *, layer_compliance: bool = True,
                   tilt_deg: float = 0.0, seconds: float = 1.5):
    """Object `kind` (a key of `SHAPES`) of `mass` [kg] pushed into the index pad with `force` [N]
    along the pad's outward normal at (0, r, `CONTACT_Z`) of the distal frame. `tilt_deg` turns a
    box / plate about the finger's cross axis (its face then meets the pad at one end). Returns
    (MuJoCo's penetration = deepest active contact [m], solver normal force summed over the
    contacts [N], number of active contacts, the layer model's approach δ for this contact and
    force [m], the simulation)."""
    size, gtype = SHAPES[kind]
    q = finger_pose()
    p_d, R_d = _distal_pose(q)
    geo = pad_taxels(SIDE)[INDEX].geometry
    n_loc = np.array([0.0, geo.pad_side, 0.0])
    x_loc = np.array([1.0, 0.0, 0.0])
    # object axes in the distal frame: local z along the pad normal (box, plate), x across
    base = np.stack([x_loc, np.cross(n_loc, x_loc), n_loc], axis=1)
    if kind == "sphere":
        R_o, reach = np.eye(3), size[0]
    elif kind == "cylinder":                  # axis (local z) across the finger
        R_o, reach = np.stack([np.cross(n_loc, x_loc), n_loc, x_loc], axis=1), size[0]
    elif kind == "edge":                      # 45° about the edge direction (distal x)
        R_o = base @ _rot_x(np.pi / 4)
        reach = float(np.abs(R_o.T @ n_loc) @ np.asarray(size))
    else:
        R_o = base @ _rot_x(np.radians(tilt_deg))
        reach = float(np.abs(R_o.T @ n_loc) @ np.asarray(size))
    surface = np.array([0.0, geo.pad_side * geo.radius, CONTACT_Z])
    centre = p_d + R_d @ (surface + n_loc * (reach + 1e-4))
    push = R_d @ n_loc
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(R_d @ R_o).ravel())

    spec = build_hand_spec(SIDE, lift_kp=4e4)
    spec.option.gravity = [0.0, 0.0, 0.0]
    body = spec.worldbody.add_body(name="obj", pos=list(centre), quat=list(quat))
    body.add_joint(name="obj_slide", type=mujoco.mjtJoint.mjJNT_SLIDE, axis=list(R_o.T @ n_loc))
    body.add_geom(name="obj_geom", type=gtype, size=list(size), mass=mass, friction=[1.0, 0.005, 0.0001], condim=4)
    sim = HandSimulation(SIDE, spec, ["obj_geom"], layer_compliance=layer_compliance)
    m, d = sim.model, sim.data
    d.qpos[sim.qpos_adr] = q
    jnt = [m.joint(j).id for j in hand_kinematics(SIDE).joint_names]
    m.jnt_range[jnt] = np.stack([q - 1e-5, q + 1e-5], axis=1)
    m.jnt_solref[jnt] = (0.002, 1.0)
    m.jnt_solimp[jnt] = (0.9999, 0.9999, 0.001, 0.5, 2.0)
    sim.set_joint_targets(q)
    sim.set_lift(0.0)
    mujoco.mj_forward(m, d)
    bid = m.body("obj").id
    frames = int(seconds / 0.01)
    for k in range(frames):
        sim.data.xfrc_applied[bid, :3] = -push * force * min(1.0, (k + 1) / (0.5 * frames))
        sim.step_frame()
    obj = int(sim.object_geom_ids[0])
    sel = [i for i in range(d.ncon) if obj in d.contact.geom[i] and d.contact.efc_address[i] >= 0]
    fn = 0.0
    for i in sel:
        f6 = np.zeros(6)
        mujoco.mj_contactForce(m, d, i, f6)
        fn += f6[0]
    pen = float(-d.contact.dist[sel].min()) if sel else 0.0
    return pen, fn, len(sel), layer_delta(sim, fn), sim


def layer_delta(sim: HandSimulation, fn: float) -> float:
    """The distributed model's approach δ [m] for the index pad's object contact under normal
    force `fn` [N] (its own quadrature on the 0.5 mm image grid, the object where MuJoCo has it)."""
    cm = sim.contacts.distributed
    pad = np.array([INDEX])
    geom = sim.object_geom_ids[:1]
    local = cm._transforms(sim.data, pad, geom) @ cm.pixel_quad.points_h.take(pad, axis=0)
    sdf = cm._sdf(geom, local)
    _, _, lam = cm.weights(sim.data, cm.pixel_quad, pad, geom, np.array([fn]))
    return float(lam[0] - sdf.min())
