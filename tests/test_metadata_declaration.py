""""A new metadata array = one declaration": proved by doing it. The package is copied into a
temporary directory, ONE line is added to the copy's `contract/metadata.py` (an optional
`taxel_gains` (N, 3) array of kind "value"), and a fresh interpreter on that copy takes the new
array through encode, validate, a recorded run, replay (McapReplay + TactileTracker), inspect and
the exports (npz, CSV, LeRobot) — no other file of the copy is touched.

What the declaration cannot do alone: the FlatBuffers schema (`schema/tactile_metadata.fbs`) and
its generated code and `.bfbs` (the schema a recording embeds for viewers) do not name the new
field; a real field is added there too (docs/architecture.md). The codec writes and reads the
field by its declared slot id, so this package round-trips it, and readers that know only the
schema skip it (FlatBuffers tables are forward compatible) — also checked below.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import wuji_tactile_device
from wuji_tactile_device.contract import TactileMetadata, decode_metadata_record
from wuji_tactile_device.errors import MetadataValidationError

ANCHOR = '    segment_weights: np.ndarray = _array(4, "taxels", "weight", 3, np.float32)  # (N, 4), sum 1\n'
DECLARATION = '    taxel_gains: np.ndarray | None = _array(3, "taxels", "value", 4, np.float32, optional=True)  # (N, 3)\n'

SCRIPT = r'''
import json, sys, time
from pathlib import Path
import numpy as np
import wuji_tactile_device
from wuji_tactile_device.contract import DeviceDataTimestamp, TactileMetadata, encode_metadata_record
from wuji_tactile_device.errors import MetadataValidationError
from wuji_tactile_device.producers.base import Frame, Producer
from wuji_tactile_device.recording import McapReplay
from wuji_tactile_device.recording.export import export_recording
from wuji_tactile_device.recording.inspect import inspect_file
from wuji_tactile_device.recording.lerobot_export import export_lerobot
from wuji_tactile_device.run import RecordOptions, run
from wuji_tactile_device.streams.tracker import TactileTracker

out = Path(sys.argv[1])
assert wuji_tactile_device.__file__.startswith(sys.argv[2]), wuji_tactile_device.__file__  # the copy
n, J = 12, 3
seg = np.arange(n) % J
segment_poses = np.tile([0.0, 0, 0, 0, 0, 0, 1], (J, 1))
taxels = np.tile([0.0, 0, 0, 0, 0, 0, 1], (n, 1))
taxels[:, 0] = 0.001 * np.arange(n)
gains = (1.0 + 0.125 * np.arange(3 * n).reshape(n, 3)).astype(np.float32)
md = TactileMetadata.rigid([9, 14, 19], segment_poses, taxels, seg, taxel_gains=gains).validate()
result = {"declared": [f.name for f in TactileMetadata.ARRAY_FIELDS]}

# encode / decode / validate
back = TactileMetadata.decode(md.encode())
result["decoded_equal"] = back == md and np.array_equal(back.taxel_gains, gains)
plain = TactileMetadata.rigid([9, 14, 19], segment_poses, taxels, seg)
result["plain_has_none"] = plain.taxel_gains is None and TactileMetadata.decode(plain.encode()).taxel_gains is None
result["plain_hex"] = plain.encode().hex()
result["with_gains_hex"] = encode_metadata_record(md, DeviceDataTimestamp(1, 2, 3)).hex()
result["difference"] = plain.difference(md)
errors = {}
for name, value in (("nan", np.where(np.arange(3 * n).reshape(n, 3) == 7, np.nan, gains)), ("rows", gains[:5])):
    try:
        TactileMetadata.rigid([9, 14, 19], segment_poses, taxels, seg, taxel_gains=value).validate()
    except MetadataValidationError as exc:
        errors[name] = [exc.rule, str(exc)]
result["errors"] = errors

# record (the one run function), then replay through the tracker
class Constant(Producer):
    period_s = 0.01
    def __init__(self):
        self.collection_id, self.metadata, self.t = "tactile/right", md, 0
    def next_frame(self):
        self.t += 10_000_000
        return Frame(np.full((n, 3), -0.5, np.float32), sample_time_ns=self.t, available_time_ns=self.t)

recording = out / "gains.mcap"
run([Constant()], transport="inproc", record=RecordOptions(recording), max_frames=5, handle_signals=False)
with McapReplay(recording) as replay:
    tracker = TactileTracker("tactile/right", replay)
    while not replay.finished:
        tracker.update()
    tracker.update()
    adopted = tracker.get_metadata()
result["replayed_gains"] = None if adopted is None or adopted.taxel_gains is None else adopted.taxel_gains.tolist()
report = inspect_file(recording)
result["inspect_valid"] = report.valid

# exports
npz = export_recording(recording, out / "npz", fmt="npz")
with np.load([p for p in npz if p.suffix == ".npz"][0]) as z:
    result["npz_gains"] = z["taxel_gains"].tolist() if "taxel_gains" in z else None
csv_files = export_recording(recording, out / "csv", fmt="csv")
taxel_csv = [p for p in csv_files if p.name.endswith("_taxels.csv")][0]
result["csv_header"] = taxel_csv.read_text().splitlines()[0]
result["csv_row1"] = taxel_csv.read_text().splitlines()[2]
ds = export_lerobot([recording], out / "lerobot", fps=100)
layout = json.loads((Path(ds.root) / "meta" / "wuji_tactile.json").read_text())
result["lerobot_json"] = json.dumps(layout)
print(json.dumps(result))
'''


def _copy_with_declaration(tmp_path: Path) -> Path:
    root = tmp_path / "copy"
    src = Path(wuji_tactile_device.__file__).parent
    shutil.copytree(src, root / "wuji_tactile_device", ignore=shutil.ignore_patterns("__pycache__"))
    target = root / "wuji_tactile_device" / "contract" / "metadata.py"
    text = target.read_text()
    assert text.count(ANCHOR) == 1, "the declaration anchor moved: update ANCHOR"
    target.write_text(text.replace(ANCHOR, ANCHOR + DECLARATION))
    changed = [p.relative_to(root / "wuji_tactile_device") for p in (root / "wuji_tactile_device").rglob("*.py")
               if p.read_bytes() != (src / p.relative_to(root / "wuji_tactile_device")).read_bytes()]
    assert changed == [Path("contract/metadata.py")]  # one file, one line
    return root


def test_one_declared_optional_array_round_trips_through_every_consumer(tmp_path):
    root = _copy_with_declaration(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path), str(root)], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    r = json.loads(done.stdout.splitlines()[-1])
    gains = (1.0 + 0.125 * np.arange(36).reshape(12, 3)).tolist()

    assert r["declared"][-1] == "taxel_gains"
    assert r["decoded_equal"] and r["plain_has_none"]
    assert r["difference"] == "taxel_gains present vs adopted absent"
    assert r["errors"]["nan"][0] == "finite values" and "taxel_gains row 2 column 1: nan" in r["errors"]["nan"][1]
    assert r["errors"]["rows"] == ["taxel count", "taxel count: 12 taxel bind poses but 5 rows of taxel_gains"]
    assert r["replayed_gains"] == gains  # recorded, replayed, adopted by the tracker with its gains
    assert r["inspect_valid"]
    assert r["npz_gains"] == gains
    assert r["csv_header"].endswith(",taxel_gains_0,taxel_gains_1,taxel_gains_2")
    assert r["csv_row1"].split(",")[-3:] == ["1.375", "1.5", "1.625"]  # taxel 1's gains
    assert json.loads(r["lerobot_json"])["layouts"]["tactile/right"]["taxel_gains"] == gains

    # A metadata without the optional array encodes byte for byte as this package does (old files
    # and peers unchanged), and this package (which knows no taxel_gains) reads the new record,
    # skipping the field it does not know.
    plain = TactileMetadata.rigid([9, 14, 19], np.tile([0.0, 0, 0, 0, 0, 0, 1], (3, 1)),
                                  _taxels(), np.arange(12) % 3)
    assert bytes.fromhex(r["plain_hex"]) == plain.encode()
    old_view = decode_metadata_record(bytes.fromhex(r["with_gains_hex"])).metadata.validate()
    assert old_view == plain


def _taxels() -> np.ndarray:
    taxels = np.tile([0.0, 0, 0, 0, 0, 0, 1], (12, 1))
    taxels[:, 0] = 0.001 * np.arange(12)
    return taxels


def test_fields_are_keyword_only_and_the_contract_arrays_required():
    md = TactileMetadata.rigid([9], [[0.0, 0, 0, 0, 0, 0, 1]], [[0.0, 0, 0, 0, 0, 0, 1]], [0])
    with pytest.raises(TypeError, match="positional"):
        TactileMetadata(md.joint_ids, md.segment_bind_poses, md.taxel_bind_poses, md.segment_indices,  # type: ignore[misc]
                        md.segment_weights)
    fields = {f: getattr(md, f) for f in ("segment_bind_poses", "taxel_bind_poses", "segment_indices")}
    with pytest.raises(MetadataValidationError, match="segment_weights is required") as exc:
        TactileMetadata(joint_ids=md.joint_ids, segment_weights=None, **fields)
    assert exc.value.rule == "array shape"


def test_the_rigid_factory_puts_each_taxel_on_one_segment_with_weight_one():
    md = TactileMetadata.rigid([9, 14], np.tile([0.0, 0, 0, 0, 0, 0, 1], (2, 1)),
                               np.tile([0.0, 0, 0, 0, 0, 0, 1], (3, 1)), [1, 0, 1]).validate()
    assert md.segment_indices.tolist() == [[1, 1, 1, 1], [0, 0, 0, 0], [1, 1, 1, 1]]
    assert md.segment_weights.tolist() == [[1, 0, 0, 0]] * 3
    with pytest.raises(ValueError, match="segment_of_taxel must be a 1-D array"):
        TactileMetadata.rigid([9], [[0.0, 0, 0, 0, 0, 0, 1]], [[0.0, 0, 0, 0, 0, 0, 1]], [[0]])
