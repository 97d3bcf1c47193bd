"""Tick assembly against fingers sampled on their own clocks (emulated hand → SDK adapter →
producer): fixed, drifting and jittered phase offsets up to a full period, and one finger at
another rate. Every published tick carries one fresh sample per finger (none reused, none a
period older than the tick's newest), and no tick the samples allowed is lost beyond the
start-up and one per phase slip."""
from __future__ import annotations

import logging

import numpy as np
import pytest

from hw_loop import OnLoop
from wuji_tactile_device.hands.wuji_hand2 import FINGERS
from wuji_tactile_device.producers.hardware.assembly import TickAssembler
from wuji_tactile_device.producers.hardware.device import FingertipFrame

from hw_timing import PERIOD_US, build, run_pattern, spread_offsets


def check_fresh(r) -> None:
    assert r.reused == 0, "a finger sample was published in two ticks"
    assert r.over_period == 0, "a tick spanned a full period (a stale finger)"


@pytest.mark.parametrize("spread_us", [4900, 6000, 8000, 9900])
def test_fixed_offsets_up_to_a_full_period_publish_every_tick(spread_us):
    # the former fixed ±5 ms window published none of these from 6 ms on
    r = run_pattern(spread_offsets(spread_us), 300)
    check_fresh(r)
    assert r.published >= r.expected - 1  # at most the first, while the phases are learnt


def test_pairing_is_by_nearest_sample_so_the_spread_is_the_smallest_arc():
    # offsets 0, 1.5, 3, 4.5, 6 ms: grouping each sample with the next thumb would span 8.5 ms;
    # the nearest grouping spans 6 ms, and each finger's measured skew is its offset from the mean
    r = run_pattern(spread_offsets(6000), 200)
    assert r.worst_spread_us == 6000


def test_measured_skew_per_finger():
    from hw_timing import _hand
    from wuji_tactile_device.producers.hardware import HardwareConfig, HardwareProducer, SdkFingertipDevice
    from wuji_tactile_device.streams.inproc import InProcessBus

    emu = _hand(0)
    for f, kw in spread_offsets(6000).items():
        emu.set_timing(f, **kw)
    producer = OnLoop(HardwareProducer(SdkFingertipDevice(emu), HardwareConfig(side="right")), InProcessBus())
    for _ in range(50):
        emu.emit(np.zeros((176, 3)))
        producer.step()
    skew = producer.assembler.skew()
    assert [skew[f]["last_us"] for f in FINGERS] == [-3000.0, -1500.0, 0.0, 1500.0, 3000.0]
    assert [skew[f]["max_abs_us"] for f in FINGERS] == [3000.0, 1500.0, 0.0, 1500.0, 3000.0]


def test_random_offsets_publish_on_every_hand():
    # with a fixed half-period window only ~31 % of such hands published at all
    for seed in range(8):
        r = run_pattern(build("random", seed), 200, seed=seed)
        check_fresh(r)
        assert r.published >= r.expected - 1, (seed, r)
        assert r.worst_spread_us < PERIOD_US


@pytest.mark.parametrize("pattern,allowed_loss", [("random_jitter_1000", 2), ("random_drift", 4),
                                                  ("random_drift_jitter", 4)])
def test_jitter_and_drift_through_a_full_period(pattern, allowed_loss):
    # ±2000 ppm slides a finger through a full period every 500 ticks: 1200 ticks cross it twice;
    # each crossing costs at most one tick (the slower finger has one sample fewer anyway)
    for seed in range(2):
        r = run_pattern(build(pattern, seed), 1200, seed=seed)
        check_fresh(r)
        assert r.published >= r.expected - allowed_loss, (seed, r)


def test_a_finger_at_half_the_rate_sets_the_tick_rate():
    r = run_pattern({"pinky": {"rate_hz": 50.0}}, 400)
    check_fresh(r)
    assert r.samples["pinky"] == 200 and r.samples["thumb"] == 400
    assert r.published == r.expected == 200


def test_a_faster_finger_has_its_extra_samples_superseded_not_ticks_lost():
    r = run_pattern({"middle": {"rate_hz": 120.0}, "ring": {"phase_us": 3000.0}}, 600)
    check_fresh(r)
    assert r.samples["middle"] == 719  # 6 s at 120 Hz, the first sample one period after the start
    assert r.published == r.expected == 599  # ring (3 ms late) delivers 599 samples in 600 periods


def test_a_slightly_slower_finger_paces_the_ticks():
    r = run_pattern({"thumb": {"rate_hz": 99.0}}, 1000)
    check_fresh(r)
    assert r.expected == 990 and r.published >= r.expected - 1


# ----- the assembler alone: reasons and the rate-limited warning -----

T0_NS = 5_000_000_000


def frame(f, seq, ts):
    return FingertipFrame(f, seq, ts, 7, b"", T0_NS + (ts + 500) * 1000)


def test_dropping_is_warned_once_per_period_naming_the_missing_finger(caplog):
    a = TickAssembler(rate_hz=100.0, warn_period_s=5.0)
    published = 0
    with caplog.at_level(logging.WARNING, logger="wuji_tactile_device.producers.hardware.assembly"):
        for k in range(1000):  # 10 s; ring loses every 10th frame
            for i, f in enumerate(FINGERS):
                if f == "ring" and k % 10 == 5:
                    continue
                a.push(frame(f, k, k * PERIOD_US + 700 * i))
            published += len(a.pop_ready())
    lines = [r.getMessage() for r in caplog.records]
    assert 2 <= len(lines) <= 3, lines  # 10 s at one line per 5 s
    assert "incomplete" in lines[0] and "ring: missing" in lines[0] and "frames lost in transit" in lines[0]
    assert a.counters.missing["ring"] == 100 and a.counters.lost["ring"] == 100
    assert published == 900 and a.counters.incomplete_ticks == 100


def test_phase_tracker_follows_a_drifting_period():
    from wuji_tactile_device.producers.hardware.assembly import PhaseTracker

    true_period = 10_000.0 * (1 + 2000e-6)  # a module clock 0.2 % slow against the announced rate
    exact = PhaseTracker(10_000.0)
    for k in range(500):
        exact.update(k, int(round(k * true_period)))
    assert exact.P == pytest.approx(true_period, abs=0.5)  # no lag on a drift (alpha-beta)
    noisy = PhaseTracker(10_000.0)
    rng = np.random.default_rng(3)
    for k in range(2000):
        noisy.update(k, int(round(k * true_period + rng.uniform(-1000, 1000))))
    assert noisy.P == pytest.approx(true_period, abs=10.0)  # σ of the estimate ≈ 7 µs at ±1 ms jitter
    assert abs(noisy.t - 1999 * true_period) < 250  # the ±1 ms jitter is filtered down
