"""The one run function (`wuji_tactile_device.run.run`) and the `--transport` option built from
the transport registry."""
from __future__ import annotations

import argparse

import numpy as np
import pytest
from mcap.reader import make_reader

from cli_helpers import cli
from wuji_tactile_device.cli.common import add_publish_arguments, add_zenoh_arguments, transport_name
from wuji_tactile_device.errors import TransportError
from wuji_tactile_device.producers.base import Frame, Producer
from wuji_tactile_device.recording import McapReplay
from wuji_tactile_device.run import RecordOptions, TransportSpec, run
from wuji_tactile_device.streams import TRANSPORTS, InProcessBus
from wuji_tactile_device.streams.tracker import TactileTracker
from streams_helpers import small_metadata

MD = small_metadata()


class Counting(Producer):
    """k-th frame: every force = k [N]; on demand, 10 ms period."""

    period_s = 0.01

    def __init__(self, frames: int, collection_id: str = "tactile/right"):
        self.collection_id, self.metadata, self._left, self.k = collection_id, MD, frames, 0
        self.closed = False

    def next_frame(self):
        if self.k >= self._left:
            self.finished = True
            return None
        self.k += 1
        self.finished = self.k >= self._left
        return Frame(np.full((MD.num_taxels, 3), self.k, np.float32), 1_000_000_000 + self.k * 10_000_000)

    def close(self):
        self.closed = True


def test_run_publishes_every_frame_on_a_transport_the_caller_keeps_and_closes_the_producer():
    bus = InProcessBus()
    tracker = TactileTracker("tactile/right", bus)
    producer = Counting(5)
    (counters,) = run([producer], transport=bus, handle_signals=False)
    frames = list(tracker.frames())
    assert counters.published == 5 and counters.stop_reason == "finished"
    assert [float(f.forces[0, 0]) for f in frames] == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert producer.closed


def test_run_records_every_frame_and_the_file_metadata(tmp_path):
    path = tmp_path / "r.mcap"
    run([Counting(7)], transport="inproc", record=RecordOptions(path, file_metadata={"note": "x"}),
        handle_signals=False)
    replay = McapReplay(path)
    tracker = TactileTracker("tactile/right", replay)
    frames = list(tracker.frames())
    assert [float(f.forces[0, 0]) for f in frames] == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    with open(path, "rb") as f:
        meta = {k: v for m in make_reader(f).iter_metadata() for k, v in m.metadata.items()}
    assert meta["note"] == "x" and meta["collections"] == "tactile/right"


def test_run_refuses_nothing_to_run_and_a_bad_compression(tmp_path):
    with pytest.raises(ValueError, match="at least one producer"):
        run([], transport="inproc")
    with pytest.raises(ValueError, match="compression must be one of zstd, lz4, none"):
        RecordOptions(tmp_path / "x.mcap", compression="gzip")


def test_an_unknown_transport_name_is_refused_by_the_registry():
    with pytest.raises(ValueError, match="unknown transport 'carrier-pigeon'"):
        TransportSpec("carrier-pigeon").open()


def _parse(adder, *argv):
    p = argparse.ArgumentParser()
    adder(p)
    return p.parse_args(list(argv))


def test_transport_option_lists_the_registry_and_keeps_the_aliases():
    assert transport_name(_parse(add_publish_arguments)) == "inproc"  # producers: this process by default
    assert transport_name(_parse(add_zenoh_arguments)) == "zenoh"  # consumers: Zenoh by default
    assert transport_name(_parse(add_publish_arguments, "--publish", "zenoh")) == "zenoh"
    assert transport_name(_parse(add_publish_arguments, "--zenoh", "tcp/127.0.0.1:1")) == "zenoh"
    for name in TRANSPORTS:
        assert transport_name(_parse(add_zenoh_arguments, "--transport", name)) == name
    with pytest.raises(TransportError, match="--transport inproc contradicts --publish zenoh"):
        transport_name(_parse(add_publish_arguments, "--transport", "inproc", "--publish", "zenoh"))
    with pytest.raises(TransportError, match="apply to --transport zenoh, not inproc"):
        transport_name(_parse(add_zenoh_arguments, "--transport", "inproc", "--zenoh", "tcp/127.0.0.1:1"))


@pytest.mark.parametrize("command", ["sim", "hw", "record", "echo", "replay", "view"])
def test_every_stream_command_offers_every_registered_transport(capsys, command):
    code, out, _ = cli(capsys, command, "--help")
    assert code == 0
    assert "--transport" in out and all(name in out for name in TRANSPORTS), out


def test_sim_records_on_the_transport_it_is_given(capsys, tmp_path):
    path = tmp_path / "s.mcap"
    code, out, err = cli(capsys, "sim", "--scenario", "press", "--duration", "0.2", "--transport", "inproc",
                         "--record", str(path))
    assert "error" not in err and f"recorded {path}" in out, (code, out, err)  # (exit 1: checks not reached in 0.2 s)
    frames = list(TactileTracker("tactile/right", McapReplay(path)).frames())
    assert len(frames) == 20
