"""Bounded, retried SDK calls for the recovery path (a finger coming back, a lost connection).

Every SDK call the producer makes while recovering may block (the SDK's own timeouts are about a
second, a chunked info read longer) or fail transiently (`OperationTimeout`, `Disconnected`). So:

- `bounded(fn, timeout_s, what)` runs the call on a helper thread and gives up after
  `timeout_s` with `DeviceTimeoutError` (Python cannot cancel a blocked native call: the thread
  is abandoned and finishes, or fails, on its own; it is a daemon and holds no producer state);
- `RetryPolicy` says how often and how patiently: `attempts`, exponential backoff from
  `backoff_s` by `factor` up to `max_backoff_s`;
- `retry(fn, policy, what)` is the blocking form (start-up, identity, calibration);
- `Backoff` is the non-blocking form for the producer's loop: `due(now)` says whether the next
  attempt may run, `failed(now)` schedules the one after, `succeeded()` resets.

`NodeOfflineError` is not retried (the SDK decides it before sending: retrying will not help);
the caller waits for the finger's online flag instead.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import TypeVar
from collections.abc import Callable

from ...errors import DeviceTimeoutError, FingerOfflineError, ProducerError

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """`timeout_s` per call [s]; up to `attempts` tries, waiting `backoff_s`, ×`factor` each time,
    at most `max_backoff_s` between tries."""

    timeout_s: float = 2.0
    attempts: int = 5
    backoff_s: float = 0.05
    factor: float = 2.0
    max_backoff_s: float = 2.0

    def __post_init__(self) -> None:
        if not self.timeout_s > 0 or self.attempts < 1 or self.backoff_s < 0 or self.factor < 1 \
                or self.max_backoff_s < self.backoff_s:
            raise ValueError(f"invalid retry policy {self}: need timeout_s > 0, attempts ≥ 1, backoff_s ≥ 0, "
                             "factor ≥ 1, max_backoff_s ≥ backoff_s")

    def delay(self, failures: int) -> float:
        """Wait before the next try after `failures` consecutive failures [s]."""
        return min(self.max_backoff_s, self.backoff_s * self.factor ** max(0, failures - 1))


def bounded(fn: Callable[[], T], timeout_s: float, what: str) -> T:
    """`fn()` with a wall-clock bound: its result or its exception, or DeviceTimeoutError."""
    box: list = []
    done = threading.Event()

    def work() -> None:
        try:
            box.append((True, fn()))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread unchanged
            box.append((False, exc))
        finally:
            done.set()

    threading.Thread(target=work, name=f"wuji-sdk: {what}", daemon=True).start()
    if not done.wait(timeout_s):
        raise DeviceTimeoutError(f"{what}: no answer within {timeout_s:g} s (SDK call abandoned)")
    ok, value = box[0]
    if ok:
        return value
    raise value


def is_timeout(exc: BaseException) -> bool:
    """Whether an SDK failure is a timeout (the SDK names its errors in the message)."""
    return isinstance(exc, DeviceTimeoutError) or "timeout" in str(exc).lower() or "timed out" in str(exc).lower()


def retry(fn: Callable[[], T], policy: RetryPolicy, what: str, *, sleep: Callable[[float], None] = time.sleep,
          on_failure: Callable[[BaseException, int], None] | None = None,
          give_up: Callable[[BaseException], str | None] | None = None) -> T:
    """Call `fn` (each call bounded by `policy.timeout_s`) until it succeeds or `policy.attempts`
    tries failed; FingerOfflineError is not retried. The last failure is raised as a
    ProducerError subclass naming `what`, the attempts and the cause. `give_up(exc)`: a reason
    not to retry (e.g. the target is not there at all), raised at once, or None to go on."""
    failures = 0
    while True:
        try:
            return bounded(fn, policy.timeout_s, what)
        except FingerOfflineError:
            raise
        except ProducerError as exc:
            failures += 1
            if on_failure is not None:
                on_failure(exc, failures)
            reason = give_up(exc) if give_up is not None and failures < policy.attempts else None
            if reason is not None:
                raise type(exc)(f"{what}: {exc}; {reason} (failed {failures} time(s), not retried)") from exc
            if failures >= policy.attempts:
                cls = DeviceTimeoutError if is_timeout(exc) else type(exc)
                raise cls(f"{what}: failed {failures} time(s), giving up: {exc}") from exc
            log.info("%s: attempt %d of %d failed (%s); retrying in %.2f s", what, failures, policy.attempts, exc,
                     policy.delay(failures))
            sleep(policy.delay(failures))


class Backoff:
    """Non-blocking retry schedule (times in ns of a monotonic clock)."""

    def __init__(self, policy: RetryPolicy):
        self.policy = policy
        self.failures = 0
        self.next_ns = 0

    def due(self, now_ns: int) -> bool:
        return now_ns >= self.next_ns

    def failed(self, now_ns: int) -> float:
        """Record a failure; returns the wait before the next attempt [s]."""
        self.failures += 1
        wait = self.policy.delay(self.failures)
        self.next_ns = now_ns + int(wait * 1e9)
        return wait

    def succeeded(self) -> None:
        self.failures = 0
        self.next_ns = 0
