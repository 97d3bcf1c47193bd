"""Static pad–object configurations for the distributed contact model (shared by its tests and
the footprint tables/maps in docs/sim.md)."""
from __future__ import annotations

import os

import mujoco
import numpy as np
import pytest

from wuji_tactile_device.hands import wuji_hand2 as wh
from wuji_tactile_device.producers.sim.contact_forces import ContactForceModel
from wuji_tactile_device.producers.sim.contact_model import NATIVE_AVAILABLE, DistributedContact
from wuji_tactile_device.producers.sim.hand_sim import HandSimulation
from wuji_tactile_device.producers.sim.model import build_hand_spec
from wuji_tactile_device.producers.sim.taxels import pad_taxels

MOUNT = np.array([0.0, 0.0, 0.3])
INDEX = 1
CONTACT_Z = -0.012      # contact point on the cylindrical part of the index pad (distal frame) [m]

needs_native = pytest.mark.skipif(not NATIVE_AVAILABLE and os.environ.get("WUJI_REQUIRE_NATIVE") != "1",
                                  reason="the compiled read was not built in this install (no C compiler)")


def numpy_twin(model: ContactForceModel) -> ContactForceModel:
    """The same hand and objects read by the numpy backend."""
    twin = ContactForceModel(model.model, model.side, model._object_geoms)
    twin.distributed = DistributedContact(model.model, twin.pads, twin.distal_bodies, twin._object_geoms,
                                          backend="numpy")
    return twin


def _rot(axis: np.ndarray, angle: float) -> np.ndarray:
    axis = axis / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def object_on_index_pad(kind: str, *, side: str = "right", angle_deg: float = 0.0, radius: float = 0.010):
    """A static `HandSimulation` (open hand, `mj_forward` only) with one object geom touching the
    index pad at (0, ±r, CONTACT_Z) of the distal frame, and the object geom id.

    kind: 'sphere' (radius), 'plate' (box face, 13 × 17 mm, parallel to the finger axis),
    'cylinder' (radius, axis across the finger turned by angle_deg), 'edge' (a box edge across the
    finger, turned by angle_deg about the pad normal)."""
    g = pad_taxels(side)[INDEX].geometry
    n = np.array([0.0, g.pad_side, 0.0])
    c = np.array([0.0, g.pad_side * g.radius, CONTACT_Z])
    turn = _rot(n, np.deg2rad(angle_deg))
    if kind == "sphere":
        gtype, size, centre, R = mujoco.mjtGeom.mjGEOM_SPHERE, [radius, 0, 0], c + radius * n, np.eye(3)
    elif kind == "plate":
        half = 0.004
        R = np.stack([np.array([1.0, 0, 0]), np.cross(n, [1.0, 0, 0]), n], axis=1)
        gtype, size, centre = mujoco.mjtGeom.mjGEOM_BOX, [0.0065, 0.0085, half], c + half * n
    elif kind == "cylinder":
        # Cylinder axis (its local z) across the finger (distal x), turned about the pad normal.
        z_axis = turn @ np.array([1.0, 0, 0])
        R = np.stack([np.cross(n, z_axis), n, z_axis], axis=1)
        gtype, size, centre = mujoco.mjtGeom.mjGEOM_CYLINDER, [radius, 0.02, 0], c + radius * n
    elif kind == "edge":
        # A 10 mm cube resting on its edge: box rotated 45° about the edge direction, edge touching.
        e = turn @ np.array([1.0, 0, 0])
        base = np.stack([e, np.cross(n, e), n], axis=1)             # box axes before the 45° turn
        R = _rot(e, np.pi / 4) @ base
        h = 0.005
        gtype, size, centre = mujoco.mjtGeom.mjGEOM_BOX, [h, h, h], c + np.sqrt(2) * h * n
    else:
        raise ValueError(kind)
    T = wh.link_transforms(side)[wh.hand_kinematics(side).fingers[INDEX].pad_body]
    Rw = T[:3, :3] @ R
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(Rw).ravel())
    spec = build_hand_spec(side)
    spec.worldbody.add_body(name="obj").add_geom(name="obj_geom", type=gtype, size=list(size),
                                                 pos=list(MOUNT + T[:3, :3] @ centre + T[:3, 3]), quat=list(q))
    sim = HandSimulation(side, spec, ["obj_geom"])
    return sim, sim.model.geom("obj_geom").id


def footprint(sim: HandSimulation, geom: int, force: float, *, fine: bool = True):
    """The model's field for a normal load `force` [N] of `geom` on the index pad: (weights per
    quadrature point, quadrature) — the 0.5 mm pixel grid with its own exact level (`fine`) or the
    1 mm taxel quadrature."""
    dm = sim.contacts.distributed
    q = dm.pixel_quad if fine else dm.taxel_quad
    w, total, _ = dm.weights(sim.data, q, np.array([INDEX]), np.array([geom]), np.array([force]))
    return w[0] / total[0], q


def footprint_area(sim, geom, force) -> float:
    """Loaded area [m²]: surface area of the pixels carrying pressure."""
    w, q = footprint(sim, geom, force)
    return float(q.area[INDEX][w > 0].sum())


def taxel_loads(sim, geom, force) -> np.ndarray:
    """(34,) |force| [N] on each index taxel for a pure normal load."""
    dm = sim.contacts.distributed
    f = np.array([[0.0, -force, 0.0]])
    slots, _ = dm.taxel_slot_forces(sim.data, np.array([INDEX]), np.array([geom]), f, np.array([force]))
    return np.linalg.norm(slots.reshape(5, -1, 3)[INDEX, :34], axis=1)


def principal_axes(sim, geom, force):
    """Footprint second moments in the pad's (x, z) plane: (major-axis angle from distal x [deg],
    major / minor standard deviation)."""
    w, q = footprint(sim, geom, force)
    p = q.points[INDEX]
    x, z = p[:, 0], p[:, 2]
    mx, mz = w @ x, w @ z
    C = np.array([[w @ (x - mx) ** 2, w @ ((x - mx) * (z - mz))], [w @ ((x - mx) * (z - mz)), w @ (z - mz) ** 2]])
    ev, vec = np.linalg.eigh(C)
    major = vec[:, 1]
    angle = np.degrees(np.arctan2(major[1], major[0])) % 180.0
    return angle, float(np.sqrt(ev[1] / max(ev[0], 1e-30)))


def hertz_winkler_area(force: float, sphere_radius: float, pad_radius: float, stiffness: float) -> float:
    """Stated law for a sphere on the cylindrical pad (thin-layer model, paraboloid gap):
    A = 2·√(π·√(R₁R₂)·F / K), R₁ = R_s, 1/R₂ = 1/R_s + 1/R_p [m²]."""
    r1 = sphere_radius
    r2 = 1.0 / (1.0 / sphere_radius + 1.0 / pad_radius)
    return 2.0 * np.sqrt(np.pi * np.sqrt(r1 * r2) * force / stiffness)
