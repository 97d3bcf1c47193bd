"""The live view's server (`integrations.foxglove_server.LiveServer`) through the wire: both names
of the Foxglove WebSocket protocol v1 are served on one port (a client offering only
`foxglove.websocket.v1`, as Lichtblick and Foxglove Studio do, and one offering only
`foxglove.sdk.v1`, as the Foxglove app does, each decode a scene); a viewer that never reads is
disconnected after a bounded backlog without stalling the logging thread; the viewer count is
limited; closing never waits on a frozen viewer, so `sim --foxglove` and `view` end on a signal or
at --duration with a frozen viewer connected. The view counts and skips what a peer publishes that
it cannot show (NaN frame, another layout, a negative time)."""
from __future__ import annotations

import logging
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

foxglove = pytest.importorskip("foxglove", reason="the view needs the optional foxglove-sdk (extra 'view')")
pytest.importorskip("websockets.sync.client", reason="the protocol client needs 'websockets'")
from test_foxglove_view import scene_taxels  # noqa: E402
from test_foxglove_view import DEADLINE_S, FoxgloveClient  # noqa: E402

from wuji_tactile_device.contract import encode_tactile_record  # noqa: E402
from wuji_tactile_device.contract.metadata import encode_metadata_record  # noqa: E402
from wuji_tactile_device.contract.naming import Stream  # noqa: E402
from wuji_tactile_device.contract.records import DeviceDataTimestamp  # noqa: E402
from wuji_tactile_device.integrations.foxglove_live import attach_with_hands  # noqa: E402
from wuji_tactile_device.integrations.foxglove_server import LiveServer, route_sdk_logging  # noqa: E402
from wuji_tactile_device.integrations.foxglove_view import FoxgloveView  # noqa: E402
from wuji_tactile_device.producers.sim.layout_metadata import sim_metadata  # noqa: E402
from wuji_tactile_device.streams.inproc import InProcessBus  # noqa: E402
from wuji_tactile_device.streams.publisher import TactilePublisher  # noqa: E402
from wuji_tactile_device.streams.tracker import TactileTracker  # noqa: E402

CID = "tactile/right"
SCRIPT = str(Path(sys.executable).parent / "wuji-tactile")
ENV = dict(os.environ, WUJI_TELEMETRY_DISABLE="1")


def handshake(port: int, subprotocol: str, *, rcvbuf: int | None = None) -> tuple[socket.socket, bytes]:
    """A raw socket that sent a WebSocket handshake offering `subprotocol`, and the answer's head."""
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(DEADLINE_S)
    s.connect(("127.0.0.1", port))
    s.sendall(("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
               f"Sec-WebSocket-Protocol: {subprotocol}\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(1)
        if not chunk:
            break
        head += chunk
    return s, head


def frozen_subscriber(port: int, topics: set[str] | None = None) -> FoxgloveClient:
    """A protocol client that subscribes to `topics` (default: every advertised one) and then
    never reads again (its library stops reading the socket once one message is queued)."""
    client = FoxgloveClient(port, ("foxglove.websocket.v1",), max_queue=1)
    wanted = client.wait_for_topics(topics or {CID})
    client.subscribe([ch for t, ch in wanted.items() if topics is None or t in topics])
    return client


@pytest.mark.parametrize("subprotocol", ["foxglove.websocket.v1", "foxglove.sdk.v1"])
def test_each_subprotocol_alone_is_served_and_decodes_a_scene(subprotocol):
    metadata = sim_metadata("right")
    bus = InProcessBus()
    with FoxgloveView([CID], port=0, scene_rate_hz=None) as view:
        tracker = TactileTracker(CID, bus)
        attach_with_hands(view, [tracker], None)
        client = FoxgloveClient(view.port, (subprotocol,))
        try:
            assert client.ws.subprotocol == subprotocol
            topics = client.wait_for_topics({f"{CID}/view/scene"})
            client.subscribe([topics[f"{CID}/view/scene"]])
            end = time.monotonic() + DEADLINE_S
            while not view._hands[CID].scene.has_sinks():
                assert time.monotonic() < end, "the subscription never reached the SDK"
                time.sleep(0.01)
            publisher = TactilePublisher(CID, metadata, bus)
            forces = np.zeros((metadata.num_taxels, 3), np.float32)
            forces[7] = [0.0, 0.0, -0.2]
            publisher.publish(forces, sample_time_ns=5_000_000_000)
            tracker.update(timeout_s=1.0)
            taxels = None
            while taxels is None:
                msg = client.recv(timeout=max(0.1, end - time.monotonic()))
                if "sub" in msg:
                    scene = client.decoders[msg["sub"]](msg["payload"])  # the JSON SceneUpdate
                    taxels = scene_taxels(scene) if any(e["id"].startswith("taxel/") for e in scene["entities"]) \
                        else None
            assert len(taxels["pos"]) == metadata.num_taxels
            assert taxels["stamps"] == {5_000_000_000}
            sizes = taxels["size"]
            assert int(np.argmax(sizes)) == 7 and sizes[7] > sizes[0]  # the pressed taxel is the largest
        finally:
            client.close()
            tracker.close()


def test_another_subprotocol_gets_the_sdk_refusal_and_garbage_a_400():
    with LiveServer(foxglove.Context(), port=0) as server:
        s, head = handshake(server.port, "some.other.v1")
        s.close()
        assert head.startswith(b"HTTP/1.1 400"), head
        s = socket.create_connection(("127.0.0.1", server.port), timeout=DEADLINE_S)
        s.sendall(b"\x16\x03\x01 not http\r\n\r\n")
        assert s.recv(100).startswith(b"HTTP/1.1 400 Bad Request")
        s.close()
        assert server.counters.refused_handshake == 2 and server.counters.served == {}


def test_a_viewer_that_never_reads_is_dropped_and_never_stalls_the_logger():
    """A subscribed viewer with a 4 KiB receive buffer stops reading: after the backlog bound it
    is disconnected (counted once), every log() call returned on the way, and a reading viewer
    keeps receiving."""
    ctx = foxglove.Context()
    channel = foxglove.Channel("big", message_encoding="json", schema={"type": "object"}, context=ctx)
    payload = b'{"x":"' + b"a" * 20_000 + b'"}'
    with LiveServer(ctx, port=0, max_backlog_bytes=256 * 1024) as server:
        frozen = frozen_subscriber(server.port, {"big"})
        reader = FoxgloveClient(server.port, ("foxglove.sdk.v1",))
        reader.subscribe([reader.wait_for_topics({"big"})["big"]])
        end = time.monotonic() + 3 * DEADLINE_S
        received = 0
        while server.counters.dropped_backlog == 0:
            assert time.monotonic() < end, "the frozen viewer was never disconnected"
            for _ in range(50):
                channel.log(payload)  # never blocks, whatever the viewers do
            while True:  # the reading viewer drains what it got
                try:
                    msg = reader.recv(timeout=0.01)
                except TimeoutError:
                    break
                received += "sub" in msg
        assert server.counters.dropped_backlog == 1 and server.clients == 1  # the reader stays
        assert server.counters.served == {"foxglove.websocket.v1": 1, "foxglove.sdk.v1": 1}
        before = received
        channel.log(payload)
        while received == before:
            assert time.monotonic() < end
            received += "sub" in reader.recv(timeout=DEADLINE_S)
        reader.close()
        frozen.close()


def test_the_viewer_count_is_limited():
    with LiveServer(foxglove.Context(), port=0, max_clients=2) as server:
        kept = [handshake(server.port, "foxglove.websocket.v1")[0] for _ in range(2)]
        s, head = handshake(server.port, "foxglove.sdk.v1")
        assert head.startswith(b"HTTP/1.1 503"), head
        assert b"at most 2 viewers" in s.recv(200)
        s.close()
        assert server.counters.refused_over_limit == 1 and server.clients == 2
        kept.pop().close()
        end = time.monotonic() + DEADLINE_S
        while server.clients != 1:
            assert time.monotonic() < end
            time.sleep(0.01)
        s, head = handshake(server.port, "foxglove.sdk.v1")  # room again
        assert head.startswith(b"HTTP/1.1 101"), head
        s.close()
        for s in kept:
            s.close()


def test_close_never_waits_on_a_frozen_viewer():
    """Regression: the SDK's own stop() blocked (GIL held, signals ignored) while a subscribed
    viewer did not read."""
    ctx = foxglove.Context()
    channel = foxglove.Channel("big", message_encoding="json", schema={"type": "object"}, context=ctx)
    server = LiveServer(ctx, port=0)
    frozen = frozen_subscriber(server.port, {"big"})
    end = time.monotonic() + DEADLINE_S
    while not channel.has_sinks():
        assert time.monotonic() < end
        time.sleep(0.01)
    for _ in range(2000):  # 40 MB offered, far past what the sockets hold
        channel.log(b'{"x":"' + b"a" * 20_000 + b'"}')
    closer = threading.Thread(target=server.close, daemon=True)
    closer.start()
    closer.join(timeout=DEADLINE_S)
    assert not closer.is_alive(), "close() waited on the frozen viewer"
    frozen.close()


def test_sdk_log_records_go_to_the_package_logger_at_debug():
    seen: list[tuple[str, int, str]] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append((record.name, record.levelno, record.getMessage()))

    root, package = logging.getLogger(), logging.getLogger("wuji_tactile_device.foxglove")
    keep, level = Keep(), package.level
    root.addHandler(keep)
    package.setLevel(logging.DEBUG)
    try:
        route_sdk_logging()
        logging.getLogger("foxglove.websocket.connected_client.poller").error(
            "Error receiving from client 127.0.0.1:1: IO error: Connection reset by peer (os error 104)")
        logging.getLogger("tungstenite.handshake.server").warning("handshake")
    finally:
        root.removeHandler(keep)
        package.setLevel(level)
    assert [(name, lvl) for name, lvl, _ in seen] == [("wuji_tactile_device.foxglove", logging.DEBUG)] * 2
    assert "Connection reset by peer" in seen[0][2]


def test_the_view_counts_and_skips_what_a_peer_publishes_that_it_cannot_show(tmp_path, caplog):
    """On the view's collection a peer sends a NaN frame, another layout and a frame with a negative
    time: the view skips each (counted), and the real producer's next frame is shown."""
    md = sim_metadata("right")
    bus = InProcessBus()
    view = FoxgloveView([CID], serve=False, mcap_path=str(tmp_path / "v.mcap"), scene_rate_hz=None)
    tracker = TactileTracker(CID, bus, error_policy="drop")
    guard = attach_with_hands(view, [tracker], None)
    real = TactilePublisher(CID, md, bus)
    real.publish(np.zeros((md.num_taxels, 3), np.float32), sample_time_ns=1_000)
    assert guard.update(tracker) == 1
    peer = bus.open_producer(CID, 0xBAD)
    ok = DeviceDataTimestamp(2_000, 2_000, 2_000)
    peer.publish(Stream.METADATA, encode_metadata_record(md, ok), 0)
    nan = np.zeros((md.num_taxels, 3), np.float32)
    nan[5, 2] = np.nan
    peer.publish(Stream.DATA, encode_tactile_record(nan, ok), 1)
    peer.publish(Stream.DATA, encode_tactile_record(np.zeros((md.num_taxels, 3)), DeviceDataTimestamp(-5, -5, -5)), 2)
    other = bus.open_producer(CID, 0xB0B)
    other.publish(Stream.METADATA, encode_metadata_record(sim_metadata("left"), ok), 0)
    with caplog.at_level(logging.WARNING, logger="wuji_tactile_device.foxglove"):
        for _ in range(5):
            guard.update(tracker)  # never raises
    warned = [r.getMessage() for r in caplog.records if r.name == "wuji_tactile_device.foxglove"]
    assert len(warned) == 1 and "sample_time_local_common_clock = -5 ns" in warned[0]  # once, then counted
    assert tracker.counters.rejected == 2  # the NaN frame, the other layout
    assert guard.skipped == 2  # the other layout (raised by the tracker), the negative time
    assert "differs from the adopted layout" in guard.last_reason  # the last one skipped
    real.publish(np.ones((md.num_taxels, 3), np.float32) * 0.01, sample_time_ns=3_000)
    assert guard.update(tracker) == 1
    assert view._hands[CID].frames == 2  # the real producer's two frames, nothing else
    view.close()
    tracker.close()


# -- the commands with a frozen viewer (R1) ------------------------------------------------------------
def _start(cmd: list[str]):
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    line = proc.stderr.readline()
    match = re.search(r"ws://127\.0\.0\.1:(\d+)", line)
    assert match, line + proc.stderr.read()
    return proc, int(match.group(1))


def _finish(proc, timeout: float) -> tuple[int, str]:
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"the command did not end within {timeout} s with a frozen viewer connected")
    return proc.returncode, err


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_sim_foxglove_ends_on_a_signal_with_a_frozen_viewer(tmp_path, signum, code):
    path = tmp_path / "run.mcap"
    proc, port = _start([SCRIPT, "sim", "--scenario", "press", "--foxglove", "--foxglove-port", "0", "--quiet",
                         "--record", str(path)])
    frozen = None
    try:
        frozen = frozen_subscriber(port, None)
        time.sleep(2.0)  # frames flow to the frozen viewer
        proc.send_signal(signum)
        rc, err = _finish(proc, 30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if frozen is not None:
            frozen.close()
    assert rc == code, err
    assert "Traceback" not in err, err
    from mcap.reader import make_reader

    with open(path, "rb") as f:
        summary = make_reader(f).get_summary()
    assert summary is not None and summary.statistics.message_count > 0  # the file was finished


def test_view_ends_at_duration_with_a_frozen_viewer(tmp_path):
    from wuji_tactile_device.run.simulation import record_simulation
    from wuji_tactile_device.producers.sim.scenarios import make_scenario

    path = tmp_path / "press.mcap"
    record_simulation(path, make_scenario("press"), max_frames=300)
    proc, port = _start([SCRIPT, "view", str(path), "--port", "0", "--duration", "4", "--loop", "--speed", "4"])
    frozen = None
    try:
        frozen = frozen_subscriber(port, None)
        # a viewer that connects and resets (a closed viewer tab) leaves no SDK line on stderr
        s, _ = handshake(port, "foxglove.websocket.v1")
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.close()
        rc, err = _finish(proc, 30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if frozen is not None:
            frozen.close()
    assert rc == 0, err
    assert "Connection reset" not in err and "Error receiving" not in err, err
    assert re.search(r"foxglove: 2 viewer\(s\) served \(2 foxglove.websocket.v1\)", err), err
