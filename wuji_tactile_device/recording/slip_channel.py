"""The pads' slip output recorded beside a collection: one JSON message per frame on
`<collection>/pad_slip` (`PAD_SLIP_SCHEMA_NAME`), and read back (`iter_pad_slip`).

Per message, per pad (thumb → pinky): the slip velocity [m/s] in that pad's frame (the distal
segment's OpenXR joint axes: +Z along the bone toward the wrist, +Y toward the nail, X = Y × Z;
the object's tangential velocity relative to the pad while the footprint slides as a whole, 0
while any of it sticks) and the stuck fraction of the footprint's area [1] (1 without contact),
with the tactile record's exact `DeviceDataTimestamp` and log time.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from ..contract.joints import FINGERS
from ..errors import RecordingError

PAD_SLIP_SCHEMA_NAME = "wuji_tactile.PadSlip"
#: Channel metadata: the frame and units, stated in the file.
PAD_SLIP_FRAME = ("pad frame of each pad (distal segment OpenXR joint axes: +Z along the bone toward the wrist, "
                  "+Y toward the nail, X = Y x Z)")
_VEC = {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}, "z": {"type": "number"}},
        "required": ["x", "y", "z"]}
#: One object per pad (Foxglove's JSON Schema decoder takes arrays of objects, not of arrays).
PAD_SLIP_SCHEMA: dict[str, Any] = {
    "title": PAD_SLIP_SCHEMA_NAME,
    "description": "Per pad (thumb, index, middle, ring, pinky): slip velocity [m/s] in the pad frame (0 while any of "
                   "the footprint sticks) and the stuck fraction of the footprint's area [1] (1 without contact).",
    "type": "object",
    "properties": {
        "pads": {"type": "array", "items": {"type": "object", "properties": {
            "pad": {"type": "string"}, "slip_velocity": _VEC, "stuck_fraction": {"type": "number"}},
            "required": ["pad", "slip_velocity", "stuck_fraction"]}},
        "device_data_timestamp": {"type": "object", "properties": {
            "available_time_local_common_clock": {"type": "integer"},
            "sample_time_local_common_clock": {"type": "integer"},
            "sample_time_raw_device_clock": {"type": "integer"}}},
    },
    "required": ["pads", "device_data_timestamp"],
}
#: %.9g reads back to the same float64 within 1e-9 relative: one C-level format per message.
_PAD_JSON = '{"pad":"%s","slip_velocity":{"x":%.9g,"y":%.9g,"z":%.9g},"stuck_fraction":%.9g}'
_MESSAGE = ('{"pads":[' + ",".join([_PAD_JSON] * len(FINGERS)) + '],"device_data_timestamp":'
            '{"available_time_local_common_clock":%d,"sample_time_local_common_clock":%d,'
            '"sample_time_raw_device_clock":%d}}')


def pad_slip_topic(collection_id: str) -> str:
    """The slip channel of collection `collection_id`."""
    return f"{collection_id}/pad_slip"


def encode_pad_slip(slip: np.ndarray, timestamp: Any) -> bytes:
    """One message from (5, 4) `slip` (vx, vy, vz [m/s, pad frame], stuck fraction)."""
    a = np.asarray(slip, dtype=np.float64)
    if a.shape != (len(FINGERS), 4):
        raise ValueError(f"pad slip: expected shape ({len(FINGERS)}, 4) (vx, vy, vz, stuck fraction per pad), got {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError("pad slip: non-finite value")
    rows = np.concatenate([np.zeros((len(FINGERS), 1)), a], axis=1).tolist()
    for name, row in zip(FINGERS, rows, strict=True):
        row[0] = name
    values = (*[v for row in rows for v in row], int(timestamp[0]), int(timestamp[1]), int(timestamp[2]))
    return (_MESSAGE % values).encode()


class PadSlipSample(NamedTuple):
    log_time_ns: int
    sample_time_ns: int           # sample_time_local_common_clock of the tactile record
    velocity: np.ndarray          # (5, 3) [m/s, pad frame]
    stuck_fraction: np.ndarray    # (5,) [1]


def decode_pad_slip(data: bytes, log_time_ns: int = 0) -> PadSlipSample:
    msg = json.loads(bytes(data))
    pads = msg.get("pads")
    names = [p.get("pad") for p in pads] if isinstance(pads, list) and all(isinstance(p, dict) for p in pads) else pads
    if names != list(FINGERS):
        raise RecordingError(f"pad slip message: pads {names!r}, expected {list(FINGERS)}")
    v = np.array([[p["slip_velocity"][k] for k in "xyz"] for p in pads], dtype=np.float64)
    s = np.array([p["stuck_fraction"] for p in pads], dtype=np.float64)
    return PadSlipSample(int(log_time_ns), int(msg["device_data_timestamp"]["sample_time_local_common_clock"]), v, s)


class PadSlipWriter:
    """Frame sink: writes each published frame's `Frame.extras[EXTRA_PAD_SLIP]` on the slip
    channel. A producer that declares the slip output must fill it in every frame."""

    def __init__(self, recorder: Any, collection_id: str, extras_key: str) -> None:
        schema = json.dumps(PAD_SLIP_SCHEMA, separators=(",", ":")).encode()
        self.topic = pad_slip_topic(collection_id)
        self._channel = recorder.add_encoded_channel(self.topic, PAD_SLIP_SCHEMA_NAME, "jsonschema", schema, "json",
                                                     metadata={"frame": PAD_SLIP_FRAME, "units": "m/s, 1"})
        self._recorder = recorder
        self._key = extras_key
        self.written = 0

    def on_frame(self, frame: Any, sequence: int, timestamp: Any) -> None:
        slip = frame.extras.get(self._key) if frame.extras else None
        if slip is None:
            raise RecordingError(f"recording {self.topic!r}: frame {sequence} carries no pad slip output although "
                                 "its producer declares it")
        self._recorder.write_flatbuffer(self._channel, encode_pad_slip(slip, timestamp),
                                        log_time_ns=int(timestamp[0]), publish_time_ns=int(timestamp[1]),
                                        sequence=self.written)
        self.written += 1

    def poll(self) -> None:
        pass

    def close(self) -> None:
        pass


def iter_pad_slip(path: str | os.PathLike, collection_id: str | None = None) -> Iterator[tuple[str, PadSlipSample]]:
    """(topic, `PadSlipSample`) of every pad slip message of `path`, in file order (one chunk in
    memory at a time); `collection_id`: only that collection's channel."""
    from .scan import iter_messages_of

    topic = None if collection_id is None else pad_slip_topic(collection_id)
    for _, ch, m in iter_messages_of(path, lambda schema, ch: schema.name == PAD_SLIP_SCHEMA_NAME
                                     and (topic is None or ch.topic == topic)):
        yield ch.topic, decode_pad_slip(m.data, m.log_time)


__all__ = ["PAD_SLIP_SCHEMA_NAME", "PAD_SLIP_FRAME", "pad_slip_topic", "encode_pad_slip", "decode_pad_slip",
           "PadSlipSample", "PadSlipWriter", "iter_pad_slip"]
