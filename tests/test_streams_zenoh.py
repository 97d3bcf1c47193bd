"""Publisher → tracker over Zenoh across two OS processes on loopback.

The producer runs in `tests/zenoh_peer.py` (a child process driven over stdin); the tracker runs
here. This process listens on a free loopback port, the peer connects to it. Every test uses its
own collection ids, so one peer serves the module; the crash test starts (and kills) its own.
Teardown stops every child and closes every session (the listener's port is released)."""
from __future__ import annotations

import dataclasses

import itertools
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from streams_helpers import forces_for, small_metadata

from streams_helpers import free_port
from wuji_tactile_device.errors import (DataLayoutError, InvalidMessageError, MessageTooLargeError,
                                        MetadataMismatchError, MetadataValidationError, TransportError)
from wuji_tactile_device.contract import DeviceDataTimestamp, encode_metadata_record, encode_tactile_record
from wuji_tactile_device.streams.tracker import TactileTracker
from wuji_tactile_device.streams.zenoh_transport import (ATTACHMENT, PUBLISHER_QOS, ZenohTransport, build_config,
                                                           liveliness_key)

PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "zenoh_peer.py")
TS = DeviceDataTimestamp(1, 2, 3)
_ids = itertools.count()




class Peer:
    """A producer process; `cmd()` sends one command and returns its reply."""

    def __init__(self, endpoint: str):
        self.proc = subprocess.Popen([sys.executable, PEER, "--connect", endpoint], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        assert self._reply(timeout=30)["ready"]

    def _read(self) -> None:
        for line in self.proc.stdout:
            self._lines.put(line)

    def _reply(self, timeout: float = 15) -> dict:
        try:
            return json.loads(self._lines.get(timeout=timeout))
        except queue.Empty:
            raise AssertionError(f"zenoh peer did not answer within {timeout} s (exit code {self.proc.poll()})") from None

    def send(self, **command) -> None:
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()

    def cmd(self, **command) -> dict:
        self.send(**command)
        return self._reply()

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                self.cmd(op="quit")
                self.proc.wait(timeout=10)
            except (AssertionError, BrokenPipeError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc.stdin.close()
        self.proc.stdout.close()


@pytest.fixture(scope="module")
def net(request):
    """(transport in this process, listening on a free loopback port; its endpoint). Indirect
    parametrisation passes a Zenoh config."""
    for _ in range(3):
        endpoint = f"tcp/127.0.0.1:{free_port()}"
        try:
            transport = ZenohTransport(getattr(request, "param", None), listen=[endpoint])
            break
        except TransportError:  # the port was taken between probing and binding
            continue
    else:
        pytest.fail("no free loopback port for the zenoh listener")
    yield transport, endpoint
    transport.close()


@pytest.fixture(scope="module")
def peer(net):
    transport, endpoint = net
    p = Peer(endpoint)
    deadline = time.monotonic() + 10
    while not transport.peers() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert transport.peers(), "the peer process did not connect"
    yield p
    p.stop()
    assert p.proc.returncode == 0


@pytest.fixture
def cid():
    return f"tactile/z{next(_ids)}/right"


def tracker_for(net, peer, cid, **kwargs) -> TactileTracker:
    tracker = TactileTracker(cid, net[0], **kwargs)
    for key in (cid, cid + "/metadata"):  # the peer must know our subscribers before it puts
        assert peer.cmd(op="wait_matching", key=key)["matching"]
    return tracker


def wait_until(condition, timeout: float = 5.0, tracker: TactileTracker | None = None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if tracker is not None:
            tracker.update()
        if condition():
            return
        time.sleep(0.005)
    raise AssertionError(f"condition not reached within {timeout:.1f} s")


def raw(peer, cid, session, stream, payload: bytes, sequence: int) -> None:
    reply = peer.cmd(op="raw", collection=cid, session=session, stream=stream, payload_hex=payload.hex(),
                     sequence=sequence)
    assert reply["ok"], reply


class Recorder:
    def __init__(self):
        self.metadata, self.data = [], []

    def on_metadata(self, collection_id, message, record):
        self.metadata.append((message.producer_session, record.metadata))

    def on_data(self, collection_id, message, frame):
        self.data.append((frame.producer_session, frame.sequence))


# -- configuration ---------------------------------------------------------------------------------

def test_default_config_is_loopback_only():
    cfg = build_config()
    assert json.loads(cfg.get_json("listen/endpoints")) == ["tcp/127.0.0.1:7447", "tcp/127.0.0.1:0"]
    assert json.loads(cfg.get_json("connect/endpoints")) == ["tcp/127.0.0.1:7447"]
    assert cfg.get_json("scouting/multicast/enabled") == "false"


def test_user_config_overrides_and_unset_fields_stay_loopback(tmp_path):
    path = tmp_path / "zenoh.json5"
    path.write_text("{ // a user's JSON5 file\n  connect: { endpoints: ['tcp/192.0.2.1:7447'] },\n}\n")
    cfg = build_config(path)
    assert json.loads(cfg.get_json("connect/endpoints")) == ["tcp/192.0.2.1:7447"]
    assert json.loads(cfg.get_json("listen/endpoints")) == ["tcp/127.0.0.1:7447", "tcp/127.0.0.1:0"]
    cfg = build_config({"listen": {"endpoints": ["tcp/10.0.0.5:7447"]}, "scouting": {"multicast": {"enabled": True}}})
    assert json.loads(cfg.get_json("listen/endpoints")) == ["tcp/10.0.0.5:7447"]
    assert json.loads(cfg.get_json("connect/endpoints")) == []
    assert cfg.get_json("scouting/multicast/enabled") == "true"
    cfg = build_config("{mode: 'peer'}", connect=["tcp/127.0.0.1:9"])
    assert json.loads(cfg.get_json("listen/endpoints")) == ["tcp/127.0.0.1:0"]
    with pytest.raises(TransportError, match="bogus_key"):
        build_config("{bogus_key: 1}")
    with pytest.raises(TransportError, match="does not exist"):
        build_config(tmp_path / "missing.json5")


def test_busy_port_is_a_transport_error(net):
    endpoint = net[1]
    with pytest.raises(TransportError, match="cannot open zenoh session.*Address already in use"):
        ZenohTransport(listen=[endpoint])


# -- two processes ---------------------------------------------------------------------------------

def test_metadata_first_withholding(net, peer, cid):
    md = small_metadata()
    tracker = tracker_for(net, peer, cid)
    for seq in range(3):
        raw(peer, cid, 77, "data", encode_tactile_record(forces_for(seq, md.num_taxels), TS), seq)
    raw(peer, cid, 77, "metadata", encode_metadata_record(md, TS), 0)
    raw(peer, cid, 77, "data", encode_tactile_record(forces_for(3, md.num_taxels), TS), 3)
    wait_until(lambda: tracker.counters.delivered == 1, tracker=tracker)
    c = tracker.counters
    assert (c.received, c.dropped_before_confirmation, c.producer_sessions) == (4, 3, 1)
    assert tracker.get_metadata() == md
    frame = tracker.get_data()
    assert (frame.sequence, frame.producer_session, frame.timestamp) == (3, 77, TS)
    np.testing.assert_array_equal(frame.forces, forces_for(3, md.num_taxels))
    peer.cmd(op="raw_close", collection=cid, session=77)
    wait_until(lambda: tracker.counters.liveliness_lost == 1, tracker=tracker)


def test_late_subscriber_discovers_metadata_within_one_period(net, peer, cid):
    period = 0.3
    assert peer.cmd(op="publisher", name="late", collection=cid, period=period)["ok"]
    tracker = tracker_for(net, peer, cid)
    joined = time.monotonic()
    peer.send(op="publish", name="late", count=60, interval=0.01)  # 0.6 s at 100 Hz
    wait_until(lambda: tracker.counters.delivered > 0, timeout=3, tracker=tracker)
    confirmed_after = time.monotonic() - joined
    assert peer._reply()["ok"]
    wait_until(lambda: tracker.counters.received == 60, tracker=tracker)
    assert confirmed_after <= period + 0.1
    c = tracker.counters
    assert c.dropped_before_confirmation + c.delivered == 60 and c.delivered >= 25
    assert tracker.get_data().sequence == 59 and c.sequence_gaps == 0
    assert peer.cmd(op="close", name="late")["ok"]


def test_mismatch_error_keeps_layout_and_withholds(net, peer, cid):
    tracker = tracker_for(net, peer, cid)
    rec = Recorder()
    tracker.add_observer(rec)
    good = peer.cmd(op="publisher", name="good", collection=cid)["session"]
    wait_until(lambda: tracker.get_metadata() is not None, tracker=tracker)
    bad = peer.cmd(op="publisher", name="bad", collection=cid, variant="other")["session"]
    with pytest.raises(MetadataMismatchError, match=f"{cid}.*{bad:016x}.*taxel_bind_poses row 0"):
        wait_until(lambda: False, tracker=tracker)
    peer.cmd(op="publish", name="bad", count=2)
    peer.cmd(op="publish", name="good", count=3)
    wait_until(lambda: tracker.counters.received == 5, tracker=tracker)
    assert tracker.get_metadata() == small_metadata()
    assert rec.data == [(good, 0), (good, 1), (good, 2)]
    assert rec.metadata == [(good, small_metadata())]
    assert tracker.counters.dropped_before_confirmation == 2
    for name in ("good", "bad"):
        peer.cmd(op="close", name=name)


def test_invalid_metadata_refused_at_both_ends(net, peer, cid):
    tracker = tracker_for(net, peer, cid)
    reply = peer.cmd(op="publisher", name="inv", collection=cid, variant="invalid")
    assert (reply["ok"], reply["error"]) == (False, "MetadataValidationError")
    assert "taxel 4" in reply["message"]
    md = small_metadata()
    weights = np.array(md.segment_weights)
    weights[4, 0] = 0.5
    invalid = dataclasses.replace(md, segment_weights=weights)
    raw(peer, cid, 5, "metadata", encode_metadata_record(invalid, TS), 0)
    with pytest.raises(MetadataValidationError, match=f"{cid}.*0000000000000005.*taxel 4"):
        wait_until(lambda: False, tracker=tracker)
    assert tracker.get_metadata() is None
    # the refused publisher sent nothing: the only producer ever seen is the raw one
    assert tracker.counters.producer_sessions == 1 and tracker.counters.metadata_received == 1
    peer.cmd(op="raw_close", collection=cid, session=5)


def test_producer_restart_same_then_different_metadata(net, peer, cid):
    tracker = tracker_for(net, peer, cid)
    rec = Recorder()
    tracker.add_observer(rec)
    first = peer.cmd(op="publisher", name="a", collection=cid)["session"]
    peer.cmd(op="publish", name="a", count=2)
    wait_until(lambda: tracker.counters.delivered == 2, tracker=tracker)
    peer.cmd(op="close", name="a")
    wait_until(lambda: tracker.counters.liveliness_lost == 1, tracker=tracker)
    second = peer.cmd(op="publisher", name="b", collection=cid)["session"]
    peer.cmd(op="publish", name="b", count=2)
    wait_until(lambda: tracker.counters.delivered == 4, tracker=tracker)
    assert [s for s, _ in rec.metadata] == [first, second]
    assert rec.data == [(first, 0), (first, 1), (second, 0), (second, 1)]
    peer.cmd(op="close", name="b")
    wait_until(lambda: tracker.counters.liveliness_lost == 2, tracker=tracker)
    third = peer.cmd(op="publisher", name="c", collection=cid, variant="four")["session"]
    with pytest.raises(MetadataMismatchError, match=f"{third:016x}.*20 taxels vs adopted 5 / 15"):
        wait_until(lambda: False, tracker=tracker)
    peer.cmd(op="publish", name="c", count=2)
    wait_until(lambda: tracker.counters.received == 6, tracker=tracker)
    assert tracker.get_metadata() == small_metadata() and tracker.counters.delivered == 4
    assert tracker.counters.dropped_before_confirmation == 2
    peer.cmd(op="close", name="c")


def test_killed_producer_process_is_detected_and_restart_reconfirmed(net, cid):
    transport, endpoint = net
    tracker = TactileTracker(cid, transport)
    rec = Recorder()
    tracker.add_observer(rec)
    victim = Peer(endpoint)
    try:
        first = victim.cmd(op="publisher", name="a", collection=cid)["session"]
        wait_until(lambda: tracker.counters.metadata_confirmations == 1, tracker=tracker)
        victim.proc.send_signal(signal.SIGKILL)  # no chance to withdraw liveliness itself
        victim.proc.wait(timeout=10)
        wait_until(lambda: tracker.counters.liveliness_lost == 1, timeout=15, tracker=tracker)
    finally:
        victim.stop()
    successor = Peer(endpoint)
    try:
        second = successor.cmd(op="publisher", name="a", collection=cid)["session"]
        successor.cmd(op="publish", name="a", count=1)
        wait_until(lambda: tracker.counters.delivered == 1, tracker=tracker)
    finally:
        successor.stop()
    assert [s for s, _ in rec.metadata] == [first, second] and rec.data == [(second, 0)]


def test_oversized_and_malformed_frames(net, peer, cid):
    md = small_metadata()
    reply = peer.cmd(op="publisher", name="small", collection=cid, max_size=100)
    assert (reply["ok"], reply["error"]) == (False, "MessageTooLargeError")
    tracker = tracker_for(net, peer, cid, max_flatbuffer_size=1000)
    raw(peer, cid, 9, "metadata", encode_metadata_record(md, TS), 0)
    wait_until(lambda: tracker.get_metadata() is not None, tracker=tracker)
    raw(peer, cid, 9, "data", encode_tactile_record(forces_for(0, 100), TS), 0)  # 1280 B
    with pytest.raises(MessageTooLargeError, match=f"{cid}.*data frame 0"):
        wait_until(lambda: False, tracker=tracker)
    raw(peer, cid, 9, "data", b"\x10\x00\x00\x00TDAR" + b"\xff" * 40, 1)
    with pytest.raises(InvalidMessageError, match=f"{cid}.*data frame 1"):
        wait_until(lambda: False, tracker=tracker)
    raw(peer, cid, 9, "data", encode_tactile_record(forces_for(2, md.num_taxels + 2), TS), 2)
    with pytest.raises(DataLayoutError, match="17 taxels, the adopted metadata declares 15"):
        wait_until(lambda: False, tracker=tracker)
    assert peer.cmd(op="bare_put", key=cid, payload_hex=encode_tactile_record(forces_for(3, 15), TS).hex())["ok"]
    raw(peer, cid, 9, "data", encode_tactile_record(forces_for(4, md.num_taxels), TS), 4)
    wait_until(lambda: tracker.counters.delivered == 1, tracker=tracker)
    c = tracker.counters
    assert (c.rejected, c.transport_malformed, tracker.get_data().sequence) == (3, 1, 4)
    peer.cmd(op="raw_close", collection=cid, session=9)


def test_drop_policy_counts_bad_frames_over_zenoh(net, peer, cid):
    md = small_metadata()
    tracker = tracker_for(net, peer, cid, error_policy="drop")
    raw(peer, cid, 3, "metadata", encode_metadata_record(md, TS), 0)
    raw(peer, cid, 3, "data", b"garbage", 0)
    raw(peer, cid, 3, "data", encode_tactile_record(forces_for(1, md.num_taxels), TS), 1)
    wait_until(lambda: tracker.counters.delivered == 1, tracker=tracker)
    assert tracker.counters.rejected == 1 and "data frame 0" in tracker.counters.last_error
    peer.cmd(op="raw_close", collection=cid, session=3)


def test_non_finite_forces_refused_nothing_sent(net, peer, cid):
    tracker = tracker_for(net, peer, cid)
    peer.cmd(op="publisher", name="p", collection=cid)
    reply = peer.cmd(op="publish", name="p", nan=True)
    assert (reply["ok"], reply["error"]) == (False, "NonFiniteForceError")
    assert "taxel 1 component z" in reply["message"]
    assert peer.cmd(op="publish", name="p", start=5)["sequences"] == [0]
    wait_until(lambda: tracker.counters.delivered == 1, tracker=tracker)
    assert tracker.counters.received == 1  # the refused frame never travelled
    np.testing.assert_array_equal(tracker.get_data().forces, forces_for(5, 15))
    peer.cmd(op="close", name="p")


def test_two_collections_side_by_side_without_crosstalk(net, peer):
    left_id, right_id = "tactile/left", "tactile/right"  # no other test uses these ids
    left = tracker_for(net, peer, left_id)
    right = tracker_for(net, peer, right_id)
    ls = peer.cmd(op="publisher", name="l", collection=left_id, variant="four")["session"]
    rs = peer.cmd(op="publisher", name="r", collection=right_id)["session"]
    peer.cmd(op="publish", name="l", count=3, start=100)
    peer.cmd(op="publish", name="r", count=4, start=200)
    wait_until(lambda: left.counters.delivered == 3, tracker=left)
    wait_until(lambda: right.counters.delivered == 4, tracker=right)
    assert left.get_metadata() == small_metadata(4) and right.get_metadata() == small_metadata()
    np.testing.assert_array_equal(left.get_data().forces, forces_for(102, 20))
    np.testing.assert_array_equal(right.get_data().forces, forces_for(203, 15))
    assert (left.counters.producer_sessions, left.get_data().producer_session) == (1, ls)
    assert (right.counters.producer_sessions, right.get_data().producer_session) == (1, rs)
    for name in ("l", "r"):
        peer.cmd(op="close", name=name)


def test_attachment_and_liveliness_key_layout():
    assert ATTACHMENT.size == 16
    assert ATTACHMENT.unpack(bytes(range(16))) == (0x0706050403020100, 0x0F0E0D0C0B0A0908)
    assert liveliness_key("tactile/right", 255) == "tactile/right/@tactile_producer/00000000000000ff"


def test_queue_overflow_is_counted_not_silent(net, peer, cid):
    tracker = tracker_for(net, peer, cid, queue_limit=5)
    peer.cmd(op="publisher", name="p", collection=cid)
    peer.cmd(op="publish", name="p", count=20)
    time.sleep(0.3)  # everything has arrived; the tracker has not drained yet
    tracker.update()
    c = tracker.counters
    assert c.received + c.overflowed == 20 and c.overflowed >= 16
    assert c.delivered == c.received  # the frames that fitted are delivered, in order
    peer.cmd(op="close", name="p")


# Records of 2 MB are past Zenoh's message-size limit of the default config (the contract's largest
# record): a deployment with trackers for such records raises it in its config, as here.
@pytest.mark.parametrize("net", [{"transport": {"link": {"rx": {"max_message_size": 8_000_000}}}}], indirect=True)
def test_big_samples_before_update_stay_within_the_byte_budget(net, peer, cid):
    """12 distinct 2 MB samples arrive before any update(): a default tracker refuses them at
    arrival (larger than max_flatbuffer_size, never copied out of Zenoh), one that accepts 4 MB
    records holds at most its 5 MB byte budget; both count what they dropped."""
    import tracemalloc

    mb = 1_000_000
    default = tracker_for(net, peer, cid)
    roomy_id = cid + "_roomy"
    roomy = tracker_for(net, peer, roomy_id, max_flatbuffer_size=4 * mb, queue_bytes=5 * mb, error_policy="drop")
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for collection in (cid, roomy_id):
            assert peer.cmd(op="raw_fill", collection=collection, session=11, stream="data", size=2 * mb,
                            count=12)["ok"]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            d, r = default._subscription.counters, roomy._subscription.counters
            if d.oversize_dropped == 12 and r.overflowed_bytes == 10:
                break
            time.sleep(0.01)
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert (d.oversize_dropped, d.overflowed_bytes, default._subscription.queue.held_bytes) == (12, 0, 0)
    assert (r.oversize_dropped, r.overflowed_bytes, roomy._subscription.queue.held_bytes) == (0, 10, 4 * mb)
    assert held < 5 * mb + mb  # the roomy tracker's budget, plus bookkeeping
    default.update()  # unconfirmed session: counted, no error
    assert (default.counters.oversize_dropped, default.counters.dropped_before_confirmation) == (12, 12)
    for collection in (cid, roomy_id):
        peer.cmd(op="raw_close", collection=collection, session=11)


def test_port_environment_variable_moves_the_default(monkeypatch):
    monkeypatch.setenv("WUJI_TACTILE_ZENOH_PORT", "17999")
    cfg = build_config()
    assert json.loads(cfg.get_json("listen/endpoints")) == ["tcp/127.0.0.1:17999", "tcp/127.0.0.1:0"]
    assert json.loads(cfg.get_json("connect/endpoints")) == ["tcp/127.0.0.1:17999"]
    monkeypatch.setenv("WUJI_TACTILE_ZENOH_PORT", "70000")
    with pytest.raises(TransportError, match="WUJI_TACTILE_ZENOH_PORT='70000' is not a TCP port"):
        build_config()


def test_sample_callback_routes_by_key_skips_nested_collections_and_refuses_what_does_not_fit(net):
    """The subscription's callback compares each sample's key with its two streams' keys: data and
    metadata queued with their stream in send order, a nested collection's samples skipped, a sample
    without our attachment counted as malformed, an oversize payload refused with a notice."""
    from wuji_tactile_device.streams.base import DroppedPayload, Message, Stream

    transport, endpoint = net
    sub = transport.subscribe("tactile/right", max_data_size=100, max_metadata_size=1000)
    other = ZenohTransport(connect=[endpoint])
    try:
        keys = ["tactile/right", "tactile/right/metadata", "tactile/right/x", "tactile/right/x/metadata"]
        pubs = {k: other.session.declare_publisher(k, **PUBLISHER_QOS) for k in keys}
        deadline = time.monotonic() + 5
        while not all(p.matching_status.matching for p in pubs.values()) and time.monotonic() < deadline:
            time.sleep(0.01)
        sent = [("tactile/right/metadata", b"m" * 500, 0), ("tactile/right", b"d" * 100, 0),
                ("tactile/right/x", b"n" * 50, 1), ("tactile/right/x/metadata", b"n" * 50, 1),
                ("tactile/right", b"d" * 101, 1), ("tactile/right", b"e" * 7, 2)]
        for key, payload, sequence in sent:
            pubs[key].put(payload, attachment=ATTACHMENT.pack(9, sequence))
        pubs["tactile/right"].put(b"no attachment")
        deadline = time.monotonic() + 5
        events: list = []
        while (len(events) < 4 or sub.malformed < 1) and time.monotonic() < deadline:
            events += sub.drain()
            time.sleep(0.01)
        events += sub.drain()
        assert [type(e) for e in events] == [Message, Message, DroppedPayload, Message]
        assert [(e.stream, e.payload, e.sequence) for e in events if type(e) is Message] == [
            (Stream.METADATA, b"m" * 500, 0), (Stream.DATA, b"d" * 100, 0), (Stream.DATA, b"e" * 7, 2)]
        assert all(type(e.payload) is bytes for e in events if type(e) is Message)
        assert (events[2].stream, events[2].sequence, events[2].size, events[2].limit) == (Stream.DATA, 1, 101, 100)
        assert (sub.malformed, sub.queue.oversize_dropped) == (1, 1)
    finally:
        sub.close()
        other.close()
