"""Two hands at different rates replay strictly in log-time order when the consumer follows
`McapReplay.next_collection()` (what `wuji-tactile replay` printing needs; round-robin over the
trackers alternates the hands regardless of their rates)."""
from __future__ import annotations

import numpy as np

from wuji_tactile_device.contract.metadata import encode_metadata_record
from wuji_tactile_device.contract.naming import Stream
from wuji_tactile_device.contract.records import DeviceDataTimestamp, encode_tactile_record
from wuji_tactile_device.producers.sim.layout_metadata import sim_metadata
from wuji_tactile_device.recording import McapRecorder, McapReplay
from wuji_tactile_device.streams import TactileTracker


def _two_hands(path):
    """left at 100 Hz, right at 37 Hz, written in arrival order (interleaved by time)."""
    events = [(10_000_000 * k, "tactile/left") for k in range(60)] + \
             [(27_027_027 * k + 3_000_000, "tactile/right") for k in range(22)]
    events.sort()
    with McapRecorder(path) as rec:
        for cid, side in (("tactile/left", "left"), ("tactile/right", "right")):
            rec.write(cid, Stream.METADATA, encode_metadata_record(sim_metadata(side), DeviceDataTimestamp(0, 0, 0)), 1, 0)
        seq = {"tactile/left": 0, "tactile/right": 0}
        for t, cid in events:
            ts = DeviceDataTimestamp(t + 1, t + 1, t)
            rec.write(cid, Stream.DATA, encode_tactile_record(np.zeros((176, 3), np.float32), ts), 1, seq[cid])
            seq[cid] += 1
    return [(t + 1, cid) for t, cid in events]


def test_following_next_collection_gives_strict_log_time_order(tmp_path):
    path = tmp_path / "two.mcap"
    expected = _two_hands(path)
    with McapReplay(path) as replay:
        trackers = {cid: TactileTracker(cid, replay) for cid in replay.collections}
        seen = []
        while (cid := replay.next_collection()) is not None:
            assert trackers[cid].update() == 1
            seen.append((trackers[cid].get_data().timestamp.available_time_local_common_clock, cid))
        assert replay.finished or all(t.update() == 0 for t in trackers.values())
    assert seen == expected
    times = [t for t, _ in seen]
    assert times == sorted(times)


def test_round_robin_is_what_reorders_the_hands(tmp_path):
    """The defect next_collection() removes: alternating update() calls interleave by count."""
    path = tmp_path / "two.mcap"
    _two_hands(path)
    with McapReplay(path) as replay:
        trackers = [TactileTracker(cid, replay) for cid in replay.collections]
        times = []
        for _ in range(10):
            for tr in trackers:
                if tr.update():
                    times.append(tr.get_data().timestamp.available_time_local_common_clock)
    assert times != sorted(times)
