"""The CPU burner of the load checks (tools/cpu_burn.py) is bounded: it stops by itself."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

TOOL = Path(__file__).resolve().parents[1] / "tools" / "cpu_burn.py"


def test_burner_processes_stop_by_themselves_after_the_duration():
    start = time.monotonic()
    done = subprocess.run([sys.executable, str(TOOL), "--procs", "2", "--seconds", "0.3"], timeout=30)
    took = time.monotonic() - start
    assert done.returncode == 0
    assert 0.3 <= took < 25  # ran at least the duration, then ended without being killed


def test_burner_refuses_an_unbounded_or_empty_run():
    for args, word in ((["--seconds", "0"], "--seconds"), (["--seconds", "1e9"], "--seconds"),
                       (["--procs", "0"], "--procs")):
        done = subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True, timeout=30)
        assert done.returncode == 2 and word in done.stderr, (args, done.stderr)
