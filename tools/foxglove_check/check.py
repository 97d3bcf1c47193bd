#!/usr/bin/env python3
"""Check that every message of an MCAP file decodes the way Foxglove decodes it.

    python3 tools/foxglove_check/check.py FILE.mcap [--json]

Runs `check.mjs` (beside this file) on Node.js ≥ 18: Foxglove's own MCAP reader and decompressors
read the file, and each FlatBuffers / JSON channel is decoded message by message under the rules
Foxglove applies (see README.md beside this file). Needs only the Python standard library, Node.js
and npm. The first run installs the pinned Node packages (`npm ci`, from package-lock.json) into
node_modules/ beside this file, or — when this folder is not writable — into
$WUJI_FOXGLOVE_CHECK_CACHE (default ~/.cache/wuji-tactile/foxglove_check). To install ahead of
time: `npm ci --prefix tools/foxglove_check`.

Exit status: 0 every message of every checked topic decodes; 1 one does not, or the file cannot
be read; 2 the check cannot run (no Node.js ≥ 18 / npm, the install failed, wrong usage).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MIN_NODE_MAJOR = 18
_FILES = ("package.json", "package-lock.json", "check.mjs")


def _fail(message: str) -> int:
    print(f"foxglove_check: cannot run: {message}", file=sys.stderr)
    return 2


def _node_major(node: str) -> int:
    out = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    return int(out.lstrip("v").split(".")[0])


def _installed(folder: Path) -> bool:
    """True when node_modules holds every package of the lock file at its pinned version."""
    lock = json.loads((HERE / "package-lock.json").read_text(encoding="utf-8"))
    for key, entry in lock.get("packages", {}).items():
        if not key.startswith("node_modules/"):
            continue
        manifest = folder / key / "package.json"
        if not manifest.is_file():
            return False
        if json.loads(manifest.read_text(encoding="utf-8")).get("version") != entry.get("version"):
            return False
    return True


def _work_folder() -> Path:
    """Where node_modules lives: here, or a cache copy of this tool when here is read-only."""
    if os.access(HERE, os.W_OK):
        return HERE
    cache = Path(os.environ.get("WUJI_FOXGLOVE_CHECK_CACHE")
                 or Path.home() / ".cache" / "wuji-tactile" / "foxglove_check")
    cache.mkdir(parents=True, exist_ok=True)
    for name in _FILES:
        if not (cache / name).is_file() or (cache / name).read_bytes() != (HERE / name).read_bytes():
            shutil.copyfile(HERE / name, cache / name)
    return cache


def main(argv: list[str]) -> int:
    args = [a for a in argv if a != "--json"]
    if len(args) != 1 or args[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return _fail("Node.js and npm are needed (Foxglove's decoders are JavaScript); install Node.js ≥ 18")
    major = _node_major(node)
    if major < MIN_NODE_MAJOR:
        return _fail(f"Node.js {major} is too old; Foxglove's decoders need Node.js ≥ {MIN_NODE_MAJOR}")
    folder = _work_folder()
    if not _installed(folder):
        print(f"foxglove_check: installing the pinned Node packages into {folder / 'node_modules'} (npm ci)",
              file=sys.stderr)
        r = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=folder,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            return _fail(f"`npm ci` in {folder} failed:\n{r.stderr.strip()}")
    path = os.path.abspath(args[0])
    return subprocess.run([node, str(folder / "check.mjs"), path, *(["--json"] if "--json" in argv else [])],
                          cwd=folder).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
