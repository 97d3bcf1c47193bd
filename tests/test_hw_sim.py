"""Simulation → emulated device bytes → hardware producer → TactileTracker, against the simulated
producer itself (same scenario, same seed): forces within the i16 quantisation step, metadata
equal up to the device's own layout; and the `wuji-tactile hw --emulate` recording has the same
layout as the simulation's."""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest
from hw_faults import TICK_NS, VirtualClock
from mcap.reader import make_reader

from wuji_tactile_device.cli import cmd_hw
from wuji_tactile_device.producers.emulated import EmulatedHand2
from wuji_tactile_device.producers.base import ProducerRunner
from wuji_tactile_device.producers.hardware import HardwareConfig, HardwareProducer, SdkFingertipDevice
from wuji_tactile_device.producers.emulated import simulation_forces
from wuji_tactile_device.producers.sim.layout_metadata import sim_metadata
from wuji_tactile_device.run.simulation import run_scenario
from wuji_tactile_device.producers.sim.scenarios import make_scenario
from wuji_tactile_device.recording import McapReplay
from wuji_tactile_device.streams.tracker import TactileTracker
from wuji_tactile_device.streams.inproc import InProcessBus

FRAMES = make_scenario("press").num_frames  # whole scenario: approach, press ramp, hold, release


def _sim_producer_frames(side: str) -> tuple[list[np.ndarray], object]:
    bus = InProcessBus()
    tracker = TactileTracker(f"tactile/{side}", bus)
    frames: list[np.ndarray] = []

    def on_frame(_sim, _reading):
        tracker.update()
        frames.append(np.array(tracker.get_data().forces))

    run_scenario(make_scenario("press"), side=side, transport=bus, on_frame=on_frame)
    return frames, tracker.get_metadata()


@pytest.mark.parametrize("side", ["right", "left"])
def test_hardware_path_reproduces_the_simulated_producer(side):
    sim_frames, sim_md = _sim_producer_frames(side)
    emu = EmulatedHand2(side)
    bus = InProcessBus()
    tracker = TactileTracker(f"tactile/{side}", bus)
    clock = VirtualClock()  # one emulated 10 ms tick per step, whatever the machine's load
    runner = ProducerRunner(HardwareProducer(SdkFingertipDevice(emu, clock_ns=clock), HardwareConfig(side=side)), bus)
    hw_frames = []
    for forces in simulation_forces(side, "press"):
        emu.emit(forces)
        assert runner.step() == 1
        clock.advance(TICK_NS / 1e9)
        tracker.update()
        hw_frames.append(np.array(tracker.get_data().forces))
    assert len(hw_frames) == len(sim_frames) == FRAMES
    sim = np.stack(sim_frames).astype(np.float64)
    hw = np.stack(hw_frames).astype(np.float64)
    # 0.5 N per pad, read through the elastomer by ~5 taxels: the largest taxel carries ≈ 0.25 N
    assert np.abs(sim).max() > 0.15, "the comparison must include real contact forces"
    pressed = sim[:, :, 2] < -1e-3
    assert pressed.sum() > 50 and np.all(hw[pressed][:, 2] < 0)  # a press reads fz < 0 on both paths
    bound = emu.quantisation_step() + 1e-6 * np.abs(sim) + 1e-9
    assert np.all(np.abs(hw - sim) <= bound), np.abs(hw - sim).max()
    md = tracker.get_metadata()
    assert md.joint_ids == sim_md.joint_ids
    np.testing.assert_array_equal(md.segment_bind_poses, sim_md.segment_bind_poses)
    np.testing.assert_array_equal(md.segment_indices, sim_md.segment_indices)
    np.testing.assert_array_equal(md.segment_weights, sim_md.segment_weights)
    np.testing.assert_allclose(md.taxel_bind_poses[:, :3], sim_md.taxel_bind_poses[:, :3], atol=1e-7)
    assert np.all(np.abs(np.sum(md.taxel_bind_poses[:, 3:] * sim_md.taxel_bind_poses[:, 3:], axis=1)) > 1 - 1e-6)


def _hw_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    cmd_hw.register(sub)
    args = parser.parse_args(["hw", *argv])
    return args.run(args)


def test_emulated_cli_records_an_mcap_with_the_simulations_layout(tmp_path: Path):
    out = tmp_path / "hw.mcap"
    assert _hw_cli(["--emulate", "--scenario", "press", "--fast", "--duration", "1.5", "--record", str(out),
                    "--fault", "offline:ring@0.5-0.7"]) == 0
    with open(out, "rb") as f:
        summary = make_reader(f).get_summary()
    topics = {(c.topic, summary.schemas[c.schema_id].name) for c in summary.channels.values()}
    assert topics == {("tactile/right", "core.TactileDataArrayRecord"),
                      ("tactile/right/metadata", "core.TactileMetadataRecord"),
                      ("tactile/right/device_resultants", "wuji_tactile.DeviceResultants"),
                      ("tactile/right/health", "wuji_tactile.HandHealth"),
                      ("hands/left_hand", "foxglove.PosesInFrame"), ("hands/right_hand", "foxglove.PosesInFrame"),
                      # the 3-D view's topics, recorded by default (--no-record-view leaves them out)
                      ("tactile/right/view/scene", "foxglove.SceneUpdate"),
                      ("tactile/right/view/tf", "foxglove.FrameTransforms"),
                      ("tactile/right/view/resultants", "wuji_tactile.PadResultants")}
    replay = McapReplay(out)
    tracker = TactileTracker("tactile/right", replay)
    frames = list(tracker.frames())
    md = tracker.get_metadata()
    sim_md = sim_metadata("right")
    assert md.num_taxels == sim_md.num_taxels == 176 and md.joint_ids == sim_md.joint_ids
    np.testing.assert_allclose(md.taxel_bind_poses[:, :3], sim_md.taxel_bind_poses[:, :3], atol=1e-7)
    # 150 ticks, ring offline 0.5–0.7 s: about 20 ticks plus the 50 ms detection are not published
    assert 110 <= len(frames) <= 135
    times = np.array([fr.timestamp.sample_time_raw_device_clock for fr in frames])
    gaps = np.diff(times)
    assert gaps.min() == 10_000_000 and gaps.max() >= 200_000_000  # the offline stretch is a gap, not stale data
    # one device-resultant message per published tick, joined on the data record's sequence
    with open(out, "rb") as f:
        reader = make_reader(f)
        # the device resultants are logged like the records: + the file's one log-time offset
        offset = int({m.name: m.metadata for m in reader.iter_metadata()}["wuji_tactile_device"]["log_time_offset_ns"])
        res = {m.sequence: m.publish_time - offset for _, c, m in reader.iter_messages(log_time_order=False)
               if c.topic == "tactile/right/device_resultants"}
    assert res == {fr.sequence: fr.timestamp.sample_time_local_common_clock for fr in frames}
    assert not out.with_suffix(".resultants.csv").exists()


def _replayed(path: Path):
    tracker = TactileTracker("tactile/right", McapReplay(path))
    frames = [fr.forces.astype(np.float64) for fr in tracker.frames()]
    with open(path, "rb") as f:
        summary = make_reader(f).get_summary()
    topics = {(c.topic, summary.schemas[c.schema_id].name, summary.schemas[c.schema_id].encoding,
               c.message_encoding) for c in summary.channels.values()}
    return tracker.get_metadata(), np.stack(frames), topics


def test_emulated_hardware_recording_matches_the_simulation_recording(sim_press_run, hw_emulate_run):
    # `wuji-tactile sim --scenario press --record` and `wuji-tactile hw --emulate --fast --record` (its
    # default scenario is press): the session's one run of each (conftest.py)
    (sim_path, sim_run), (hw_path, hw_run) = sim_press_run, hw_emulate_run
    assert sim_run.returncode == 0, sim_run.stderr
    assert hw_run.returncode == 0, hw_run.stderr
    sim_md, sim_frames, sim_topics = _replayed(sim_path)
    hw_md, hw_frames, hw_topics = _replayed(hw_path)
    # the contract topics are identical; the hardware file adds the device's own resultants and
    # health; both carry the hand's poses on the default profile's viewer hand channels (the simulated
    # hand's; the emulated hand's measured joint angles); the simulation adds its pads' slip output
    # (the contact model's, which no hardware reports)
    hands = {(f"hands/{side}_hand", "foxglove.PosesInFrame", "jsonschema", "json") for side in ("left", "right")}
    assert hands <= sim_topics and hands <= hw_topics
    slip = ("tactile/right/pad_slip", "wuji_tactile.PadSlip", "jsonschema", "json")
    assert slip in sim_topics and slip not in hw_topics
    assert hw_topics | {slip} == sim_topics | {("tactile/right/device_resultants", "wuji_tactile.DeviceResultants",
                                       "jsonschema", "json"),
                                      ("tactile/right/health", "wuji_tactile.HandHealth", "jsonschema", "json")}
    assert hw_md.joint_ids == sim_md.joint_ids and hw_md.num_taxels == sim_md.num_taxels
    np.testing.assert_array_equal(hw_md.segment_bind_poses, sim_md.segment_bind_poses)
    np.testing.assert_array_equal(hw_md.segment_weights, sim_md.segment_weights)
    np.testing.assert_allclose(hw_md.taxel_bind_poses[:, :3], sim_md.taxel_bind_poses[:, :3], atol=1e-7)
    assert hw_frames.shape == sim_frames.shape == (make_scenario("press").num_frames, 176, 3)
    assert np.abs(sim_frames).max() > 0.15    # 0.5 N pads read by ~5 taxels each
    step = EmulatedHand2("right").quantisation_step()
    assert np.all(np.abs(hw_frames - sim_frames) <= step + 1e-6 * np.abs(sim_frames) + 1e-9)
