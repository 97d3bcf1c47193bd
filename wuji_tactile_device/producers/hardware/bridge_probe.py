"""The SDK's bridge search for a serial number, in a process of its own, bounded.

`SdkManager.connect(sn=...)` looks for the hand on USB and the local network (about 0.5 s, its
`timeout_ms` applies) and then, when it is not there, asks other SDK instances over its bridge
(Zenoh): about 15 s for a hand that no one has, not bounded by `timeout_ms`, and **holding the
GIL** all along (measured: a 50 ms ticker thread stalls for 15.6 s), so no thread of this process
can give up on it. So `connect_sdk_hand` connects with the bridge off, and only when the hand
is on neither USB nor the network runs `search_bridge`: the same call with the bridge on, in a
child process killed at the budget. A hand held by another SDK instance is then connected over
the bridge; one that no one has fails within the budget, with a message that says so.

Run as a script (never imported by the child): `python bridge_probe.py SN TIMEOUT_MS` prints
`found` (exit 0) or `absent: REASON` (exit 3). It imports only the vendor SDK.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence

#: Exit status of the probe for a hand that the bridge does not know either.
ABSENT_EXIT = 3


def bridge_budget_s(timeout_ms: int) -> float:
    """The bridge search's budget [s] for an SDK reply timeout of `timeout_ms`: 3 × the timeout,
    at least 3 s (a child process with the SDK starts in ~0.5 s)."""
    return max(3.0, 3 * timeout_ms / 1000)


def probe_command(sn: str, timeout_ms: int) -> list[str]:
    """The child process that searches the bridge for `sn` (this file as a script)."""
    return [sys.executable, os.path.abspath(__file__), sn, str(int(timeout_ms))]


def search_bridge(sn: str, budget_s: float, *, timeout_ms: int = 1000, command: Sequence[str] | None = None,
                  clock=time.monotonic) -> str | None:
    """Search the SDK's bridge for `sn` in a child process (`command`, default `probe_command`)
    ended at `budget_s` [s]. None when the hand is there; otherwise why not, naming `sn` and the
    budget (one clause for an error message)."""
    if not budget_s > 0:
        raise ValueError(f"budget_s must be > 0 s, got {budget_s}")
    cmd = list(command) if command is not None else probe_command(sn, timeout_ms)
    env = {**os.environ, "WUJI_TELEMETRY_DISABLE": os.environ.get("WUJI_TELEMETRY_DISABLE", "1")}
    start = clock()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=budget_s, env=env, check=False)
    except subprocess.TimeoutExpired as exc:  # run() has killed the child
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        if any(line.strip() == "found" for line in out.splitlines()):
            return None  # found, then slow to exit
        return (f"no other SDK instance reported {sn} over the bridge within the {budget_s:g} s budget "
                "(search abandoned; --timeout-ms scales it)")
    except OSError as exc:
        return f"the bridge search for {sn} could not start ({exc.strerror or exc})"
    took = clock() - start
    if done.returncode == 0 and done.stdout.strip() == "found":
        return None
    # the probe's own answer (stdout); the SDK logs on stderr, its last line only if the probe died
    answers = [ln[len("absent: "):].strip() for ln in done.stdout.splitlines() if ln.startswith("absent: ")]
    logged = [ln.strip() for ln in done.stderr.splitlines() if ln.strip()]
    said = answers[-1] if answers else (logged[-1] if logged else f"exit {done.returncode}")
    return f"no other SDK instance has {sn} either (bridge search, {took:.1f} s of its {budget_s:g} s budget: {said})"


def _main(argv: list[str]) -> int:
    sn, timeout_ms = argv[0], int(argv[1])
    import wuji_sdk as sdk  # the vendor SDK only: this child must start fast

    manager = sdk.SdkManager.instance()
    try:
        hand = manager.connect(sn=sn, device_name=f"wuji-tactile-probe-{os.getpid()}",
                               options=sdk.ConnectOptions(timeout_ms=timeout_ms, enable_bridge=True))
    except Exception as exc:  # noqa: BLE001 - any SDK failure is the answer, printed as one line
        print(f"absent: {exc}", flush=True)
        return ABSENT_EXIT
    print("found", flush=True)  # before anything that could hang: the parent reads it even then
    del hand  # the connection ends with this process; the parent connects on its own
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
