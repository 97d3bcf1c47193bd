"""The optimised per-frame taxel read gives what the read gave before its cost was cut (the frozen
copy in tests/contact_read_v1.py), on the same MuJoCo states: scenario frames (one object per
pad, grasps of a sphere, cylinder and box, slip, roll) and static contacts of every supported
shape, with and without images — images, pad resultants, stuck fractions and slip velocities to
1e-12 of the frame's largest force. The taxels' last stage changed on purpose after that copy
(each pad's remainder is now placed inside the taxels' friction cones, `cone_spread`, tested in
tests/test_sim_taxel_cone.py), so the taxels are compared to the copy where that change cannot
act: where the copy's taxels all lie inside their cones the new stage is the copy's plain spread,
equal to 1e-12 (float32: to their rounding); elsewhere each pad's taxels still sum to the copy's
and differ from it only along one vector per pad (the pad's remainder)."""
from __future__ import annotations

import numpy as np
import pytest

from contact_model_helpers import INDEX, object_on_index_pad
from contact_read_v1 import ContactForceModelV1, DistributedV1
from wuji_tactile_device.producers.sim.producer import SimProducer
from wuji_tactile_device.producers.sim.scenarios import make_scenario

FIELDS = ("pad_forces_distal", "images", "pad_slip_velocity", "pad_stuck_fraction")


def _cone_excess(f, normals, mu):
    """(n,) |shear| − μ·normal of forces ON the taxels `f` (n, 3) with outward `normals` (n, 3)."""
    fn = -(f * normals).sum(axis=1)
    shear = f + fn[:, None] * normals
    return np.sqrt((shear * shear).sum(axis=1)) - mu * fn


def assert_taxels_as_before(new, old, block, normals, mu, scale, where):
    """Taxel rows `new`/`old` (n, 3) [N], their pad `block` (n,): equal where the old ones all lie
    inside their cones (μ `mu`); else, per pad, the same sum and differences along one vector."""
    inside = _cone_excess(old, normals, mu).max(initial=-1.0) <= 0.0
    d = new - old
    if inside:
        assert np.abs(d).max(initial=0.0) <= 1e-12 * scale, (where, "plain spread", np.abs(d).max())
        return True
    for b in np.unique(block):
        db = d[block == b]
        assert np.abs(db.sum(axis=0)).max() <= 1e-12 * scale, (where, b, "pad sum")
        k = int(np.argmax((db * db).sum(axis=1)))
        u = db[k] / max(float(np.linalg.norm(db[k])), 1e-300)
        assert np.abs(np.cross(db, u)).max() <= 1e-12 * scale, (where, b, "one direction per pad")
    return False


def _assert_same(new, old, where, model=None, mu=1.0):
    scale = max(1.0, float(np.abs(old.taxel_forces_distal).max()))
    assert (new.num_contacts, new.num_rejected) == (old.num_contacts, old.num_rejected), where
    for name in FIELDS:
        a, b = getattr(new, name), getattr(old, name)
        if b is None:
            assert a is None, (where, name)
            continue
        assert a.shape == b.shape, (where, name, a.shape, b.shape)
        d = float(np.abs(a - b).max(initial=0.0))
        assert d <= 1e-12 * scale, (where, name, d)
    block = np.repeat(np.arange(5), [len(p.positions) for p in model.pads])
    normals = model.taxel_rot[:, :, 2]
    same = assert_taxels_as_before(new.taxel_forces_distal, old.taxel_forces_distal, block, normals, mu, scale, where)
    if same:    # float32 output: the float64 shares agree to 1e-12, so the roundings differ by one ulp at most
        np.testing.assert_allclose(new.taxel_forces, old.taxel_forces, rtol=2.0 ** -23, atol=1e-12 * scale,
                                   err_msg=str(where))
    return same


@pytest.mark.parametrize("name", ["press", "slip", "roll", "grasp-sphere", "grasp-cylinder", "grasp-box"])
def test_scenario_frames_read_as_before(name):
    producer = SimProducer(make_scenario(name))
    model = producer.sim.contacts
    old = ContactForceModelV1(model)
    frame = compared = equal = 0
    while not producer.finished:
        producer.next_frame()
        frame += 1
        if frame % 4:
            continue
        data = producer.sim.data
        mu = np.unique(data.contact.friction[:data.ncon, 0])
        assert mu.size <= 1, mu         # one μ in these scenarios: the cone test below uses it
        for images in (False, True):
            ref = old.read(data, images=images)
            got = model.read(data, images=images)
            same = _assert_same(got, ref, (name, frame, images), model, float(mu[0]) if mu.size else 1.0)
        compared += ref.num_contacts > 0
        equal += same and ref.num_contacts > 0
    assert compared >= 20, compared     # frames with real contacts were compared
    assert equal >= 10, equal           # … most of them to the old taxels exactly


@pytest.mark.parametrize("kind,radius", [("sphere", 0.005), ("sphere", 0.020), ("cylinder", 0.005),
                                         ("plate", 0.010), ("edge", 0.010)])
def test_static_contacts_solve_as_before(kind, radius):
    """Forces from stuck to gross slip, 0.1 to 8 N (past the first support size), on both grids;
    one pair, and two pairs on one pad (summed per pad)."""
    sim, g = object_on_index_pad(kind, radius=radius)
    dm = sim.contacts.distributed
    ref = DistributedV1(dm)
    slot_block = np.repeat(np.arange(5), dm.slots)
    n_hat = np.array([0.0, -1.0, 0.0])
    for force in (0.1, 0.5, 2.0, 8.0):
        for ratio in (0.0, 0.3, 0.8, 0.999, 1.0):
            for pairs in (1, 2):
                fn = force * np.array([1.0, 0.4])[:pairs]
                fn_vec = fn[:, None] * n_hat
                f = fn_vec + ratio * fn[:, None] * np.array([[0.6, 0.0, 0.8], [0.0, 0.0, -1.0]])[:pairs]
                pad, geom, mu = np.full(pairs, INDEX), np.full(pairs, g), np.ones(pairs)
                for fine in (False, True):
                    t_new = dm.solve(sim.data, pad, geom, f, fn, fn_vec, mu, fine=fine)
                    t_old = ref.solve(sim.data, pad, geom, f, fn, fn_vec, mu, fine=fine)
                    where = (kind, radius, force, ratio, pairs, fine)
                    a, b = dm.traction_field(t_new), ref.traction_field(t_old)
                    assert np.abs(a - b).max() <= 1e-12 * force, where
                    assert_taxels_as_before(dm.taxel_readings(t_new), ref.taxel_readings(t_old), slot_block,
                                            dm._slot_normals.reshape(-1, 3), 1.0, force, where)
                    assert np.abs(t_new.stuck - t_old.stuck).max() <= 1e-12, where
