"""Five finger streams → one tick, matched by device timestamp.

Each finger sends its own stream at `rate_hz` (100 Hz native). A tick is five frames, one per
finger, whose device timestamps span at most `tolerance_us` (default: half a period, 5 ms at
100 Hz). Frames arrive in order per finger, so when the oldest pending head cannot be matched by
the others' heads it never will be: it is dropped and counted. Counters:

- `dropped`: frames discarded unpublished — unmatched, queue overflow, malformed (wrong length),
  digest mismatch, or pending when a finger went stale;
- `lost`: frames the device numbered but that never arrived (gaps in the u32 `seq`);
- `late`: frames older than what their finger already delivered (out of order), or from before a
  clock jump;
- `duplicate`: a repeat of the finger's previous frame (same seq and timestamp);
- `clock_jumps`: device clock steps larger than `clock_jump_us` against the local clock.

Device time is mapped to the local monotonic clock with a one-way offset filter (minimum delay,
slowly following upward drift); a jump resets matching and the filter.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Sequence

from ...hands.wuji_hand2 import FINGERS
from .device import FingertipFrame

_U32 = 1 << 32


def _per_finger() -> dict[str, int]:
    return {f: 0 for f in FINGERS}


@dataclass
class AssemblyCounters:
    ticks: int = 0
    dropped: dict[str, int] = field(default_factory=_per_finger)
    lost: dict[str, int] = field(default_factory=_per_finger)
    late: dict[str, int] = field(default_factory=_per_finger)
    duplicate: dict[str, int] = field(default_factory=_per_finger)
    malformed: dict[str, int] = field(default_factory=_per_finger)
    digest_mismatch: dict[str, int] = field(default_factory=_per_finger)
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


class TickAssembler:
    """Collects frames and yields complete ticks (five frames, FINGERS order). A frame is any
    object with `finger`, `seq`, `timestamp_us` [device µs] and `received_ns` [local monotonic]
    (a `FingertipFrame`, or the producer's decoded frame)."""

    def __init__(self, *, tolerance_us: int = 5000, clock_jump_us: int = 250_000, max_pending: int = 16):
        if tolerance_us <= 0:
            raise ValueError(f"tolerance_us must be > 0, got {tolerance_us}")
        self.tolerance_us = int(tolerance_us)
        self.max_pending = max_pending
        self.counters = AssemblyCounters()
        self.clock = DeviceClock(clock_jump_us)
        self._pending: dict[str, deque[FingertipFrame]] = {f: deque() for f in FINGERS}
        self._last: dict[str, tuple[int, int] | None] = {f: None for f in FINGERS}  # (seq, ts)

    def reset(self, fingers: Sequence[str] = FINGERS) -> None:
        """Forget pending frames of `fingers` (counted as dropped) and their ordering state."""
        for f in fingers:
            self.counters.dropped[f] += len(self._pending[f])
            self._pending[f].clear()
            self._last[f] = None

    def pending(self, finger: str) -> int:
        return len(self._pending[finger])

    def push(self, frame: FingertipFrame, *, queue: bool = True) -> None:
        """Account for one frame and queue it. `queue=False`: a frame the caller discards
        (malformed, unconfirmed digest, finger unavailable) — counted as dropped, and its seq is
        noted so it is not also counted as lost."""
        f = frame.finger
        c = self.counters
        kind = self.clock.classify(frame.timestamp_us, frame.received_ns)
        if kind == "stale_epoch":
            c.late[f] += 1
            return
        if kind == "jump":
            c.clock_jumps += 1
            self.reset()
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
        if not queue:
            c.dropped[f] += 1
            return
        q = self._pending[f]
        if len(q) >= self.max_pending:
            q.popleft()
            c.dropped[f] += 1
        q.append(frame)

    def pop_ready(self) -> list[list[FingertipFrame]]:
        """Complete ticks, oldest first; unmatchable heads are dropped on the way."""
        out: list[list[FingertipFrame]] = []
        queues = [self._pending[f] for f in FINGERS]
        while all(queues):
            heads = [q[0].timestamp_us for q in queues]
            lo, hi = min(heads), max(heads)
            if hi - lo <= self.tolerance_us:
                out.append([q.popleft() for q in queues])
                self.counters.ticks += 1
                continue
            oldest = heads.index(lo)
            queues[oldest].popleft()
            self.counters.dropped[FINGERS[oldest]] += 1
        return out
