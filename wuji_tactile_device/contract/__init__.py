"""The contract layer: what a tactile stream IS, independent of how it travels or is stored.

Joints and fingers (`joints`), names of collections, streams and schemas (`naming`), the
FlatBuffers bounds checker (`flatbuf`), data records and size limits (`records`), the metadata
value and its codec (`metadata`), its rules (`validation`), pose math and skinning (`geometry`)
and pad-level views (`pads`). Imports only `errors`, the generated bindings, numpy and flatbuffers.
"""
from .joints import FINGER_OF_JOINT, FINGERS, NUM_FINGERS, NUM_HAND_JOINTS, HandJoint
from .metadata import (ARRAY_FIELDS, ArrayField, MetadataRecord, TactileMetadata, decode_metadata_record,
                       encode_metadata_record)
from .naming import (DATA_RECORD_SCHEMA_NAME, METADATA_RECORD_SCHEMA_NAME, METADATA_SUFFIX, Stream, parse_stream_key,
                     stream_key, validate_collection_id)
from .pads import PadLayout, pad_layout, pad_resultants
from .records import (DEFAULT_MAX_FLATBUFFER_SIZE, TRACKER_METADATA_MAX_SIZE, DeviceDataTimestamp, TactileRecord,
                      all_finite, bfbs, decode_tactile_data, decode_tactile_record, encode_tactile_data,
                      encode_tactile_record, tactile_record_size)

__all__ = [
    "ARRAY_FIELDS", "ArrayField", "DATA_RECORD_SCHEMA_NAME", "DEFAULT_MAX_FLATBUFFER_SIZE", "DeviceDataTimestamp",
    "FINGERS", "FINGER_OF_JOINT", "HandJoint", "METADATA_RECORD_SCHEMA_NAME", "METADATA_SUFFIX", "MetadataRecord",
    "NUM_FINGERS", "NUM_HAND_JOINTS", "PadLayout", "Stream", "TRACKER_METADATA_MAX_SIZE", "TactileMetadata",
    "TactileRecord", "all_finite", "bfbs", "decode_metadata_record", "decode_tactile_data", "decode_tactile_record",
    "encode_metadata_record", "encode_tactile_data", "encode_tactile_record", "pad_layout", "pad_resultants",
    "parse_stream_key", "stream_key", "tactile_record_size", "validate_collection_id",
]
