"""One interface for every tactile producer, and the one loop that runs them.

A `Producer` makes force frames for one collection (`collection_id`, `metadata`); it knows
nothing about transports, files or signals. `ProducerRunner` owns everything around it: the
`TactilePublisher`, pacing, the metadata republished on a timer (also while no frame comes, so a
stalled producer still announces its layout), feeding the sinks (the recording's side channels
among them, attached by the run function), progress, frame/duration limits and a clean stop on
SIGINT/SIGTERM. This module imports nothing of `recording`.

Two kinds of producer, told apart by `period_s`:
- on demand (`period_s` set: a simulation, the emulated hand, a synthetic feeder): each
  `next_frame()` call advances the producer by one period; the runner paces the calls to real
  time × `speed`, or makes them as fast as possible (`speed=None`);
- source-driven (`period_s` None: a real device, a file replay pacing itself): the runner polls
  and sleeps `idle_sleep_s` when nothing is ready; frames the producer already holds
  (`frames_waiting()`) go out in the same pass.

Side data: `Frame.extras` carries optional per-frame payloads, declared by name
(`Producer.extras_provided`, `contract.side_data`: hand poses to record, hand joint poses for the
view, force images); the run function asks for what it uses (`Producer.extras_wanted`) and turns
the recorded ones into channels (`recording.side_channels`); every `FrameSink` receives them after
publication, with the frame's sequence and timestamps.

Time line: a record's available time (= its MCAP log time in a recording) is when the frame was
published, unless the frame brings its own (`Frame.available_time_ns`): a simulation stamps
start + simulated time, so its recordings last as long as the simulated run, however fast it was
computed. Side topics are written at the same timestamp.
"""
from __future__ import annotations

import dataclasses
import signal
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable

import numpy as np

from ..contract.metadata import TactileMetadata
from ..contract import side_data
from ..contract.records import DeviceDataTimestamp
from ..contract.side_data import HandChannels
from ..streams.base import Transport
from ..streams.publisher import TactilePublisher


@dataclasses.dataclass
class Counters:
    """The one counters shape: a dataclass (subclass it with `@dataclass`) read as attributes,
    or as a plain dict through `as_dict()` (nested dicts and counters copied as dicts)."""

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# `Frame.extras` keys (declared side data, `contract.side_data`), re-exported under their old names.
EXTRA_HAND_JOINT_POSES = side_data.EXTRA_HAND_JOINT_POSES
EXTRA_FORCE_IMAGES = side_data.EXTRA_FORCE_IMAGES
EXTRA_HAND_POSES = side_data.EXTRA_HAND_POSES
#: `Frame.extras` key: the objects the producer knows, e.g. a scenario's, as a dict: "kinds" (K,)
#: of box/sphere/cylinder/capsule/ellipsoid, "sizes" (K, 3) [m, MuJoCo geom sizes], "poses" (K, 7)
#: [m, xyzw] in the hand joint poses' base space, "names" (K,), optionally "frame" ("base", or
#: "wrist": poses in the collection's wrist frame); or an `ObjectGeoms` of the view (a replayed
#: recording's scene objects): for the 3-D view.
EXTRA_OBJECT_GEOMS = "object_geoms"


@dataclass(slots=True)
class Frame:
    """One force frame. `forces`: (N, 3) [N], each taxel's axes, force on the taxel.
    `sample_time_ns`: when it was sensed, local monotonic clock; `device_time_ns`: the
    producer's own clock (None = the sample time); `available_time_ns`: when it is available on
    the producer's own time line (None = when published; a simulation: start + simulated time,
    equal to the sample time). `extras`: optional per-frame side payloads by
    name (not part of the contract), for the producer's recording outputs and frame sinks.
    A producer may reuse one Frame (and its arrays): the runner is done with it before asking
    for the next."""

    forces: np.ndarray
    sample_time_ns: int
    device_time_ns: int | None = None
    extras: dict[str, Any] | None = None
    available_time_ns: int | None = None


class FrameSink:
    """Receives every published frame with its sequence and timestamps (a side topic recorder,
    a live view). `poll()` runs every pass of the loop, `close()` once at the end."""

    def on_frame(self, frame: Frame, sequence: int, timestamp: DeviceDataTimestamp) -> None:
        pass

    def poll(self) -> object:
        """Called every pass of the loop; what it returns is not used (a sink may report
        whether it wrote something)."""
        return None

    def close(self) -> None:
        pass


class Producer(ABC):
    """A source of force frames for one collection. Subclasses set `collection_id` and
    `metadata` (validated by the publisher before anything is sent) and implement `next_frame`."""

    collection_id: str
    metadata: TactileMetadata
    #: Frame period [s] of an on-demand producer (the runner paces it); None: source-driven.
    period_s: float | None = None
    #: True once the producer has nothing more to give (end of a scenario or file).
    finished: bool = False
    #: The producer session to publish under (None: a fresh random one; a replay keeps the recorded one).
    producer_session: int | None = None
    #: The producer's local monotonic clock [ns]. The run loop paces, times metadata and measures
    #: `duration_s` on the same one (unless given another), so a test that injects a fake clock
    #: into the producer (e.g. `HardwareProducer(clock_ns=...)`) drives the whole run with it.
    clock_ns: Callable[[], int] = staticmethod(time.monotonic_ns)
    #: The side data (`Frame.extras` keys, `contract.side_data`) this producer can fill, e.g.
    #: `EXTRA_HAND_POSES` (recorded on the hand channels) or `EXTRA_HAND_JOINT_POSES` (drawn by the view).
    extras_provided: frozenset[str] = frozenset()
    #: The side data the run wants (set by the run function before the first frame, from what its
    #: recording and views use): a producer computes costly side data only when it is wanted.
    extras_wanted: frozenset[str] = frozenset()
    #: Where `EXTRA_HAND_POSES` are recorded (base name, base space); None: not provided.
    hand_channels: HandChannels | None = None

    @abstractmethod
    def next_frame(self) -> Frame | None:
        """The next frame, or None when none is ready (the runner keeps republishing metadata)."""

    def frames_waiting(self) -> bool:
        """True when `next_frame()` would return a frame without going to the source again
        (e.g. several ticks assembled by one device poll): the runner takes it in the same pass."""
        return False

    def on_published(self, frame: Frame, sequence: int, timestamp: DeviceDataTimestamp) -> None:  # noqa: B027 - optional hook, a no-op unless overridden
        """Called after `frame` went out as data record `sequence` with `timestamp`."""

    def file_metadata(self) -> dict[str, str]:
        """String pairs for the MCAP file metadata (producer_kind, hand_side, ...)."""
        return {}

    @property
    def counters(self) -> Counters | None:
        """The producer's own counters (a `Counters` dataclass), if it keeps any."""
        return None

    def close(self) -> None:  # noqa: B027 - optional hook, a no-op unless overridden
        """Release devices and files. Idempotent."""

    def __enter__(self) -> Producer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class RunCounters(Counters):
    """What the runner did: frames published, `next_frame()` calls that returned None, metadata
    records published on the timer (plus the first), and why it stopped."""

    published: int = 0
    idle_polls: int = 0
    metadata_published: int = 0
    stop_reason: str = ""  # "finished" | "max_frames" | "duration" | "SIGINT" | "SIGTERM" | "stopped"

    @property
    def exit_signal(self) -> int | None:
        """The signal number that stopped the run (the CLI exits 128 + it), or None."""
        return {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM}.get(self.stop_reason)


class ProducerRunner:
    """Runs one producer: publish each frame, republish metadata every `metadata_period_s`
    [s] of the runner's clock (whether or not frames come), feed `sinks`, pace and stop.

    `transport`: where a `TactilePublisher` is opened; or `publisher`: an open one for the
    producer's collection (neither: nothing is published, e.g. a scenario run for its checks;
    the sinks still see every frame). `recorder`: an `McapRecorder` that records the collection
    as it appears on `transport` (its side channels come as `sinks`); the runner polls it, the
    caller closes it. `speed`: on-demand producers run at real time × speed, None = as fast as
    possible. `progress`: anything with `update(n)` (a tqdm bar). `clock_ns` / `sleep`: the
    runner's time (default: the producer's own `clock_ns`, so producer and loop share one clock;
    tests use a fake clock; the publisher stamps frames with the real one).
    """

    def __init__(self, producer: Producer, transport: Transport | None = None, *,
                 publisher: TactilePublisher | None = None, recorder: Any = None,
                 sinks: list[FrameSink] | tuple[FrameSink, ...] = (), metadata_period_s: float = 1.0,
                 speed: float | None = None, progress: Any = None, idle_sleep_s: float = 0.001,
                 clock_ns: Callable[[], int] | None = None, sleep: Callable[[float], None] = time.sleep):
        if not metadata_period_s > 0:
            raise ValueError(f"metadata_period_s must be > 0 s, got {metadata_period_s!r}")
        if speed is not None and not speed > 0:
            raise ValueError(f"speed must be > 0 (or None: as fast as possible), got {speed!r}")
        if transport is not None and publisher is not None:
            raise ValueError("give a transport (the runner opens the publisher) or a publisher, not both")
        if publisher is not None and publisher.collection_id != producer.collection_id:
            raise ValueError(f"the publisher is for collection {publisher.collection_id!r}, the producer makes "
                             f"{producer.collection_id!r}")
        if recorder is not None and transport is None:
            raise ValueError("recording needs a transport: the recorder records the collection as published on it")
        self.producer = producer
        self.speed = speed
        self.progress = progress
        self.idle_sleep_s = idle_sleep_s
        self.counters = RunCounters()
        clock_ns = clock_ns or producer.clock_ns
        self._clock_ns, self._sleep = clock_ns, sleep
        self._period_ns = int(metadata_period_s * 1e9)
        self._recorder = recorder
        self._stop_reason: str | None = None
        self.sinks: list[FrameSink] = []
        if recorder is not None:
            # subscribe before the publisher exists so the first metadata record is in the file
            recorder.add_collection(transport, producer.collection_id)
        self.sinks += list(sinks)
        self._owns_publisher = transport is not None
        if transport is not None:
            publisher = TactilePublisher(producer.collection_id, producer.metadata, transport,
                                         metadata_period_s=metadata_period_s,
                                         producer_session=producer.producer_session)
        self.publisher = publisher
        if publisher is not None:
            self.counters.metadata_published = 1
        self._last_metadata_ns = clock_ns()

    # -- one pass ------------------------------------------------------------------------------
    def step(self, max_frames: int | None = None) -> int:
        """One pass without pacing: republish metadata if due, publish the producer's next frame
        and any it says are waiting (`frames_waiting()`, up to `max_frames`), let the recorder
        and sinks catch up. Returns frames published."""
        producer = self.producer
        self._metadata_if_due()
        published = 0
        frame = None if producer.finished else producer.next_frame()
        while frame is not None:
            self.publish(frame)
            published += 1
            if (max_frames is not None and published >= max_frames) or not producer.frames_waiting():
                break
            frame = producer.next_frame()
        if not published:
            self.counters.idle_polls += 1
        self._poll_outputs()
        if published and self.progress is not None:
            self.progress.update(published)
        return published

    def publish(self, frame: Frame) -> None:
        """Publish one frame and hand it to the producer's hook and the sinks."""
        if self.publisher is not None:
            sequence = self.publisher.publish(frame.forces, sample_time_ns=frame.sample_time_ns,
                                              device_time_ns=frame.device_time_ns,
                                              available_time_ns=frame.available_time_ns)
            timestamp = self.publisher.last_timestamp
            assert timestamp is not None, "set by the publish() just above"
        else:
            sequence = self.counters.published
            timestamp = DeviceDataTimestamp(frame.sample_time_ns if frame.available_time_ns is None
                                            else frame.available_time_ns, frame.sample_time_ns,
                                            frame.sample_time_ns if frame.device_time_ns is None
                                            else frame.device_time_ns)
        self.counters.published += 1
        self.producer.on_published(frame, sequence, timestamp)
        for sink in self.sinks:
            sink.on_frame(frame, sequence, timestamp)

    def _metadata_if_due(self) -> None:
        now = self._clock_ns()
        if self.publisher is not None and now - self._last_metadata_ns >= self._period_ns:
            self.publisher.publish_metadata()
            self.counters.metadata_published += 1
            self._last_metadata_ns = now

    def _poll_outputs(self) -> None:
        if self._recorder is not None:
            self._recorder.poll()
        for sink in self.sinks:
            sink.poll()

    # -- the loop ------------------------------------------------------------------------------
    def run(self, *, max_frames: int | None = None, duration_s: float | None = None,
            handle_signals: bool = True) -> RunCounters:
        """Run until the producer is finished, `max_frames` are published, `duration_s` [s] of
        the runner's clock elapsed, `stop()` is called, or SIGINT/SIGTERM arrives (see
        `run_together`). Returns the counters, `stop_reason` set."""
        run_together([self], max_frames=max_frames, duration_s=duration_s, handle_signals=handle_signals)
        return self.counters

    def _start(self, max_frames: int | None) -> None:
        self._t0 = self._clock_ns()
        self._calls = 0
        self._max_frames = max_frames
        period_s, speed = self.producer.period_s, self.speed
        self._tick_ns = int(period_s * 1e9 / speed) if period_s is not None and speed is not None else None

    def _pass(self) -> int | None:
        """Do what is due now. Returns when [runner clock, ns] it wants the next pass (None:
        right away); sets `_stop_reason` when this producer is done."""
        producer, c = self.producer, self.counters
        if producer.finished:
            self._stop_reason = "finished"
        elif self._max_frames is not None and c.published >= self._max_frames:
            self._stop_reason = "max_frames"
        if self._stop_reason is not None:
            return None
        now = self._clock_ns()
        if self._tick_ns is not None:
            due = self._t0 + self._calls * self._tick_ns
            if now < due:
                self._metadata_if_due()
                self._poll_outputs()
                return min(due, self._last_metadata_ns + self._period_ns)
        self._calls += 1
        left = None if self._max_frames is None else self._max_frames - c.published
        if self.step(left) or producer.period_s is not None:
            return None
        return min(now + int(self.idle_sleep_s * 1e9), self._last_metadata_ns + self._period_ns)

    def stop(self) -> None:
        """Ask the loop to stop after the current pass (thread- and signal-safe)."""
        if self._stop_reason is None:
            self._stop_reason = "stopped"

    def close(self) -> None:
        """Close the sinks and the publisher the runner opened (withdraws liveliness). The
        recorder, the producer and a publisher given to the runner belong to the caller. Idempotent."""
        sinks, self.sinks = self.sinks, []
        for sink in sinks:
            sink.close()
        if self.publisher is not None and self._owns_publisher:
            self.publisher.close()

    def __enter__(self) -> ProducerRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_together(runners: list[ProducerRunner], *, max_frames: int | None = None, duration_s: float | None = None,
                 handle_signals: bool = True) -> None:
    """THE run loop: pass over every runner until each is done (producer finished, `max_frames`
    published, `stop()`), `duration_s` [s] of the first runner's clock elapsed, or SIGINT/SIGTERM
    arrives (caught in the main thread only, and only while running: the loop stops after the
    current pass; a second signal raises KeyboardInterrupt). Sleeps until the earliest moment a
    runner wants (its next paced call, idle poll or metadata republication), at most 50 ms.
    Afterwards each recorder and sink takes the tail; publishers, recorders and producers stay
    open for the caller. Every runner's `counters.stop_reason` is set."""
    if not runners:
        raise ValueError("run_together needs at least one runner")
    clock, sleep = runners[0]._clock_ns, runners[0]._sleep
    for r in runners:
        r._start(max_frames)
    end = None if duration_s is None else clock() + int(duration_s * 1e9)
    stop: list[str] = []
    previous = _install_signals(stop) if handle_signals else {}
    try:
        while not stop:
            active = [r for r in runners if r._stop_reason is None]
            wake = [r._pass() for r in active]
            if all(r._stop_reason is not None for r in runners):
                break
            now = clock()
            if end is not None and now >= end:
                stop.append("duration")
                break
            due = [w for w in wake if w is not None]
            if wake and len(due) == len(wake):
                until = min(min(due), now + 50_000_000, end if end is not None else now + 50_000_000)
                if until > now:
                    sleep((until - now) / 1e9)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    for r in runners:
        if r._stop_reason is None:
            r._stop_reason = stop[0]
        r.counters.stop_reason = r._stop_reason
        r._poll_outputs()  # an in-process transport has delivered everything by now


def _install_signals(stop: list[str]) -> dict[int, Any]:
    if threading.current_thread() is not threading.main_thread():
        return {}

    def on_signal(signum, _frame) -> None:
        if stop:
            raise KeyboardInterrupt  # a second signal: the user insists
        stop.append(signal.Signals(signum).name)

    return {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
