"""The emulated Wuji Hand 2: a byte-exact stand-in for the vendor SDK's hand, fed with the
simulation's forces, with fault injection (`wuji-tactile hw --emulate`, and the hardware tests).

Modules, one concept each: `emulator` (`EmulatedHand2`, the device: its clock, calibration,
joints and injected behaviours), `pad_module` (one fingertip module: layout, format, wire
encoding), `sdk_types` (the SDK's value types), `subscriptions` (its streams), `sdk_failures`
(failing SDK calls), `joints` (its 20 joints: states, diagnostics), `manager` (`EmulatedSdkManager`, the emulated LAN), `fault_schedule` (the
`KIND:FINGER@T0[-T1]` fault grammar on a time line), `simulation` (what it takes from the
simulation: `simulation_layout` / `simulation_forces`, `EmulatedHandProducer`)."""
from .emulator import EmulatedHand2
from .fault_schedule import FaultSchedule, ScheduledFault, parse_fault
from .manager import EmulatedSdkManager
from .pad_module import DEFAULT_FULL_SCALE
from .simulation import simulation_forces, simulation_layout

__all__ = ["DEFAULT_FULL_SCALE", "EmulatedHand2", "EmulatedSdkManager", "FaultSchedule", "ScheduledFault",
           "parse_fault", "simulation_forces", "simulation_layout"]
