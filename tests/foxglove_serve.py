"""Serve a command's Foxglove view and collect what a client subscribed to it receives (shared by
tests/test_foxglove_live.py and tests/test_view_objects.py)."""
from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Callable
from typing import Any

from test_foxglove_view import DEADLINE_S, FoxgloveClient
from websockets.exceptions import ConnectionClosed

ENV = dict(os.environ, WUJI_TELEMETRY_DISABLE="1")


def serve(cmd: list[str], topics: set[str], handle: Callable[[Any, str, dict], Any], want: int, *,
          stop: bool = True, extra_s: float = 10.0, idle_s: float | None = None) -> tuple[list, str, int | None]:
    """Start `cmd` (it prints a ws:// address on stderr, possibly after other lines), subscribe to
    `topics`, and collect `handle(client, topic, message)` of every message (None: not kept) until
    `want` are kept, the deadline (`DEADLINE_S` + `extra_s`) passes, or the command ends (a 2 s recv
    timeout while it still runs only waits on: a loaded machine can pause it for seconds; with
    `idle_s`, a command silent that long is done, e.g. a view holding its file's last frame). `stop`: a command still running
    then is terminated (a looping view); otherwise it is waited for. Returns (kept, the stderr,
    the exit status)."""
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=ENV)
    kept: list = []
    try:
        line, match = "", None
        for _ in range(20):  # a producer command may say other things first
            line += proc.stderr.readline()
            match = re.search(r"ws://127\.0\.0\.1:(\d+)", line)
            if match or proc.poll() is not None:
                break
        assert match, line + proc.stderr.read()
        client = FoxgloveClient(int(match.group(1)))
        try:
            offered = client.wait_for_topics(topics)
            client.subscribe([offered[t] for t in sorted(topics)])
            end = time.monotonic() + DEADLINE_S + extra_s
            heard = time.monotonic()
            while len(kept) < want and time.monotonic() < end:
                try:
                    msg = client.recv(timeout=2.0)
                except TimeoutError:
                    if proc.poll() is None and (idle_s is None or time.monotonic() - heard < idle_s):
                        continue
                    break  # the command ended, or is done
                except ConnectionClosed:
                    break
                heard = time.monotonic()
                if "sub" not in msg:
                    continue
                got = handle(client, client.subscriptions[msg["sub"]]["topic"], msg)
                if got is not None:
                    kept.append(got)
        finally:
            client.close()
        if stop and proc.poll() is None:  # a looping view runs on: end it however the collection ended
            proc.terminate()
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return kept, line + err, proc.returncode
