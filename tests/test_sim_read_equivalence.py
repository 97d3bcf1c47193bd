"""The optimised per-frame taxel read gives what the read gave before its cost was cut (the frozen
copy in tests/contact_read_v1.py), on the same MuJoCo states: scenario frames (one object per
pad, grasps of a sphere, cylinder and box, slip, roll) and static contacts of every supported
shape, with and without images — images, pad resultants, stuck fractions and slip velocities to
1e-12 of the frame's largest force. The taxels' last stage changed on purpose after that copy
(each pad's remainder is now placed inside the taxels' friction cones, `cone_spread`, tested in
tests/test_sim_taxel_cone.py), so the taxels are compared to the copy where that change cannot
act: where the copy's taxels all lie inside their cones the new stage is the copy's plain spread,
equal to 1e-12 (float32: to their rounding); elsewhere each pad's taxels still sum to the copy's
and differ from it only along one vector per pad (the pad's remainder), or, where the cones cannot
take the remainder along itself, lie inside their cones (`nearest_in_cones`). The copy carries the edge
roll-off's accounting in its own code (the pads' unsensed loads, compared like every field, and
the remainder taken against the sensed force); every frame checks taxels + unsensed = resultant.

The compiled read (backend "native", `_contact_read`) is held to the numpy backend on the same
states — every field, the taxels included, to 1e-12 of the frame's largest force — plus frames
with several contacts of one pair, several objects on one pad and no contact; its input checks
and its memory are tested here too."""
from __future__ import annotations

import os
import resource

import mujoco
import numpy as np
import pytest

from contact_model_helpers import INDEX, MOUNT, needs_native, numpy_twin, object_on_index_pad
from contact_read_v1 import ContactForceModelV1, DistributedV1
from wuji_tactile_device.hands import wuji_hand2 as wh
from wuji_tactile_device.producers.sim.contact_model import NATIVE_AVAILABLE, DistributedContact
from wuji_tactile_device.producers.sim.hand_sim import HandSimulation
from wuji_tactile_device.producers.sim.model import build_hand_spec
from wuji_tactile_device.producers.sim.producer import SimProducer
from wuji_tactile_device.producers.sim.scenarios import make_scenario

FIELDS = ("pad_forces_distal", "images", "pad_slip_velocity", "pad_stuck_fraction", "pad_unsensed_distal")


def _cone_excess(f, normals, mu):
    """(n,) |shear| − μ·normal of forces ON the taxels `f` (n, 3) with outward `normals` (n, 3)."""
    fn = -(f * normals).sum(axis=1)
    shear = f + fn[:, None] * normals
    return np.sqrt((shear * shear).sum(axis=1)) - mu * fn


def assert_taxels_as_before(new, old, block, normals, mu, scale, where):
    """Taxel rows `new`/`old` (n, 3) [N], their pad `block` (n,): equal where the old ones all lie
    inside their cones (μ `mu`); else, per pad, the same sum and either differences along one
    vector (the remainder placed along itself) or every new taxel of the pad inside its cone (the
    readings moved to the nearest ones inside, `nearest_in_cones`, where the cones cannot take
    the remainder along itself)."""
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
        along = np.abs(np.cross(db, u)).max() <= 1e-12 * scale
        moved = _cone_excess(new[block == b], normals[block == b], mu).max() <= 1e-12 * scale
        assert along or moved, (where, b, "one direction per pad, or all inside the cones")
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
    sums = np.stack([new.taxel_forces_distal[block == k].sum(axis=0) for k in range(5)])
    assert np.abs(sums + new.pad_unsensed_distal - new.pad_forces_distal).max() <= 1e-12 * scale, (where, "conservation")
    if same:    # float32 output: the float64 shares agree to 1e-12, so the roundings differ by one ulp at most
        np.testing.assert_allclose(new.taxel_forces, old.taxel_forces, rtol=2.0 ** -23, atol=1e-12 * scale,
                                   err_msg=str(where))
    return same


def _assert_native(new, ref, where):
    """The compiled read `new` against the numpy read `ref` of one state: every field, the taxels
    included, to 1e-12 of the frame's largest force (float32 taxels: to their rounding)."""
    scale = max(1.0, float(np.abs(ref.taxel_forces_distal).max()))
    assert (new.num_contacts, new.num_rejected) == (ref.num_contacts, ref.num_rejected), where
    for name in FIELDS + ("taxel_forces_distal",):
        a, b = getattr(new, name), getattr(ref, name)
        if b is None:
            assert a is None, (where, name)
            continue
        assert a.shape == b.shape, (where, name, a.shape, b.shape)
        d = float(np.abs(a - b).max(initial=0.0))
        assert d <= 1e-12 * scale, (where, name, d)
    np.testing.assert_allclose(new.taxel_forces, ref.taxel_forces, rtol=2.0 ** -23, atol=1e-12 * scale,
                               err_msg=str(where))


@pytest.mark.parametrize("name", ["press", "slip", "roll", "grasp-sphere", "grasp-cylinder", "grasp-box"])
def test_scenario_frames_read_as_before(name):
    """The numpy backend against the frozen copy; the default backend (native when built)
    against the numpy backend."""
    producer = SimProducer(make_scenario(name))
    model = producer.sim.contacts
    assert model.distributed.backend == ("native" if NATIVE_AVAILABLE else "numpy")
    twin = numpy_twin(model)
    old = ContactForceModelV1(twin)
    frame = compared = equal = crowded = 0
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
            numpy_read = twin.read(data, images=images)
            same = _assert_same(numpy_read, ref, (name, frame, images), twin, float(mu[0]) if mu.size else 1.0)
            _assert_native(model.read(data, images=images), numpy_read, (name, frame, images, model.distributed.backend))
        compared += ref.num_contacts > 0
        equal += same and ref.num_contacts > 0
        pads = np.count_nonzero(np.abs(ref.pad_forces_distal).sum(axis=1) > 0)
        crowded += ref.num_contacts > pads          # a pad with several contacts
    assert compared >= 20, compared     # frames with real contacts were compared
    assert equal >= 10, equal           # … most of them to the old taxels exactly
    if name == "grasp-box":
        assert crowded >= 5, crowded    # a box face: several contacts of one pair


def _static_cases(g):
    """Forces from stuck to gross slip, 0.1 to 8 N (past the first support size), one pair or two
    on the index pad, on both grids: (force, ratio, pairs, fine, pad, geom, f, fn, fn_vec, mu)."""
    n_hat = np.array([0.0, -1.0, 0.0])
    for force in (0.1, 0.5, 2.0, 8.0):
        for ratio in (0.0, 0.3, 0.8, 0.999, 1.0):
            for pairs in (1, 2):
                fn = force * np.array([1.0, 0.4])[:pairs]
                fn_vec = fn[:, None] * n_hat
                f = fn_vec + ratio * fn[:, None] * np.array([[0.6, 0.0, 0.8], [0.0, 0.0, -1.0]])[:pairs]
                pad, geom, mu = np.full(pairs, INDEX), np.full(pairs, g), np.ones(pairs)
                for fine in (False, True):
                    yield force, ratio, pairs, fine, pad, geom, f, fn, fn_vec, mu


@pytest.mark.parametrize("kind,radius", [("sphere", 0.005), ("sphere", 0.020), ("cylinder", 0.005),
                                         ("plate", 0.010), ("edge", 0.010)])
def test_static_contacts_solve_as_before(kind, radius):
    """Forces from stuck to gross slip, 0.1 to 8 N (past the first support size), on both grids;
    one pair, and two pairs on one pad (summed per pad)."""
    sim, g = object_on_index_pad(kind, radius=radius)
    dm = sim.contacts.distributed
    ref = DistributedV1(dm)
    slot_block = np.repeat(np.arange(5), dm.slots)
    for force, ratio, pairs, fine, pad, geom, f, fn, fn_vec, mu in _static_cases(g):
        t_new = dm.solve(sim.data, pad, geom, f, fn, fn_vec, mu, fine=fine)
        t_old = ref.solve(sim.data, pad, geom, f, fn, fn_vec, mu, fine=fine)
        where = (kind, radius, force, ratio, pairs, fine)
        a, b = dm.traction_field(t_new), ref.traction_field(t_old)
        assert np.abs(a - b).max() <= 1e-12 * force, where
        slots, unsensed = dm.pad_readings(t_new)
        assert_taxels_as_before(slots, ref.taxel_readings(t_old), slot_block,
                                dm._slot_normals.reshape(-1, 3), 1.0, force, where)
        assert np.abs(unsensed - ref.unsensed(t_old)).max() <= 1e-12 * force, where
        total = f.sum(axis=0)
        assert np.abs(slots.reshape(5, -1, 3)[INDEX].sum(axis=0) + unsensed[INDEX] - total).max() <= 1e-12 * force
        assert np.abs(t_new.stuck - t_old.stuck).max() <= 1e-12, where


def _shape_on_index_pad(kind: str):
    """A static hand with a capsule, an ellipsoid or a plane touching the index pad at the contact
    point of `object_on_index_pad` (the shapes that helper does not make), and its geom id."""
    from wuji_tactile_device.producers.sim.taxels import pad_taxels
    g = pad_taxels("right")[INDEX].geometry
    n = np.array([0.0, g.pad_side, 0.0])
    c = np.array([0.0, g.pad_side * g.radius, -0.012])
    across = np.array([1.0, 0.0, 0.0])
    if kind == "plane":          # local z (the plane's outward normal) toward the pad
        z = -n
        R = np.stack([across, np.cross(z, across), z], axis=1)
        gtype, size, centre = mujoco.mjtGeom.mjGEOM_PLANE, [0.02, 0.02, 0.001], c
    else:                        # local y along the pad normal, local z across the finger
        R = np.stack([np.cross(n, across), n, across], axis=1)
        if kind == "capsule":
            gtype, size = mujoco.mjtGeom.mjGEOM_CAPSULE, [0.004, 0.007, 0.0]
            centre = c + size[0] * n
        else:
            gtype, size = mujoco.mjtGeom.mjGEOM_ELLIPSOID, [0.004, 0.007, 0.003]
            centre = c + size[1] * n
    T = wh.link_transforms("right")[wh.hand_kinematics("right").fingers[INDEX].pad_body]
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(T[:3, :3] @ R).ravel())
    spec = build_hand_spec("right")
    spec.worldbody.add_body(name="obj").add_geom(name="obj_geom", type=gtype, size=size,
                                                 pos=list(MOUNT + T[:3, :3] @ centre + T[:3, 3]), quat=list(q))
    sim = HandSimulation("right", spec, ["obj_geom"])
    return sim, sim.model.geom("obj_geom").id


@needs_native
@pytest.mark.parametrize("kind,radius", [("sphere", 0.005), ("sphere", 0.020), ("cylinder", 0.005),
                                         ("plate", 0.010), ("edge", 0.010), ("capsule", 0), ("ellipsoid", 0),
                                         ("plane", 0)])
def test_native_solve_equals_numpy(kind, radius):
    """The compiled solution of given pairs against the numpy backend, every supported shape:
    taxels, image field, stuck fractions; stuck to gross slip, 0.1 to 8 N, both grids, one pair
    and two pairs on one pad."""
    sim, g = (_shape_on_index_pad(kind) if kind in ("capsule", "ellipsoid", "plane")
              else object_on_index_pad(kind, radius=radius))
    assert mujoco.mjtGeom(int(sim.model.geom_type[g])).name.lower().endswith(
        {"plate": "box", "edge": "box"}.get(kind, kind))
    c = sim.contacts
    dm = c.distributed
    assert dm.backend == "native"
    ref = DistributedContact(sim.model, c.pads, c.distal_bodies, c._object_geoms, backend="numpy")
    for force, ratio, pairs, fine, pad, geom, f, fn, fn_vec, mu in _static_cases(g):
        t = ref.solve(sim.data, pad, geom, f, fn, fn_vec, mu, fine=fine)
        slots, stuck, img, unsensed = dm.native_solve(sim.data, pad, geom, f, fn, fn_vec, mu, fine=fine,
                                                      pad_rotation=np.eye(3))
        field = img.reshape(5, 3, -1).transpose(0, 2, 1)
        where = (kind, radius, force, ratio, pairs, fine)
        ref_slots, ref_unsensed = ref.pad_readings(t)
        assert np.abs(slots - ref_slots).max() <= 1e-12 * force, where
        assert np.abs(unsensed - ref_unsensed).max() <= 1e-12 * force, where
        assert np.abs(field - ref.traction_field(t)).max() <= 1e-12 * force, where
        assert np.abs(stuck - t.stuck).max() <= 1e-12, where
        # conservation: each pad's taxels + unsensed load, and its image, sum to its pairs' force
        total = f.sum(axis=0)
        assert np.abs(slots.reshape(5, -1, 3)[INDEX].sum(axis=0) + unsensed[INDEX] - total).max() <= 1e-12 * force
        assert np.abs(field[INDEX].sum(axis=0) - total).max() <= 1e-12 * force


def test_a_plane_never_takes_the_padding_points():
    """Regression: the padding points (1 m off, area 0) of the pads with fewer quadrature points
    lie on a plane's far side, inside it: the first level-solve subset of such a pad held only
    padding (area 0: a division by zero, then a grown subset). They are now never the lowest."""
    import warnings
    sim, g = _shape_on_index_pad("plane")
    c = sim.contacts
    dm = DistributedContact(sim.model, c.pads, c.distal_bodies, c._object_geoms, backend="numpy")
    assert (dm.coarse.quad.area[INDEX] == 0).sum() > dm.coarse.first_k      # more padding than the subset
    f = np.array([[0.0, -0.5, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        flat, _, _, _, _ = dm._footprint(dm._transforms(sim.data, np.array([INDEX]), np.array([g])),
                                         np.array([INDEX]), np.array([g]), np.array([0.5]), dm.coarse, grow=False)
        assert np.all(dm.coarse.area_flat.take(flat) > 0)              # the first subset: real points only
        t = dm.solve(sim.data, np.array([INDEX]), np.array([g]), f, np.array([0.5]), f, np.array([1.0]), fine=False)
    assert np.isclose(t.Pn.sum(), 0.5, rtol=1e-12)


def _two_objects_on_index_pad(depth: float = 0.0003) -> HandSimulation:
    """A static hand with two object geoms (a sphere and a box) pressed `depth` [m] into the
    index pad at two places along the finger: two pairs on one pad, each with solver force."""
    from wuji_tactile_device.producers.sim.taxels import pad_taxels
    g = pad_taxels("right")[INDEX].geometry
    n = np.array([0.0, g.pad_side, 0.0])
    T = wh.link_transforms("right")[wh.hand_kinematics("right").fingers[INDEX].pad_body]
    spec = build_hand_spec("right")
    body = spec.worldbody.add_body(name="obj")
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(T[:3, :3]).ravel())
    for name, gtype, size, z, half in (("a", mujoco.mjtGeom.mjGEOM_SPHERE, [0.004, 0, 0], -0.008, 0.004),
                                       ("b", mujoco.mjtGeom.mjGEOM_BOX, [0.003, 0.003, 0.003], -0.017, 0.003)):
        c = np.array([0.0, g.pad_side * g.radius, z]) + (half - depth) * n
        body.add_geom(name=name, type=gtype, size=size, pos=list(MOUNT + T[:3, :3] @ c + T[:3, 3]), quat=list(q))
    return HandSimulation("right", spec, ["a", "b"])


@needs_native
def test_native_read_of_several_objects_and_no_contact():
    sim = _two_objects_on_index_pad()
    model = sim.contacts
    assert model.distributed.backend == "native"
    twin = numpy_twin(model)
    mujoco.mj_forward(sim.model, sim.data)
    for images in (False, True):
        ref = twin.read(sim.data, images=images)
        assert ref.num_contacts >= 2 and np.abs(ref.pad_forces_distal[INDEX]).sum() > 0.05, ref.num_contacts
        _assert_native(model.read(sim.data, images=images), ref, ("two objects", images))
    # no contact at all (the objects moved away), and contacts all rejected by the mask
    sim.model.body_pos[sim.model.body("obj").id] += [0.0, 0.0, 0.05]
    mujoco.mj_forward(sim.model, sim.data)
    for images in (False, True):
        got, ref = model.read(sim.data, images=images), twin.read(sim.data, images=images)
        assert ref.num_contacts == 0 and not np.abs(got.taxel_forces_distal).any()
        _assert_native(got, ref, ("no contact", images))
        assert np.array_equal(got.pad_stuck_fraction, np.ones(5))


def test_native_is_the_default_where_it_was_built():
    """CI (`.ci/run` sets WUJI_REQUIRE_NATIVE=1) must have compiled the read: its default backend
    is then "native"; a machine without a compiler reads with numpy (stated, not an error)."""
    sim, _ = object_on_index_pad("sphere")
    backend = sim.contacts.distributed.backend
    if os.environ.get("WUJI_REQUIRE_NATIVE") == "1":
        assert NATIVE_AVAILABLE and backend == "native", "the install did not compile _contact_read"
    assert backend == ("native" if NATIVE_AVAILABLE else "numpy")
    if not NATIVE_AVAILABLE:
        with pytest.raises(ValueError, match="backend 'native' was not compiled in this install"):
            DistributedContact(sim.model, sim.contacts.pads, sim.contacts.distal_bodies, sim.contacts._object_geoms,
                               backend="native")


@needs_native
def test_native_read_refuses_wrong_arrays_precisely():
    sim, g = object_on_index_pad("sphere")
    mujoco.mj_forward(sim.model, sim.data)
    dm = sim.contacts.distributed
    d = sim.data
    one = (np.array([INDEX]), np.array([g]), np.array([[0.0, -0.5, 0.1]]), np.array([0.5]),
           np.array([[0.0, -0.5, 0.0]]), np.array([1.0]))
    poses = (d.xmat, d.xpos, d.geom_xmat, d.geom_xpos)
    slots, stuck, uns = np.empty((5 * dm.slots, 3)), np.empty(1), np.empty((5, 3))
    dm.native.solve(*one, *poses, False, slots, uns, stuck, None, np.eye(3))       # the right arrays pass
    cases = [
        ((one[0].astype(np.int32),) + one[1:], poses, slots, stuck,
         r"pad must be int64 of shape \(n,\), got format 'i'"),
        (one[:2] + (np.zeros((1, 2)),) + one[3:], poses, slots, stuck,
         r"f_loc must be float64 of shape \(1, 3\), got format 'd' shape \(1, 2\)"),
        (one, (d.xmat[:, :4],) + poses[1:], slots, stuck, r"data.xmat must be float64 of shape \(n, 9\)"),
        (one, poses[:2] + (d.geom_xmat[:-1],) + poses[3:], slots, stuck,
         r"data.geom_xmat must be float64 of shape \(\d+, 9\), got format 'd' shape \(\d+, 9\)"),
        (one, poses, np.empty((5 * dm.slots - 1, 3)), stuck, r"slots_out must be float64 of shape \(200, 3\)"),
        (one, poses, slots[::2], stuck, r"slots_out must be a C-contiguous writable float64 array"),
        (one, poses, slots, np.empty(2), r"stuck_out must be float64 of shape \(1,\)"),
        ((np.array([7]),) + one[1:], poses, slots, stuck, r"pair 0: pad 7, geom \d+ \(pad 0..4, geom 0..\d+\)"),
    ]
    for args, ps, so, st, message in cases:
        with pytest.raises(ValueError, match=message):
            dm.native.solve(*args, *ps, False, so, uns, st, None, np.eye(3))
    with pytest.raises(ValueError, match=r"unsensed_out must be float64 of shape \(5, 3\)"):
        dm.native.solve(*one, *poses, False, slots, np.empty((5, 2)), stuck, None, np.eye(3))
    # a contact record pointing past the constraint forces, a geom id out of range
    sim = _two_objects_on_index_pad()
    mujoco.mj_forward(sim.model, sim.data)
    d = sim.data
    poses = (d.xmat, d.xpos, d.geom_xmat, d.geom_xpos)
    model = sim.contacts
    model.read(d)            # configures the reader with this hand's tables
    c = d.contact
    base = [c.geom, c.efc_address, c.frame, c.pos, c.dist, c.friction, d.efc_force, *poses]
    n = model.num_taxels
    outs = [np.empty((n, 3), np.float32), np.empty((n, 3)), np.empty((5, 3)), np.empty((5, 3)), np.empty((5, 3, 3)),
            np.empty(5), None, np.empty((max(d.ncon, 1), 8))]
    geom_far = np.array([[0, sim.model.ngeom]] * d.ncon, dtype=np.int32)
    adr_far = np.full(d.ncon, d.nefc, dtype=np.int32)
    code = model._pair_code_flat.take(c.geom @ model._pair_stride)
    assert d.ncon >= 1 and code.any()
    for i, (arr, message) in {0: (geom_far, r"contact 0: geom ids \(0, \d+\) outside -1..\d+"),
                              1: (adr_far, r"efc_address \d+ \+ 3 rows beyond efc_force's \d+"),
                              2: (np.zeros((d.ncon, 3)), r"data.contact.frame must be float64 of shape \(\d+, 9\)")
                              }.items():
        args = list(base)
        args[i] = arr
        if i == 1:
            args[0] = c.geom
        with pytest.raises(ValueError, match=message):
            model.distributed.native.read(*args, False, *outs)
    with pytest.raises(ValueError, match=r"taxel_out must be float32 of shape \(176, 3\)"):
        model.distributed.native.read(*base, False, np.empty((n, 3)), *outs[1:])
    with pytest.raises(ValueError, match=r"unsensed_out must be float64 of shape \(5, 3\)"):
        model.distributed.native.read(*base, False, *outs[:3], np.empty(5), *outs[4:])
    # the constant tables: checked once when the reader is made; a failed (re)initialisation
    # leaves a reader that refuses to read instead of reading freed tables
    from wuji_tactile_device.producers.sim import _contact_read
    fresh = _contact_read.Reader.__new__(_contact_read.Reader)
    with pytest.raises(ValueError, match=r"the Reader's tables were not set \(__init__ failed\)"):
        fresh.read(*base, False, *outs)
    reader = model.distributed._native_reader()
    with pytest.raises(ValueError, match=r"read\(\) before configure\(\)"):
        reader.read(*base, False, *outs)
    dm = model.distributed
    g = dm.coarse
    tables = [g.quad.points_h, g.area_flat, g.inv_area_flat, g.normal_flat, g.pixel_flat, g.GT, g.rim_groups,
              dm.fine.quad.points_h, dm.fine.area_flat, dm.fine.inv_area_flat, dm.fine.normal_flat,
              dm.fine.pixel_flat, dm.fine.GT, dm.fine.rim_groups, sim.model.geom_type, sim.model.geom_size,
              np.asarray(dm.distal_bodies, np.int64), dm._slot_normals, dm.stiffness, dm.coarse.first_k,
              dm.fine.first_k]
    bad_pixels = g.pixel_flat.copy()
    bad_pixels[3] = 48 * 32
    with pytest.raises(ValueError, match=r"coarse pixel\[3\] = 1536 outside 0..1535"):
        reader.__init__(*tables[:4], bad_pixels, *tables[5:])
    with pytest.raises(ValueError, match=r"the Reader's tables were not set"):
        reader.read(*base, False, *outs)
    with pytest.raises(ValueError, match=r"stiffness must be > 0 N/m\^3, got -1"):
        _contact_read.Reader(*tables[:-3], -1.0, *tables[-2:])
    with pytest.raises(ValueError, match=r"the first support sizes must be >= 1, got 0 and \d+"):
        _contact_read.Reader(*tables[:-2], 0, tables[-1])
    with pytest.raises(ValueError, match=r"fine GT must be float64 of shape \(\d+, 40\)"):
        _contact_read.Reader(*tables[:12], dm.fine.GT[:, :39].copy(), *tables[13:])
    gaps = g.rim_groups.copy()
    gaps[1, 2, 0] += 1                                  # a point between two groups belongs to none
    with pytest.raises(ValueError, match=r"coarse rim groups of pad 1: group 2 is \[\d+, \d+\) radius"):
        _contact_read.Reader(*tables[:6], gaps, *tables[7:])


@needs_native
def test_native_read_memory_stays_flat():
    """100 000 reads (and 20 000 refused calls) leave the process's memory where it was: no
    per-call allocation or buffer view kept."""
    producer = SimProducer(make_scenario("press"), max_frames=400)
    while not producer.finished:
        producer.next_frame()
    model, d = producer.sim.contacts, producer.sim.data
    assert model.read(d).num_contacts >= 5

    def rss_kb() -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * (resource.getpagesize() // 1024)

    for _ in range(2000):
        model.read(d, images=True)
    before = rss_kb()
    for _ in range(100_000):
        model.read(d)
    bad = np.empty((3, 3), np.float32)
    reader = model.distributed.native
    c = d.contact
    for _ in range(20_000):
        try:
            reader.read(c.geom, c.efc_address, c.frame, c.pos, c.dist, c.friction, d.efc_force, d.xmat, d.xpos,
                        d.geom_xmat, d.geom_xpos, False, bad, bad, bad, bad, bad, bad, None, bad)
        except ValueError:
            pass
    grown = rss_kb() - before
    assert grown < 2048, f"RSS grew by {grown} kB over 120 000 calls"


def test_a_stale_build_is_refused_loudly():
    """An extension of another calling convention (left by an older install) is not used with
    wrong arguments: importing the contact model names the file and says how to rebuild."""
    import subprocess
    import sys
    code = ("import importlib.machinery, sys, types; name = 'wuji_tactile_device.producers.sim._contact_read'; "
            "m = types.ModuleType(name); m.ABI = 0; m.__file__ = 'old.so'; "
            "m.__spec__ = importlib.machinery.ModuleSpec(name, None); sys.modules[name] = m; "
            "import wuji_tactile_device.producers.sim.contact_model")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert r.returncode == 1
    assert ("old.so: a stale build of the compiled contact read (ABI 0, this package needs 3): rebuild it with "
            "`pip install -e .`") in r.stderr


def test_an_install_without_the_extension_reads_with_numpy():
    """Regression: without the built module the package must still import (it raised ImportError:
    a `from . import` of a missing submodule is not a ModuleNotFoundError) and read with numpy."""
    import subprocess
    import sys
    code = ("import importlib.util, sys; find = importlib.util.find_spec; "
            "name = 'wuji_tactile_device.producers.sim._contact_read'; "
            "importlib.util.find_spec = lambda n, *a: None if n == name else find(n, *a); "
            "from wuji_tactile_device.producers.sim import contact_model as cm; "
            "from wuji_tactile_device.producers.sim.producer import SimProducer; "
            "from wuji_tactile_device.producers.sim.scenarios import make_scenario; "
            "p = SimProducer(make_scenario('press'), max_frames=400); "
            "[p.next_frame() for _ in range(400)]; r = p.sim.read(); "
            "print(cm.NATIVE_AVAILABLE, p.sim.contacts.distributed.backend, r.num_contacts, name in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert r.returncode == 0, r.stderr
    available, backend, contacts, loaded = r.stdout.split()
    assert (available, backend, loaded) == ("False", "numpy", "False") and int(contacts) >= 1
