"""The simulated hand's 26 OpenXR joint poses in the simulation world (base space).

The simulator knows every joint angle and where the wrist is: the joint poses are the hand's
forward kinematics (`hands.openxr_pose`) placed by the wrist body's current world pose. These are
what a recording carries on Isaac Teleop's hand channels (`recording.hand_channels`), so that
Isaac Teleop's `HandsSource` replays the simulated hand and `TaxelSkinning` puts the taxels where
the simulator had them.
"""
from __future__ import annotations

import numpy as np

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
