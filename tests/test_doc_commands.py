"""Docs as tests: every shell command of README.md, docs/*.md and examples/**/*.md runs as written.

Each page's commands run IN ORDER in a fresh temporary directory (so pages never depend on each
other's files), with `wuji-tactile`, `python` and `python3` resolving to this interpreter and this
checkout, and the repository's `examples/` and `tools/` visible at their relative paths. A command
the page marks (see tests/doc_commands.py) is skipped for the reason the page states; every other
command must exit 0 (or the exit code and text its comment states). Where a page shows a number a
command prints, the number is compared with the run at the page's precision."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import free_zenoh_port
from doc_commands import REPO, DocCommand, doc_pages, page_commands, run_producer_cached

# examples/tactile/README.md has a two-terminal pair run side by side and its outputs checked by
# tests/test_examples.py; running it here too would only run the same simulation twice.
RUN_ELSEWHERE = {"examples/tactile/README.md": "tests/test_examples.py"}
TIMEOUT_S = 300.0  # per command; a hang is a failure, not a stuck CI
# A producer command shown again (same arguments, none of its files present) runs once per session:
# doc_commands.run_producer_cached.


def _pages() -> list[str]:
    """The pages with at least one command to run here."""
    return [p.relative_to(REPO).as_posix() for p in doc_pages()
            if any(not c.skip for c in page_commands(p)) and p.relative_to(REPO).as_posix() not in RUN_ELSEWHERE]


def _shims(directory: Path) -> Path:
    bin_dir = directory / "bin"
    bin_dir.mkdir()
    for name, target in (("wuji-tactile", f'"{sys.executable}" -m wuji_tactile_device.cli'),
                         ("python", f'"{sys.executable}"'), ("python3", f'"{sys.executable}"')):
        script = bin_dir / name
        script.write_text(f'#!/bin/sh\nexec {target} "$@"\n')
        script.chmod(0o755)
    return bin_dir


def _run(command: DocCommand, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    process = subprocess.Popen(["bash", "-c", command.command], cwd=cwd, env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = process.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail(f"{command.where()}\n  still running after {TIMEOUT_S:.0f} s (a long-running command "
                    "must be marked in the page with its reason)")
    return subprocess.CompletedProcess(command.command, process.returncode, out, err)


def _run_cached(command: DocCommand, work: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return run_producer_cached(command.command.split(" #")[0].strip(), work, lambda: _run(command, work, env))


def run_page(page: str, tmp_path: Path) -> dict[int, subprocess.CompletedProcess]:
    """Run one page's unmarked commands in order in `tmp_path/work`; {line: result}."""
    work = tmp_path / "work"
    work.mkdir()
    for shared in ("examples", "tools"):
        (work / shared).symlink_to(REPO / shared)
    env = dict(os.environ, WUJI_TELEMETRY_DISABLE="1", PYTHONUNBUFFERED="1", MPLBACKEND="Agg",
               WUJI_TACTILE_ZENOH_PORT=free_zenoh_port())
    env["PATH"] = os.pathsep.join([str(_shims(tmp_path)), str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    results = {}
    for command in page_commands(REPO / page):
        if command.skip:
            continue
        result = _run_cached(command, work, env)
        printed = result.stdout + result.stderr
        assert result.returncode == command.exit_code, (
            f"{command.where()}\n  exited {result.returncode}, the page expects {command.exit_code}:\n"
            + "\n".join(printed.strip().splitlines()[-15:]))
        if command.expect_text is not None:
            assert command.expect_text in printed, (
                f"{command.where()}\n  the page says it prints {command.expect_text!r}; it printed:\n{printed[-2000:]}")
        assert "Traceback (most recent call last)" not in result.stderr, f"{command.where()}\n{result.stderr[-3000:]}"
        results[command.line] = result
    return results


def test_every_page_is_covered_and_every_skip_states_its_reason(capsys):
    pages = [p.relative_to(REPO).as_posix() for p in doc_pages()]
    assert "README.md" in pages and "docs/sim.md" in pages and "examples/tactile/README.md" in pages
    skipped = [c for p in doc_pages() for c in page_commands(p) if c.skip]
    assert skipped, "no marked command: the marker syntax is not being read"
    for command in skipped:
        assert len(command.skip.strip()) >= 8, f"{command.where()}\n  a skip needs a reason a reader understands"
    with capsys.disabled():
        print(f"\n{len(skipped)} doc commands marked as not run here:")
        for command in skipped:
            print(f"  {command.page}:{command.line}: {command.skip}")


_NUMBER = r"[−-]?\d+(?:\.\d+)?"


def _decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def _agrees(doc: str, printed: float) -> bool:
    """The printed value, rounded to the doc's shown precision, is the doc's value."""
    shown = float(doc.replace("−", "-"))
    return round(printed, _decimals(doc)) == pytest.approx(shown, abs=10 ** -(_decimals(doc) + 3))


def _output_of(results: dict[int, subprocess.CompletedProcess], page: str, fragment: str) -> str:
    for command in page_commands(REPO / page):
        if fragment in command.command and command.line in results:
            return results[command.line].stdout + results[command.line].stderr
    raise AssertionError(f"{page}: no command containing {fragment!r} ran")


def _doc_text_block_after(page: str, fragment: str) -> list[str]:
    """The lines of the first ```text block after the first line that contains `fragment`."""
    text = (REPO / page).read_text(encoding="utf-8")
    rest = text[text.index(fragment):]
    return rest.split("```text\n", 1)[1].split("```", 1)[0].splitlines()


def _check_value(page: str, what: str, doc: str, printed: float) -> str | None:
    return None if _agrees(doc, printed) else f"{page}: {what}: the page says {doc}, the run prints {printed:g}"


def check_readme(results: dict[int, subprocess.CompletedProcess]) -> list[str]:
    """The README's sim check table and the graph's finger-power table against the runs."""
    page = "README.md"
    problems = []
    text = (REPO / page).read_text(encoding="utf-8")
    press = _output_of(results, page, "sim --scenario press --record press.mcap")
    lift = _output_of(results, page, "sim --scenario lift --hand left")

    def printed(output: str, label: str) -> float:
        line = next((ln for ln in output.splitlines() if label in ln), None)
        assert line is not None, f"{page}: the run printed no check {label!r}:\n{output}"
        value = re.search(rf": ({_NUMBER}(?:e[−-]?\d+)?) ", line.split(label, 1)[1])
        assert value is not None, f"{page}: no value in the check line {line!r}"
        return float(value.group(1))

    def row(start: str) -> str:
        line = next((ln for ln in text.splitlines() if ln.startswith(start)), None)
        assert line is not None, f"{page}: no table row starting {start!r}"
        return re.split(r"(?<!\\)\|", line)[3].strip()  # a cell may contain an escaped \|

    rows = [  # (README row start, run output, printed check label, scale of the printed value to the doc's unit)
        ("| press | max pad force during approach", press, "max pad ‖F‖ during approach", 1.0),
        ("| press | max \\|‖F‖ − 0.5 N\\| during the hold", press, "max |‖F‖ - target| during the hold", 1.0),
        ("| press | max pad force during release", press, "max pad ‖F‖ during release", 1.0),
        ("| lift | block raised", lift, "block lifted", 1.0),
        ("| lift | pads' world-vertical force", lift, "max |pad world-vertical support", 100.0),
        ("| lift | pedestal support", lift, "max pedestal support while airborne", 1.0),
    ]
    for start, output, label, scale in rows:
        cell = row(start)
        doc = re.search(_NUMBER, cell.replace("within ", "")).group(0)
        problem = _check_value(page, f"{start.strip('| ')} ({cell})", doc, printed(output, label) * scale)
        if problem:
            problems.append(problem)

    graph = _output_of(results, page, "retargeting_graph.py press.mcap --every 100")
    run_rows = {ln.split()[0]: ln.split()[1:] for ln in graph.splitlines() if re.match(r"^\s+\d+\.\d\d(\s+\d\.\d{3}){5}$", ln)}
    doc_rows = [ln.split() for ln in _doc_text_block_after(page, "The graph prints the haptic finger powers")
                if re.match(r"^\s+\d+\.\d\d(\s+\d\.\d{3}){5}$", ln)]
    assert len(doc_rows) >= 5, f"{page}: the finger-power table lost its rows"
    for t, *powers in doc_rows:
        assert t in run_rows, f"{page}: the graph printed no row at t = {t} s"
        for finger, doc, run in zip(("thumb", "index", "middle", "ring", "pinky"), powers, run_rows[t], strict=True):
            problem = _check_value(page, f"finger power {finger} at t = {t} s", doc, float(run))
            if problem:
                problems.append(problem)
    return problems


def check_lerobot(results: dict[int, subprocess.CompletedProcess]) -> list[str]:
    """The episode and frame counts the LeRobot page's export comment states."""
    page = "docs/lerobot.md"
    command = next(c for c in page_commands(REPO / page) if "export press.mcap grasp.mcap --format lerobot" in c.command)
    doc = re.search(r"(\d+) episodes, (\d+) frames at (\d+) Hz", command.command)
    assert doc is not None, f"{command.where()}\n  the comment no longer states episodes, frames and rate"
    printed = _output_of(results, page, command.command.split(" #")[0].strip())
    run = re.search(r"(\d+) episode\(s\), (\d+) frames at (\d+) Hz", printed)
    assert run is not None, f"{command.where()}\n  printed no 'N episode(s), M frames at R Hz':\n{printed}"
    if doc.groups() != run.groups():
        return [f"{page}:{command.line}: the page says {doc.group(0)!r}, the run prints {run.group(0)!r}"]
    return []


OUTPUT_CHECKS = {"README.md": check_readme, "docs/lerobot.md": check_lerobot}


@pytest.mark.parametrize("page", _pages())
def test_page_commands_run_as_written(page, tmp_path):
    results = run_page(page, tmp_path)
    check = OUTPUT_CHECKS.get(page)
    if check is not None:
        problems = check(results)
        assert not problems, "the page shows numbers the run does not print:\n" + "\n".join(problems)


def test_a_shown_number_agrees_only_at_its_own_precision():
    # the drift this test was written for: the README showed 0.0026 N where the run printed 0.000963 N
    assert not _agrees("0.0026", 0.000962904) and _agrees("0.0010", 0.000962904)
    assert _agrees("−2.606", -2.6061) and not _agrees("-2.166", -2.606)
    assert _agrees("77.0", 77.0415) and not _agrees("77.0", 77.06)
    assert _agrees("0", 0.0) and not _agrees("0", 0.6)


def test_the_extractor_reads_markers_continuations_and_comments(tmp_path, monkeypatch):
    import doc_commands
    monkeypatch.setattr(doc_commands, "REPO", tmp_path)
    page = tmp_path / "page.md"
    page.write_text("\n".join([
        "text", "<!-- doc-test: skip (needs a real Wuji hand) -->", "```bash", "wuji-tactile hw --hand right", "```",
        "```bash", "# a comment line", "wuji-tactile sim --scenario press \\", "    --record a.mcap   # what it does",
        "wuji-tactile echo --timeout 1   # exit 1 \"no producer\" after 1 s",
        "wuji-tactile hw --sn S   # by serial; needs: a real Wuji hand", "```",
        "```python", "print('not shell')", "```", ""]))
    got = [(c.line, c.command.split(" #")[0].strip(), c.skip, c.exit_code, c.expect_text)
           for c in doc_commands.page_commands(page)]
    assert got == [
        (4, "wuji-tactile hw --hand right", "needs a real Wuji hand", 0, None),
        (8, "wuji-tactile sim --scenario press --record a.mcap", None, 0, None),
        (10, "wuji-tactile echo --timeout 1", None, 1, "no producer"),
        (11, "wuji-tactile hw --sn S", "a real Wuji hand", 0, None),
    ]
