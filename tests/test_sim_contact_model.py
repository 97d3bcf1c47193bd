"""Distributed contact model: footprints from the contact geometry, their growth with load, shape
and orientation, exact conservation, and the signed distances it is built on."""
from __future__ import annotations

import mujoco
import numpy as np
import pytest

from contact_model_helpers import (INDEX, footprint_area, hertz_winkler_area, object_on_index_pad,
                                   principal_axes, taxel_loads)
from wuji_tactile_device.errors import ProducerError
from wuji_tactile_device.producers.sim.contact_model import STIFFNESS, signed_distance
from wuji_tactile_device.producers.sim.hand_sim import HandSimulation
from wuji_tactile_device.producers.sim.model import build_hand_spec

LOADS = (0.1, 0.2, 0.5, 1.0, 2.0)


def test_sphere_footprint_area_follows_the_thin_layer_law():
    """Sphere R_s = 10 mm on the 8 mm pad: A = 2·√(π·√(R₁R₂)·F/K) within 10 % over 0.1–2 N (the
    law assumes a paraboloid gap; pixels are 0.5 mm), and A ∝ F^½ (log-log slope 0.5 ± 0.03)."""
    sim, g = object_on_index_pad("sphere", radius=0.010)
    area = np.array([footprint_area(sim, g, F) for F in LOADS])
    law = np.array([hertz_winkler_area(F, 0.010, 0.008, STIFFNESS) for F in LOADS])
    np.testing.assert_array_less(np.abs(area / law - 1), 0.10)
    slope = np.polyfit(np.log(LOADS), np.log(area), 1)[0]
    assert abs(slope - 0.5) < 0.03, slope


@pytest.mark.parametrize("kind", ["sphere", "plate", "cylinder", "edge"])
def test_footprints_grow_with_load(kind):
    sim, g = object_on_index_pad(kind, radius=0.005 if kind == "cylinder" else 0.010)
    area = [footprint_area(sim, g, F) for F in LOADS]
    assert np.all(np.diff(area) > 0), area
    # 20× the load: a point contact's area grows ∝ F^½ (4.5×), a line contact's width ∝ F^⅓ (2.7×,
    # less where the strip reaches the pad's end).
    assert area[-1] > 2.0 * area[0], area


def test_flat_plate_at_half_a_newton_spreads_over_taxels_along_the_finger():
    sim, g = object_on_index_pad("plate")
    loads = taxel_loads(sim, g, 0.5)
    # pure normal load, one pad: the 13 × 17 mm face reaches the pad's sides and 2.5 mm past its
    # proximal edge, where 10 % of its load lands beyond the sensing area (the edge roll-off; 4–5 %
    # before the proximal edge rolled off too); the taxels read the rest
    assert 0.88 * 0.5 < loads.sum() < 0.92 * 0.5, loads.sum()
    above = int(np.sum(loads > 0.05 * loads.max()))
    assert above >= 6, above                                          # the Gaussian model gives 3-5
    assert loads.max() / loads.sum() < 0.4
    angle, aspect = principal_axes(sim, g, 0.5)
    # A plate parallel to the cylindrical pad: a strip along the finger (distal z = 90° from x).
    assert abs(angle - 90.0) < 5 and aspect > 3


@pytest.mark.parametrize("angle_deg", [0.0, 30.0, 60.0])
def test_box_edge_gives_a_footprint_elongated_along_the_edge(angle_deg):
    sim, g = object_on_index_pad("edge", angle_deg=angle_deg)
    angle, aspect = principal_axes(sim, g, 0.5)
    # The edge runs along distal x turned by angle_deg about the pad normal (+y): direction
    # (cos a, −sin a) in the (x, z) plane.
    expected = (-angle_deg) % 180.0
    diff = min(abs(angle - expected), 180 - abs(angle - expected))
    assert diff < 5 and aspect > 3, (angle, aspect)


def test_shapes_give_different_maps():
    maps = {}
    for kind in ("sphere", "plate", "cylinder", "edge"):
        sim, g = object_on_index_pad(kind, radius=0.005 if kind == "cylinder" else 0.010)
        maps[kind] = taxel_loads(sim, g, 0.5) / 0.5
    kinds = list(maps)
    for i, a in enumerate(kinds):
        for b in kinds[i + 1:]:
            # Read through 2 mm of elastomer (Boussinesq blur ≈ 1 mm half-width) a 10 mm sphere
            # and a 5 mm cylinder across the finger differ by 0.09 of the load (L1) at 0.5 N.
            assert np.abs(maps[a] - maps[b]).sum() > 0.05, (a, b)


def test_simulated_press_conserves_per_axis_and_matches_the_gaussian_resultants():
    """End to end in MuJoCo: both models give the solver's resultants; the distributed taxel
    shares plus the pad's unsensed load, and the images, sum to them per axis in the pad frame."""
    from test_sim_physics import _press_sim
    for geom in ("box", "sphere"):
        sim = _press_sim(geom=geom)
        r = sim.read(images=True)
        gauss = sim.contacts.__class__(sim.model, "right", sim.object_geom_ids, contact_model="gaussian")
        rg = gauss.read(sim.data)
        # the same solver forces: bit for bit under numpy, to rounding under the compiled read
        # (its own summation order)
        np.testing.assert_allclose(r.resultants, rg.resultants, rtol=0, atol=1e-15 * np.abs(rg.resultants).max())
        assert np.abs(rg.resultants).max() > 0.1
        sl = slice(40, 74)
        np.testing.assert_allclose(r.taxel_forces_pad[sl].sum(axis=0) + r.unsensed[1], r.resultants[1], rtol=0,
                                   atol=1e-12)
        assert 0 < np.linalg.norm(r.unsensed[1]) < 0.1 * np.linalg.norm(r.resultants[1])
        np.testing.assert_allclose(r.images[1].sum(axis=(1, 2)), r.resultants[1], rtol=0, atol=1e-12)
        if geom == "box":   # a flat face: the load spreads along the finger, not onto one taxel
            n_dist, n_gauss = (np.linalg.norm(x.taxel_forces[sl], axis=1) for x in (r, rg))
            assert np.sum(n_dist > 0.05 * n_dist.max()) >= np.sum(n_gauss > 0.05 * n_gauss.max())
            assert n_dist.max() / n_dist.sum() < n_gauss.max() / n_gauss.sum()


SDF_SHAPES = {"sphere": (mujoco.mjtGeom.mjGEOM_SPHERE, [0.006, 0, 0]),
              "capsule": (mujoco.mjtGeom.mjGEOM_CAPSULE, [0.004, 0.007, 0]),
              "cylinder": (mujoco.mjtGeom.mjGEOM_CYLINDER, [0.005, 0.006, 0]),
              "box": (mujoco.mjtGeom.mjGEOM_BOX, [0.004, 0.006, 0.003]),
              "ellipsoid": (mujoco.mjtGeom.mjGEOM_ELLIPSOID, [0.004, 0.007, 0.003]),
              "plane": (mujoco.mjtGeom.mjGEOM_PLANE, [0.02, 0.02, 0.001])}


@pytest.mark.parametrize("name", sorted(SDF_SHAPES))
def test_signed_distances_match_mujoco_geom_distance(name):
    """Our analytic SDFs against `mj_geomDistance` from a 0.1 mm probe sphere (outside points),
    near the surface (0.1–1 mm, where footprints form) and up to 12 mm away. The ellipsoid's
    first-order estimate was 62 µm off within 1 mm and 1.3 mm further out."""
    gtype, size = SDF_SHAPES[name]
    rng = np.random.default_rng(0)
    eps = 1e-4
    spec = mujoco.MjSpec()
    spec.worldbody.add_geom(name="g", type=gtype, size=size)
    probe = spec.worldbody.add_body(name="probe", mocap=True)
    probe.add_geom(name="p", type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[eps, 0, 0])
    m = spec.compile()
    d = mujoco.MjData(m)
    far = rng.uniform(-0.012, 0.012, (40, 3))
    # Near the surface: surface-ish points pushed out 0.1–1 mm along their direction from the centre.
    u = rng.normal(size=(40, 3))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    near = u * (np.array(size[:3]) if name in ("ellipsoid", "box") else np.full(3, max(size[0], 1e-3)))
    near = near + u * rng.uniform(2e-4, 1e-3, (40, 1))
    pts = np.vstack([far, near])
    ours = signed_distance(int(gtype), np.array([size], dtype=float), pts.T[None])[0]
    checked = 0
    for p, s in zip(pts, ours, strict=True):
        if s < 2 * eps:
            continue
        d.mocap_pos[0] = p
        mujoco.mj_forward(m, d)
        ref = mujoco.mj_geomDistance(m, d, 0, 1, 0.1, None) + eps
        assert abs(ref - s) < 2e-6, (name, p, s, ref)
        checked += 1
    assert checked >= 30, checked


def test_ellipsoid_distance_inside_matches_the_closest_surface_sample():
    """Inside (penetrating) points: |sdf| = distance to the nearest of 2.9 M surface samples
    (their spacing bounds the difference, ≈ 0.2 µm)."""
    s = np.array([0.004, 0.007, 0.003])
    th, ph = np.meshgrid(np.linspace(0, np.pi, 1200), np.linspace(0, 2 * np.pi, 2400), indexing="ij")
    surf = np.stack([s[0] * np.sin(th) * np.cos(ph), s[1] * np.sin(th) * np.sin(ph), s[2] * np.cos(th)],
                    -1).reshape(-1, 3)
    rng = np.random.default_rng(1)
    pts = rng.uniform(-1, 1, (40, 3)) * s
    pts = pts[((pts / s) ** 2).sum(axis=1) < 1][:12]
    ours = signed_distance(int(mujoco.mjtGeom.mjGEOM_ELLIPSOID), s[None], pts.T[None])[0]
    brute = np.array([np.sqrt(((surf - p) ** 2).sum(axis=1)).min() for p in pts])
    assert np.all(ours < 0)
    np.testing.assert_allclose(-ours, brute, atol=5e-7)


def test_unsupported_object_geom_is_refused_by_name():
    spec = build_hand_spec("right")
    spec.add_mesh(name="tet", uservert=[0, 0, 0, 0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.01])
    spec.worldbody.add_body(name="o", pos=[0.5, 0, 0]).add_geom(name="mesh_obj", type=mujoco.mjtGeom.mjGEOM_MESH,
                                                                  meshname="tet")
    with pytest.raises(ProducerError, match=r"distributed contact needs primitive object geoms .*unsupported: "
                                            r"mesh_obj \(mjGEOM_MESH\)"):
        HandSimulation("right", spec, ["mesh_obj"])
    HandSimulation("right", spec, ["mesh_obj"], contact_model="gaussian")    # the blob needs no shape


def test_unknown_contact_model_is_a_value_error():
    spec = build_hand_spec("right")
    spec.worldbody.add_body(name="o", pos=[0.5, 0, 0]).add_geom(name="b", type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.01] * 3)
    with pytest.raises(ValueError, match="contact_model must be one of distributed, gaussian, got 'hertz'"):
        HandSimulation("right", spec, ["b"], contact_model="hertz")


def test_zero_normal_force_still_assigns_the_closest_point():
    sim, g = object_on_index_pad("plate")
    loads = taxel_loads(sim, g, 0.0)
    assert np.all(np.isfinite(loads))
    assert INDEX == 1


def test_compiled_kernel_equals_the_numpy_reference():
    """The numba kernel (Newton level solve, one pass per pair) and the numpy path (sort-based
    level solve) give the same taxel forces and images: every pad of a press hold, plus shapes."""
    from wuji_tactile_device.producers.sim import contact_model as cm
    if cm.KERNEL is None:
        pytest.skip("numba is not installed (extra 'fast'); the numpy path is the one in use")
    from wuji_tactile_device.run.simulation import run_scenario
    from wuji_tactile_device.producers.sim.scenarios import PressScenario
    got = {}
    run_scenario(PressScenario(), max_frames=500, on_frame=lambda sim, r: got.__setitem__("sim", sim))
    sims = [got["sim"]] + [object_on_index_pad(k, angle_deg=a)[0] for k, a in
                           (("sphere", 0), ("edge", 30), ("cylinder", 60), ("plate", 0))]
    for sim in sims:
        c = sim.contacts
        if c.read(sim.data).num_contacts == 0:      # static shapes: no solver contact yet: push a load
            g = int(sim.object_geom_ids[0])
            for be in ("numpy", "numba"):
                dm = cm.DistributedContact(sim.model, c.pads, c.distal_bodies, c._object_geoms, backend=be)
                f = np.array([[0.02, -0.7, 0.1]])
                out = dm.taxel_slot_forces(sim.data, np.array([INDEX]), np.array([g]), f, np.array([0.7]))
                img = dm.images(sim.data, np.array([INDEX]), np.array([g]), f, np.array([0.7]))
                got[be] = (out[0], out[1], img)
        else:
            for be in ("numpy", "numba"):
                c.distributed = cm.DistributedContact(sim.model, c.pads, c.distal_bodies, c._object_geoms, backend=be)
                r = c.read(sim.data, images=True)
                got[be] = (r.taxel_forces_distal, np.zeros(1), r.images)
        for a, b in zip(got["numpy"], got["numba"], strict=True):
            np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-13)


def test_backend_choice_is_checked():
    from wuji_tactile_device.producers.sim import contact_model as cm
    sim, _ = object_on_index_pad("sphere")
    c = sim.contacts
    with pytest.raises(ValueError, match="backend must be one of 'native', 'numpy', 'numba', got 'gpu'"):
        cm.DistributedContact(sim.model, c.pads, c.distal_bodies, c._object_geoms, backend="gpu")


@pytest.mark.parametrize("name", sorted(SDF_SHAPES))
def test_compiled_signed_distance_equals_the_numpy_one(name):
    from wuji_tactile_device.producers.sim import contact_kernel as ck
    if ck.KERNEL is None:
        pytest.skip("numba is not installed (extra 'fast'); the numpy path is the one in use")
    gtype, size = SDF_SHAPES[name]
    pts = np.random.default_rng(2).uniform(-0.01, 0.01, (50, 3))
    ours = signed_distance(int(gtype), np.array([size], dtype=float), pts.T[None])[0]
    compiled = np.array([ck._sdf(int(gtype), *map(float, size), *p) for p in pts])
    np.testing.assert_allclose(compiled, ours, rtol=1e-12, atol=1e-15)
