"""True time for recordings: log-time bases, clock anchors and the conversion of log times to epoch times.

The records' own times (`DeviceDataTimestamp`: available, sample, device) are nanoseconds of the
producer machine's monotonic clock (`time.monotonic_ns`, CLOCK_MONOTONIC: system-wide, never
jumps, but unrelated to the calendar). A recording's MCAP log / publish times are those times
plus one constant offset, declared in its file metadata (`log_time_base`, `log_time_offset_ns`):
"epoch" (the default since log times moved to the UTC epoch: offset = realtime − monotonic when
the recording started, so two recordings of one machine line up) or "monotonic" (offset 0: every
file written before, which declares nothing). `log_time_offset(file_metadata)` reads it back.
To line a recording up with ROS 2 bags, cameras or Isaac Teleop's own recordings, the recorder
writes **clock anchors**: MCAP metadata records named `wuji_tactile_device.clock_anchor` holding
the monotonic and realtime (epoch, CLOCK_REALTIME) clocks sampled together, in ns — one when the
recording starts and one at least every `ANCHOR_PERIOD_S` after that, so NTP slewing of the
realtime clock over long recordings is followed.

`log_time_to_epoch_ns(t, anchors)` maps log times to epoch times: the offset (realtime −
monotonic) is interpolated linearly between the anchors around `t` and held constant before the
first and after the last. Each anchor's pair is sampled with the realtime read bracketed by two
monotonic reads (the tightest of a few tries); `uncertainty_ns` is half that bracket.

For a simulation logged on the simulated clock (log time = start + simulated time), the epoch
time is when that simulated instant would have happened had the run gone at real speed from its
start — the anchor fixes the start, the simulated clock the rest.
"""
from __future__ import annotations

import os
import time
from typing import NamedTuple
from collections.abc import Iterable, Sequence

import numpy as np

from ..errors import RecordingError

CLOCK_ANCHOR_METADATA_NAME = "wuji_tactile_device.clock_anchor"
#: File-metadata keys of the log-time base and its offset [ns] (log time − record available time).
LOG_TIME_BASE_KEY = "log_time_base"
LOG_TIME_OFFSET_KEY = "log_time_offset_ns"
#: `McapRecorder(log_time_base=)` values.
LOG_TIME_BASES = ("epoch", "monotonic")
LOG_CLOCK_EPOCH = ("log and publish times are UTC-epoch ns: the records' monotonic available and sample "
                   "times + log_time_offset_ns")
LOG_CLOCK_MONOTONIC = "log and publish times are ns of the producer's monotonic clock (not the epoch)"


def log_time_offset(file_metadata: dict[str, str], *, where: str = "") -> int:
    """Log time − record available time [ns] of a file from its file metadata (0 for files that
    declare no base: they were written on the monotonic base). `RecordingError` if malformed."""
    base = file_metadata.get(LOG_TIME_BASE_KEY, "monotonic")
    if base not in LOG_TIME_BASES:
        raise RecordingError(f"{where}file metadata {LOG_TIME_BASE_KEY}={base!r} is not one of "
                             f"{', '.join(LOG_TIME_BASES)}")
    try:
        offset = int(file_metadata.get(LOG_TIME_OFFSET_KEY, "0"))
    except ValueError:
        raise RecordingError(f"{where}file metadata {LOG_TIME_OFFSET_KEY}="
                             f"{file_metadata.get(LOG_TIME_OFFSET_KEY)!r} is not an integer") from None
    if base == "monotonic" and offset != 0:
        raise RecordingError(f"{where}file metadata declares the monotonic log-time base with offset {offset} ns")
    return offset
#: The recorder writes an anchor at least this often [s] (and at start).
ANCHOR_PERIOD_S = 60.0
_TRIES = 5


class ClockAnchor(NamedTuple):
    """The two clocks read together [ns]."""

    monotonic_ns: int  # CLOCK_MONOTONIC (the clock of log times)
    realtime_ns: int  # CLOCK_REALTIME, ns since 1970-01-01 UTC
    uncertainty_ns: int  # half the monotonic bracket around the realtime read

    @property
    def offset_ns(self) -> int:
        """realtime − monotonic [ns]."""
        return self.realtime_ns - self.monotonic_ns


def sample_clock_anchor() -> ClockAnchor:
    """Read both clocks together: the realtime read bracketed by monotonic reads, tightest of a few."""
    best: ClockAnchor | None = None
    for _ in range(_TRIES):
        a = time.monotonic_ns()
        r = time.time_ns()
        b = time.monotonic_ns()
        anchor = ClockAnchor((a + b) // 2, r, (b - a + 1) // 2)
        if best is None or anchor.uncertainty_ns < best.uncertainty_ns:
            best = anchor
    assert best is not None
    return best


def anchor_metadata(anchor: ClockAnchor) -> dict[str, str]:
    """The MCAP metadata record body of an anchor (MCAP metadata values are strings)."""
    return {"monotonic_ns": str(anchor.monotonic_ns), "realtime_ns": str(anchor.realtime_ns),
            "uncertainty_ns": str(anchor.uncertainty_ns), "clock_monotonic": "CLOCK_MONOTONIC",
            "clock_realtime": "CLOCK_REALTIME (ns since the Unix epoch, UTC)"}


def anchor_from_metadata(values: dict[str, str], *, where: str = "") -> ClockAnchor:
    """Parse an anchor record; `RecordingError` naming the field when it is missing or not an int."""
    try:
        return ClockAnchor(*(int(values[k]) for k in ("monotonic_ns", "realtime_ns", "uncertainty_ns")))
    except KeyError as exc:
        raise RecordingError(f"{where}clock anchor lacks field {exc.args[0]!r}") from None
    except ValueError:
        raise RecordingError(f"{where}clock anchor has a non-integer value: {values!r}") from None


def read_clock_anchors(path: str | os.PathLike) -> list[ClockAnchor]:
    """Every clock anchor of a recording, in monotonic order (empty for files written before
    anchors existed). Works on cut-off files: anchors written before the cut are read."""
    from .scan import FileView, scan

    view = FileView(path)
    try:
        records = scan(view).metadata
    finally:
        view.close()
    anchors = [anchor_from_metadata(m.metadata, where=f"{path}: ") for m in records
               if m.name == CLOCK_ANCHOR_METADATA_NAME]
    return sorted(anchors, key=lambda a: a.monotonic_ns)


def log_time_to_epoch_ns(log_time_ns: int | Sequence[int] | np.ndarray, anchors: Iterable[ClockAnchor]):
    """Epoch time [ns] of monotonic time(s) [ns]: a record's own timestamps, or the log times of a
    file written with `log_time_base="monotonic"` (an epoch-base file's log times are epoch
    times already). Raises `RecordingError` when
    there is no anchor. Returns an int for an int, an int64 array for an array."""
    anchors = sorted(anchors, key=lambda a: a.monotonic_ns)
    if not anchors:
        raise RecordingError("no clock anchor: this recording cannot be placed on the epoch clock "
                             "(it predates clock anchors; only `recording_started_utc` to the second is known)")
    mono = np.array([a.monotonic_ns for a in anchors], dtype=np.int64)
    offset = np.array([a.offset_ns for a in anchors], dtype=np.int64)
    t = np.asarray(log_time_ns, dtype=np.int64)
    # interpolate the (small) offset in float64 relative to the first anchor: exact to < 1 ns
    off = offset[0] + np.rint(np.interp(t.astype(np.float64), mono.astype(np.float64),
                                        (offset - offset[0]).astype(np.float64))).astype(np.int64)
    out = t + off
    return int(out) if out.ndim == 0 else out


def wall_clock_span(path: str | os.PathLike) -> tuple[int, int] | None:
    """(start, end) epoch times [ns] of a recording's first and last log time, or None when the
    file has no anchor or no message (format with `datetime.fromtimestamp(ns/1e9, UTC)`)."""
    from .scan import FileView, scan

    view = FileView(path)
    try:
        sc = scan(view)
    finally:
        view.close()
    return wall_clock_span_of(sc, where=f"{path}: ")


def wall_clock_span_of(sc, *, where: str = "") -> tuple[int, int] | None:
    """`wall_clock_span` of a file already scanned (`recording.scan.Scan`): an epoch-based file's
    log times are epoch times already; a monotonic one is mapped through its anchors."""
    from .naming import FILE_METADATA_NAME

    anchors = [anchor_from_metadata(m.metadata, where=where) for m in sc.metadata
               if m.name == CLOCK_ANCHOR_METADATA_NAME]
    declared: dict[str, str] = {}
    for m in sc.metadata:
        if m.name == FILE_METADATA_NAME:
            declared.update(m.metadata)
    if not sc.chunks or (not anchors and not log_time_offset(declared, where=where)):
        return None
    start = min(c.start_ns for c in sc.chunks)
    end = max(c.end_ns for c in sc.chunks)
    if log_time_offset(declared, where=where):
        return start, end
    return log_time_to_epoch_ns(start, anchors), log_time_to_epoch_ns(end, anchors)
