"""The simulated hand's 26 OpenXR joint poses in the simulation world (base space).

The simulator knows every joint angle and where the wrist is: the joint poses are the hand's
forward kinematics (`hands.openxr_pose`) placed by the wrist body's current world pose. These are
what a recording carries on Isaac Teleop's hand channels (`recording.hand_channels`), so that
Isaac Teleop's `HandsSource` replays the simulated hand and `TaxelSkinning` puts the taxels where
the simulator had them.
"""
from __future__ import annotations

import numpy as np

from ...contract.geometry import pose_from_matrix, pose_to_matrix
from ...hands.openxr_pose import openxr_joint_poses
from .hand_sim import HandSimulation

#: How the hand channels' base space is named in the recording (channel metadata `frame`).
SIM_BASE_SPACE = "simulation world (MuJoCo world frame, z up) [m]"


def wrist_body_in_world(sim: HandSimulation) -> np.ndarray:
    """4×4 pose of the wrist body (`r_wrist`/`l_wrist`) in the simulation world, now."""
    T = np.eye(4)
    T[:3, :3] = sim.data.xmat[sim.wrist_body].reshape(3, 3)
    T[:3, 3] = sim.data.xpos[sim.wrist_body]
    return T


def sim_hand_joint_poses(sim: HandSimulation) -> np.ndarray:
    """(26, 7) OpenXR joint poses of the simulated hand in the simulation world, from the current
    joint angles (`qpos`) and wrist pose."""
    return openxr_joint_poses(sim.side, sim.joint_angles(), wrist_body_in_world(sim))


class SimHandPoses:
    """`sim_hand_joint_poses` at the cost of a few small matrix products per frame (≈ 60 µs instead
    of ≈ 3 ms of Python forward kinematics), for the producer's per-frame hand channels.

    Each OpenXR joint's orientation is fixed to one MuJoCo body of the hand and its origin is a
    point fixed in one (possibly other) body — the robot's two-axis MCP/CMC joints put the
    OpenXR frame at the first link's origin with the second link's orientation — so its world pose
    follows from those bodies' world poses (`xpos`, `xmat`, already computed by the step's
    `mj_forward`) and constant offsets. Bodies and offsets are found once, here: the offsets at one
    configuration must reproduce `sim_hand_joint_poses` at two others to 1e-9 (m, rotation
    entries), else `ValueError`."""

    def __init__(self, sim: HandSimulation):
        import mujoco

        model, scratch = sim.model, mujoco.MjData(sim.model)
        scratch.qpos[:] = sim.data.qpos
        rng = np.random.default_rng(0)
        n = len(sim.qpos_adr)
        R_b, p_b, R_j, p_j = [], [], [], []
        for q in (np.zeros(n), rng.uniform(-0.5, 0.5, n), rng.uniform(-0.5, 0.5, n)):
            scratch.qpos[sim.qpos_adr] = q
            mujoco.mj_kinematics(model, scratch)
            T_w = np.eye(4)
            T_w[:3, :3] = scratch.xmat[sim.wrist_body].reshape(3, 3)
            T_w[:3, 3] = scratch.xpos[sim.wrist_body]
            joints = pose_to_matrix(openxr_joint_poses(sim.side, q, T_w))
            R_b.append(scratch.xmat.reshape(-1, 3, 3).copy())
            p_b.append(scratch.xpos.copy())
            R_j.append(joints[:, :3, :3])
            p_j.append(joints[:, :3, 3])
        # candidate offsets from configuration 0, for every (body, joint) pair
        rot = np.einsum("bji,njk->bnik", R_b[0], R_j[0])  # R_bᵀ R_j
        point = np.einsum("bji,bnj->bni", R_b[0], p_j[0][None] - p_b[0][:, None])  # R_bᵀ (p_j − p_b)
        rot_err = np.zeros(rot.shape[:2])
        pos_err = np.zeros(rot.shape[:2])
        for c in (1, 2):
            rot_err = np.maximum(rot_err, np.abs(np.einsum("bij,bnjk->bnik", R_b[c], rot) - R_j[c][None]).max(axis=(2, 3)))
            predicted = p_b[c][:, None] + np.einsum("bij,bnj->bni", R_b[c], point)
            pos_err = np.maximum(pos_err, np.abs(predicted - p_j[c][None]).max(axis=2))
        # only the hand's own bodies (the wrist and below): the world and the lift mount hold
        # still in these configurations but not in a run
        in_hand = np.array([_descends(model, b, sim.wrist_body) for b in range(model.nbody)])
        rot_err[~in_hand] = np.inf
        pos_err[~in_hand] = np.inf
        for what, err in (("orientation", rot_err), ("origin", pos_err)):
            missing = np.flatnonzero(~(err < 1e-9).any(axis=0))
            if len(missing):
                raise ValueError(f"{sim.side} hand: the {what} of OpenXR joint(s) {missing.tolist()} "
                                 "is fixed to no body of the model")
        joint = np.arange(rot.shape[1])
        self._rot_body = (rot_err < 1e-9).argmax(axis=0)  # (26,) first body that carries the orientation
        self._pos_body = (pos_err < 1e-9).argmax(axis=0)
        self._rot = rot[self._rot_body, joint]  # (26, 3, 3)
        self._point = point[self._pos_body, joint]  # (26, 3)
        self._sim = sim

    def poses(self) -> np.ndarray:
        """(26, 7) OpenXR joint poses in the simulation world, now (as `sim_hand_joint_poses`)."""
        data = self._sim.data
        xmat = data.xmat.reshape(-1, 3, 3)
        rotation = xmat[self._rot_body] @ self._rot
        position = data.xpos[self._pos_body] + np.einsum("nij,nj->ni", xmat[self._pos_body], self._point)
        return pose_from_matrix(rotation, position)


def _descends(model, body: int, ancestor: int) -> bool:
    """True if `body` is `ancestor` or below it in the model's body tree."""
    while body != ancestor and body != 0:
        body = int(model.body_parentid[body])
    return body == ancestor
