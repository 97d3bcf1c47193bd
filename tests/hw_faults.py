"""Fault injection at each step of the hardware producer's recovery path, on the emulated hand
reached through the emulated SDK manager (so reconnecting by serial number is the real code).

`Rig` drives emit → step on a virtual clock shared by the device, the producer and the run loop
(one tick = one 10 ms device period), so staleness and backoff are counted in ticks, never in
how fast the machine is; only the SDK-call bound (`bounded`, 150 ms) and an injected hang are
real time, and a hang is far longer than that bound;
`SCENARIOS` lists each fault with what the producer must do; `python tests/hw_faults.py`
prints the fault-injection table of docs/hardware.md (fault → behaviour, time to recover).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from hw_loop import OnLoop
from wuji_tactile_device.producers.emulated import EmulatedHand2
from wuji_tactile_device.producers.emulated import EmulatedSdkManager
from wuji_tactile_device.producers.hardware import HardwareConfig, HardwareProducer
from wuji_tactile_device.producers.hardware.device import connect_sdk_hand
from wuji_tactile_device.producers.hardware.recovery import RetryPolicy
from wuji_tactile_device.streams.inproc import InProcessBus

#: Small bounds so the tests take well under a second each: 150 ms per call, backoff 20 → 160 ms.
POLICY = RetryPolicy(timeout_s=0.15, attempts=5, backoff_s=0.02, factor=2.0, max_backoff_s=0.16)
_LAYOUT: dict[str, object] = {}
ZERO = np.zeros((176, 3))


def hand(**kw) -> EmulatedHand2:
    if "right" not in _LAYOUT:
        from wuji_tactile_device.producers.sim.taxels import pad_taxels

        _LAYOUT["right"] = pad_taxels("right")
    return EmulatedHand2("right", pad_taxels=_LAYOUT["right"], diagnostics_every=0, **kw)


#: One rig tick [ns] of the virtual clock: the emulated hand's period (it emits one sample per tick).
TICK_NS = 10_000_000


class VirtualClock:
    """Local monotonic time [ns] advanced only by the rig (`advance`), never by the machine."""

    def __init__(self) -> None:
        self.now = 1_000_000_000

    def __call__(self) -> int:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += int(round(seconds * 1e9))


class Rig:
    def __init__(self, **emu_kw):
        self.clock = VirtualClock()
        self.emu = hand(**emu_kw)
        self.manager = EmulatedSdkManager([self.emu])
        self.device = connect_sdk_hand(sn=self.emu.serial_number, manager=self.manager, policy=POLICY,
                                       clock_ns=self.clock)
        self.producer = OnLoop(HardwareProducer(self.device, HardwareConfig(side="right", stale_after_s=0.05, recovery=POLICY)), InProcessBus())

    def tick(self) -> int:
        self.emu.emit(ZERO)
        n = self.producer.step()
        self.clock.advance(TICK_NS / 1e9)
        return n

    def run(self, seconds: float) -> int:
        end, n = self.clock() + int(round(seconds * 1e9)), 0
        while self.clock() < end:
            n += self.tick()
        return n

    def sleep(self, seconds: float) -> None:
        """Time passes with nothing polled (the producer does not run meanwhile)."""
        self.clock.advance(seconds)

    def until_published(self, timeout_s: float = 5.0) -> float:
        """Virtual seconds until the next published tick (raises AssertionError on timeout)."""
        start = self.clock()
        while self.clock() - start < timeout_s * 1e9:
            if self.tick():
                return (self.clock() - start) / 1e9
        raise AssertionError(f"nothing published within {timeout_s} s; events: "
                             f"{[e.message for e in self.producer.events[-5:]]}")

    def kinds(self) -> list[str]:
        return [e.kind for e in self.producer.events]


class Scenario(NamedTuple):
    name: str
    fault: Callable[[Rig], None]  # make the fault happen (and queue SDK failures)
    heal: Callable[[Rig], None]  # what ends the fault (the clock for "time to recover" starts here)
    expect: str  # the behaviour, in words, for the table


def _offline(r: Rig) -> None:
    r.emu.set_online("ring", False)
    r.run(0.12)


def _back(r: Rig) -> None:
    r.emu.set_online("ring", True)


def _lose(r: Rig) -> None:
    r.emu.lose_link()
    r.run(0.12)


def _restore(r: Rig) -> None:
    r.emu.restore_link()


def _then(*steps):
    def go(r: Rig) -> None:
        for s in steps:
            s(r)
    return go


SCENARIOS: list[Scenario] = [
    Scenario("ring offline, back (no SDK failure)", _offline, _back,
             "ring unavailable, nothing published; info re-read, digest + layout confirmed, resumes"),
    Scenario("recovery: fingertip_online() times out ×2", _offline,
             _then(lambda r: r.emu.fail_next("fingertip_online", "timeout", count=2), _back),
             "2 failed attempts (timeouts), backoff 20 → 40 ms, then recovers"),
    Scenario("recovery: fingertip_online() hangs 1 s", _offline,
             _then(lambda r: r.emu.fail_next("fingertip_online", "hang", hang_s=1.0), _back),
             "call abandoned after 150 ms (timeout), retried, recovers"),
    Scenario("recovery: ring info read times out ×3 (was fatal)", _offline,
             _then(lambda r: r.emu.fail_next("info:ring", "timeout", count=3), _back),
             "3 timeouts counted, backoff 20/40/80 ms, recovers; the run does not end"),
    Scenario("recovery: ring info read fails (SDK error) ×2", _offline,
             _then(lambda r: r.emu.fail_next("info:ring", "error", count=2), _back),
             "2 errors counted, retried with backoff, recovers"),
    Scenario("recovery: ring info read says offline ×2", _offline,
             _then(lambda r: r.emu.fail_next("info:ring", "offline", count=2), _back),
             "counted as offline, retried with backoff (not an error), recovers"),
    Scenario("new digest; re-reading its info times out", lambda r: None,
             _then(lambda r: r.emu.fail_next("info:middle", "timeout", count=2),
                   lambda r: r.emu.revise_info("middle", point_type="i32", point_scale=1e-5)),
             "middle unavailable instead of a crash; recovery re-reads, rebuilds the decoder, resumes"),
    Scenario("link lost 0.3 s, then back", _lose, _then(lambda r: r.sleep(0.3), _restore),
             "stream error → reconnect by serial number with backoff (not found meanwhile); all five "
             "fingers re-confirmed before publishing"),
    Scenario("reconnect: connect() times out ×2", _lose,
             _then(lambda r: r.manager.fail_next("connect", "timeout", count=2), _restore),
             "2 failed reconnect attempts, backoff, reconnects"),
    Scenario("reconnect: connect() hangs 1 s", _lose,
             _then(lambda r: r.manager.fail_next("connect", "hang", hang_s=1.0), _restore),
             "connect abandoned after 150 ms, retried, reconnects"),
    Scenario("reconnect: handedness() times out", _lose,
             _then(lambda r: r.emu.fail_next("handedness", "timeout"), _restore),
             "identity re-read retried; reconnects"),
    Scenario("reconnect: subscribing the index stream fails", _lose,
             _then(lambda r: r.emu.fail_next("subscribe:index", "error"), _restore),
             "reconnect attempt fails, retried, reconnects"),
    Scenario("data stream recv() fails once (Disconnected)", lambda r: None,
             lambda r: r.emu.fail_next("recv:thumb", "error"),
             "treated as a lost link: reconnects, re-confirms, resumes"),
]


def run_scenario(s: Scenario) -> tuple[Rig, float]:
    r = Rig()
    r.run(0.05)
    assert r.producer.published > 0
    s.fault(r)
    s.heal(r)
    return r, r.until_published()


def table() -> str:
    rows = ["| fault | behaviour | time to recover | counters |", "|---|---|---:|---|"]
    for s in SCENARIOS:
        r, took = run_scenario(s)
        rec = {k: v for k, v in dataclasses.asdict(r.producer.recovery).items() if v}
        link = {k: v for k, v in dataclasses.asdict(r.device.link_counters).items() if v}
        rows.append(f"| {s.name} | {s.expect} | {took * 1000:.0f} ms | {rec} {link} |")
    return "\n".join(rows)


if __name__ == "__main__":
    import logging

    logging.disable(logging.WARNING)
    print(table())
