"""Faults of the emulated hand on a time line: the grammar `KIND:FINGER@T0[-T1]` (`jump@T0` for
the device clock), parsed into a `ScheduledFault`, and `FaultSchedule`, which starts each one at
scenario time T0 [s] and ends offline/stall faults at T1 [s] on an `EmulatedHand2`.

    offline:ring@1.0-1.5   the ring finger's module is offline from 1.0 s to 1.5 s
    stall:thumb@0.2-0.4    the thumb stays online but sends no frames
    truncated:index@0.3    its next frame misses its last byte (oversized: one byte extra,
                           duplicate: delivered twice)
    revise:middle@2        a new info revision (new encoding, same layout)
    jump@2.0               the device clock steps forward by JUMP_US

A specification that breaks the grammar is a `ValueError` naming the rule it breaks (the CLI turns
it into a usage error, exit 2).
"""
from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, NamedTuple

from ...contract.joints import FINGERS

if TYPE_CHECKING:
    from .emulator import EmulatedHand2

#: The fault kinds the grammar knows.
FAULT_KINDS = ("offline", "stall", "truncated", "oversized", "duplicate", "revise", "jump")
#: Kinds that last from T0 to T1 (the others happen once, at T0).
LASTING_KINDS = ("offline", "stall")
#: Device clock step injected by `jump@T` [µs].
JUMP_US = 10_000_000
#: The grammar, for messages.
GRAMMAR = "KIND:FINGER@T0[-T1] (seconds), e.g. offline:ring@1.0-1.5 or jump@2"

_FAULT = re.compile(r"^(?P<kind>[a-z]+)(?::(?P<finger>[a-z]+))?@(?P<t0>\d+(?:\.\d*)?)(?:-(?P<t1>\d+(?:\.\d*)?))?$")


class ScheduledFault(NamedTuple):
    """One fault: `kind` on `finger` (None for `jump`) from `t0` [s] until `t1` [s] (None: once)."""

    kind: str
    finger: str | None
    t0: float
    t1: float | None


def parse_fault(text: str) -> ScheduledFault:
    """`KIND:FINGER@T0[-T1]` → a `ScheduledFault`; `ValueError` naming the broken rule."""
    m = _FAULT.match(text)
    if m is None:
        raise ValueError(f"fault {text!r}: expected {GRAMMAR}")
    kind, finger = m["kind"], m["finger"]
    if kind not in FAULT_KINDS:
        raise ValueError(f"fault {text!r}: unknown kind {kind!r}; choose from {', '.join(FAULT_KINDS)}")
    if kind == "jump" and finger is not None:
        raise ValueError(f"fault {text!r}: jump takes no finger (it steps the whole device's clock)")
    if kind != "jump" and finger not in FINGERS:
        raise ValueError(f"fault {text!r}: name a finger: {', '.join(FINGERS)}")
    t0, t1 = float(m["t0"]), None if m["t1"] is None else float(m["t1"])
    if not math.isfinite(t0):
        raise ValueError(f"fault {text!r}: T0 must be a finite time [s]")
    if t1 is not None and not (math.isfinite(t1) and t1 > t0):
        raise ValueError(f"fault {text!r}: T1 must be a finite time after T0 ({m['t0']} s)")
    if t1 is not None and kind not in LASTING_KINDS:
        raise ValueError(f"fault {text!r}: only {' and '.join(LASTING_KINDS)} last until T1; {kind} happens once, at T0")
    return ScheduledFault(kind, finger, t0, t1)


class FaultSchedule:
    """Applies faults to an emulated hand as scenario time passes: call `apply(hand, t)` before
    each tick (t [s], non-decreasing). Each fault starts at the first call with t ≥ t0; an
    offline/stall with a t1 ends at the first call with t ≥ t1."""

    def __init__(self, faults: list[ScheduledFault] | tuple[ScheduledFault, ...]):
        self.faults = tuple(faults)
        self._phase = ["pending"] * len(self.faults)  # pending → on (lasting) → done

    def __call__(self, hand: EmulatedHand2, t: float) -> None:
        self.apply(hand, t)

    def apply(self, hand: EmulatedHand2, t: float) -> None:
        for k, fault in enumerate(self.faults):
            phase = self._phase[k]
            if phase == "pending" and t >= fault.t0:
                self._phase[k] = "on" if fault.kind in LASTING_KINDS and fault.t1 is not None else "done"
                _start(hand, fault)
            elif phase == "on" and fault.t1 is not None and t >= fault.t1:
                self._phase[k] = "done"
                _end(hand, fault)


def _start(hand: EmulatedHand2, fault: ScheduledFault) -> None:
    kind, finger = fault.kind, fault.finger
    if kind == "jump":
        hand.jump_clock(JUMP_US)
        return
    assert finger is not None  # the grammar names a finger for every other kind
    if kind == "offline":
        hand.set_online(finger, False)
    elif kind == "stall":
        hand.set_sending(finger, False)
    elif kind == "revise":
        hand.revise_info(finger, point_type="i32", point_scale=1e-5)  # new encoding, same layout
    else:
        hand.inject(finger, kind)  # truncated / oversized / duplicate


def _end(hand: EmulatedHand2, fault: ScheduledFault) -> None:
    assert fault.finger is not None
    if fault.kind == "offline":
        hand.set_online(fault.finger, True)
    else:
        hand.set_sending(fault.finger, True)
