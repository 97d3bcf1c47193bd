"""The package's exception hierarchy. Every error the package raises on purpose derives from
`TactileError`, so callers can catch one type; messages name the collection, field, taxel, file
and the rule that failed."""
from __future__ import annotations


class TactileError(Exception):
    """Base of every error this package raises on purpose."""


class InvalidMessageError(TactileError):
    """A buffer is not a well-formed message of the expected type (bad identifier, offsets or
    lengths out of bounds, unknown enum value, misaligned struct vector, ...)."""


class MessageTooLargeError(InvalidMessageError):
    """A buffer exceeds the configured size limit (e.g. `max_flatbuffer_size`)."""


class MetadataValidationError(TactileError):
    """Metadata violates a contract rule. `rule` names the rule; the message names the offending
    taxel / slot / joint."""

    def __init__(self, rule: str, detail: str):
        super().__init__(f"{rule}: {detail}")
        self.rule = rule
        self.detail = detail


class MetadataMismatchError(TactileError):
    """A producer sent metadata that differs from the layout already adopted for its collection."""


class DataLayoutError(TactileError):
    """A force frame does not fit the adopted layout (wrong taxel count, wrong shape or dtype)."""


class NonFiniteForceError(DataLayoutError):
    """A force frame contains NaN or infinity."""


class TransportError(TactileError):
    """A transport could not be opened, configured, or used."""


class RecordingError(TactileError):
    """An MCAP file cannot be written, read, or recovered."""


class ProducerError(TactileError):
    """A producer (simulation or hardware) cannot start or continue."""


class DeviceFormatError(ProducerError):
    """A device's declared sensor format or frame bytes break the vendor contract."""
