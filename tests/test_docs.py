"""The documentation stands on its own and states what the code does: every relative link in the
repository's Markdown resolves, and the numbers the reference pages give (kinematics table,
validation tolerances, size limits, device field types and units) are the ones the code uses."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from wuji_tactile_device.contract import records, validation
from wuji_tactile_device.hands.wuji_hand2 import FINGER_STEM, MASSES, hand_kinematics
from wuji_tactile_device.producers.hardware import format as device_format

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"


def _tracked_markdown() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "*.md"], cwd=REPO, capture_output=True, text=True)
    if out.returncode != 0:  # not a git checkout (e.g. an sdist): every Markdown file present
        return sorted(p for p in REPO.rglob("*.md") if "node_modules" not in p.parts and ".venv" not in p.parts)
    return [REPO / line for line in out.stdout.split()]


def test_every_relative_markdown_link_resolves():
    broken = []
    for md in _tracked_markdown():
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", md.read_text(encoding="utf-8")):
            if not re.match(r"^[a-z]+:", target) and not (md.parent / target).exists():
                broken.append(f"{md.relative_to(REPO)} → {target}")
    assert not broken, "broken links:\n" + "\n".join(broken)


def _numbers(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"[−-]?\d+(?:\.\d+)?(?:e[−-]?\d+)?", text.replace("−", "-"))]


def _link_rows() -> dict[str, str]:
    text = (DOCS / "kinematics.md").read_text(encoding="utf-8")
    section = text.split("## Link table (right hand)")[1].split("\n## ")[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0] not in ("body", "---"):
            rows[cells[0].replace("`", "")] = cells
    return rows


def test_kinematics_page_states_the_link_table_the_code_uses():
    rows = _link_rows()
    kin = hand_kinematics("right")
    checked = 0
    for finger in kin.fingers:
        stem = FINGER_STEM[finger.finger]
        for link in finger.links:
            name = link.body[len("r_"):]
            suffix = name[len(stem) + 1:]
            # a finger's own row, else the shared row of its link ("*_middle (index, middle, ring)")
            cells = rows.get(name) or next(v for k, v in rows.items() if k.split(" ")[0] == f"*_{suffix}")
            _, pos, quat, rng = cells
            pos_n = _numbers(pos)
            assert pos_n == pytest.approx(link.pos, abs=1e-12), name
            expected_quat = (1.0, 0.0, 0.0, 0.0) if quat == "identity" else tuple(_numbers(quat))
            assert expected_quat == pytest.approx(link.quat_wxyz, abs=1e-12), name
            assert _numbers(rng)[-2:] == pytest.approx(link.range, abs=1e-12), name
            checked += 1
    assert checked == 20


def test_kinematics_page_states_the_masses_the_code_uses():
    text = (DOCS / "kinematics.md").read_text(encoding="utf-8")
    masses = text.split("**Masses** [kg]:")[1].split("\n\n")[0]
    stated = _numbers(masses)
    assert stated == [MASSES[k] for k in ("wrist", "proximal", "proximal_abd", "middle", "distal", "pad",
                                          "thumb_distal", "thumb_pad")]


def test_contract_page_states_the_validation_tolerances_and_limits_the_code_uses():
    text = (DOCS / "contract.md").read_text(encoding="utf-8")

    def row(rule: str) -> str:
        return next(line for line in text.splitlines() if line.startswith(f"| `{rule}`"))

    def bold_number(line: str) -> float:
        return float(re.search(r"\*\*([0-9.e-]+)(?: m)?\*\*", line).group(1))

    assert bold_number(row("unit quaternion")) == validation.QUATERNION_NORM_TOLERANCE
    assert bold_number(row("weights sum to 1")) == validation.WEIGHT_SUM_TOLERANCE
    assert bold_number(row("wrist bind pose identity")) == validation.IDENTITY_POSITION_TOLERANCE_M
    assert f"| `DEFAULT_MAX_FLATBUFFER_SIZE` (data record) | {records.DEFAULT_MAX_FLATBUFFER_SIZE} B |" in text
    assert f"| {records.TRACKER_METADATA_MAX_SIZE // 1024} KiB |" in row("TRACKER_METADATA_MAX_SIZE")
    assert f"a 176-taxel record is {records.tactile_record_size(176)} B" in text


def test_device_contract_page_lists_the_types_and_units_the_decoder_accepts():
    text = (DOCS / "device-contract.md").read_text(encoding="utf-8")
    assert f"`type` ∈ `{' '.join(device_format.FIELD_TYPES)}`" in text
    assert "`N` or `normalized`" in text and tuple(device_format.POINT_UNITS) == ("N", "normalized")
    for spelling, canonical in (("degC", "C"), ("celsius", "C"), ("kelvin", "K"), ("normalised", "normalized"),
                                ("newtons", "N")):  # every spelling the page names is one the decoder maps
        assert f"`{spelling.rstrip('s')}" in text and device_format.normalise_unit(spelling) == canonical, spelling
    for key in device_format._TOP_KEYS:  # every key the decoder accepts is documented
        assert f"| `{key}` |" in text, key
