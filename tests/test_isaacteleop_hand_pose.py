"""Isaac Teleop's `core.HandPoseRecord`: our codec against the flatc-generated bindings and
against Isaac Teleop's own schema objects; the Wuji hand's OpenXR joint poses; the recorder's
hand channels (Isaac Teleop's channel names, both hands every frame, tactile replay unaffected)."""
from __future__ import annotations

import numpy as np
import pytest
from mcap.reader import make_reader

from wuji_tactile_device.contract.geometry import pose_to_matrix
from wuji_tactile_device.contract.hand_pose import (JOINT_DTYPE, decode_hand_pose_record, encode_hand_pose_record,
                                                     hand_pose_bfbs)
from wuji_tactile_device.contract.joints import HandJoint
from wuji_tactile_device.contract.records import DeviceDataTimestamp
from wuji_tactile_device.errors import DataLayoutError, InvalidMessageError, RecordingError
from wuji_tactile_device.generated.core.HandPoseRecord import HandPoseRecord
from wuji_tactile_device.generated.core.Point import Point
from wuji_tactile_device.generated.core.Pose import Pose
from wuji_tactile_device.generated.core.Quaternion import Quaternion
from wuji_tactile_device.hands.openxr_pose import openxr_joint_poses, openxr_joint_transforms_in_wrist_body
from wuji_tactile_device.hands.wuji_hand2 import WRIST_TO_OPENXR, segment_poses_in_wrist
from wuji_tactile_device.recording import McapRecorder, McapReplay
from wuji_tactile_device.recording.hand_channels import HandPoseChannels, hand_topic, iter_hand_records
from wuji_tactile_device.recording.profiles import isaac_hand_schema

TS = DeviceDataTimestamp(3_000_000_123, 3_000_000_100, 77)


def _random_poses(seed: int) -> np.ndarray:
    p = np.random.default_rng(seed).normal(size=(26, 7))
    p[:, 3:] /= np.linalg.norm(p[:, 3:], axis=1, keepdims=True)
    return p


def test_record_layout_matches_the_flatc_generated_reader():
    poses = _random_poses(1)
    valid = np.arange(26) % 3 != 0
    radius = np.linspace(0.001, 0.026, 26)
    buf = encode_hand_pose_record(poses, TS, valid=valid, radius=radius)
    assert JOINT_DTYPE.itemsize == 36 and len(buf) < 1100
    rec = HandPoseRecord.GetRootAs(buf, 0)
    ts = rec.Timestamp()
    assert (ts.AvailableTimeLocalCommonClock(), ts.SampleTimeLocalCommonClock(), ts.SampleTimeRawDeviceClock()) == TS
    joints = rec.Data().Joints()
    for j in (0, 1, 13, 25):
        jp = joints.Poses(j)
        pose = jp.Pose(Pose())
        p, o = pose.Position(Point()), pose.Orientation(Quaternion())
        got = [p.X(), p.Y(), p.Z(), o.X(), o.Y(), o.Z(), o.W()]
        np.testing.assert_allclose(got, poses[j], atol=1e-6)
        assert jp.IsValid() == bool(valid[j])
        assert jp.Radius() == pytest.approx(radius[j], abs=1e-7)
    assert buf[4:8] != b"HPRE" and b"BFBS" not in buf  # no file identifier, as Isaac Teleop writes


def test_decode_round_trip_and_untracked_hand():
    poses = _random_poses(2)
    sample = decode_hand_pose_record(encode_hand_pose_record(poses, TS, radius=0.01))
    np.testing.assert_array_equal(sample.poses, poses.astype(np.float32))
    assert sample.valid.all() and sample.timestamp == TS
    np.testing.assert_array_equal(sample.radius, np.full(26, 0.01, np.float32))
    assert not sample.poses.flags.writeable
    inactive = decode_hand_pose_record(encode_hand_pose_record(None, TS))
    assert inactive.poses is None and inactive.valid is None and inactive.timestamp == TS


def test_isaac_teleops_own_schema_objects_read_what_we_decode():
    schema = pytest.importorskip("isaacteleop.schema", reason="the optional extra isaacteleop is not installed")
    poses = _random_poses(3)
    sample = decode_hand_pose_record(encode_hand_pose_record(poses, TS))
    joints = schema.HandJoints()  # Isaac Teleop's native struct: its views alias its storage
    joints.positions[:] = sample.poses[:, :3]
    joints.orientations[:] = sample.poses[:, 3:]
    np.testing.assert_array_equal(schema.HandPose(joints).joints.positions, poses[:, :3].astype(np.float32))


def test_encoding_refuses_wrong_shapes_and_decoding_names_broken_fields():
    with pytest.raises(DataLayoutError, match=r"poses must have shape \(26, 7\), got \(25, 7\)"):
        encode_hand_pose_record(np.zeros((25, 7)), TS)
    bad = np.zeros((26, 7))
    bad[4, 0] = np.nan
    with pytest.raises(DataLayoutError, match="poses must be finite"):
        encode_hand_pose_record(bad, TS)
    buf = bytearray(encode_hand_pose_record(_random_poses(4), TS))
    with pytest.raises(InvalidMessageError, match="HandPoseRecord: table offset .* outside the"):
        decode_hand_pose_record(bytes([0xF0, 0xFF, 0, 0]) + bytes(buf[4:]))
    with pytest.raises(InvalidMessageError, match="too short"):
        decode_hand_pose_record(bytes(buf[:8]))


def test_openxr_distal_joints_are_the_tactile_segment_frames_and_the_wrist_is_openxr():
    q = np.linspace(-0.3, 0.9, 20)
    T = openxr_joint_transforms_in_wrist_body("right", q)
    seg = segment_poses_in_wrist("right", q)  # in the OpenXR wrist frame
    W = WRIST_TO_OPENXR["right"]
    for finger, joint in (("thumb", HandJoint.THUMB_DISTAL), ("index", HandJoint.INDEX_DISTAL),
                          ("pinky", HandJoint.LITTLE_DISTAL)):
        np.testing.assert_allclose(W @ T[int(joint)], pose_to_matrix(seg[finger]), atol=1e-12)
    np.testing.assert_allclose(W @ T[int(HandJoint.WRIST)], np.eye(4), atol=1e-15)
    # the tip lies beyond the distal joint along the bone: −Z of the joint frame (+Z points back)
    d = T[int(HandJoint.INDEX_TIP), :3, 3] - T[int(HandJoint.INDEX_DISTAL), :3, 3]
    assert np.linalg.norm(d) == pytest.approx(0.02475, abs=1e-9)
    assert d @ T[int(HandJoint.INDEX_DISTAL), :3, 2] == pytest.approx(-0.02475, abs=1e-9)


def test_openxr_poses_follow_the_base_transform():
    base = np.eye(4)
    base[:3, :3] = np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1]])
    base[:3, 3] = (0.1, -0.2, 0.3)
    local = openxr_joint_poses("left", None)
    placed = openxr_joint_poses("left", None, base)
    np.testing.assert_allclose(placed[:, :3], local[:, :3] @ base[:3, :3].T + base[:3, 3], atol=1e-12)
    assert (placed[:, 6] >= 0).all()
    with pytest.raises(ValueError, match="4x4"):
        openxr_joint_poses("left", None, np.eye(3))


def test_hand_channels_use_isaac_teleops_names_and_leave_tactile_replay_alone(tmp_path):
    path = tmp_path / "hands.mcap"
    with McapRecorder(path, profile="isaac") as rec:
        hands = HandPoseChannels(rec, "hands", base_space="world")
        for k in range(3):
            ts = DeviceDataTimestamp(1000 + k, 1000 + k, k)
            hands.write({"right": _random_poses(k)}, ts)
        with pytest.raises(RecordingError, match="goes back before"):
            hands.write({"right": _random_poses(0)}, DeviceDataTimestamp(5, 5, 5))
        with pytest.raises(ValueError, match="unknown side"):
            hands.write({"middle": _random_poses(0)}, DeviceDataTimestamp(2000, 2000, 0))
        with pytest.raises(RecordingError, match="already recorded"):
            HandPoseChannels(rec, "hands")
    with open(path, "rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        assert {c.topic for c in summary.channels.values()} == {hand_topic("hands", "left"), hand_topic("hands", "right")}
        hand_schemas = {summary.schemas[c.schema_id].name for c in summary.channels.values()}
        assert hand_schemas == {"core.HandPoseRecord"}
        # Isaac Teleop's own compiled-in bytes, not this package's compiled schema
        assert all(summary.schemas[c.schema_id].data == isaac_hand_schema().data != hand_pose_bfbs()
                   for c in summary.channels.values())
        topics = [(ch.topic, m.log_time - rec.log_time_offset_ns)  # the record times on the file's log-time base
                  for _, ch, m in reader.iter_messages(log_time_order=False)]
        assert topics == [(f"hands/{s}_hand", 1000 + k) for k in range(3) for s in ("left", "right")]
        assert all(c.metadata == {"frame": "world"} for c in summary.channels.values())
    with pytest.raises(RecordingError, match="no tactile collections"):
        McapReplay(path, collections=["tactile/right"])


def test_default_profile_writes_the_viewer_twin_that_reads_back_as_the_isaac_record(tmp_path):
    """The default profile's hand channels: foxglove.PosesInFrame JSON (what viewers decode),
    carrying every field of the Isaac record; the reader returns the same sample from both."""
    import json

    samples = {}
    for profile in ("default", "isaac"):
        path = tmp_path / f"{profile}.mcap"
        with McapRecorder(path, profile=profile) as rec:
            hands = HandPoseChannels(rec, "hands", base_space="simulation world")
            for k in range(3):
                valid = np.ones(26, bool)
                valid[k] = False
                hands.write({"right": _random_poses(k)}, DeviceDataTimestamp(1000 + k, 900 + k, 7 + k), valid=valid,
                            radius=np.linspace(0.001, 0.01, 26))
        samples[profile] = list(iter_hand_records(path))
    assert len(samples["default"]) == len(samples["isaac"]) == 6
    for (s1, t1, a), (s2, t2, b) in zip(samples["default"], samples["isaac"], strict=True):
        assert (s1, t1) == (s2, t2) and a.timestamp == b.timestamp
        if b.poses is None:
            assert a.poses is None and s1 == "left"
            continue
        np.testing.assert_array_equal(a.poses, b.poses)  # float32 → JSON float64 → float32: exact
        np.testing.assert_array_equal(a.valid, b.valid)
        np.testing.assert_array_equal(a.radius, b.radius)
    with open(tmp_path / "default.mcap", "rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        for c in summary.channels.values():
            schema = summary.schemas[c.schema_id]
            assert (schema.name, schema.encoding, c.message_encoding) == ("foxglove.PosesInFrame", "jsonschema", "json")
            assert c.metadata == {"frame": "simulation world", "hand_joints": "openxr-26"}
        first = next(json.loads(m.data) for _, c, m in reader.iter_messages(topics=["hands/right_hand"]))
    assert first["frame_id"] == "world" and len(first["poses"]) == 26 and first["timestamp"] == {"sec": 0, "nsec": 900}
