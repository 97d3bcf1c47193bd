"""The hand's health as an auxiliary MCAP topic: joint diagnostics and each finger's tactile link.

Topic `<collection_id>/health` (e.g. `tactile/right/health`), message encoding `json`, schema
`wuji_tactile.HandHealth` (encoding `jsonschema`), at most one message per `period_s` (default
0.5 s) while the producer runs:

    {"device_time_us": 3600120000, "diagnostics_age_ms": 0,
     "joints": {"thumb_cmc_flex": {"temperature_c": 38.0, "error_code": 0, "current_a": 0.06,
                                   "bus_voltage_v": 24.0, "response_rate_pct": 100, "timeouts": 0}, ...},
     "fingers": {"thumb": {"online": true, "link_response_rate_pct": 100, "link_timeouts": 0,
                           "available": true, "skew_us": -3000.0, "frames_lost": 0,
                           "frames_dropped": 0, "ticks_missing": 0}, ...},
     "published": 1200, "incomplete_ticks": 0, "reconnects": 0}

- `joints` (from the SDK's `JointDiagnosticsFrame`, online joints only; absent when the hand
  sends none): keyed `<finger>_<joint>` in firmware order (thumb cmc_flex, cmc_abd, mcp, ip;
  fingers mcp_flex, mcp_abd, pip, dip), from the frame's `nid` (= bus·5 + node, node 1..4):
  MCU temperature [°C], active fault code (0 = none; `error` names it when the SDK's
  `describe_error` knows it), motor current [A], bus voltage [V], bus response rate [%] and
  timeouts.
- `fingers`: `online`, `link_response_rate_pct`, `link_timeouts` from the frame's tactile link
  summary (`tactile_online_mask`, `tactile_response_rate_pct`, `tactile_timeout_total`; absent
  without diagnostics); `available` (the producer uses the finger), `skew_us` (its timestamp
  minus the last tick's time), and its assembly counters.
- Log time = local monotonic clock when written; publish time = the same. In Foxglove: Plot
  panel → `/tactile/right/health.joints.index_mcp_flex.temperature_c`,
  `/tactile/right/health.fingers.ring.link_response_rate_pct`.
"""
from __future__ import annotations

import logging
import time
from typing import Any

from ..base import FrameSink
from ...hands.wuji_hand2 import FINGERS, JOINT_SUFFIXES
from .sdk import sdk_module

log = logging.getLogger(__name__)

HEALTH_SUFFIX = "/health"
HEALTH_SCHEMA_NAME = "wuji_tactile.HandHealth"
#: Joint names in firmware order (flat index 0..19).
JOINT_NAMES: tuple[str, ...] = tuple(f"{f}_{s}" for f in FINGERS
                                     for s in JOINT_SUFFIXES["thumb" if f == "thumb" else "finger"])

_N = {"type": "number"}
_I = {"type": "integer"}
_JOINT = {"type": "object", "properties": {
    "temperature_c": {**_N, "description": "MCU temperature [°C]"},
    "error_code": {**_I, "minimum": 0, "description": "active device fault code (0 = none)"},
    "error": {"type": "string", "description": "the fault code's name (SDK describe_error)"},
    "current_a": {**_N, "description": "motor current [A]"},
    "bus_voltage_v": {**_N, "description": "bus voltage [V]"},
    "response_rate_pct": {**_I, "description": "bus response rate [%]"},
    "timeouts": {**_I, "minimum": 0, "description": "bus timeouts since start"}},
    "required": ["temperature_c", "error_code"], "additionalProperties": False}
_FINGER = {"type": "object", "properties": {
    "online": {"type": "boolean", "description": "tactile module answers the hand's heartbeat"},
    "link_response_rate_pct": {**_I, "description": "tactile link response rate [%]"},
    "link_timeouts": {**_I, "minimum": 0, "description": "tactile link timeouts since start"},
    "available": {"type": "boolean", "description": "the producer uses this finger's frames"},
    "skew_us": {**_N, "description": "timestamp minus the last published tick's time [µs]"},
    "frames_lost": {**_I, "minimum": 0, "description": "gaps in the frame sequence"},
    "frames_dropped": {**_I, "minimum": 0, "description": "frames received but not published"},
    "ticks_missing": {**_I, "minimum": 0, "description": "ticks abandoned because this finger had no sample"}},
    "required": ["available", "skew_us", "frames_lost", "frames_dropped", "ticks_missing"],
    "additionalProperties": False}
HEALTH_SCHEMA: dict[str, Any] = {
    "title": HEALTH_SCHEMA_NAME,
    "description": "Wuji Hand 2 health: joint diagnostics and per-finger tactile link status (not part of the "
                   "tactile contract)",
    "type": "object",
    "properties": {
        "device_time_us": {**_I, "minimum": 0, "description": "diagnostics frame time, device clock [µs]"},
        "diagnostics_age_ms": {**_I, "minimum": 0, "description": "age of the SDK's comm snapshot [ms]"},
        "joints": {"type": "object", "properties": {n: _JOINT for n in JOINT_NAMES}, "additionalProperties": False},
        "fingers": {"type": "object", "properties": {f: _FINGER for f in FINGERS}, "required": list(FINGERS),
                    "additionalProperties": False},
        "published": {**_I, "minimum": 0, "description": "ticks published so far"},
        "incomplete_ticks": {**_I, "minimum": 0},
        "reconnects": {**_I, "minimum": 0},
    },
    "required": ["fingers", "published", "incomplete_ticks", "reconnects"],
    "additionalProperties": False,
}
CHANNEL_METADATA = {"units": "temperature degC, current A, voltage V, skew microseconds, rates percent"}


def health_topic(collection_id: str) -> str:
    """`<collection_id>/health`."""
    return collection_id + HEALTH_SUFFIX


def joint_name(nid: int) -> str | None:
    """The joint of a firmware stream node id (bus·5 + node, node 1..4 joints, 5 the tactile
    slot), or None for a non-joint nid."""
    bus, node = divmod(int(nid), 5)
    if not (0 <= bus < 5 and 1 <= node <= 4):
        return None
    return JOINT_NAMES[bus * 4 + node - 1]


def _error_name(code: int) -> str | None:
    sdk = sdk_module()
    if not code or sdk is None:
        return None
    try:
        info = sdk.WujiHand2.describe_error(int(code))
    except Exception:  # noqa: BLE001 - an unknown code is reported as the number alone
        return None
    return str(info.get("name") or info.get("desc")) if isinstance(info, dict) else None


def health_message(producer, diagnostics: Any | None) -> dict[str, Any]:
    """One health message from the producer's state and the newest SDK `JointDiagnosticsFrame`
    (None: the hand sent none)."""
    c = producer.assembler.counters
    skew = producer.assembler.skew()
    unavailable = set(producer.unavailable_fingers)
    fingers: dict[str, dict[str, Any]] = {
        f: {"available": f not in unavailable, "skew_us": float(skew[f]["last_us"]), "frames_lost": c.lost[f],
            "frames_dropped": c.dropped[f], "ticks_missing": c.missing[f]} for f in FINGERS}
    msg: dict[str, Any] = {"fingers": fingers, "published": producer.published,
                           "incomplete_ticks": c.incomplete_ticks,
                           "reconnects": producer.recovery.reconnects}
    if diagnostics is None:
        return msg
    msg["device_time_us"] = int(diagnostics.header.timestamp_us)
    joints: dict[str, Any] = {}
    for e in diagnostics.joints:
        name = joint_name(e.nid)
        if name is None:
            continue
        entry: dict[str, Any] = {"temperature_c": float(e.mcu_temp_c_fb), "error_code": int(e.error_code_current),
                 "current_a": float(e.current), "bus_voltage_v": float(e.vbus_v_fb),
                 "response_rate_pct": int(e.comm_response_rate_pct), "timeouts": int(e.comm_timeout_total)}
        error = _error_name(entry["error_code"])
        if error:
            entry["error"] = error
        joints[name] = entry
    msg["joints"] = joints
    comm = getattr(diagnostics, "comm", None)
    if comm is not None:
        msg["diagnostics_age_ms"] = int(comm.age_ms)
        rates, timeouts = list(comm.tactile_response_rate_pct), list(comm.tactile_timeout_total)
        for i, f in enumerate(FINGERS):
            fingers[f]["online"] = bool(int(comm.tactile_online_mask) >> i & 1)
            if i < len(rates):
                fingers[f]["link_response_rate_pct"] = int(rates[i])
            if i < len(timeouts):
                fingers[f]["link_timeouts"] = int(timeouts[i])
    return msg


class HealthRecorder(FrameSink):
    """Writes the hand's health to `<collection_id>/health` of an `McapRecorder`: one of the
    hardware producer's recording outputs, so the run loop calls `poll()` every pass (frames or
    not); it drains the device's joint diagnostics and writes at most one message per `period_s`.
    """

    def __init__(self, recorder, collection_id: str, producer, *, period_s: float = 0.5,
                 clock=time.monotonic_ns):
        if not period_s > 0:
            raise ValueError(f"period_s must be > 0, got {period_s}")
        self.topic = health_topic(collection_id)
        self._recorder = recorder
        self._producer = producer
        self._period_ns = int(period_s * 1e9)
        self._clock = clock
        self._next_ns = 0
        self._diag = None
        self._channel = recorder.add_json_channel(self.topic, HEALTH_SCHEMA,
                                                  metadata={"collection": collection_id, **CHANNEL_METADATA})
        self.written = 0

    def on_frame(self, frame, sequence: int, timestamp) -> None:
        self.poll()

    def poll(self) -> bool:
        """Write a message if one is due. True when one was written."""
        poll = getattr(self._producer.device, "poll_diagnostics", None)
        if poll is not None:
            latest = poll()
            if latest is not None:
                self._diag = latest
        now = self._clock()
        if now < self._next_ns:
            return False
        self._next_ns = now + self._period_ns
        self._recorder.write_json(self._channel, health_message(self._producer, self._diag), log_time_ns=now,
                                  publish_time_ns=now, sequence=self.written)
        self.written += 1
        return True
