"""THE run function: producers → transport → recorder → sinks, in one place.

`run(producers, transport=..., record=RecordOptions(...), sinks=..., speed=..., duration_s=...,
max_frames=...)` opens the transport (a spec of the transport registry, `streams.open_transport`:
"inproc", "zenoh", ...; or an open `Transport`), records every producer's collection and the
side channels of the side data it declares (`recording.side_channels`; a device's own topics
through its `device_topics(recorder)`) when `record` is given, asks each producer for the side
data the recording and views use (`Producer.extras_wanted`), attaches live views, drives every producer on the one run
loop (`producers.base.run_together`) and then closes everything — the recording finished first,
with SIGINT/SIGTERM ignored meanwhile — producers included. The CLI (`sim`, `hw`,
`replay --publish`), `run.simulation.record_simulation` and the tests go through it; no other
module wires producers to transports and recorders (`tests/test_architecture.py` checks).

This layer sits above `producers` and `recording` (it joins them) and below `cli`.
"""
from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Iterable, Sequence

from ..producers.base import EXTRA_HAND_JOINT_POSES, EXTRA_OBJECT_GEOMS, FrameSink, Producer, ProducerRunner, RunCounters, run_together
from ..streams import InProcessBus, Transport, open_transport

#: `RecordOptions.compression` values (the recorder's chunk compressions).
COMPRESSIONS = ("zstd", "lz4", "none")


@dataclass(frozen=True)
class TransportSpec:
    """A transport by registry name (`streams.TRANSPORTS`) plus its options (`config`, `listen`,
    `connect`: Zenoh's; the in-process bus takes none)."""

    name: str = "inproc"
    config: Any = None
    listen: tuple[str, ...] = ()
    connect: tuple[str, ...] = ()

    def open(self) -> Transport:
        return open_transport(self.name, config=self.config, listen=list(self.listen) or None,
                              connect=list(self.connect) or None)


@dataclass(frozen=True)
class RecordOptions:
    """Record the run into `path` (an MCAP file, finished and valid on Ctrl-C / SIGTERM).
    `file_metadata` is added to what the first producer declares (`Producer.file_metadata()`)."""

    path: str | os.PathLike
    overwrite: bool = False
    #: None: the profile's (zstd; the isaac profile is uncompressed).
    compression: str | None = None
    file_metadata: dict[str, str] = field(default_factory=dict)
    #: "epoch": MCAP log times on the UTC epoch (default); "monotonic": the records' own time line
    #: (`recording.clock_anchor`).
    log_time_base: str = "epoch"
    #: "default" or "isaac" (`recording.profiles`: what Isaac Teleop's recorder writes).
    profile: str = "default"
    #: `derived_sinks(recorder, producer, index)`: sinks writing topics derived from the frames into
    #: the same recording (e.g. the 3-D view, `integrations.scene_recording.ViewRecording`); a
    #: sink's `extras_wanted` (if it has one) is asked of the producer.
    derived_sinks: Callable[[Any, Producer, int], Iterable[FrameSink]] | None = None

    def __post_init__(self) -> None:
        if self.compression is not None and self.compression not in COMPRESSIONS:
            raise ValueError(f"compression must be one of {', '.join(COMPRESSIONS)}, got {self.compression!r}")
        if self.log_time_base not in ("epoch", "monotonic"):
            raise ValueError(f"log_time_base must be epoch or monotonic, got {self.log_time_base!r}")


class View:
    """A live view the run feeds (e.g. `integrations.foxglove_live.FoxgloveSink`): one sink per
    collection (`for_collection`); producers that know the hand's pose put it in their frames
    for it. A view with `finish_into(recorder)` writes its derived topics into the recording
    before the file is closed (then `discard()`)."""

    def for_collection(self, collection_id: str) -> FrameSink:  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:
        pass


def as_transport(transport: str | TransportSpec | Transport | None) -> Transport:
    """An open transport from a registry name, a `TransportSpec` or an open one (returned as is)."""
    if transport is None or isinstance(transport, str):
        return TransportSpec(transport or "inproc").open()
    if isinstance(transport, TransportSpec):
        return transport.open()
    return transport


def run(producers: Sequence[Producer], *, transport: str | TransportSpec | Transport | None = "inproc",
        record: RecordOptions | None = None, sinks: Iterable[FrameSink] = (),
        views: Callable[[Transport], Sequence[Any]] | None = None, speed: float | None = None,
        duration_s: float | None = None, max_frames: int | None = None, progress: Any = None,
        metadata_period_s: float = 1.0, handle_signals: bool = True, close_transport: bool | None = None,
        around_loop: Callable[[], contextlib.AbstractContextManager] | None = None) -> list[RunCounters]:
    """Publish every producer on `transport` through the one run loop until each finishes,
    `max_frames` frames each are published, `duration_s` [s] of the loop's clock elapsed, or
    SIGINT/SIGTERM arrives (`handle_signals`, main thread only); then close everything here —
    the recording first, signals ignored meanwhile — producers included, and the transport when
    the run opened it from a spec (one handed in open stays the caller's unless
    `close_transport`). Returns each producer's `RunCounters`.

    `record`: record the collections (file metadata from the first producer plus
    `record.file_metadata` and the list of collections) with each producer's side topics.
    `sinks` go to the first producer. `views(transport)`: the live views to feed (made once the
    transport is open; see `View`). `speed`: on-demand producers at real time × speed (None: as
    fast as possible). `progress`: anything with `update(n)`. `around_loop()`: a context
    manager held while the loop runs (e.g. log lines routed above a progress bar)."""
    if not producers:
        raise ValueError("run needs at least one producer")
    producers = list(producers)
    recorder = None
    shown: list[Any] = []
    runners: list[ProducerRunner] = []
    opened: Transport | None = None
    if close_transport is None:
        close_transport = transport is None or isinstance(transport, (str, TransportSpec))
    try:
        opened = as_transport(transport)
        if record is not None:
            from ..recording.recorder import McapRecorder

            meta = {**producers[0].file_metadata(), "collections": ",".join(p.collection_id for p in producers),
                    **record.file_metadata}
            recorder = McapRecorder(record.path, overwrite=record.overwrite, file_metadata=meta,
                                    compression=record.compression, log_time_base=record.log_time_base,
                                    profile=record.profile)
        if views is not None:
            shown = [v for v in views(opened) if v is not None]
        for k, producer in enumerate(producers):
            derived = [] if recorder is None or record is None or record.derived_sinks is None else \
                list(record.derived_sinks(recorder, producer, k))
            runners.append(runner_for(producer, opened, recorder=recorder,
                                      sinks=(list(sinks) if k == 0 else []) + derived,
                                      views=shown, speed=speed, progress=progress,
                                      metadata_period_s=metadata_period_s))
        with around_loop() if around_loop is not None else contextlib.nullcontext():
            run_together(runners, duration_s=duration_s, max_frames=max_frames, handle_signals=handle_signals)
        if recorder is not None and not isinstance(opened, InProcessBus):
            time.sleep(0.1)  # a network transport delivers asynchronously: take the tail
            recorder.poll()
    finally:
        with signals_ignored():
            try:
                try:
                    for view in shown:
                        if recorder is not None and hasattr(view, "finish_into"):
                            view.finish_into(recorder)  # the view's topics into the recording
                finally:
                    for view in shown:
                        if hasattr(view, "discard"):
                            view.discard()
                    if recorder is not None:
                        recorder.close()  # whatever happened to the views' topics
            finally:
                for runner in runners:
                    runner.close()
                for view in shown:
                    if not hasattr(view, "discard"):
                        view.close()
                for producer in producers:
                    producer.close()
                if opened is not None and close_transport:
                    opened.close()
    return [r.counters for r in runners]


def runner_for(producer: Producer, transport: Transport | None, *, recorder: Any = None,
               sinks: Iterable[FrameSink] = (), views: Sequence[Any] = (), speed: float | None = None,
               progress: Any = None, metadata_period_s: float = 1.0, **runner_kwargs: Any) -> ProducerRunner:
    """One producer wired to `transport` and, when given, `recorder` (an open `McapRecorder`):
    the recording's side channels for the side data the producer declares
    (`recording.side_channels`) and its device topics (`device_topics(recorder)`, e.g. the
    hardware's resultants and health) come first, then `sinks`, then one sink per view; the
    producer is asked for the side data they use (`extras_wanted`). The run loop that `run`
    drives (for a caller that steps it itself, e.g. a test). The caller closes it."""
    mine: list[Any] = []
    wanted = set(producer.extras_wanted)
    if recorder is not None:  # the recording's side channels first, as declared by the producer
        from ..recording.side_channels import recorded_extras, side_channel_writers

        mine += side_channel_writers(recorder, producer)
        wanted |= recorded_extras(producer)
        device_topics = getattr(producer, "device_topics", None)  # a device's own topics (hardware)
        if device_topics is not None:
            mine += device_topics(recorder)
    for sink in sinks:  # a sink may ask for side data (e.g. the recorded 3-D view: the hand's pose)
        wanted |= set(getattr(sink, "extras_wanted", ())) & producer.extras_provided
        mine.append(sink)
    for view in views:  # a view draws the hand and the objects where the producer knows them
        wanted |= {EXTRA_HAND_JOINT_POSES, EXTRA_OBJECT_GEOMS} & producer.extras_provided
        mine.append(view.for_collection(producer.collection_id))
    producer.extras_wanted = frozenset(wanted)
    return ProducerRunner(producer, transport, recorder=recorder, sinks=mine, speed=speed, progress=progress,
                          metadata_period_s=metadata_period_s, **runner_kwargs)


@contextlib.contextmanager
def signals_ignored():
    """SIGINT and SIGTERM ignored inside (main thread only): a second Ctrl-C must not cut a
    file's summary in half."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


__all__ = ["COMPRESSIONS", "RecordOptions", "TransportSpec", "View", "as_transport", "run", "runner_for", "signals_ignored"]
