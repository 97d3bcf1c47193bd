"""MuJoCo's pad contact compliance derived from the elastomer layer (producers/sim/compliance.py).

A sphere (R 10 mm) on a slide along the index pad's normal, no gravity, pushed into the pad with
a fixed force while the finger is held on its joint limits: the penetration MuJoCo settles at is
compared with the distributed contact model's own approach δ for the same contact.
"""
from __future__ import annotations

import mujoco
import numpy as np
import pytest

from wuji_tactile_device.hands.wuji_hand2 import NUM_ACTUATED_JOINTS, hand_kinematics
from wuji_tactile_device.producers.sim.compliance import SOLIMP, impedance, layer_indentation, reference_stiffness
from wuji_tactile_device.producers.sim.contact_model import LAYER_THICKNESS, STIFFNESS
from wuji_tactile_device.producers.sim.hand_sim import HandSimulation
from wuji_tactile_device.producers.sim.model import build_hand_spec
from wuji_tactile_device.producers.sim.scenarios.base import _pad_points


def _pressed_sphere(mass: float, force: float, *, layer: bool = True) -> tuple[float, float, float]:
    """(MuJoCo penetration [m], solver normal force [N], layer model δ [m]) after 1.2 s."""
    q = np.zeros(NUM_ACTUATED_JOINTS)
    q[4:8] = (0.6, 0.0, 0.65, 0.4)
    spec = build_hand_spec("right", lift_kp=4e4)
    spec.option.gravity = [0.0, 0.0, 0.0]
    c, n, _ = _pad_points("right", q)["index"]
    body = spec.worldbody.add_body(name="obj", pos=list(np.array([0.0, 0.0, 0.3]) + c + n * 0.01))
    body.add_joint(name="obj_slide", type=mujoco.mjtJoint.mjJNT_SLIDE, axis=list(n))
    body.add_geom(name="obj_geom", type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[0.01, 0, 0], mass=mass, condim=4)
    sim = HandSimulation("right", spec, ["obj_geom"], layer_compliance=layer)
    sim.data.qpos[sim.qpos_adr] = q
    jnt = [sim.model.joint(j).id for j in hand_kinematics("right").joint_names]
    sim.model.jnt_range[jnt] = np.stack([q - 1e-3, q + 1e-3], axis=1)
    sim.set_joint_targets(q)
    mujoco.mj_forward(sim.model, sim.data)
    bid = sim.model.body("obj").id
    for k in range(120):
        sim.data.xfrc_applied[bid, :3] = -n * force * min(1.0, (k + 1) / 60)
        sim.step_frame()
    d, obj = sim.data, int(sim.object_geom_ids[0])
    sel = [i for i in range(d.ncon) if obj in d.contact.geom[i] and d.contact.efc_address[i] >= 0]
    assert sel, "the sphere lost contact with the pad"
    fn = 0.0
    for i in sel:
        f6 = np.zeros(6)
        mujoco.mj_contactForce(sim.model, d, i, f6)
        fn += f6[0]
    cm, pad, geom = sim.contacts.distributed, np.array([1]), sim.object_geom_ids[:1]
    local = cm._transforms(d, pad, geom) @ cm.pixel_quad.points_h.take(pad, axis=0)
    _, _, lam = cm.weights(d, cm.pixel_quad, pad, geom, np.array([fn]))
    return float(-d.contact.dist[sel].min()), fn, float(lam[0] - cm._sdf(geom, local).min())


@pytest.mark.parametrize("mass", [0.01, 0.5])
def test_penetration_at_half_newton_is_the_layers_for_any_mass(mass):
    pen, fn, delta = _pressed_sphere(mass, 0.5)
    assert fn == pytest.approx(0.5, abs=0.01)
    assert pen == pytest.approx(delta, rel=0.2), (pen, delta)


def test_default_contact_depends_on_the_mass_the_layer_contact_does_not():
    light, heavy = _pressed_sphere(0.01, 0.5)[0], _pressed_sphere(0.5, 0.5)[0]
    assert heavy == pytest.approx(light, rel=0.02)
    light0, heavy0 = _pressed_sphere(0.01, 0.5, layer=False)[0], _pressed_sphere(0.5, 0.5, layer=False)[0]
    assert light0 > 1.5 * heavy0                       # the behaviour before: 0.64 vs 0.34 mm


def test_twenty_newton_does_not_compress_past_the_layer():
    pen, fn, _ = _pressed_sphere(0.1, 20.0)
    assert fn > 19.0
    assert pen < LAYER_THICKNESS, pen
    pen0, _, _ = _pressed_sphere(0.1, 20.0, layer=False)
    assert pen0 > 2 * LAYER_THICKNESS                  # MuJoCo's default contact sinks through


def test_reference_stiffness_solves_mujocos_static_balance():
    delta, inv_w = 3e-4, 26.7
    k = reference_stiffness(inv_w, delta, 0.5)
    d = float(impedance(delta))
    assert k * d * d * delta / (inv_w * (1 - d)) == pytest.approx(0.5, rel=1e-12)
    assert float(impedance(LAYER_THICKNESS)) == SOLIMP[1] and float(impedance(0.0)) == SOLIMP[0]


def test_layer_indentation_sphere_is_the_winkler_paraboloid():
    r, rp, f = 0.01, 0.008, 0.5
    delta = float(layer_indentation(mujoco.mjtGeom.mjGEOM_SPHERE, np.array([r, 0, 0]), rp, 0.0125, f))
    r2 = 1.0 / (1.0 / r + 1.0 / rp)
    assert STIFFNESS * np.pi * np.sqrt(r * r2) * delta ** 2 == pytest.approx(f, rel=1e-12)
