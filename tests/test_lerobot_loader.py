"""LeRobot itself loads the exported dataset: `LeRobotDataset` (lerobot 0.4.x, in its own
environment: it needs torch) reads `export a.mcap b.mcap --format lerobot ds/` from a local root with
no network, and every value it delivers equals the recordings' within float32.

Opt-in (LeRobot + torch is a multi-GB install, too heavy for CI): set WUJI_LEROBOT_PYTHON to the
Python of an environment with `lerobot` installed (docs/lerobot.md has the commands)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from cli_helpers import cli
from lerobot_helpers import T0, write_recording
from wuji_tactile_device.contract.pads import pad_layout, pad_resultants
from wuji_tactile_device.recording.export import load_recording

LEROBOT_PYTHON = os.environ.get("WUJI_LEROBOT_PYTHON")
pytestmark = pytest.mark.skipif(
    not LEROBOT_PYTHON, reason="opt-in: set WUJI_LEROBOT_PYTHON to a Python with lerobot 0.4.x (docs/lerobot.md)")
MS = 1_000_000


def test_lerobot_loads_two_episodes_with_the_recordings_values(tmp_path, capsys):
    a, b = tmp_path / "press.mcap", tmp_path / "grasp.mcap"
    ta = [T0 + i * 10 * MS for i in range(120)]
    tb = [T0 + 3 * MS + i * 10 * MS for i in range(80)]
    del tb[30:33]  # a gap: three rows LeRobot must see flagged invalid, zero-filled
    write_recording(a, {"tactile/right": ta, "tactile/left": ta}, num_taxels=176, hand_times={"right": ta},
                    file_metadata={"scenario": "press"})
    write_recording(b, {"tactile/right": tb, "tactile/left": tb}, num_taxels=176, hand_times={"right": tb}, salt=2)
    ds = tmp_path / "ds"
    code, _, err = cli(capsys, "-q", "export", str(a), str(b), "--format", "lerobot", str(ds))
    assert code == 0, err
    dump = tmp_path / "loaded.npz"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    env.pop("PYTHONPATH", None)  # LeRobot's environment only; it never imports this package
    subprocess.run([LEROBOT_PYTHON, "-W", "ignore", str(Path(__file__).with_name("lerobot_load_check.py")), str(ds),
                    str(dump)], check=True, env=env, timeout=900)
    example = Path(__file__).resolve().parents[1] / "examples" / "lerobot" / "iterate_dataset.py"
    shown = subprocess.run([LEROBOT_PYTHON, "-W", "ignore", str(example), str(ds)], check=True, env=env, timeout=900,
                           capture_output=True, text=True).stdout
    assert "2 episodes, 200 frames at 100 Hz" in shown
    assert "observation.tactile.right.forces" in shown and "(8, 176, 3)" in shown
    got = np.load(dump)
    summary = json.loads(str(got["_summary"]))
    assert summary["lerobot_version"].startswith("0.4.")
    assert summary["num_episodes"] == 2 and summary["num_frames"] == 120 + 80 and summary["fps"] == 100
    assert [(e["length"], e["from"]) for e in summary["episodes"]] == [(120, 0), (80, 120)]
    assert summary["item_shapes"]["observation.tactile.right.forces"] == [176, 3]
    assert summary["item_shapes"]["observation.hand.right.joint_poses"] == [26, 7]
    assert summary["batch_shapes"]["observation.tactile.left.forces"] == [4, 176, 3]
    assert set(summary["tasks"]) == {"press", "grasp"}
    ep = got["episode_index"]
    frame = got["frame_index"]
    np.testing.assert_array_equal(got["timestamp"], (frame / 100).astype(np.float32))
    for k, path in enumerate((a, b)):
        rec = load_recording(path)
        rows = ep == k
        valid = got["observation__tactile__right__valid"][rows]
        if k == 0:
            assert valid.all()
        else:
            assert np.flatnonzero(~valid).tolist() == [30, 31, 32]
        for cid in ("tactile/right", "tactile/left"):
            key = "observation__" + cid.replace("/", "__")
            forces = got[f"{key}__forces"][rows]
            assert forces.dtype == np.float32
            np.testing.assert_array_equal(forces[valid], rec[cid].forces)  # exactly the recorded frames, in order
            assert not forces[~valid].any()
            np.testing.assert_allclose(got[f"{key}__pad_resultants"][rows][valid],
                                       pad_resultants(pad_layout(rec[cid].metadata), rec[cid].forces),
                                       rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(got["observation__hand__right__joint_poses"][rows][valid],
                                      rec.hands["right"].poses)
        assert not got["observation__hand__left__valid"][rows].any()
    # the per-episode statistics LeRobot computes itself from the frames equal the ones written
    import pyarrow.parquet as pq
    written = pq.read_table(next((ds / "meta" / "episodes").glob("*/*.parquet"))).to_pylist()
    for k, e in enumerate(written):
        for feat, st in summary["lerobot_episode_stats"][str(k)].items():
            for s, v in st.items():
                tol = 2e-3 if s in ("mean", "std") else 1e-6  # LeRobot accumulates in float32, we in float64
                np.testing.assert_allclose(np.asarray(e[f"stats/{feat}/{s}"], float), np.asarray(v, float),
                                           rtol=tol, atol=1e-6, err_msg=f"episode {k} {feat} {s}")
