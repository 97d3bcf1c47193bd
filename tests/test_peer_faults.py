"""What another process publishes on a producer's own collection (24 R2, producer side): the
producer's Foxglove sink counts and skips a peer's faulty frames and reports them once."""
from __future__ import annotations

import logging

import numpy as np
import pytest

pytest.importorskip("foxglove", reason="the live view needs the optional foxglove-sdk (extra 'view')")

from wuji_tactile_device.contract import encode_tactile_record  # noqa: E402
from wuji_tactile_device.contract.metadata import encode_metadata_record  # noqa: E402
from wuji_tactile_device.contract.naming import Stream  # noqa: E402
from wuji_tactile_device.contract.records import DeviceDataTimestamp  # noqa: E402
from wuji_tactile_device.integrations.foxglove_live import FoxgloveSink  # noqa: E402
from wuji_tactile_device.producers.sim.layout_metadata import sim_metadata  # noqa: E402
from wuji_tactile_device.streams.inproc import InProcessBus  # noqa: E402
from wuji_tactile_device.streams.publisher import TactilePublisher  # noqa: E402

CID = "tactile/right"


def test_a_peers_nan_frames_on_the_producers_collection_are_counted_and_reported_once(tmp_path, caplog):
    md = sim_metadata("right")
    bus = InProcessBus()
    sink = FoxgloveSink(bus, [CID], serve=False, mcap_path=str(tmp_path / "v.mcap"), scene_rate_hz=None)
    real = TactilePublisher(CID, md, bus)
    real.publish(np.zeros((md.num_taxels, 3), np.float32), sample_time_ns=1_000)
    peer = bus.open_producer(CID, 0xBAD)
    ok = DeviceDataTimestamp(2_000, 2_000, 2_000)
    peer.publish(Stream.METADATA, encode_metadata_record(md, ok), 0)
    nan = np.zeros((md.num_taxels, 3), np.float32)
    nan[7, 1] = np.nan
    with caplog.at_level(logging.WARNING, logger="wuji_tactile_device.foxglove"):
        for sequence in (1, 2, 3):
            peer.publish(Stream.DATA, encode_tactile_record(nan, ok), sequence)
            sink.poll()  # never raises
        real.publish(np.ones((md.num_taxels, 3), np.float32) * 0.01, sample_time_ns=3_000)
        sink.poll()
        live = [r.getMessage() for r in caplog.records if r.name == "wuji_tactile_device.foxglove"]
        sink.close()
    warned = [r.getMessage() for r in caplog.records if r.name == "wuji_tactile_device.foxglove"]
    assert len(live) == 1, live  # the first one, when it happens
    assert "taxel 7" in live[0] and "000000000000bad" in live[0]
    assert len(warned) == 2, warned  # and one summary at the end
    assert "3 frame(s) from other producers refused" in warned[1]
    assert sink.view._hands[CID].frames == 2  # the real producer's two frames, nothing else
