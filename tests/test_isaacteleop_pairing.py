"""Time pairing of tactile frames with Isaac Teleop's hand samples, and files Isaac Teleop reads as
its own (the isaac recording profile).

The hands come from Isaac Teleop's C++ `ReplaySession` — from this package's recording, or from a
file laid out as Isaac Teleop's own recorder writes it (its channel names, its exact schema bytes,
header profile `teleop`, 90 Hz, its own timestamps); the tactile frames from this package's
recorder at 100 Hz. Ground truth: the simulator's taxel positions at each tactile frame."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("isaacteleop", reason="the optional extra isaacteleop is not installed")

from isaac_hands_helpers import (errors_at_hand_time, errors_at_output_time, hand_poses_at, hand_times,
                                 pairing_errors, run_session, simulate, write_isaac_hands)
from wuji_tactile_device.contract.records import DeviceDataTimestamp
from wuji_tactile_device.integrations.isaacteleop import RecordedHandClock, TactileSource, TimePairing
from wuji_tactile_device.run.simulation import record_simulation
from wuji_tactile_device.streams.tracker import TactileFrame
from wuji_tactile_device.producers.sim.scenarios import make_scenario
from wuji_tactile_device.recording import profiles

ROOT = Path(__file__).resolve().parents[1]
FRAMES = 1300  # the whole 13 s press: the fingers close, touch, press and open again
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


# -- the pairing rule on its own --------------------------------------------------------------------
def _frame(t: int, k: int = 0, session: int = 1) -> TactileFrame:
    forces = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, 1.0]], np.float32) * np.float32(t)  # linear in time
    return TactileFrame(forces, DeviceDataTimestamp(t + 2, t, t + 1000), k, session)


def _pairing(times, sessions=None, **kw):
    frames = iter([_frame(t, k, 1 if sessions is None else sessions[k]) for k, t in enumerate(times)])
    return TimePairing(lambda: next(frames, None), **kw)


def test_pairing_takes_the_nearest_frame_within_half_a_period_and_counts_the_rest():
    p = _pairing([0, 10, 20, 30, 40], mode="nearest")  # 100 Hz, in ms-as-ns for readability
    assert p.pick(4).timestamp[1] == 0  # nearer to 0 than to 10
    assert p.pick(6).timestamp[1] == 10
    assert p.pick(7).timestamp[1] == 10  # again: counted as reused
    assert p.pick(36).timestamp[1] == 40  # 20 and 30 never used
    assert p.pick(46) is None  # 6 past the last frame: more than half a period (5)
    c = p.finish()
    assert (c.steps, c.paired, c.missing, c.reused, c.skipped, c.max_abs_dt_ns) == (5, 4, 1, 1, 2, 4)
    assert c.nearest == 4 and c.interpolated == 0


def test_interpolated_pairing_gives_the_forces_at_the_hand_time_and_never_extrapolates():
    p = _pairing([0, 10, 20, 30, 60, 70])  # 30 -> 60: two frames lost
    f = p.pick(4)  # between 0 and 10: forces linear in time are reproduced at t = 4
    np.testing.assert_allclose(f.forces, _frame(4).forces, rtol=1e-6)
    assert f.timestamp == DeviceDataTimestamp(6, 4, 1004) and not f.forces.flags.writeable
    assert p.last.how == "interpolated" and p.last.time_ns == 4 and p.last.sequences == (0, 1)
    assert abs(p.last.alpha - 0.4) < 1e-12
    assert p.pick(7).timestamp.sample_time_local_common_clock == 7 and p.counters.reused == 1  # same pair again
    assert p.pick(20) .sequence == 2 and p.last.how == "exact"  # a frame at the very time: as recorded
    assert p.pick(33).sequence == 3 and p.last.how == "nearest"  # 30..60 is a gap: nearest within 5
    assert p.last.time_ns == 30
    assert p.pick(45) is None  # inside the gap, 15 from either frame: nothing, counted
    np.testing.assert_allclose(p.pick(65).forces, _frame(65).forces, rtol=1e-6)
    assert p.pick(74).sequence == 5 and p.last.how == "nearest"  # past the last frame: no extrapolation
    assert p.pick(76) is None
    c = p.finish()
    assert (c.steps, c.paired, c.interpolated, c.exact, c.nearest, c.missing, c.skipped) == (8, 6, 3, 1, 2, 2, 0)
    assert c.max_abs_dt_ns == 4 and c.max_gap_ns == 10


def test_interpolation_does_not_blend_across_a_producer_restart_and_before_the_first_frame():
    p = _pairing([0, 10, 20], sessions=[1, 1, 2], tolerance_ns=5)  # (no period is known before two frames)
    assert p.pick(-3).sequence == 0 and p.last.how == "nearest"  # before the first frame
    assert p.pick(14).sequence == 1 and p.last.how == "nearest"  # 10 and 20 are different sessions
    assert p.pick(16).sequence == 2 and p.counters.interpolated == 0


def test_pairing_mode_is_checked():
    with pytest.raises(ValueError, match="mode must be one of"):
        _pairing([0], mode="linear")
    with pytest.raises(ValueError, match="pairing must be one of"):
        TactileSource("t", "tactile/right", 5, 176, tracker=object(), pairing="linear")


def test_pairing_refuses_time_going_back_and_honours_a_given_tolerance():
    p = _pairing([0, 100], tolerance_ns=10, mode="nearest")
    assert p.pick(10).timestamp[1] == 0
    assert p.pick(50) is None and p.counters.missing == 1
    with pytest.raises(ValueError, match="goes back"):
        p.pick(5)


# -- the simulated run, two ways ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One simulated 13 s press shared by every case: tactile and hands at 100 Hz in one isaac-profile
    file, and the same run's hand as an Isaac-style 90 Hz file."""
    tmp = tmp_path_factory.mktemp("pairing")
    tactile = tmp / "press.mcap"  # the isaac profile: tactile, and the hands on Isaac Teleop's channels
    truth = simulate(tactile, FRAMES, compression="none")
    t = hand_times(truth, 90)
    hands = tmp / "isaac_hands_90hz.mcap"
    write_isaac_hands(hands, t, hand_poses_at(truth, "right", t))
    return tactile, hands, truth, t


@pytest.fixture(scope="module")
def small_zstd(tmp_path_factory):
    """A short recording in this package's default profile (zstd, hands on the viewer channels)."""
    path = tmp_path_factory.mktemp("pairing_zstd") / "tactile.mcap"
    simulate(path, 60, compression="zstd")
    return path


def test_isaac_style_90hz_hands_with_100hz_tactile_put_every_taxel_within_1mm(run, capfd):
    """The whole 13 s press, default pairing (interpolate): forces and skinned taxels at one instant."""
    tactile, hands, truth, t = run
    steps, source = run_session(tactile, hands)
    captured = capfd.readouterr()
    assert len(steps) == len(t), "one step per recorded hand sample: no hand sample left out or exhausted early"
    assert all(p is not None for _, p in steps), "every step had the hand (no 'hand data not found')"
    c = source.pairing
    assert c.paired == c.interpolated == len(t) and c.missing == 0 and c.past_hands == 0 and c.max_abs_dt_ns == 0
    assert [s for s, _ in steps] == list(t), "each output refers to its hand sample's own time"
    assert c.max_gap_ns == 10_000_000 and c.skipped == 0  # every frame went into some output
    err = errors_at_output_time(steps, truth)
    assert len(err) == len(t) and err.max() < 1e-3, f"skinned taxels off by {err.max() * 1e3:.2f} mm"
    assert "hand data not found" not in captured.err + captured.out
    assert "schema mismatch" not in captured.err + captured.out
    print(f"\n90 Hz Isaac-style hands / 100 Hz tactile: max taxel error {err.max() * 1e3:.3f} mm; {c.text()}")


def test_nearest_pairing_emits_measured_frames_within_half_a_period(run, capfd):
    tactile, hands, truth, t = run
    steps, source = run_session(tactile, hands, pairing="nearest")
    capfd.readouterr()
    c = source.pairing
    assert len(steps) == len(t) and c.paired == c.nearest == len(t) and c.interpolated == 0
    assert c.max_abs_dt_ns <= 5_000_000  # half the 10 ms tactile period
    assert c.skipped == FRAMES - len(t), "the tactile frames not paired are counted"
    assert set(s for s, _ in steps) <= set(truth["t"].tolist()), "every output is a recorded frame"
    err = pairing_errors(steps, truth)  # against the simulator at the frame's time: the hand moved during |dt|
    assert 0.5e-3 < err.max() < 2e-3
    # the skinning itself, at the hand sample's own time (the simulator interpolated between its frames)
    at_hand = errors_at_hand_time(steps, truth, t)
    assert len(at_hand) == len(t) and at_hand.max() < 1e-4, f"{at_hand.max():.3g} m"


def test_by_count_the_same_files_drift_by_centimetres(run, capfd):
    """Why pairing is by time: one tactile frame per hand step (the former rule) on the same files."""
    tactile, hands, truth, t = run
    steps, _ = run_session(tactile, hands, paired=False)
    captured = capfd.readouterr()
    err = pairing_errors(steps, truth)
    assert err.max() > 5e-3
    # ... and it steps past the last hand record, where Isaac Teleop's replay prints its line
    assert len(steps) > len(t) and "right hand data not found" in captured.err + captured.out


def test_both_at_100hz_from_one_file_pair_exactly(run, capfd):
    path, _, truth, _ = run
    steps, source = run_session(path, path)
    capfd.readouterr()
    c = source.pairing
    assert len(steps) == FRAMES and c.paired == c.exact == FRAMES and c.max_abs_dt_ns == 0 and c.skipped == 0
    assert [s for s, _ in steps] == list(truth["t"]), "each step's tactile frame is the hand record's own frame"
    err = pairing_errors(steps, truth)
    assert err.max() < 1e-5, f"skinned taxels off by {err.max():.3g} m"


def test_hand_clock_reads_isaac_teleops_own_timestamps(run):
    _, hands, _, t = run
    clock = RecordedHandClock(hands, "hands")
    np.testing.assert_array_equal(clock.times, t)
    with pytest.raises(Exception, match="no hand channel 'other/right_hand'"):
        RecordedHandClock(hands, "other", "right")


# -- the isaac profile -----------------------------------------------------------------------------
_REPLAY = """
import sys
import isaacteleop.deviceio as d
t = d.HandTracker()
with d.ReplaySession.run(d.McapReplayConfig(sys.argv[1], [(t, "hands")])) as s:
    for _ in range(int(sys.argv[2])):
        s.update()
        assert t.get_right_hand(s) is not None
print("replayed")
"""


def _replay_output(path: Path, steps: int) -> str:
    r = subprocess.run([sys.executable, "-c", _REPLAY, str(path), str(steps)], capture_output=True, text=True,
                       timeout=60, env=ENV)
    assert r.returncode == 0 and "replayed" in r.stdout, r.stderr
    return r.stdout + r.stderr


def test_replay_session_prints_no_schema_notice_on_an_isaac_profile_file(tmp_path):
    from mcap.writer import CompressionType, Writer

    from wuji_tactile_device.contract.hand_pose import encode_hand_pose_record, hand_pose_bfbs

    isaac, own = tmp_path / "isaac.mcap", tmp_path / "own_schema.mcap"
    record_simulation(isaac, make_scenario("press"), max_frames=5, profile="isaac")
    assert "schema mismatch" not in _replay_output(isaac, 5)
    # the same records with this package's own compiled schema (what files before the isaac profile
    # carried): Isaac Teleop compares the bytes and notices
    with open(own, "wb") as f:
        w = Writer(f, compression=CompressionType.NONE)
        w.start(profile="teleop", library="test")
        sid = w.register_schema("core.HandPoseRecord", "flatbuffer", hand_pose_bfbs())
        poses = np.tile(np.array([0, 0, 0, 0, 0, 0, 1.0]), (26, 1))
        for side in ("left", "right"):
            ch = w.register_channel(f"hands/{side}_hand", "flatbuffer", sid)
            for k in range(5):
                w.add_message(ch, 10 + k, encode_hand_pose_record(poses, DeviceDataTimestamp(10 + k, 10 + k, k)), 10 + k)
        w.finish()
    assert "schema mismatch" in _replay_output(own, 5)


def test_example_on_a_default_profile_file_says_its_hands_are_in_the_viewer_channels(tmp_path):
    path = tmp_path / "default.mcap"
    record_simulation(path, make_scenario("press"), max_frames=5, compression="none", profile="default")
    _one_line_error(_example(str(path)), "viewer channels", "--profile isaac")


def test_isaac_profile_header_chunks_and_schema_bytes(tmp_path):
    from mcap.reader import make_reader

    path = tmp_path / "isaac.mcap"
    record_simulation(path, make_scenario("press"), max_frames=3, profile="isaac")
    with open(path, "rb") as f:
        reader = make_reader(f)
        assert reader.get_header().profile == "teleop"
        summary = reader.get_summary()
        hand = [s for s in summary.schemas.values() if s.name == "core.HandPoseRecord"]
        assert len(hand) == 1 and hand[0].data == profiles.isaac_hand_schema().data
        assert {c.compression for c in summary.chunk_indexes} == {""}
    assert len(profiles.isaac_hand_schema().data) == 3632 and profiles.isaac_hand_schema().verified_in_installed


def test_isaac_profile_refuses_a_compression(tmp_path):
    from wuji_tactile_device.errors import RecordingError
    from wuji_tactile_device.recording import McapRecorder

    with pytest.raises(RecordingError, match="isaac profile is uncompressed"):
        McapRecorder(tmp_path / "x.mcap", profile="isaac", compression="zstd")


def test_an_unknown_isaac_teleop_release_gets_one_warning_line(monkeypatch, caplog):
    profiles.isaac_hand_schema.cache_clear()
    monkeypatch.setattr(profiles, "_installed_isaacteleop", lambda: ("9.9.9", []))
    try:
        with caplog.at_level("WARNING", logger=profiles.__name__):
            schema = profiles.isaac_hand_schema()
        assert schema.version == "1.5.175" and schema.installed == "9.9.9" and not schema.verified_in_installed
        lines = [r.getMessage() for r in caplog.records]
        assert len(lines) == 1 and "isaacteleop 9.9.9 is not a release" in lines[0] and "\n" not in lines[0]
    finally:
        profiles.isaac_hand_schema.cache_clear()


# -- errors a user can act on --------------------------------------------------------------------------
def _example(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "examples/tactile/teleop_session_replay.py"), *args],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, env=ENV)


def _one_line_error(r: subprocess.CompletedProcess, *needles: str) -> None:
    assert r.returncode == 1, (r.stdout, r.stderr)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_example_on_a_zstd_file_says_how_to_convert_it(small_zstd):
    _one_line_error(_example(str(small_zstd)), "zstd-compressed", "--profile isaac")


def test_example_on_a_file_without_hands_says_so(tmp_path):
    from retargeting_helpers import CurvedPadLayout, record_synthetic
    from wuji_tactile_device.recording import McapRecorder

    path = tmp_path / "nohands.mcap"
    layout = CurvedPadLayout()
    with McapRecorder(path, profile="isaac") as rec:
        record_synthetic(path, layout, np.zeros((3, layout.num_taxels, 3), np.float32), recorder=rec)
    _one_line_error(_example(str(path)), "no hand channel hands/right_hand")


def test_example_on_a_truncated_file_says_how_to_recover_it(tmp_path):
    path = tmp_path / "press.mcap"
    record_simulation(path, make_scenario("press"), max_frames=20)
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(path.read_bytes()[: path.stat().st_size * 2 // 3])
    _one_line_error(_example(str(cut)), "cut off", "wuji-tactile recover")


def test_example_without_the_tactile_collection_names_the_ones_there(run):
    tactile, hands, _, _ = run
    _one_line_error(_example(str(hands)), "holds no tactile collections")
    _one_line_error(_example(str(tactile), "--hands-file", str(hands), "--collection", "tactile/left"),
                    "no collection 'tactile/left'", "tactile/right")


# -- N13: a script that never closes its TactileSource still exits ----------------------------------------
def test_a_script_that_never_closes_its_default_tactile_source_exits():
    script = ("from wuji_tactile_device.integrations.isaacteleop import TactileSource\n"
              "s = TactileSource('tactile', 'tactile/right', 5, 176)\n"
              "print('built', flush=True)\n")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30, env=ENV)
    assert r.returncode == 0 and "built" in r.stdout, r.stderr


# -- the profile from the command line, and converting a compressed recording ----------------------------
def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "wuji_tactile_device.cli", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd, env=ENV)


def test_sim_record_profile_isaac_and_recover_profile_isaac_give_files_isaac_teleop_reads_as_its_own(tmp_path):
    from mcap.reader import make_reader

    r = _cli("sim", "--scenario", "press", "--duration", "0.3", "--record", "isaac.mcap", "--profile", "isaac",
             cwd=tmp_path)
    assert "recorded isaac.mcap" in r.stdout + r.stderr, r.stderr
    r = _cli("sim", "--scenario", "press", "--duration", "0.3", "--record", "zstd.mcap", cwd=tmp_path)
    assert (tmp_path / "zstd.mcap").exists(), r.stderr
    r = _cli("recover", "zstd.mcap", "converted.mcap", "--profile", "isaac", cwd=tmp_path)
    assert r.returncode == 0 and "nothing lost" in r.stdout, r.stdout + r.stderr
    for name in ("isaac.mcap", "converted.mcap"):
        with open(tmp_path / name, "rb") as f:
            reader = make_reader(f)
            assert reader.get_header().profile == "teleop"
            assert {c.compression for c in reader.get_summary().chunk_indexes} == {""}
        assert "schema mismatch" not in _replay_output(tmp_path / name, 30)
    r = _cli("sim", "--scenario", "press", "--duration", "0.3", "--record", "bad.mcap", "--profile", "isaac",
             "--compression", "zstd", cwd=tmp_path)
    assert r.returncode == 1 and "isaac profile is uncompressed" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("example", ["mcap_replay.py", "retargeting_graph.py"])
def test_the_other_examples_name_the_problem_in_one_line(run, small_zstd, tmp_path, example):
    _, hands, _, _ = run
    tactile = small_zstd
    junk = tmp_path / "junk.mcap"
    junk.write_text("hello\n")

    def go(path):
        return subprocess.run([sys.executable, str(ROOT / "examples/tactile" / example), str(path)],
                              capture_output=True, text=True, timeout=120, cwd=ROOT, env=ENV)

    _one_line_error(go(junk), "is not an MCAP file")
    _one_line_error(go(tmp_path / "missing.mcap"), "No such file")
    _one_line_error(go(hands), "holds no tactile collections")
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(tactile.read_bytes()[: tactile.stat().st_size // 2])
    r = go(cut)  # a cut-off recording replays up to its last complete record, with one warning line
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    warned = [line for line in r.stderr.splitlines() if "warning:" in line]
    assert len(warned) == 1 and "recover" in warned[0], r.stderr


def test_example_says_so_when_hands_and_tactile_share_no_time(run, tmp_path):
    tactile, _, truth, _ = run
    t = hand_times(truth, 90)[:20] + 3_600 * 10**9  # an hour later: no tactile frame near any hand sample
    hands = tmp_path / "later.mcap"
    write_isaac_hands(hands, t, hand_poses_at(truth, "right", t - 3_600 * 10**9))
    r = _example(str(tactile), "--hands-file", str(hands))
    assert r.returncode == 1 and "20 hand steps, 0 paired" in r.stdout, r.stdout + r.stderr
    assert "do not share a clock or a time span" in r.stderr and "Traceback" not in r.stderr
