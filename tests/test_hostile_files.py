"""Hostile MCAP files and peers against the recording layer (docs/reliability.md lists them):
decompression bombs, files of tiny records, no collections, far-future times, lying or missing
message indexes, damaged framing, missing schemas, odd producer sessions, deep JSON, cut files,
bad output targets and a peer's bad samples. Each case ends with a typed, one-line error or a
report, within bounded memory (a CLI subprocess's peak RSS, or tracemalloc in process).

Files are made here with `mcap_helpers`' independent writer, so expectations never come from
the reader under test."""
from __future__ import annotations

import logging
import math
import os
import re
import stat
import subprocess
import sys
import time
import tracemalloc
import warnings
import zlib

import numpy as np
import pytest

from conftest import make_metadata
from mcap_helpers import (channel, chunk, mcap_file, message, message_index, official_messages, record, schema,
                          tactile_definitions, tactile_messages)
from wuji_tactile_device.contract import (DeviceDataTimestamp, decode_tactile_record, encode_metadata_record,
                                          encode_tactile_record)
from wuji_tactile_device.errors import (CorruptChunkError, InvalidMessageError, ReadLimitError, RecordingError,
                                        RecordingWarning)
from wuji_tactile_device.recording import McapRecorder, McapReplay
from wuji_tactile_device.recording import recorder as recorder_module
from wuji_tactile_device.recording.inspect import inspect_file
from wuji_tactile_device.recording.repair import recover
from wuji_tactile_device.recording.replay import window_ns
from wuji_tactile_device.streams.base import Stream
from wuji_tactile_device.streams.inproc import InProcessBus
from wuji_tactile_device.streams.tracker import TactileTracker

MEMORY_LIMIT_MB = 200  # peak RSS of one CLI command on any hostile file

# Runs the CLI and reports the process's own peak RSS, even when the command dies with a traceback.
# VmHWM, not ru_maxrss: Linux carries the forking parent's (pytest's) peak into ru_maxrss across exec.
_CLI = ("import resource, sys\n"
        "from wuji_tactile_device.cli import main\n"
        "def peak_kb():\n"
        "    try:\n"
        "        with open('/proc/self/status') as f:\n"
        "            return next(int(ln.split()[1]) for ln in f if ln.startswith('VmHWM:'))\n"
        "    except (OSError, StopIteration):\n"
        "        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "try:\n"
        "    rc = main(sys.argv[1:])\n"
        "finally:\n"
        "    print(f'maxrss_kb={peak_kb()}', file=sys.stderr)\n"
        "sys.exit(rc)\n")


def run_cli(*args, timeout: float = 60):
    """(exit code, stdout, stderr without the RSS line, peak RSS in MB) of `wuji-tactile *args`."""
    env = dict(os.environ, WUJI_TELEMETRY_DISABLE="1")
    r = subprocess.run([sys.executable, "-c", _CLI, *map(str, args)], capture_output=True, text=True,
                       timeout=timeout, env=env)
    m = re.search(r"maxrss_kb=(\d+)\n?", r.stderr)
    assert m, r.stderr[-2000:]
    return r.returncode, r.stdout, r.stderr.replace(m.group(0), ""), int(m.group(1)) / 1024


def one_line_error(stderr: str, command: str) -> str:
    """The single error line of a failed command (no traceback)."""
    assert "Traceback" not in stderr, stderr
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"wuji-tactile {command}: error: "), stderr
    return lines[0]


def replay_frames(path, **kwargs) -> list:
    """Every frame a tracker delivers from `path` (paced replays: until the replay is finished)."""
    with McapReplay(path, **kwargs) as replay:
        tr = TactileTracker("tactile/right", replay)
        frames = list(tr.frames())
        while not replay.finished:
            time.sleep(0.002)
            frames += tr.frames()
        return frames


def good_chunk(frames: int = 5, **kw) -> bytes:
    msgs, times = tactile_messages(frames, **kw)
    return chunk(tactile_definitions() + msgs, start=min(times) - 1, end=max(times))


# -- 1. decompression bombs and per-file work -------------------------------------------------
@pytest.fixture(scope="module")
def lz4_bomb(tmp_path_factory):
    """A good chunk, then an lz4 chunk announcing 1,000 bytes whose stream holds 300 MiB of zeros."""
    import lz4.frame

    head = tactile_definitions() + tactile_messages(3, t0=2_000_000_000)[0]
    head = head[:1000] if len(head) > 1000 else head
    comp = lz4.frame.LZ4FrameCompressor()
    parts = [comp.begin(), comp.compress(head)]
    zeros = bytes(1 << 20)
    parts += [comp.compress(zeros) for _ in range(300)]
    parts.append(comp.flush())
    bomb = chunk(head, compression="lz4", start=5, end=6, compressed=b"".join(parts))
    path = tmp_path_factory.mktemp("bomb") / "lz4_bomb.mcap"
    path.write_bytes(mcap_file(good_chunk(5), bomb))
    assert path.stat().st_size < 2 << 20
    return path


def test_lz4_bomb_is_refused_with_memory_bounded(lz4_bomb, tmp_path):
    rc, out, _, mb = run_cli("validate", lz4_bomb)
    assert rc == 1 and "decompresses to more than the" in out and "decompression bomb" in out, out
    assert mb < MEMORY_LIMIT_MB, mb
    rc, out, _, mb = run_cli("recover", lz4_bomb, tmp_path / "r.mcap")
    assert rc == 1 and "tactile/right: 5" in out and "decompression bomb" in out, out
    assert mb < MEMORY_LIMIT_MB, mb
    with McapReplay(lz4_bomb) as replay:
        tr = TactileTracker("tactile/right", replay)
        delivered = 0
        with pytest.raises(CorruptChunkError, match="decompression bomb"):
            while not replay.finished:
                delivered += tr.update()
    assert delivered == 5


@pytest.fixture(scope="module")
def tiny_records(tmp_path_factory):
    """Chunks of 32 MiB (honestly announced, CRC right) of empty data messages: millions of records in ~20 KB."""
    one = message(1, 0, 5, 5, b"")
    records = one * ((31 << 20) // len(one))
    path = tmp_path_factory.mktemp("tiny") / "tiny.mcap"
    c = chunk(tactile_definitions() + records, start=5, end=5)
    path.write_bytes(mcap_file(*[c] * 6))
    assert path.stat().st_size < 64 << 10
    return path


def test_file_of_tiny_records_stops_at_the_per_file_work_bound(tiny_records, tmp_path):
    t0 = time.monotonic()
    rc, out, _, mb = run_cli("validate", tiny_records)
    assert rc == 1 and "past its limit of 200000" in out and "the rest of the file is not checked" in out, out
    assert mb < MEMORY_LIMIT_MB, mb
    rc, out, _, mb = run_cli("recover", tiny_records, tmp_path / "r.mcap")
    assert rc == 1 and "lost: everything after" in out and "a file of tiny records" in out, out
    assert mb < MEMORY_LIMIT_MB, mb
    with pytest.raises(ReadLimitError, match="a file of tiny records"):
        replay_frames(tiny_records)
    assert time.monotonic() - t0 < 60


def test_chunk_announcing_more_than_the_chunk_cap_is_refused_before_decompressing(tmp_path):
    path = tmp_path / "huge.mcap"
    records = tactile_definitions() + tactile_messages(3)[0]
    path.write_bytes(mcap_file(chunk(records, declared=1 << 40), good_chunk(4)))
    report = inspect_file(path)
    assert any("announces 1099511627776 uncompressed bytes, more than the 32 MiB" in p for p in report.problems)


# -- 2. no tactile collection ------------------------------------------------------------------
def test_file_without_collections_ends_replay_at_once_and_is_not_valid(tmp_path):
    magic_only = tmp_path / "magic.mcap"
    magic_only.write_bytes(b"\x89MCAP0\r\n")
    aux_only = tmp_path / "aux.mcap"
    aux_only.write_bytes(mcap_file(chunk(schema(1, "x", "jsonschema", b"{}") + channel(1, 1, "aux", "json", {})
                                         + message(1, 0, 5, 5, b"{}"))))
    with pytest.warns(RecordingWarning, match="ends without a footer"):
        replay = McapReplay(magic_only)
    assert replay.collections == () and replay.finished
    replay.close()
    with pytest.raises(RecordingError, match=r"aux.mcap holds no tactile collections \(no channel .*nothing to replay"):
        McapReplay(aux_only)
    sound = inspect_file(aux_only)
    assert sound.ok and sound.collections == [] and not sound.valid  # a sound file, but not a tactile recording
    for path in (magic_only, aux_only):
        rc, out, _, _ = run_cli("validate", path)
        assert rc == 1 and "INVALID" in out and "no tactile collection" in out, out
    rc, out, err, _ = run_cli("replay", magic_only, timeout=60)  # used to spin at 100 % CPU forever
    assert rc == 1 and "Traceback" not in err and "no frame" in err  # an empty replay is an error (N3)
    rc, _, err, _ = run_cli("replay", aux_only, timeout=60)
    assert rc == 1 and "holds no tactile collections" in one_line_error(err, "replay")


# -- 3. decoders bounded by size in inspect/validate -------------------------------------------
def test_inspect_decodes_metadata_with_the_trackers_size_limit(tmp_path):
    path = tmp_path / "bigmeta.mcap"
    big = encode_metadata_record(make_metadata(6000), DeviceDataTimestamp(5, 5, 5))  # ~320 kB > 256 KiB
    msgs, _ = tactile_messages(3)
    path.write_bytes(mcap_file(chunk(tactile_definitions() + msgs + message(2, 1, 9, 9, big) * 20, start=5, end=9)))
    report = inspect_file(path)
    assert report.problem_count == 20 and len(big) > 256 * 1024
    assert "exceeds the limit of 262144 bytes" in report.problems[0], report.problems[0]


# -- 5. recorder per-session state -------------------------------------------------------------
def test_recorder_state_is_bounded_per_session(tmp_path, monkeypatch):
    monkeypatch.setattr(recorder_module, "MAX_SESSIONS_PER_COLLECTION", 16)
    rec = McapRecorder(tmp_path / "s.mcap")
    data = encode_tactile_record(np.zeros((4, 3), np.float32), DeviceDataTimestamp(10, 10, 10))
    for session in range(40):  # all sending at once: past the cap, newcomers are refused
        if session < 16:
            assert rec.write("c", Stream.DATA, data, session, 0) == 1
        else:
            with pytest.raises(RecordingError, match=r"would be session 17 of this recording \(at most 16 at once"):
                rec.write("c", Stream.DATA, data, session, 0)
    assert sum(map(len, rec._sessions["c"])) == 16
    # 40 producer sessions each announcing a 1 MB metadata: only digests of the last 64 are kept
    payload = encode_metadata_record(make_metadata(20000), DeviceDataTimestamp(5, 5, 5))
    assert len(payload) > 1_000_000
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for session in range(200, 240):
        monkeypatch.setattr(recorder_module, "MAX_SESSIONS_PER_COLLECTION", 10_000)
        rec.write("m", Stream.METADATA, payload, session, 0)
        rec.flush()
    kept = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert kept < 8 << 20, kept  # 40 MB of payload went to the file, not into the recorder
    small = encode_metadata_record(make_metadata(4), DeviceDataTimestamp(5, 5, 5))
    for session in range(1000, 1100):
        rec.write("m", Stream.METADATA, small, session, 0)
    assert len(rec._last_metadata) == recorder_module.MAX_METADATA_SESSIONS == 64
    rec.close()


# -- 6. far-future times, absurd speeds and windows --------------------------------------------
def test_far_future_log_time_gives_a_bounded_wait(tmp_path):
    path = tmp_path / "future.mcap"
    times = [1_000_000_000 + i * 10_000_000 for i in range(5)] + [2**62]
    msgs, _ = tactile_messages(6, times=times)
    path.write_bytes(mcap_file(chunk(tactile_definitions() + msgs, start=1, end=2**62)))
    t0 = time.monotonic()
    with pytest.warns(RecordingWarning, match=r"recorded time jumps by 4611686017.387 s before 4611686018427387904 ns; played as 0.2 s"):
        frames = replay_frames(path, speed=1.0, max_gap_s=0.2)
    assert [f.timestamp.available_time_local_common_clock for f in frames] == times
    assert time.monotonic() - t0 < 5


@pytest.mark.parametrize("speed", [0, -1, math.nan, math.inf, 1e-300, True])
def test_absurd_speed_is_a_value_error(tmp_path, speed):
    path = tmp_path / "s.mcap"
    path.write_bytes(mcap_file(good_chunk(2)))
    with pytest.raises(ValueError, match="speed must be None"):
        McapReplay(path, speed=speed)


def test_window_in_seconds_refuses_non_finite_bounds():
    assert window_ns(100, 1.5, 2.0) == (1_500_000_100, 2_000_000_100)
    assert window_ns(None, 1.0, None) == (None, None)
    for start, end in ((math.nan, None), (None, math.inf), (-1.0, None), (2.0, 1.0)):
        with pytest.raises(ValueError, match="replay window"):
            window_ns(0, start, end)


# -- 7. the recorder survives a peer's bad sample ----------------------------------------------
def test_recorder_survives_and_counts_a_peers_bad_samples(tmp_path, caplog):
    bus = InProcessBus()
    path = tmp_path / "peer.mcap"
    rec = McapRecorder(path)
    rec.add_collection(bus, "tactile/right")
    bad = bus.open_producer("tactile/right", 0xBAD)
    good = bus.open_producer("tactile/right", 0x600D)
    meta = encode_metadata_record(make_metadata(4), DeviceDataTimestamp(5, 5, 5))
    good.publish(Stream.METADATA, meta, 0)
    with caplog.at_level(logging.WARNING, logger="wuji_tactile_device.recording.recorder"):
        for i in range(10):
            bad.publish(Stream.DATA, encode_tactile_record(np.zeros((4, 3)), DeviceDataTimestamp(-5 - i, 1, 1)), i)
            good.publish(Stream.DATA, encode_tactile_record(np.ones((4, 3)), DeviceDataTimestamp(10 + i, 10 + i, 0)), i)
            rec.poll()
    rec.close()
    assert rec.counters.refused_samples == 10 and rec.counters.written_data == 10
    warned = [r for r in caplog.records if "refused a sample of producer session 0000000000000bad" in r.message]
    assert len(warned) == 1 and "negative timestamp" in warned[0].message
    frames = replay_frames(path)
    assert [f.timestamp.available_time_local_common_clock for f in frames] == list(range(10, 20))


# -- 8. missing or under-counting message index ------------------------------------------------
@pytest.mark.parametrize("index", ["missing_channel", "under_count", "over_count"])
def test_message_index_that_disagrees_with_the_chunk_loses_nothing(tmp_path, index):
    msgs, times = tactile_messages(50)
    c = chunk(tactile_definitions() + msgs, start=times[0] - 1, end=times[-1])
    entries = [(t, 0) for t in times]
    idx = {"missing_channel": message_index(2, [(1, 0)]),
           "under_count": message_index(2, [(1, 0)]) + message_index(1, entries[:5]),
           "over_count": message_index(2, [(1, 0)]) + message_index(1, entries * 2)}[index]
    path = tmp_path / f"{index}.mcap"
    path.write_bytes(mcap_file(c, idx))
    with pytest.warns(RecordingWarning, match="message index of chunk 0 .* disagrees with its records"):
        frames = replay_frames(path)
    assert [f.timestamp.available_time_local_common_clock for f in frames] == times
    report = inspect_file(path)
    listed = {"missing_channel": "lists 1 on channel 2,", "under_count": "lists 5 on channel 1, 1 on channel 2,",
              "over_count": "lists 100 on channel 1, 1 on channel 2,"}[index]
    assert not report.ok and report.problem_count == 1
    assert f"{listed} the chunk holds 50 on channel 1, 1 on channel 2" in report.problems[0], report.problems[0]


# -- 9. damaged framing: recover keeps every intact chunk --------------------------------------
@pytest.mark.parametrize("offset,value", [(14, 0x40), (9, 0x00), (25, 0xFF)],
                         ids=["header-length-high", "header-length-low", "library-string"])
def test_flipped_header_byte_keeps_every_chunk(tmp_path, offset, value):
    path = tmp_path / "ok.mcap"
    sent, _, _ = record(path, 40, flush_every=10, num_taxels=12)
    data = bytearray(path.read_bytes())
    assert data[8] == 0x01  # the header record follows the magic
    data[offset] = value if data[offset] != value else value ^ 1
    bad = tmp_path / "bad.mcap"
    bad.write_bytes(bytes(data))
    rc, out, _, _ = run_cli("recover", bad, tmp_path / "fixed.mcap")
    assert rc == 1 and "tactile/right: 40" in out and "damaged:" in out, out
    assert len([m for m in official_messages(tmp_path / "fixed.mcap") if m[0] == "tactile/right"]) == 40
    with pytest.warns(RecordingWarning, match="is damaged"):
        frames = replay_frames(bad)
    assert [f.forces.tobytes() for f in frames] == [s.tobytes() for s in sent["tactile/right"]]
    assert not inspect_file(bad).ok


# -- 10/11. output targets ---------------------------------------------------------------------
def test_recorder_close_on_a_full_disk_is_one_recording_error(tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system to simulate a full disk")
    rec = McapRecorder(tmp_path / "x.mcap")
    rec.write("c", Stream.METADATA, encode_metadata_record(make_metadata(12), DeviceDataTimestamp(1, 1, 1)), 1, 0)
    full = os.open("/dev/full", os.O_WRONLY)
    os.dup2(full, rec._file.fileno())  # the disk fills up under the open recorder
    os.close(full)
    with pytest.raises(RecordingError, match=r"cannot finish .*x.mcap: No space left on device \(the chunks written "
                                             r"so far are recoverable"):
        rec.close()


def test_recover_to_bad_targets_is_one_line_and_never_replaces_a_special_file(tmp_path):
    src = tmp_path / "src.mcap"
    record(src, 5, num_taxels=12)
    fifo = tmp_path / "fifo.mcap"
    os.mkfifo(fifo)
    targets = {tmp_path / "no" / "such" / "dir.mcap": "directory .*no/such does not exist",
               tmp_path: "is a directory", fifo: "is a FIFO"}
    if os.geteuid() == 0:  # a character device like /dev/null, made in the test's own directory
        dev = tmp_path / "null.mcap"
        os.mknod(dev, 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        targets[dev] = "is a device"
    for target, why in targets.items():
        with pytest.raises(RecordingError, match=why):
            recover(src, target, overwrite=True)
        rc, _, err, _ = run_cli("recover", "--overwrite", src, target)
        assert rc == 1 and re.search(why, one_line_error(err, "recover"))
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    if os.geteuid() == 0:
        assert stat.S_ISCHR(os.stat(tmp_path / "null.mcap").st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["src.mcap", "fifo.mcap"]
                                                                + (["null.mcap"] if os.geteuid() == 0 else []))


def test_recover_writes_a_temporary_file_beside_the_target_with_normal_permissions(tmp_path):
    src = tmp_path / "src.mcap"
    record(src, 5, num_taxels=12)
    out = tmp_path / "out.mcap"
    recover(src, out)
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o666 & ~umask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.mcap", "src.mcap"]


# -- 12. missing schema record -----------------------------------------------------------------
def test_missing_schema_record_is_reported_by_validate_replay_and_recover(tmp_path):
    from wuji_tactile_device.contract import bfbs

    msgs, times = tactile_messages(10)
    defs = (schema(2, "core.TactileMetadataRecord", "flatbuffer", bfbs("TactileMetadataRecord"))
            + channel(1, 9, "tactile/right", "flatbuffer", {"producer_session": "aa"})
            + channel(2, 2, "tactile/right/metadata", "flatbuffer", {"producer_session": "aa"}))
    path = tmp_path / "noschema.mcap"
    path.write_bytes(mcap_file(chunk(defs + msgs, start=1, end=times[-1])))
    why = "refers to schema 9, which is not in the file"
    report = inspect_file(path)
    assert not report.ok and any(why in p for p in report.problems), report.problems
    with pytest.raises(RecordingError, match=why):
        McapReplay(path)
    rep = recover(path, tmp_path / "r.mcap")
    assert not rep.lossless and rep.missing_schemas == {"tactile/right": 10}
    assert "lost: 10 messages on 'tactile/right', whose channel refers to a schema record missing" in rep.text()


# -- 13. producer-session ids ------------------------------------------------------------------
@pytest.mark.parametrize("session", ["-1", "f" * 40, "0x1", " 1", "1_0"])
def test_malformed_producer_session_is_refused_by_validate_and_replay(tmp_path, session):
    path = tmp_path / "session.mcap"
    msgs, _ = tactile_messages(3)
    path.write_bytes(mcap_file(chunk(tactile_definitions(session=session) + msgs, start=1, end=2)))
    with pytest.raises(RecordingError, match="not 1 to 16 hexadecimal digits"):
        McapReplay(path)
    report = inspect_file(path)
    assert not report.ok and any("not 1 to 16 hexadecimal digits" in p for p in report.problems)


# -- 14. deeply nested JSON --------------------------------------------------------------------
def test_deeply_nested_json_is_a_reported_problem_not_a_recursion_error(tmp_path):
    path = tmp_path / "deep.mcap"
    msgs, _ = tactile_messages(2)
    deep = b"[" * 200_000 + b"]" * 200_000
    aux = schema(7, "aux", "jsonschema", b'{"type": "array"}') + channel(7, 7, "tactile/right/aux", "json", {})
    path.write_bytes(mcap_file(chunk(tactile_definitions() + msgs + aux + message(7, 0, 9, 9, deep)
                                     + message(7, 1, 9, 9, b'[{"a": "[[[["}]'), start=1, end=9)))
    report = inspect_file(path)
    assert report.problem_count == 1, report.problems
    assert "nested 200000 levels deep, more than the 64 accepted" in report.problems[0]


# -- 15. two hands, one stopped early, file cut ------------------------------------------------
def test_replay_of_a_cut_two_hand_file_holds_at_most_a_few_chunks(tmp_path):
    path = tmp_path / "two.mcap"
    meta = encode_metadata_record(make_metadata(176), DeviceDataTimestamp(1, 1, 1))
    rng = np.random.default_rng(3)
    with McapRecorder(path) as rec:
        for cid in ("tactile/left", "tactile/right"):
            rec.write(cid, Stream.METADATA, meta, 1, 0)
        for i in range(3000):
            t = 10 + i
            for cid in (("tactile/left", "tactile/right") if i < 20 else ("tactile/right",)):
                rec.write(cid, Stream.DATA, encode_tactile_record(rng.normal(size=(176, 3)), DeviceDataTimestamp(t, t, t)),
                          1, i)
    data = path.read_bytes()
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(data[: int(len(data) * 0.9)])
    assert len(data) > 4 << 20
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecordingWarning)
        replay = McapReplay(cut)
        tracemalloc.start()
        n = sum(1 for _ in replay.events())
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        replay.close()
    assert n > 2500
    assert peak < 3 << 20, peak  # the whole file's messages would be > 5 MB


# -- 18. chunks capped by size; a cut keeps close to its share ---------------------------------
def _press_like(rec: McapRecorder, frames: int) -> list[np.ndarray]:
    """A fast recording of sparse 176-taxel frames (most taxels unloaded, as in a press)."""
    rng = np.random.default_rng(0)
    rec.write("tactile/right", Stream.METADATA, encode_metadata_record(make_metadata(176), DeviceDataTimestamp(1, 1, 1)), 7, 0)
    sent = []
    for i in range(frames):
        f = np.zeros((176, 3), np.float32)
        f[:40] = rng.normal(0, 0.2, (40, 3))
        t = 10_000_000 * (i + 1)
        rec.write("tactile/right", Stream.DATA, encode_tactile_record(f, DeviceDataTimestamp(t, t, t)), 7, i)
        sent.append(f)
    return sent


def test_a_60_percent_cut_of_a_fast_recording_keeps_close_to_60_percent(tmp_path):
    path = tmp_path / "fast.mcap"
    with McapRecorder(path) as rec:  # as fast as possible: the 0.5 s flush period never elapses
        sent = _press_like(rec, 1300)
    data = path.read_bytes()
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(data[: int(len(data) * 0.6)])
    report = recover(cut, tmp_path / "r.mcap")
    kept = report.messages_per_topic.get("tactile/right", 0)
    assert kept >= 0.55 * 1300, report.text()
    frames = replay_frames(tmp_path / "r.mcap")
    assert [f.forces.tobytes() for f in frames] == [s.tobytes() for s in sent[:kept]]


def test_the_complete_records_of_a_cut_off_chunk_are_salvaged(tmp_path):
    path = tmp_path / "one_chunk.mcap"
    # one big chunk, as before the size cap and the data-time flush
    with McapRecorder(path, chunk_size=64 << 20, flush_period_s=1e6) as rec:
        sent = _press_like(rec, 1300)
    data = path.read_bytes()
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(data[: int(len(data) * 0.6)])
    report = recover(cut, tmp_path / "r.mcap")
    assert report.chunks_kept == 0 and report.salvaged_messages >= 0.4 * 1300, report.text()
    assert "salvaged:" in report.text() and "not CRC-checked" in report.text()
    with pytest.warns(RecordingWarning):
        frames = replay_frames(cut)
    assert len(frames) == report.salvaged_messages - 1  # all but the metadata
    assert [f.forces.tobytes() for f in frames] == [s.tobytes() for s in sent[: len(frames)]]


# -- 17 (contract part). decoders given the wrong type -----------------------------------------
@pytest.mark.parametrize("value", ["not bytes" * 10, np.zeros(100, np.uint8), 12, None])
def test_decoder_given_a_non_buffer_raises_a_typed_error(value):
    with pytest.raises(InvalidMessageError, match=r"TactileDataArrayRecord: expected a bytes-like buffer, got"):
        decode_tactile_record(value)


def test_chunk_records_are_bounds_checked(tmp_path):
    """A chunk whose records claim more bytes than it holds is a CorruptChunkError, never struct.error."""
    records = tactile_definitions() + tactile_messages(2)[0]
    lying = records + b"\x05" + (1 << 40).to_bytes(8, "little") + b"\x00" * 10
    path = tmp_path / "lying.mcap"
    path.write_bytes(mcap_file(chunk(lying, start=1, end=2)))
    with pytest.raises(CorruptChunkError, match="runs past the chunk end"):
        list(McapReplay(path).events())
    assert zlib.crc32(lying)  # the CRC is right: only the framing check can refuse it


# -- 17 (library part of CLI arguments). joint files the playback scenario is given -------------
def test_bad_joint_files_are_producer_errors(tmp_path):
    from wuji_tactile_device.errors import ProducerError
    from wuji_tactile_device.producers.sim.scenarios import load_joint_file

    binary = tmp_path / "b.csv"
    binary.write_bytes(bytes(range(256)))
    utf16 = tmp_path / "u.csv"
    utf16.write_text(",".join(["0.1"] * 20), encoding="utf-16")
    obj = tmp_path / "o.npy"
    with open(obj, "wb") as f:
        np.save(f, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    strings = tmp_path / "s.npy"
    np.save(strings, np.array([["x"] * 20]))
    corrupt = tmp_path / "c.npy"
    corrupt.write_bytes(b"\x93NUMPY garbage")
    cases = {tmp_path: "is not a regular file", binary: "is not UTF-8 text", utf16: "is not UTF-8 text",
             obj: "is not a readable numeric .npy array", strings: "need a numeric array",
             corrupt: "is not a readable numeric .npy array"}
    for path, why in cases.items():
        with pytest.raises(ProducerError, match=why):
            load_joint_file(path)


@pytest.mark.parametrize("rate", [0.0, -1.0, math.nan, math.inf, 1e-300, 1e300])
def test_absurd_playback_rate_is_a_value_error(rate):
    from wuji_tactile_device.producers.sim.scenarios import PlaybackScenario

    with pytest.raises(ValueError, match=r"playback rate must be a finite number of rows per second in \[0.001, 1e6\]"):
        PlaybackScenario(np.zeros((3, 20)), rate)


def test_validate_checks_every_file_even_after_one_that_cannot_be_read(tmp_path, capsys):
    from wuji_tactile_device.cli import main

    good = tmp_path / "good.mcap"
    record(good, 3, num_taxels=12)
    fifo = tmp_path / "fifo.mcap"
    os.mkfifo(fifo)  # opening it for reading would block: it must be refused before open()
    assert main(["validate", str(fifo), str(tmp_path), str(good)]) == 1
    out = capsys.readouterr().out
    assert f"{fifo}: INVALID\n  {fifo} is not a regular file" in out
    assert f"{tmp_path}: INVALID\n  {tmp_path} is not a regular file" in out
    assert f"{good}: valid (" in out


def test_top_level_record_floods_are_counted_not_kept(tmp_path):
    """20,000 file metadata records and 500 malformed schema records: bounded lists, exact counts."""
    from mcap_helpers import rec
    from wuji_tactile_device.recording.scan import MAX_LISTED, MAX_METADATA_RECORDS

    md = rec(0x0C, b"\x01\x00\x00\x00m\x00\x00\x00\x00")  # name "m", empty map
    bad_schema = rec(0x03, b"\x01\x00\xff\xff\xff\xff")  # a name length past the record
    path = tmp_path / "flood.mcap"
    path.write_bytes(mcap_file(good_chunk(3), md * 20_000, bad_schema * 500))
    report = inspect_file(path)
    sc = report.scan
    assert len(sc.metadata) == MAX_METADATA_RECORDS and sc.metadata_ignored == 20_000 - MAX_METADATA_RECORDS
    assert len(sc.damage) == MAX_LISTED and sc.damage_count == 500
    assert "schema name needs 4294967295 bytes" in sc.damage[0]
    assert report.problem_count == 501 and not report.ok
    rep = recover(path, tmp_path / "r.mcap")
    assert rep.messages_per_topic["tactile/right"] == 3 and rep.damage_count == 500
    assert "... and 400 more damaged records" in rep.text()


@pytest.mark.parametrize("edit", ["channel_999", "count_5"])
def test_lying_index_in_a_complete_recorded_file_loses_nothing(tmp_path, edit):
    """A file with its summary, whose data-channel message indexes are edited in place (same size)."""
    import struct

    path = tmp_path / "ok.mcap"
    sent, _, _ = record(path, 40, flush_every=10, num_taxels=12)
    data = bytearray(path.read_bytes())
    pos, edited = 8, 0
    while pos + 9 <= len(data):
        opcode, length = struct.unpack_from("<BQ", data, pos)
        if opcode == 0x07 and struct.unpack_from("<I", data, pos + 11)[0] // 16 >= 10:  # a data channel's index
            if edit == "channel_999":
                struct.pack_into("<H", data, pos + 9, 999)
            else:
                struct.pack_into("<I", data, pos + 11, 5 * 16)
            edited += 1
        if opcode == 0x02:
            break
        pos += 9 + length
    assert edited == 4
    bad = tmp_path / "bad.mcap"
    bad.write_bytes(bytes(data))
    with pytest.warns(RecordingWarning, match="disagrees with its records"):
        frames = replay_frames(bad)
    assert [f.forces.tobytes() for f in frames] == [s.tobytes() for s in sent["tactile/right"]]
    report = inspect_file(bad)
    assert report.problem_count == 4 and "the chunk holds 10 on channel 2" in report.problems[1], report.problems
