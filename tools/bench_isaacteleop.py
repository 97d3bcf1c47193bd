"""Live latency into an Isaac Teleop graph: producer timestamp → the `TeleopSession` step that emits it.

A producer publishes 176-taxel frames at 100 Hz over Zenoh (loopback, its own Zenoh session in a
thread of this process), stamping each with its monotonic sample time. A `TeleopSession` (REPLAY:
hands from a small Isaac-profile file, as no OpenXR runtime runs here) steps the example's
`TactileSource` (live stepping) at the XR rate, 90 Hz, on deadlines. For each frame, latency =
the step's graph time (monotonic, taken at the start of the step) − the frame's sample time.

Two parts are separated: the transport part (the same `TactileSource` polled every 0.5 ms, no
session: publish → the node holds the frame) and the part the session's own step rate causes (a
frame waits for the next step: up to one step period, T/2 on average). Target: p99 ≤ 2 × the
step period. Needs the `isaacteleop` extra (else the section says so).
"""
from __future__ import annotations

import os
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from wuji_tactile_device.benchmarks import Row, Section, Target, load_text, machine_load

STEP_HZ = 90.0
PRODUCER_HZ = 100.0
CID = "bench/isaacteleop"


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _producer(endpoint: str, stop: threading.Event, ready: threading.Event) -> None:
    from wuji_tactile_device.producers.sim.layout_metadata import sim_metadata
    from wuji_tactile_device.streams import TactilePublisher
    from wuji_tactile_device.streams.zenoh_transport import ZenohTransport

    transport = ZenohTransport(listen=[endpoint])
    try:
        with TactilePublisher(CID, sim_metadata("right"), transport) as pub:
            forces = np.zeros((176, 3), np.float32)
            period = 1.0 / PRODUCER_HZ
            next_t = time.monotonic()
            ready.set()
            while not stop.is_set():
                forces[:, 2] = -0.1 * (1 + np.sin(time.monotonic()))
                pub.publish(forces, sample_time_ns=time.monotonic_ns())
                next_t += period
                time.sleep(max(0.0, next_t - time.monotonic()))
    finally:
        transport.close()


def _hands_file(path: Path, steps: int) -> None:
    from wuji_tactile_device.contract.records import DeviceDataTimestamp
    from wuji_tactile_device.recording import McapRecorder
    from wuji_tactile_device.recording.hand_channels import HandPoseChannels

    poses = np.tile(np.array([0, 0, 0, 0, 0, 0, 1.0]), (26, 1))
    with McapRecorder(path, profile="isaac") as rec:
        hands = HandPoseChannels(rec, "hands")
        for k in range(steps):
            t = 1_000_000_000 + k * 11_111_111
            hands.write({"right": poses}, DeviceDataTimestamp(t, t, t))


def _measure(quick: bool) -> dict[str, np.ndarray]:
    from isaacteleop.deviceio import McapReplayConfig
    from isaacteleop.retargeting_engine.interface import OutputCombiner
    from isaacteleop.teleop_session_manager import SessionMode, TeleopSession, TeleopSessionConfig

    from wuji_tactile_device.integrations.isaacteleop import PadForceMagnitude, TactileSource
    from wuji_tactile_device.streams.zenoh_transport import ZenohTransport

    seconds = 2.0 if quick else 6.0
    endpoint = f"tcp/127.0.0.1:{_free_port()}"
    stop, ready = threading.Event(), threading.Event()
    producer = threading.Thread(target=_producer, args=(endpoint, stop, ready), daemon=True)
    producer.start()
    ready.wait(10)
    out: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory() as tmp:
        hands = Path(tmp) / "hands.mcap"
        steps = int(seconds * STEP_HZ) + 200
        _hands_file(hands, steps)
        transport = ZenohTransport(connect=[endpoint])
        try:
            source = TactileSource("tactile", CID, 5, 176, source=transport)
            # transport part: the node polled every 0.5 ms (no session), sample time → held
            lat, seen = [], set()
            t_end = time.monotonic() + seconds / 2 + 2.0
            while time.monotonic() < t_end:
                source.read_sample()
                f = source.last_frame
                now = time.monotonic_ns()
                if f is not None and f.sequence not in seen:
                    seen.add(f.sequence)
                    lat.append(now - f.timestamp.sample_time_local_common_clock)
                time.sleep(0.0005)
            out["transport"] = np.array(lat[20:], dtype=np.float64) / 1e6  # the first ones include discovery
            # the session: steps on 90 Hz deadlines, graph time = the step's start
            force = PadForceMagnitude("pad_force", 5, 176).connect({
                "taxel_forces": source.output("taxel_forces"), "tactile_layout": source.output("tactile_layout")})
            config = TeleopSessionConfig(app_name="wuji-latency", mode=SessionMode.REPLAY, verbose=False,
                                         pipeline=OutputCombiner({"f": force.output("finger_force")}),
                                         mcap_config=McapReplayConfig(str(hands), []))
            lat, seen = [], set()
            with TeleopSession(config) as session:
                period = 1.0 / STEP_HZ
                next_t = time.monotonic()
                for _ in range(int(seconds * STEP_HZ)):
                    t_step = time.monotonic_ns()
                    session.step()
                    f = source.last_frame
                    if f is not None and f.sequence not in seen:
                        seen.add(f.sequence)
                        lat.append(t_step - f.timestamp.sample_time_local_common_clock)
                    next_t += period
                    time.sleep(max(0.0, next_t - time.monotonic()))
            out["session"] = np.array(lat[5:], dtype=np.float64) / 1e6
            source.close()
        finally:
            transport.close()
            stop.set()
            producer.join(5)
    return out


def run(quick: bool = False) -> Section:
    section = Section(f"Isaac Teleop live latency (TactileSource over Zenoh loopback, TeleopSession at "
                      f"{STEP_HZ:g} Hz, producer at {PRODUCER_HZ:g} Hz)")
    try:
        import isaacteleop  # noqa: F401
    except ImportError:
        section.rows.append(Row("isaacteleop extra not installed: section not run", 0, "", ""))
        return section
    before = machine_load()
    m = _measure(quick)
    period_ms = 1e3 / STEP_HZ
    tr, se = m["transport"], m["session"]
    t50, t99 = np.percentile(tr, [50, 99])
    s50, s99 = np.percentile(se, [50, 99])
    section.rows += [
        Row("producer sample time → TactileSource holds it (polled every 0.5 ms) p50", t50, "ms", f"{len(tr)} frames"),
        Row("producer sample time → TactileSource holds it p99", t99, "ms"),
        Row(f"producer sample time → TeleopSession step that emits it ({STEP_HZ:g} Hz) p50", s50, "ms",
            f"{len(se)} frames emitted"),
        Row("producer sample time → TeleopSession step p99", s99, "ms"),
        Row("of which the step rate (session p50 − transport p50)", s50 - t50, "ms",
            f"a frame waits for the next step: 0 .. {period_ms:.1f} ms, {period_ms / 2:.1f} ms on average"),
        Row("machine load average (1 min) after", machine_load()[0], "",
            f"before {load_text(before)}; {os.cpu_count()} CPUs"),
    ]
    section.targets.append(Target(f"session p99 ≤ 2 × step period ({2 * period_ms:.1f} ms)", s99, "<=", 2 * period_ms))
    return section
