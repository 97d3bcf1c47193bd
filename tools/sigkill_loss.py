"""Measure what SIGKILL of a recording costs, in the data's own time (the R20 measurement).

    python tools/sigkill_loss.py -n 20 --sim press --seed 1
    python tools/cpu_burn.py -n 2 --seconds 400 & python tools/sigkill_loss.py -n 20 --sim press

Runs `tests/kill_child.py --report` (the producer recorded through the run function as
`sim --record` does; `--sim SCENARIO`: the MuJoCo simulation, otherwise a synthetic producer far
faster than real time), kills it with SIGKILL after a random wall delay (seeded), recovers the file
and compares the log time of the last frame the child reported written with the last tactile frame
kept. Prints one line per kill and min / median / max of the loss [s of log time].
"""
from __future__ import annotations

import argparse
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from mcap.reader import make_reader

CHILD = Path(__file__).resolve().parent.parent / "tests" / "kill_child.py"


def one_kill(out: Path, delay_s: float, sim: str | None) -> tuple[float, int]:
    """(loss [s of log time], frames kept) of one SIGKILL `delay_s` after the first frame."""
    from wuji_tactile_device.recording import recover

    cmd = [sys.executable, str(CHILD), str(out), "--report"] + (["--sim", sim] if sim else [])
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    lines: list[bytes] = []
    first = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            first.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if not first.wait(120):
            raise SystemExit("the child wrote no frame in 120 s")
        time.sleep(delay_s)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    reader.join(timeout=30)
    complete = [ln for ln in lines if ln.endswith(b"\n") and ln.startswith(b"written ")]
    written = int(complete[-1].split()[1])
    fixed = out.with_name(out.stem + "_recovered.mcap")
    recover(out, fixed, overwrite=True)
    with open(fixed, "rb") as f:
        times = [m.log_time for _s, _c, m in make_reader(f).iter_messages(topics=["tactile/right"])]
    last = max(times) if times else None
    loss = (written - last) / 1e9 if last is not None else float("nan")
    return loss, len(times)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-n", type=int, default=20, help="kills (default 20)")
    p.add_argument("--sim", metavar="SCENARIO", help="record the MuJoCo simulation of SCENARIO (e.g. press)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--min-delay", type=float, default=0.3, help="[s] after the first frame (default 0.3)")
    p.add_argument("--max-delay", type=float, default=6.0, help="[s] after the first frame (default 6)")
    args = p.parse_args()
    rng = random.Random(args.seed)
    losses = []
    with tempfile.TemporaryDirectory() as d:
        for i in range(args.n):
            delay = rng.uniform(args.min_delay, args.max_delay)
            loss, kept = one_kill(Path(d) / f"kill{i}.mcap", delay, args.sim)
            losses.append(loss)
            print(f"kill {i + 1:2d}: {delay:5.2f} s after the first frame: {kept:5d} frames kept, "
                  f"lost {loss:.3f} s of log time", flush=True)
    print(f"loss [s of log time] over {args.n} kills: min {min(losses):.3f}, median {statistics.median(losses):.3f}, "
          f"max {max(losses):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
