"""`wuji-tactile hw` argument handling that needs no hardware: zero calibration on the emulated
hand, fault specifications, and refusals. (Connecting to a real hand is not exercised: the SDK
would scan the network.)"""
from __future__ import annotations

import argparse

import numpy as np
import pytest

from wuji_tactile_device.cli import cmd_hw
from wuji_tactile_device.errors import ProducerError


def hw(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    cmd_hw.register(sub)
    args = parser.parse_args(["hw", *argv])
    return args.run(args)


def test_zero_calibration_on_the_emulated_hand(capsys):
    assert hw(["--emulate", "--calibrate-zero", "--yes"]) == 0
    err = capsys.readouterr().err
    assert "ALL five fingertip pads must be unloaded" in err
    assert "zero calibration done: thumb" in err and "pinky" in err


def test_zero_calibration_needs_confirmation_when_not_interactive(monkeypatch):
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    with pytest.raises(ProducerError, match="needs confirmation that the pads are unloaded: pass --yes"):
        hw(["--emulate", "--calibrate-zero"])


@pytest.mark.parametrize("spec,message", [
    ("offline:ring", "expected KIND:FINGER@T0"),
    ("melt:ring@1", "unknown kind 'melt'"),
    ("offline:little@1", "name a finger: thumb, index"),
    ("jump:ring@1", "jump takes no finger"),
    ("offline@1", "name a finger"),
])
def test_bad_fault_specifications_are_refused(spec, message, capsys):
    with pytest.raises(SystemExit) as exc:  # a usage error: exit 2
        hw(["--emulate", "--fast", "--fault", spec])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and message in err, err


def test_faults_need_the_emulator():
    with pytest.raises(ProducerError, match="--fault needs --emulate"):
        hw(["--sn", "WUJIK0001", "--fault", "offline:ring@1"])


def test_normalized_emulation_without_full_scale_is_refused_naming_the_flag():
    with pytest.raises(ProducerError, match=r"no full-scale calibration file given \(--full-scale FILE\)"):
        hw(["--emulate", "--fast", "--firmware", "normalized", "--duration", "0.1"])


def test_older_firmware_without_placement_needs_layout_choice(capsys):
    with pytest.raises(ProducerError, match="--layout sim uses the simulation's pad layout"):
        hw(["--emulate", "--fast", "--no-placement", "--duration", "0.1"])
    assert hw(["--emulate", "--fast", "--no-placement", "--layout", "sim", "--duration", "0.2"]) == 0
    err = capsys.readouterr().err
    assert "layout thumb: simulation layout" in err and "published 20 frames" in err


def test_stall_and_clock_jump_faults_are_reported_and_counted(capsys):
    assert hw(["--emulate", "--fast", "--duration", "1.0", "--fault", "stall:thumb@0.2-0.4", "--fault", "jump@0.6",
               "--fault", "revise:pinky@0.7", "--fault", "duplicate:index@0.8"]) == 0
    err = capsys.readouterr().err
    assert "thumb (stalled: no frames)" in err and "pinky: sensor info revised" in err
    assert "clock jumps 1; info revisions 1" in err and "duplicate 1" in err


def test_producer_log_lines_go_above_the_bar_only_during_the_run(capsys):
    """`hw` prints the producer's events above its progress bar while it runs and gives the
    package logger back exactly as it found it (handlers, level, propagation)."""
    import logging

    logger = logging.getLogger("wuji_tactile_device.producers.hardware")
    mine = logging.NullHandler()
    logger.addHandler(mine)
    before = (list(logger.handlers), logger.level, logger.propagate)
    try:
        assert hw(["--emulate", "--fast", "--duration", "0.5", "--fault", "stall:thumb@0.1-0.2"]) == 0
        assert "hw: no data for" in capsys.readouterr().err  # the stall, printed through the bar
        assert (list(logger.handlers), logger.level, logger.propagate) == before
    finally:
        logger.removeHandler(mine)


def test_an_emulated_left_hand_records_its_identity_and_health(tmp_path, capsys):
    from mcap.reader import make_reader

    out = tmp_path / "left.mcap"
    assert hw(["--emulate", "--hand", "left", "--fast", "--duration", "0.5", "--record", str(out)]) == 0
    err = capsys.readouterr().err
    assert "publishing tactile/left" in err and "recoveries 0, reconnects 0" in err
    with open(out, "rb") as f:
        reader = make_reader(f)
        meta = {m.name: m.metadata for m in reader.iter_metadata()}
        topics = {ch.topic for ch in reader.get_summary().channels.values()}
    file_meta = meta["wuji_tactile_device"]
    assert file_meta["hand_side"] == "left" and file_meta["producer_kind"] == "hardware-emulated"
    assert file_meta["device_serial_number"].startswith("EMU") and file_meta["device_side"] == "left"
    assert {"tactile/left", "tactile/left/metadata", "tactile/left/device_resultants", "tactile/left/health"} <= topics


def test_a_real_hand_must_be_named(monkeypatch):
    monkeypatch.setattr("wuji_tactile_device.producers.hardware.device.sdk_module", lambda: object())
    with pytest.raises(ProducerError, match="name the hand: --hand right|left, --sn SERIAL or --address"):
        hw([])


def test_the_emulated_pads_sense_the_sensor_model(tmp_path, capsys):
    """A sensor model with noise makes the emulated hand's recorded forces differ from the ideal run
    (same seed, same scenario) by about the noise level — the emulator encodes what the model measured."""
    import json

    from wuji_tactile_device.recording import McapReplay
    from wuji_tactile_device.streams import TactileTracker

    model = tmp_path / "noise.json"
    model.write_text(json.dumps({"format": "wuji-tactile-sensor-model", "version": 1,
                                 "parameters": {"noise_std": {"value": 0.02, "unit": "N"}}}))

    def record(extra, name):
        out = tmp_path / name
        assert hw(["--emulate", "--fast", "--duration", "0.3", "--record", str(out), *extra]) == 0
        with McapReplay(out) as replay, TactileTracker("tactile/right", replay) as tracker:
            frames = []
            while not replay.finished:
                frames += [f.forces.copy() for f in tracker.frames()]
            frames += [f.forces.copy() for f in tracker.frames()]
        return np.stack(frames)

    ideal = record([], "ideal.mcap")
    noisy = record(["--sensor-model", str(model)], "noisy.mcap")
    assert ideal.shape == noisy.shape and ideal.shape[1:] == (176, 3)
    sigma = float((noisy - ideal).std())
    assert 0.015 < sigma < 0.025, sigma  # the device's i16 step (1 mN) is far below the 20 mN noise


@pytest.mark.parametrize("argv,message", [
    (["--emulate", "--duration", "inf"], "--duration: 'inf': must be a finite number of seconds > 0"),
    (["--emulate", "--duration", "-1"], "--duration: '-1': must be a finite number of seconds > 0"),
    (["--emulate", "--seed", "-1"], "--seed: '-1': a seed is an integer in 0..4294967295"),
    (["--emulate", "--rate", "nan"], "--rate: 'nan': must be a finite number in [0.001, 1e6]"),
    (["--emulate", "--joints", "."], "--joints: '.' is not a regular file"),
    (["--emulate", "--sensor-model", "missing.json"], "--sensor-model: 'missing.json' does not exist"),
])
def test_absurd_arguments_are_one_line_usage_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as info:
        hw(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err



def test_an_emulated_hand_records_its_measured_hand_poses(tmp_path, capsys):
    """`hw --emulate --record` writes the hand's 26 joint poses every tick (the emulated hand
    reports the simulation's joint angles as the SDK's joint_states stream would); --base-pose
    puts the wrist at the stated pose; --no-hand-poses leaves the hand channels out."""
    from wuji_tactile_device.recording.export import load_recording

    out = tmp_path / "poses.mcap"
    assert hw(["--emulate", "--fast", "--duration", "0.3", "--record", str(out),
               "--base-pose", "0.1,0.2,0.3,0,0,0,1"]) == 0
    right = load_recording(out).hands["right"]
    assert right.tracked.all() and right.poses.shape == (30, 26, 7)
    wrist = right.poses[:, 1]  # HandJoint.WRIST
    np.testing.assert_allclose(wrist, np.tile([0.1, 0.2, 0.3, 0, 0, 0, 1], (30, 1)), atol=1e-6)
    index_tip = right.poses[:, 10, :3]
    assert np.linalg.norm(index_tip - wrist[:, :3], axis=1).min() > 0.1  # a finger tip, not the wrist
    out2 = tmp_path / "none.mcap"
    assert hw(["--emulate", "--fast", "--duration", "0.1", "--record", str(out2), "--no-hand-poses"]) == 0
    assert load_recording(out2).hands == {}
