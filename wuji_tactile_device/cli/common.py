"""What the CLI commands share: transport options, recording options, and running a `Producer`
on the one run loop with a safe shutdown (`run_producer`).

Exit codes: a user mistake 1 (in `cli.main`); stopped by a signal 128 + its number — Ctrl-C
(SIGINT) 130, SIGTERM 143 — after the recording is finished and closed.
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import sys
import time
from typing import Any
from collections.abc import Iterator

from ..errors import TransportError
from .args import existing_file, output_file


# -- transport -----------------------------------------------------------------------------------
def add_zenoh_arguments(parser: argparse.ArgumentParser) -> None:
    """Options selecting the Zenoh session (every command that talks to Zenoh)."""
    g = parser.add_argument_group("Zenoh (default: a peer session limited to this machine)")
    g.add_argument("--zenoh", metavar="ENDPOINT", action="append", default=[],
                   help="connect to this Zenoh endpoint, e.g. tcp/127.0.0.1:7447 (repeatable)")
    g.add_argument("--zenoh-listen", metavar="ENDPOINT", action="append", default=[],
                   help="listen on this Zenoh endpoint (repeatable)")
    g.add_argument("--zenoh-config", metavar="FILE", type=existing_file, help="a Zenoh JSON5 configuration file")


def add_publish_arguments(parser: argparse.ArgumentParser) -> None:
    """`--publish inproc|zenoh` plus the Zenoh options (the producer commands)."""
    parser.add_argument("--publish", choices=("inproc", "zenoh"), default="inproc",
                        help="inproc: this process only (default; use with --record); zenoh: publish on Zenoh "
                             "(loopback unless configured; any --zenoh* option implies it)")
    add_zenoh_arguments(parser)


def open_zenoh(args: argparse.Namespace):
    try:
        from ..streams.zenoh_transport import ZenohTransport
    except ImportError as exc:
        raise TransportError(f"the Zenoh transport is unavailable: {exc}") from exc
    return ZenohTransport(args.zenoh_config, listen=args.zenoh_listen or None, connect=args.zenoh or None)


def wants_zenoh(args: argparse.Namespace) -> bool:
    return getattr(args, "publish", None) in ("zenoh", True) or bool(args.zenoh or args.zenoh_listen
                                                                     or args.zenoh_config)


def open_output(args: argparse.Namespace):
    """The transport a producer command publishes on: Zenoh when asked for, else in-process."""
    if wants_zenoh(args):
        return open_zenoh(args)
    from ..streams.inproc import InProcessBus

    return InProcessBus()


# -- recording -----------------------------------------------------------------------------------
def add_recording_arguments(parser: argparse.ArgumentParser, help_extra: str = "") -> None:
    parser.add_argument("--record", metavar="FILE.mcap", type=output_file,
                        help="record the collection into this MCAP file (finished and valid on Ctrl-C / SIGTERM)"
                             + help_extra)
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --record file")
    parser.add_argument("--compression", choices=("zstd", "lz4", "none"), default=None,
                        help="chunk compression of --record (default: zstd; the isaac profile is uncompressed)")
    parser.add_argument("--profile", choices=("default", "isaac"), default="default",
                        help="layout of --record: default (this package's) or isaac (what Isaac Teleop's recorder "
                             "writes: uncompressed, header profile teleop, its exact hand schema; its "
                             "ReplaySession reads it as its own)")


def add_view_recording_argument(parser: argparse.ArgumentParser) -> None:
    """`--no-record-view` (dest `record_view`, default on): the 3-D view's topics in `--record`."""
    parser.add_argument("--no-record-view", dest="record_view", action="store_false",
                        help="leave the 3-D view's topics (<collection>/view/scene, /tf, /resultants, /images) out "
                             "of --record (default: recorded, so the file opens with the hand in Lichtblick/Foxglove)")


# -- live view -----------------------------------------------------------------------------------
def open_foxglove_sink(args: argparse.Namespace, transport, collections: list[str], *, hands=None, say=None):
    """The run loop's Foxglove view (`integrations.foxglove_live.FoxgloveSink`) when `--foxglove`
    was given (its address told through `say`, default a line on stderr), else None. `hands`: a
    recording's hand channels."""
    if not getattr(args, "foxglove", False):
        return None
    from ..integrations.foxglove_live import FoxgloveSink
    from ..integrations.foxglove_view import DEFAULT_FORCE_RANGE_N

    sink = FoxgloveSink(transport, collections, hands=hands, host=args.foxglove_host, port=args.foxglove_port,
                        force_range_n=args.foxglove_range or DEFAULT_FORCE_RANGE_N)
    text = (f"foxglove: serving {', '.join(collections)} on ws://{args.foxglove_host}:{sink.port} "
            "(Foxglove: Open connection → Foxglove WebSocket; layout examples/foxglove/tactile_view.json)")
    if say is None:
        print(text, file=sys.stderr, flush=True)
    else:
        say(text)
    return sink


# -- shutdown ------------------------------------------------------------------------------------
@contextlib.contextmanager
def signals_ignored() -> Iterator[None]:
    """SIGINT and SIGTERM ignored inside: a second Ctrl-C must not cut a file's summary in half."""
    previous = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def exit_code(counters, ok: bool = True) -> int:
    """128 + the signal that stopped a run (SIGINT 130, SIGTERM 143), else 0 / 1 by `ok`."""
    signum = counters.exit_signal
    return 128 + int(signum) if signum is not None else (0 if ok else 1)


@contextlib.contextmanager
def log_to(bar, logger_name: str, prefix: str) -> Iterator[None]:
    """For the duration of a run: the package logger `logger_name`'s INFO+ records as lines above
    the progress bar `bar`; its handlers, level and propagation are restored afterwards."""
    logger = logging.getLogger(logger_name)
    saved = logger.handlers[:], logger.level, logger.propagate

    class ToBar(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            bar.write(f"{prefix}: {record.getMessage()}", file=sys.stderr)

    logger.handlers[:] = [ToBar(logging.INFO)]
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield
    finally:
        logger.handlers[:], level, logger.propagate = saved[0], saved[1], saved[2]
        logger.setLevel(level)


# -- the shared producer path --------------------------------------------------------------------
def run_producer(producer, args: argparse.Namespace, **kwargs) -> Any:
    """`run_producers` for one producer; returns its `RunCounters`."""
    return run_producers([producer], args, **kwargs)[0]


def run_producers(producers: list, args: argparse.Namespace, *, transport=None, speed: float | None = None,
                  total: int | None = None, desc: str, duration_s: float | None = None,
                  max_frames: int | None = None, file_metadata: dict[str, str] | None = None,
                  sinks=(), announce: str | None = None, log_name: str | None = None,
                  quiet: bool = False, metadata_period_s: float = 1.0, foxglove_hands=None) -> list:
    """THE code path of the producer commands (`sim`, `hw`, `replay --publish`): publish every
    producer on `transport` (default: `open_output(args)`) through the one run loop, recording to
    `args.record` if given (file metadata from the first producer, plus `file_metadata`), with a
    progress bar on stderr (and the package logger `log_name` printed above it for the run),
    until each finishes, a limit is reached or SIGINT/SIGTERM arrives. Then everything is closed
    here — the recording finished first, signals ignored meanwhile — producers included.
    `sinks` go to the first producer's runner. With `--foxglove` (`args.foxglove`) a live view
    of every producer's collection is a sink of the loop; producers that know the hand's pose
    put it in their frames (`enable_hand_poses`), else `foxglove_hands` (a recording's hand
    channels) place the taxels. With `args.record_view` (sim/hw: on unless `--no-record-view`)
    the 3-D view's topics go into the recording too (`integrations.scene_recording.ViewRecording`). Returns each producer's `RunCounters`."""
    from tqdm import tqdm

    from ..producers.base import ProducerRunner, run_together

    recorder = None
    view = None
    runners: list = []
    bar = tqdm(total=total, desc=desc, unit=" frames", file=sys.stderr, mininterval=0.5,
               disable=quiet or not getattr(args, "progress", True))  # no bar in logs unless --progress
    try:
        if transport is None:
            transport = open_output(args)
        if getattr(args, "record", None):
            from ..recording import McapRecorder

            meta = {**producers[0].file_metadata(), "collections": ",".join(p.collection_id for p in producers),
                    **(file_metadata or {})}
            recorder = McapRecorder(args.record, overwrite=args.overwrite, file_metadata=meta,
                                    compression=getattr(args, "compression", None),
                                    profile=getattr(args, "profile", "default"))
        view = open_foxglove_sink(args, transport, [p.collection_id for p in producers], hands=foxglove_hands,
                                  say=lambda text: bar.write(text, file=sys.stderr))
        for k, producer in enumerate(producers):
            mine = list(sinks) if k == 0 else []
            if view is not None:
                producer.enable_hand_poses()
                mine.append(view.for_collection(producer.collection_id))
            if recorder is not None and getattr(args, "record_view", False):
                from ..integrations.scene_recording import ViewRecording

                producer.enable_hand_poses()
                mine.append(ViewRecording(recorder, producer, index=k, hands=foxglove_hands))
            runners.append(ProducerRunner(producer, transport, recorder=recorder, sinks=mine,
                                          speed=speed, progress=bar, metadata_period_s=metadata_period_s))
        if announce:
            bar.write(announce, file=sys.stderr)
        with log_to(bar, log_name, desc) if log_name else contextlib.nullcontext():
            run_together(runners, duration_s=duration_s, max_frames=max_frames)
        if recorder is not None and not _in_process(transport):
            time.sleep(0.1)  # a network transport delivers asynchronously: take the tail
            recorder.poll()
    finally:
        bar.close()
        with signals_ignored():
            try:
                if recorder is not None:
                    recorder.close()
            finally:
                for runner in runners:
                    runner.close()
                if view is not None:
                    view.close()
                for producer in producers:
                    producer.close()
                if transport is not None:
                    transport.close()
    return [r.counters for r in runners]


def _in_process(transport) -> bool:
    from ..streams.inproc import InProcessBus

    return isinstance(transport, InProcessBus)
