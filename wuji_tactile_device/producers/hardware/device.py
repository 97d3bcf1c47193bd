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
`NodeOfflineError` for an unanswering finger module; identity (`serial_number`,
`handedness()`, `hw_version()`, `info.firmware_version`), `joint_diagnostics().subscribe()` for the
health topic, `joint_states().subscribe()` (`JointStateFrame`: header, `joints` of `JointStateEntry`
nid / position [rad]) for the measured joint angles behind the recorded hand poses,
`SdkManager.instance().scan()` / `.connect(...)`. `tools/check_sdk.py` checks every
one of them against an installed wuji-sdk (`SDK_SURFACE` below is the list).

Losing the connection: with a `connector` (what `connect_sdk_hand` gives), a failing stream is
not fatal — `poll()` returns nothing while the adapter reconnects to the same hand by serial
number (bounded calls, exponential backoff), checks that it is still the same hand on the same
side, resubscribes and bumps `generation`, so the producer re-confirms every finger's info
before it publishes again. Without a connector a stream failure raises ProducerError.
"""
from __future__ import annotations

import functools
import logging
import time
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, runtime_checkable
from collections.abc import Callable

from ...errors import DeviceDisconnectedError, FingerOfflineError, HandednessMismatchError, ProducerError
from ...hands.wuji_hand2 import FINGERS
from .identity import connection_name, read_identity, resolve_side
from .joint_states import JointSample, joint_sample
from .bridge_probe import bridge_budget_s, search_bridge
from .recovery import Backoff, RetryPolicy, bounded, retry
from .sdk import (EmulatedNodeOfflineError, EmulatedSdkError, offline_error_types,  # noqa: F401 (re-exported)
                  sdk_error_types, sdk_module)

log = logging.getLogger(__name__)

#: Every SDK attribute this package uses (checked by tools/check_sdk.py against an installed
#: wuji-sdk): module-level names, then "Class.attribute" (class attributes / field descriptors).
SDK_SURFACE: tuple[str, ...] = (
    "__version__", "SdkManager.instance", "SdkManager.scan", "SdkManager.connect", "ConnectOptions",
    "Handedness.Left", "Handedness.Right", "DeviceType.WujiHand2", "WujiException", "NodeOfflineError",
    "FrameHeader", "HwVersion",
    "DiscoveredDevice.sn", "DiscoveredDevice.address", "DiscoveredDevice.device_type",
    "WujiHand2.serial_number", "WujiHand2.info", "WujiHand2.is_connected", "WujiHand2.disconnect",
    "WujiHand2.handedness", "WujiHand2.hw_version", "WujiHand2.fingertip_online",
    "WujiHand2.calibrate_fingertip", "WujiHand2.joint_diagnostics", "WujiHand2.joint_states",
    "WujiHand2.nid_to_joint_index",
    *(f"WujiHand2.fingertip_{f}_{k}" for f in FINGERS for k in ("info", "data", "status")),
    "DeviceInfo.serial_number", "DeviceInfo.firmware_version",
    "HwVersion.major", "HwVersion.minor", "HwVersion.patch",
    "FingertipInfoResource.get", "FingertipStatusResource.get", "HandednessResource.get", "HwVersionResource.get",
    "FingertipThumbDataResource.subscribe", "JointDiagnosticsResource.subscribe", "JointStatesResource.subscribe",
    "Subscription.recv", "Subscription.close",
    "FingertipSensorInfo.header", "FingertipSensorInfo.digest", "FingertipSensorInfo.model",
    "FingertipSensorInfo.device_type", "FingertipSensorInfo.rate_hz", "FingertipSensorInfo.format",
    "FingertipSensorData.header", "FingertipSensorData.info_digest", "FingertipSensorData.data",
    "FrameHeader.seq", "FrameHeader.timestamp_us", "FrameHeader.frame_id",
    "FingertipSensorStatus.model", "FingertipSensorStatus.state",
    "FingertipSensorState.Ready", "FingertipSensorState.Calibrating",
    "FingertipSensorModel.Standard", "FingertipSensorModel.Thumb",
    "JointDiagnosticsFrame.header", "JointDiagnosticsFrame.joints", "JointDiagnosticsFrame.comm",
    "JointDiagnosticsEntry.nid", "JointDiagnosticsEntry.mcu_temp_c_fb", "JointDiagnosticsEntry.error_code_current",
    "JointDiagnosticsEntry.current", "JointDiagnosticsEntry.vbus_v_fb", "JointDiagnosticsEntry.comm_response_rate_pct",
    "JointDiagnosticsEntry.comm_timeout_total",
    "JointStateFrame.header", "JointStateFrame.joints", "JointStateEntry.nid", "JointStateEntry.position",
    "Hand2CommSummary.tactile_online_mask", "Hand2CommSummary.tactile_response_rate_pct",
    "Hand2CommSummary.tactile_timeout_total",
)

#: Status values (FingertipSensorModel / FingertipSensorState compare equal to these ints).
MODEL_STANDARD, MODEL_THUMB = 0, 1
STATE_READY, STATE_CALIBRATING = 0, 1


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
    received_ns: int  # the device's clock_ns() when the producer pulled it from the SDK


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


@runtime_checkable
class JointStateSource(Protocol):
    """A device that can also stream the hand's joint states (optional: `SdkFingertipDevice`)."""

    def open_joint_states(self) -> bool: ...
    def poll_joint_states(self) -> list[JointSample]: ...


def _payload(data: Any) -> bytes:
    # The SDK's `data` is bytes-like (stubs say list[int]); bytes() covers both, once per frame.
    return data if isinstance(data, bytes) else bytes(data)


@dataclass
class LinkCounters:
    """The device link's own counters (`SdkFingertipDevice.link_counters`)."""

    stream_errors: int = 0  # SDK stream reads that raised
    reconnect_attempts: int = 0  # tries to reach the hand again after it was lost
    reconnect_failures: int = 0  # of those, the ones that failed
    reconnects: int = 0  # of those, the ones that succeeded
    diagnostics_errors: int = 0  # joint diagnostics reads that failed (logged, never raised)
    joint_state_errors: int = 0  # joint state subscriptions that failed (retried with backoff)


class SdkFingertipDevice:
    """`FingertipDevice` over a `wuji_sdk.WujiHand2` (or an object with its accessor names, such
    as the emulator). Translates the SDK's `NodeOfflineError` into `FingerOfflineError`."""

    def __init__(self, hand: Any, *, max_frames_per_poll: int = 64, owns_connection: bool = False,
                 connector: Callable[[], Any] | None = None, policy: Any = None, identity: Any = None,
                 clock_ns: Callable[[], int] = time.monotonic_ns):

        #: The local monotonic clock [ns] frames are stamped with on arrival (`received_ns`) and
        #: reconnect backoff runs on (tests inject a fake one; the producer shares it).
        self.clock_ns = clock_ns
        self._hand = hand
        self._owns_connection = owns_connection
        self._connector = connector
        self.policy = policy or RetryPolicy()
        self._reconnect_backoff = Backoff(self.policy)
        self._identity = identity
        self._diag_sub: Any = None
        self._joint_sub: Any = None
        self._want_joint_states = False
        self._joint_backoff = Backoff(self.policy)
        #: Bumped by every successful reconnect: the producer re-confirms all fingers then.
        self.generation = 0
        self.connected = True
        self.lost_at_ns: int | None = None
        self.link_counters = LinkCounters()
        self.last_reconnect_s: float | None = None
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
        if self._want_joint_states:
            self._joint_backoff.succeeded()
            self._subscribe_joint_states(self.clock_ns())

    def poll(self) -> list[FingertipFrame]:
        """Everything that arrived since the last call (non-blocking), finger by finger. While
        the connection is lost (and a connector is known), returns [] and reconnects when due."""
        if not self.connected:
            self._maybe_reconnect()
            return []
        out: list[FingertipFrame] = []
        for f, sub in self._subs.items():
            for _ in range(self._max):
                try:
                    msg = sub.recv()
                except self._sdk_errors as exc:
                    if self._connector is None:
                        raise DeviceDisconnectedError(f"{f}: fingertip data stream failed (device disconnected?): {exc}; "
                                                      "no connector to reconnect with (connect_sdk_hand gives one)") from exc
                    self._lost(f, exc)
                    return out
                if msg is None:
                    break
                h = msg.header
                out.append(FingertipFrame(f, int(h.seq), int(h.timestamp_us), int(msg.info_digest),
                                          _payload(msg.data), self.clock_ns()))
        return out

    # ----- connection loss and reconnection -----
    def _lost(self, finger: str, exc: BaseException) -> None:
        self.link_counters.stream_errors += 1
        self.connected = False
        self.lost_at_ns = self.clock_ns()
        self._reconnect_backoff.succeeded()
        log.warning("hand %s: the %s data stream failed (%s); reconnecting by serial number", self.serial_number,
                    finger, exc)
        subs, self._subs = self._subs, {}
        aux = [s for s in (self._diag_sub, self._joint_sub) if s is not None]
        for sub in list(subs.values()) + aux:
            try:
                sub.close()
            except Exception:  # noqa: BLE001 - the link is gone; closing a dead stream may fail any way
                pass
        self._diag_sub = self._joint_sub = None
        self._release(self._hand)

    def _release(self, hand: Any) -> None:
        """Best-effort disconnect of a connection that failed, so the connection name is free for
        the next attempt (bounded; errors logged, not raised: the link is already gone)."""

        if not hasattr(hand, "disconnect"):
            return
        try:
            bounded(hand.disconnect, self.policy.timeout_s, f"disconnecting the lost connection to {self.serial_number}")
        except Exception as exc:  # noqa: BLE001 - the connection is dead either way
            log.info("hand %s: disconnecting the lost connection: %s", self.serial_number, exc)

    def _maybe_reconnect(self, now_ns: int | None = None) -> bool:
        """One reconnect attempt when its backoff has elapsed. True when connected again."""

        now = self.clock_ns() if now_ns is None else now_ns
        if self._connector is None or not self._reconnect_backoff.due(now):
            return False
        c = self.link_counters
        c.reconnect_attempts += 1
        timeout = self.policy.timeout_s
        hand = None
        try:
            hand = bounded(self._connector, timeout, f"reconnecting to hand {self.serial_number}")
            identity = read_identity(hand, lambda fn, what: bounded(fn, timeout, what))
            if self.serial_number and identity.serial_number and identity.serial_number != self.serial_number:
                raise ProducerError(f"reconnect reached hand {identity.serial_number}, not {self.serial_number}")
            before = self._identity.side if self._identity is not None else None
            if before and identity.side and identity.side != before:
                raise HandednessMismatchError(f"hand {self.serial_number} reported {before} before the reconnect "
                                              f"and {identity.side} after it; refusing to continue")
            self._hand, self._identity = hand, identity
            self.connected = True
            self.open_streams()
        except HandednessMismatchError:
            self._release(hand)
            raise
        except (ProducerError,) + self._sdk_errors + self._offline_types as exc:
            if hand is not None:  # connected, then identity or subscribing failed: free the name again
                self._release(hand)
            self.connected = False
            self._subs = {}
            c.reconnect_failures += 1
            wait = self._reconnect_backoff.failed(now)
            log.warning("hand %s: reconnect attempt %d failed (%s); next in %.2f s", self.serial_number,
                        self._reconnect_backoff.failures, exc, wait)
            return False
        c.reconnects += 1
        self.generation += 1
        self._reconnect_backoff.succeeded()
        self.last_reconnect_s = (self.clock_ns() - (self.lost_at_ns or now)) / 1e9
        log.warning("hand %s: reconnected after %.2f s; every finger is re-confirmed before publishing again",
                    self.serial_number, self.last_reconnect_s)
        return True

    # ----- identity and health -----
    @property
    def identity(self):
        """The hand's `HandIdentity` (read once, bounded and retried)."""
        if self._identity is None:

            self._identity = read_identity(self._hand, lambda fn, what: retry(lambda: self._sdk_call(fn, what),
                                                                              self.policy, what))
        return self._identity

    def _sdk_call(self, fn: Callable[[], Any], what: str) -> Any:
        try:
            return fn()
        except self._offline_types as exc:
            raise FingerOfflineError((), f"{what}: {exc}") from exc
        except self._sdk_errors as exc:
            raise ProducerError(f"{what} failed: {exc}") from exc

    def poll_diagnostics(self) -> Any | None:
        """The newest joint diagnostics frame since the last call (non-blocking), or None. The
        subscription opens on first use; a hand without `joint_diagnostics()` yields None. SDK
        failures are counted (`link_counters.diagnostics_errors`) and logged, never raised:
        health is auxiliary."""
        if not self.connected or not hasattr(self._hand, "joint_diagnostics"):
            return None
        try:
            if self._diag_sub is None:
                self._diag_sub = self._hand.joint_diagnostics().subscribe()
            latest = None
            for _ in range(self._max):
                msg = self._diag_sub.recv()
                if msg is None:
                    break
                latest = msg
            return latest
        except self._sdk_errors as exc:
            self.link_counters.diagnostics_errors += 1
            if self.link_counters.diagnostics_errors == 1:
                log.warning("hand %s: joint diagnostics unavailable: %s", self.serial_number, exc)
            self._diag_sub = None
            return None

    # ----- measured joint angles (auxiliary: failures are counted and logged, never raised) -----
    @property
    def joint_states_available(self) -> bool:
        """True when the hand's SDK object offers the joint state stream (`joint_states()`)."""
        return hasattr(self._hand, "joint_states")

    def open_joint_states(self) -> bool:
        """Subscribe to the hand's joint state stream (kept across reconnects). False when the hand
        offers none; a failing subscription is counted (`link_counters.joint_state_errors`),
        logged and retried by `poll_joint_states` with the recovery backoff."""
        if not self.joint_states_available:
            return False
        self._want_joint_states = True
        if self.connected and self._joint_sub is None:
            self._subscribe_joint_states(self.clock_ns())
        return True

    def _subscribe_joint_states(self, now_ns: int) -> None:
        try:
            self._joint_sub = self._hand.joint_states().subscribe()
            self._joint_backoff.succeeded()
        except self._sdk_errors + self._offline_types as exc:
            self._joint_sub = None
            self._joint_failed(now_ns, "subscribing to the joint state stream", exc)

    def _joint_failed(self, now_ns: int, what: str, exc: BaseException) -> None:
        self.link_counters.joint_state_errors += 1
        wait = self._joint_backoff.failed(now_ns)
        log.warning("hand %s: %s failed (%s); hand poses are recorded as not tracked meanwhile, next attempt in "
                    "%.2f s", self.serial_number, what, exc, wait)

    def poll_joint_states(self) -> list[JointSample]:
        """The joint state frames that arrived since the last call (non-blocking, at most
        `max_frames_per_poll`), oldest first, as `JointSample`s. [] while not subscribed or
        while the connection is lost."""
        if not (self._want_joint_states and self.connected):
            return []
        now = self.clock_ns()
        if self._joint_sub is None:
            if self._joint_backoff.due(now):
                self._subscribe_joint_states(now)
            if self._joint_sub is None:
                return []
        out: list[JointSample] = []
        try:
            for _ in range(self._max):
                msg = self._joint_sub.recv()
                if msg is None:
                    break
                out.append(joint_sample(msg, now))
        except self._sdk_errors as exc:
            self._joint_sub = None
            self._joint_failed(now, "receiving joint states", exc)
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
        if self._diag_sub is not None:
            subs["joint_diagnostics"], self._diag_sub = self._diag_sub, None
        if self._joint_sub is not None:
            subs["joint_states"], self._joint_sub = self._joint_sub, None
        self._want_joint_states = False
        for sub in subs.values():
            try:
                sub.close()
            except self._sdk_errors as exc:  # a stream of a lost connection: nothing left to release
                log.info("closing a stream of hand %s: %s", self.serial_number, exc)
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
                     timeout_ms: int = 1000, manager: Any = None, policy: Any = None,
                     clock_ns: Callable[[], int] = time.monotonic_ns,
                     bridge_search: Callable[[str, float], str | None] | None = None) -> SdkFingertipDevice:
    """Connect to a Wuji Hand 2 by serial number, address or side (exactly one selects: sn, else
    address, else side), under a connection name unique to this producer, read its identity
    (serial number, side, firmware / hardware / SDK versions) and wrap it — reconnecting later
    by serial number. `side` with `sn`/`address` is checked against what the hand reports
    (HandednessMismatchError on a mismatch). `manager`: an SdkManager (default the SDK's).

    By serial number the hand is looked for on USB and the network first (the SDK's bridge off);
    only when it is on neither, `bridge_search(sn, budget_s)` asks other SDK instances (default,
    with the SDK's own manager: `bridge_probe.search_bridge`, a child process ended at
    `bridge_probe.bridge_budget_s(timeout_ms)`, 3 s by default: the SDK's bridge search holds the
    GIL ~15 s for a hand no one has); None from it means found there, then connected over the bridge."""

    sdk = sdk_module()
    if manager is None and sdk is None:
        raise ProducerError("the vendor SDK is not installed: pip install 'wuji-tactile-device[hardware]' "
                            "(package wuji-sdk) to talk to a real hand, or use --emulate")
    if not (sn or address or side in ("right", "left")):
        raise ProducerError("connect: give a serial number, an address, or a hand side (right/left)")
    if bridge_search is None and manager is None and sn:  # the SDK's own: its bridge, in a child process
        bridge_search = functools.partial(search_bridge, timeout_ms=timeout_ms)
    if manager is None:
        assert sdk is not None, "checked above: no manager given means the SDK is installed"
        manager = sdk.SdkManager.instance()
    policy = policy or RetryPolicy(timeout_s=max(2.0, 2 * timeout_ms / 1000))
    name = connection_name(side)
    options = sdk.ConnectOptions(timeout_ms=timeout_ms) if sdk is not None else None
    bridge_options = options
    # USB and the network only (the bridge search holds the GIL ~15 s when the hand is not there):
    # the first search by serial number, and every reconnection of a hand found that way
    local_options = sdk.ConnectOptions(timeout_ms=timeout_ms, enable_bridge=False) if sdk is not None else None
    if sn:
        options = local_options
    kwargs: dict[str, Any] = {"device_name": name, "options": options}
    if sn:
        kwargs["sn"] = sn
    elif address:
        kwargs["address"] = address
    else:
        kwargs["handedness"] = (sdk.Handedness.Right if side == "right" else sdk.Handedness.Left) if sdk is not None \
            else side
    target = sn or address or f"{side} hand"

    def connect():
        try:
            return manager.connect(**kwargs)
        except offline_error_types() + sdk_error_types() as exc:
            raise ProducerError(f"could not connect to {target}: {exc}") from exc

    not_local: list[bool] = []

    def absent(_exc: BaseException) -> str | None:
        """Why retrying cannot help: the SDK's search already ran (USB and the local network) and
        a fresh scan does not list the target either. None (retry) when it is listed or the scan fails."""
        try:
            found = list(bounded(manager.scan, policy.timeout_s, "scanning for Wuji devices"))
        except (ProducerError,) + sdk_error_types():
            return None
        listed = [str(getattr(d, "sn", "")) for d in found]
        if sn:
            present = sn in listed
        elif address:
            present = any(str(getattr(d, "address", "")) == address for d in found)
        else:  # the SDK's side convention: serial number character 4 is 'K' (right) or 'J' (left)
            present = any(len(x) > 3 and x[3] == ("K" if side == "right" else "J") for x in listed)
        if present:
            return None
        not_local.append(True)
        return f"{target} is not on USB or the network (a fresh scan lists {', '.join(listed) or 'no device'})"

    try:
        hand = retry(connect, policy, f"connecting to {target}", give_up=absent)
    except ProducerError as exc:
        if not (sn and not_local and bridge_search is not None):
            raise
        budget = bridge_budget_s(timeout_ms)
        reason = bridge_search(sn, budget)
        if reason is not None:
            raise type(exc)(f"{exc}; {reason}") from exc
        kwargs["options"] = local_options = bridge_options  # another SDK instance has it: over the bridge
        hand = bounded(connect, max(policy.timeout_s, budget), f"connecting to {target} over the SDK's bridge")
    if not hasattr(hand, "fingertip_thumb_info") and not hasattr(hand, "get_fingertip_info"):
        raise ProducerError(f"connected device {type(hand).__name__} is not a Wuji Hand 2 (no fingertip sensors)")
    device = SdkFingertipDevice(hand, owns_connection=True, policy=policy, clock_ns=clock_ns)
    identity = device.identity
    if side is not None:
        resolve_side(side, identity.side, serial_number=identity.serial_number, source=identity.side_source or "")
    serial = identity.serial_number or device.serial_number
    reconnect_kwargs = {"sn": serial, "device_name": name, "options": local_options} if serial else kwargs

    def reconnect():
        try:
            return manager.connect(**reconnect_kwargs)
        except offline_error_types() + sdk_error_types() as exc:
            raise ProducerError(f"could not reconnect to hand {serial or target}: {exc}") from exc

    device._connector = reconnect
    return device
