"""The shell commands of the project's Markdown pages, as a reader would type them.

Every fenced ```bash / ```sh / ```console / ```shell block of README.md, docs/*.md and
examples/**/*.md is split into commands (one a line; a trailing backslash continues a line;
full-line comments are dropped; a ``$ `` prompt is removed). How the docs test treats a command
is written in the page itself, visibly:

- ``<!-- doc-test: skip (REASON) -->`` on the line just before a block: every command of the block
  is skipped for REASON (set-up commands, a real hand, a second terminal, a live server, ...).
- a trailing comment containing ``needs: REASON`` (``cmd   # what it does; needs: a real Wuji hand``):
  that command is skipped for REASON.
- a trailing comment containing ``exit N "TEXT"``: the command must exit N and print TEXT (on
  stdout or stderr).

Everything else must run, in page order, from a fresh directory, and exit 0.
"""
from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHELL_LANGUAGES = ("bash", "sh", "console", "shell")
_FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
_BLOCK_SKIP = re.compile(r"<!--\s*doc-test:\s*skip\s*\((.+)\)\s*-->")
_NEEDS = re.compile(r"\bneeds:\s*(.+?)\s*$")
_EXIT = re.compile(r'\bexit (\d+) "([^"]+)"')


@dataclass(frozen=True)
class DocCommand:
    page: str         # path relative to the repository
    line: int         # 1-based line of the command's first line in the page
    command: str      # as written (continuations joined), trailing comment included
    skip: str | None  # the page's stated reason not to run it, or None
    exit_code: int = 0
    expect_text: str | None = None

    def where(self) -> str:
        return f"{self.page}:{self.line}: {self.command}"


def doc_pages() -> list[Path]:
    """README.md, docs/*.md and examples/**/*.md, sorted."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "examples").rglob("*.md"))]
    return [p for p in pages if p.exists()]


def _trailing_comment(command: str) -> str:
    """The text after an unquoted ``#`` that starts a comment (preceded by whitespace)."""
    quote = None
    for i, ch in enumerate(command):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or command[i - 1].isspace()):
            return command[i + 1:]
    return ""


def page_commands(page: Path) -> list[DocCommand]:
    """Every shell command of one page, in order."""
    rel = page.relative_to(REPO).as_posix()
    lines = page.read_text(encoding="utf-8").splitlines()
    out: list[DocCommand] = []
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        indent, language = fence.group(1), fence.group(2)
        previous = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        block_skip = _BLOCK_SKIP.search(previous)
        j = i + 1
        body: list[tuple[int, str]] = []
        while j < len(lines) and not re.match(rf"^{indent}```\s*$", lines[j]) and lines[j].strip() != "```":
            body.append((j + 1, lines[j][len(indent):] if lines[j].startswith(indent) else lines[j].lstrip()))
            j += 1
        i = j + 1
        if language not in SHELL_LANGUAGES:
            continue
        pending: tuple[int, str] | None = None
        for number, text in body:
            if pending is None:
                stripped = text.strip()
                if language == "console":
                    if not stripped.startswith("$ "):
                        continue  # printed output in a console block
                    stripped = stripped[2:]
                if not stripped or stripped.startswith("#"):
                    continue
                pending = (number, stripped)
            else:
                pending = (pending[0], pending[1] + " " + text.strip())
            if pending[1].endswith("\\"):
                pending = (pending[0], pending[1][:-1].rstrip())
                continue
            start, command = pending
            pending = None
            comment = _trailing_comment(command)
            needs = _NEEDS.search(comment)
            expected = _EXIT.search(comment)
            skip = block_skip.group(1).strip() if block_skip else (needs.group(1) if needs else None)
            out.append(DocCommand(rel, start, command, skip,
                                  int(expected.group(1)) if expected else 0,
                                  expected.group(2) if expected else None))
    return out


# A producer command (simulation, emulator) reads no file and its output depends only on its
# arguments; several pages show the same one (the press recording most of all), and
# tests/test_examples.py runs the examples page's. It runs once per test session: a page showing
# it again, from a directory holding none of the files it writes, gets the first run's files and
# printed output.
CACHEABLE = ("wuji-tactile sim ", "wuji-tactile hw --emulate ")
_PRODUCER_RUNS: dict[str, tuple[subprocess.CompletedProcess, dict[str, bytes]]] = {}


def _files(work: Path) -> dict[str, tuple[int, int]]:
    return {p.relative_to(work).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in work.rglob("*") if p.is_file() and p.relative_to(work).parts[0] not in ("examples", "tools")}


def run_producer_cached(command: str, work: Path,
                        run: Callable[[], subprocess.CompletedProcess]) -> subprocess.CompletedProcess:
    """`run()` (which runs `command`, as written without its comment, in `work`), or — for a
    producer command already run successfully this session from a directory without its files —
    that run's result, its written files copied into `work`."""
    if not command.startswith(CACHEABLE):
        return run()
    if command in _PRODUCER_RUNS:
        result, files = _PRODUCER_RUNS[command]
        if not any((work / name).exists() for name in files):  # same starting state: same outcome
            for name, data in files.items():
                (work / name).parent.mkdir(parents=True, exist_ok=True)
                (work / name).write_bytes(data)
            return result
    before = _files(work)
    result = run()
    after = _files(work)
    written = {name: (work / name).read_bytes() for name, stat in after.items() if before.get(name) != stat}
    if result.returncode == 0 and not any(name in before for name in written):
        _PRODUCER_RUNS[command] = (result, written)
    return result
