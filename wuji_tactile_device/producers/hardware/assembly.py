"""Five finger streams → one tick, following each finger's own sampling phase.

Each finger samples on its own clock: the five fingertip modules are not triggered together, so
their timestamps sit at fixed (or slowly drifting) offsets of up to a whole period from each
other, with some jitter, and a finger may even run at another rate. A fixed window ("all five
within half a period") publishes nothing once the offsets spread past it. Instead:

1. **Phase tracking.** Per finger, an alpha-beta filter on (seq, timestamp) estimates the
   finger's period and the de-jittered ("nominal") time of each sample. The first interval, a
   rate that disagrees with the info's `rate_hz`, or a residual beyond half a period re-seeds it.
2. **A tick clock.** Ticks follow the slowest finger (the reference; switched only when another
   finger is measurably slower). Tick k is a window of one reference period. The window edge
   (the *cut*) sits in the middle of the largest gap between the fingers' phases, so every
   finger's nominal sample lies as far as possible from an edge — the pairing is "nearest sample
   within a period" and is insensitive to jitter well below the gap. The cut moves (hysteresis)
   only when a finger's phase drifts within `P/20` of it.
3. **Publication.** A tick is published as soon as all five fingers have a sample in its window
   (a faster finger's newer sample in the same window replaces the older one: *superseded*).
   When a finger has moved past a window the others still wait in, that tick can never complete:
   its frames are dropped and the missing finger is named (*incomplete tick*). A tick whose raw
   timestamps spread by `max_skew_us` or more (default: one tick period) is not published
   (*skew*): no tick ever carries a finger sample from another period, and no frame is used twice.

Counters: `dropped` (frames discarded unpublished, any reason), `superseded`, `lost` (gaps in the
u32 `seq`), `late` (out of order, or from before a clock jump), `duplicate`, `malformed`,
`digest_mismatch`, `clock_jumps`, `ticks`, `incomplete_ticks` / `missing` (per finger: the finger
lacking when a tick was abandoned), `skew_ticks`, `phase_resets`. `skew()` reports each
finger's measured offset from the tick time; dropping is warned about in one rate-limited line.

Device time is mapped to the local monotonic clock with a one-way offset filter (minimum delay,
slowly following upward drift); a jump resets matching, phases and the filter.
"""
from __future__ import annotations

import logging
import math
from collections import deque
from dataclasses import dataclass, field
from collections.abc import Mapping, Sequence
from typing import Generic, Literal, Protocol, TypeVar, overload

from ...hands.wuji_hand2 import FINGERS

log = logging.getLogger(__name__)

_U32 = 1 << 32
#: Steady-state alpha-beta gains (Benedict–Bordner pair: beta = alpha² / (2 − alpha)).
ALPHA, BETA = 0.1, 0.1 ** 2 / 1.9
_STEADY = 40  # updates after which both gains have reached ALPHA / BETA
#: The cut is revisited every this many reference samples once the phases are learnt.
CUT_EVERY = 4
#: Fingers whose period is within this fraction of the tick period take part in placing the cut.
SAME_RATE = 0.02
#: A finger becomes the reference (tick clock) when its period exceeds the reference's by this.
SLOWER = 0.002


class TimedFrame(Protocol):
    """What the assembler reads of a frame: its finger, u32 `seq`, device `timestamp_us` [µs]
    and local `received_ns` [monotonic ns] (a `FingertipFrame`, or the producer's decoded frame)."""

    @property
    def finger(self) -> str: ...
    @property
    def seq(self) -> int: ...
    @property
    def timestamp_us(self) -> int: ...
    @property
    def received_ns(self) -> int: ...


#: The kind of frame a `TickAssembler` queues and hands back in its ticks.
F = TypeVar("F", bound=TimedFrame)


def _per_finger() -> dict[str, int]:
    return {f: 0 for f in FINGERS}


@dataclass
class AssemblyCounters:
    ticks: int = 0
    dropped: dict[str, int] = field(default_factory=_per_finger)
    superseded: dict[str, int] = field(default_factory=_per_finger)
    lost: dict[str, int] = field(default_factory=_per_finger)
    late: dict[str, int] = field(default_factory=_per_finger)
    duplicate: dict[str, int] = field(default_factory=_per_finger)
    malformed: dict[str, int] = field(default_factory=_per_finger)
    digest_mismatch: dict[str, int] = field(default_factory=_per_finger)
    missing: dict[str, int] = field(default_factory=_per_finger)
    phase_resets: dict[str, int] = field(default_factory=_per_finger)
    incomplete_ticks: int = 0
    skew_ticks: int = 0
    clock_jumps: int = 0

    def as_dict(self) -> dict:
        return {k: (dict(v) if isinstance(v, dict) else v) for k, v in self.__dict__.items()}


class DeviceClock:
    """Maps device timestamps [µs] to the local monotonic clock [ns]: local ≈ device + offset,
    offset = the smallest observed (received − device) delay, following upward drift slowly."""

    def __init__(self, jump_us: int):
        self.jump_ns = jump_us * 1000
        self.offset_ns: int | None = None
        self.previous_offset_ns: int | None = None

    def classify(self, timestamp_us: int, received_ns: int) -> str:
        """'ok', 'jump' (a new clock epoch starts: offset reset) or 'stale_epoch' (a frame from
        before the last jump, still in flight)."""
        d = received_ns - timestamp_us * 1000
        if self.offset_ns is None:
            self.offset_ns = d
            return "ok"
        if abs(d - self.offset_ns) <= self.jump_ns:
            if d < self.offset_ns:
                self.offset_ns = d
            else:
                self.offset_ns += (d - self.offset_ns) // 64
            return "ok"
        if self.previous_offset_ns is not None and abs(d - self.previous_offset_ns) <= self.jump_ns:
            return "stale_epoch"
        self.previous_offset_ns, self.offset_ns = self.offset_ns, d
        return "jump"

    def to_local_ns(self, timestamp_us: int) -> int:
        return timestamp_us * 1000 + (self.offset_ns or 0)


class PhaseTracker:
    """One finger's sampling clock: alpha-beta filter on (seq, timestamp [µs]) → period `P` [µs]
    and the nominal (de-jittered) time of the latest sample `t` [µs]."""

    __slots__ = ("P", "t", "seq", "k", "nominal_P")

    def __init__(self, period_us: float | None):
        self.nominal_P = period_us
        self.P = period_us
        self.t: float | None = None
        self.seq = 0
        self.k = 0  # updates so far (sets the warm-up gains)

    def update(self, seq: int, t: int) -> tuple[float, bool]:
        """Feed one sample; returns (its nominal time [µs], whether the tracker re-seeded)."""
        if self.t is None:
            self.t, self.seq, self.k = float(t), seq, 0 if self.P is None else 8
            return self.t, False
        n = (seq - self.seq) % _U32 or 1
        if n >= _U32 // 2:
            n = 1
        dt = t - self.t
        self.seq = seq
        if self.P is None or abs(dt - n * self.P) > 0.5 * self.P:
            # first interval, a rate the info did not announce, or seq and time disagree
            reseed = self.P is not None
            measured = dt / n
            ok = measured > 0 and (self.nominal_P is None or 0.1 * self.nominal_P < measured < 10 * self.nominal_P)
            self.P = measured if ok else (self.nominal_P or self.P)
            self.t, self.k = float(t), 1
            return self.t, reseed
        self.k = k = self.k + 1
        if k < _STEADY:  # growing-memory (least-squares) gains until they reach the steady ones
            a = max(ALPHA, 2.0 * (2 * k + 1) / ((k + 1) * (k + 2)))
            b = max(BETA, 6.0 / ((k + 1) * (k + 2)))
        else:
            a, b = ALPHA, BETA
        pred = self.t + n * self.P
        r = t - pred
        self.t = pred + a * r
        self.P += b * r / n
        return self.t, False


class _Entry:
    __slots__ = ("m", "k", "frame")

    def __init__(self, m: float, k: int, frame):
        self.m, self.k, self.frame = m, k, frame


class TickAssembler(Generic[F]):
    """Collects frames and yields complete ticks (five frames, FINGERS order). A frame is any
    `TimedFrame`: an object with `finger`, `seq`, `timestamp_us` [device µs] and `received_ns`
    [local monotonic] (a `FingertipFrame`, or the producer's decoded frame); the ticks hold the
    frames queued (type F), discarded ones (`queue=False`) may be of any `TimedFrame` type.

    `rate_hz`: the fingers' announced rates (one number, or finger → Hz) seeding the phase
    trackers (None: measured from the first interval). `tolerance_us`: the largest raw-timestamp
    spread a published tick may have (None: one tick period). `warn_period_s`: at most one
    warning line about dropped ticks per this many seconds of the frames' receive clock."""

    def __init__(self, *, rate_hz: float | Mapping[str, float] | None = 100.0, tolerance_us: int | None = None,
                 clock_jump_us: int = 250_000, max_pending: int = 16, warn_period_s: float = 5.0):
        if tolerance_us is not None and tolerance_us <= 0:
            raise ValueError(f"tolerance_us must be > 0, got {tolerance_us}")
        rates = rate_hz if isinstance(rate_hz, Mapping) else {f: rate_hz for f in FINGERS}
        for f in FINGERS:
            r = rates.get(f)
            if r is not None and not (isinstance(r, (int, float)) and r > 0 and math.isfinite(r)):
                raise ValueError(f"rate_hz[{f}] must be a positive finite number, got {r!r}")
        self._periods = {f: (None if (r := rates.get(f)) is None else 1e6 / r) for f in FINGERS}
        self.tolerance_us = None if tolerance_us is None else int(tolerance_us)
        self.max_pending = max_pending
        self.counters = AssemblyCounters()
        self.clock = DeviceClock(clock_jump_us)
        self._warn_ns = int(warn_period_s * 1e9)
        self._pending: dict[str, deque[_Entry]] = {f: deque() for f in FINGERS}
        self._last: dict[str, tuple[int, int] | None] = {f: None for f in FINGERS}  # (seq, ts)
        self._skew_last = [0.0] * 5
        self._skew_max = [0.0] * 5
        self._skew_mean = [0.0] * 5
        self.worst_spread_us = 0
        self._reset_timing()
        self._warned_at_ns: int | None = None
        self._warned_counts = (0, 0, 0)

    def _reset_timing(self) -> None:
        self._phase = {f: PhaseTracker(self._periods[f]) for f in FINGERS}
        self._ref: str | None = None
        self._g = 0.0  # nominal time of the reference's latest sample [µs]
        self._K = 0  # its tick index
        self._u: float | None = None  # cut: window k = [g + u − P, g + u) shifted by (k − K)·P
        self._last_published: int | None = None
        self._stale_index = False  # pending frames' tick indices need re-deriving (grid moved)

    # ----- bookkeeping -----
    def reset(self, fingers: Sequence[str] = FINGERS) -> None:
        """Forget pending frames of `fingers` (counted as dropped) and their ordering state."""
        for f in fingers:
            self.counters.dropped[f] += len(self._pending[f])
            self._pending[f].clear()
            self._last[f] = None
            self._phase[f] = PhaseTracker(self._periods[f])
        if self._ref in fingers:
            self._ref, self._u, self._last_published = None, None, None
            self._stale_index = True

    def pending(self, finger: str) -> int:
        return len(self._pending[finger])

    @property
    def tick_period_us(self) -> float | None:
        """The tick clock's period [µs] (the reference finger's measured period)."""
        return None if self._ref is None else self._phase[self._ref].P

    def skew(self) -> dict[str, dict[str, float]]:
        """Per finger, its raw timestamp minus the published tick's time [µs]: the last tick's
        (`last_us`), a running mean over ticks (`mean_us`, 1/64 per tick) and the largest
        magnitude seen (`max_abs_us`)."""
        return {f: {"last_us": self._skew_last[i], "mean_us": self._skew_mean[i],
                    "max_abs_us": self._skew_max[i]} for i, f in enumerate(FINGERS)}

    def phases(self) -> dict[str, float | None]:
        """Per finger, its sampling phase relative to the reference finger [µs, 0 ≤ φ < P]."""
        P = self.tick_period_us
        if P is None:
            return {f: None for f in FINGERS}
        return {f: (None if (t := self._phase[f].t) is None else (t - self._g) % P) for f in FINGERS}

    # ----- input -----
    @overload
    def push(self, frame: F, *, queue: Literal[True] = True) -> None: ...
    @overload
    def push(self, frame: TimedFrame, *, queue: bool) -> None: ...

    def push(self, frame: TimedFrame, *, queue: bool = True) -> None:
        """Account for one frame and queue it. `queue=False`: a frame the caller discards
        (malformed, unconfirmed digest, finger unavailable) — counted as dropped, and its seq is
        noted so it is not also counted as lost (its timing still feeds the phase tracker)."""
        f = frame.finger
        c = self.counters
        kind = self.clock.classify(frame.timestamp_us, frame.received_ns)
        if kind == "stale_epoch":
            c.late[f] += 1
            return
        if kind == "jump":
            c.clock_jumps += 1
            self.reset()
            self._reset_timing()
        last = self._last[f]
        if last is not None:
            last_seq, last_ts = last
            if frame.seq == last_seq and frame.timestamp_us == last_ts:
                c.duplicate[f] += 1
                return
            if frame.timestamp_us <= last_ts:
                c.late[f] += 1
                return
            gap = (frame.seq - last_seq) % _U32 - 1
            if 0 < gap < _U32 // 2:
                c.lost[f] += gap
        self._last[f] = (frame.seq, frame.timestamp_us)
        tracker = self._phase[f]
        n = (frame.seq - tracker.seq) % _U32 if tracker.t is not None else 0
        m, reseeded = tracker.update(frame.seq, frame.timestamp_us)
        if reseeded:
            c.phase_resets[f] += 1
        ref = self._ref
        P = None if ref is None else self._phase[ref].P
        # the tick clock only needs this frame when it is the reference's, while phases are being
        # learnt, or when the finger turns out slower than the reference
        if f == ref or P is None or tracker.k < 10 or (tracker.P is not None and tracker.P > P * (1 + SLOWER)):
            self._follow(f, m, n)
            ref = self._ref
            P = None if ref is None else self._phase[ref].P
        if not queue:
            c.dropped[f] += 1
            return
        q = self._pending[f]
        if len(q) >= self.max_pending:
            q.popleft()
            c.dropped[f] += 1
        if P is None:
            q.append(_Entry(m, 0, frame))
        else:
            u = self._u if self._u is not None else P / 2
            q.append(_Entry(m, self._K + math.floor((m - self._g - u) / P) + 1, frame))

    def _follow(self, f: str, m: float, n: int) -> None:
        """Advance the tick clock on a reference sample; adopt a slower finger as reference."""
        ref = self._ref
        if ref is None:
            self._ref, self._g, self._K, self._u = f, m, 0, None
            self._stale_index = True
            return
        P_ref = self._phase[ref].P
        P_f = self._phase[f].P
        if f == ref:
            if not 0 < n < _U32 // 2:
                n = max(1, round((m - self._g) / P_ref)) if P_ref else 1
            self._K += n
            self._g = m
            if self._phase[f].k >= 10 and self._K % CUT_EVERY and self._u is not None:
                return
        elif P_ref is not None and P_f is not None and self._phase[f].k >= 3 and P_f > P_ref * (1 + SLOWER):
            # f is measurably slower: it becomes the tick clock (ticks follow the slowest finger)
            cut_abs = None if self._u is None else self._g + self._u
            self._K = self._index(m)
            self._ref, self._g = f, m
            self._u = None if cut_abs is None else ((cut_abs - m) % P_f) or P_f
            self._stale_index = True
        else:
            if self._phase[f].k >= 10:
                return  # the cut is revisited once per tick (on the reference's sample)
        self._place_cut()

    def _place_cut(self) -> None:
        """Put the window edge in the middle of the largest gap between the same-rate fingers'
        phases. Hysteresis: the edge stays while no phase is within P/20 of it and its own gap
        is within P/10 of the largest (each move can cost one tick)."""
        ref = self._ref
        assert ref is not None, "the cut is placed once a reference finger is chosen"
        P = self._phase[ref].P
        if P is None:
            return
        phases = sorted((tr.t - self._g) % P for tr in self._phase.values()
                        if tr.t is not None and tr.P is not None and abs(tr.P - P) <= SAME_RATE * P)
        u = self._u
        if len(phases) == 1:
            if u is None:
                self._u = P / 2
                self._stale_index = True
            return
        gaps = [(phases[i + 1] - phases[i], phases[i]) for i in range(len(phases) - 1)]
        gaps.append((phases[0] + P - phases[-1], phases[-1]))
        width, start = max(gaps)
        if u is not None:
            margin = P / 20
            here, clear = 0.0, False
            for w, a in gaps:
                d = (u - a) % P
                if d < w:  # the gap the edge sits in
                    here, clear = w, margin <= d <= w - margin
                    break
            if clear and here >= width - 2 * margin:
                return
        self._u = ((start + width / 2) % P) or P
        self._stale_index = True

    def _ready(self) -> bool:
        return self._ref is not None and self._phase[self._ref].P is not None

    def _reindex(self) -> None:
        """The grid moved (cut, reference): re-derive the tick index of every pending frame."""
        if not self._ready():
            return
        for q in self._pending.values():
            for e in q:
                e.k = self._index(e.m)

    def _ref_period(self) -> tuple[float, float | None]:
        """The reference finger's measured and announced periods [µs]; only called once the
        tick clock runs (`_ready`)."""
        ref = self._ref
        assert ref is not None, "the tick clock has a reference finger"
        tr = self._phase[ref]
        assert tr.P is not None, "the reference finger's period is known"
        return tr.P, tr.nominal_P

    def _index(self, m: float) -> int:
        P, _ = self._ref_period()
        u = self._u if self._u is not None else P / 2
        return self._K + math.floor((m - self._g - u) / P) + 1

    # ----- output -----
    def pop_ready(self) -> list[list[F]]:
        """Complete ticks, oldest first; frames that can no longer complete a tick are dropped
        on the way (counted, with the missing finger named)."""
        out: list[list[F]] = []
        queues = [self._pending[f] for f in FINGERS]
        if self._ref is None or self._phase[self._ref].P is None:
            return out
        c = self.counters
        if self._stale_index:
            self._stale_index = False
            self._reindex()
        while all(queues):
            heads = [q[0].k for q in queues]
            k = min(heads)
            if self._last_published is not None and k <= self._last_published:
                for f, q, h in zip(FINGERS, queues, heads, strict=True):  # a window already published
                    if h == k:
                        q.popleft()
                        c.superseded[f] += 1
                        c.dropped[f] += 1
                continue
            if max(heads) != k:
                c.incomplete_ticks += 1
                for f, q, h in zip(FINGERS, queues, heads, strict=True):
                    if h == k:
                        q.popleft()
                        c.dropped[f] += 1
                    else:
                        c.missing[f] += 1
                continue
            tick = []
            for f, q in zip(FINGERS, queues, strict=True):
                e = q.popleft()
                while q and q[0].k == k:  # a faster finger: keep its freshest sample
                    e = q.popleft()
                    c.superseded[f] += 1
                    c.dropped[f] += 1
                tick.append(e.frame)
            ts = [fr.timestamp_us for fr in tick]
            spread = max(ts) - min(ts)
            limit = self.tolerance_us if self.tolerance_us is not None else self._limit()
            if spread >= limit:
                c.skew_ticks += 1
                for f in FINGERS:
                    c.dropped[f] += 1
                continue
            self._last_published = k
            self._account(tick, ts, spread)
            out.append(tick)
        if c.incomplete_ticks != self._warned_counts[0] or c.skew_ticks != self._warned_counts[1]:
            self._maybe_warn(queues)
        return out

    def _limit(self) -> float:
        """Default skew limit: one tick period — the announced one when known (deterministic),
        else the measured one."""
        P, nominal = self._ref_period()
        return nominal if nominal is not None and abs(nominal - P) <= SAME_RATE * P else P

    def _account(self, tick, ts: list[int], spread: int) -> None:
        self.counters.ticks += 1
        if spread > self.worst_spread_us:
            self.worst_spread_us = spread
        mean = sum(ts) / 5
        last = self._skew_last = [t - mean for t in ts]
        self._skew_mean = [a + (s - a) / 64 for a, s in zip(self._skew_mean, last, strict=True)]
        self._skew_max = [max(a, abs(s)) for a, s in zip(self._skew_max, last, strict=True)]

    def _maybe_warn(self, queues) -> None:
        c = self.counters
        counts = (c.incomplete_ticks, c.skew_ticks, sum(c.superseded.values()))
        now = max((q[-1].frame.received_ns for q in queues if q), default=None)
        if now is None:
            return
        if self._warned_at_ns is not None and now - self._warned_at_ns < self._warn_ns:
            return
        d_inc, d_skew, d_sup = (a - b for a, b in zip(counts, self._warned_counts, strict=True))
        worst = max(FINGERS, key=lambda f: c.missing[f])
        why = []
        if d_inc:
            lost = sum(c.lost.values())
            why.append(f"{d_inc} incomplete (a finger had no sample in the tick's window; most often "
                       f"{worst}: missing {c.missing[worst]}x, {lost} frames lost in transit so far)")
        if d_skew:
            why.append(f"{d_skew} over the skew limit (timestamps spread ≥ "
                       f"{self.tolerance_us if self.tolerance_us is not None else 'one period'} µs)")
        if d_sup:
            why.append(f"{d_sup} newer samples superseded older ones of a faster finger")
        log.warning("tick assembly: dropped %d tick(s) since the last report: %s; published %d",
                    d_inc + d_skew, "; ".join(why), c.ticks)
        self._warned_at_ns = now
        self._warned_counts = counts
