"""Isaac Teleop–native replay: a simulation recorded with its hand poses (Isaac Teleop's own
`core.HandPoseRecord` channels) is opened by Isaac Teleop's `ReplaySession` / `TeleopSession`.

Ground truth is the simulator's own state (MuJoCo body poses, contact solution), kept while the
recording is written; the replayed side goes through Isaac Teleop's C++ replay, `HandsSource`,
our `TactileSource` and `TaxelSkinning`. Fast: 500 simulated frames, uncompressed file."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("isaacteleop", reason="the optional extra isaacteleop is not installed")
import isaacteleop.deviceio as deviceio
from isaacteleop.retargeters.tactile_retargeters import TactileVectorToFingerPower
from isaacteleop.retargeting_engine.deviceio_source_nodes import HandsSource
from isaacteleop.retargeting_engine.interface import OutputCombiner
from isaacteleop.teleop_session_manager import SessionMode, TeleopSession, TeleopSessionConfig

from wuji_tactile_device.contract.joints import HandJoint
from wuji_tactile_device.hands.wuji_hand2 import TAXELS_PER_FINGER
from wuji_tactile_device.integrations.isaacteleop import PadForceMagnitude, TactileSource, TaxelSkinning
from wuji_tactile_device.run.simulation import record_simulation
from wuji_tactile_device.producers.sim.hand_pose import sim_hand_joint_poses
from wuji_tactile_device.producers.sim.scenarios import make_scenario
from wuji_tactile_device.recording import McapReplay

FRAMES = 500  # 5 s of the press scenario: the fingers close, the pads touch from ~3.5 s on
CID = "tactile/right"
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """(path, truth): per frame the simulator's joint poses, taxel world positions, per-pad world
    forces the taxels carry (each pad's solver force minus its unsensed load, the part landing
    beyond its sensing area) and the timestamp."""
    path = tmp_path_factory.mktemp("teleop") / "press.mcap"
    truth = {"joints": [], "taxels": [], "pads": [], "t": []}

    def keep(sim, reading, ts):
        T_world_xr = np.linalg.inv(sim._T_openxr_world())  # MuJoCo's own wrist frame, not our FK
        p = sim.taxel_positions_in_wrist()
        truth["taxels"].append(p @ T_world_xr[:3, :3].T + T_world_xr[:3, 3])
        truth["pads"].append(np.einsum("pij,pj->pi", reading.distal_rotations,
                                       reading.pad_forces_distal - reading.pad_unsensed_distal))
        truth["joints"].append(sim_hand_joint_poses(sim))
        truth["t"].append(ts)

    record_simulation(path, make_scenario("press"), max_frames=FRAMES, on_frame=keep)
    return path, {k: (np.array(v) if k != "t" else v) for k, v in truth.items()}


def test_replay_session_on_compressed_files_fails_with_isaac_teleops_own_error(tmp_path):
    """Why the Isaac Teleop profile is uncompressed: 1.5's ReplaySession refuses zstd and lz4."""
    from mcap.reader import make_reader
    from mcap.writer import CompressionType, Writer

    isaac = tmp_path / "isaac.mcap"
    record_simulation(isaac, make_scenario("press"), max_frames=3, profile="isaac")
    for compression in ("zstd", "lz4"):
        path = tmp_path / f"{compression}.mcap"
        # the isaac profile's records, chunks compressed (the isaac profile itself refuses a compression)
        with open(isaac, "rb") as src, open(path, "wb") as dst:
            w = Writer(dst, compression=CompressionType[compression.upper()])
            w.start(profile="teleop", library="test")
            ids = {}
            for schema, channel, m in make_reader(src).iter_messages():
                if channel.id not in ids:
                    sid = w.register_schema(schema.name, schema.encoding, schema.data)
                    ids[channel.id] = w.register_channel(channel.topic, channel.message_encoding, sid)
                w.add_message(ids[channel.id], m.log_time, m.data, m.publish_time)
            w.finish()
        tracker = deviceio.HandTracker()
        with pytest.raises(RuntimeError, match=f"unsupported compression: {compression}"):
            with deviceio.ReplaySession.run(deviceio.McapReplayConfig(str(path), [(tracker, "hands")])) as s:
                s.update()


def test_replay_session_hand_tracker_returns_every_simulated_joint(recording):
    path, truth = recording
    tracker = deviceio.HandTracker()
    with deviceio.ReplaySession.run(deviceio.McapReplayConfig(str(path), [(tracker, "hands")])) as session:
        for k in range(FRAMES):
            session.update()
            assert tracker.get_left_hand(session) is None, "the left hand was never tracked"
            joints = tracker.get_right_hand(session).joints
            expected = truth["joints"][k]
            np.testing.assert_allclose(joints.positions, expected[:, :3], atol=1e-6, rtol=0)  # float32 in metres
            # q and −q are one rotation: at qw ≈ 0 (a 180° turn) the sign is not fixed by qw ≥ 0
            sign = np.where(np.sum(joints.orientations * expected[:, 3:], axis=1, keepdims=True) < 0, -1.0, 1.0)
            np.testing.assert_allclose(joints.orientations * sign, expected[:, 3:], atol=1e-6, rtol=0)
            assert joints.is_valid.all()
    # the hand moved: the index tip travelled (a frozen hand would pass the comparison trivially)
    tip = truth["joints"][:, int(HandJoint.INDEX_TIP), :3]
    assert np.linalg.norm(tip[-1] - tip[0]) > 0.02


def _session(path, *, tactile_source):
    hands = HandsSource("hands")
    skin = TaxelSkinning("skin", 5, 176).connect({
        "tactile_layout": tactile_source.output("tactile_layout"), "hand": hands.output(HandsSource.RIGHT),
        "taxel_forces": tactile_source.output("taxel_forces")})
    magnitude = PadForceMagnitude("pad_force", 5, 176).connect({
        "taxel_forces": tactile_source.output("taxel_forces"), "tactile_layout": tactile_source.output("tactile_layout")})
    power = TactileVectorToFingerPower("finger_power", num_taxels=5, gain=0.5, deadband=0.05).connect(
        {"tactile": magnitude.output("finger_force")})
    pipeline = OutputCombiner({"positions": skin.output("taxel_positions_base"),
                               "forces": skin.output("taxel_forces_base"), "powers": power.output("powers"),
                               "finger_force": magnitude.output("finger_force")})
    config = TeleopSessionConfig(app_name="wuji-replay-test", pipeline=pipeline, mode=SessionMode.REPLAY,
                                 mcap_config=deviceio.McapReplayConfig(str(path), []), verbose=False)
    return TeleopSession(config)


def test_teleop_session_replay_puts_taxels_and_forces_where_the_simulator_had_them(recording):
    path, truth = recording
    source = TactileSource("tactile", CID, 5, 176, source=McapReplay(path))
    pad_of = np.repeat(np.arange(5), TAXELS_PER_FINGER)
    pos_err, force_err, touching = [], [], 0
    with _session(path, tactile_source=source) as session:
        for k in range(FRAMES):
            out = session.step()
            assert source.last_frame.timestamp == truth["t"][k], "hand and tactile frames out of step"
            positions = np.asarray(out["positions"][0], dtype=np.float64)
            pos_err.append(np.abs(positions - truth["taxels"][k]).max())
            forces = np.asarray(out["forces"][0], dtype=np.float64)
            per_pad = np.zeros((5, 3))
            np.add.at(per_pad, pad_of, forces)
            force_err.append(np.abs(per_pad - truth["pads"][k]).max())
            touching += int(np.linalg.norm(truth["pads"][k], axis=1).max() > 0.1)
            magnitude = np.linalg.norm(truth["pads"][k], axis=1)
            np.testing.assert_allclose(out["finger_force"][0], magnitude, atol=1e-4)
            expected_power = np.clip(0.5 * (magnitude - 0.05), 0.0, 1.0) * (magnitude > 0.05)
            np.testing.assert_allclose(out["powers"][0], expected_power, atol=1e-4)
    assert max(pos_err) < 1e-5, f"skinned taxel positions off by {max(pos_err):.3g} m"
    assert max(force_err) < 1e-4, f"per-pad forces off by {max(force_err):.3g} N"
    assert touching > 20, "the run must contain real contact for the force check to mean anything"
    print(f"\nskinning error max {max(pos_err):.3g} m, force-sum error max {max(force_err):.3g} N, "
          f"{touching} frames with contact")


def test_teleop_session_runs_tactile_source_live_over_zenoh(recording):
    """The default 4-argument TactileSource (package default Zenoh, loopback) inside a running
    TeleopSession: forces published by another Zenoh session reach the graph; no external_inputs."""
    from wuji_tactile_device.producers.sim.layout_metadata import sim_metadata
    from wuji_tactile_device.streams import TactilePublisher, open_transport

    path, _ = recording
    source = TactileSource("tactile", CID, 5, 176)
    producer = open_transport("zenoh")
    try:
        with _session(path, tactile_source=source) as session, \
                TactilePublisher(CID, sim_metadata("right"), producer) as publisher:
            forces = np.zeros((176, 3), np.float32)
            forces[:40, 2] = -0.25  # thumb pad
            got = None
            for k in range(200):  # ≤ 2 s for discovery on loopback
                publisher.publish(forces, sample_time_ns=k)
                out = session.step()
                if not out["forces"].is_none:
                    got = out
                    break
                import time
                time.sleep(0.01)
            assert got is not None, "no tactile frame reached the TeleopSession over Zenoh within 2 s"
            assert got["finger_force"][0][0] == pytest.approx(np.linalg.norm(
                np.asarray(got["forces"][0], dtype=np.float64)[:40].sum(axis=0)), abs=1e-4)
            assert got["finger_force"][0][1:].max() == 0.0
    finally:
        source.close()
        producer.close()


def test_example_script_runs_end_to_end(recording):
    path, _ = recording
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "tactile" / "teleop_session_replay.py"),
                             str(path), "--every", "100"], capture_output=True, text=True, timeout=120,
                            cwd=ROOT, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    assert "frames" in result.stdout and "index" in result.stdout
