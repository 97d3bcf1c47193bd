"""How tactile collections appear in an MCAP file (the contract's names are in `contract.naming`).

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

SCHEMA_ENCODING = "flatbuffer"
MESSAGE_ENCODING = "flatbuffer"
SESSION_KEY = "producer_session"
FILE_METADATA_NAME = "wuji_tactile_device"
PROFILE = ""  # no MCAP well-known profile covers FlatBuffers
SEQUENCE_MASK = 0xFFFF_FFFF  # the MCAP sequence field is u32


def session_hex(session: int) -> str:
    """A producer session id as the 16 hex digits recorded in channel metadata."""
    return f"{session:016x}"
