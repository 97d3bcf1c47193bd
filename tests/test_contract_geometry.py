"""Pose algebra, rebasing and LBS, checked against independent matrix arithmetic."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import DISTAL_JOINTS, make_metadata

from wuji_tactile_device import DataLayoutError, TactileMetadata
from wuji_tactile_device.contract import geometry as g


def axis_angle_matrix(axis, angle) -> np.ndarray:
    """Rodrigues' formula, written out here as an independent reference."""
    k = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def pose(R, t) -> np.ndarray:
    return g.pose_from_matrix(R, t)


def homogeneous(R, t) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3], m[:3, 3] = R, t
    return m


def test_quaternion_matrix_round_trip_and_convention():
    rng = np.random.default_rng(0)
    R = np.stack([axis_angle_matrix(rng.normal(size=3), a) for a in rng.uniform(-np.pi, np.pi, 200)])
    q = g.matrix_to_quat(R)
    assert np.allclose(g.quat_to_matrix(q), R, atol=1e-12)
    assert np.allclose(np.linalg.norm(q, axis=1), 1) and (q[:, 3] >= 0).all()
    # 90 degrees about z as (x, y, z, w) = (0, 0, sin45, cos45)
    assert np.allclose(g.matrix_to_quat(axis_angle_matrix([0, 0, 1], np.pi / 2)), [0, 0, np.sqrt(0.5), np.sqrt(0.5)])
    # 180-degree rotations (w = 0) take the other branches.
    for axis in np.eye(3):
        assert np.allclose(g.quat_to_matrix(g.matrix_to_quat(axis_angle_matrix(axis, np.pi))), axis_angle_matrix(axis, np.pi))


def test_rpy_is_z_then_y_then_x():
    roll, pitch, yaw = 0.3, -0.7, 1.1
    expected = axis_angle_matrix([0, 0, 1], yaw) @ axis_angle_matrix([0, 1, 0], pitch) @ axis_angle_matrix([1, 0, 0], roll)
    assert np.allclose(g.rpy_to_matrix([roll, pitch, yaw]), expected)


def test_compose_invert_apply_match_homogeneous_matrices():
    rng = np.random.default_rng(1)
    Ra, Rb = axis_angle_matrix(rng.normal(size=3), 0.8), axis_angle_matrix(rng.normal(size=3), -2.0)
    ta, tb = rng.normal(size=3), rng.normal(size=3)
    a, b = pose(Ra, ta), pose(Rb, tb)
    p = rng.normal(size=(10, 3))
    ab = homogeneous(Ra, ta) @ homogeneous(Rb, tb)
    assert np.allclose(g.pose_to_matrix(g.pose_compose(a, b)), ab)
    assert np.allclose(g.pose_apply(g.pose_compose(a, b), p), p @ ab[:3, :3].T + ab[:3, 3])
    assert np.allclose(g.pose_to_matrix(g.pose_invert(a)), np.linalg.inv(homogeneous(Ra, ta)))
    assert np.allclose(g.pose_rotate(a, p), p @ Ra.T)  # rotation only: no translation


def test_identity_bind_and_current_poses_pass_taxels_through():
    md = make_metadata(40)
    J = md.num_segments
    ident = np.tile(g.IDENTITY_POSE, (J, 1))
    md_identity = dataclasses.replace(md, segment_bind_poses=ident)
    assert np.allclose(g.skin_taxel_positions(md_identity, ident), md.taxel_bind_poses[:, :3], atol=1e-7)
    # Current == bind, for any bind poses, also passes through.
    assert np.allclose(g.skin_taxel_positions(md, md.segment_bind_poses), md.taxel_bind_poses[:, :3], atol=1e-6)


def test_rigid_attachment_equals_the_rigid_transform():
    md = make_metadata(25)
    rng = np.random.default_rng(2)
    moves = [homogeneous(axis_angle_matrix(rng.normal(size=3), rng.uniform(-2, 2)), rng.normal(scale=0.05, size=3))
             for _ in range(md.num_segments)]
    B = g.pose_to_matrix(md.segment_bind_poses)
    current = np.stack([g.pose_from_matrix((moves[j] @ B[j])[:3, :3], (moves[j] @ B[j])[:3, 3]) for j in range(md.num_segments)])
    seg = md.segment_indices[:, 0]
    p_bind = md.taxel_bind_poses[:, :3].astype(np.float64)
    expected = np.stack([(moves[seg[i]] @ np.append(p_bind[i], 1))[:3] for i in range(md.num_taxels)])
    assert np.allclose(g.skin_taxel_positions(md, current), expected, atol=1e-9)
    # Full taxel frames and forces: rotation of each taxel frame by its segment's motion.
    frames = g.rigid_taxel_poses(md, current)
    T_bind = g.pose_to_matrix(md.taxel_bind_poses)
    for i in (0, 7, 24):
        assert np.allclose(g.pose_to_matrix(frames[i]), moves[seg[i]] @ T_bind[i], atol=1e-6)
    f = rng.normal(size=(md.num_taxels, 3))
    expected_f = np.stack([(moves[seg[i]] @ T_bind[i])[:3, :3] @ f[i] for i in range(md.num_taxels)])
    assert np.allclose(g.taxel_forces_in_root(md, current, f), expected_f, atol=1e-6)


def test_blended_taxel_is_the_weighted_mix_and_has_no_rigid_frame():
    joints = DISTAL_JOINTS[:2]
    ident = np.tile(g.IDENTITY_POSE, (2, 1))
    md = TactileMetadata(joint_ids=joints, segment_bind_poses=ident, taxel_bind_poses=[[0.01, 0, 0, 0, 0, 0, 1]],
                         segment_indices=[[0, 1, 0, 0]], segment_weights=[[0.25, 0.75, 0, 0]])
    md.validate()
    current = ident.copy()
    current[1, :3] = [0, 0.04, 0]  # second segment moved 4 cm along y
    assert np.allclose(g.skin_taxel_positions(md, current), [[0.01, 0.03, 0]])
    with pytest.raises(DataLayoutError, match=r"taxel 0 is blended across segments \[0, 1\]"):
        g.rigid_taxel_poses(md, current)


def test_rebasing_needs_rotation_and_translation_of_the_wrist():
    """A hand sample in base space with a rotated, translated wrist: the full inverse gives the
    right wrist-frame joint poses; subtracting the wrist position alone does not."""
    md = make_metadata(30)
    rng = np.random.default_rng(3)
    T_base_wrist = pose(axis_angle_matrix([0.2, 1.0, -0.3], 1.3), [0.4, 1.2, -0.7])
    current_root = md.segment_bind_poses.astype(np.float64).copy()
    current_root[:, :3] += rng.normal(scale=0.01, size=(md.num_segments, 3))
    T_base_joints = g.pose_compose(T_base_wrist, current_root)  # what a hand tracker reports
    rebased = g.rebase_to_root(T_base_wrist, T_base_joints)
    assert np.allclose(rebased[:, :3], current_root[:, :3], atol=1e-12)
    truth = g.skin_taxel_positions(md, current_root)
    assert np.allclose(g.skin_taxel_positions(md, rebased), truth, atol=1e-9)
    # The wrong way: translation only.
    naive = T_base_joints.copy()
    naive[:, :3] -= T_base_wrist[:3]
    error = np.linalg.norm(g.skin_taxel_positions(md, naive) - truth, axis=1)
    assert error.max() > 0.01  # centimetres off: subtracting the position alone is wrong
    # Base-space positions follow from the root ones.
    assert np.allclose(g.pose_apply(T_base_wrist, truth), g.pose_apply(g.pose_compose(T_base_wrist, g.pose_invert(T_base_wrist)), g.pose_apply(T_base_wrist, truth)))


def test_shape_errors_are_typed():
    md = make_metadata(5)
    with pytest.raises(DataLayoutError, match=r"current segment poses \(4, 7\) do not match the \(5, 7\)"):
        g.skin_taxel_positions(md, md.segment_bind_poses[:4])
    with pytest.raises(DataLayoutError, match=r"pose must have shape \(..., 7\)"):
        g.pose_invert(np.zeros((3, 6)))
