"""One role of the secured multi-host Zenoh test, as its own OS process (run inside a network
namespace by the test when it can make them). Prints one JSON line with what it saw or did.

    python tests/zenoh_secure_peer.py hub CONFIG_DIR ROUTER.json5 OUT.mcap MAX_SECONDS
        a router (ROUTER.json5) with, in the same process, a tracker and an MCAP recorder that are
        Zenoh clients of it (tracker.json5), until a line arrives on stdin (or MAX_SECONDS):
        prints {"ready": true}, then {"sessions": [...], "delivered": n, "values": [...],
        "recorded_sessions": [...], "liveliness": [[session, alive], ...]}
    python tests/zenoh_secure_peer.py publish CLIENT.json5 VALUE FRAMES
        a producer publishing FRAMES frames of constant force VALUE at 100 Hz:
        {"ok": true, "session": id} or {"ok": false, "error": class, "message": text}
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
from streams_helpers import small_metadata

from wuji_tactile_device.errors import TactileError
from wuji_tactile_device.recording import McapRecorder, McapReplay
from wuji_tactile_device.streams import TactilePublisher, TactileTracker
from wuji_tactile_device.streams.base import LivelinessChange
from wuji_tactile_device.streams.zenoh_router import ZenohRouter
from wuji_tactile_device.streams.zenoh_transport import ZenohTransport

CID = "tactile/right"


def hub(config_dir: str, router_config: str, out: str, seconds: float) -> dict:
    with ZenohRouter(router_config):
        transport = ZenohTransport(os.path.join(config_dir, "tracker.json5"))
        tracker = TactileTracker(CID, transport, error_policy="drop")
        recorder = McapRecorder(out, file_metadata={"test": "zenoh security"})
        recorder.add_collection(transport, CID)
        watcher = transport.subscribe(CID)  # the producers' liveliness as a consumer sees it
        print(json.dumps({"ready": True}), flush=True)
        sessions, values, delivered = set(), set(), 0
        stop = threading.Event()
        threading.Thread(target=lambda: (sys.stdin.readline(), stop.set()), daemon=True).start()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not stop.is_set():
            for frame in tracker.frames():
                sessions.add(frame.producer_session)
                values.update(np.unique(frame.forces).tolist())
                delivered += 1
            recorder.poll()
            time.sleep(0.01)
        for frame in tracker.frames():  # what arrived before the stop
            sessions.add(frame.producer_session)
            values.update(np.unique(frame.forces).tolist())
            delivered += 1
        recorder.poll()
        liveliness = sorted({(ev.producer_session, ev.alive) for ev in watcher.drain()
                             if isinstance(ev, LivelinessChange)})
        watcher.close()
        recorder.close()
        tracker.close()
        transport.close()
    recorded: set[int] = set()
    with McapReplay(out) as replay, TactileTracker(CID, replay, error_policy="drop") as played:
        while not replay.finished:
            recorded.update(f.producer_session for f in played.frames())
        recorded.update(f.producer_session for f in played.frames())
    return {"sessions": sorted(sessions), "delivered": delivered, "values": sorted(values),
            "recorded_sessions": sorted(recorded), "liveliness": liveliness}


def publish(client_config: str, value: float, frames: int) -> dict:
    try:
        transport = ZenohTransport(client_config)
    except TactileError as exc:
        return {"ok": False, "error": type(exc).__name__, "message": str(exc)}
    md = small_metadata()
    time.sleep(1.0)  # let the router's subscriber declaration reach this client
    with transport, TactilePublisher(CID, md, transport, metadata_period_s=0.2) as pub:
        forces = np.full((md.num_taxels, 3), value, np.float32)
        for _ in range(frames):
            pub.publish(forces, sample_time_ns=time.monotonic_ns())
            time.sleep(0.01)
        time.sleep(0.5)
        return {"ok": True, "session": pub.producer_session}


if __name__ == "__main__":
    role = sys.argv[1]
    if role == "hub":
        print(json.dumps(hub(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]))), flush=True)
    elif role == "publish":
        print(json.dumps(publish(sys.argv[2], float(sys.argv[3]), int(sys.argv[4]))), flush=True)
    else:
        raise SystemExit(f"unknown role {role!r}")
