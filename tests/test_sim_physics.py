"""Simulated hand: contact extraction, signs, frames, mask, conservation, metadata/LBS."""
from __future__ import annotations

import mujoco
import numpy as np
import pytest

from wuji_tactile_device.contract.geometry import skin_taxel_positions
from wuji_tactile_device.hands import wuji_hand2 as wh
from wuji_tactile_device.producers.sim.contact_forces import contact_frame_forces
from wuji_tactile_device.producers.sim.hand_sim import HandSimulation
from wuji_tactile_device.producers.sim.layout_metadata import sim_metadata
from wuji_tactile_device.producers.sim.model import build_hand_spec
from wuji_tactile_device.producers.sim.taxels import pad_taxels, spacing_summary

MOUNT = np.array([0.0, 0.0, 0.3])


def _index_pad_point(side: str, offset_along_normal: float, back: bool = False):
    """World point on the index pad centre (or the nail side) displaced along the outward normal."""
    pad = pad_taxels(side)[1]
    T = wh.link_transforms(side)[wh.hand_kinematics(side).fingers[1].pad_body]
    n_local = np.array([0.0, pad.geometry.pad_side * (-1 if back else 1), 0.0])
    p_local = pad.pad_origin * np.array([1, -1 if back else 1, 1])
    n = T[:3, :3] @ n_local
    return MOUNT + T[:3, :3] @ p_local + T[:3, 3] + offset_along_normal * n, n, T[:3, :3]


def _press_sim(side="right", *, geom="box", back=False, depth=0.0) -> HandSimulation:
    """A fixed object touching the index pad (or its back) of the open hand; the index MCP servo
    then pushes the finger into it (toward the palm side, or toward the back for `back`)."""
    spec = build_hand_spec(side)
    p, n, R = _index_pad_point(side, 0.0, back)
    body = spec.worldbody.add_body(name="obj")
    if geom == "box":
        half = 0.004
        Rb = np.stack([R[:, 0], np.cross(n, R[:, 0]), n], axis=1)
        q = np.zeros(4)
        mujoco.mju_mat2Quat(q, Rb.ravel())
        body.add_geom(name="obj_geom", type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.005, 0.005, half],
                      pos=list(p + n * (half - depth)), quat=list(q))
    else:
        r = 0.006
        body.add_geom(name="obj_geom", type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[r, 0, 0], pos=list(p + n * (r - depth)))
    sim = HandSimulation(side, spec, ["obj_geom"])
    q = np.zeros(20)
    q[4] = -0.08 if back else 0.08
    sim.set_joint_targets(q)
    for _ in range(30):
        sim.step_frame()
    return sim


def test_no_contact_gives_exact_zeros():
    spec = build_hand_spec("right")
    spec.worldbody.add_body(name="far", pos=[0.5, 0, 0]).add_geom(name="far_geom", type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.01] * 3)
    sim = HandSimulation("right", spec, ["far_geom"])
    sim.step_frame()
    r = sim.read(images=True)
    assert r.taxel_forces.shape == (176, 3) and r.taxel_forces.dtype == np.float32
    assert not r.taxel_forces.any() and not r.resultants.any() and not r.images.any()
    assert r.num_contacts == 0
    # The reading still carries this frame's distal rotations (not a placeholder).
    np.testing.assert_array_equal(r.distal_rotations, sim.data.xmat[sim.distal_bodies].reshape(5, 3, 3))
    assert not np.array_equal(r.distal_rotations[0], np.eye(3))


@pytest.mark.parametrize("geom", ["box", "sphere"])
def test_single_press_signs_and_conservation(geom):
    sim = _press_sim(geom=geom)
    r = sim.read(images=True)
    assert r.num_contacts >= 1 and r.num_rejected == 0
    # Only the index pad is loaded; pressing pushes the pad toward the nail: pad-frame Fy > 0.
    assert np.all(r.resultants[[0, 2, 3, 4]] == 0)
    assert r.resultants[1, 1] > 0.05
    # Per-axis conservation in the pad frame (taxel shares plus the pad's unsensed load, and the
    # image pixels); mid-pad the taxels read ≥ 97 % of the load
    sl = slice(40, 74)
    np.testing.assert_allclose(r.taxel_forces_pad[sl].sum(axis=0) + r.unsensed[1], r.resultants[1], rtol=0, atol=1e-9)
    assert np.linalg.norm(r.unsensed[1]) < 0.03 * np.linalg.norm(r.resultants[1])
    assert np.all(r.unsensed[[0, 2, 3, 4]] == 0)
    np.testing.assert_allclose(r.images[1].sum(axis=(1, 2)), r.resultants[1], rtol=0, atol=1e-9)
    # Under the contact the force ON each taxel points into the pad: fz < 0 in taxel axes.
    loaded = np.linalg.norm(r.taxel_forces_pad[sl], axis=1) > 1e-3 * np.linalg.norm(r.resultants[1])
    assert loaded.sum() >= 2
    assert np.all(r.taxel_forces[sl][loaded, 2] < 0)
    # Independent path: mj_contactForce rotated to world, sign by the pad's side.
    m, d = sim.model, sim.data
    total = np.zeros(3)
    pad_geom = m.geom("r_index_finger_distal_collision").id
    for i in range(d.ncon):
        c = d.contact[i]
        f6 = np.zeros(6)
        mujoco.mj_contactForce(m, d, i, f6)
        world_on_g1 = c.frame.reshape(3, 3).T @ f6[:3]
        total += world_on_g1 if c.geom[1] == pad_geom else -world_on_g1
    np.testing.assert_allclose(r.pad_forces_world[1], total, rtol=0, atol=1e-12)
    # The world force pushes the pad inward (against its outward normal).
    _, n, _ = _index_pad_point("right", 0.0)
    assert total @ n < 0


def test_both_geom_orders_occur_and_give_the_same_sign():
    """Sphere (type < capsule) lands as geom[0], box (type > capsule) as geom[1]: both press inward."""
    seen = {}
    for geom in ("box", "sphere"):
        sim = _press_sim(geom=geom)
        m, d = sim.model, sim.data
        pad_geom = m.geom("r_index_finger_distal_collision").id
        seen[geom] = {int(d.contact.geom[i][1] == pad_geom) for i in range(d.ncon)}
        assert sim.read().resultants[1, 1] > 0.05
    assert seen["box"] != seen["sphere"], seen


def test_efc_rebuild_equals_mj_contact_force_bit_for_bit():
    for cone in (mujoco.mjtCone.mjCONE_ELLIPTIC, mujoco.mjtCone.mjCONE_PYRAMIDAL):
        sim = _press_sim()
        sim.model.opt.cone = cone
        for _ in range(20):
            sim.step_frame()
        idx = np.arange(sim.data.ncon)
        assert idx.size > 0
        ours = contact_frame_forces(sim.model, sim.data, idx)
        for i in idx:
            f6 = np.zeros(6)
            mujoco.mj_contactForce(sim.model, sim.data, i, f6)
            assert np.array_equal(ours[i], f6[:3]), (cone, i, ours[i], f6[:3])


def test_back_side_contact_is_masked_out():
    sim = _press_sim(back=True)
    r = sim.read()
    assert sim.data.ncon >= 1
    assert r.num_rejected >= 1 and r.num_contacts == 0
    assert not r.taxel_forces.any()


def test_inter_finger_contact_is_not_measured():
    """Distal segments pressed against each other: collisions happen, no pad force is reported."""
    spec = build_hand_spec("right")
    spec.worldbody.add_body(name="far", pos=[0.5, 0, 0]).add_geom(name="far_geom", type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.01] * 3)
    sim = HandSimulation("right", spec, ["far_geom"])
    q = np.zeros(20)
    q[5], q[9] = -0.6, 0.6     # index and middle abduct into each other
    q[4], q[8] = 0.3, 0.3
    sim.set_joint_targets(q)
    pairs = set()
    for _ in range(50):
        sim.step_frame()
        m, d = sim.model, sim.data
        pairs |= {tuple(sorted((m.geom(g[0]).name, m.geom(g[1]).name))) for g in d.contact.geom[:d.ncon]}
        assert not sim.read().taxel_forces.any()
    assert any("distal" in a and "distal" in b for a, b in pairs), pairs


def test_taxel_layout_counts_frames_and_spacing():
    for side in ("right", "left"):
        pads = pad_taxels(side)
        assert [len(p.positions) for p in pads] == [40, 34, 34, 34, 34]
        for p in pads:
            R = p.rotations
            np.testing.assert_allclose(np.einsum("nji,njk->nik", R, R), np.broadcast_to(np.eye(3), R.shape), atol=1e-12)
            np.testing.assert_allclose(np.linalg.det(R), 1.0, atol=1e-12)
            # Normals are outward on the palm side; the pad stays below its proximal edge.
            assert np.all(p.geometry.pad_side * p.normals[:, 1] > 0.2)
            assert np.all(p.positions[:, 2] < -0.005)
        s = spacing_summary(side)
        assert all(2.5 < lo <= med <= hi < 5.5 for lo, med, hi in s.values()), s
    # Deterministic and mirrored.
    np.testing.assert_array_equal(pad_taxels("left")[1].positions, pad_taxels("right")[1].positions * [1, -1, 1])


def _openxr_point(side, body, q=None):
    T = wh.WRIST_TO_OPENXR[side] @ wh.link_transforms(side, q)[body]
    return T[:3, 3]


def _model_point_in_openxr(sim: HandSimulation, body: str):
    d = sim.data
    R, p = d.xmat[sim.wrist_body].reshape(3, 3), d.xpos[sim.wrist_body]
    local = R.T @ (d.xpos[sim.model.body(body).id] - p)
    return wh.WRIST_TO_OPENXR[sim.side][:3, :3] @ local


@pytest.mark.parametrize("side", ["right", "left"])
def test_openxr_wrist_frame_conventions_on_the_model(side):
    spec = build_hand_spec(side)
    spec.worldbody.add_body(name="far", pos=[0.5, 0, 0]).add_geom(name="far_geom", type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.01] * 3)
    sim = HandSimulation(side, spec, ["far_geom"])
    p = side[0] + "_"
    little, index = _model_point_in_openxr(sim, p + "pinky_proximal"), _model_point_in_openxr(sim, p + "index_finger_proximal")
    # +X: right hand toward the little finger; left hand toward the thumb side.
    assert (little[0] > index[0]) if side == "right" else (index[0] > little[0])
    # +Z toward the forearm: fingertips lie at negative z.
    for f in ("index_finger", "middle_finger", "ring_finger", "pinky"):
        assert _model_point_in_openxr(sim, f"{p}{f}_tip_sensor_frame")[2] < -0.1
    # +Y out of the back of the hand: flexing moves a fingertip toward −Y (the palm side).
    q = np.zeros(20)
    q[8], q[10] = 1.0, 1.0
    sim.data.qpos[sim.qpos_adr] = q
    mujoco.mj_forward(sim.model, sim.data)
    assert _model_point_in_openxr(sim, p + "middle_finger_distal")[1] < -0.03
    # The palm-side pad normal points to −Y at the open hand.
    seg = wh.segment_poses_in_wrist(side)["middle"]
    from wuji_tactile_device.contract.geometry import quat_to_matrix
    R = quat_to_matrix(seg[3:])
    assert R[1, 1] > 0.95          # segment +Y (nail side) ≈ wrist +Y (back of the hand)
    assert R[2, 2] > 0.95          # segment +Z along the bone toward the wrist


@pytest.mark.parametrize("side", ["right", "left"])
def test_metadata_validates_and_lbs_reproduces_simulated_taxels_at_a_bent_pose(side):
    md = sim_metadata(side)
    md.validate()
    assert md.num_taxels == 176 and [int(j) for j in md.joint_ids] == [4, 9, 14, 19, 24]
    assert np.all(md.segment_weights[:, 0] == 1) and np.all(md.segment_weights[:, 1:] == 0)
    assert np.all(md.segment_indices == md.segment_indices[:, :1])
    spec = build_hand_spec(side, mount_quat_wxyz=(0.9, 0.1, -0.3, 0.2))
    spec.worldbody.add_body(name="far", pos=[0.5, 0, 0]).add_geom(name="far_geom", type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.01] * 3)
    sim = HandSimulation(side, spec, ["far_geom"])
    q = np.random.default_rng(3).uniform(0.1, 0.9, 20)
    sim.data.qpos[sim.qpos_adr] = q
    mujoco.mj_forward(sim.model, sim.data)
    skinned = skin_taxel_positions(md, sim.segment_poses_in_wrist())
    np.testing.assert_allclose(skinned, sim.taxel_positions_in_wrist(), rtol=0, atol=2e-6)
    # And the shared kinematics agree with MuJoCo at that pose.
    fk = wh.segment_poses_in_wrist(side, q)
    np.testing.assert_allclose(np.stack([fk[f] for f in wh.FINGERS])[:, :3], sim.segment_poses_in_wrist()[:, :3], atol=1e-9)


def _reference_image(pad, contacts_p, contacts_f):
    """The distribution rule evaluated directly over every valid pixel of one pad (pad frame)."""
    valid = pad.pixel_valid
    pts = pad.pixel_positions[valid]
    out = np.zeros((valid.sum(), 3))
    for p, f in zip(contacts_p, contacts_f, strict=True):
        d2 = ((pts - p) ** 2).sum(axis=1)
        delta = d2 - d2.min()
        u = np.where(delta <= (3 * 0.0015) ** 2, np.exp(-delta / (2 * 0.0015 ** 2)), 0.0)
        out += (u / u.sum())[:, None] * f
    img = np.zeros((3,) + valid.shape)
    img[:, valid] = out.T
    return img


def test_force_images_follow_the_rule_on_every_valid_pixel():
    """The Gaussian model's images (the distributed model's are in test_sim_contact_model)."""
    from wuji_tactile_device.producers.sim.scenarios import PressScenario
    from wuji_tactile_device.run.simulation import run_scenario
    got = {}
    scenario = PressScenario()
    scenario.contact_model = "gaussian"

    def grab(sim, reading):
        if sim.frames == 800:
            got["contacts"], _, _ = sim.contacts.pad_contacts(sim.data)
            got["reading"] = sim.read(images=True)

    run_scenario(scenario, max_frames=800, on_frame=grab)
    c, r = got["contacts"], got["reading"]
    assert len(c.pad) >= 5
    for k, pad in enumerate(pad_taxels("right")):
        sel = c.pad == k
        ref = _reference_image(pad, c.position_distal[sel], c.force_pad[sel])
        np.testing.assert_allclose(r.images[k], ref, rtol=0, atol=1e-12)
        assert np.all(r.images[k][:, ~pad.pixel_valid] == 0)
        np.testing.assert_allclose(r.images[k].sum(axis=(1, 2)), r.resultants[k], rtol=0, atol=1e-9)
    valid_counts = [int(p.pixel_valid.sum()) for p in pad_taxels("right")]
    assert valid_counts == [1394, 1390, 1390, 1390, 1390]


def test_force_images_exact_for_contacts_off_the_surface():
    """Contacts far off the surface (the window cannot decide) fall back to the whole pad."""
    from wuji_tactile_device.producers.sim.contact_forces import PadContacts
    spec = build_hand_spec("right")
    spec.worldbody.add_body(name="far", pos=[0.5, 0, 0]).add_geom(name="far_geom", type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.01] * 3)
    sim = HandSimulation("right", spec, ["far_geom"])
    pad = pad_taxels("right")[2]
    on = pad.pad_origin
    off = pad.pad_origin + np.array([0.0, 0.006, -0.004])          # 6 mm out of the surface
    edge = np.array([0.0075, 0.002, -0.024])                       # near the side and the tip
    p = np.stack([on, off, edge])
    f = np.array([[0.01, 0.2, -0.03], [0.0, 0.1, 0.0], [0.02, 0.05, 0.01]])
    c = PadContacts(np.array([2, 2, 2]), f, f, p)  # force_distal unused by the images
    img = sim.contacts._images(c)
    np.testing.assert_allclose(img[2], _reference_image(pad, p, f), rtol=0, atol=1e-12)
    np.testing.assert_allclose(img[2].sum(axis=(1, 2)), f.sum(axis=0), rtol=0, atol=1e-12)


def test_pad_forces_follow_a_cone_change_after_construction():
    """Switching the model to pyramidal cones later still yields mj_contactForce's forces."""
    sim = _press_sim()
    sim.model.opt.cone = mujoco.mjtCone.mjCONE_PYRAMIDAL
    for _ in range(20):
        sim.step_frame()
    r = sim.read()
    m, d = sim.model, sim.data
    pad_geom = m.geom("r_index_finger_distal_collision").id
    total = np.zeros(3)
    for i in range(d.ncon):
        f6 = np.zeros(6)
        mujoco.mj_contactForce(m, d, i, f6)
        w = d.contact[i].frame.reshape(3, 3).T @ f6[:3]
        total += w if d.contact[i].geom[1] == pad_geom else -w
    assert r.num_contacts >= 1
    np.testing.assert_allclose(r.pad_forces_world[1], total, rtol=0, atol=1e-12)


def test_numpy_gufunc_fallbacks_compute_the_same_products():
    """The per-contact products use numpy ≥ 2.2 gufuncs when present; the einsum fallbacks used
    on older numpy must compute the same batched dot, row-vector × matrix and matrix × vector."""
    import wuji_tactile_device.producers.sim.contact_forces as cf
    rng = np.random.default_rng(1)
    a, b, m = rng.normal(size=(7, 40, 3)), rng.normal(size=(7, 40, 3)), rng.normal(size=(7, 3, 3))
    v = rng.normal(size=(7, 3))
    expected = {"dot": (a * b).sum(axis=-1), "vecmat": (v[:, :, None] * m).sum(axis=1),
                "matvec": (m * v[:, None, :]).sum(axis=2)}
    for impl in ((cf._vecdot, cf._vecmat, cf._matvec),
                 (cf._vecdot_einsum, cf._vecmat_einsum, cf._matvec_einsum)):
        np.testing.assert_allclose(impl[0](a, b), expected["dot"], rtol=1e-12)
        np.testing.assert_allclose(impl[1](v, m), expected["vecmat"], rtol=1e-12)
        np.testing.assert_allclose(impl[2](m, v), expected["matvec"], rtol=1e-12)
