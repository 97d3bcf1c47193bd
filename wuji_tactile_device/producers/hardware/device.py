"""The small device protocol the hardware producer talks to, and its implementation over the
vendor SDK `wuji_sdk` (optional import) or anything shaped like the SDK's `WujiHand2`.

`FingertipDevice` is everything the producer needs from a hand: the five fingers' info (format
JSON + digest), their data frames, status, online flags and zero calibration. `SdkFingertipDevice`
implements it over a `wuji_sdk.WujiHand2` — or over the in-package emulator, which exposes the
same accessor names — so the producer cannot tell a real hand from the emulated one.

SDK surface used (wuji_sdk 2026.10.26, checked by introspection): `hand.fingertip_<f>_info().get()`
(or the per-index `hand.get_fingertip_info(i)` some SDK examples use), `hand.fingertip_<f>_data()
.subscribe()` → `.recv()` (non-blocking, None when empty) / `.close()`,
`hand.fingertip_<f>_status().get()`, `hand.fingertip_online()`, `hand.calibrate_fingertip()`,
`NodeOfflineError` for an unanswering finger module.
"""
from __future__ import annotations

import time
from typing import Any, NamedTuple, Protocol, runtime_checkable

from ...errors import FingerOfflineError, ProducerError
from ...hands.wuji_hand2 import FINGERS

#: Status values (FingertipSensorModel / FingertipSensorState compare equal to these ints).
MODEL_STANDARD, MODEL_THUMB = 0, 1
STATE_READY, STATE_CALIBRATING = 0, 1


class EmulatedNodeOfflineError(Exception):
    """Raised by in-package device emulations for an unanswering finger module when the vendor SDK
    (and so its `NodeOfflineError`) is not installed. Mirrors `wuji_sdk.NodeOfflineError`."""


def sdk_module() -> Any | None:
    """The imported `wuji_sdk` module, or None when the optional extra is not installed. (The
    SDK prints a telemetry notice unless WUJI_TELEMETRY_DISABLE=1: `wuji-tactile hw` sets it.)"""
    try:
        import wuji_sdk  # noqa: PLC0415 (optional dependency)
    except ImportError:
        return None
    return wuji_sdk


def offline_error_types() -> tuple[type[BaseException], ...]:
    """Exception types that mean "this finger's module does not answer"."""
    sdk = sdk_module()
    return (EmulatedNodeOfflineError,) + ((sdk.NodeOfflineError,) if sdk is not None else ())


def sdk_error_types() -> tuple[type[BaseException], ...]:
    """The SDK's failure base class (disconnects, timeouts, closed streams), if installed."""
    sdk = sdk_module()
    return (sdk.WujiException,) if sdk is not None else ()


class FingertipInfo(NamedTuple):
    """One finger's `FingertipSensorInfo`, copied out of the SDK object."""

    finger: str
    digest: int  # u32; compare with a frame's info_digest for equality only
    model: str
    device_type: int
    rate_hz: float
    format: str  # the format JSON text


class FingertipFrame(NamedTuple):
    """One finger's `FingertipSensorData` as received."""

    finger: str
    seq: int  # u32, wraps
    timestamp_us: int  # device clock (time-synced by the SDK) [µs]
    info_digest: int
    data: bytes  # the raw payload, decoded per the info's format
    received_ns: int  # time.monotonic_ns() when the producer pulled it from the SDK


class FingertipStatus(NamedTuple):
    model: int  # MODEL_STANDARD | MODEL_THUMB (40 points)
    state: int  # STATE_READY | STATE_CALIBRATING


@runtime_checkable
class FingertipDevice(Protocol):
    """What the hardware producer needs from a Wuji Hand 2 (fingers in FINGERS order)."""

    serial_number: str

    def fingertip_info(self, finger: str) -> FingertipInfo: ...
    def fingertip_status(self, finger: str) -> FingertipStatus: ...
    def fingertip_online(self) -> list[bool]: ...
    def open_streams(self) -> None: ...
    def poll(self) -> list[FingertipFrame]: ...
    def calibrate_fingertip(self) -> None: ...
    def close(self) -> None: ...


def _payload(data: Any) -> bytes:
    # The SDK's `data` is bytes-like (stubs say list[int]); bytes() covers both, once per frame.
    return data if isinstance(data, bytes) else bytes(data)


class SdkFingertipDevice:
    """`FingertipDevice` over a `wuji_sdk.WujiHand2` (or an object with its accessor names, such
    as the emulator). Translates the SDK's `NodeOfflineError` into `FingerOfflineError`."""

    def __init__(self, hand: Any, *, max_frames_per_poll: int = 64, owns_connection: bool = False):
        self._hand = hand
        self._owns_connection = owns_connection
        self._subs: dict[str, Any] = {}
        self._max = max_frames_per_poll
        self._offline_types = offline_error_types()
        self._sdk_errors = sdk_error_types()
        self.serial_number = str(getattr(hand, "serial_number", "") or "")
        has_named = all(hasattr(hand, f"fingertip_{f}_info") for f in FINGERS)
        if not has_named and not hasattr(hand, "get_fingertip_info"):
            raise ProducerError(
                f"{type(hand).__name__} has neither fingertip_<finger>_info() nor "
                "get_fingertip_info(i); it is not a Wuji Hand 2 with fingertip sensors")
        self._named_info = has_named

    @property
    def hand(self) -> Any:
        """The wrapped SDK (or emulated) hand object."""
        return self._hand

    def _offline(self, finger: str, what: str, exc: BaseException) -> FingerOfflineError:
        return FingerOfflineError((finger,), f"{finger}: fingertip module does not answer ({what}): {exc}")

    def fingertip_info(self, finger: str) -> FingertipInfo:
        """Fetch the finger's info (blocking, chunked inside the SDK)."""
        _check_finger(finger)
        try:
            if self._named_info:
                info = getattr(self._hand, f"fingertip_{finger}_info")().get()
            else:
                info = self._hand.get_fingertip_info(FINGERS.index(finger))
                if not hasattr(info, "format") and hasattr(info, "get"):
                    info = info.get()  # examples differ on whether the per-index form needs .get()
        except self._offline_types as exc:
            raise self._offline(finger, "info", exc) from exc
        except self._sdk_errors as exc:
            raise ProducerError(f"{finger}: reading the fingertip sensor info failed: {exc}") from exc
        return FingertipInfo(finger, int(info.digest), str(info.model), int(info.device_type),
                             float(info.rate_hz), str(info.format))

    def fingertip_status(self, finger: str) -> FingertipStatus:
        _check_finger(finger)
        try:
            st = getattr(self._hand, f"fingertip_{finger}_status")().get()
        except self._offline_types as exc:
            raise self._offline(finger, "status", exc) from exc
        except self._sdk_errors as exc:
            raise ProducerError(f"{finger}: reading the fingertip status failed: {exc}") from exc
        return FingertipStatus(int(st.model), int(st.state))

    def fingertip_online(self) -> list[bool]:
        try:
            flags = [bool(x) for x in self._hand.fingertip_online()]
        except self._sdk_errors as exc:
            raise ProducerError(f"reading the fingertip online flags failed: {exc}") from exc
        if len(flags) != len(FINGERS):
            raise ProducerError(f"fingertip_online() returned {len(flags)} flags, expected {len(FINGERS)}")
        return flags

    def open_streams(self) -> None:
        """Subscribe to the five data streams (idempotent)."""
        for f in FINGERS:
            if f not in self._subs:
                try:
                    self._subs[f] = getattr(self._hand, f"fingertip_{f}_data")().subscribe()
                except self._sdk_errors as exc:
                    raise ProducerError(f"{f}: subscribing to the fingertip data stream failed: {exc}") from exc

    def poll(self) -> list[FingertipFrame]:
        """Everything that arrived since the last call (non-blocking), finger by finger."""
        out: list[FingertipFrame] = []
        for f, sub in self._subs.items():
            for _ in range(self._max):
                try:
                    msg = sub.recv()
                except self._sdk_errors as exc:
                    raise ProducerError(f"{f}: fingertip data stream failed (device disconnected?): {exc}") from exc
                if msg is None:
                    break
                h = msg.header
                out.append(FingertipFrame(f, int(h.seq), int(h.timestamp_us), int(msg.info_digest),
                                          _payload(msg.data), time.monotonic_ns()))
        return out

    def calibrate_fingertip(self) -> None:
        try:
            self._hand.calibrate_fingertip()
        except self._offline_types as exc:
            raise FingerOfflineError((), f"zero calibration refused: a fingertip module does not answer: {exc}") from exc
        except self._sdk_errors as exc:
            raise ProducerError(f"zero calibration command failed: {exc}") from exc

    def close(self) -> None:
        """Close the data subscriptions; disconnect the hand if `connect_sdk_hand` opened it."""
        subs, self._subs = self._subs, {}
        for sub in subs.values():
            sub.close()
        if self._owns_connection:
            self._owns_connection = False
            try:
                self._hand.disconnect()
            except self._sdk_errors as exc:
                raise ProducerError(f"disconnecting from hand {self.serial_number!r} failed: {exc}") from exc


def _check_finger(finger: str) -> None:
    if finger not in FINGERS:
        raise ProducerError(f"unknown finger {finger!r}; fingers are {', '.join(FINGERS)}")


def connect_sdk_hand(*, side: str | None = None, sn: str | None = None, address: str | None = None,
                     timeout_ms: int = 1000) -> SdkFingertipDevice:
    """Connect to a Wuji Hand 2 through the vendor SDK by serial number, address or handedness
    (exactly one is used: sn, else address, else side) and wrap it."""
    sdk = sdk_module()
    if sdk is None:
        raise ProducerError("the vendor SDK is not installed: pip install 'wuji-tactile-device[hardware]' "
                            "(package wuji-sdk) to talk to a real hand, or use --emulate")
    kwargs: dict[str, Any] = {"device_name": "wuji_tactile", "options": sdk.ConnectOptions(timeout_ms=timeout_ms)}
    if sn:
        kwargs["sn"] = sn
    elif address:
        kwargs["address"] = address
    elif side in ("right", "left"):
        kwargs["handedness"] = sdk.Handedness.Right if side == "right" else sdk.Handedness.Left
    else:
        raise ProducerError("connect: give a serial number, an address, or a hand side (right/left)")
    try:
        hand = sdk.SdkManager.instance().connect(**kwargs)
    except sdk.WujiException as exc:
        target = kwargs.get("sn") or kwargs.get("address") or f"{side} hand"
        raise ProducerError(f"could not connect to {target}: {exc}") from exc
    if not hasattr(hand, "fingertip_thumb_info") and not hasattr(hand, "get_fingertip_info"):
        raise ProducerError(f"connected device {type(hand).__name__} is not a Wuji Hand 2 (no fingertip sensors)")
    return SdkFingertipDevice(hand, owns_connection=True)
