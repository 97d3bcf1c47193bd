"""`EmulatedSdkManager`: the SDK's device manager over emulated hands on an emulated LAN (scan,
connect by serial number / address / handedness, injected failures)."""
from __future__ import annotations

import time
from typing import Any

from ..hardware.device import sdk_module
from .emulator import EmulatedHand2
from .sdk_failures import CallFailures, sdk_exception
from .sdk_types import EmulatedDiscoveredDevice


class EmulatedSdkManager:
    """`wuji_sdk.SdkManager` look-alike over emulated hands on an emulated LAN: `scan()` lists
    the hands whose link is up; `connect(sn= | address= | handedness=, device_name=, options=)`
    connects one (handedness by the SDK's serial-number convention, SN[3] 'J' left / 'K' right).
    A `device_name` already held by a connected hand is refused, as a path-routing alias must be
    unique. `fail_next('scan' | 'connect', error, count)` injects failures."""

    def __init__(self, hands: list[EmulatedHand2]):
        self.hands = list(hands)
        self.faults = CallFailures()
        self.connects = 0
        for i, hand in enumerate(self.hands):
            hand.address = getattr(hand, "address", None) or f"192.168.1.{50 + i}:8000"
            hand.connected = False

    def fail_next(self, call: str, error: str = "timeout", *, count: int = 1, hang_s: float = 0.5) -> None:
        self.faults.add(call, error, count, hang_s)

    def _fault(self, call: str) -> None:
        fault = self.faults.take(call)
        if fault is None:
            return
        if fault[0] == "hang":
            time.sleep(fault[1])
            return
        raise sdk_exception(fault[0], call)

    def scan(self) -> list[EmulatedDiscoveredDevice]:
        self._fault("scan")
        sdk = sdk_module()
        kind = sdk.DeviceType.WujiHand2 if sdk is not None else "WujiHand2"
        return [EmulatedDiscoveredDevice(h.serial_number, str(h.address), "Udp", kind, h.firmware_version)
                for h in self.hands if h.link_up]

    def connect(self, *, sn: str | None = None, address: str | None = None, handedness: Any = None,
                device_name: str, options: Any = None) -> EmulatedHand2:
        if sum(x is not None for x in (sn, address, handedness)) != 1:
            raise sdk_exception("error", "connect: exactly one of sn / address / handedness must be given")
        if not device_name or "/" in device_name or "." in device_name:
            raise sdk_exception("error", f"connect: invalid device_name {device_name!r}")
        self._fault("connect")
        visible = [h for h in self.hands if h.link_up]
        if sn is not None:
            match = [h for h in visible if h.serial_number == sn]
        elif address is not None:
            match = [h for h in visible if h.address == address]
        else:
            letter = "K" if str(handedness).lower().endswith("right") else "J"
            match = [h for h in visible if len(h.serial_number) > 3 and h.serial_number[3] == letter]
        if len(match) != 1:
            raise sdk_exception("not_found", f"connect: {len(match)} devices match "
                                 f"{sn or address or handedness!s}")
        hand = match[0]
        clash = [h for h in self.hands if h is not hand and h.connected and h.device_name == device_name]
        if clash:
            raise sdk_exception("error", f"connect: device_name {device_name!r} is already in use by "
                                 f"{clash[0].serial_number}")
        hand.connected = True
        hand.device_name = device_name
        self.connects += 1
        return hand

    def instance(self) -> EmulatedSdkManager:  # so it can stand where SdkManager.instance() is used
        return self
