"""The vendor SDK's value types as the emulated hand answers them: frame headers, fingertip
info / data / status, identity, joint states and diagnostics, discovered devices — NamedTuple
look-alikes with the SDK's field names (the SDK's own classes are used where it is installed and
they are constructible, e.g. `FrameHeader`)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple


class EmulatedHeader(NamedTuple):
    seq: int
    timestamp_us: int
    frame_id: str


class EmulatedInfo(NamedTuple):
    header: EmulatedHeader
    digest: int
    model: str
    device_type: int
    rate_hz: float
    format: str


class EmulatedData(NamedTuple):
    header: EmulatedHeader
    info_digest: int
    data: bytes


class EmulatedStatus(NamedTuple):
    model: int
    state: int


class Getter:
    def __init__(self, fn: Callable[[], Any]):
        self.get = fn



class EmulatedHwVersion(NamedTuple):
    major: int
    minor: int
    patch: int


class EmulatedDeviceInfo(NamedTuple):
    """`wuji_sdk.DeviceInfo` look-alike (`hand.info`)."""

    serial_number: str
    firmware_version: str


class EmulatedStatusWord(NamedTuple):
    ext_state: int
    position_limit_active: bool
    velocity_limit_active: bool
    current_limit_active: bool


class EmulatedJointDiagnosticsEntry(NamedTuple):
    """`wuji_sdk.JointDiagnosticsEntry` look-alike."""

    nid: int
    status_word: EmulatedStatusWord
    current: float
    vbus_v_fb: float
    mcu_temp_c_fb: float
    error_code_current: int
    comm_response_rate_pct: int
    comm_timeout_total: int


class EmulatedCommSummary(NamedTuple):
    """`wuji_sdk.Hand2CommSummary` look-alike (the fields the health topic reads, and counters)."""

    age_ms: int
    tactile_online_mask: int
    e2e_received: int
    e2e_lost: int
    rpc_timeouts: int
    tactile_response_rate_pct: list
    tactile_timeout_total: list
    sdk_dropped: int


class EmulatedJointDiagnosticsFrame(NamedTuple):
    """`wuji_sdk.JointDiagnosticsFrame` look-alike: online joints only, looked up by `nid`."""

    header: Any
    num_joints: int
    joints: list
    comm: EmulatedCommSummary


class EmulatedJointStateEntry(NamedTuple):
    """`wuji_sdk.JointStateEntry` look-alike."""

    nid: int
    position: float  # [rad]
    velocity: float  # [rad/s]
    effort: float


class EmulatedJointStateFrame(NamedTuple):
    """`wuji_sdk.JointStateFrame` look-alike: online joints only, looked up by `nid`."""

    header: Any
    num_joints: int
    joints: list


class EmulatedDiscoveredDevice(NamedTuple):
    """`wuji_sdk.DiscoveredDevice` look-alike (plus `firmware_version`, which the SDK's has too)."""

    sn: str
    address: str
    transport_type: str
    device_type: Any
    firmware_version: str

