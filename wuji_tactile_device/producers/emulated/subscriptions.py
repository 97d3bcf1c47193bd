"""The emulated hand's streams as the SDK hands them out: `EmulatedSubscription` (polled
`recv()`), `EmulatedCallbackSubscription` (called back), and the resources whose `subscribe()`
opens them (fingertip data, joint diagnostics, joint states)."""
from __future__ import annotations

from collections import deque
from typing import Any, Protocol

from .sdk_types import EmulatedData


class EmulatedHand2(Protocol):
    """What a stream needs of its hand (`emulator.EmulatedHand2`; named so here to keep the import
    one way): its subscriber lists, call check, SDK errors, rate and queue limit."""

    _subs: dict[str, list[Any]]
    rate_hz: float
    queue_limit: int

    def _check(self, call: str) -> None: ...

    def _sdk_error(self, kind: str, what: str) -> Exception: ...


class EmulatedSubscription:
    """`wuji_sdk.Subscription` look-alike: non-blocking `recv()`, `close()`, `set_rate()`."""

    def __init__(self, hand: EmulatedHand2, finger: str, limit: int):
        self._hand, self._finger = hand, finger
        self._queue: deque[EmulatedData] = deque(maxlen=limit)
        self.closed = False
        self.dead = False  # the link was lost under it: every recv raises, as the SDK's does
        self.dtype = "FingertipSensorData"

    def _put(self, msg: EmulatedData) -> None:
        self._queue.append(msg)

    def recv(self) -> EmulatedData | None:
        if self.closed:
            raise RuntimeError(f"{self._finger}: subscription is closed")
        if self.dead:
            raise self._hand._sdk_error("disconnected", f"{self._finger} data stream")
        self._hand._check(f"recv:{self._finger}")
        return self._queue.popleft() if self._queue else None

    def set_rate(self, frequency_hz: int) -> int:
        return int(self._hand.rate_hz)  # the emulator runs at its native rate only

    def close(self) -> None:
        self.closed = True
        self._hand._subs[self._finger] = [s for s in self._hand._subs[self._finger] if s is not self]


class EmulatedCallbackSubscription:
    """`wuji_sdk.CallbackSubscription` look-alike. The SDK calls back from a background thread;
    the emulator calls back synchronously inside `emit()` (errors go to `on_error` and count)."""

    def __init__(self, hand: EmulatedHand2, finger: str, callback, on_error):
        self._hand, self._finger = hand, finger
        self._callback, self._on_error = callback, on_error
        self.is_active = True
        self.received_count = 0
        self.error_count = 0
        self.dtype = "FingertipSensorData"

    def _put(self, msg: EmulatedData) -> None:
        if not self.is_active:
            return
        self.received_count += 1
        try:
            self._callback(msg)
        except Exception as exc:  # noqa: BLE001 - mirrors the SDK: a failing callback is reported, not fatal
            self.error_count += 1
            if self._on_error is not None:
                self._on_error(f"{type(exc).__name__}: {exc}")

    def close(self) -> None:
        self.is_active = False
        self._hand._subs[self._finger] = [s for s in self._hand._subs[self._finger] if s is not self]

    def __enter__(self) -> EmulatedCallbackSubscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class DataResource:
    def __init__(self, hand: EmulatedHand2, finger: str):
        self._hand, self._finger = hand, finger

    def subscribe(self) -> EmulatedSubscription:
        self._hand._check(f"subscribe:{self._finger}")
        sub = EmulatedSubscription(self._hand, self._finger, self._hand.queue_limit)
        self._hand._subs[self._finger].append(sub)
        return sub

    def subscribe_with_callback(self, callback, on_error=None) -> EmulatedCallbackSubscription:
        sub = EmulatedCallbackSubscription(self._hand, self._finger, callback, on_error)
        self._hand._subs[self._finger].append(sub)
        return sub



class DiagnosticsResource:
    def __init__(self, hand: EmulatedHand2):
        self._hand = hand

    def subscribe(self) -> EmulatedSubscription:
        self._hand._check("subscribe:joint_diagnostics")
        sub = EmulatedSubscription(self._hand, "joint_diagnostics", self._hand.queue_limit)
        self._hand._subs.setdefault("joint_diagnostics", []).append(sub)
        return sub


class JointStatesResource:
    def __init__(self, hand: EmulatedHand2):
        self._hand = hand

    def subscribe(self) -> EmulatedSubscription:
        self._hand._check("subscribe:joint_states")
        sub = EmulatedSubscription(self._hand, "joint_states", self._hand.queue_limit)
        self._hand._subs.setdefault("joint_states", []).append(sub)
        return sub

