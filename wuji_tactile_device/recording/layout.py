"""The recording file layout: what a tactile MCAP file contains and how it is named.

One MCAP file holds any number of collections. Per collection `<cid>` (e.g. `tactile/right`):

| topic            | schema (encoding `flatbuffer`, data = .bfbs) | message encoding |
|------------------|----------------------------------------------|------------------|
| `<cid>`          | `core.TactileDataArrayRecord`                | `flatbuffer`     |
| `<cid>/metadata` | `core.TactileMetadataRecord`                 | `flatbuffer`     |

One MCAP channel per producer session and topic, with channel metadata
`{"producer_session": "<16 hex digits>"}`; the MCAP message `sequence` is the stream's sequence
number (low 32 bits); log time = the record's available time, publish time = its sample time
(both ns, monotonic clock of the producer's machine). A file-level MCAP metadata record named
`wuji_tactile_device` carries the package version and, where known, producer kind and hand side.

Other topics may sit beside them (auxiliary JSON channels, `recording.json_channel`, e.g.
`<cid>/device_resultants`); only channels with the schema names and encoding above are collections.
"""
from __future__ import annotations

import struct

from ..errors import InvalidMessageError
from ..transport.base import METADATA_SUFFIX, Stream

SCHEMA_ENCODING = "flatbuffer"
MESSAGE_ENCODING = "flatbuffer"
DATA_SCHEMA_NAME = "core.TactileDataArrayRecord"
METADATA_SCHEMA_NAME = "core.TactileMetadataRecord"
DATA_ROOT = "TactileDataArrayRecord"
METADATA_ROOT = "TactileMetadataRecord"
SESSION_KEY = "producer_session"
FILE_METADATA_NAME = "wuji_tactile_device"
PROFILE = ""  # no MCAP well-known profile covers FlatBuffers
SEQUENCE_MASK = 0xFFFF_FFFF  # the MCAP sequence field is u32

_IDENT = {Stream.DATA: b"TDAR", Stream.METADATA: b"TMER"}
_SCHEMA_OF = {Stream.DATA: DATA_SCHEMA_NAME, Stream.METADATA: METADATA_SCHEMA_NAME}
_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U16 = struct.Struct("<H")
_TWO_I64 = struct.Struct("<qq")


def schema_name(stream: Stream) -> str:
    return _SCHEMA_OF[stream]


def topic_of(collection_id: str, stream: Stream) -> str:
    return collection_id + METADATA_SUFFIX if stream is Stream.METADATA else collection_id


def parse_topic(topic: str, schema: str) -> tuple[str, Stream]:
    """(collection_id, stream) of a recorded topic; the schema name decides the stream."""
    if schema == METADATA_SCHEMA_NAME and topic.endswith(METADATA_SUFFIX):
        return topic[: -len(METADATA_SUFFIX)], Stream.METADATA
    if schema == DATA_SCHEMA_NAME:
        return topic, Stream.DATA
    raise ValueError(f"topic {topic!r} with schema {schema!r} is not a tactile stream")


def session_hex(session: int) -> str:
    return f"{session:016x}"


def record_times(payload: bytes, stream: Stream) -> tuple[int, int]:
    """(available_time, sample_time) [ns] of a data or metadata record, read in place.

    Bounds-checked (the payload comes from outside): only the root offset, the file identifier,
    the vtable entry of field `timestamp` (id 1) and the 24-byte struct are touched. Raises
    InvalidMessageError when any of them is out of bounds, absent or of the other record type."""
    n = len(payload)
    if n < 8:
        raise InvalidMessageError(f"{stream.value} record of {n} bytes is too short for a FlatBuffer")
    ident = bytes(payload[4:8])
    if ident != _IDENT[stream]:
        raise InvalidMessageError(
            f"{stream.value} record has file identifier {ident!r}, expected {_IDENT[stream]!r}")
    table = _U32.unpack_from(payload, 0)[0]
    if table + 4 > n:
        raise InvalidMessageError(f"{stream.value} record: root table offset {table} outside the {n}-byte buffer")
    vtable = table - _I32.unpack_from(payload, table)[0]
    if vtable < 0 or vtable + 4 > n:
        raise InvalidMessageError(f"{stream.value} record: vtable offset {vtable} outside the {n}-byte buffer")
    vt_size = _U16.unpack_from(payload, vtable)[0]
    if vt_size < 8 or vtable + vt_size > n:
        raise InvalidMessageError(f"{stream.value} record: field 'timestamp' is absent")
    field = _U16.unpack_from(payload, vtable + 6)[0]
    if field == 0:
        raise InvalidMessageError(f"{stream.value} record: field 'timestamp' is absent")
    pos = table + field
    if pos + 24 > n:
        raise InvalidMessageError(f"{stream.value} record: field 'timestamp' at {pos} runs past the {n}-byte buffer")
    return _TWO_I64.unpack_from(payload, pos)
