"""The optional vendor SDK (`wuji_sdk`) and the failure types the hardware producer recognises —
the SDK's own when it is installed, and the emulation's stand-ins for them."""
from __future__ import annotations

from typing import Any


class EmulatedSdkError(Exception):
    """Raised by in-package device emulations for SDK failures (timeouts, disconnects) when the
    vendor SDK (and so its `WujiException`) is not installed. Mirrors `wuji_sdk.WujiException`."""


class EmulatedNodeOfflineError(Exception):
    """Raised by in-package device emulations for an unanswering finger module when the vendor SDK
    (and so its `NodeOfflineError`) is not installed. Mirrors `wuji_sdk.NodeOfflineError`."""


def sdk_module() -> Any | None:
    """The imported `wuji_sdk` module, or None when the optional extra is not installed. (The
    SDK prints a telemetry notice unless WUJI_TELEMETRY_DISABLE=1: `wuji-tactile hw` sets it.)"""
    try:
        import wuji_sdk
    except ImportError:
        return None
    return wuji_sdk


def offline_error_types() -> tuple[type[BaseException], ...]:
    """Exception types that mean "this finger's module does not answer"."""
    sdk = sdk_module()
    return (EmulatedNodeOfflineError,) + ((sdk.NodeOfflineError,) if sdk is not None else ())


def sdk_error_types() -> tuple[type[BaseException], ...]:
    """The SDK's failure base class (disconnects, timeouts, closed streams), if installed, and the
    emulation's stand-in for it."""
    sdk = sdk_module()
    return (EmulatedSdkError,) + ((sdk.WujiException,) if sdk is not None else ())
