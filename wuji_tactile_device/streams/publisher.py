"""TactilePublisher: the producer side of a collection's two streams.

One publisher = one producer session (a random u64 unless given). It validates the metadata once,
before anything is sent, and publishes the metadata record at start and again whenever
`metadata_period_s` has elapsed (checked before each force frame), always as the same bytes: the
record's timestamp is the session start, so the whole record is byte-identical for the session.
Force frames go out as `TactileDataArrayRecord`s; a frame that is refused (wrong taxel count,
non-finite, too large) raises and nothing is sent.
"""
from __future__ import annotations

import secrets
import struct
import time

import numpy as np

from ..contract.metadata import TactileMetadata, encode_metadata_record
from ..contract.naming import Stream, validate_collection_id
from ..contract.records import (DEFAULT_MAX_FLATBUFFER_SIZE, TRACKER_METADATA_MAX_SIZE, DeviceDataTimestamp,
                                encode_tactile_record, tactile_record_size)
from ..errors import DataLayoutError, MessageTooLargeError, NonFiniteForceError, TransportError
from .base import ProducerLink, Transport
from ..contract.records import ForceRecordCodec

_U64 = (1 << 64) - 1
_count_nonzero = np.count_nonzero
_isfinite = np.isfinite
_monotonic_ns = time.monotonic_ns
_DATA = Stream.DATA  # (reading an Enum member off its class costs ~0.15 us)


class TactilePublisher:
    """Publishes one collection's metadata and force frames on a transport.

    `collection_id`: e.g. `tactile/right`. `metadata`: validated here; invalid metadata raises
    `MetadataValidationError` and nothing is published. `metadata_period_s`: republication period
    [s] (late subscribers discover the layout within one period). `max_flatbuffer_size`: largest
    data record [bytes] this publisher may send; a layout whose records exceed it is refused at
    construction (`MessageTooLargeError`), as is metadata larger than `TRACKER_METADATA_MAX_SIZE`.
    """

    def __init__(self, collection_id: str, metadata: TactileMetadata, transport: Transport, *,
                 metadata_period_s: float = 1.0, max_flatbuffer_size: int = DEFAULT_MAX_FLATBUFFER_SIZE,
                 producer_session: int | None = None):
        validate_collection_id(collection_id)
        if not isinstance(metadata, TactileMetadata):
            raise TypeError(f"collection {collection_id!r}: metadata must be a TactileMetadata, "
                            f"got {type(metadata).__name__}")
        if not metadata_period_s > 0:
            raise ValueError(f"collection {collection_id!r}: metadata_period_s must be > 0, got {metadata_period_s!r}")
        metadata.validate()
        record_size = tactile_record_size(metadata.num_taxels)
        if record_size > max_flatbuffer_size:
            raise MessageTooLargeError(
                f"collection {collection_id!r}: a force record of {metadata.num_taxels} taxels is "
                f"{record_size} bytes, larger than max_flatbuffer_size={max_flatbuffer_size}")
        if producer_session is None:
            producer_session = secrets.randbits(64) or 1
        if not 0 <= producer_session <= _U64:
            raise ValueError(f"collection {collection_id!r}: producer_session must be a u64, got {producer_session}")
        start = time.monotonic_ns()
        self._metadata_bytes = encode_metadata_record(metadata, DeviceDataTimestamp(start, start, start))
        if len(self._metadata_bytes) > TRACKER_METADATA_MAX_SIZE:
            raise MessageTooLargeError(
                f"collection {collection_id!r}: the metadata record is {len(self._metadata_bytes)} bytes, "
                f"larger than TRACKER_METADATA_MAX_SIZE={TRACKER_METADATA_MAX_SIZE}; no tracker would accept it")
        self.collection_id = collection_id
        self.metadata = metadata
        self.producer_session = producer_session
        self.max_flatbuffer_size = max_flatbuffer_size
        self.metadata_period_ns = int(metadata_period_s * 1e9)
        self._num_taxels = metadata.num_taxels
        self._shape = (metadata.num_taxels, 3)
        self._codec = ForceRecordCodec(metadata.num_taxels)
        self._data_sequence = 0
        self._metadata_sequence = 0
        self._last_metadata_ns = 0
        self._last_times: tuple[int, int, int] | None = None
        self._link: ProducerLink | None = transport.open_producer(collection_id, producer_session)
        try:
            self.publish_metadata()
        except BaseException:
            self.close()  # withdraw the liveliness just declared
            raise

    @property
    def closed(self) -> bool:
        return self._link is None

    def _open_link(self) -> ProducerLink:
        if self._link is None:
            raise TransportError(f"collection {self.collection_id!r}: publisher is closed")
        return self._link

    def publish_metadata(self) -> int:
        """Publish the metadata record now (same bytes every time); return its sequence."""
        link = self._open_link()
        sequence = self._metadata_sequence
        link.publish(Stream.METADATA, self._metadata_bytes, sequence)
        self._metadata_sequence += 1
        self._last_metadata_ns = time.monotonic_ns()
        return sequence

    @property
    def last_timestamp(self) -> DeviceDataTimestamp | None:
        """Timestamps of the last published force frame (None before the first): lets a producer
        log side data (e.g. device resultants) at exactly that frame's available time."""
        times = self._last_times
        return None if times is None else DeviceDataTimestamp(*times)

    def publish(self, forces: np.ndarray, *, sample_time_ns: int, device_time_ns: int | None = None,
                available_time_ns: int | None = None) -> int:
        """Publish one force frame and return its sequence number.

        `forces`: `(N, 3)` [N] in each taxel's axes, N = metadata taxel count (converted to
        float32; values that overflow float32 count as non-finite). `sample_time_ns`: when the
        frame was sensed, monotonic clock [ns]; `device_time_ns`: the device's own clock [ns]
        (defaults to `sample_time_ns`). Available time = monotonic clock at publication, unless
        the producer keeps its own time line (`available_time_ns`: a simulation's simulated clock).
        Raises `DataLayoutError` (shape), `NonFiniteForceError`, `MessageTooLargeError`; nothing
        is sent then."""
        link = self._link
        if link is None:
            raise TransportError(f"collection {self.collection_id!r}: publisher is closed")
        array = np.asarray(forces)
        if array.dtype != np.float32 or not array.flags.c_contiguous:
            if array.dtype.kind not in "fiu":
                raise DataLayoutError(f"collection {self.collection_id!r}: forces must be numeric, got dtype "
                                      f"{array.dtype}; frame not published")
            with np.errstate(over="ignore"):  # overflow to inf is reported just below
                array = np.ascontiguousarray(array, dtype=np.float32)
        if array.shape != self._shape:
            raise DataLayoutError(
                f"collection {self.collection_id!r}: force frame has shape {array.shape}, the metadata "
                f"declares ({self._num_taxels}, 3) (taxels, xyz); frame not published")
        # Counting finite flags is warning-free (no arithmetic on the values, so no overflow or
        # invalid-value warning under -W error) and cheaper than `.all()`'s reduction.
        if _count_nonzero(_isfinite(array)) != array.size:
            bad = np.argwhere(~np.isfinite(array))[0]
            raise NonFiniteForceError(
                f"collection {self.collection_id!r}: taxel {int(bad[0])} component {'xyz'[int(bad[1])]} "
                f"is {array[bad[0], bad[1]]} (as float32); forces must be finite, frame not published")
        now = _monotonic_ns()
        if device_time_ns is None:
            device_time_ns = sample_time_ns
        available = now if available_time_ns is None else available_time_ns
        payload = None
        if self._codec is not None:
            try:
                payload = self._codec.encode(array, available, sample_time_ns, device_time_ns)
            except struct.error:  # not an int64: the contract's encoder converts or refuses it
                payload = None
        if payload is None:
            payload = encode_tactile_record(array, DeviceDataTimestamp(available, sample_time_ns, device_time_ns))
        if len(payload) > self.max_flatbuffer_size:
            raise MessageTooLargeError(
                f"collection {self.collection_id!r}: force record is {len(payload)} bytes, larger than "
                f"max_flatbuffer_size={self.max_flatbuffer_size}; frame not published")
        if now - self._last_metadata_ns >= self.metadata_period_ns:
            self.publish_metadata()
        sequence = self._data_sequence
        link.publish(_DATA, payload, sequence)
        self._data_sequence = sequence + 1
        self._last_times = (available, sample_time_ns, device_time_ns)
        return sequence

    def close(self) -> None:
        """Withdraw liveliness; further publishing raises `TransportError`. Idempotent."""
        if self._link is not None:
            link, self._link = self._link, None
            link.close()

    def __enter__(self) -> TactilePublisher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
