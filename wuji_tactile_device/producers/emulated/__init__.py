"""The emulated Wuji Hand 2: a byte-exact stand-in for the vendor SDK's hand, fed with the
simulation's forces, with fault injection (`wuji-tactile hw --emulate`, and the hardware tests).

`EmulatedHand2` (the device), `simulation_layout` / `simulation_forces` (what it takes from the
simulation)."""
from .emulator import EmulatedHand2
from .simulation import simulation_forces, simulation_layout

__all__ = ["EmulatedHand2", "simulation_forces", "simulation_layout"]
