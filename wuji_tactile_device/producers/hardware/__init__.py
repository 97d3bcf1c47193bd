"""Real-hardware producer for the Wuji Hand 2 fingertip sensors (no simulation import).

    device = connect_sdk_hand(side="right")              # vendor SDK (optional extra)
    device = SdkFingertipDevice(EmulatedHand2("right"))  # or the emulated hand (producers.emulated)
    producer = HardwareProducer(device, HardwareConfig(side="right"))
    ProducerRunner(producer, transport).run()            # producers.base: the one run loop

Modules: `format` (format JSON + frame decoder), `device` (protocol + SDK adapter, reconnection),
`assembly` (five independently clocked streams → ticks), `layout_metadata` (geometry → metadata,
axis/sign mapping), `calibration` (normalized full scale), `producer`, `recovery` (bounded,
retried SDK calls), `identity` (side check, versions, scan), `resultant_topic` (the device's
resultants as an MCAP topic), `health_topic` (joint diagnostics + tactile link status),
`zero_calibration`. The emulated hand lives in `producers.emulated`. See docs/hardware.md.
"""
from .assembly import AssemblyCounters, TickAssembler
from .calibration import load_full_scale, write_full_scale
from .device import (FingertipDevice, FingertipFrame, FingertipInfo, FingertipStatus, SdkFingertipDevice,
                     connect_sdk_hand, sdk_module)
from .format import Aggregate, SensorFormat, build_format, parse_format
from .layout_metadata import DEFAULT_AXIS_MAPPING, AxisMapping, device_taxel_poses, hardware_metadata
from .health_topic import HealthRecorder, health_topic
from .identity import (DiscoveredHand, HandednessMismatchError, HandIdentity, connection_name, read_identity,
                       resolve_side, scan_hands)
from .producer import (FingerResultant, HardwareConfig, HardwareCounters, HardwareProducer, ProducerEvent,
                       TickResultants)
from ...errors import DeviceDisconnectedError, DeviceTimeoutError
from .recovery import RetryPolicy
from .resultant_topic import ResultantRecorder, resultants_topic
from .zero_calibration import ZeroCalibrationReport, calibrate_zero

__all__ = [
    "Aggregate", "AssemblyCounters", "AxisMapping", "DEFAULT_AXIS_MAPPING", "FingerResultant",
    "FingertipDevice", "FingertipFrame", "FingertipInfo", "FingertipStatus", "HardwareConfig", "HardwareCounters",
    "HardwareProducer",
    "ProducerEvent", "ResultantRecorder", "SdkFingertipDevice", "SensorFormat", "TickAssembler", "TickResultants",
    "build_format", "connect_sdk_hand", "device_taxel_poses", "hardware_metadata", "load_full_scale",
    "parse_format", "resultants_topic", "sdk_module", "write_full_scale",
    "DeviceDisconnectedError", "DeviceTimeoutError", "DiscoveredHand", "HandIdentity", "HandednessMismatchError",
    "HealthRecorder", "RetryPolicy", "ZeroCalibrationReport", "calibrate_zero", "connection_name", "health_topic",
    "read_identity", "resolve_side", "scan_hands",
]
