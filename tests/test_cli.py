"""`wuji-tactile`: every subcommand's --help, happy path and one bad-input path; exit codes; user
errors on stderr as one line, never a traceback. Most run in-process through `cli.main(argv)`;
the commands that must talk to another process (record from Zenoh) run the installed script."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from retargeting_helpers import CurvedPadLayout, press_profile, record_synthetic
from cli_helpers import cli
from streams_helpers import free_port
from wuji_tactile_device.cli import SUBCOMMANDS

CID = "tactile/right"
SCRIPT = shutil.which("wuji-tactile", path=str(Path(sys.executable).parent)) or "wuji-tactile"




def assert_user_error(code: int, err: str, command: str, *fragments: str) -> None:
    assert code != 0
    assert "Traceback" not in err
    lines = err.splitlines()
    assert any(line.startswith(f"wuji-tactile {command}: error:") for line in lines) \
        or err.startswith("usage: wuji-tactile"), err
    for fragment in fragments:
        assert fragment in err, err




@pytest.fixture(scope="module")
def layout():
    return CurvedPadLayout(per_pad=6)


@pytest.fixture(scope="module")
def recording(tmp_path_factory, layout) -> Path:
    path = tmp_path_factory.mktemp("cli") / "press.mcap"
    record_synthetic(path, layout, press_profile(layout, frames=40))
    return path


def run_script(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run the installed `wuji-tactile` script (a real process, as a user would)."""
    env = dict(os.environ, WUJI_TELEMETRY_DISABLE="1")
    return subprocess.run([SCRIPT, *argv], capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture(scope="module")
def sim_run(sim_press_run) -> tuple[Path, subprocess.CompletedProcess]:
    """`wuji-tactile sim --scenario press --record … --quiet` (13 s simulated): the session's one run
    (conftest.py), shared with the other files that read it."""
    return sim_press_run


@pytest.fixture(scope="module")
def truncated(tmp_path_factory, recording) -> Path:
    path = tmp_path_factory.mktemp("cli") / "cut.mcap"
    data = recording.read_bytes()
    path.write_bytes(data[: int(len(data) * 0.8)])
    return path


# --- every subcommand -------------------------------------------------------------------------

@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_help_for_every_subcommand(capsys, command):
    code, out, err = cli(capsys, command, "--help")
    assert code == 0 and err == ""
    assert out.startswith(f"usage: wuji-tactile {command}")


def test_top_level_help_lists_every_subcommand_and_no_command_is_a_usage_error(capsys):
    code, out, _ = cli(capsys, "--help")
    assert code == 0
    assert all(c in out for c in SUBCOMMANDS)
    code, _, err = cli(capsys)
    assert code == 2 and err == "wuji-tactile: error: the following arguments are required: COMMAND (see wuji-tactile --help)\n", err


# --- inspect / validate / recover ---------------------------------------------------------------

def test_inspect(capsys, recording):
    code, out, err = cli(capsys, "inspect", str(recording))
    assert code == 0, err
    assert CID in out and "core.TactileDataArrayRecord" in out and "core.TactileMetadataRecord" in out
    assert "40" in out  # the data message count
    code, _, err = cli(capsys, "inspect", str(recording.parent / "missing.mcap"))
    assert_user_error(code, err, "inspect", "missing.mcap")


def test_validate(capsys, recording, truncated):
    code, out, _ = cli(capsys, "validate", str(recording))
    assert code == 0 and f"{recording}: valid" in out
    code, out, err = cli(capsys, "validate", str(truncated))
    assert code == 1 and "INVALID" in out and "truncated" in out and "Traceback" not in err


def test_recover(capsys, recording, truncated, tmp_path):
    out_path = tmp_path / "fixed.mcap"
    code, out, _ = cli(capsys, "recover", str(truncated), str(out_path))
    assert code == 1, "data was lost, so recover reports it with exit 1"
    assert out_path.exists()
    code, out, _ = cli(capsys, "validate", str(out_path))
    assert code == 0 and "valid" in out
    code, _, err = cli(capsys, "recover", str(recording), str(out_path))  # exists, no --overwrite
    assert_user_error(code, err, "recover", "already exists")
    code, out, _ = cli(capsys, "recover", str(recording), str(out_path), "--overwrite")
    assert code == 0, out


# --- replay / record ----------------------------------------------------------------------------

def test_replay_prints_every_frame_through_the_tracker(capsys, recording):
    code, out, err = cli(capsys, "replay", str(recording))
    assert code == 0, err
    lines = [line for line in out.splitlines() if CID in line]
    assert len(lines) == 40
    assert "40 frames delivered" in err and "0 rejected" in err
    code, _, err = cli(capsys, "replay", str(recording), "--collection", "tactile/left")
    assert_user_error(code, err, "replay", "tactile/left")


def test_replay_publish_puts_two_collections_back_with_their_sessions(tmp_path, layout):
    """`replay --publish` runs one producer per recorded collection on the shared run loop: a
    live tracker per collection gets each collection's layout, every frame in order (forces
    bit-exact, recorded sample and device times) under the recorded producer session."""
    from wuji_tactile_device.recording import McapRecorder, McapReplay
    from wuji_tactile_device.streams.inproc import InProcessBus
    from wuji_tactile_device.streams.tracker import TactileTracker
    from wuji_tactile_device.streams.zenoh_transport import ZenohTransport

    path = tmp_path / "two.mcap"
    frames = press_profile(layout, frames=30)
    bus = InProcessBus()
    with McapRecorder(path) as rec:
        for cid in ("tactile/right", "tactile/left"):
            record_synthetic(path, layout, frames * (1 if cid == CID else -1), collection_id=cid, bus=bus, recorder=rec)
    with McapReplay(path) as replay:
        recorded = {(cid, ev.producer_session) for cid, ev in replay.events() if hasattr(ev, "producer_session")}
    port = free_port()
    with ZenohTransport(listen=[f"tcp/127.0.0.1:{port}"], connect=[]) as transport:
        trackers = {cid: TactileTracker(cid, transport) for cid in ("tactile/right", "tactile/left")}
        got = {cid: [] for cid in trackers}
        for tr in trackers.values():
            tr.add_observer(type("Keep", (), {"on_metadata": lambda *a: None,
                                              "on_data": lambda self, c, m, f: got[c].append(f)})())
        time.sleep(0.5)  # let the Zenoh peers find each other before the first frame
        proc = subprocess.Popen([SCRIPT, "replay", str(path), "--publish", "--speed", "1",
                                 "--zenoh", f"tcp/127.0.0.1:{port}"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            for tr in trackers.values():
                tr.update()
            time.sleep(0.002)
        _, err = proc.communicate(timeout=10)
        for tr in trackers.values():
            tr.update()
    assert proc.returncode == 0, err
    assert "published 62 recorded messages (2 metadata layouts, 60 data frames) of tactile/left, tactile/right" in err
    for cid, tr in trackers.items():
        assert tr.get_metadata() == layout.metadata
        sign = 1 if cid == CID else -1
        assert len(got[cid]) >= 20, cid  # all but what arrived before the late Zenoh discovery
        for f in got[cid]:
            assert f.forces.tobytes() == (frames[f.sequence] * sign).astype(np.float32).tobytes()
            assert f.timestamp.sample_time_local_common_clock == 1_000_000_000 + f.sequence * 10_000_000
        assert {(cid, f.producer_session) for f in got[cid]} <= recorded


def test_record_from_zenoh_writes_a_valid_file(tmp_path, layout, capsys):
    """The installed script records from Zenoh (own loopback port) while this process publishes."""
    from wuji_tactile_device.streams.publisher import TactilePublisher
    from wuji_tactile_device.streams.zenoh_transport import ZenohTransport

    port = free_port()
    out_path = tmp_path / "live.mcap"
    transport = ZenohTransport(listen=[f"tcp/127.0.0.1:{port}"], connect=[])
    try:
        recorder = subprocess.Popen([SCRIPT, "record", str(out_path), "-c", CID, "--duration", "4",
                                     "--zenoh", f"tcp/127.0.0.1:{port}", "--zenoh-listen", "tcp/127.0.0.1:0"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        frames = press_profile(layout, frames=40)
        with TactilePublisher(CID, layout.metadata, transport, metadata_period_s=0.2) as publisher:
            k = 0
            while recorder.poll() is None:
                publisher.publish(frames[k % len(frames)], sample_time_ns=time.monotonic_ns())
                k += 1
                time.sleep(0.01)
        _, err = recorder.communicate(timeout=30)
    finally:
        transport.close()
    assert recorder.returncode == 0, err
    assert "Traceback" not in err
    written = int(err.split("wrote ")[1].split(": ")[1].split(" data")[0])
    assert 0 < written <= k
    code, out, _ = cli(capsys, "validate", str(out_path))
    assert code == 0, out

    bad = subprocess.run([SCRIPT, "record", str(tmp_path / "x.mcap"), "-c", "tactile//right", "--duration", "0.1"],
                         capture_output=True, text=True, timeout=60)
    assert_user_error(bad.returncode, bad.stderr, "record", "tactile//right")


# --- sim / hw / echo ----------------------------------------------------------------------------

def test_sim_press_records_and_prints_passing_checks(sim_run, capsys):
    path, result = sim_run
    assert result.returncode == 0, result.stderr
    checks = [line for line in result.stdout.splitlines() if line.strip().startswith("[")]
    assert len(checks) >= 3 and all("[PASS]" in c for c in checks), result.stdout
    assert "Traceback" not in result.stderr
    code, out, _ = cli(capsys, "validate", str(path))
    assert code == 0, out
    code, _, err = cli(capsys, "sim", "--scenario", "press", "--record", str(path), "--quiet")
    assert_user_error(code, err, "sim", "already exists")
    code, _, err = cli(capsys, "sim", "--scenario", "playback", "--quiet")
    assert_user_error(code, err, "sim", "--joints")


def test_hw_emulated_hand_records_the_same_layout_as_the_sim(hw_emulate_run, sim_run, capsys):
    from wuji_tactile_device.plot import load_recording

    out_path, result = hw_emulate_run  # `wuji-tactile hw --emulate --fast --record hw.mcap`, once a session
    assert result.returncode == 0, result.stderr
    assert "published 1300 frames" in result.stderr and "Traceback" not in result.stderr
    hw, sim = load_recording(out_path), load_recording(sim_run[0])
    assert hw.forces.shape == sim.forces.shape == (1300, 176, 3)
    assert hw.metadata.num_segments == sim.metadata.num_segments == 5
    code, _, err = cli(capsys, "hw", "--emulate", "--fast", "--fault", "bogus:index@1")
    assert_user_error(code, err, "hw", "unknown kind 'bogus'")


def test_echo_shows_a_recording(sim_run, capsys):
    path, _ = sim_run
    result = run_script("echo", "--file", str(path), "--count", "5", "--plain", timeout=60)
    assert result.returncode == 0, result.stderr
    assert "tactile/right: 176 taxels on 5 segments" in result.stdout and "delivered" in result.stdout
    code, _, err = cli(capsys, "echo", "--file", str(path.parent / "nope.mcap"), "--count", "1", "--plain")
    assert_user_error(code, err, "echo", "nope.mcap")


# --- plot / bench -------------------------------------------------------------------------------

def test_plot_draws_the_layout_at_the_recorded_hand_pose(sim_run):
    """The layout figure of a simulation recording uses its recorded hand poses: at the press hold
    the pads face each other (thumb and index pad centroids much closer than in the open bind
    pose), and the taxels skinned with those poses sit where the simulator put them — the pads'
    resultant forces point from one pad toward the other, so the loaded taxels of opposing pads
    are within a few centimetres."""
    from wuji_tactile_device.contract.geometry import skin_taxel_positions
    from wuji_tactile_device.contract.pads import pad_layout
    from wuji_tactile_device.plot import frame_index_at, load_recording, segment_poses_at

    path, run = sim_run
    assert run.returncode == 0, run.stderr
    rec = load_recording(path)
    k = frame_index_at(rec, 9.0)
    poses = segment_poses_at(path, rec, k)
    assert poses is not None and poses.shape == (rec.metadata.num_segments, 7)
    pads = pad_layout(rec.metadata).pad_of_taxel
    bind = rec.metadata.taxel_bind_poses[:, :3].astype(np.float64)
    now = skin_taxel_positions(rec.metadata, poses)

    def thumb_index_gap(p):
        return float(np.linalg.norm(p[pads == 0].mean(axis=0) - p[pads == 1].mean(axis=0)))

    assert thumb_index_gap(now) < 0.6 * thumb_index_gap(bind), (thumb_index_gap(now), thumb_index_gap(bind))
    assert np.abs(now - bind).max() > 0.02  # the fingers are flexed, not at the bind pose
    assert segment_poses_at(path, rec._replace(collection_id="tactile/nothand"), k) is None


def test_plot_writes_three_png_and_prints_their_paths(capsys, sim_run, tmp_path):
    path, _ = sim_run
    code, out, err = cli(capsys, "plot", str(path), "--out", str(tmp_path), "--time", "9.5")
    assert code == 0, err
    paths = [Path(line) for line in out.splitlines()]
    assert [p.name for p in paths] == ["press_resultants.png", "press_taxel_maps.png", "press_layout.png"]
    assert all(p.parent == tmp_path and p.stat().st_size > 10_000 for p in paths)
    code, _, err = cli(capsys, "plot", str(path), "--out", str(tmp_path), "--time", "99", "--overwrite")
    assert_user_error(code, err, "plot", "time 99.0 s is outside the recording")
    code, _, err = cli(capsys, "plot", str(path), "--time", "-1")
    assert code == 2 and "--time: '-1': must be a finite number of seconds >= 0" in err
    code, _, err = cli(capsys, "plot", str(path), "--range", "0")
    assert code == 2 and "--range: '0': must be a finite number of newtons > 0, or 'recording'" in err


def test_bench_prints_markdown_and_exit_code_follows_the_targets(capsys, monkeypatch):
    code, out, err = cli(capsys, "bench", "--quick", "contract")
    assert "| measurement | value | unit | note |" in out and "| target | measured | limit | result |" in out
    assert (code == 0) == out.rstrip().endswith("all targets met")

    from wuji_tactile_device import benchmarks

    def failing(names, *, quick):
        return [benchmarks.Section("fake", [benchmarks.Row("x", 1.0, "us")],
                                   [benchmarks.Target("x / floor", 3.0, "<=", 2.0)])]
    monkeypatch.setattr(benchmarks, "run_sections", failing)
    code, out, _ = cli(capsys, "bench", "contract")
    assert code == 1 and "| x / floor | 3 | <= 2 | FAIL |" in out and "1 target(s) failed" in out

    code, _, err = cli(capsys, "bench", "nosuch")
    assert code == 2 and "unknown section 'nosuch'" in err and "Traceback" not in err


def test_output_closed_early_exits_quietly(sim_run):
    """`wuji-tactile replay x.mcap | head -1`: a closed pipe ends the program without a traceback.
    1300 lines outgrow the pipe's buffer, so the program is still writing when the reader leaves."""
    proc = subprocess.Popen([SCRIPT, "replay", str(sim_run[0])],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()  # the reader goes away, as `head -1` does
    code = proc.wait(timeout=60)
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert first.strip()  # it was printing frames
    assert code == 141, err
    assert "Traceback" not in err and "BrokenPipeError" not in err
