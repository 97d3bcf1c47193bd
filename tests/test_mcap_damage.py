"""Damaged recordings: truncation anywhere keeps every complete chunk (with a warning saying what
was lost), a flipped bit is caught with the chunk's time range, non-MCAP input is refused by name,
and recover writes a valid file. Expected values come from the official `mcap` reader on the
intact file."""
from __future__ import annotations

import struct
import subprocess
import sys

import numpy as np
import pytest

from mcap_helpers import official_chunks, official_messages, record
from wuji_tactile_device.errors import CorruptChunkError, RecordingError, RecordingWarning
from wuji_tactile_device.recording import McapReplay
from wuji_tactile_device.recording.inspect import inspect_file
from wuji_tactile_device.recording.repair import recover
from wuji_tactile_device.streams.tracker import TactileTracker
from wuji_tactile_device.streams.base import Stream

FRAMES, PER_CHUNK = 120, 15  # 8 chunks of 15 frames (the first also holds the metadata)


@pytest.fixture(scope="module")
def intact(tmp_path_factory):
    path = tmp_path_factory.mktemp("damage") / "intact.mcap"
    sent, md, _ = record(path, FRAMES, flush_every=PER_CHUNK, num_taxels=40)
    chunks = official_chunks(path)
    assert len(chunks) == FRAMES // PER_CHUNK
    return path, sent["tactile/right"], md, chunks


def _replay_frames(path):
    with McapReplay(path) as replay:
        tr = TactileTracker("tactile/right", replay)
        frames = []
        while not replay.finished:
            if tr.update():
                frames.append(tr.get_data())
    return frames, tr


def _cut_points(size, chunks):
    points = set(range(0, size, max(1, size // 37)))
    for c in chunks:
        end = c.chunk_start_offset + c.chunk_length
        points |= {c.chunk_start_offset, c.chunk_start_offset + 1, c.chunk_start_offset + 30, end - 1, end, end + 1}
    return sorted(p for p in points if 8 <= p < size)


def test_truncation_at_many_points_keeps_every_complete_chunk(intact, tmp_path):
    path, sent, md, chunks = intact
    data = path.read_bytes()
    points = _cut_points(len(data), chunks)
    assert len(points) > 60
    for cut in points:
        cut_path = tmp_path / "cut.mcap"
        cut_path.write_bytes(data[:cut])
        complete = [c for c in chunks if c.chunk_start_offset + c.chunk_length <= cut]
        expected = PER_CHUNK * len(complete)
        with pytest.warns(RecordingWarning) as caught:
            frames, tr = _replay_frames(cut_path)
        text = str(caught[0].message)
        summary_start = struct.unpack_from("<Q", data, len(data) - 37 + 9)[0]  # footer field, per the MCAP spec
        if cut < summary_start:  # the data end record was not reached: more data may have followed
            assert str(cut_path) in text and "lost: the last" in text
        else:  # only the summary is cut off
            assert "all 8 chunks of data are intact" in text
        cut_chunk = next((c for c in chunks if c.chunk_start_offset < cut < c.chunk_start_offset + c.chunk_length), None)
        if cut_chunk is not None and cut - cut_chunk.chunk_start_offset >= 9 + 16:  # its time range is readable
            assert f"{cut_chunk.message_start_time} .. {cut_chunk.message_end_time} ns" in text
        assert len(frames) == expected, cut
        assert [f.sequence for f in frames] == list(range(expected))
        assert all(f.forces.tobytes() == s.tobytes() for f, s in zip(frames, sent[:expected], strict=True))  # a prefix survives
        if expected:
            assert tr.get_metadata() == md
        # recover writes a complete file with exactly those messages, readable by the official reader
        out = tmp_path / "rec.mcap"
        report = recover(cut_path, out, overwrite=True)
        assert report.messages_per_topic.get("tactile/right", 0) == expected
        assert not report.lossless
        official = official_messages(out)
        assert len([m for m in official if m[0] == "tactile/right"]) == expected


def test_recovering_an_intact_file_is_lossless_and_identical_in_content(intact, tmp_path):
    path = intact[0]
    report = recover(path, tmp_path / "copy.mcap")
    assert report.lossless and report.source_was_complete and "nothing lost" in report.text()
    assert official_messages(tmp_path / "copy.mcap") == official_messages(path)


def _flip(data: bytes, offset: int) -> bytes:
    b = bytearray(data)
    b[offset] ^= 0x10
    return bytes(b)


def test_bit_flipped_chunk_is_reported_with_its_time_range(intact, tmp_path):
    path, sent, md, chunks = intact
    data = path.read_bytes()
    bad = chunks[3]
    flipped = tmp_path / "flipped.mcap"
    flipped.write_bytes(_flip(data, bad.chunk_start_offset + bad.chunk_length - 200))  # inside its compressed data
    expected_range = f"{bad.message_start_time} .. {bad.message_end_time} ns"
    # replay delivers the intact chunks before it, then refuses loudly
    with McapReplay(flipped) as replay:
        tr = TactileTracker("tactile/right", replay)
        delivered = 0
        with pytest.raises(CorruptChunkError, match=expected_range) as err:
            while not replay.finished:
                delivered += tr.update()
    assert (err.value.start_ns, err.value.end_ns) == (bad.message_start_time, bad.message_end_time)
    assert delivered == 3 * PER_CHUNK
    report = inspect_file(flipped)
    assert not report.ok and report.problem_count == 1 and expected_range in report.problems[0]
    rec = recover(flipped, tmp_path / "fixed.mcap")
    assert rec.messages_per_topic["tactile/right"] == FRAMES - PER_CHUNK
    assert len(rec.corrupt_chunks) == 1 and expected_range in rec.corrupt_chunks[0]


def test_bit_flip_in_uncompressed_chunk_fails_the_crc(tmp_path):
    """Without compression nothing but the CRC can notice a flipped payload bit."""
    from conftest import make_metadata
    from wuji_tactile_device.contract import DeviceDataTimestamp, encode_metadata_record, encode_tactile_record
    from wuji_tactile_device.recording import McapRecorder

    path = tmp_path / "raw.mcap"
    md = make_metadata(12)
    with McapRecorder(path, compression="none", log_time_base="monotonic") as rec:
        rec.write("c", Stream.METADATA, encode_metadata_record(md, DeviceDataTimestamp(1, 1, 1)), 3, 0)
        for i in range(10):
            rec.write("c", Stream.DATA, encode_tactile_record(np.ones((12, 3), np.float32), DeviceDataTimestamp(10 + i, 10, 10)), 3, i)
    data = path.read_bytes()
    chunk = official_chunks(path)[0]
    payload_at = data.index(np.ones(12 * 3, np.float32).tobytes(), chunk.chunk_start_offset)
    bad = tmp_path / "bad.mcap"
    bad.write_bytes(_flip(data, payload_at + 5))
    with pytest.raises(CorruptChunkError, match=r"fails its CRC check .*") as err:
        list(McapReplay(bad).events())
    assert "log time 1 .. 19 ns" in str(err.value)


@pytest.mark.parametrize("content", [b"", b"hello, not a recording\n", bytes(range(256)) * 10,
                                     b"\x89MCAP0\r"], ids=["empty", "text", "binary", "short-magic"])
def test_non_mcap_input_is_refused_naming_the_file(tmp_path, content):
    path = tmp_path / "notes.txt"
    path.write_bytes(content)
    for action in (lambda: McapReplay(path), lambda: inspect_file(path), lambda: recover(path, tmp_path / "o.mcap")):
        with pytest.raises(RecordingError, match=rf"{path} is not an MCAP file"):
            action()
    assert not (tmp_path / "o.mcap").exists()


def test_missing_file_is_a_recording_error(tmp_path):
    with pytest.raises(RecordingError, match=r"cannot open .*nope.mcap: No such file"):
        McapReplay(tmp_path / "nope.mcap")


def test_cli_validate_recover_and_refusal(intact, tmp_path):
    path, _, _, chunks = intact
    data = path.read_bytes()
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(data[: chunks[5].chunk_start_offset + 100])
    cli = [sys.executable, "-m", "wuji_tactile_device.cli"]
    def run(*a: str) -> subprocess.CompletedProcess:
        return subprocess.run(cli + list(a), capture_output=True, text=True, timeout=60)

    ok = run("validate", str(path))
    assert ok.returncode == 0 and "valid (" in ok.stdout
    bad = run("validate", str(cut))
    assert bad.returncode == 1 and "INVALID" in bad.stdout and "truncated" in bad.stdout
    rec = run("recover", str(cut), str(tmp_path / "fixed.mcap"))
    assert rec.returncode == 1 and f"tactile/right: {5 * PER_CHUNK}" in rec.stdout and "lost:" in rec.stdout
    assert run("validate", str(tmp_path / "fixed.mcap")).returncode == 0
    notmcap = tmp_path / "x.txt"
    notmcap.write_text("plain text")
    r = run("inspect", str(notmcap))
    assert r.returncode == 1 and "is not an MCAP file" in r.stderr and "Traceback" not in r.stderr
    insp = run("inspect", str(path))
    assert insp.returncode == 0 and "core.TactileDataArrayRecord" in insp.stdout and f"{FRAMES:>8}" in insp.stdout
