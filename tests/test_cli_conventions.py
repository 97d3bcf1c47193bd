"""The conventions every `wuji-tactile` command shares (cli/output.py, docs/cli.md): --version,
global --quiet/--progress, one-line warnings, exit statuses (0 / 1 / 2 / 130 / 143), messages in
CLI flags, missing extras named with their pip install, `echo` saying that nothing publishes,
`inspect`/`validate --json`, and `export` / `load_recording` on real recordings."""
from __future__ import annotations

import csv
import importlib.metadata
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from mcap_helpers import official_messages, record
from retargeting_helpers import CurvedPadLayout, press_profile, record_synthetic
from cli_helpers import cli
from streams_helpers import free_port
from wuji_tactile_device import __version__
from wuji_tactile_device.cli import output
from wuji_tactile_device.errors import RecordingError, RecordingWarning

CID = "tactile/right"
REPO = Path(__file__).resolve().parent.parent
SCRIPT = str(Path(sys.executable).parent / "wuji-tactile")
ENV = dict(os.environ, WUJI_TELEMETRY_DISABLE="1", PYTHONPATH=str(REPO))




def one_error_line(err: str, command: str) -> str:
    """The single `wuji-tactile <command>: error: ...` line of `err` (and no traceback)."""
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith(f"wuji-tactile {command}: error: ")]
    assert len(lines) == 1, err
    return lines[0]




@pytest.fixture(scope="module")
def layout():
    return CurvedPadLayout(per_pad=6)


@pytest.fixture(scope="module")
def recording(tmp_path_factory, layout) -> Path:
    path = tmp_path_factory.mktemp("conv") / "press.mcap"
    record_synthetic(path, layout, press_profile(layout, frames=60))
    return path


@pytest.fixture(scope="module")
def long_recording(tmp_path_factory, layout) -> Path:
    """20 s at 100 Hz: long enough that a command replaying it in real time is still running."""
    path = tmp_path_factory.mktemp("conv") / "long.mcap"
    record_synthetic(path, layout, np.tile(press_profile(layout, frames=100), (20, 1, 1)), paced_log=True)
    return path


@pytest.fixture(scope="module")
def truncated(tmp_path_factory) -> Path:
    """A recording cut in its last chunk: the replay warns, and part of the data is lost."""
    src = tmp_path_factory.mktemp("conv") / "many.mcap"
    record(src, 300, flush_every=100)
    data = src.read_bytes()
    path = src.with_name("cut.mcap")
    path.write_bytes(data[: int(len(data) * 0.8)])
    return path


# --- version, global options -------------------------------------------------------------------

def test_version_prints_the_installed_package_version(capsys):
    code, out, err = cli(capsys, "--version")
    assert code == 0 and err == ""
    assert out.strip() == f"wuji-tactile {__version__}"
    assert __version__ == importlib.metadata.version("wuji-tactile-device")


def test_quiet_is_accepted_before_and_after_every_subcommand(capsys, recording):
    code, out, _ = cli(capsys, "--quiet", "inspect", str(recording))
    assert code == 0 and CID in out
    code, out, _ = cli(capsys, "inspect", str(recording), "-q")
    assert code == 0 and CID in out
    for command in ("sim", "record", "echo", "plot", "export", "view", "bench"):
        code, out, _ = cli(capsys, command, "--help")
        assert code == 0 and "--quiet" in out and "-q" in out and "--progress" in out, command
    code, _, err = cli(capsys, "--quiet", "--progress", "inspect", str(recording))
    assert code == 2 and "--quiet and --progress contradict each other" in err


# --- warnings: one clean line --------------------------------------------------------------------

def test_a_truncated_file_warns_once_in_one_line_without_python_source(truncated):
    """`replay` opens the file twice (a probe for the time origin, then the replay): the
    RecordingWarning used to print twice, each with its source line."""
    result = subprocess.run([SCRIPT, "replay", str(truncated), "--every", "1000"], capture_output=True, text=True,
                            timeout=60, env=ENV)
    assert result.returncode == 0, result.stderr
    warning_lines = [line for line in result.stderr.splitlines() if "warning" in line.lower()]
    assert len(warning_lines) == 1, result.stderr
    assert warning_lines[0].startswith(f"wuji-tactile replay: warning: {truncated} is damaged")
    assert "RecordingWarning" not in result.stderr and "warnings.warn" not in result.stderr


def test_package_log_warnings_print_as_one_prefixed_line(capsys, recording, monkeypatch):
    import logging

    from wuji_tactile_device.recording import inspect as inspect_module

    real = inspect_module.inspect_file

    def logging_inspect(path):
        logging.getLogger("wuji_tactile_device.recording").warning("disk nearly full:\nonly 3 MB left")
        return real(path)

    monkeypatch.setattr(inspect_module, "inspect_file", logging_inspect)
    code, _, err = cli(capsys, "inspect", str(recording))
    assert code == 0
    assert err == "wuji-tactile inspect: warning: disk nearly full: only 3 MB left\n"


# --- exit statuses ---------------------------------------------------------------------------------

def test_the_exit_status_table_in_the_docs_is_the_one_the_code_uses():
    for text in ((REPO / "README.md").read_text(encoding="utf-8"), (REPO / "docs" / "cli.md").read_text(encoding="utf-8")):
        section = text.split("| exit status |")[1].split("\n\n")[0]
        rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in section.splitlines()[2:]]
        table = {int(r[0]): r[1] for r in rows}
        assert set(table) == {output.EXIT_OK, output.EXIT_ERROR, output.EXIT_USAGE, output.EXIT_SIGINT,
                              output.EXIT_SIGTERM, output.EXIT_BROKEN_PIPE}
    assert (output.EXIT_SIGINT, output.EXIT_SIGTERM, output.EXIT_BROKEN_PIPE) == (130, 143, 141)


@pytest.mark.parametrize("command", ["inspect", "validate", "recover"])
@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_during_a_file_command_exits_128_plus_it(capsys, monkeypatch, recording, tmp_path, command,
                                                          signum, status):
    """A real signal delivered to this process while the command works on the file."""
    from wuji_tactile_device.recording import inspect as inspect_module
    from wuji_tactile_device.recording import repair

    def signalled(*args, **kwargs):
        os.kill(os.getpid(), signum)
        # the handler runs here: at once when the signal interrupts this (main) thread's sleep, or —
        # when the kernel gave it to another thread — at the main thread's next check of pending
        # signals, which a loop makes on every turn (one long sleep would only end after it)
        end = time.monotonic() + 30
        while time.monotonic() < end:
            time.sleep(0.01)
        raise AssertionError("the signal did not stop the command")

    monkeypatch.setattr(inspect_module, "inspect_file", signalled)
    monkeypatch.setattr(repair, "recover", signalled)
    # A process started with SIGINT ignored (`cmd &` in a script, nohup) keeps ignoring it, as
    # every Unix tool does; this test is about an interactive Ctrl-C, so it restores Python's own.
    previous_sigint = signal.signal(signal.SIGINT, signal.default_int_handler)
    argv = [command, str(recording)] + ([str(tmp_path / "out.mcap")] if command == "recover" else [])
    before = signal.getsignal(signal.SIGTERM)
    try:
        code, out, err = cli(capsys, *argv)
    finally:
        signal.signal(signal.SIGINT, previous_sigint)
    assert code == status, err
    assert "Traceback" not in err and out == ""
    assert signal.getsignal(signal.SIGTERM) == before  # main restored the process's handler


def test_usage_errors_exit_2_and_data_errors_exit_1_with_one_line(capsys, recording, tmp_path):
    code, _, err = cli(capsys, "inspect")
    assert code == 2 and err == ("wuji-tactile inspect: error: the following arguments are required: FILE.mcap "
                                 "(see wuji-tactile inspect --help)\n"), err
    code, _, err = cli(capsys, "export", str(recording), "--layout", "long")
    assert code == 2 and "--layout applies to --format csv only" in err
    junk = tmp_path / "junk.mcap"
    junk.write_bytes(b"not an mcap file at all")
    for command in ("inspect", "export", "replay", "plot"):
        code, _, err = cli(capsys, command, str(junk))
        assert code == 1, (command, err)
        assert str(junk) in one_error_line(err, command)


def test_an_unwritable_output_is_one_line_not_a_traceback(capsys, recording, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = cli(capsys, "export", str(recording), "--out", str(blocker / "sub"))
    assert code == 1
    assert str(blocker) in one_error_line(err, "export")


# --- record: Ctrl-C 130, SIGTERM 143, --duration 0; the file is finished either way ---------------

def _start_record(out: Path, port: int, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([SCRIPT, "record", str(out), "-c", CID, "--zenoh", f"tcp/127.0.0.1:{port}",
                             "--zenoh-listen", "tcp/127.0.0.1:0", *extra], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV)


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_record_stopped_by_a_signal_exits_128_plus_it_with_a_valid_file(tmp_path, layout, capsys, signum, status):
    from wuji_tactile_device.streams.publisher import TactilePublisher
    from wuji_tactile_device.streams.zenoh_transport import ZenohTransport

    port = free_port()
    out = tmp_path / "live.mcap"
    transport = ZenohTransport(listen=[f"tcp/127.0.0.1:{port}"], connect=[])
    try:
        proc = _start_record(out, port)
        frames = press_profile(layout, frames=40)
        with TactilePublisher(CID, layout.metadata, transport, metadata_period_s=0.2) as publisher:
            end = time.monotonic() + 3.0
            k = 0
            while time.monotonic() < end:
                publisher.publish(frames[k % len(frames)], sample_time_ns=time.monotonic_ns())
                k += 1
                time.sleep(0.01)
            proc.send_signal(signum)
            _, err = proc.communicate(timeout=30)
    finally:
        transport.close()
    assert proc.returncode == status, err
    assert "Traceback" not in err and "wuji-tactile record: wrote" in err
    code, verdict, _ = cli(capsys, "validate", str(out))
    assert code == 0, verdict


@pytest.mark.parametrize("command", ["record", "sim", "recover", "view"])
def test_an_existing_output_file_is_refused_in_cli_flags(tmp_path, capsys, recording, command):
    """The library says "pass overwrite=True / --overwrite"; every command says "use --overwrite"."""
    if command == "view":
        pytest.importorskip("foxglove", reason="the live view needs the 'view' extra (foxglove-sdk)")
    out = tmp_path / "exists.mcap"
    out.write_bytes(b"")
    zenoh = ["--zenoh-listen", "tcp/127.0.0.1:0", "--zenoh", f"tcp/127.0.0.1:{free_port()}"]
    argv = {"record": ["record", str(out), "-c", CID, "--duration", "0.1", *zenoh],
            "sim": ["sim", "--scenario", "press", "--duration", "0.1", "--record", str(out)],
            "recover": ["recover", str(recording), str(out)],
            "view": ["view", str(recording), "--port", "0", "--duration", "0.1", "--save", str(out)]}[command]
    code, _, err = cli(capsys, *argv)
    line = one_error_line(err, command)
    assert code == 1 and line.endswith("already exists (use --overwrite to replace it)"), line
    assert "=True" not in line and out.read_bytes() == b""


def test_library_hints_in_python_keywords_become_flags():
    assert output.cli_words("x.mcap already exists (pass overwrite=True / --overwrite to replace it)") == \
        "x.mcap already exists (use --overwrite to replace it)"
    assert output.cli_words("speed must be > 0, got 0") == "speed must be > 0, got 0"


# --- recover: 0 when nothing was lost ---------------------------------------------------------------

def test_recover_exits_0_when_the_file_lacks_only_its_index(capsys, tmp_path):
    from wuji_tactile_device.recording.scan import FileView, scan

    src = tmp_path / "whole.mcap"
    sent, _, _ = record(src, 50)
    view = FileView(src)
    last_chunk_end = scan(view).chunks[-1].end
    view.close()
    cut = tmp_path / "no_index.mcap"
    cut.write_bytes(src.read_bytes()[:last_chunk_end])  # killed right after a flush: every chunk intact
    code, out, err = cli(capsys, "recover", str(cut), str(tmp_path / "fixed.mcap"))
    assert code == 0, out + err
    assert "nothing lost" in out and "lost: 0 bytes" not in out
    assert sum(t == CID for t, *_ in official_messages(tmp_path / "fixed.mcap")) == len(sent[CID])


def test_recover_exits_1_when_data_was_lost(capsys, truncated, tmp_path):
    code, out, _ = cli(capsys, "recover", str(truncated), str(tmp_path / "fixed.mcap"))
    assert code == 1 and "lost: " in out and "nothing lost" not in out


# --- echo -------------------------------------------------------------------------------------------

def test_echo_with_nothing_publishing_says_so_and_exits_1_after_its_timeout():
    start = time.monotonic()
    result = subprocess.run([SCRIPT, "echo", "--plain", "--timeout", "1", "--zenoh", f"tcp/127.0.0.1:{free_port()}",
                             "--zenoh-listen", "tcp/127.0.0.1:0"], capture_output=True, text=True, timeout=60, env=ENV)
    assert result.returncode == 1, result.stderr
    line = one_error_line(result.stderr, "echo")
    assert re.fullmatch(r"wuji-tactile echo: error: no producer on tactile/right after 1\.\d s \(nothing received\)",
                        line), line
    assert time.monotonic() - start < 30


def test_echo_count_not_reached_in_a_file_exits_1_and_reached_exits_0(capsys, recording):
    code, out, err = cli(capsys, "echo", "--file", str(recording), "--plain", "--count", "1000", "--rate", "50")
    assert code == 1
    assert one_error_line(err, "echo").endswith("tactile/right: the file ended after 60 of 1000 frames")
    code, out, err = cli(capsys, "echo", "--file", str(recording), "--plain", "--count", "5", "--rate", "50")
    assert code == 0, err
    assert "tactile/right:" in out


def test_echo_stopped_by_ctrl_c_exits_130(long_recording):
    proc = subprocess.Popen([SCRIPT, "echo", "--plain", "--file", str(long_recording)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV)
    assert proc.stdout.readline().startswith("tactile/right")  # running
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err


def test_view_stopped_by_ctrl_c_exits_130_and_ends_by_duration_with_0(recording, long_recording):
    pytest.importorskip("foxglove", reason="the live view needs the 'view' extra (foxglove-sdk)")
    proc = subprocess.Popen([SCRIPT, "view", str(long_recording), "--port", "0"], stderr=subprocess.PIPE, text=True, env=ENV)
    assert "serving tactile/right" in proc.stderr.readline()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    result = subprocess.run([SCRIPT, "view", str(recording), "--port", "0", "--duration", "0.5"], capture_output=True,
                            text=True, timeout=60, env=ENV)
    assert result.returncode == 0, result.stderr


# --- progress bars and --quiet --------------------------------------------------------------------

def test_no_progress_bar_when_stderr_is_not_a_terminal_unless_asked(capsys, recording, tmp_path):
    code, out, err = cli(capsys, "export", str(recording), "--out", str(tmp_path / "a"))
    assert code == 0 and err == ""  # capsys' stderr is not a terminal
    code, out, err = cli(capsys, "export", str(recording), "--out", str(tmp_path / "b"), "--progress")
    assert code == 0 and "60/60" not in err and "60 frames" in err  # a bar, shown because asked for


def test_sim_shows_no_bar_in_a_log_unless_asked():
    """Before, tqdm wrote its carriage-return updates into any non-terminal stderr (CI logs)."""
    plain = subprocess.run([SCRIPT, "sim", "--scenario", "press", "--duration", "0.3"], capture_output=True,
                           text=True, timeout=120, env=ENV)
    assert plain.returncode in (0, 1) and "Traceback" not in plain.stderr  # 1: a partial run fails its checks
    assert "\r" not in plain.stderr and "frames/s" not in plain.stderr
    asked = subprocess.run([SCRIPT, "--progress", "sim", "--scenario", "press", "--duration", "0.3"],
                           capture_output=True, text=True, timeout=120, env=ENV)
    assert "sim press" in asked.stderr and "30/" in asked.stderr, asked.stderr


def test_quiet_drops_notices_but_not_results(capsys, recording):
    code, out, err = cli(capsys, "echo", "--file", str(recording), "--plain", "--count", "1000", "--rate", "50", "-q")
    assert code == 1 and one_error_line(err, "echo")  # errors still print
    code, out, err = cli(capsys, "validate", str(recording), "--quiet")
    assert code == 0 and f"{recording}: valid" in out


# --- a missing extra: one line naming the pip install -----------------------------------------------

def _without(module: str, *argv: str) -> subprocess.CompletedProcess:
    """Run the CLI (or a script) with `module` made unimportable, as when its extra is not installed."""
    code = (f"import sys; sys.modules[{module!r}] = None; sys.argv = {list(argv)!r}\n"
            + ("import runpy; runpy.run_path(sys.argv[0], run_name='__main__')" if argv[0].endswith(".py")
               else "from wuji_tactile_device.cli import main; sys.exit(main(sys.argv[1:]))"))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=ENV,
                          cwd=str(REPO))


@pytest.mark.parametrize("module, extra, argv", [
    ("matplotlib", "plot", ["wuji-tactile", "plot", "RECORDING"]),
    ("foxglove", "view", ["wuji-tactile", "view", "RECORDING"]),
    ("wuji_sdk", "hardware", ["wuji-tactile", "hw", "--hand", "right", "--duration", "1"]),
])
def test_a_missing_extra_is_one_line_naming_the_pip_install(recording, module, extra, argv):
    argv = [str(recording) if a == "RECORDING" else a for a in argv]
    result = _without(module, *argv)
    assert result.returncode == 1, result.stderr
    line = one_error_line(result.stderr, argv[1])
    assert line.endswith(f"pip install 'wuji-tactile-device[{extra}]'") or \
        f"pip install 'wuji-tactile-device[{extra}]'" in line, line


def test_the_retargeting_example_without_isaacteleop_is_one_line(recording):
    result = _without("isaacteleop", str(REPO / "examples" / "tactile" / "retargeting_graph.py"), str(recording))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        "retargeting_graph.py: error: wuji_tactile_device.integrations.isaacteleop needs Isaac Teleop's retargeting "
        "engine (package 'isaacteleop'), which is not installed: pip install 'wuji-tactile-device[isaacteleop]'"]


# --- inspect / validate --json -----------------------------------------------------------------------

def test_inspect_json_reports_what_the_official_reader_sees(capsys, recording):
    code, out, err = cli(capsys, "inspect", str(recording), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["format"] == "wuji-tactile.inspect/1" and report["ok"] is True and report["complete"] is True
    official = official_messages(recording)
    topics = {t["topic"]: t for t in report["topics"]}
    assert {t: v["messages"] for t, v in topics.items()} == \
        {topic: sum(m[0] == topic for m in official) for topic in {m[0] for m in official}}
    data = topics[CID]
    logs = [m[1] for m in official if m[0] == CID]
    assert data["log_time_ns"] == [min(logs), max(logs)]
    assert data["schema"] == "core.TactileDataArrayRecord" and len(data["producer_sessions"]) == 1
    assert data["sample_rate_hz"] == pytest.approx(100.0)
    assert report["checked_messages"] == len(official) and report["problems"] == [] and report["truncation"] is None


def test_validate_json_gives_a_verdict_per_file_and_the_exit_status(capsys, recording, truncated, tmp_path):
    missing = tmp_path / "missing.mcap"
    code, out, _ = cli(capsys, "validate", "--json", str(recording), str(truncated), str(missing))
    assert code == 1
    verdict = json.loads(out)
    assert verdict["format"] == "wuji-tactile.validate/1" and verdict["valid"] is False
    good, cut, gone = verdict["files"]
    assert good["valid"] is True and good["error"] is None and good["truncation"] is None
    assert cut["valid"] is False and cut["truncation"]["bytes_lost"] > 0
    assert gone["valid"] is False and "missing.mcap" in gone["error"] and "No such file" in gone["error"]
    code, out, _ = cli(capsys, "validate", "--json", str(recording))
    assert code == 0 and json.loads(out)["valid"] is True


# --- export and load_recording -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def two_hands(tmp_path_factory):
    """Two collections recorded by McapRecorder from live publishers (random forces with −0.0, a
    subnormal and float32 max mixed in), plus Isaac Teleop hand channels: right tracked on even
    frames only, left never tracked."""
    from wuji_tactile_device.contract.records import DeviceDataTimestamp
    from wuji_tactile_device.recording import McapRecorder
    from wuji_tactile_device.recording.hand_channels import HandPoseChannels
    from wuji_tactile_device.streams.inproc import InProcessBus
    from wuji_tactile_device.streams.publisher import TactilePublisher
    from conftest import make_metadata
    from mcap_helpers import forces_for

    path = tmp_path_factory.mktemp("export") / "two.mcap"
    md = make_metadata(24)
    rng = np.random.default_rng(3)
    bus = InProcessBus()
    sent = {"tactile/right": [], "tactile/left": []}
    poses = []
    with McapRecorder(path) as rec:
        hands = HandPoseChannels(rec, "hands")
        for cid in sent:
            rec.add_collection(bus, cid)
        pubs = [TactilePublisher(cid, md, bus) for cid in sent]
        for i in range(40):
            t = 1_000_000_000 + i * 10_000_000
            for pub in pubs:
                f = forces_for(rng, 24)
                pub.publish(f, sample_time_ns=t)
                sent[pub.collection_id].append(f)
            rec.poll()
            p = np.tile(np.array([0.01 * i, 0.02, 0.03, 0, 0, 0, 1], np.float32), (26, 1))
            poses.append(p if i % 2 == 0 else None)
            hands.write({"right": p} if i % 2 == 0 else {}, DeviceDataTimestamp(t, t, i))
        for pub in pubs:
            pub.close()
        rec.poll()
    return path, md, {k: np.stack(v) for k, v in sent.items()}, poses


def test_load_recording_returns_every_frame_layout_and_hand_pose(two_hands):
    from wuji_tactile_device.recording.export import load_recording

    path, md, sent, poses = two_hands
    rec = load_recording(path)
    assert sorted(rec.collections) == ["tactile/left", "tactile/right"]
    for cid, forces in sent.items():
        c = rec[cid]
        assert c.metadata == md
        assert c.forces.dtype == np.float32 and c.forces.tobytes() == forces.tobytes()  # bit-exact
        assert c.sequence.tolist() == list(range(40))
        assert np.array_equal(c.sample_time_ns, 1_000_000_000 + np.arange(40) * 10_000_000)
        assert np.allclose(c.times_s, np.arange(40) * 0.01)
    right, left = rec.hands["right"], rec.hands["left"]
    assert right.topic == "hands/right_hand" and left.topic == "hands/left_hand"
    assert right.tracked.tolist() == [p is not None for p in poses] and not left.tracked.any()
    assert np.array_equal(right.poses[0], poses[0]) and np.isnan(right.poses[1]).all()
    assert right.valid[0].all() and not right.valid[1].any()
    with pytest.raises(KeyError, match="has no collection 'tactile/nope'"):
        rec["tactile/nope"]


def test_load_recording_refuses_more_than_its_memory_budget(two_hands):
    from wuji_tactile_device.recording.export import load_recording

    path = two_hands[0]
    with pytest.raises(RecordingError, match=r"needs more than 0 MiB of arrays .*export it to files"):
        load_recording(path, max_bytes=10_000)
    only = load_recording(path, ["tactile/left"], hands=False)
    assert list(only.collections) == ["tactile/left"] and only.hands == {}


def test_export_npz_holds_the_recorded_arrays(capsys, two_hands, tmp_path):
    path, md, sent, poses = two_hands
    code, out, err = cli(capsys, "export", str(path), "--out", str(tmp_path))
    assert code == 0, err
    written = [Path(p) for p in out.split()]
    assert [p.name for p in written] == ["two_tactile_left.npz", "two_tactile_right.npz", "two_hand_left.npz",
                                         "two_hand_right.npz"]
    for cid in sent:
        z = np.load(tmp_path / f"two_{cid.replace('/', '_')}.npz")
        assert z["forces"].shape == (40, 24, 3) and z["forces"].tobytes() == sent[cid].tobytes()
        assert z["sequence"].tolist() == list(range(40)) and z["producer_session"].dtype == np.uint64
        assert np.array_equal(z["taxel_bind_poses"], md.taxel_bind_poses)
        assert np.array_equal(z["segment_weights"], md.segment_weights)
        assert z["joint_ids"].tolist() == [int(j) for j in md.joint_ids]
    hand = np.load(tmp_path / "two_hand_right.npz")
    assert hand["poses"].shape == (40, 26, 7) and hand["tracked"].tolist() == [p is not None for p in poses]
    assert np.array_equal(hand["poses"][2], poses[2])
    code, _, err = cli(capsys, "export", str(path), "--out", str(tmp_path))
    assert code == 1 and one_error_line(err, "export").endswith("already exists (use --overwrite to replace it)")


def test_export_csv_wide_and_long_round_trip_float32_exactly(capsys, two_hands, tmp_path):
    path, md, sent, _ = two_hands
    code, out, err = cli(capsys, "export", str(path), "--format", "csv", "--out", str(tmp_path / "w"),
                         "-c", "tactile/right", "--no-hands")
    assert code == 0, err
    assert [Path(p).name for p in out.split()] == ["two_tactile_right.csv", "two_tactile_right_taxels.csv",
                                                   "two_tactile_right_segments.csv"]
    with open(tmp_path / "w" / "two_tactile_right.csv", newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    assert header[:7] == ["time_s", "sample_time_ns", "available_time_ns", "device_time_ns", "sequence",
                          "producer_session", "f0_x"] and len(header) == 6 + 24 * 3
    forces = np.array([[np.float32(v) for v in r[6:]] for r in body], np.float32).reshape(40, 24, 3)
    assert forces.tobytes() == sent["tactile/right"].tobytes()  # −0.0, subnormal and max survive text
    assert [int(r[4]) for r in body] == list(range(40))
    with open(tmp_path / "w" / "two_tactile_right_taxels.csv", newline="") as f:
        taxels = list(csv.reader(f))[1:]
    assert np.array_equal(np.array([[np.float32(v) for v in r[1:8]] for r in taxels]), md.taxel_bind_poses)
    assert np.array_equal(np.array([[int(v) for v in r[8:12]] for r in taxels]), md.segment_indices)

    code, out, err = cli(capsys, "export", str(path), "--format", "csv", "--layout", "long",
                         "--out", str(tmp_path / "l"), "-c", "tactile/left", "--no-hands")
    assert code == 0, err
    with open(tmp_path / "l" / "two_tactile_left.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0][-4:] == ["taxel", "fx", "fy", "fz"] and len(rows) == 1 + 40 * 24
    long = np.array([[np.float32(v) for v in r[-3:]] for r in rows[1:]], np.float32).reshape(40, 24, 3)
    assert long.tobytes() == sent["tactile/left"].tobytes()
    assert [int(r[-4]) for r in rows[1:25]] == list(range(24))


def test_export_of_a_truncated_file_warns_and_keeps_what_the_tracker_delivers(capsys, truncated, tmp_path):
    from wuji_tactile_device.recording.export import iter_frames

    with pytest.warns(RecordingWarning, match="is damaged"):
        delivered = sum(1 for _ in iter_frames(truncated))
    code, out, err = cli(capsys, "export", str(truncated), "--out", str(tmp_path))
    assert code == 0
    assert err.count("wuji-tactile export: warning:") == 1 and "is damaged" in err
    z = np.load(out.split()[0])
    assert 0 < z["forces"].shape[0] == delivered < 300


def test_export_streams_in_bounded_memory(tmp_path):
    """The export's peak memory does not grow with the recording: 16,000 frames of 176 taxels
    (34 MB of forces) peak no higher than 4,000 (a chunk is in memory, never the file)."""
    import tracemalloc

    from wuji_tactile_device.recording.export import export_recording

    peaks = {}
    for frames in (4_000, 16_000):
        path = tmp_path / f"rec{frames}.mcap"
        record(path, frames)
        tracemalloc.start()
        try:
            written = export_recording(path, tmp_path / f"out{frames}")
            peaks[frames] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert np.load(written[0])["forces"].shape == (frames, 176, 3)
    assert peaks[16_000] < peaks[4_000] + (1 << 20), peaks
    assert peaks[16_000] < 16_000 * 176 * 3 * 4 / 2, peaks
