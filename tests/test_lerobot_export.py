"""LeRobot v3.0 export: the dataset read back with pyarrow (the reader under LeRobot's `datasets`
loader) holds the recordings' own values on the documented grid, follows the format's rules, carries
LeRobot-style statistics, and bad input is refused with one line and nothing left on disk.
LeRobot itself loading the dataset: tests/test_lerobot_loader.py (opt-in)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow", reason="the LeRobot export needs the 'lerobot' extra (pyarrow)")
import pyarrow.parquet as pq  # noqa: E402

from cli_helpers import cli  # noqa: E402
from conftest import make_metadata  # noqa: E402
from lerobot_helpers import T0, forces_at, pose_at, write_recording  # noqa: E402
from wuji_tactile_device.contract.pads import pad_layout, pad_resultants  # noqa: E402
from wuji_tactile_device.errors import RecordingError  # noqa: E402
from wuji_tactile_device.recording.export import load_recording  # noqa: E402
from wuji_tactile_device.recording.lerobot_export import export_lerobot  # noqa: E402

MS = 1_000_000


def read_dataset(root: Path):
    info = json.loads((root / "meta" / "info.json").read_text())
    tables = [pq.read_table(p) for p in sorted((root / "data").glob("*/*.parquet"))]
    data = pa.concat_tables(tables)
    episodes = pq.read_table(sorted((root / "meta" / "episodes").glob("*/*.parquet"))[0]).to_pylist()
    return info, data, episodes


def column(data, name: str, shape) -> np.ndarray:
    col = data.column(name).combine_chunks()
    if list(shape) == [1]:
        return col.to_numpy(zero_copy_only=False)
    for _ in shape:
        col = col.flatten()
    return col.to_numpy(zero_copy_only=False).reshape(-1, *shape)


@pytest.fixture(scope="module")
def two_files(tmp_path_factory):
    """Two recordings of two hands at 100 Hz (different lengths), hand channels with the right
    hand tracked, the left not."""
    d = tmp_path_factory.mktemp("lr")
    a, b = d / "press.mcap", d / "grasp.mcap"
    ta = [T0 + i * 10 * MS for i in range(130)]
    tb = [T0 + 7 * MS + i * 10 * MS for i in range(90)]
    sent_a = write_recording(a, {"tactile/right": ta, "tactile/left": ta}, hand_times={"right": ta},
                             file_metadata={"scenario": "press"})
    sent_b = write_recording(b, {"tactile/right": tb, "tactile/left": tb}, hand_times={"right": tb}, salt=3)
    return d, (a, b), (sent_a, sent_b)


def test_cli_two_recordings_become_two_episodes_with_their_values(two_files, capsys):
    d, (a, b), _ = two_files
    out = d / "ds"
    code, stdout, err = cli(capsys, "-q", "export", str(a), str(b), "--format", "lerobot", str(out))
    assert code == 0, err
    assert stdout.splitlines()[0] == str(out)
    info, data, episodes = read_dataset(out)
    assert info["codebase_version"] == "v3.0" and info["fps"] == 100
    assert info["total_episodes"] == 2 and info["total_frames"] == 130 + 90 == data.num_rows
    assert [e["length"] for e in episodes] == [130, 90]
    assert [e["tasks"] for e in episodes] == [["press"], ["grasp"]]  # scenario metadata, else the file stem
    ep = column(data, "episode_index", [1])
    for k, path in enumerate((a, b)):
        rec = load_recording(path)
        rows = ep == k
        for cid in ("tactile/right", "tactile/left"):
            p = "observation." + cid.replace("/", ".")
            forces = column(data, f"{p}.forces", [24, 3])[rows]
            assert forces.dtype == np.float32
            assert forces.tobytes() == rec[cid].forces.tobytes()  # every frame, bit for bit, in order
            assert column(data, f"{p}.valid", [1])[rows].all()
            layout = pad_layout(rec[cid].metadata)
            np.testing.assert_allclose(column(data, f"{p}.pad_resultants", [5, 3])[rows],
                                       pad_resultants(layout, rec[cid].forces), rtol=1e-6, atol=1e-6)
        right = rec.hands["right"]
        assert right.tracked.all() and not rec.hands["left"].tracked.any()
        np.testing.assert_array_equal(column(data, "observation.hand.right.joint_poses", [26, 7])[rows], right.poses)
        assert column(data, "observation.hand.right.valid", [1])[rows].all()
        assert not column(data, "observation.hand.left.valid", [1])[rows].any()  # never tracked: flagged
        assert not column(data, "observation.hand.left.joint_poses", [26, 7])[rows].any()


def test_format_rules_of_a_v3_dataset(two_files):
    """What LeRobot's loader relies on: default columns, contiguous indices, timestamps = frame /
    fps, per-episode ranges, features matching the parquet columns, tasks readable by index."""
    d, (a, b), _ = two_files
    out = d / "rules"
    export_lerobot([a, b], out, fps=100)
    info, data, episodes = read_dataset(out)
    feats = info["features"]
    assert set(feats) == set(data.column_names)
    for name in ("timestamp", "frame_index", "episode_index", "index", "task_index"):
        assert feats[name]["shape"] == [1]
    assert feats["observation.tactile.right.forces"] == {**feats["observation.tactile.right.forces"],
                                                         "dtype": "float32", "shape": [24, 3], "unit": "N"}
    hf = json.loads(data.schema.metadata[b"huggingface"])["info"]["features"]
    assert hf["observation.tactile.right.forces"] == {"shape": [24, 3], "dtype": "float32", "_type": "Array2D"}
    assert hf["observation.hand.right.joint_valid"]["length"] == 26
    field = data.schema.field("observation.tactile.right.forces")
    assert field.metadata[b"ARROW:extension:name"] == b"datasets.features.features.Array2DExtensionType"
    for name, f in feats.items():  # each column holds exactly its declared shape
        assert column(data, name, f["shape"]).shape[1:] == tuple(f["shape"][1:] if f["shape"] == [1] else f["shape"])
    index, frame, ep = (column(data, n, [1]) for n in ("index", "frame_index", "episode_index"))
    assert index.tolist() == list(range(data.num_rows))
    start = 0
    for e in episodes:
        rows = slice(e["dataset_from_index"], e["dataset_to_index"])
        assert e["dataset_from_index"] == start and e["dataset_to_index"] - start == e["length"]
        assert frame[rows].tolist() == list(range(e["length"])) and (ep[rows] == e["episode_index"]).all()
        start = e["dataset_to_index"]
        assert e["data/chunk_index"] == 0 and e["data/file_index"] == 0
    np.testing.assert_array_equal(column(data, "timestamp", [1]), (frame / 100).astype(np.float32))
    tasks = pq.read_table(out / "meta" / "tasks.parquet")
    pandas_meta = json.loads(tasks.schema.metadata[b"pandas"])
    assert pandas_meta["index_columns"] == ["__index_level_0__"]  # the task text is the index
    assert tasks.column("__index_level_0__").to_pylist() == ["press", "grasp"]
    assert tasks.column("task_index").to_pylist() == [0, 1]
    assert column(data, "task_index", [1]).tolist() == [0] * 130 + [1] * 90
    extra = json.loads((out / "meta" / "wuji_tactile.json").read_text())
    assert [Path(e["source_file"]).name for e in extra["episodes"]] == ["press.mcap", "grasp.mcap"]
    assert extra["episodes"][0]["grid_origin_sample_time_ns"] == T0
    assert extra["episodes"][1]["grid_origin_sample_time_ns"] == T0 + 7 * MS
    assert extra["episodes"][0]["clock_anchors"]  # the recorder writes one at start and at close
    md = make_metadata(24)
    layout = extra["layouts"]["tactile/right"]
    np.testing.assert_array_equal(np.array(layout["taxel_bind_poses"], np.float32), md.taxel_bind_poses)
    np.testing.assert_array_equal(np.array(layout["segment_weights"], np.float32), md.segment_weights)
    assert oct(out.stat().st_mode & 0o777) != oct(0o700)  # an ordinary directory, not mkdtemp's private one


def _reference_stats(values: np.ndarray, frames: int) -> dict:
    """LeRobot's definition, computed here independently: over all leading axes."""
    flat = values.reshape(-1, 1) if values.ndim == 1 else values.reshape(-1, values.shape[-1])
    flat = flat.astype(np.float64)
    return {"min": flat.min(0), "max": flat.max(0), "mean": flat.mean(0), "std": flat.std(0),
            "count": [frames], "width": (flat.max(0) - flat.min(0)) / 5000}


def test_stats_are_lerobot_stats_per_episode_and_aggregated(two_files):
    d, (a, b), _ = two_files
    out = d / "stats"
    export_lerobot([a, b], out)
    info, data, episodes = read_dataset(out)
    stats = json.loads((out / "meta" / "stats.json").read_text())
    assert set(stats) == set(info["features"])
    ep = column(data, "episode_index", [1])
    for name in ("observation.tactile.right.forces", "observation.hand.right.joint_poses", "timestamp",
                 "observation.tactile.left.pad_resultants"):
        shape = info["features"][name]["shape"]
        values = column(data, name, shape)
        for k, e in enumerate(episodes):
            ref = _reference_stats(values[ep == k], e["length"])
            for s in ("min", "max", "mean", "std"):
                np.testing.assert_allclose(e[f"stats/{name}/{s}"], ref[s], rtol=1e-6, atol=1e-9, err_msg=f"{name} {s}")
            assert e[f"stats/{name}/count"] == [e["length"]]
            flat = values[ep == k].reshape(-1, shape[-1]).astype(np.float64)
            for q in (0.01, 0.5, 0.9, 0.99):  # a histogram estimate (5000 bins from min to max): the fraction
                est = np.array(e[f"stats/{name}/q{int(q * 100):02d}"])  # of values below it is q, up to one bin
                tol = ref["width"] + 1e-9
                assert np.all((flat < est - tol).mean(0) <= q + 1e-9), (name, q)
                assert np.all((flat <= est + tol).mean(0) >= q - 1e-9), (name, q)
        ref = _reference_stats(values, data.num_rows)
        for s in ("min", "max", "mean", "std"):
            np.testing.assert_allclose(stats[name][s], ref[s], rtol=1e-6, atol=1e-9, err_msg=f"{name} {s}")
        assert stats[name]["count"] == [data.num_rows]
        assert len(stats[name]["mean"]) == shape[-1]  # (176, 3) → per axis, as LeRobot reduces it
    assert stats["observation.tactile.right.valid"]["min"] == [True]


def test_grid_takes_the_nearest_sample_within_half_a_period_and_flags_gaps(tmp_path):
    """100 Hz grid from a jittered stream with a 40 ms hole and two samples in one window: each row
    holds the nearest sample's own values, rows of the hole are zero and invalid, nothing is
    interpolated."""
    jitter = [0, 3, -4, 2, 4, -3, 1, 0, 0, 0, 0, 0, 2, -2, 0]
    times = [T0 + i * 10 * MS + jitter[i] * MS for i in range(15)]
    del times[7:11]  # rows 7..10 have no sample
    times.insert(3, T0 + 30 * MS + 4_999_999)  # a second sample in row 3's window, farther than row 3's own
    times.sort()
    path = tmp_path / "jitter.mcap"
    sent = write_recording(path, {"tactile/right": times})
    out = tmp_path / "ds"
    result = export_lerobot([path], out, fps=100, hands=False)
    _, data, _ = read_dataset(out)
    assert result.episode_lengths == [15]
    valid = column(data, "observation.tactile.right.valid", [1])
    forces = column(data, "observation.tactile.right.forces", [24, 3])
    offset = column(data, "observation.tactile.right.time_offset", [1])
    sent_t, sent_f = sent["tactile/right"]
    assert valid.tolist() == [k not in (7, 8, 9, 10) for k in range(15)]
    for k in range(15):
        grid = T0 + k * 10 * MS
        window = [i for i, t in enumerate(sent_t) if grid - 5 * MS <= t < grid + 5 * MS]
        if not window:
            assert not forces[k].any() and offset[k] == 0
            continue
        best = min(window, key=lambda i: abs(sent_t[i] - grid))
        assert forces[k].tobytes() == sent_f[best].tobytes()
        assert offset[k] == pytest.approx((sent_t[best] - grid) * 1e-9, abs=1e-9)
    report = json.loads((out / "meta" / "wuji_tactile.json").read_text())["episodes"][0]["streams"]
    assert report["tactile:tactile/right"] == {"samples": 12, "rows_valid": 11, "unused_same_window": 1,
                                               "before_first_row": 0, "after_last_row": 0}


def test_lower_fps_keeps_recorded_values_not_averages(tmp_path):
    times = [T0 + i * 10 * MS for i in range(20)]
    path = tmp_path / "r.mcap"
    sent = write_recording(path, {"tactile/right": times})
    out = tmp_path / "ds"
    export_lerobot([path], out, fps=25, hands=False)  # 40 ms rows: samples at 0, 40, 80 ... ms are on the grid
    _, data, _ = read_dataset(out)
    forces = column(data, "observation.tactile.right.forces", [24, 3])
    # rows at 0, 40, ..., 200 ms; row 5's window [180, 220) ms holds the samples at 180 and 190 ms: 190 is nearer
    assert len(forces) == 6
    np.testing.assert_array_equal(forces, sent["tactile/right"][1][[0, 4, 8, 12, 16, 19]])


def test_hand_samples_outside_the_tactile_span_are_counted_not_silently_used(tmp_path):
    times = [T0 + i * 10 * MS for i in range(10)]
    hands = [T0 - 20 * MS + i * 10 * MS for i in range(16)]  # starts 2 rows early, ends 4 rows late
    path = tmp_path / "r.mcap"
    write_recording(path, {"tactile/right": times}, hand_times={"right": hands})
    out = tmp_path / "ds"
    export_lerobot([path], out)
    _, data, _ = read_dataset(out)
    poses = column(data, "observation.hand.right.joint_poses", [26, 7])
    np.testing.assert_array_equal(poses, np.stack([pose_at(i + 2) for i in range(10)]))
    report = json.loads((out / "meta" / "wuji_tactile.json").read_text())["episodes"][0]["streams"]["hand:right"]
    assert (report["before_first_row"], report["rows_valid"], report["after_last_row"]) == (2, 10, 4)


# -- bad input: one line, nothing left behind ----------------------------------------------------------
def _leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


def test_existing_output_directory_is_refused(two_files, capsys):
    d, (a, _), _ = two_files
    out = d / "exists"
    out.mkdir()
    code, _, err = cli(capsys, "export", str(a), "--format", "lerobot", str(out))
    assert code == 1
    assert err.strip().count("\n") == 0 and f"{out} already exists" in err
    assert list(out.iterdir()) == []


def test_no_tactile_collection_is_refused(tmp_path, capsys):
    from wuji_tactile_device.recording import McapRecorder

    path = tmp_path / "empty.mcap"
    with McapRecorder(path) as rec:
        ch = rec.add_json_channel("notes", {"title": "Note", "type": "object"})
        rec.write_json(ch, {"a": 1}, log_time_ns=1, publish_time_ns=1)
    code, _, err = cli(capsys, "export", str(path), "--format", "lerobot", str(tmp_path / "ds"))
    assert code == 1 and err.strip().count("\n") == 0
    assert "no tactile collections" in err and str(path) in err
    assert not (tmp_path / "ds").exists() and _leftovers(tmp_path) == []


def test_collection_missing_in_one_file_is_refused(tmp_path, capsys):
    t = [T0 + i * 10 * MS for i in range(5)]
    a, b = tmp_path / "a.mcap", tmp_path / "b.mcap"
    write_recording(a, {"tactile/right": t, "tactile/left": t})
    write_recording(b, {"tactile/right": t})
    code, _, err = cli(capsys, "export", str(a), str(b), "--format", "lerobot", str(tmp_path / "ds"))
    assert code == 1 and err.strip().count("\n") == 0
    assert f"{b}: collection 'tactile/left' is missing (it is in {a})" in err
    assert not (tmp_path / "ds").exists() and _leftovers(tmp_path) == []
    # selecting the common collection works
    code, _, err = cli(capsys, "-q", "export", str(a), str(b), "--format", "lerobot", "-c", "tactile/right",
                       str(tmp_path / "ds"))
    assert code == 0, err


def test_mismatched_layouts_across_files_are_refused(tmp_path, capsys):
    t = [T0 + i * 10 * MS for i in range(5)]
    a, b = tmp_path / "a.mcap", tmp_path / "b.mcap"
    write_recording(a, {"tactile/right": t})
    write_recording(b, {"tactile/right": t}, layouts={"tactile/right": make_metadata(24, seed=9)})
    with pytest.raises(RecordingError, match=r"b\.mcap: collection 'tactile/right' has a different layout than in "):
        export_lerobot([a, b], tmp_path / "ds")
    assert not (tmp_path / "ds").exists() and _leftovers(tmp_path) == []


def test_slip_topic_is_refused_rather_than_dropped(tmp_path):
    from wuji_tactile_device.recording import McapRecorder
    from wuji_tactile_device.streams.inproc import InProcessBus
    from wuji_tactile_device.streams.publisher import TactilePublisher

    path = tmp_path / "slip.mcap"
    bus = InProcessBus()
    with McapRecorder(path) as rec:
        rec.add_collection(bus, "tactile/right")
        ch = rec.add_json_channel("tactile/right/slip", {"title": "Slip", "type": "object"})
        pub = TactilePublisher("tactile/right", make_metadata(24), bus)
        pub.publish(forces_at(0, 24), sample_time_ns=T0)
        rec.write_json(ch, {"slip": 0.0}, log_time_ns=T0, publish_time_ns=T0)
        pub.close()
        rec.poll()
    with pytest.raises(RecordingError, match="'tactile/right/slip' holds slip output"):
        export_lerobot([path], tmp_path / "ds")
    assert _leftovers(tmp_path) == []


def test_usage_errors(two_files, capsys):
    d, (a, b), _ = two_files
    assert cli(capsys, "export", str(a), "--format", "lerobot")[0] == 2  # no OUT_DIR
    assert cli(capsys, "export", str(a), str(b))[0] == 2  # npz takes one file
    assert cli(capsys, "export", str(a), "--fps", "30")[0] == 2  # --fps is for lerobot
    assert cli(capsys, "export", str(a), "--format", "lerobot", "--fps", "0", str(d / "x"))[0] == 2
    with pytest.raises(ValueError, match="fps must be an int"):
        export_lerobot([a], d / "y", fps=29.97)
    assert not (d / "x").exists() and not (d / "y").exists()


def test_a_failure_midway_leaves_nothing(two_files, monkeypatch):
    """An error while the second episode is written removes the whole partial dataset."""
    from wuji_tactile_device.recording import lerobot_export

    d, (a, b), _ = two_files
    real = lerobot_export._Writer._episode
    calls = []

    def failing(self, ep, *args):
        calls.append(ep)
        if ep == 1:
            raise RecordingError("disk full (injected)")
        return real(self, ep, *args)

    monkeypatch.setattr(lerobot_export._Writer, "_episode", failing)
    before = sorted(os.listdir(d))
    with pytest.raises(RecordingError, match="injected"):
        export_lerobot([a, b], d / "half")
    assert calls == [0, 1] and sorted(os.listdir(d)) == before


def test_memory_does_not_grow_with_the_recording(tmp_path):
    """Peak RSS of the export alone (a fresh process each) for a 10 s and a 60 s two-hand recording:
    six times the frames, about the same memory (the 30-minute figure is in docs/lerobot.md)."""
    import subprocess
    import sys

    from lerobot_helpers import long_recording

    code = ("import resource, sys; from wuji_tactile_device.recording.lerobot_export import export_lerobot; "
            "export_lerobot([sys.argv[1]], sys.argv[2]); print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    peaks = []
    for seconds in (10, 60):
        d = tmp_path / f"s{seconds}"
        d.mkdir()
        long_recording(d / "r.mcap", seconds / 60)
        out = subprocess.run([sys.executable, "-c", code, str(d / "r.mcap"), str(d / "ds")], capture_output=True,
                             text=True, check=True, timeout=600, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        peaks.append(int(out.stdout.split()[-1]) / 1024)  # [MiB]
        assert json.loads((d / "ds" / "meta" / "info.json").read_text())["total_frames"] == seconds * 100
    assert peaks[1] - peaks[0] < 25, f"peak RSS {peaks[0]:.0f} MiB → {peaks[1]:.0f} MiB for 6× the frames"


def test_sample_time_going_back_is_refused_with_file_and_collection(tmp_path):
    from wuji_tactile_device.recording import McapRecorder
    from wuji_tactile_device.streams.inproc import InProcessBus
    from wuji_tactile_device.streams.publisher import TactilePublisher

    path = tmp_path / "back.mcap"
    bus = InProcessBus()
    with McapRecorder(path) as rec:
        rec.add_collection(bus, "tactile/right")
        pub = TactilePublisher("tactile/right", make_metadata(24), bus)
        for t in (T0, T0 + 10 * MS, T0 + 5 * MS):  # the third frame was sensed before the second
            pub.publish(forces_at(0, 24), sample_time_ns=t, available_time_ns=T0 + 20 * MS)
            rec.poll()
        pub.close()
        rec.poll()
    with pytest.raises(RecordingError, match=rf"{path}: collection 'tactile/right': sample time goes back from "
                                             rf"{T0 + 10 * MS} ns to {T0 + 5 * MS} ns \(sample 2\)"):
        export_lerobot([path], tmp_path / "ds", hands=False)
    assert _leftovers(tmp_path) == []
