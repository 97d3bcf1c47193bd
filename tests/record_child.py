"""A real recording process for the crash tests: publishes one 176-taxel collection at 100 Hz on an
in-process bus and records it with McapRecorder, the way `wuji-tactile record` does (poll loop;
Ctrl-C finishes the file with a second SIGINT ignored).

Usage: python tests/record_child.py OUT.mcap
Prints `ready` once the first frames are flushed, and on SIGINT `published N` after closing."""
from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from conftest import make_metadata
from wuji_tactile_device.streams.publisher import TactilePublisher
from wuji_tactile_device.recording import McapRecorder
from wuji_tactile_device.streams.inproc import InProcessBus

PERIOD_NS = 10_000_000  # 100 Hz


def main(out: str) -> int:
    bus = InProcessBus()
    rec = McapRecorder(out, file_metadata={"producer_kind": "test"})
    rec.add_collection(bus, "tactile/right")
    pub = TactilePublisher("tactile/right", make_metadata(176), bus)
    forces = np.zeros((176, 3), np.float32)
    published = 0
    ready = False
    next_tick = time.monotonic_ns()
    try:
        while True:
            forces[:, 2] = -published * 1e-3  # frame k carries fz = -k mN: the parent can check content
            pub.publish(forces, sample_time_ns=time.monotonic_ns())
            published += 1
            rec.poll()
            if not ready and published == 60:
                rec.flush()
                print("ready", flush=True)
                ready = True
            next_tick += PERIOD_NS
            time.sleep(max(0.0, (next_tick - time.monotonic_ns()) / 1e9))
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        rec.poll()
        rec.close()
        print(f"published {published}", flush=True)
        return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
