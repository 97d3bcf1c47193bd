"""Names the contract gives to things on the wire and on disk: collection ids, the two stream keys
of a collection, schema (root type) names and FlatBuffers file identifiers.

A collection `tactile/right` has two streams: force records keyed `tactile/right` and metadata
records keyed `tactile/right/metadata`. The same keys are the MCAP topics of a recording.
"""
from __future__ import annotations

import enum
import re

from ..errors import CollectionIdError

METADATA_SUFFIX = "/metadata"
_SEGMENT = re.compile(r"^[A-Za-z0-9_.\-]+$")


class Stream(enum.Enum):
    """Which of a collection's two streams a message belongs to."""

    DATA = "data"  # TactileDataArrayRecord
    METADATA = "metadata"  # TactileMetadataRecord


#: Root table names (as in the .bfbs files) and fully qualified schema names (as in MCAP schemas).
DATA_ROOT = "TactileDataArrayRecord"
METADATA_ROOT = "TactileMetadataRecord"
DATA_RECORD_SCHEMA_NAME = "core.TactileDataArrayRecord"
METADATA_RECORD_SCHEMA_NAME = "core.TactileMetadataRecord"

#: FlatBuffers file identifiers of the four root types.
DATA_FILE_IDENTIFIER = b"TDAT"
DATA_RECORD_FILE_IDENTIFIER = b"TDAR"
METADATA_FILE_IDENTIFIER = b"TMET"
METADATA_RECORD_FILE_IDENTIFIER = b"TMER"

RECORD_FILE_IDENTIFIER = {Stream.DATA: DATA_RECORD_FILE_IDENTIFIER, Stream.METADATA: METADATA_RECORD_FILE_IDENTIFIER}
RECORD_SCHEMA_NAME = {Stream.DATA: DATA_RECORD_SCHEMA_NAME, Stream.METADATA: METADATA_RECORD_SCHEMA_NAME}
RECORD_ROOT = {Stream.DATA: DATA_ROOT, Stream.METADATA: METADATA_ROOT}


def validate_collection_id(collection_id: object) -> str:
    """Return `collection_id` if it is usable as a key (`tactile/right`), else raise
    `CollectionIdError` (a `ValueError`) naming the rule.

    Rules: '/'-separated non-empty segments of letters, digits, '_', '-', '.'; no wildcards; the
    last segment must not be `metadata` (that key belongs to the metadata stream)."""
    if not isinstance(collection_id, str) or not collection_id:
        raise CollectionIdError(f"collection id must be a non-empty string, got {collection_id!r}")
    segments = collection_id.split("/")
    bad = [s for s in segments if not _SEGMENT.match(s)]
    if bad:
        raise CollectionIdError(
            f"collection id {collection_id!r}: segment {bad[0]!r} is not allowed "
            "(segments are non-empty and use only letters, digits, '_', '-', '.')")
    if segments[-1] == "metadata":
        raise CollectionIdError(
            f"collection id {collection_id!r} must not end in '/metadata' (reserved for the metadata stream)")
    return collection_id


def stream_key(collection_id: str, stream: Stream) -> str:
    """The key (topic) of one stream: `<collection_id>` or `<collection_id>/metadata`."""
    return collection_id + METADATA_SUFFIX if stream is Stream.METADATA else collection_id


def parse_stream_key(key: str, schema_name: str) -> tuple[str, Stream]:
    """(collection_id, stream) of a stream key; the schema name decides the stream. Raises
    `CollectionIdError` when the key and schema do not name a tactile stream."""
    if schema_name == METADATA_RECORD_SCHEMA_NAME and key.endswith(METADATA_SUFFIX):
        return validate_collection_id(key[: -len(METADATA_SUFFIX)]), Stream.METADATA
    if schema_name == DATA_RECORD_SCHEMA_NAME:
        return validate_collection_id(key), Stream.DATA
    raise CollectionIdError(f"key {key!r} with schema {schema_name!r} is not a tactile stream")
