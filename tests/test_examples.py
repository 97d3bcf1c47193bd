"""examples/tactile/README.md, run as written: every ```bash block, in order, in a scratch
directory that sees the repository's `examples/` (so files the commands write land there, not in
the repository). A block introduced by "Terminal 1:" runs in the background while the next block
("Terminal 2:") runs; then both must exit 0. The commands' printed outputs are checked for the
facts the README states about them."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import free_zenoh_port
from doc_commands import run_producer_cached

pytest.importorskip("isaacteleop", reason="the README's retargeting graph needs the isaacteleop extra")

REPO = Path(__file__).resolve().parents[1]
README = REPO / "examples" / "tactile" / "README.md"
SETUP_PREFIX = "python3 -m venv"  # the one-time install: CI has already done it


def readme_blocks() -> list[tuple[str, str]]:
    """(the non-empty line before the block, the block's command) for every ```bash block."""
    text = README.read_text()
    blocks = []
    for match in re.finditer(r"```bash\n(.*?)```", text, flags=re.S):
        before = [line for line in text[: match.start()].splitlines() if line.strip()]
        blocks.append((before[-1] if before else "", match.group(1).strip()))
    return blocks


def test_readme_lists_the_four_examples():
    commands = " ".join(cmd for _, cmd in readme_blocks())
    for script in ("synthetic_feeder.py", "tracker_consumer.py", "mcap_replay.py", "retargeting_graph.py"):
        assert f"examples/tactile/{script}" in commands
        assert (REPO / "examples" / "tactile" / script).exists()


def test_readme_commands_run_as_written(tmp_path):
    (tmp_path / "examples").symlink_to(REPO / "examples")
    env = dict(os.environ, WUJI_TELEMETRY_DISABLE="1", PYTHONUNBUFFERED="1", WUJI_TACTILE_ZENOH_PORT=free_zenoh_port())
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # python, wuji-tactile

    def start(command: str) -> subprocess.Popen:
        assert "\n" not in command, f"one command per block: {command!r}"
        return subprocess.Popen(shlex.split(command), cwd=tmp_path, env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    outputs: dict[str, str] = {}
    background = None
    ran = 0
    for intro, command in readme_blocks():
        if command.startswith(SETUP_PREFIX):
            continue  # installing the package: the environment running this test already has it
        if intro.startswith("Terminal 1"):
            background = (command, start(command))
            continue

        def run(command: str = command) -> subprocess.CompletedProcess:
            process = start(command)
            out, err = process.communicate(timeout=300)
            return subprocess.CompletedProcess(command, process.returncode, out, err)

        # the press recording the docs pages show too runs once a session (doc_commands.py)
        result = run_producer_cached(command, tmp_path, run)
        out, err = result.stdout, result.stderr
        assert result.returncode == 0, f"{command!r} failed:\n{err}"
        assert "Traceback" not in err
        outputs[command] = out
        ran += 1
        if background is not None:
            bg_command, bg = background
            bg_out, bg_err = bg.communicate(timeout=60)
            assert bg.returncode == 0, f"{bg_command!r} failed:\n{bg_err}"
            outputs[bg_command] = bg_out + bg_err
            background = None
            ran += 1
    assert ran == 6

    def output_of(fragment: str) -> str:
        return next(out for cmd, out in outputs.items() if fragment in cmd)

    consumer = output_of("tracker_consumer.py")
    assert "metadata adopted: 180 taxels on 5 segments" in consumer
    assert "synthetic" in output_of("synthetic_feeder.py")  # the feeder says it is made up
    assert "[FAIL]" not in output_of("wuji-tactile sim") and "[PASS]" in output_of("wuji-tactile sim")
    replay_lines = [line for line in output_of("mcap_replay.py").splitlines() if line.startswith("seq")]
    assert len(replay_lines) == 1300
    pngs = output_of("wuji-tactile plot").split()
    assert [Path(p).name for p in pngs] == ["press_resultants.png", "press_taxel_maps.png", "press_layout.png"]
    assert all((tmp_path / p).stat().st_size > 10_000 for p in pngs)

    graph = output_of("retargeting_graph.py").splitlines()
    assert graph[-1].startswith("1300 frames; peak power")
    rows = {float(line.split()[0]): [float(v) for v in line.split()[1:]]
            for line in graph if re.match(r"^\s+\d+\.\d\d(\s+\d\.\d{3}){5}$", line)}
    assert len(rows) == 13  # every 100th of 1300 frames
    # The sim holds each pad at 0.5 N within 0.01 N (its own check): power (0.5 - 0.05) / 1 ± 0.01.
    assert all(abs(p - 0.45) <= 0.011 for p in rows[9.0]), rows[9.0]
    assert rows[0.0] == [0.0] * 5 and rows[12.0] == [0.0] * 5  # before contact / after release

    # The numbers the README shows for these runs are what they print, at the README's precision.
    text = README.read_text()
    number = r"[-+]?\d+\.\d+"
    for doc_line in re.findall(r"^seq +\d+ .*$", text.split("mcap_replay.py press.mcap", 1)[1], flags=re.M):
        seq = doc_line.split()[1]
        run_line = next(line for line in replay_lines if line.split()[1] == seq)
        assert re.findall(number, run_line) == re.findall(number, doc_line), (
            f"examples/tactile/README.md shows\n  {doc_line}\nthe run prints\n  {run_line}")
    doc_rows = {line.split()[0]: line.split()[1:] for line in text.split("retargeting_graph.py press.mcap", 1)[1].splitlines()
                if re.match(r"^\s+\d+\.\d\d(\s+\d\.\d{3}){5}$", line)}
    assert len(doc_rows) >= 5
    for t, powers in doc_rows.items():
        assert [f"{p:.3f}" for p in rows[float(t)]] == powers, (
            f"examples/tactile/README.md: finger powers at t = {t} s: the page shows {powers}, the run prints {rows[float(t)]}")
