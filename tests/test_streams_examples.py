"""The README's two-terminal example (synthetic feeder → tracker consumer) and `wuji-tactile echo`,
run for real across processes on a free loopback port."""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from streams_helpers import free_port
from wuji_tactile_device.cli import cmd_echo

ROOT = Path(__file__).resolve().parents[1]
FEEDER = ROOT / "examples" / "tactile" / "synthetic_feeder.py"
CONSUMER = ROOT / "examples" / "tactile" / "tracker_consumer.py"




@pytest.fixture
def feeder():
    """The feeder, listening on a free loopback port, publishing tactile/right at 100 Hz."""
    endpoint = f"tcp/127.0.0.1:{free_port()}"
    proc = subprocess.Popen([sys.executable, str(FEEDER), "--zenoh-listen", endpoint, "--duration", "20"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    yield endpoint, proc
    if proc.poll() is None:
        proc.terminate()
    proc.communicate(timeout=10)


def test_feeder_and_consumer_two_processes(feeder):
    endpoint, proc = feeder
    out = subprocess.run([sys.executable, str(CONSUMER), "--zenoh", endpoint, "--count", "150", "--every", "1"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == ("metadata adopted: 180 taxels on 5 segments "
                        "(THUMB_DISTAL, INDEX_DISTAL, MIDDLE_DISTAL, RING_DISTAL, LITTLE_DISTAL)")
    frames = [re.match(r"seq +(\d+) +latency +([\d.]+) ms +press \[N\]: (.*)", line) for line in lines[1:]]
    assert len(frames) == 150 and all(frames)
    seqs = [int(m.group(1)) for m in frames]
    assert seqs == list(range(seqs[0], seqs[0] + 150))  # every frame, in order, none lost
    for m in frames:  # the feeder presses each pad with 1..3 N in total (fz < 0 = pressing)
        press = [float(v) for v in re.findall(r"[a-z]+ +([-\d.]+)", m.group(3))]
        assert len(press) == 5 and all(0.99 <= p <= 3.01 for p in press)
    assert "150 delivered" in out.stderr and "0 rejected" in out.stderr
    proc.terminate()
    _, err = proc.communicate(timeout=10)
    assert "made-up geometry and forces to exercise the transport" in err


def test_the_feeder_is_a_producer_on_the_run_loop():
    """The example's `SyntheticFeeder` is a plain `Producer`: on the package's run loop (in
    process, paced to real time) a tracker adopts its 180-taxel layout and gets frames at its
    rate, each pad pressed with 1–3 N in total along -z, a 10 % shear along x, none along y."""
    import importlib.util
    import time

    import numpy as np

    from wuji_tactile_device.producers.base import Producer, ProducerRunner
    from wuji_tactile_device.streams.inproc import InProcessBus
    from wuji_tactile_device.streams.tracker import TactileTracker

    spec = importlib.util.spec_from_file_location("synthetic_feeder", FEEDER)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    feeder = example.SyntheticFeeder("tactile/right", rate_hz=200.0)
    assert isinstance(feeder, Producer) and feeder.period_s == 0.005
    bus = InProcessBus()
    tracker = TactileTracker("tactile/right", bus)
    t0 = time.monotonic()
    with ProducerRunner(feeder, bus, speed=1.0) as runner:
        counters = runner.run(max_frames=40, handle_signals=False)
    elapsed = time.monotonic() - t0
    frames = list(tracker.frames())
    assert counters.published == len(frames) == 40 and elapsed >= 39 * 0.005
    assert tracker.get_metadata().num_taxels == 180 and tracker.get_metadata().num_segments == 5
    for f in frames:
        per_pad = f.forces.reshape(5, 36, 3).astype(np.float64)
        fz = per_pad[:, :, 2].sum(axis=1)
        assert np.all((fz <= -0.99) & (fz >= -3.01)), fz
        assert np.all(per_pad[:, :, 1] == 0)
        ratio = per_pad[:, :, 0] / per_pad[:, :, 2]  # the same cos(0.5 t) / 10 on every taxel
        assert np.ptp(ratio) < 1e-5 and abs(ratio[0, 0]) <= 0.1 + 1e-6


def test_echo_shows_layout_frames_and_counters(feeder, capsys):
    endpoint, _ = feeder
    parser = argparse.ArgumentParser()
    cmd_echo.register(parser.add_subparsers())
    args = parser.parse_args(["echo", "--zenoh", endpoint, "--count", "5", "--rate", "20", "--plain",
                              "--duration", "15"])
    assert args.run(args) == 0
    text = capsys.readouterr().out
    assert "tactile/right: 180 taxels on 5 segments" in text
    last = text.strip().splitlines()[-3:]
    assert re.match(r"  seq \d+  session [0-9a-f]{16}  age [\d.]+ ms  peak \|F\| [\d.]+ N at taxel \d+", last[0])
    press = [float(v) for v in re.findall(r"[a-z]+ ([-+\d.]+)", last[1].split(":", 1)[1])]
    assert len(press) == 5 and all(0.99 <= p <= 3.01 for p in press)
    delivered = int(re.search(r"delivered (\d+)", last[2]).group(1))
    assert delivered >= 5 and "rejected 0" in last[2]


def test_echo_reads_an_mcap_recording(tmp_path, capsys):
    import time

    from streams_helpers import forces_for, small_metadata

    from wuji_tactile_device.streams.publisher import TactilePublisher
    from wuji_tactile_device.recording import McapRecorder
    from wuji_tactile_device.streams.inproc import InProcessBus

    path = tmp_path / "run.mcap"
    bus, md = InProcessBus(), small_metadata()
    with McapRecorder(path) as rec:
        rec.add_collection(bus, "tactile/right")
        with TactilePublisher("tactile/right", md, bus) as pub:
            for seq in range(30):
                pub.publish(forces_for(seq, md.num_taxels), sample_time_ns=time.monotonic_ns())
                rec.poll()
        rec.poll()
    parser = argparse.ArgumentParser()
    cmd_echo.register(parser.add_subparsers())
    args = parser.parse_args(["echo", "--file", str(path), "--plain", "--rate", "20", "--duration", "20"])
    assert args.run(args) == 0
    last = capsys.readouterr().out.strip().splitlines()[-4:]
    assert last[0] == "tactile/right: 15 taxels on 5 segments"
    assert re.match(r"  seq 29  session [0-9a-f]{16}  t [\d.]+ s  peak \|F\| 29.014 N at taxel 14", last[1])
    # forces_for: fz = -(seq + taxel/1000); segment s holds taxels 3s..3s+2
    press = [float(v) for v in re.findall(r"[a-z]+ ([-+\d.]+)", last[2].split(":", 1)[1])]
    assert press == pytest.approx([3 * 29 + (9 * s + 3) / 1000 for s in range(5)], abs=1e-3)
    assert "delivered 30" in last[3] and "dropped before metadata 0" in last[3]
