"""wuji_tactile_device: Wuji Hand 2 fingertip tactile data (real or simulated in MuJoCo 4.0) as one
validated FlatBuffers contract for teleoperation — stream, record, replay, retarget.

Contract: forces `(N, 3)` float32 [N] in each taxel's own axes (+Z outward normal); the force the
contacting body exerts ON the taxel, so pressing gives fz < 0. Layout in `TactileMetadata`.

Layers (each imports only those below it; see docs/architecture.md): `contract` ← `streams` ←
`recording`; `hands`; `producers`; `integrations`, `plot`, `benchmarks`, `cli`. The names below
are the contract's; the stream and recording classes are importable from here too (loaded on
first use, so `import wuji_tactile_device` stays light).
"""
from .contract import (DATA_RECORD_SCHEMA_NAME, METADATA_RECORD_SCHEMA_NAME, NUM_HAND_JOINTS, DeviceDataTimestamp,
                       HandJoint, MetadataRecord, TactileMetadata, TactileRecord, decode_metadata_record,
                       decode_tactile_data, decode_tactile_record, encode_metadata_record, encode_tactile_data,
                       encode_tactile_record, tactile_record_size)
from .errors import (CollectionIdError, DataLayoutError, DeviceFormatError, InvalidMessageError, MessageTooLargeError,
                     MetadataMismatchError, MetadataValidationError, NonFiniteForceError, ProducerError,
                     RecordingError, TactileError, TransportError)

__version__ = "0.1.0"

#: The contract's spelling of the OpenXR joint count (26), = `NUM_HAND_JOINTS`.
NUM_JOINTS = NUM_HAND_JOINTS

_LAZY = {
    "TactilePublisher": "streams.publisher", "TactileTracker": "streams.tracker", "TactileFrame": "streams.tracker",
    "InProcessBus": "streams.inproc", "ZenohTransport": "streams.zenoh_transport", "open_transport": "streams",
    "McapRecorder": "recording", "McapReplay": "recording",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'wuji_tactile_device' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{module}", __name__), name)


__all__ = [
    "CollectionIdError", "DATA_RECORD_SCHEMA_NAME", "METADATA_RECORD_SCHEMA_NAME", "NUM_HAND_JOINTS", "NUM_JOINTS",
    "DataLayoutError", "DeviceDataTimestamp", "DeviceFormatError", "HandJoint", "InvalidMessageError",
    "MessageTooLargeError", "MetadataMismatchError", "MetadataRecord", "MetadataValidationError", "NonFiniteForceError",
    "ProducerError", "RecordingError", "TactileError", "TactileMetadata", "TactileRecord", "TransportError",
    "decode_metadata_record", "decode_tactile_data", "decode_tactile_record", "encode_metadata_record",
    "encode_tactile_data", "encode_tactile_record", "tactile_record_size", *_LAZY,
]
