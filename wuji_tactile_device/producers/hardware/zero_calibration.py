"""Zero-baseline calibration of the five fingertip pads (`WujiHand2.calibrate_fingertip()`).

The firmware takes whatever load is on the pads as the new zero and cannot check that they are
unloaded — a finger resting on something bakes that force into every later reading. The SDK call
only enqueues the command; completion is seen by polling each finger's status until `Ready`.
"""
from __future__ import annotations

import time
from typing import Callable

from ...errors import FingerOfflineError, ProducerError
from ...hands.wuji_hand2 import FINGERS
from .device import STATE_READY, FingertipDevice

UNLOADED_WARNING = ("Zero calibration: ALL five fingertip pads must be unloaded (touching nothing, "
                    "hand not resting on them). The firmware cannot check this; any load now is "
                    "subtracted from every later reading.")


def calibrate_zero(device: FingertipDevice, *, timeout_s: float = 10.0, poll_s: float = 0.1,
                   min_wait_s: float = 0.5,
                   on_poll: Callable[[dict[str, int]], None] | None = None,
                   sleep: Callable[[float], None] = time.sleep) -> dict[str, float]:
    """Run the zero calibration and wait until every finger reports Ready again.

    Checks first that all five modules are online (the SDK fails on the first offline finger).
    A finger counts as done when it reports Ready after having reported Calibrating, or Ready once
    `min_wait_s` has passed (a status read right after the command may predate it). Returns, per finger, the seconds until it reported Ready. Raises FingerOfflineError (naming
    the fingers) or ProducerError on timeout, naming the fingers still calibrating."""
    online = device.fingertip_online()
    off = tuple(f for f, ok in zip(FINGERS, online) if not ok)
    if off:
        raise FingerOfflineError(off, f"zero calibration not started: fingertip module(s) offline: {', '.join(off)}")
    start = time.monotonic()
    device.calibrate_fingertip()
    done: dict[str, float] = {}
    seen_calibrating: set[str] = set()
    while True:
        states = {f: device.fingertip_status(f).state for f in FINGERS if f not in done}
        now = time.monotonic() - start
        for f, state in states.items():
            if state != STATE_READY:
                seen_calibrating.add(f)
            elif f in seen_calibrating or now >= min_wait_s:
                done[f] = now
        if on_poll is not None:
            on_poll(states)
        if len(done) == len(FINGERS):
            return done
        if now > timeout_s:
            pending = [f for f in FINGERS if f not in done]
            raise ProducerError(f"zero calibration: {', '.join(pending)} still calibrating after {timeout_s:.1f} s")
        sleep(poll_s)
