"""wuji_tactile_device: Wuji Hand 2 fingertip tactile data (real or simulated in MuJoCo 4.0) as one
validated FlatBuffers contract for teleoperation — stream, record, replay, retarget.

Contract: forces `(N, 3)` float32 [N] in each taxel's own axes (+Z outward normal); the force the
contacting body exerts ON the taxel, so pressing gives fz < 0. Layout in `TactileMetadata`.
"""
from .errors import (DataLayoutError, DeviceFormatError, InvalidMessageError, MessageTooLargeError,
                     MetadataMismatchError, MetadataValidationError, NonFiniteForceError, ProducerError,
                     RecordingError, TactileError, TransportError)
from .messages import (DATA_RECORD_SCHEMA_NAME, METADATA_RECORD_SCHEMA_NAME, NUM_JOINTS, DeviceDataTimestamp,
                       HandJoint, MetadataRecord, TactileRecord, decode_metadata_record, decode_tactile_data,
                       decode_tactile_record, encode_metadata_record, encode_tactile_data, encode_tactile_record,
                       tactile_record_size)
from .metadata import TactileMetadata

__version__ = "0.1.0"

__all__ = [
    "DATA_RECORD_SCHEMA_NAME", "METADATA_RECORD_SCHEMA_NAME", "NUM_JOINTS", "DataLayoutError", "DeviceDataTimestamp",
    "DeviceFormatError", "HandJoint", "InvalidMessageError", "MessageTooLargeError", "MetadataMismatchError",
    "MetadataRecord", "MetadataValidationError", "NonFiniteForceError", "ProducerError", "RecordingError",
    "TactileError", "TactileMetadata", "TactileRecord", "TransportError", "decode_metadata_record",
    "decode_tactile_data", "decode_tactile_record", "encode_metadata_record", "encode_tactile_data",
    "encode_tactile_record", "tactile_record_size",
]
