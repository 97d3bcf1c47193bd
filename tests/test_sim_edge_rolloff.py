"""The taxel readings roll off smoothly at the pad's edges (issue 21): a sphere (R 10 mm, 0.5 N)
moved around the index finger from the pad normal. Before, from 70° on the same 4 edge taxels
carried the whole load (largest share 0.445 at every angle 70–88°) until the active-pad mask
dropped the contact at 90°. Now the part of the load whose kernel lands beyond the sensing area
is the pad's unsensed load: the taxels' sum falls with the angle, taxels + unsensed = the solver
force, and the mask drops the contact only once the readings are down to ~2 % of the load."""
from __future__ import annotations

import mujoco
import numpy as np
import pytest

from contact_model_helpers import CONTACT_Z, INDEX, object_on_index_pad
from sensing_helpers import EDGE_ANGLES, edge_sweep
from wuji_tactile_device.producers.sim.contact_forces import ContactForceModel
from wuji_tactile_device.producers.sim.contact_model import NATIVE_AVAILABLE, DistributedContact

#: the largest change of the sensed share between 1° steps (measured 0.039, at 76°)
MAX_STEP = 0.05


@pytest.fixture(scope="module")
def sweep():
    return edge_sweep(EDGE_ANGLES, backend="numpy")


def test_sensed_share_falls_smoothly_to_the_mask(sweep):
    sensed, largest, _, kept, err = sweep.T
    a = EDGE_ANGLES
    assert np.all(err <= 1e-15)                                       # taxels + unsensed = solver force
    assert np.all(sensed[a <= 40] > 0.98)                             # mid-pad: the kernel's tail only
    assert sensed[a == 60][0] > 0.85
    steps = np.diff(sensed)
    assert np.abs(steps).max() <= MAX_STEP, (a[np.argmax(np.abs(steps))], np.abs(steps).max())
    # no plateau: from 60° to the mask's limit every degree reads less than the one before
    cut = int(a[kept > 0].max())                                      # last angle the mask keeps
    assert 100 <= cut <= 112, cut
    span = (a[:-1] >= 60) & (a[1:] <= cut)
    assert np.all(steps[span] < -1e-3), steps[span]
    # what the mask then drops: less than one degree's step of the roll-off
    at_cut = float(sensed[a == cut][0])
    assert at_cut < 0.03, at_cut
    # the edge taxels no longer take the whole load: 0.445 at every angle 70–88° before
    assert np.all(largest[(a >= 70) & (a <= 88)] < 0.31)
    assert largest[a == 88][0] < 0.12


@pytest.mark.skipif(not NATIVE_AVAILABLE, reason="the compiled read was not built in this install")
def test_the_compiled_read_rolls_off_the_same(sweep):
    native = edge_sweep(EDGE_ANGLES, backend="native")
    np.testing.assert_allclose(native, sweep, rtol=0, atol=1e-12)


#: Contact places along the finger on the pad's midline [m, distal frame]: mid-pad to 0.5 mm
#: below the distal capsule's cylinder top (z_top = −2 mm); the image grid ends at −6 mm.
PROXIMAL_Z = np.arange(-12.0, -2.4, 0.25) * 1e-3


@pytest.mark.parametrize("backend", ["numpy", "native"])
def test_the_proximal_edge_rolls_off_too(backend):
    """A sphere (R 10 mm, 0.5 N) moved along the finger past the pad's proximal edge: the taxels'
    share falls at every 0.25 mm step from mid-pad (0.99) through the grid's edge (≈ 0.5 at
    z = −6 mm) to below 0.1 past z = −3 mm, by at most 0.1 of the load per step (the continuity
    criterion's bound for one taxel; measured 0.062); nothing is lost (taxels + unsensed = the
    force).
    Before, the load quadrature ended at the grid's edge and the top taxel row read 0.73–0.81
    of a contact wholly past it (0.75 at z = −2.5 mm)."""
    if backend == "native" and not NATIVE_AVAILABLE:
        pytest.skip("the compiled read was not built in this install")
    rows = edge_sweep(np.zeros(len(PROXIMAL_Z)), backend=backend, z=PROXIMAL_Z)
    sensed, largest, _, _, err = rows.T
    assert np.all(err <= 1e-15)
    assert sensed[0] > 0.98
    steps = np.diff(sensed)
    assert np.all(steps < 0), steps
    assert np.abs(steps).max() <= 0.1, np.abs(steps).max()
    at_edge = float(sensed[np.argmin(np.abs(PROXIMAL_Z + 0.006))])
    assert 0.4 < at_edge < 0.6, at_edge
    assert np.all(sensed[PROXIMAL_Z >= -0.003] < 0.1), sensed[PROXIMAL_Z >= -0.003]
    assert largest[-1] < 0.06


def _sphere_at(angle_deg: float, depth: float = 0.0003):
    """A static hand with the R 10 mm sphere pressed `depth` [m] into the index finger at
    `angle_deg` around it (as `edge_sweep` places it), after `mj_forward`."""
    sim, g = object_on_index_pad("sphere", radius=0.010)
    geo = sim.contacts.pads[INDEX].geometry
    R = sim.data.xmat[sim.contacts.distal_bodies[INDEX]].reshape(3, 3)
    o = sim.data.xpos[sim.contacts.distal_bodies[INDEX]]
    th = np.radians(angle_deg)
    local = np.array([np.sin(th), geo.pad_side * np.cos(th), 0.0]) * (geo.radius + 0.010 - depth)
    local[2] = CONTACT_Z
    body = sim.model.geom_bodyid[g]
    sim.model.body_pos[body] += o + R @ local - sim.data.geom_xpos[g]
    mujoco.mj_forward(sim.model, sim.data)
    assert np.abs(sim.data.geom_xpos[g] - (o + R @ local)).max() < 1e-9
    return sim, g


@pytest.mark.parametrize("backend", ["numpy", "native"])
def test_past_the_edge_the_mask_drops_the_contact_and_the_pad_reads_zero(backend):
    """MuJoCo contacts: at 100° the contact is kept (the old palm-side rule dropped it from 90°)
    and its pad's taxels read a few % of the load, taxels + unsensed = the resultant; at 120° it
    is dropped and everything reads exactly 0."""
    if backend == "native" and not NATIVE_AVAILABLE:
        pytest.skip("the compiled read was not built in this install")
    for angle, kept in ((100.0, True), (120.0, False)):
        sim, g = _sphere_at(angle)
        model = ContactForceModel(sim.model, "right", [g])
        model.distributed = DistributedContact(sim.model, model.pads, model.distal_bodies, np.array([g]),
                                               backend=backend)
        r = model.read(sim.data)
        sl = slice(40, 74)
        if kept:
            assert r.num_contacts >= 1 and r.num_rejected == 0, angle
            F = r.resultants[INDEX]
            assert np.linalg.norm(F) > 0.05
            taxels = r.taxel_forces_pad[sl].sum(axis=0)
            np.testing.assert_allclose(taxels + r.unsensed[INDEX], F, rtol=0, atol=1e-12 * np.linalg.norm(F))
            assert 0.005 < np.linalg.norm(taxels) / np.linalg.norm(F) < 0.08
        else:
            assert r.num_contacts == 0 and r.num_rejected >= 1, angle
            assert not r.taxel_forces.any() and not r.resultants.any() and not r.unsensed.any()
