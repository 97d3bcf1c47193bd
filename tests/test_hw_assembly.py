"""Five finger streams → ticks by device timestamp, and the dropped / lost / late / duplicate /
clock-jump counters."""
from __future__ import annotations

from wuji_tactile_device.producers.hardware.assembly import TickAssembler
from wuji_tactile_device.producers.hardware.device import FingertipFrame
from wuji_tactile_device.hands.wuji_hand2 import FINGERS

PERIOD = 10_000  # µs at 100 Hz
T0_NS = 5_000_000_000


def fr(finger: str, seq: int, ts_us: int, *, delay_us: int = 500) -> FingertipFrame:
    return FingertipFrame(finger, seq, ts_us, 7, b"", T0_NS + (ts_us + delay_us) * 1000)


def push_tick(a: TickAssembler, seq: int, ts: int, jitter=(0, 0, 0, 0, 0), skip=()):
    for f, j in zip(FINGERS, jitter, strict=True):
        if f not in skip:
            a.push(fr(f, seq, ts + j))


def test_ticks_match_within_tolerance_in_finger_order():
    a = TickAssembler(tolerance_us=5000)
    push_tick(a, 0, 0, jitter=(0, 1200, -800, 3000, 2500))
    push_tick(a, 1, PERIOD, jitter=(4000, 0, 0, -900, 0))
    ticks = a.pop_ready()
    assert [[x.finger for x in t] for t in ticks] == [list(FINGERS)] * 2
    assert [x.timestamp_us for x in ticks[0]] == [0, 1200, -800, 3000, 2500]
    assert a.counters.ticks == 2 and sum(a.counters.dropped.values()) == 0


def test_waits_for_missing_finger_and_never_emits_partial_tick():
    a = TickAssembler(tolerance_us=5000)
    push_tick(a, 0, 0, skip=("ring",))
    assert a.pop_ready() == []
    a.push(fr("ring", 0, 300))
    (tick,) = a.pop_ready()
    assert tick[3].finger == "ring" and tick[3].timestamp_us == 300


def test_unmatchable_frame_is_dropped_and_counted():
    a = TickAssembler(tolerance_us=5000)
    # middle's frame at t=0 never arrives; its next frame is at t=10 ms
    push_tick(a, 0, 0, skip=("middle",))
    push_tick(a, 1, PERIOD)
    ticks = a.pop_ready()
    assert len(ticks) == 1 and all(x.timestamp_us == PERIOD for x in ticks[0])
    assert a.counters.dropped == {"thumb": 1, "index": 1, "middle": 0, "ring": 1, "pinky": 1}
    assert a.counters.lost["middle"] == 0  # seq 1 follows nothing: no gap known yet


def test_spread_beyond_an_explicit_skew_limit_drops_the_whole_tick():
    a = TickAssembler(tolerance_us=2000)
    push_tick(a, 0, 0, jitter=(0, 0, 0, 0, 2500))
    assert a.pop_ready() == []
    # the five samples do form one tick (one per finger, same window), but their timestamps
    # spread 2.5 ms ≥ the 2 ms limit: the tick is dropped whole, never half-published
    assert a.counters.skew_ticks == 1 and a.counters.ticks == 0
    assert a.counters.dropped == {f: 1 for f in FINGERS}
    assert all(a.pending(f) == 0 for f in FINGERS)


def test_duplicate_late_and_lost_counters():
    a = TickAssembler(tolerance_us=5000)
    a.push(fr("index", 5, 50_000))
    a.push(fr("index", 5, 50_000))  # same frame again
    a.push(fr("index", 4, 40_000))  # older than what index already delivered
    a.push(fr("index", 9, 90_000))  # seq 6, 7, 8 never arrived
    c = a.counters
    assert c.duplicate["index"] == 1 and c.late["index"] == 1 and c.lost["index"] == 3
    assert a.pending("index") == 2


def test_seq_wraps_at_u32_without_counting_loss():
    a = TickAssembler(tolerance_us=5000)
    a.push(fr("thumb", 2**32 - 1, 0))
    a.push(fr("thumb", 0, PERIOD))
    a.push(fr("thumb", 2, 2 * PERIOD))
    assert a.counters.lost["thumb"] == 1 and a.counters.late["thumb"] == 0


def test_queue_overflow_drops_oldest():
    a = TickAssembler(tolerance_us=5000, max_pending=4)
    for k in range(6):
        a.push(fr("thumb", k, k * PERIOD))
    assert a.pending("thumb") == 4 and a.counters.dropped["thumb"] == 2


def test_clock_jump_resets_matching_and_mapping():
    a = TickAssembler(tolerance_us=5000, clock_jump_us=250_000)
    push_tick(a, 0, 0)
    assert len(a.pop_ready()) == 1
    local_before = a.clock.to_local_ns(0)
    # device clock steps back by 30 s while local time runs on normally
    for f in FINGERS:
        a.push(FingertipFrame(f, 1, -30_000_000 + PERIOD, 7, b"", T0_NS + (PERIOD + 500) * 1000))
    assert a.counters.clock_jumps == 1
    (tick,) = a.pop_ready()
    assert all(x.timestamp_us == -30_000_000 + PERIOD for x in tick)
    # the new mapping puts the post-jump sample 10 ms after the pre-jump one, as local time says
    assert a.clock.to_local_ns(-30_000_000 + PERIOD) - local_before == PERIOD * 1000


def test_frame_from_before_a_jump_arriving_after_it_is_late_not_another_jump():
    a = TickAssembler(tolerance_us=5000, clock_jump_us=250_000)
    a.push(fr("thumb", 0, 0))
    a.push(FingertipFrame("thumb", 1, 10_000_000, 7, b"", T0_NS + 11_000 * 1000))  # +10 s jump
    a.push(FingertipFrame("index", 0, 0, 7, b"", T0_NS + 11_500 * 1000))  # old epoch straggler
    assert a.counters.clock_jumps == 1 and a.counters.late["index"] == 1


def test_reset_counts_pending_as_dropped():
    a = TickAssembler(tolerance_us=5000)
    push_tick(a, 0, 0, skip=("pinky",))
    a.reset(("thumb", "index"))
    assert a.counters.dropped["thumb"] == 1 and a.counters.dropped["index"] == 1
    assert a.pending("thumb") == 0 and a.pending("middle") == 1


def test_device_clock_mapping_uses_the_smallest_delay_and_follows_drift_slowly():
    from wuji_tactile_device.producers.hardware.assembly import DeviceClock

    clock = DeviceClock(jump_us=250_000)
    base = 7_000_000_000  # local ns when the device read 0
    for k, delay_us in enumerate((3000, 1000)):
        assert clock.classify(k * PERIOD, base + (k * PERIOD + delay_us) * 1000) == "ok"
    # the least-delayed sample defines the mapping: device t ↦ local base + t + 1 ms
    assert clock.to_local_ns(50 * PERIOD) == base + (50 * PERIOD + 1000) * 1000
    # one more-delayed sample moves it by 1/64 of the excess only
    clock.classify(2 * PERIOD, base + (2 * PERIOD + 2000) * 1000)
    assert clock.to_local_ns(0) == base + 1000 * 1000 + 1_000_000 // 64
    clock.classify(3 * PERIOD, base + (3 * PERIOD + 1000) * 1000)  # back to the minimum at once
    assert clock.to_local_ns(0) == base + 1000 * 1000
    # a sustained 0.5 ms longer delay (drift) is followed by 1/64 of the excess per sample
    for k in range(4, 68):
        clock.classify(k * PERIOD, base + (k * PERIOD + 1500) * 1000)
    shift = clock.to_local_ns(0) - (base + 1000 * 1000)
    assert 0.6 * 500_000 < shift < 500_000
