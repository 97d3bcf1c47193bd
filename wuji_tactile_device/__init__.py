"""wuji_tactile_device: Wuji Hand 2 fingertip tactile data (real or simulated in MuJoCo 4.0) as one
validated FlatBuffers contract for teleoperation — stream, record, replay, retarget."""
from .errors import (DataLayoutError, DeviceFormatError, InvalidMessageError, MessageTooLargeError,
                     MetadataMismatchError, MetadataValidationError, NonFiniteForceError, ProducerError,
                     RecordingError, TactileError, TransportError)

__version__ = "0.1.0"
