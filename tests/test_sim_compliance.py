"""MuJoCo's pad contact compliance derived from the elastomer layer (producers/sim/compliance.py).

Objects on a slide along the index pad's normal, no gravity, pushed into the rigidly held finger
with a fixed force (tests/compliance_helpers.py): the penetration MuJoCo settles at is compared
with the distributed contact model's own approach δ for the same contact and force.
"""
from __future__ import annotations

import mujoco
import numpy as np
import pytest

from compliance_helpers import pressed_object
from wuji_tactile_device.producers.sim.compliance import (D_FIRST_TOUCH, D_MAX, impedance, layer_law, log_slope,
                                                           mujoco_law, pad_solimp, reference_stiffness)
from wuji_tactile_device.producers.sim.contact_model import LAYER_THICKNESS, STIFFNESS


@pytest.mark.parametrize("kind", ["sphere", "cylinder", "box", "plate"])
@pytest.mark.parametrize("mass", [0.01, 0.5])
def test_penetration_at_half_newton_is_the_layers_for_any_mass(kind, mass):
    pen, fn, _, delta, _ = pressed_object(kind, mass, 0.5)
    assert fn == pytest.approx(0.5, abs=0.01)
    assert pen == pytest.approx(delta, rel=0.2), (kind, pen, delta)


def test_a_box_face_shares_its_load_between_two_contacts():
    # the box face was 1.46× the layer (one-contact point-law stiffness on a line contact)
    pen, fn, contacts, delta, _ = pressed_object("box", 0.1, 0.5)
    assert contacts == 2
    assert pen == pytest.approx(delta, rel=0.1), (pen, delta)


@pytest.mark.parametrize("kind", ["sphere", "box"])
@pytest.mark.parametrize("force", [0.1, 0.2, 1.0, 2.0])
def test_penetration_follows_the_layer_law_away_from_the_reference_load(kind, force):
    # MuJoCo's ~linear law read 0.56 (0.1 N) and 0.74 (0.2 N) of the sphere's δ² law before
    pen, fn, _, delta, _ = pressed_object(kind, 0.1, force)
    assert fn == pytest.approx(force, rel=0.02)
    assert pen == pytest.approx(delta, rel=0.2), (kind, force, pen, delta)


def test_penetration_does_not_depend_on_the_mass_the_default_contacts_does():
    light, heavy = pressed_object("box", 0.01, 0.5)[0], pressed_object("box", 0.5, 0.5)[0]
    assert heavy == pytest.approx(light, rel=1e-3)
    light0, heavy0 = pressed_object("sphere", 0.01, 0.5, layer_compliance=False)[0], \
        pressed_object("sphere", 0.5, 0.5, layer_compliance=False)[0]
    assert light0 > 1.2 * heavy0


def test_a_box_edge_at_eight_newton_saturates_below_the_layer_thickness():
    pens = []
    for force in (2.0, 4.0, 6.0, 8.0):
        pen, fn, _, delta, _ = pressed_object("edge", 0.1, force)
        assert fn == pytest.approx(force, rel=0.02), "the edge lost or slid off the held finger"
        pens.append(pen)
    assert pens[-1] < 0.5 * LAYER_THICKNESS, pens
    assert delta > LAYER_THICKNESS                 # the unbounded Winkler layer passes its thickness
    steps = np.diff(pens)
    assert np.all(steps > 0) and np.all(np.diff(steps) < 0), pens   # rising, ever more slowly
    pen0, _, _, _, _ = pressed_object("edge", 0.1, 8.0, layer_compliance=False)
    assert pen0 > LAYER_THICKNESS                  # MuJoCo's default contact sinks through


def test_twenty_newton_does_not_compress_past_the_layer():
    for kind in ("sphere", "box"):
        pen, fn, _, _, _ = pressed_object(kind, 0.1, 20.0)
        assert fn > 19.0
        assert pen < 0.8 * LAYER_THICKNESS, (kind, pen)
    pen0, _, _, _, _ = pressed_object("sphere", 0.1, 20.0, layer_compliance=False)
    assert pen0 > 2 * LAYER_THICKNESS


def test_reference_stiffness_solves_mujocos_static_balance():
    delta, inv_w = 3e-4, 26.7
    solimp = pad_solimp(2.0, delta)
    k = reference_stiffness(inv_w, delta, 0.5, solimp)
    d = float(impedance(delta, solimp))
    assert k * d * d * delta / (inv_w * (1 - d)) == pytest.approx(0.5, rel=1e-12)
    assert float(mujoco_law(delta, k, inv_w, solimp)) == pytest.approx(0.5, rel=1e-12)
    assert float(impedance(LAYER_THICKNESS, solimp)) == D_MAX and float(impedance(0.0, solimp)) == D_FIRST_TOUCH


@pytest.mark.parametrize("exponent, delta", [(2.0, 3.95e-4), (1.5, 1.36e-4), (2.5, 7e-4)])
def test_pad_solimp_gives_mujocos_law_the_layers_slope_at_the_reference(exponent, delta):
    solimp = pad_solimp(exponent, delta)
    e = 1e-5 * delta
    numeric = np.log(mujoco_law(delta + e, 1.0, 1.0, solimp) / mujoco_law(delta - e, 1.0, 1.0, solimp)) / \
        np.log((delta + e) / (delta - e))
    assert float(numeric) == pytest.approx(exponent, rel=1e-5)
    assert log_slope(delta, solimp) == pytest.approx(exponent, rel=1e-9)


def test_pad_solimp_refuses_a_reference_outside_the_layer():
    with pytest.raises(ValueError, match="not inside the layer"):
        pad_solimp(2.0, 2.5e-3)


def _winkler(gap: np.ndarray, area: float, delta: float) -> float:
    return float(STIFFNESS * area * np.maximum(delta - gap, 0.0).sum())


def test_layer_laws_are_the_winkler_integrals():
    rp, delta = 0.008, 2e-4
    x = np.linspace(-0.004, 0.004, 1601)
    dx = x[1] - x[0]
    # sphere R 10 mm on the pad cylinder: paraboloid gap x²/2R + z²/2R' (1/R' = 1/R + 1/R_p)
    r = 0.01
    r2 = 1.0 / (1.0 / r + 1.0 / rp)
    X, Z = np.meshgrid(x, x)
    sphere = layer_law(mujoco.mjtGeom.mjGEOM_SPHERE, np.array([r, 0, 0]), rp, 0.0125)
    assert (sphere.exponent, sphere.contacts) == (2.0, 1)
    numeric = _winkler(X ** 2 / (2 * r2) + Z ** 2 / (2 * r), dx * dx, delta)
    assert sphere.coefficient * delta ** 2 == pytest.approx(numeric, rel=2e-3)
    # a box face along the pad: a line contact over its 12 mm side, two MuJoCo contacts
    face = layer_law(mujoco.mjtGeom.mjGEOM_BOX, np.array([0.004, 0.006, 0.004]), rp, 0.0125)
    assert (face.exponent, face.contacts) == (1.5, 2)
    numeric = 0.012 * _winkler(x ** 2 / (2 * rp), dx, delta)
    assert face.coefficient * delta ** 1.5 == pytest.approx(numeric, rel=2e-3)
    # a face longer than the pad loads the pad's cylindrical length only
    plate = layer_law(mujoco.mjtGeom.mjGEOM_BOX, np.array([0.0065, 0.0085, 0.004]), rp, 0.0125)
    assert plate.coefficient == pytest.approx(face.coefficient * 0.0125 / 0.012, rel=1e-12)
