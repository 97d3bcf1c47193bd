"""True time: every recording carries clock anchors (monotonic + realtime read together), and log
times convert to epoch times — checked against an independently stamped epoch source."""
from __future__ import annotations

import time

import numpy as np
import pytest
from mcap.reader import make_reader

from wuji_tactile_device.errors import RecordingError
from wuji_tactile_device.producers.sim.layout_metadata import sim_metadata
from wuji_tactile_device.contract.records import decode_tactile_record
from wuji_tactile_device.recording import McapRecorder
from wuji_tactile_device.recording.clock_anchor import (CLOCK_ANCHOR_METADATA_NAME, ClockAnchor, log_time_to_epoch_ns,
                                                        read_clock_anchors, sample_clock_anchor, wall_clock_span)
from wuji_tactile_device.streams import InProcessBus, TactilePublisher

CID = "tactile/right"


def test_recording_aligns_with_an_independent_epoch_source_within_1ms(tmp_path):
    path = tmp_path / "run.mcap"
    bus = InProcessBus()
    epoch_stamps = []  # what e.g. a camera driver stamps on the epoch clock at the same instants
    with McapRecorder(path) as rec, TactilePublisher(CID, sim_metadata("right"), bus) as pub:
        rec.add_collection(bus, CID)
        forces = np.zeros((176, 3), np.float32)
        for _ in range(20):
            pub.publish(forces, sample_time_ns=time.monotonic_ns())
            epoch_stamps.append(time.time_ns())
            rec.poll()
            time.sleep(0.005)
    anchors = read_clock_anchors(path)
    assert len(anchors) >= 2  # at start and at close
    with open(path, "rb") as f:
        messages = [m for _, ch, m in make_reader(f).iter_messages(topics=[CID])]
    assert len(messages) == 20
    # the default log-time base is the epoch: the log times line up with the camera's stamps as they are
    error = np.abs(np.array([m.log_time for m in messages]) - np.array(epoch_stamps))
    assert error.max() < 1_000_000, f"log times off the epoch stamps by up to {error.max() / 1e6:.3f} ms"
    # and the records' own (monotonic) sample times go to the epoch through the clock anchors
    sample = np.array([decode_tactile_record(m.data).timestamp.sample_time_local_common_clock for m in messages])
    error = np.abs(log_time_to_epoch_ns(sample, anchors) - np.array(epoch_stamps))
    assert error.max() < 1_000_000, f"monotonic→epoch misaligned by up to {error.max() / 1e6:.3f} ms"
    start, end = wall_clock_span(path)
    assert abs(start - epoch_stamps[0]) < 1_000_000 and abs(end - epoch_stamps[-1]) < 1_000_000


def test_anchor_written_at_start_periodically_and_at_close(tmp_path):
    path = tmp_path / "long.mcap"
    with McapRecorder(path) as rec:
        assert len(read_clock_anchors(path)) == 1, "the start anchor is on disk at once"
        rec._last_anchor_ns -= 61 * 10**9  # a minute later
        rec.maybe_flush()
    with open(path, "rb") as f:
        names = [m.name for m in make_reader(f).iter_metadata()]
    assert names.count(CLOCK_ANCHOR_METADATA_NAME) == 3


def test_sampled_anchor_pairs_the_clocks():
    anchor = sample_clock_anchor()
    assert 0 <= anchor.uncertainty_ns < 1_000_000
    assert abs(anchor.offset_ns - (time.time_ns() - time.monotonic_ns())) < 5_000_000


def test_offset_is_interpolated_between_anchors_and_held_outside():
    anchors = [ClockAnchor(1_000, 5_000, 0), ClockAnchor(3_000, 7_100, 0)]  # offset 4000 → 4100
    assert log_time_to_epoch_ns(1_000, anchors) == 5_000
    assert log_time_to_epoch_ns(2_000, anchors) == 2_000 + 4_050
    assert log_time_to_epoch_ns(500, anchors) == 4_500
    assert log_time_to_epoch_ns(10_000, anchors) == 14_100
    np.testing.assert_array_equal(log_time_to_epoch_ns([1_000, 3_000], anchors), [5_000, 7_100])
    with pytest.raises(RecordingError, match="no clock anchor"):
        log_time_to_epoch_ns(1, [])


def test_inspect_shows_the_recordings_wall_clock_start_and_end(tmp_path):
    import datetime

    from wuji_tactile_device.recording import inspect_file

    path = tmp_path / "wall.mcap"
    bus = InProcessBus()
    before = time.time_ns()
    with McapRecorder(path) as rec, TactilePublisher(CID, sim_metadata("right"), bus) as pub:
        rec.add_collection(bus, CID)
        for _ in range(10):
            pub.publish(np.zeros((176, 3), np.float32), sample_time_ns=time.monotonic_ns())
            rec.poll()
            time.sleep(0.02)
    after = time.time_ns()
    report = inspect_file(path)
    start, end = report.wall_clock
    assert before <= start <= end <= after and end - start >= 9 * 20_000_000 * 0.9
    def utc(ns: int) -> str:
        return datetime.datetime.fromtimestamp(ns / 1e9, datetime.UTC).isoformat(timespec="milliseconds")

    assert f"wall clock: {utc(start)} .. {utc(end)} UTC" in report.text()
