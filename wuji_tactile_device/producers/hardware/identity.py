"""Which hand is this: side, serial number, firmware / hardware / SDK versions, and a unique
connection name — checked before anything is published, recorded in the file metadata.

The SDK reports the side through `hand.handedness().get()` ('left' / 'right'; some SDK builds an
int, `Handedness.Left` = 0, `Handedness.Right` = 1). It also selects hands by side with a serial
number convention (SN[3] 'J' = left, 'K' = right), used here as a cross-check and for `scan()`
results, which carry no handedness. A mismatch between the side asked for and the side the hand
reports is refused: publishing right-hand geometry for a left hand is silently wrong data.
"""
from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from typing import Any, NamedTuple
from collections.abc import Callable

from ...errors import HandednessMismatchError, ProducerError
from .recovery import bounded
from .sdk import sdk_error_types, sdk_module

SIDES = ("right", "left")
_SN_SIDE = {"J": "left", "K": "right"}
_names = itertools.count(1)


def side_from_serial(sn: str | None) -> str | None:
    """The side by the vendor's serial convention (SN[3] 'J' left, 'K' right), else None."""
    if not sn or len(sn) < 4:
        return None
    return _SN_SIDE.get(sn[3].upper())


def normalise_side(value: Any) -> str | None:
    """'left' / 'right' from what `handedness().get()` returns (str, the SDK enum, or its int:
    0 = Left, 1 = Right); None when it says nothing usable (e.g. 'Unknown')."""
    if value is None:
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return {0: "left", 1: "right"}.get(value)
    text = str(value).strip().lower().rsplit(".", 1)[-1]
    return text if text in SIDES else None


def resolve_side(requested: str | None, reported: str | None, *, serial_number: str = "",
                 source: str = "handedness()") -> str:
    """The side to publish as. `requested` (e.g. `--hand`, None when not given) must equal what
    the hand `reported`; without a request the hand's own side is taken. Raises
    HandednessMismatchError on a mismatch and ProducerError when neither says."""
    if requested is not None and requested not in SIDES:
        raise ValueError(f"side must be one of {', '.join(SIDES)} or None, got {requested!r}")
    who = f"hand {serial_number}" if serial_number else "the connected hand"
    if reported is None:
        if requested is None:
            raise ProducerError(f"{who} does not report its side (handedness() unavailable and serial number "
                                "outside the J/K convention): give --hand left or --hand right")
        return requested
    if requested is not None and requested != reported:
        raise HandednessMismatchError(
            f"--hand {requested} was asked for, but {who} reports it is a {reported} hand ({source}); refusing to "
            f"publish {requested}-hand geometry for a {reported} hand. Pass --hand {reported}, or omit --hand "
            "to take the side from the device")
    return reported


def connection_name(side: str | None = None) -> str:
    """A connection alias unique in this process and across processes on this machine (the SDK
    routes paths by it; two producers with one name would clash). No '/' or '.' (SDK rule)."""
    return f"wuji_tactile_{side or 'hand'}_{os.getpid()}_{next(_names)}"


@dataclass(frozen=True)
class HandIdentity:
    """What the hand says about itself. Fields the SDK build cannot report are None."""

    serial_number: str
    side: str | None  # from handedness(), else the serial convention
    side_source: str | None  # "handedness()" | "serial number convention"
    firmware_version: str | None
    hardware_version: str | None
    sdk_version: str | None

    def metadata(self) -> dict[str, str]:
        """String pairs for the recording's file metadata (absent values are left out)."""
        pairs = {"device_serial_number": self.serial_number, "device_side": self.side,
                 "device_side_source": self.side_source, "device_firmware_version": self.firmware_version,
                 "device_hardware_version": self.hardware_version, "wuji_sdk_version": self.sdk_version}
        return {k: v for k, v in pairs.items() if v}


def _version_text(v: Any) -> str | None:
    if v is None:
        return None
    if all(hasattr(v, a) for a in ("major", "minor", "patch")):
        return f"{int(v.major)}.{int(v.minor)}.{int(v.patch)}"
    return str(v)


def read_identity(hand: Any, call: Callable[[Callable[[], Any], str], Any] | None = None) -> HandIdentity:
    """Read the identity of an SDK `WujiHand2` (or the emulator). `call(fn, what)` runs each
    SDK read (e.g. bounded and retried); default: call directly. A read the SDK build lacks
    (no such attribute) leaves its field None; an SDK failure propagates."""
    run = call or (lambda fn, what: fn())
    sn = str(getattr(hand, "serial_number", "") or "")
    side, source = None, None
    if hasattr(hand, "handedness"):
        side = normalise_side(run(lambda: hand.handedness().get(), "reading handedness()"))
        source = "handedness()" if side else None
    if side is None and side_from_serial(sn):
        side, source = side_from_serial(sn), "serial number convention"
    info = getattr(hand, "info", None)
    firmware = getattr(info, "firmware_version", None) if info is not None else None
    hw = run(lambda: hand.hw_version().get(), "reading hw_version()") if hasattr(hand, "hw_version") else None
    sdk = sdk_module()
    return HandIdentity(sn, side, source, str(firmware) if firmware else None, _version_text(hw),
                        getattr(sdk, "__version__", None) if sdk is not None else None)


class DiscoveredHand(NamedTuple):
    """One hand found by `scan_hands()`."""

    serial_number: str
    address: str
    side: str | None  # by the serial convention (scan results carry no handedness)
    device_type: str
    firmware_version: str | None

    def describe(self) -> str:
        return (f"{self.serial_number}  {self.address}  {self.side or 'side unknown'}  {self.device_type}"
                + (f"  firmware {self.firmware_version}" if self.firmware_version else ""))


def scan_hands(manager: Any = None, *, all_devices: bool = False, timeout_s: float = 10.0) -> list[DiscoveredHand]:
    """Wuji Hand 2 devices on the network (USB + UDP) via `SdkManager.scan()`, sorted by serial
    number; `all_devices` keeps other Wuji devices too. `manager`: an SdkManager (default the
    SDK's singleton). The scan is bounded by `timeout_s`."""

    if manager is None:
        sdk = sdk_module()
        if sdk is None:
            raise ProducerError("the vendor SDK is not installed: pip install 'wuji-tactile-device[hardware]' "
                                "(package wuji-sdk) to scan for hands")
        manager = sdk.SdkManager.instance()
    errors = _sdk_errors()
    try:
        found = bounded(manager.scan, timeout_s, "scanning for Wuji devices")
    except errors as exc:
        raise ProducerError(f"scanning for Wuji devices failed: {exc}") from exc
    out = []
    for d in found:
        kind = str(getattr(d, "device_type", "")).rsplit(".", 1)[-1]
        if kind != "WujiHand2" and not all_devices:
            continue
        fw = getattr(d, "firmware_version", None)
        out.append(DiscoveredHand(str(d.sn), str(d.address), side_from_serial(str(d.sn)), kind, str(fw) if fw else None))
    return sorted(out)


def _sdk_errors() -> tuple[type[BaseException], ...]:
    return sdk_error_types()
