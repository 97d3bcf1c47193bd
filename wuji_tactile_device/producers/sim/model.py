"""The simulated Wuji Hand 2, built procedurally with `mujoco.MjSpec` (no files needed).

Bodies, joints, actuators and sites carry the real Wuji names (`r_`/`l_` prefix) and the
kinematics of `hands/wuji_hand2.py` (docs/kinematics.md). Collision geometry is primitive: a palm box
(76 × 35 × 88 mm spanning z +7 … −81 mm of the wrist body) and one capsule per finger link
(radius 8.5 / 8.5 / 8.0 / 8.0 mm proximal → distal; thumb 10.5 / 10.5 / 9.5 / 9.5 mm). The distal
capsule ends at the fingertip (26.5 mm below the DIP axis; thumb 31 mm below IP), and its palm
side carries the pad (`<p>_<finger>_tip_sensor_frame`, a massive body fixed at zero offset with a
non-colliding visual pad shell). The palm is welded to a mount that a vertical slide servo
(`hand_lift`) can move, so the scenarios can lift objects; the mount is not part of the hand.
Contacts between the palm and the proximal links are excluded explicitly (a body whose parent is
world-welded still collides with its grandchildren).
"""
from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from ...hands.wuji_hand2 import HandKinematics, hand_kinematics

# Link capsule radii [m], proximal, proximal_abd, middle, distal.
FINGER_RADII = (0.0085, 0.0085, 0.0080, 0.0080)
THUMB_RADII = (0.0105, 0.0105, 0.0095, 0.0095)
#: Fingertip distance below the distal joint axis (distal-local −z) [m].
FINGER_TIP_LENGTH = 0.0265
THUMB_TIP_LENGTH = 0.031
# Palm box (wrist frame): half sizes and centre [m].
PALM_HALF = (0.038, 0.0175, 0.044)
PALM_CENTER_RIGHT = (-0.0073, -0.006, -0.037)

# Servo gains by joint position in the finger: kp [N·m/rad], force limit [N·m], joint damping
# [N·m·s/rad], armature [kg·m²] (reflected rotor inertia keeps the 1 ms step stable).
SERVO = (
    dict(kp=0.7, force=2.0, damping=0.02, armature=2e-4),   # cmc_flex / mcp_flex
    dict(kp=0.5, force=1.0, damping=0.015, armature=1.5e-4),  # cmc_abd / mcp_abd
    dict(kp=0.5, force=1.0, damping=0.012, armature=1e-4),   # thumb mcp / pip
    dict(kp=0.3, force=0.6, damping=0.008, armature=6e-5),  # ip / dip
)
CONTACT_FRICTION = (1.0, 0.005, 0.0001)
TIMESTEP = 0.001
LIFT_JOINT = "hand_lift"


@dataclass(frozen=True)
class FingerGeometry:
    """Collision geometry of one distal segment in the distal body frame."""

    radius: float       # capsule radius [m]
    z_top: float        # upper end of the capsule axis (toward the DIP joint) [m]
    z_bottom: float     # lower end of the capsule axis; the tip is at z_bottom − radius [m]
    pad_side: float     # +1: pad on distal +y (right hand), −1: on −y (left hand)


def distal_geometry(side: str, finger: str) -> FingerGeometry:
    thumb = finger == "thumb"
    r = THUMB_RADII[3] if thumb else FINGER_RADII[3]
    tip = THUMB_TIP_LENGTH if thumb else FINGER_TIP_LENGTH
    return FingerGeometry(radius=r, z_top=-0.002, z_bottom=-(tip - r), pad_side=1.0 if side == "right" else -1.0)


def _wxyz(q) -> list[float]:
    return [float(v) for v in q]


def build_hand_spec(side: str, *, mount_pos=(0.0, 0.0, 0.3), mount_quat_wxyz=(1.0, 0.0, 0.0, 0.0),
                    lift_range=(-0.05, 0.15), lift_kp: float = 4000.0) -> mujoco.MjSpec:
    """An `MjSpec` holding the hand of `side` on a world-fixed mount with a vertical lift slide.

    `mount_pos`/`mount_quat_wxyz` place the wrist body in the world (the hand keeps that
    orientation; `hand_lift` translates it along world z). `lift_kp` [N/m]: the slide servo's
    stiffness (critically damped); the weight of hand and mount (≈ 11 N) sags it by 11 N / lift_kp."""
    kin: HandKinematics = hand_kinematics(side)
    left = side == "left"
    spec = mujoco.MjSpec()
    spec.modelname = f"wuji_hand2_{side}"
    spec.compiler.degree = False  # every angle here is in radians
    spec.option.timestep = TIMESTEP
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    spec.option.impratio = 10.0
    spec.option.iterations = 100
    spec.option.tolerance = 1e-10
    spec.option.noslip_iterations = 0

    mount = spec.worldbody.add_body(name="hand_mount", pos=list(mount_pos), quat=_wxyz(mount_quat_wxyz))
    R_mount = np.zeros(9)
    mujoco.mju_quat2Mat(R_mount, np.asarray(mount_quat_wxyz, dtype=np.float64) / np.linalg.norm(mount_quat_wxyz))
    up_local = R_mount.reshape(3, 3).T @ np.array([0.0, 0.0, 1.0])  # world vertical in the mount frame
    mount.add_joint(name=LIFT_JOINT, type=mujoco.mjtJoint.mjJNT_SLIDE, axis=list(up_local),
                    range=list(lift_range), damping=5.0, armature=0.1)
    mount.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[0.01, 0, 0], mass=0.5,
                   contype=0, conaffinity=0, group=3, rgba=[0.5, 0.5, 0.5, 0.3])

    wrist = mount.add_body(name=kin.wrist_body)
    palm_c = list(PALM_CENTER_RIGHT)
    if left:
        palm_c[1] = -palm_c[1]
    wrist.add_geom(name=f"{kin.prefix}palm_collision", type=mujoco.mjtGeom.mjGEOM_BOX, size=list(PALM_HALF),
                   pos=palm_c, mass=kin.wrist_mass, rgba=[0.75, 0.75, 0.78, 1])

    for f in kin.fingers:
        thumb = f.finger == "thumb"
        radii = THUMB_RADII if thumb else FINGER_RADII
        parent = wrist
        for li, link in enumerate(f.links):
            body = parent.add_body(name=link.body, pos=list(link.pos), quat=_wxyz(link.quat_wxyz))
            body.add_joint(name=link.joint, type=mujoco.mjtJoint.mjJNT_HINGE, axis=list(link.axis),
                           range=list(link.range), limited=mujoco.mjtLimited.mjLIMITED_TRUE,
                           damping=SERVO[li]["damping"], armature=SERVO[li]["armature"])
            if li < 3:
                child = f.links[li + 1].pos
                body.add_geom(name=f"{link.body}_collision", type=mujoco.mjtGeom.mjGEOM_CAPSULE,
                              fromto=[0, 0, 0, *child], size=[radii[li], 0, 0], mass=link.mass,
                              friction=list(CONTACT_FRICTION), rgba=[0.3, 0.3, 0.33, 1])
            else:
                g = distal_geometry(side, f.finger)
                body.add_geom(name=f"{link.body}_collision", type=mujoco.mjtGeom.mjGEOM_CAPSULE,
                              fromto=[0, 0, g.z_top, 0, 0, g.z_bottom], size=[g.radius, 0, 0], mass=link.mass,
                              friction=list(CONTACT_FRICTION), condim=4, rgba=[0.3, 0.3, 0.33, 1])
                body.add_site(name=f.tip_site, pos=list(f.tip_site_pos), size=[0.002, 0, 0])
                pad = body.add_body(name=f.pad_body)
                # Visual pad shell (no collision); it carries the pad mass.
                pad.add_geom(name=f"{f.pad_body}_shell", type=mujoco.mjtGeom.mjGEOM_CAPSULE,
                             fromto=[0, 0, g.z_top - 0.003, 0, 0, g.z_bottom], size=[g.radius + 0.0003, 0, 0],
                             mass=f.pad_mass, contype=0, conaffinity=0, group=1, rgba=[0.1, 0.6, 0.6, 0.35])
            parent = body
        for link in f.links[:3]:
            spec.add_exclude(bodyname1=kin.wrist_body, bodyname2=link.body)

    for f in kin.fingers:
        for li, link in enumerate(f.links):
            act = spec.add_actuator(name=link.actuator, target=link.joint, trntype=mujoco.mjtTrn.mjTRN_JOINT)
            act.set_to_position(kp=SERVO[li]["kp"])
            act.ctrlrange = list(link.range)
            act.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
            act.forcerange = [-SERVO[li]["force"], SERVO[li]["force"]]
            act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
    lift = spec.add_actuator(name=LIFT_JOINT, target=LIFT_JOINT, trntype=mujoco.mjtTrn.mjTRN_JOINT)
    lift.set_to_position(kp=lift_kp, dampratio=1.0)
    lift.ctrlrange = list(lift_range)
    lift.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
    return spec


def hand_actuator_ids(model: mujoco.MjModel, side: str) -> np.ndarray:
    """Actuator ids of the 20 hand servos in firmware order."""
    names = hand_kinematics(side).actuator_names
    return np.array([model.actuator(n).id for n in names], dtype=np.int64)


def hand_qpos_adr(model: mujoco.MjModel, side: str) -> np.ndarray:
    """qpos addresses of the 20 hand joints in firmware order."""
    names = hand_kinematics(side).joint_names
    return np.array([model.jnt_qposadr[model.joint(n).id] for n in names], dtype=np.int64)


def distal_body_ids(model: mujoco.MjModel, side: str) -> np.ndarray:
    """Body ids of the five distal segments (thumb → pinky)."""
    kin = hand_kinematics(side)
    return np.array([model.body(f.links[3].body).id for f in kin.fingers], dtype=np.int64)


__all__ = ["build_hand_spec", "distal_geometry", "hand_actuator_ids", "hand_qpos_adr", "distal_body_ids",
           "LIFT_JOINT", "TIMESTEP"]
