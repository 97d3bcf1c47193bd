"""The hardware producer records the hand's 26 OpenXR joint poses from its measured joint angles.

The ground truth is the simulator: the emulated hand reports the simulation's joint angles the
way the SDK streams them (`joint_states`), the producer pairs them with the tactile ticks,
computes the poses with its vectorised kinematics and records them on Isaac Teleop's hand
channels; the recorded poses must be the simulator's own (its joint poses, its MuJoCo bodies)
expressed in the stated base space, frame by frame, to float32 rounding — and Isaac Teleop's
`ReplaySession` + `HandTracker` must read them back."""
from __future__ import annotations

import time

import numpy as np
import pytest
from mcap.reader import make_reader

from hw_faults import POLICY
from hw_loop import OnLoop
from wuji_tactile_device.contract.geometry import pose_compose, pose_from_matrix, pose_invert, pose_to_matrix
from wuji_tactile_device.contract.hand_pose import decode_hand_pose_record
from wuji_tactile_device.contract.joints import HandJoint
from wuji_tactile_device.contract.records import decode_tactile_record
from wuji_tactile_device.hands.openxr_pose import (JOINT_RADIUS_M, openxr_joint_poses,
                                                   openxr_joint_transforms_in_wrist_body)
from wuji_tactile_device.hands.wuji_hand2 import WRIST_TO_OPENXR, hand_kinematics

from wuji_tactile_device.run import runner_for
from wuji_tactile_device.producers.emulated import EmulatedHand2
from wuji_tactile_device.producers.emulated import EmulatedSdkManager
from wuji_tactile_device.producers.emulated.simulation import EmulatedHandProducer, simulation_ticks
from wuji_tactile_device.producers.hardware import HardwareConfig, HardwareProducer, SdkFingertipDevice
from wuji_tactile_device.producers.hardware.device import connect_sdk_hand, sdk_module
from wuji_tactile_device.producers.hardware.hand_pose import HandPoseSolver, parse_base_pose
from wuji_tactile_device.producers.hardware.joint_states import NID_TO_JOINT, JointPairing, JointSample, joint_sample
from wuji_tactile_device.producers.sim.hand_pose import sim_hand_joint_poses, wrist_body_in_world
from wuji_tactile_device.recording import McapRecorder
from wuji_tactile_device.streams.inproc import InProcessBus

FRAMES = 300  # 3 s of the press scenario: the fingers curl (the index tip travels ~10 cm)
ZERO = np.zeros((176, 3))
BASE = np.array([0.4, -0.1, 0.9, 0.0, 0.0, np.sin(0.3), np.cos(0.3)])  # a mounting pose: 0.6 rad about z


def _canonical(poses: np.ndarray) -> np.ndarray:
    out = np.array(poses, dtype=np.float64)
    out[out[..., 6] < 0, 3:] *= -1.0
    return out


def _within_float32_rounding(recorded: np.ndarray, expected: np.ndarray) -> float:
    """Largest error in units of the float32 spacing at the expected value (≤ ½: the float32
    rounding of the exact value)."""
    spacing = np.spacing(np.abs(expected).astype(np.float32)).astype(np.float64)
    return float((np.abs(recorded.astype(np.float64) - expected) / np.maximum(spacing, 1e-12)).max())


def _read(path):
    """Per topic: list of (log_time, publish_time, payload), in file order."""
    out: dict[str, list] = {}
    with open(path, "rb") as f:
        for _schema, channel, m in make_reader(f).iter_messages(log_time_order=False):
            out.setdefault(channel.topic, []).append((m.log_time, m.publish_time, m.data, channel.metadata))
    return out


def _record_emulated(path, *, frames: int = FRAMES, base_pose=None, truth=None):
    """`hw --emulate --record` as a library call: simulation_ticks → EmulatedHand2 → HardwareProducer
    → run loop → McapRecorder (uncompressed, Isaac Teleop's profile)."""
    def keep(sim, reading):
        if truth is not None:
            truth["world"].append(sim_hand_joint_poses(sim))
            truth["wrist_body"].append(wrist_body_in_world(sim))
            T = np.tile(np.eye(4), (5, 1, 1))
            T[:, :3, :3] = sim.data.xmat[sim.distal_bodies].reshape(-1, 3, 3)
            T[:, :3, 3] = sim.data.xpos[sim.distal_bodies]
            truth["distal_bodies"].append(T)

    emu = EmulatedHand2("right", diagnostics_every=0)
    ticks = simulation_ticks("right", "press", duration_s=frames / 100, on_frame=keep)
    producer = EmulatedHandProducer.from_config(emu, HardwareConfig(side="right", base_pose=base_pose), ticks)
    with McapRecorder(path, profile="isaac", file_metadata=producer.file_metadata()) as rec:
        runner = runner_for(producer, InProcessBus(), recorder=rec)
        counters = runner.run(handle_signals=False)
        runner.close()
        producer.close()
    assert counters.published == frames
    return producer


@pytest.fixture(scope="module")
def press(tmp_path_factory):
    path = tmp_path_factory.mktemp("hw_hand_pose") / "press.mcap"
    truth = {"world": [], "wrist_body": [], "distal_bodies": []}
    producer = _record_emulated(path, truth=truth)
    return path, producer, {k: np.array(v) for k, v in truth.items()}


# -- the kinematics ----------------------------------------------------------------------------------

@pytest.mark.parametrize("side", ["right", "left"])
def test_solver_equals_the_simulators_kinematics_for_any_angles_and_base(side):
    rng = np.random.default_rng(7)
    ranges = hand_kinematics(side).joint_ranges
    for base in (None, BASE):
        solver = HandPoseSolver(side, base)
        T_base_xr = np.eye(4) if base is None else pose_to_matrix(base)
        for _ in range(40):
            q = rng.uniform(ranges[:, 0], ranges[:, 1])
            expected = openxr_joint_poses(side, q, T_base_xr @ WRIST_TO_OPENXR[side])
            np.testing.assert_allclose(solver.poses(q), expected, atol=1e-12, rtol=0)
        wrist = solver.poses(np.zeros(20))[int(HandJoint.WRIST)]
        np.testing.assert_allclose(wrist, [0, 0, 0, 0, 0, 0, 1] if base is None else BASE, atol=1e-15)


def test_rotation_to_quaternion_round_trips_every_rotation_including_half_turns():
    from wuji_tactile_device.contract.geometry import quat_to_matrix
    from wuji_tactile_device.producers.hardware.hand_pose import _rotations_to_quats

    rng = np.random.default_rng(3)
    q = rng.normal(size=(20000, 4))
    half_turns = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [1, 1, 0, 0], [0, 0, 0, 1]], dtype=np.float64)
    q = np.concatenate([q, half_turns])
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    R = quat_to_matrix(q)
    got = _rotations_to_quats(R)
    assert np.abs(np.linalg.norm(got, axis=1) - 1).max() < 1e-14 and (got[:, 3] >= 0).all()
    np.testing.assert_allclose(quat_to_matrix(got), R, atol=1e-14)
    np.testing.assert_allclose(np.abs((got * q).sum(axis=1)), 1.0, atol=1e-14)  # the same rotation, ±q


@pytest.mark.parametrize("side", ["right", "left"])
def test_validity_follows_which_joints_each_pose_really_depends_on(side):
    # dependency found by perturbing each joint of the reference kinematics
    q0 = np.full(20, 0.3)
    T0 = openxr_joint_transforms_in_wrist_body(side, q0)
    moved = np.zeros((26, 20), dtype=bool)
    for i in range(20):
        q = q0.copy()
        q[i] += 0.2
        moved[:, i] = np.abs(openxr_joint_transforms_in_wrist_body(side, q) - T0).max(axis=(1, 2)) > 1e-12
    solver = HandPoseSolver(side)
    assert (solver.dependencies == moved).all()
    present = np.ones(20, dtype=bool)
    present[6] = False  # index pip
    valid = solver.valid(present)
    invalid = {HandJoint(j).name for j in np.flatnonzero(~valid)}
    assert invalid == {"INDEX_INTERMEDIATE", "INDEX_DISTAL", "INDEX_TIP"}


def test_base_pose_parsing_names_the_problem():
    np.testing.assert_allclose(parse_base_pose("0.1, 0, 0.5, 0, 0, 0.7071068, 0.7071068"),
                               [0.1, 0, 0.5, 0, 0, np.sqrt(0.5), np.sqrt(0.5)], atol=1e-7)
    with pytest.raises(ValueError, match=r"need 7 values x,y,z,qx,qy,qz,qw .* got 6"):
        parse_base_pose("0,0,0,0,0,1")
    with pytest.raises(ValueError, match=r"expected 7 comma-separated numbers"):
        parse_base_pose("0,0,0,0,0,0,one")
    with pytest.raises(ValueError, match=r"has norm 2; it must be a unit quaternion"):
        parse_base_pose("0,0,0,0,0,0,2")
    with pytest.raises(ValueError, match=r"must be finite"):
        parse_base_pose("nan,0,0,0,0,0,1")
    emu = EmulatedHand2("right", diagnostics_every=0)
    with pytest.raises(ValueError, match=r"has norm 0; it must be a unit quaternion"):
        HardwareProducer(SdkFingertipDevice(emu), HardwareConfig(side="right", base_pose=[0] * 7))
    with pytest.raises(ValueError, match=r"joint_max_age_s must be > 0 s, got 0"):
        HardwareProducer(SdkFingertipDevice(emu), HardwareConfig(side="right", joint_max_age_s=0))


# -- joint states as the SDK streams them --------------------------------------------------------------

@pytest.mark.skipif(sdk_module() is None, reason="compares with the installed vendor SDK's own nid mapping")
def test_nid_mapping_is_the_sdks():
    sdk = sdk_module()
    for j in range(20):
        nid = sdk.WujiHand2.joint_index_to_nid(j)
        assert NID_TO_JOINT[nid] == sdk.WujiHand2.nid_to_joint_index(nid) == j
    non_joints = [n for n in range(25) if NID_TO_JOINT[n] < 0]
    assert non_joints == [0, 5, 10, 15, 20]
    for nid in non_joints[1:]:  # tactile slots: the SDK refuses them too
        with pytest.raises(sdk.WujiException):
            sdk.WujiHand2.nid_to_joint_index(nid)


def test_joint_sample_reads_online_joints_by_nid_in_any_order():
    from wuji_tactile_device.producers.emulated.sdk_types import EmulatedJointStateEntry, EmulatedJointStateFrame

    class H:
        timestamp_us = 1234

    entries = [EmulatedJointStateEntry(24, 0.24, 0, 0), EmulatedJointStateEntry(1, 0.01, 0, 0),
               EmulatedJointStateEntry(5, 9.9, 0, 0),            # tactile slot: not a joint
               EmulatedJointStateEntry(7, float("nan"), 0, 0),   # non-finite: not measured
               EmulatedJointStateEntry(12, -0.5, 0, 0)]
    s = joint_sample(EmulatedJointStateFrame(H, len(entries), entries), 99)
    assert s.device_time_us == 1234 and s.received_ns == 99
    assert np.flatnonzero(s.present).tolist() == [0, 9, 19]  # nid 1 → 0, nid 12 → bus 2 node 2 → 9, nid 24 → 19
    np.testing.assert_array_equal(s.positions[[0, 9, 19]], [0.01, -0.5, 0.24])
    assert not s.present[5] and s.positions[5] == 0.0


def test_pairing_takes_the_nearest_sample_within_the_bound_and_counts_the_rest():
    p = JointPairing(max_age_us=10_000)
    assert p.pair(0) is None and p.counters.missing == 1
    partial = np.ones(20, dtype=bool)
    partial[3] = False
    p.push([JointSample(t, np.full(20, t / 1e6), np.ones(20, bool) if t != 20_000 else partial, 0)
            for t in (0, 10_000, 20_000)])
    a = p.pair(14_000)
    assert (a.device_time_us, a.age_us) == (10_000, 4_000) and a.positions[0] == 0.01
    b = p.pair(16_000)
    assert (b.device_time_us, b.age_us) == (20_000, -4_000) and not b.present[3]
    assert p.pair(30_000).age_us == 10_000  # one period old: still within the (inclusive) bound (partial again)
    assert p.pair(30_001) is None
    c = p.counters
    assert (c.samples, c.paired, c.stale, c.missing, c.partial, c.max_age_us) == (3, 3, 1, 1, 2, 10_000)
    p.reset()
    assert p.pair(10_000) is None and p.counters.missing == 2


# -- the recording: simulator truth, timestamps, Isaac Teleop replay -------------------------------------

def test_recorded_hand_poses_are_the_simulators_in_the_wrist_frame_to_float32_rounding(press):
    path, producer, truth = press
    msgs = _read(path)
    right, left = msgs["hands/right_hand"], msgs["hands/left_hand"]
    assert len(right) == len(left) == FRAMES
    assert "OpenXR wrist frame" in right[0][3]["frame"] and "not measured" in right[0][3]["frame"]
    # the simulator's joint poses (its world), carried into the OpenXR wrist frame MuJoCo has for the wrist
    T_world_xr = truth["wrist_body"] @ np.linalg.inv(WRIST_TO_OPENXR["right"])
    world_xr = pose_from_matrix(T_world_xr[:, :3, :3], T_world_xr[:, :3, 3])
    worst = 0.0
    for k in range(FRAMES):
        sample = decode_hand_pose_record(right[k][2])
        assert decode_hand_pose_record(left[k][2]).poses is None, "the left hand is not tracked"
        assert sample.valid.all() and np.allclose(sample.radius, JOINT_RADIUS_M)
        expected = _canonical(pose_compose(pose_invert(world_xr[k]), truth["world"][k]))
        worst = max(worst, _within_float32_rounding(_canonical(sample.poses), expected))
    assert worst <= 0.5 + 1e-3, f"recorded poses off by {worst:.2f} float32 spacings (rounding: ≤ ½)"
    # the hand moved (a frozen hand would pass trivially)
    tip = [decode_hand_pose_record(right[k][2]).poses[int(HandJoint.INDEX_TIP), :3] for k in (0, FRAMES - 1)]
    assert np.linalg.norm(tip[1] - tip[0]) > 0.05
    c = producer.counters.joint_states
    assert (c["paired"], c["stale"], c["missing"], c["partial"], c["max_age_us"]) == (FRAMES, 0, 0, 0, 0)


def test_distal_joints_sit_on_the_simulators_own_distal_bodies(press):
    """Independent of our forward kinematics: MuJoCo's distal bodies (tip_sensor_frame), in the wrist
    frame, are where the recorded DISTAL joints are (MuJoCo integrates the same URDF numbers)."""
    path, _, truth = press
    right = _read(path)["hands/right_hand"]
    T_xr_world = WRIST_TO_OPENXR["right"] @ np.linalg.inv(truth["wrist_body"])
    distal = [int(HandJoint[f"{n}_DISTAL"]) for n in ("THUMB", "INDEX", "MIDDLE", "RING", "LITTLE")]
    err = 0.0
    for k in range(0, FRAMES, 10):
        bodies = (T_xr_world[k] @ truth["distal_bodies"][k])[:, :3, 3]
        err = max(err, np.abs(decode_hand_pose_record(right[k][2]).poses[distal, :3] - bodies).max())
    assert err < 1e-7, f"DISTAL joints {err:.3g} m away from MuJoCo's distal bodies"


def test_each_hand_record_carries_the_tactile_records_timestamp_and_log_time(press):
    path, _, _ = press
    msgs = _read(path)
    tactile = msgs["tactile/right"]
    assert len(tactile) == FRAMES
    for side in ("right", "left"):
        hand = msgs[f"hands/{side}_hand"]
        for (lt, pt, data, _), (tlt, tpt, tdata, _) in zip(hand, tactile, strict=True):
            assert (lt, pt) == (tlt, tpt)
            assert decode_hand_pose_record(data).timestamp == decode_tactile_record(tdata).timestamp


def test_isaac_teleops_replay_session_returns_the_recorded_hand(press):
    deviceio = pytest.importorskip("isaacteleop.deviceio", reason="the optional extra isaacteleop is not installed")
    path, _, _ = press
    right = _read(path)["hands/right_hand"]
    tracker = deviceio.HandTracker()
    with deviceio.ReplaySession.run(deviceio.McapReplayConfig(str(path), [(tracker, "hands")])) as session:
        for k in range(FRAMES):
            session.update()
            assert tracker.get_left_hand(session) is None
            joints = tracker.get_right_hand(session).joints
            recorded = decode_hand_pose_record(right[k][2]).poses
            np.testing.assert_array_equal(np.asarray(joints.positions, dtype=np.float32), recorded[:, :3])
            np.testing.assert_array_equal(np.asarray(joints.orientations, dtype=np.float32), recorded[:, 3:])
            assert np.asarray(joints.is_valid).all()


def test_a_fixed_base_pose_places_the_wrist_there_and_moves_nothing_else(tmp_path, press):
    path, _, _ = press
    based = tmp_path / "based.mcap"
    frames = 120
    _record_emulated(based, frames=frames, base_pose=BASE)
    in_wrist = _read(path)["hands/right_hand"]
    on_base = _read(based)["hands/right_hand"]
    assert "user-given fixed base" in on_base[0][3]["frame"]
    for k in range(0, frames, 7):
        wrist_frame = decode_hand_pose_record(in_wrist[k][2]).poses.astype(np.float64)
        got = decode_hand_pose_record(on_base[k][2]).poses
        np.testing.assert_allclose(got[int(HandJoint.WRIST)], BASE, atol=1e-7)
        np.testing.assert_allclose(_canonical(got), _canonical(pose_compose(BASE, wrist_frame)), atol=1e-6)


# -- missing, stale, partial, failures ---------------------------------------------------------------

def _stepped(emu, config=None, *, device=None):
    device = device or SdkFingertipDevice(emu)
    producer = HardwareProducer(device, config or HardwareConfig(side="right"))
    return producer


def _record_steps(path, emu, producer, steps):
    """Run `steps(k)` → (forces, joint_angles or None) for each k through the run loop, recording."""
    with McapRecorder(path, profile="isaac") as rec:
        runner = runner_for(producer, InProcessBus(), recorder=rec)
        for k, (before, q) in enumerate(steps):
            before(emu)
            emu.emit(ZERO, joint_angles=q)
            assert runner.step() == 1, k
        runner.close()
        producer.close()
    return [decode_hand_pose_record(d) for _, _, d, _ in _read(path)["hands/right_hand"]]


def test_ticks_without_a_joint_sample_in_time_are_recorded_not_tracked(tmp_path):
    """No sample yet → missing; the stream stalls → the last sample serves the tick one period
    later (within the bound), then the hand is not tracked until samples return."""
    emu = EmulatedHand2("right", diagnostics_every=0)
    producer = _stepped(emu)
    qs = [np.full(20, 0.01 * k) for k in range(30)]
    nothing = lambda e: None  # noqa: E731
    steps = [(nothing, None)] * 5 + [(nothing, qs[k]) for k in range(5, 10)] \
        + [(lambda e: e.set_joint_states_sending(False), qs[k]) for k in range(10, 20)] \
        + [(lambda e: e.set_joint_states_sending(True), qs[k]) for k in range(20, 30)]
    records = _record_steps(tmp_path / "stall.mcap", emu, producer, steps)
    tracked = [r.poses is not None for r in records]
    assert tracked == [False] * 5 + [True] * 6 + [False] * 9 + [True] * 10
    solver = HandPoseSolver("right")
    np.testing.assert_allclose(records[10].poses, solver.poses(qs[9]), atol=1e-6)  # the 10 ms old sample
    np.testing.assert_allclose(records[20].poses, solver.poses(qs[20]), atol=1e-6)
    c = producer.counters.joint_states
    assert (c["missing"], c["stale"], c["paired"], c["max_age_us"]) == (5, 9, 16, 10_000)


def test_an_offline_joint_invalidates_only_the_poses_beyond_it(tmp_path):
    emu = EmulatedHand2("right", diagnostics_every=0)
    emu.set_joint_online(7, False)  # index dip
    producer = _stepped(emu)
    records = _record_steps(tmp_path / "partial.mcap", emu, producer, [(lambda e: None, np.full(20, 0.2))] * 3)
    invalid = {HandJoint(j).name for j in np.flatnonzero(~records[-1].valid)}
    assert invalid == {"INDEX_DISTAL", "INDEX_TIP"}
    assert producer.counters.joint_states["partial"] == 3


def test_a_joint_stream_sampled_off_the_tick_is_paired_by_device_time(tmp_path):
    emu = EmulatedHand2("right", diagnostics_every=0)
    emu.joint_time_offset_us = 3_000
    producer = _stepped(emu, HardwareConfig(side="right", joint_max_age_s=0.0025))
    records = _record_steps(tmp_path / "late.mcap", emu, producer, [(lambda e: None, np.zeros(20))] * 4)
    assert all(r.poses is None for r in records), "3 ms away is beyond a 2.5 ms bound"
    assert producer.counters.joint_states["stale"] == 4


def test_without_hand_poses_nothing_is_subscribed_or_recorded(tmp_path):
    emu = EmulatedHand2("right", diagnostics_every=0)
    producer = _stepped(emu, HardwareConfig(side="right", hand_poses=False))
    assert emu._subs.get("joint_states", []) == []
    path = tmp_path / "none.mcap"
    with McapRecorder(path) as rec:
        runner = runner_for(producer, InProcessBus(), recorder=rec)
        emu.emit(ZERO, joint_angles=np.zeros(20))
        assert runner.step() == 1
        runner.close()
        producer.close()
    assert not any(t.startswith("hands/") for t in _read(path))
    assert producer.counters.joint_states == {}


def test_a_hand_without_a_joint_state_stream_records_no_hand_channels(tmp_path):
    class OlderSdkHand:
        """The emulated hand as an SDK without `joint_states()` would show it."""

        def __init__(self, emu):
            self._emu = emu

        def __getattr__(self, name):
            if name == "joint_states":
                raise AttributeError(name)
            return getattr(self._emu, name)

    emu = EmulatedHand2("right", diagnostics_every=0)
    producer = _stepped(emu, device=SdkFingertipDevice(OlderSdkHand(emu)))
    assert producer.joints is None and "hand_channels" not in producer.file_metadata()
    producer.close()


def test_a_failing_joint_subscription_is_counted_and_retried_not_fatal():
    emu = EmulatedHand2("right", diagnostics_every=0)
    emu.fail_next("subscribe:joint_states", "error")
    device = SdkFingertipDevice(emu, policy=POLICY)
    with OnLoop(_stepped(emu, device=device), InProcessBus()) as loop:
        emu.emit(ZERO, joint_angles=np.zeros(20))
        assert loop.step() == 1  # the tactile stream is unaffected
        assert device.link_counters.joint_state_errors == 1
        assert loop.producer.counters.joint_states["missing"] == 1
        time.sleep(POLICY.backoff_s * 1.5)
        emu.emit(ZERO, joint_angles=np.zeros(20))  # resubscribed on this poll; the next sample pairs
        loop.step()
        emu.emit(ZERO, joint_angles=np.zeros(20))
        assert loop.step() == 1
        assert loop.producer.counters.joint_states["paired"] >= 1


def test_joint_states_resume_after_a_reconnect():
    emu = EmulatedHand2("right", diagnostics_every=0)
    device = connect_sdk_hand(sn=emu.serial_number, manager=EmulatedSdkManager([emu]), policy=POLICY)
    producer = HardwareProducer(device, HardwareConfig(side="right", stale_after_s=0.05, recovery=POLICY))
    with OnLoop(producer, InProcessBus()) as loop:
        for _ in range(3):
            emu.emit(ZERO, joint_angles=np.zeros(20))
            loop.step()
        before = producer.counters.joint_states["paired"]
        emu.lose_link()
        end = time.monotonic() + 0.1
        while time.monotonic() < end:
            emu.emit(ZERO)
            loop.step()
            time.sleep(0.002)
        emu.restore_link()
        end = time.monotonic() + 5.0
        while producer.counters.joint_states["paired"] <= before and time.monotonic() < end:
            emu.emit(ZERO, joint_angles=np.full(20, 0.1))
            loop.step()
            time.sleep(0.002)
        assert producer.counters.link.reconnects == 1
        assert producer.counters.joint_states["paired"] > before, "joint states did not come back after reconnecting"


# -- the SDK surface this relies on -----------------------------------------------------------------

def test_the_sdk_surface_lists_the_joint_state_stream():
    from wuji_tactile_device.producers.hardware.device import SDK_SURFACE

    assert {"WujiHand2.joint_states", "JointStatesResource.subscribe", "JointStateFrame.header",
            "JointStateFrame.joints", "JointStateEntry.nid", "JointStateEntry.position",
            "WujiHand2.nid_to_joint_index"} <= set(SDK_SURFACE)


@pytest.mark.skipif(sdk_module() is None, reason="checks the installed vendor SDK")
def test_check_sdk_names_a_missing_joint_stream_and_a_changed_nid_layout():
    import importlib.util
    import types
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("check_sdk", Path(__file__).parent.parent / "tools" / "check_sdk.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    sdk = sdk_module()
    fake = types.ModuleType("wuji_sdk")
    fake.__dict__.update({k: getattr(sdk, k) for k in dir(sdk) if not k.startswith("__")})
    fake.__version__ = sdk.__version__
    members = {k: getattr(sdk.WujiHand2, k) for k in dir(sdk.WujiHand2) if not k.startswith("__") and k != "joint_states"}
    members["nid_to_joint_index"] = staticmethod(lambda nid: nid - 1)  # a renumbered layout
    fake.WujiHand2 = type("WujiHand2", (), members)
    assert tool.check(fake) == ["WujiHand2.joint_states: WujiHand2 has no attribute 'joint_states'",
                                "WujiHand2.nid_to_joint_index agrees with the producer's nid table: false"]
