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


class CollectionIdError(TactileError, ValueError):
    """A collection id breaks the naming rule (see `contract.naming`). Both a `TactileError` and a
    `ValueError`: the same rule refuses a bad id given as an argument and one read from a file or
    a peer."""


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


class ReadLimitError(RecordingError):
    """Reading a file would exceed the work bound for its size (decompressed bytes or records per
    pass, see docs/reliability.md): a decompression bomb or a file of tiny records."""


class CorruptChunkError(RecordingError):
    """An MCAP chunk fails its CRC or does not decompress; `start_ns`/`end_ns` give the log-time
    range its header announces (what is lost)."""

    def __init__(self, start_ns: int, end_ns: int, message: str):
        super().__init__(message)
        self.start_ns = start_ns
        self.end_ns = end_ns


class RecordedSceneError(RecordingError):
    """A recording's scene topic (`<collection>/view/scene`) holds a message a view of the file
    cannot read: the message names the file, the topic, the message and the rule it breaks.
    Ends a view of that file (the file's own content, not another process's message)."""


class RecordingWarning(UserWarning):
    """A recording was readable only in part (e.g. truncated by a crash); the message says how
    much was lost."""


class FingerOfflineError(ProducerError):
    """One or more fingertip modules do not answer or stopped sending; `fingers` names them."""

    def __init__(self, fingers: tuple[str, ...], message: str):
        super().__init__(message)
        self.fingers = tuple(fingers)


class DeviceTimeoutError(ProducerError):
    """An SDK call did not answer within its bound (or the SDK reported its own timeout)."""


class DeviceDisconnectedError(ProducerError):
    """The connection to the hand is lost (stream or call failed with the SDK's Disconnected,
    or the hand is no longer reachable); the producer reconnects by serial number."""


class HandednessMismatchError(ProducerError):
    """The hand connected reports another side than the one asked for."""


class LayoutChangedError(DeviceFormatError):
    """A device revised a finger's sensor layout mid-session; the published metadata no longer
    describes its data, so the producer stops instead of publishing under the old layout."""


class CalibrationFileError(ProducerError):
    """A full-scale calibration file (normalized firmware mode) is missing, unreadable or does
    not cover the device's fingers and axes."""


_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0))}


def printable(text: str) -> str:
    """`text` with every control character (C0, DEL, C1; newline included) written as `\\xNN`:
    for names read from a file (topics, schema names, metadata) before they reach a terminal, so
    a crafted name cannot move the cursor, erase a line or forge another line of a report."""
    return str(text).translate(_CONTROL)
