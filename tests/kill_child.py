"""A recording process to SIGKILL: one producer recorded through the run function exactly as
`wuji-tactile sim --record OUT` does (in-process bus, default profile, zstd, as fast as possible).

Usage: python tests/kill_child.py OUT.mcap (--stop-at K | --report) [--sim SCENARIO]

The producer is a synthetic one on its own simulated clock (frame k at k × 10 ms, fz = -k mN,
no pacing: far faster than real time) or, with `--sim`, the MuJoCo simulation of SCENARIO (as
`sim --scenario SCENARIO --record` runs it, hand poses included).

A sink after the recorder (it runs once the recorder has written the pass's records) prints
`written LOG_TIME_NS` for each frame — the frame's MCAP log time, i.e. everything the recorder
has been given up to it — with `--report` (the parent kills whenever it likes and takes the
last complete line), or, with `--stop-at K`, only for frame K and then sleeps until killed (a
kill at an exact point of the data, however loaded the machine is)."""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from conftest import make_metadata
from wuji_tactile_device.producers.base import Frame, FrameSink, Producer
from wuji_tactile_device.run import RecordOptions, run

PERIOD_NS = 10_000_000  # 100 Hz of the producer's own clock


class Synthetic(Producer):
    """Frame k at sample time t0 + k × 10 ms (its own clock, not the wall's), fz = -k mN."""

    period_s = PERIOD_NS / 1e9

    def __init__(self) -> None:
        self.collection_id = "tactile/right"
        self.metadata = make_metadata(176)
        self._t0 = time.monotonic_ns()
        self._k = 0
        self._forces = np.zeros((176, 3), np.float32)

    def next_frame(self) -> Frame:
        self._forces[:, 2] = -self._k * 1e-3
        t = self._t0 + self._k * PERIOD_NS
        self._k += 1
        return Frame(self._forces, t, available_time_ns=t)


class Reporter(FrameSink):
    """After the recorder: says which frame's records are written (its log time)."""

    def __init__(self, recorder, stop_at: int | None) -> None:
        self._recorder, self._stop_at = recorder, stop_at
        self._frames = 0
        self._last: int | None = None

    def on_frame(self, frame, sequence, timestamp) -> None:
        self._frames += 1
        self._last = timestamp.available_time_local_common_clock + self._recorder.log_time_offset_ns

    def poll(self) -> None:  # the run loop polls the recorder first, then the sinks
        if self._last is None:
            return
        if self._stop_at is None:
            os.write(1, f"written {self._last}\n".encode())
        elif self._frames >= self._stop_at:
            os.write(1, f"written {self._last}\n".encode())
            while True:
                time.sleep(60)  # until the parent's SIGKILL
        self._last = None


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("out")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--stop-at", type=int)
    mode.add_argument("--report", action="store_true")
    p.add_argument("--sim", metavar="SCENARIO")
    args = p.parse_args()
    if args.sim:
        from wuji_tactile_device.producers.sim.producer import SimProducer
        from wuji_tactile_device.producers.sim.scenarios import make_scenario

        producer: Producer = SimProducer(make_scenario(args.sim))
    else:
        producer = Synthetic()
    record = RecordOptions(args.out, derived_sinks=lambda recorder, _p, _k: [Reporter(recorder, args.stop_at)])
    run([producer], transport="inproc", record=record, handle_signals=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
