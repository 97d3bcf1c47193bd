"""MCAP log times on the UTC epoch by default (records keep their monotonic times), the old
monotonic base on request, and every reader working on both kinds of file."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from mcap.reader import make_reader

from cli_helpers import cli
from wuji_tactile_device.contract import decode_tactile_record
from wuji_tactile_device.contract.naming import Stream
from wuji_tactile_device.contract.records import DeviceDataTimestamp, encode_tactile_record
from wuji_tactile_device.errors import RecordingError
from wuji_tactile_device.recording.clock_anchor import log_time_offset, wall_clock_span
from wuji_tactile_device.recording.recorder import McapRecorder

CID = "tactile/right"
ROOT = Path(__file__).resolve().parents[1]


def _read(path: Path):
    """(file metadata, [(log time, publish time, record)] of the data topic)."""
    with open(path, "rb") as f:
        reader = make_reader(f)
        meta = {m.name: m.metadata for m in reader.iter_metadata()}["wuji_tactile_device"]
        rows = [(m.log_time, m.publish_time, decode_tactile_record(m.data))
                for _, ch, m in reader.iter_messages() if ch.topic == CID]
    return meta, rows


CHILD = """
import sys
from wuji_tactile_device.contract.naming import Stream
from wuji_tactile_device.contract.records import DeviceDataTimestamp, encode_tactile_record
from wuji_tactile_device.recording.recorder import McapRecorder
import numpy as np
t = int(sys.argv[2])  # the shared instant, on this machine's monotonic clock
with McapRecorder(sys.argv[1]) as rec:
    rec.write("tactile/right", Stream.DATA, encode_tactile_record(np.zeros((4, 3), np.float32),
              DeviceDataTimestamp(t, t, t)), 1, 0)
"""


def test_two_processes_recording_one_instant_log_it_within_a_millisecond(tmp_path):
    instant = time.monotonic_ns()
    paths = [tmp_path / f"p{k}.mcap" for k in range(2)]
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, str(p), str(instant)], cwd=ROOT) for p in paths]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    (meta_a, [(log_a, _, rec_a)]), (meta_b, [(log_b, _, rec_b)]) = _read(paths[0]), _read(paths[1])
    assert rec_a.timestamp == rec_b.timestamp == DeviceDataTimestamp(instant, instant, instant)  # records untouched
    assert abs(log_a - log_b) < 1_000_000  # 1 ms: both on the UTC epoch of this machine
    assert abs(log_a - (time.time_ns() - (time.monotonic_ns() - instant))) < 1_000_000_000  # and it IS the epoch
    assert meta_a["log_time_base"] == meta_b["log_time_base"] == "epoch"


def test_the_monotonic_base_keeps_the_records_times_as_log_times(tmp_path):
    path = tmp_path / "m.mcap"
    with McapRecorder(path, log_time_base="monotonic") as rec:
        rec.write(CID, Stream.DATA, encode_tactile_record(np.zeros((4, 3), np.float32),
                                                          DeviceDataTimestamp(7, 5, 3)), 1, 0)
    meta, [(log, publish, _)] = _read(path)
    assert (log, publish) == (7, 5) and meta["log_time_base"] == "monotonic" and log_time_offset(meta) == 0
    with pytest.raises(ValueError, match="log_time_base must be one of epoch, monotonic, got 'wall'"):
        McapRecorder(tmp_path / "w.mcap", log_time_base="wall")
    with pytest.raises(ValueError, match="'log_time_offset_ns' is the recorder's own"):
        McapRecorder(tmp_path / "x.mcap", file_metadata={"log_time_offset_ns": "5"})


def test_log_time_offset_of_old_and_malformed_files():
    assert log_time_offset({}) == 0  # a file from before: monotonic log times
    assert log_time_offset({"log_time_base": "epoch", "log_time_offset_ns": "12"}) == 12
    with pytest.raises(RecordingError, match="log_time_base='tai' is not one of epoch, monotonic"):
        log_time_offset({"log_time_base": "tai"})
    with pytest.raises(RecordingError, match="log_time_offset_ns='x' is not an integer"):
        log_time_offset({"log_time_base": "epoch", "log_time_offset_ns": "x"})


def test_a_fast_simulation_spans_its_simulated_seconds_on_the_epoch(capsys, tmp_path):
    path = tmp_path / "fast.mcap"
    before = time.time_ns()
    cli(capsys, "sim", "--scenario", "press", "--duration", "0.5", "--record", str(path))
    after = time.time_ns()
    meta, rows = _read(path)
    log = np.array([r[0] for r in rows])
    np.testing.assert_array_equal(np.diff(log), 10_000_000)  # 100 Hz of simulated time, however fast computed
    assert len(log) == 50 and before - 1_000_000_000 <= log[0] <= after
    start, end = wall_clock_span(path)
    assert before - 1_000_000_000 <= start <= after and end - start >= 490_000_000


def test_an_emulated_hand_run_fast_logs_scenario_time(capsys, tmp_path):
    path = tmp_path / "emu.mcap"
    code, _, err = cli(capsys, "hw", "--emulate", "--fast", "--duration", "1.0", "--record", str(path))
    assert code == 0, err
    meta, rows = _read(path)
    log = np.array([r[0] for r in rows])
    assert len(log) >= 95
    # the scenario's 100 Hz, not the speed the machine computed it at
    np.testing.assert_array_equal(np.diff(log), 10_000_000)
    available = np.array([r[2].timestamp.available_time_local_common_clock for r in rows])
    np.testing.assert_array_equal(log - available, int(meta["log_time_offset_ns"]))


def _as_old_file(src: Path, dst: Path) -> None:
    """Rewrite a monotonic-base recording as the files before log-time bases: the same records,
    the file metadata without `log_time_base` / `log_time_offset_ns`."""
    from mcap.writer import CompressionType, Writer

    with open(src, "rb") as f, open(dst, "wb") as out:
        reader = make_reader(f)
        summary = reader.get_summary()
        w = Writer(out, compression=CompressionType.ZSTD)
        w.start(profile=reader.get_header().profile, library="old")
        schema_ids = {sid: w.register_schema(s.name, s.encoding, s.data) for sid, s in summary.schemas.items()}
        channel_ids = {cid: w.register_channel(c.topic, c.message_encoding, schema_ids.get(c.schema_id, 0), c.metadata)
                       for cid, c in summary.channels.items()}
        for m in reader.iter_metadata():
            w.add_metadata(m.name, {k: v for k, v in m.metadata.items()
                                    if k not in ("log_time_base", "log_time_offset_ns")})
        for _, ch, m in reader.iter_messages(log_time_order=False):
            w.add_message(channel_ids[ch.id], m.log_time, m.data, m.publish_time, m.sequence)
        w.finish()


@pytest.mark.parametrize("base", ["epoch", "monotonic", "old"])
def test_every_reader_works_on_old_and_new_files(capsys, tmp_path, base):
    path = tmp_path / f"{base}.mcap"
    code, _, err = cli(capsys, "sim", "--scenario", "press", "--duration", "0.3", "--record", str(path),
                       "--log-time-base", "monotonic" if base == "old" else base)
    if base == "old":
        _as_old_file(path, tmp_path / "old_rewritten.mcap")
        path = tmp_path / "old_rewritten.mcap"
    meta, rows = _read(path)
    assert meta.get("log_time_base", "old") == base and len(rows) == 30
    offset = int(meta.get("log_time_offset_ns", 0))
    assert [r[0] - offset for r in rows] == [r[2].timestamp.available_time_local_common_clock for r in rows]
    code, out, err = cli(capsys, "validate", str(path))
    assert code == 0, out + err
    code, out, err = cli(capsys, "inspect", str(path))
    assert code == 0 and "differ" not in out, out + err
    code, out, err = cli(capsys, "replay", str(path))
    assert code == 0 and len([ln for ln in out.splitlines() if CID in ln]) == 30, out + err
    code, out, err = cli(capsys, "export", str(path), "--out", str(tmp_path / f"x_{base}"))
    assert code == 0, err
    (npz,) = (tmp_path / f"x_{base}").glob("*tactile*.npz")
    exported = np.load(npz)
    np.testing.assert_array_equal(exported["available_time_ns"],
                                  [r[2].timestamp.available_time_local_common_clock for r in rows])
    cut = tmp_path / f"cut_{base}.mcap"
    cut.write_bytes(path.read_bytes()[: path.stat().st_size * 2 // 3])
    code, out, err = cli(capsys, "recover", str(cut), str(tmp_path / f"rec_{base}.mcap"))
    assert code in (0, 1) and (tmp_path / f"rec_{base}.mcap").exists(), out + err
    code, out, err = cli(capsys, "validate", str(tmp_path / f"rec_{base}.mcap"))
    assert code == 0, out + err
