"""Stick and slip inside the footprint (DistributedContact.traction) and the pads' slip output."""
from __future__ import annotations

import numpy as np
import pytest

from contact_model_helpers import INDEX, object_on_index_pad
from wuji_tactile_device.producers.sim.producer import EXTRA_PAD_SLIP, SimProducer
from wuji_tactile_device.producers.sim.scenarios import make_scenario


def _sphere_pressure(ratio_steps):
    sim, g = object_on_index_pad("sphere", radius=0.010)
    dm = sim.contacts.distributed
    pad = np.array([INDEX])
    w = dm.pressure(sim.data, pad, np.array([g]), np.array([0.5]))
    fn = np.array([[0.0, -0.5, 0.0]])
    out = []
    for r in ratio_steps:
        ft = np.array([[0.5 * r, 0.0, 0.0]])
        out.append(dm.traction(w, pad, fn, ft, np.array([1.0])) + (dm.fine.quad.area[INDEX],))
    return out


def test_partial_slip_starts_at_the_rim_and_spreads_inward():
    """Sphere on the pad at 0.5 N, μ = 1, tangential load 0 → μ·F_n: traction ≤ μ·p at every
    point, Σ friction = the load exactly, the slipping points are the lowest-pressure ones (the
    rim), and the stuck fraction falls from 1 to 0."""
    ratios = np.linspace(0.0, 1.0, 11)
    fracs = []
    for r, (P, Q, frac, area) in zip(ratios, _sphere_pressure(ratios), strict=True):
        P, Q = P[0], Q[0]
        assert np.all(Q <= P * 1.0 + 1e-15)
        np.testing.assert_allclose(Q.sum(), 0.5 * r, rtol=1e-12, atol=1e-15)
        loaded = P > 0
        p = np.divide(P, area, out=np.zeros_like(P), where=area > 0)
        slipping = loaded & (Q >= P * (1 - 1e-12)) & (Q > 0)
        stuck = loaded & ~slipping
        if slipping.any() and stuck.any():
            assert p[slipping].max() <= p[stuck].min() * (1 + 1e-12)     # slip zone = low pressure = rim
        fracs.append(float(frac[0]))
    assert fracs[0] == 1.0 and fracs[-1] == 0.0
    assert np.all(np.diff(fracs) <= 1e-12), fracs
    assert 0.2 < fracs[5] < 0.9, fracs                                  # partial slip at half the cone


@pytest.fixture(scope="module")
def slip_run():
    scenario = make_scenario("slip")
    producer = SimProducer(scenario)
    rows = []
    while not producer.finished:
        frame = producer.next_frame()
        r = producer.reading
        tf = r.taxel_forces.astype(np.float64)            # all 176 published taxels, own axes
        slip = frame.extras[EXTRA_PAD_SLIP].copy()
        cons = np.abs(r.taxel_forces_pad[40:74].sum(axis=0) + r.unsensed[1] - r.resultants[1]).max()
        d = producer.sim.data
        mu = float(d.contact.friction[:d.ncon, 0].max(initial=0.0))   # the solver's μ this frame
        rows.append((producer.sim.time_ns * 1e-9, tf, slip, cons, mu))
    return scenario, rows


def test_slip_taxels_stay_inside_their_friction_cone(slip_run):
    """Every published taxel in every frame, from stuck through partial to gross slip: |shear| ≤
    μ·|normal| + 1 mN in the taxel's own axes (+Z its outward normal, the metadata's taxel
    frame), μ the friction coefficient the solver used. Before the pad remainder was placed
    inside the cones (`cone_spread`) it was spread with the normal load: 4.3 mN over in partial
    slip, 7.4 mN in gross slip."""
    _, rows = slip_run
    worst = []
    for t, tf, _slip, cons, mu in rows:
        shear, normal = np.hypot(tf[:, 0], tf[:, 1]), np.abs(tf[:, 2])
        worst.append(float((shear - mu * normal).max()))
        assert worst[-1] <= 1e-3, (t, worst[-1])
        assert cons < 1e-12
    assert max(worst) <= 1e-6, max(worst)            # float32 rounding, not 1 mN, in fact
    stuck = np.array([r[2][INDEX, 3] for r in rows])
    assert np.any(stuck == 0) and np.any((stuck > 0) & (stuck < 0.5))   # gross and partial slip were read


def test_stuck_fraction_falls_before_gross_slip_and_slip_velocity_follows_the_drag(slip_run):
    scenario, rows = slip_run
    t = np.array([r[0] for r in rows])
    slip = np.array([r[2] for r in rows])
    stuck, speed = slip[:, INDEX, 3], np.linalg.norm(slip[:, INDEX, :3], axis=1)
    drag = (t > scenario.DRAG_START) & (t <= scenario.DRAG_END)
    first = int(np.argmax(drag))
    assert stuck[first] > 0.9
    gross = int(np.argmax(drag & (stuck == 0)))
    assert drag[gross] and stuck[gross] == 0
    assert np.all(np.diff(stuck[first:gross + 1]) <= 1e-9)        # falls steadily to 0 …
    assert np.any((stuck[first:gross] > 0.05) & (stuck[first:gross] < 0.8))   # … through partial slip
    # While stuck the pads do not slide; once sliding, the slip speed is the object's speed
    # relative to the pad (the scenario's own measurement at the pad centre), within 10 %.
    assert np.all(speed[stuck > 0] <= 1e-4)
    rel_speed = np.abs(np.gradient(np.array(scenario.rel), np.array(scenario.t)))
    late = drag & (t > t[gross] + 0.1)
    assert abs(speed[late].mean() / rel_speed[late].mean() - 1) < 0.10, (speed[late].mean(), rel_speed[late].mean())
    assert np.all(stuck[late] == 0)
