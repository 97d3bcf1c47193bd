"""Recovery that survives the SDK: timeouts, failures, hangs and disconnects injected at each step
of the recovery path (online flag, info read, digest re-read, connect, identity, subscribe,
stream), through the emulated SDK manager, in real time with small bounds (150 ms per call,
backoff 20 → 160 ms)."""
from __future__ import annotations

import pytest

from wuji_tactile_device.errors import LayoutChangedError
from wuji_tactile_device.hands.wuji_hand2 import FINGERS
from wuji_tactile_device.producers.hardware.identity import HandednessMismatchError

from hw_faults import SCENARIOS, Rig, _lose, _offline, run_scenario

# scenario → (producer.recovery counters that must match exactly, device link counters at least)
EXPECTED = {
    "ring offline, back (no SDK failure)": ({"attempts": 1, "recovered": 1, "timeouts": 0, "errors": 0}, {}),
    "recovery: fingertip_online() times out ×2": ({"attempts": 3, "timeouts": 2, "recovered": 1}, {}),
    "recovery: fingertip_online() hangs 1 s": ({"attempts": 2, "timeouts": 1, "recovered": 1}, {}),
    "recovery: ring info read times out ×3 (was fatal)": ({"attempts": 4, "timeouts": 3, "recovered": 1}, {}),
    "recovery: ring info read fails (SDK error) ×2": ({"attempts": 3, "errors": 2, "recovered": 1}, {}),
    "recovery: ring info read says offline ×2": ({"attempts": 3, "offline": 2, "errors": 0, "recovered": 1}, {}),
    "new digest; re-reading its info times out": ({"timeouts": 1, "recovered": 1}, {}),
    "link lost 0.3 s, then back": ({"recovered": 5, "reconnects": 1}, {"stream_errors": 1, "reconnects": 1}),
    "reconnect: connect() times out ×2": ({"recovered": 5, "reconnects": 1}, {"reconnect_failures": 2, "reconnects": 1}),
    "reconnect: connect() hangs 1 s": ({"recovered": 5, "reconnects": 1}, {"reconnect_failures": 1, "reconnects": 1}),
    "reconnect: handedness() times out": ({"recovered": 5, "reconnects": 1}, {"reconnect_failures": 1, "reconnects": 1}),
    "reconnect: subscribing the index stream fails": ({"recovered": 5, "reconnects": 1}, {"reconnect_failures": 1, "reconnects": 1}),
    "data stream recv() fails once (Disconnected)": ({"recovered": 5, "reconnects": 1}, {"stream_errors": 1, "reconnects": 1}),
}


def test_every_scenario_has_expectations():
    assert [s.name for s in SCENARIOS] == list(EXPECTED)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_fault_is_survived_counted_and_publication_resumes(scenario):
    rig, took = run_scenario(scenario)
    exact, at_least = EXPECTED[scenario.name]
    assert {k: getattr(rig.producer.recovery, k) for k in exact} == exact
    for k, v in at_least.items():
        assert getattr(rig.device.link_counters, k) >= v, (k, rig.device.link_counters)
    assert took < 1.5  # bounded: no call waits longer than 150 ms, backoff at most 160 ms
    kinds = rig.kinds()
    assert "unavailable" in kinds and kinds[-1] == "recovered"
    before = rig.producer.published
    rig.run(0.05)
    assert rig.producer.published > before and rig.producer.unavailable_fingers == ()


def test_after_a_reconnect_every_finger_is_reconfirmed_before_anything_is_published():
    rig = Rig()
    rig.run(0.05)
    published = []
    producer = rig.producer.producer
    on_published = producer.on_published

    def spy(frame, sequence, timestamp):  # the events seen when each tick is published
        published.append(len(producer.events))
        on_published(frame, sequence, timestamp)

    producer.on_published = spy
    _lose(rig)
    rig.emu.restore_link()
    rig.until_published()
    events = rig.producer.events
    k = max(i for i, e in enumerate(events) if e.kind == "reconnected")
    first_tick_after = min(n for n in published if n > k)
    recovered = {f for e in events[k:first_tick_after] if e.kind == "recovered" for f in e.fingers}
    assert recovered == set(FINGERS)


def test_a_layout_changed_while_disconnected_stops_instead_of_publishing_old_metadata():
    rig = Rig()
    rig.run(0.05)
    _lose(rig)
    rig.emu.revise_info("ring", move_taxels_m=0.002)
    rig.emu.restore_link()
    with pytest.raises(LayoutChangedError, match="ring: the device revised its sensor info mid-session"):
        rig.run(1.0)


def test_a_hand_that_comes_back_as_the_other_side_is_refused():
    rig = Rig()
    rig.run(0.05)
    _lose(rig)
    rig.emu.reported_side = "left"
    rig.emu.restore_link()
    with pytest.raises(HandednessMismatchError, match="hand EMUK0001 reported right before the reconnect and left after"):
        rig.run(1.0)


def test_recovery_keeps_trying_while_the_finger_stays_offline_without_busy_looping():
    rig = Rig()
    rig.run(0.05)
    _offline(rig)
    rig.emu.fail_next("info:ring", "offline", count=100)
    rig.emu.set_online("ring", True)
    rig.run(0.5)
    attempts = rig.producer.recovery.attempts
    # backoff 20, 40, 80, 160, 160 ... ms: about 5 attempts in 0.5 s, not one per step (~300 steps)
    assert 3 <= attempts <= 8 and rig.producer.recovery.offline == attempts
    assert rig.producer.unavailable_fingers == ("ring",)
