"""`wuji-tactile sim --record` as a user runs it: the file holds the simulated hand's 26 OpenXR joint
poses on Isaac Teleop's hand channels, frame for frame with the tactile records (same timestamp,
same log time), and is logged on the simulated clock (10 ms of log time per 10 ms frame however
fast the run); `--log-clock wall` keeps arrival times; `replay` shows the simulated duration.

Ground truth is an in-process replica of the same deterministic run (same scenario and seed: the
forces must match bit for bit), with the hand from the reference forward kinematics
(`sim_hand_joint_poses`), not from the producer's fast path."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from mcap.reader import make_reader

from wuji_tactile_device.contract import decode_tactile_record
from wuji_tactile_device.contract.hand_pose import decode_hand_pose_record  # the isaac profile's record
from wuji_tactile_device.contract.joints import HandJoint
from wuji_tactile_device.producers.sim.hand_pose import sim_hand_joint_poses
from wuji_tactile_device.producers.sim.producer import SimProducer
from wuji_tactile_device.producers.sim.scenarios import make_scenario
from wuji_tactile_device.recording.clock_anchor import read_clock_anchors, wall_clock_span

SCRIPT = shutil.which("wuji-tactile", path=str(Path(sys.executable).parent)) or "wuji-tactile"
FRAMES = 250  # 2.5 s of the press: the hand closes to its pre-grasp (0–1.2 s) and approaches
CID = "tactile/right"
ENV = dict(os.environ, WUJI_TELEMETRY_DISABLE="1")


def same_poses(got, want, atol: float) -> None:
    """Poses (…, 7) equal within `atol`, a quaternion and its negative being the same rotation
    (at qw ≈ 0, e.g. a 180° turn, the qw ≥ 0 convention cannot fix the sign)."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    sign = np.where(np.sum(got[..., 3:] * want[..., 3:], axis=-1, keepdims=True) < 0, -1.0, 1.0)
    np.testing.assert_allclose(got[..., :3], want[..., :3], atol=atol, rtol=0)
    np.testing.assert_allclose(got[..., 3:] * sign, want[..., 3:], atol=atol, rtol=0)


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([SCRIPT, *args], capture_output=True, text=True, timeout=timeout, env=ENV)


def _log_offset(path: Path) -> int:
    """The file's declared log time − record available time [ns]."""
    with open(path, "rb") as f:
        meta = {m.name: m.metadata for m in make_reader(f).iter_metadata()}["wuji_tactile_device"]
    return int(meta["log_time_offset_ns"])


def read(path: Path) -> dict[str, list]:
    """topic -> [(log_time, publish_time, data)] in file order."""
    out: dict[str, list] = {}
    with open(path, "rb") as f:
        for _, channel, m in make_reader(f).iter_messages(log_time_order=False):
            out.setdefault(channel.topic, []).append((m.log_time, m.publish_time, bytes(m.data)))
    return out


@pytest.fixture(scope="module")
def sim_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("simrec") / "press.mcap"
    before = time.time_ns()
    r = run_cli("sim", "--scenario", "press", "--duration", str(FRAMES / 100), "--quiet", "--record", str(path),
                "--profile", "isaac")
    after = time.time_ns()
    assert r.returncode == 1, r.stderr  # a partial press fails its checks on purpose
    # The summary line names every topic the file holds (read back here with the mcap library).
    topics = ", ".join(sorted(read(path)))
    assert f"recorded {path} ({FRAMES} frames, log clock simulated): {topics}" in r.stdout
    assert "tactile/right/pad_slip" in topics and "hands/right_hand" in topics
    return path, before, after


@pytest.fixture(scope="module")
def truth():
    producer = SimProducer(make_scenario("press"), max_frames=FRAMES)
    joints, forces = [], []
    while not producer.finished:
        frame = producer.next_frame()
        forces.append(frame.forces.copy())
        joints.append(sim_hand_joint_poses(producer.sim))
    return np.array(joints), np.array(forces)


def test_hand_channels_carry_the_simulated_hand_with_the_tactile_records_timestamps(sim_file, truth):
    path, _, _ = sim_file
    joints, forces = truth
    topics = read(path)
    data, right, left = topics[CID], topics["hands/right_hand"], topics["hands/left_hand"]
    assert len(data) == len(right) == len(left) == FRAMES
    for k in range(FRAMES):
        record = decode_tactile_record(data[k][2])
        np.testing.assert_array_equal(record.forces, forces[k])  # the replica is the same run
        hand, other = decode_hand_pose_record(right[k][2]), decode_hand_pose_record(left[k][2])
        assert hand.timestamp == record.timestamp == other.timestamp
        assert right[k][:2] == left[k][:2] == data[k][:2]  # same log and publish time
        same_poses(hand.poses, joints[k], atol=1e-6)  # float32 on the wire
        assert hand.valid.all() and other.poses is None  # the left hand is not tracked
    tip = joints[:, int(HandJoint.INDEX_TIP), :3]
    assert np.linalg.norm(tip[-1] - tip[0]) > 0.02, "the hand must move for the comparison to mean anything"
    with open(path, "rb") as f:
        channels = {c.topic: c for c in make_reader(f).get_summary().channels.values()}
    assert channels["hands/right_hand"].metadata["frame"].startswith("simulation world")


def test_isaac_teleop_replays_the_simulated_hand_from_a_sim_record_file(sim_file, truth):
    deviceio = pytest.importorskip("isaacteleop.deviceio", reason="the optional extra isaacteleop is not installed")
    path, _, _ = sim_file
    joints, _ = truth
    tracker = deviceio.HandTracker()
    with deviceio.ReplaySession.run(deviceio.McapReplayConfig(str(path), [(tracker, "hands")])) as session:
        for k in range(FRAMES):
            session.update()
            assert tracker.get_left_hand(session) is None
            got = tracker.get_right_hand(session).joints
            same_poses(np.concatenate([got.positions, got.orientations], axis=1), joints[k], atol=1e-6)


def test_a_simulation_is_logged_on_the_simulated_clock(sim_file):
    path, before, after = sim_file
    topics = read(path)
    records = [decode_tactile_record(d) for _, _, d in topics[CID]]
    log = np.array([t for t, _, _ in topics[CID]], dtype=np.int64)
    np.testing.assert_array_equal(np.diff(log), 10_000_000)  # 10 ms per frame, whatever the run's speed
    device = np.array([r.timestamp.sample_time_raw_device_clock for r in records])
    np.testing.assert_array_equal(device, 10_000_000 * np.arange(1, FRAMES + 1))  # simulated time
    # available = sample = start + simulated time: the file's log time is the record's available
    # time on the UTC epoch (+ the file's one declared offset)
    offset = _log_offset(path)
    assert offset > 1_600_000_000 * 10**9 - time.monotonic_ns()  # realtime − monotonic: an epoch base
    assert all(r.timestamp[0] == r.timestamp[1] == t - offset for r, t in zip(records, log, strict=True))
    assert topics[f"{CID}/metadata"][0][0] <= log[0], "the layout is logged before the first frame"
    # The clock anchor maps the simulated clock's zero onto the wall clock at the run's start.
    assert len(read_clock_anchors(path)) >= 2  # at start and at close
    start, end = wall_clock_span(path)
    assert before <= start <= after
    assert end - start == pytest.approx(log[-1] - topics[f"{CID}/metadata"][0][0], abs=1_000)


def test_log_clock_wall_keeps_the_arrival_times(tmp_path):
    path = tmp_path / "wall.mcap"
    before = time.monotonic_ns()
    r = run_cli("sim", "--scenario", "press", "--duration", "0.5", "--quiet", "--record", str(path),
                "--log-clock", "wall")
    after = time.monotonic_ns()
    assert r.returncode == 1 and "log clock wall" in r.stdout, r.stderr
    topics = read(path)
    records = [decode_tactile_record(d) for _, _, d in topics[CID]]
    log = [t - _log_offset(path) for t, _, _ in topics[CID]]
    assert log == [r.timestamp.available_time_local_common_clock for r in records]
    sample = [r.timestamp.sample_time_local_common_clock for r in records]
    assert sample[-1] - sample[0] == 490_000_000
    # Logged as it arrived: on the machine's monotonic clock (system-wide on Linux), inside the
    # child's lifetime, and not on the simulated 10 ms grid. (Not "faster than real time": under
    # CPU load the simulation can run slower than real time.)
    assert before <= log[0] <= log[-1] <= after
    assert len(set(np.diff(log))) > 1, "log times on a fixed grid: the simulated clock, not arrival"


def test_replay_prints_the_simulated_duration(sim_file):
    path, _, _ = sim_file
    r = run_cli("replay", str(path), "--every", "50")
    assert r.returncode == 0, r.stderr
    t = [float(line.split()[0]) for line in r.stdout.splitlines()]
    assert len(t) == FRAMES // 50
    np.testing.assert_allclose(np.diff(t), 0.5, atol=1e-6)
    assert t[-1] == pytest.approx(FRAMES / 100 - 0.01, abs=0.005)  # frame k at k × 10 ms after the first
    assert f"{CID}: {FRAMES} frames delivered" in r.stderr


@pytest.mark.parametrize("side,scenario", [("right", "press"), ("left", "lift")])
def test_fast_hand_poses_equal_the_reference_kinematics(side, scenario):
    producer = SimProducer(make_scenario(scenario), side=side, max_frames=300, hand_poses=True)
    checked = 0
    while not producer.finished:
        frame = producer.next_frame()
        if producer.frames % 30 == 0:
            same_poses(frame.extras["hand_joint_poses"], sim_hand_joint_poses(producer.sim), atol=1e-12)
            checked += 1
    assert checked == 10


def test_hand_poses_are_computed_only_when_asked_for():
    producer = SimProducer(make_scenario("press"), max_frames=2)
    assert "hand_joint_poses" not in producer.next_frame().extras
    producer.enable_hand_poses()
    assert producer.next_frame().extras["hand_joint_poses"].shape == (26, 7)
    with pytest.raises(ValueError, match="log_clock must be one of simulated, wall, got 'sim'"):
        SimProducer(make_scenario("press"), log_clock="sim")
