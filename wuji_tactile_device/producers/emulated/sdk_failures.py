"""Failures of the emulated SDK calls: `CallFailures` (queued failures of named calls: timeout,
error, offline, hang) and `sdk_exception`, the exception the SDK would raise for each (its own
classes when it is installed)."""
from __future__ import annotations

from collections import deque

from ..hardware.device import EmulatedNodeOfflineError, EmulatedSdkError, sdk_module


class CallFailures:
    """Queued failures of named SDK calls: 'timeout' (the SDK's OperationTimeout), 'error' (any
    other SDK failure), 'offline' (NodeOfflineError), 'hang' (the call blocks `hang_s`, then
    answers — longer than the caller's own timeout)."""

    KINDS = ("timeout", "error", "offline", "hang")

    def __init__(self):
        self._queued: dict[str, deque] = {}
        self.fired: list[tuple[str, str]] = []

    def add(self, call: str, error: str, count: int, hang_s: float) -> None:
        if error not in self.KINDS:
            raise ValueError(f"error must be one of {', '.join(self.KINDS)}, got {error!r}")
        if count < 1:
            raise ValueError(f"count must be ≥ 1, got {count}")
        self._queued.setdefault(call, deque()).extend([(error, hang_s)] * count)

    def take(self, call: str) -> tuple[str, float] | None:
        for key in (call, call.split(":")[0]):
            q = self._queued.get(key)
            if q:
                kind = q.popleft()
                self.fired.append((call, kind[0]))
                return kind
        return None


def sdk_exception(kind: str, what: str) -> Exception:
    sdk = sdk_module()
    if kind == "offline":
        cls = sdk.NodeOfflineError if sdk is not None else EmulatedNodeOfflineError
        return cls(f"{what}: node is not connected")
    cls = sdk.WujiException if sdk is not None else EmulatedSdkError
    text = {"timeout": f"OperationTimeout: {what} timed out after 1000 ms",
            "disconnected": f"Disconnected: {what}: device disconnected",
            "not_found": f"DeviceNotFound: {what}"}.get(kind, f"Internal: {what} failed")
    return cls(text)

