"""ConnectionWatch: says when a Zenoh session given endpoints to connect to reaches nobody.

A recorder or producer pointed at an unreachable `--zenoh` endpoint would otherwise wait in
silence (Zenoh keeps retrying the connection in the background). `check()` returns one warning
line `first_after_s` (3 s) after the watch starts while the session has no peer and no router,
then again every `repeat_s` (60 s) while that lasts; nothing once connected (a later loss starts
the count again). A session that connects only to its own listener (the default loopback
configuration, where the first process on the machine is the meeting point) is not watched: it
is normal for it to wait for others.
"""
from __future__ import annotations

import time
from typing import Any
from collections.abc import Callable

#: Seconds without any connection before the first warning, and between repeats.
FIRST_WARNING_S = 3.0
REPEAT_WARNING_S = 60.0


class ConnectionWatch:
    """Warns (`check()` returns the line) while `transport` (a `ZenohTransport`: its
    `connect_endpoints`, `listen_endpoints`, `connected_zids()`) is connected to nobody.
    `clock`: seconds of a monotonic clock (injectable for tests)."""

    def __init__(self, transport: Any, *, first_after_s: float = FIRST_WARNING_S,
                 repeat_s: float = REPEAT_WARNING_S, clock: Callable[[], float] = time.monotonic):
        if not (first_after_s > 0 and repeat_s > 0):
            raise ValueError(f"first_after_s and repeat_s must be > 0 s, got {first_after_s}, {repeat_s}")
        self._transport = transport
        own = set(getattr(transport, "listen_endpoints", []) or [])
        self.endpoints = [e for e in (getattr(transport, "connect_endpoints", []) or []) if e not in own]
        self._first, self._repeat, self._clock = first_after_s, repeat_s, clock
        self._since = clock()  # start of the current unconnected stretch
        self._next = self._since + first_after_s
        self.warnings = 0

    def check(self) -> str | None:
        """The warning line when one is due, else None. Cheap: call it every loop."""
        if not self.endpoints:
            return None
        now = self._clock()
        if now < self._next:
            return None
        if self._transport.connected_zids():
            self._since, self._next = now, now + self._first  # connected: watch for a later loss
            return None
        self._next = now + self._repeat
        self.warnings += 1
        return (f"nothing is connected to {', '.join(self.endpoints)} after {now - self._since:.0f} s: is the "
                "endpoint right and the router or producer running there? (still waiting; said again every "
                f"{self._repeat:.0f} s)")
