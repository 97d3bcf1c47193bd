"""The emulated hand's fault grammar and schedule (producers/emulated/fault_schedule.py), without
the CLI: what each specification parses to, the rule each bad one breaks, and when the schedule
starts and ends each fault on a real `EmulatedHand2`."""
from __future__ import annotations

import pytest

from wuji_tactile_device.producers.emulated import EmulatedHand2
from wuji_tactile_device.producers.emulated.fault_schedule import (JUMP_US, FaultSchedule, ScheduledFault,
                                                                   parse_fault)


@pytest.mark.parametrize("text,expected", [
    ("offline:ring@1.0-1.5", ScheduledFault("offline", "ring", 1.0, 1.5)),
    ("stall:thumb@0.2-0.4", ScheduledFault("stall", "thumb", 0.2, 0.4)),
    ("truncated:index@0.3", ScheduledFault("truncated", "index", 0.3, None)),
    ("revise:middle@2", ScheduledFault("revise", "middle", 2.0, None)),
    ("jump@2.", ScheduledFault("jump", None, 2.0, None)),
])
def test_specifications_parse_to_kind_finger_and_times(text, expected):
    assert parse_fault(text) == expected


@pytest.mark.parametrize("text,rule", [
    ("offline:ring", "expected KIND:FINGER@T0[-T1]"),
    ("offline:ring@-1", "expected KIND:FINGER@T0[-T1]"),
    ("melt:ring@1", "unknown kind 'melt'; choose from offline, stall"),
    ("offline:little@1", "name a finger: thumb, index, middle, ring, pinky"),
    ("offline@1", "name a finger"),
    ("jump:ring@1", "jump takes no finger"),
    ("offline:ring@2-1", "T1 must be a finite time after T0 (2 s)"),
    ("offline:ring@2-2", "T1 must be a finite time after T0"),
    ("truncated:index@1-2", "only offline and stall last until T1; truncated happens once"),
    ("offline:ring@" + "9" * 400, "T0 must be a finite time"),
])
def test_bad_specifications_name_the_rule(text, rule):
    with pytest.raises(ValueError) as exc:
        parse_fault(text)
    assert str(exc.value).startswith(f"fault {text!r}: ") and rule in str(exc.value)


def test_the_schedule_starts_and_ends_faults_at_their_times():
    hand = EmulatedHand2("right")
    clock0 = hand.device_time_us
    schedule = FaultSchedule([parse_fault("offline:ring@0.5-1.0"), parse_fault("stall:thumb@0.2"),
                              parse_fault("jump@0.7")])
    states = []
    for t in (0.0, 0.2, 0.5, 0.7, 0.99, 1.0, 2.0):
        schedule(hand, t)
        states.append((hand.pad("ring").online, hand.pad("thumb").sending, hand.device_time_us - clock0))
    assert states == [(True, True, 0), (True, False, 0), (False, False, 0), (False, False, JUMP_US),
                      (False, False, JUMP_US), (True, False, JUMP_US), (True, False, JUMP_US)]


def test_one_shot_faults_happen_once_even_when_time_stays_past_t0():
    hand = EmulatedHand2("right")
    schedule = FaultSchedule([parse_fault("duplicate:index@0.1"), parse_fault("revise:pinky@0.1")])
    digest = hand.pad("pinky").digest
    for t in (0.1, 0.2, 0.3):
        schedule(hand, t)
    assert list(hand.pad("index").inject) == ["duplicate"]
    assert hand.pad("pinky").revision == 1 and hand.pad("pinky").digest != digest
