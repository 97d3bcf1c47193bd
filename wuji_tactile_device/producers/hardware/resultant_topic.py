"""The device's own per-finger resultants and temperatures as an auxiliary MCAP topic.

Topic `<collection_id>/device_resultants` (e.g. `tactile/right/device_resultants`), message
encoding `json`, schema `wuji_tactile.DeviceResultants` (encoding `jsonschema`), one message per
published tick:

    {"sequence": 17, "device_time_us": 1234567,
     "thumb": {"fx": 0.12, "fy": -0.03, "fz": 1.5, "temperature_c": 30.0, "device_time_us": 1234565,
               "tip": {"fx": ..., "fy": ..., "fz": ...}},
     "index": {...}, "middle": {...}, "ring": {...}, "pinky": {...}}

- `fx, fy, fz` [N]: the aggregate block exactly as decoded (raw × scale, float64; JSON keeps every
  bit), in the finger's aggregate axes `R(base_rpy)·R(aggregate_rpy)` (`R(base_rpy)` when the
  format declares no `aggregate_rpy`), i.e. the sensor module's axes placed in the finger's
  `tip_sensor_frame` (the module's axes, not a taxel's). Device sign convention: the contract's
  axis/sign mapping is NOT applied (with the default mapping the device reports the force the pad
  exerts, the opposite of the contract's force on the taxel).
- `tip` (only when the format declares the mounting pose): the same vector in `tip_sensor_frame`
  (= distal link) axes.
- `temperature_c` [°C] (absent when the format declares none); `device_time_us`: that finger's
  frame timestamp on the device clock. A finger whose format declares no aggregate force is absent.
- Top level: `sequence` = the sequence of the contract data record published for this tick,
  `device_time_us` = its device time (`sample_time_raw_device_clock` / 1000).
- MCAP publish time = the tick's sample time and log time = its available time, exactly the data
  record's. Join with the contract topic on `sequence`, publish time or log time.
"""
from __future__ import annotations

import logging
import math
from typing import Any, NamedTuple

import numpy as np

from ...hands.wuji_hand2 import FINGERS
from ..base import FrameSink


log = logging.getLogger(__name__)

class FingerResultant(NamedTuple):
    """The device's own resultant for one finger (aggregate block), not derived from taxels."""

    finger: str
    force_n: np.ndarray  # (3,) [N] in the aggregate axes R(base_rpy)·R(aggregate_rpy)
    force_tip_n: np.ndarray | None  # (3,) [N] in tip_sensor_frame (None: mounting pose unknown)
    temperature_c: float  # [°C], NaN when not declared
    device_time_us: int


class TickResultants(NamedTuple):
    """The device resultants of one published tick, with the tick's identity in the contract
    stream: `sequence` is the published data record's sequence, `sample_time_ns` its sample
    time (local monotonic clock), `device_time_us` its device time and `available_time_ns` its
    available time (when it was published). `resultants`: finger → FingerResultant, only fingers whose format
    declares an aggregate force."""

    sequence: int
    available_time_ns: int
    sample_time_ns: int
    device_time_us: int
    resultants: dict[str, FingerResultant]



RESULTANTS_SUFFIX = "/device_resultants"
RESULTANTS_SCHEMA_NAME = "wuji_tactile.DeviceResultants"

_AXES = {a: {"type": "number", "description": f"{a} [N]"} for a in ("fx", "fy", "fz")}
_FINGER_SCHEMA = {
    "type": "object",
    "description": "one finger's aggregate block: resultant [N] in its aggregate axes "
                   "R(base_rpy)·R(aggregate_rpy), device sign convention; temperature [°C]",
    "properties": {
        **_AXES,
        "temperature_c": {"type": "number", "description": "module temperature [°C]"},
        "device_time_us": {"type": "integer", "minimum": 0, "description": "frame timestamp, device clock [µs]"},
        "tip": {"type": "object", "description": "the resultant in tip_sensor_frame (distal link) axes [N]",
                "properties": _AXES, "required": ["fx", "fy", "fz"], "additionalProperties": False},
    },
    "required": ["fx", "fy", "fz", "device_time_us"],
    "additionalProperties": False,
}
RESULTANTS_SCHEMA: dict[str, Any] = {
    "title": RESULTANTS_SCHEMA_NAME,
    "description": "Wuji Hand 2 fingertip resultants and temperatures as the device reports them, "
                   "one message per published contract tick (not part of the tactile contract)",
    "type": "object",
    "properties": {
        "sequence": {"type": "integer", "minimum": 0, "description": "sequence of the tick's contract data record"},
        "device_time_us": {"type": "integer", "minimum": 0, "description": "the tick's device time [µs]"},
        **{f: _FINGER_SCHEMA for f in FINGERS},
    },
    "required": ["sequence", "device_time_us"],
    "additionalProperties": False,
}
CHANNEL_METADATA = {
    "force_frame": "per finger: aggregate axes R(base_rpy)*R(aggregate_rpy) in tip_sensor_frame; "
                   "'tip': tip_sensor_frame axes",
    "force_sign": "device convention (the contract's axis/sign mapping is not applied)",
    "units": "force N, temperature degC, device_time_us microseconds of the device clock",
}


def resultants_topic(collection_id: str) -> str:
    """`<collection_id>/device_resultants`."""
    return collection_id + RESULTANTS_SUFFIX


def resultants_message(tick: TickResultants) -> dict[str, Any]:
    """The JSON message of one published tick (see the module doc). A finger whose resultant is
    not finite (an f32 aggregate carrying NaN/inf) is left out: JSON cannot carry it."""
    msg: dict[str, Any] = {"sequence": tick.sequence, "device_time_us": tick.device_time_us}
    for finger, r in tick.resultants.items():
        fx, fy, fz = (float(v) for v in r.force_n)
        if not (math.isfinite(fx) and math.isfinite(fy) and math.isfinite(fz)):
            continue
        entry: dict[str, Any] = {"fx": fx, "fy": fy, "fz": fz, "device_time_us": int(r.device_time_us)}
        if math.isfinite(r.temperature_c):
            entry["temperature_c"] = float(r.temperature_c)
        if r.force_tip_n is not None:
            tx, ty, tz = (float(v) for v in r.force_tip_n)
            entry["tip"] = {"fx": tx, "fy": ty, "fz": tz}
        msg[finger] = entry
    return msg


class ResultantRecorder(FrameSink):
    """Writes every published tick's device resultants to `<collection_id>/device_resultants` of
    an `McapRecorder` (same file, same flush guarantee). The hardware producer's recording output:
    `ProducerRunner(producer, transport, recorder=rec)` adds it; `source` is the producer whose
    `last_tick` each published frame's message is made from."""

    def __init__(self, recorder, collection_id: str, *, source: Any = None):
        self.topic = resultants_topic(collection_id)
        self._recorder = recorder
        self._source = source
        self._channel = recorder.add_json_channel(self.topic, RESULTANTS_SCHEMA,
                                                  metadata={"collection": collection_id, **CHANNEL_METADATA})
        #: Ticks written; finger entries left out because their resultant was not finite.
        self.written = 0
        self.nonfinite_skipped = 0

    def on_frame(self, frame, sequence: int, timestamp) -> None:
        self.write(self._source.last_tick)

    def __call__(self, producer: Any) -> None:
        """Write `producer.last_tick` (anything with that attribute)."""
        self.write(producer.last_tick)

    def write(self, tick: TickResultants) -> None:
        msg = resultants_message(tick)
        missing = sum(finger not in msg for finger in tick.resultants)
        if missing:
            if not self.nonfinite_skipped:
                log.warning("%s: a device resultant is not finite (tick %d); such fingers are left out of the "
                            "topic", self.topic, tick.sequence)
            self.nonfinite_skipped += missing
        self._recorder.write_json(self._channel, msg, log_time_ns=tick.available_time_ns,
                                  publish_time_ns=tick.sample_time_ns, sequence=tick.sequence)
        self.written += 1
