"""The bounded, retried SDK call helpers the recovery path is built on."""
from __future__ import annotations

import threading
import time

import pytest

from wuji_tactile_device.errors import FingerOfflineError, ProducerError
from wuji_tactile_device.producers.hardware.recovery import (Backoff, DeviceTimeoutError, RetryPolicy, bounded,
                                                             is_timeout, retry)


def test_bounded_returns_raises_or_times_out():
    assert bounded(lambda: 7, 1.0, "x") == 7
    with pytest.raises(KeyError):
        bounded(lambda: {}["k"], 1.0, "x")
    release = threading.Event()
    start = time.monotonic()
    with pytest.raises(DeviceTimeoutError, match=r"^reading the ring info: no answer within 0.05 s \(SDK call abandoned\)$"):
        bounded(release.wait, 0.05, "reading the ring info")
    assert time.monotonic() - start < 0.5
    release.set()


def test_retry_backs_off_then_gives_up_naming_the_call():
    calls, slept = [], []

    def failing():
        calls.append(1)
        raise ProducerError("OperationTimeout: info of hand X timed out after 1000 ms")

    with pytest.raises(DeviceTimeoutError, match=r"^reading info: failed 4 time\(s\), giving up: OperationTimeout"):
        retry(failing, RetryPolicy(timeout_s=1, attempts=4, backoff_s=0.01, factor=3, max_backoff_s=0.05), "reading info",
              sleep=slept.append)
    assert len(calls) == 4 and slept == pytest.approx([0.01, 0.03, 0.05])


def test_retry_does_not_retry_an_offline_finger_and_succeeds_after_transients():
    calls = []

    def offline():
        calls.append(1)
        raise FingerOfflineError(("ring",), "ring: not connected")

    with pytest.raises(FingerOfflineError):
        retry(offline, RetryPolicy(), "x", sleep=lambda s: None)
    assert len(calls) == 1
    answers = iter([ProducerError("Disconnected"), ProducerError("Internal"), 42])

    def flaky():
        a = next(answers)
        if isinstance(a, Exception):
            raise a
        return a

    assert retry(flaky, RetryPolicy(), "x", sleep=lambda s: None) == 42


def test_backoff_schedule_and_policy_checks():
    b = Backoff(RetryPolicy(backoff_s=0.02, factor=2, max_backoff_s=0.1))
    assert b.due(0)
    assert [b.failed(0) for _ in range(5)] == pytest.approx([0.02, 0.04, 0.08, 0.1, 0.1])
    assert not b.due(50_000_000) and b.due(100_000_000)
    b.succeeded()
    assert b.due(0) and b.failures == 0
    with pytest.raises(ValueError, match="invalid retry policy"):
        RetryPolicy(attempts=0)
    assert is_timeout(ProducerError("OperationTimeout: x")) and not is_timeout(ProducerError("Disconnected"))
