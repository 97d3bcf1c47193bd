"""Zero-baseline calibration of the five fingertip pads (`WujiHand2.calibrate_fingertip()`).

The firmware takes whatever load is on the pads as the new zero and cannot check that they are
unloaded — a finger resting on something bakes that force into every later reading. The SDK call
only enqueues the command; completion is seen by polling each finger's status.

State machine followed per finger (status polled every `poll_s`):

    commanded ──Calibrating seen──▶ calibrating ──Ready seen──▶ done ("observed")
        │
        └── only Ready for `fallback_after_s` ──▶ done ("fallback: Calibrating never observed")

A Ready read right after the command may predate it, so Ready alone does not count until
`fallback_after_s` (default 2 s) has passed: then the finger is taken as calibrated — firmware
that finishes between two polls looks exactly like this — but the report says so, and
`require_observed=True` refuses instead. Status reads are bounded and retried (`RetryPolicy`).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from collections.abc import Callable, Iterator, Mapping

from ...errors import FingerOfflineError, ProducerError
from ...hands.wuji_hand2 import FINGERS
from .device import STATE_READY, FingertipDevice
from .recovery import RetryPolicy, retry

log = logging.getLogger(__name__)

UNLOADED_WARNING = ("Zero calibration: ALL five fingertip pads must be unloaded (touching nothing, "
                    "hand not resting on them). The firmware cannot check this; any load now is "
                    "subtracted from every later reading.")
OBSERVED = "observed"
FALLBACK = "fallback: Calibrating never observed"


@dataclass(frozen=True)
class FingerCalibration:
    """One finger's calibration as observed: `outcome` (OBSERVED or FALLBACK), seconds from the
    command until Calibrating was first seen (None: never) and until done, and status polls."""

    finger: str
    outcome: str
    calibrating_after_s: float | None
    ready_after_s: float
    polls: int

    def describe(self) -> str:
        seen = (f"Calibrating at {self.calibrating_after_s:.2f} s, " if self.calibrating_after_s is not None else "")
        return f"{self.finger}: {seen}Ready at {self.ready_after_s:.2f} s ({self.outcome})"


class ZeroCalibrationReport(Mapping[str, float]):
    """Per finger, seconds until it was done (a mapping, FINGERS order); `fingers` holds the
    details, `fallback` the fingers done by the fallback rule."""

    def __init__(self, fingers: dict[str, FingerCalibration]):
        self.fingers = {f: fingers[f] for f in FINGERS}

    def __getitem__(self, finger: str) -> float:
        return self.fingers[finger].ready_after_s

    def __iter__(self) -> Iterator[str]:
        return iter(self.fingers)

    def __len__(self) -> int:
        return len(self.fingers)

    @property
    def fallback(self) -> tuple[str, ...]:
        return tuple(f for f, c in self.fingers.items() if c.outcome == FALLBACK)

    def describe(self) -> str:
        return "; ".join(c.describe() for c in self.fingers.values())


def calibrate_zero(device: FingertipDevice, *, timeout_s: float = 10.0, poll_s: float = 0.1,
                   fallback_after_s: float = 2.0, require_observed: bool = False,
                   policy: RetryPolicy | None = None,
                   on_poll: Callable[[dict[str, int]], None] | None = None,
                   sleep: Callable[[float], None] = time.sleep,
                   clock: Callable[[], float] = time.monotonic) -> ZeroCalibrationReport:
    """Run the zero calibration and follow each finger's status to done (module doc).

    Checks first that all five modules are online (the SDK fails on the first offline finger).
    Raises FingerOfflineError (naming the fingers), ProducerError on timeout naming the fingers
    not done and the state each is in, or — with `require_observed` — naming the fingers whose
    Calibrating state was never seen."""
    if not fallback_after_s < timeout_s:
        raise ValueError(f"fallback_after_s ({fallback_after_s}) must be below timeout_s ({timeout_s})")
    policy = policy or RetryPolicy()
    online = retry(device.fingertip_online, policy, "zero calibration: reading fingertip_online()", sleep=sleep)
    off = tuple(f for f, ok in zip(FINGERS, online, strict=True) if not ok)
    if off:
        raise FingerOfflineError(off, f"zero calibration not started: fingertip module(s) offline: {', '.join(off)}")
    start = clock()
    retry(device.calibrate_fingertip, RetryPolicy(policy.timeout_s, 1), "zero calibration: calibrate_fingertip()")
    done: dict[str, FingerCalibration] = {}
    seen: dict[str, float] = {}
    polls = {f: 0 for f in FINGERS}
    while True:
        states = {}
        for f in FINGERS:
            if f in done:
                continue
            def read_state(f: str = f) -> int:
                return device.fingertip_status(f).state

            states[f] = retry(read_state, policy, f"zero calibration: reading the {f} status", sleep=sleep)
            polls[f] += 1
        now = clock() - start
        for f, state in states.items():
            if state != STATE_READY:
                seen.setdefault(f, now)
            elif f in seen:
                done[f] = FingerCalibration(f, OBSERVED, seen[f], now, polls[f])
            elif now >= fallback_after_s:
                if require_observed:
                    raise ProducerError(f"zero calibration: {f} reported Ready for {now:.1f} s without ever reporting "
                                        "Calibrating; the command may not have run (require_observed)")
                done[f] = FingerCalibration(f, FALLBACK, None, now, polls[f])
                log.warning("zero calibration: %s never reported Calibrating; taken as done after %.1f s of Ready "
                            "(firmware that finishes between two status polls looks the same)", f, now)
        if on_poll is not None:
            on_poll(states)
        if len(done) == len(FINGERS):
            return ZeroCalibrationReport(done)
        if now > timeout_s:
            pending = [f"{f} ({'calibrating' if f in seen else 'Calibrating not seen yet'})"
                       for f in FINGERS if f not in done]
            raise ProducerError(f"zero calibration: not done after {timeout_s:.1f} s: {', '.join(pending)}")
        sleep(poll_s)
