"""The optimised read (each footprint's support only: the level solve on the lowest points, the
stick/slip solve without a second sort, the influence columns of loaded points only) gives the
same taxels, images and stuck fractions as the dense reference (every point of the grid,
tests/contact_model_reference.py) to float rounding — static contacts and producer frames."""
from __future__ import annotations

import numpy as np
import pytest

from contact_model_helpers import INDEX, object_on_index_pad
from contact_model_reference import dense_solve, dense_taxel_readings, dense_traction_field
from wuji_tactile_device.producers.sim import contact_model as cm
from wuji_tactile_device.producers.sim.producer import SimProducer
from wuji_tactile_device.producers.sim.scenarios import make_scenario

BACKENDS = ["numpy"] + (["numba"] if cm.KERNEL is not None else [])


def _compare(dm, data, pad, geom, f_loc, f_normal, f_normal_vec, mu, fine):
    """Max |optimised − reference| of taxels and unsensed loads [N], image field [N] and stuck
    fraction."""
    t = dm.solve(data, pad, geom, f_loc, f_normal, f_normal_vec, mu, fine=fine)
    w, Pn, Q, t_hat, stuck, grid = dense_solve(dm, data, pad, geom, f_loc, f_normal, f_normal_vec, mu, fine=fine)
    ref_taxels, ref_unsensed = dense_taxel_readings(dm, pad, w, Pn, Q, t_hat, f_loc, grid, mu)
    ref_field = dense_traction_field(pad, w, Pn, Q, t_hat, f_loc, grid)
    got_taxels, got_unsensed = dm.pad_readings(t)
    return (max(np.abs(got_taxels - ref_taxels).max(), np.abs(got_unsensed - ref_unsensed).max()),
            np.abs(dm.traction_field(t) - ref_field).max(),
            np.abs(t.stuck - stuck).max())


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind,radius", [("sphere", 0.005), ("sphere", 0.020), ("cylinder", 0.005),
                                         ("plate", 0.010), ("edge", 0.010)])
def test_support_read_equals_the_dense_reference(kind, radius, backend):
    sim, g = object_on_index_pad(kind, radius=radius)
    c = sim.contacts
    dm = cm.DistributedContact(sim.model, c.pads, c.distal_bodies, c._object_geoms, backend=backend)
    n_hat = np.array([0.0, -1.0, 0.0])
    for force in (0.1, 0.5, 2.0, 8.0):                 # 8 N: a footprint past the first subset size
        for ratio in (0.0, 0.3, 0.8, 1.0):             # stuck, partial slip, near and at gross slip
            fn_vec = (force * n_hat)[None]
            f = fn_vec + np.array([[ratio * force * 0.6, 0.0, ratio * force * 0.8]])
            for fine in (False, True):
                d_tax, d_field, d_stuck = _compare(dm, sim.data, np.array([INDEX]), np.array([g]), f,
                                                   np.array([force]), fn_vec, np.array([1.0]), fine)
                assert d_tax <= 1e-12 * force and d_field <= 1e-12 * force and d_stuck <= 1e-9, \
                    (force, ratio, fine, d_tax, d_field, d_stuck)


def test_two_pairs_on_one_pad_equal_the_dense_reference():
    """Several objects on one pad (per-pair solutions summed per pad)."""
    sim, g = object_on_index_pad("sphere", radius=0.010)
    dm = sim.contacts.distributed
    pad, geom = np.array([INDEX, INDEX]), np.array([g, g])
    fn_vec = np.array([[0.0, -0.5, 0.0], [0.0, -1.5, 0.0]])
    f = fn_vec + np.array([[0.2, 0.0, 0.0], [0.0, 0.0, -1.2]])
    for fine in (False, True):
        d = _compare(dm, sim.data, pad, geom, f, np.array([0.5, 1.5]), fn_vec, np.array([1.0, 1.0]), fine)
        assert max(d) <= 1e-12, d


@pytest.mark.parametrize("name", ["press", "slip", "lift", "roll"])
def test_producer_frames_equal_the_dense_reference(name, monkeypatch):
    """Every 10th frame of a scenario: the producer's own `solve` call replayed on the reference."""
    producer = SimProducer(make_scenario(name))
    c = producer.sim.contacts      # the numpy read (the compiled one is held to it in test_sim_read_equivalence)
    dm = c.distributed = cm.DistributedContact(producer.sim.model, c.pads, c.distal_bodies, c._object_geoms,
                                               backend="numpy")
    calls = []
    solve = dm.solve

    def recording_solve(data, *args, **kw):
        calls.append((args, kw))
        return solve(data, *args, **kw)

    monkeypatch.setattr(dm, "solve", recording_solve)
    frame = compared = 0
    while not producer.finished:
        calls.clear()
        producer.next_frame()
        frame += 1
        if frame % 10 or not calls:
            continue
        for images in (False, True):
            (pad, geom, f_loc, f_normal, f_normal_vec, mu), kw = calls[-1]
            d = _compare(dm, producer.sim.data, pad, geom, f_loc, f_normal, f_normal_vec, mu, images)
            scale = max(1.0, float(np.abs(f_loc).max()))
            assert d[0] <= 1e-12 * scale and d[1] <= 1e-12 * scale and d[2] <= 1e-9, (name, frame, d)
        compared += 1
    assert compared >= 20


def test_large_footprint_takes_the_grown_subset():
    """A 20 mm sphere at 8 N loads more points than the first subset holds: the retry runs (the
    comparisons above cover its result)."""
    sim, g = object_on_index_pad("sphere", radius=0.020)
    dm = cm.DistributedContact(sim.model, sim.contacts.pads, sim.contacts.distal_bodies,
                               sim.contacts._object_geoms, backend="numpy")
    for _fine, grid in ((False, dm.coarse), (True, dm.fine)):
        flat, w = dm.support(sim.data, np.array([INDEX]), np.array([g]), np.array([8.0]), grid)
        assert np.count_nonzero(w) > grid.first_k and flat.shape[1] > grid.first_k
        np.testing.assert_allclose(w.sum(), 1.0, rtol=1e-14)


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_pairs_read_zero(backend):
    """A solve without pairs (the numba path's support size used to be the max of nothing)."""
    sim, _ = object_on_index_pad("sphere")
    c = sim.contacts
    dm = cm.DistributedContact(sim.model, c.pads, c.distal_bodies, c._object_geoms, backend=backend)
    none, no_vec = np.zeros(0, np.int64), np.zeros((0, 3))
    for fine in (False, True):
        t = dm.solve(sim.data, none, none, no_vec, np.zeros(0), no_vec, np.zeros(0), fine=fine)
        assert np.all(dm.taxel_readings(t) == 0) and np.all(dm.traction_field(t) == 0)
