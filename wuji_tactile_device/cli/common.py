"""What the CLI commands share: transport options, recording options, and running a `Producer`
on the one run loop with a safe shutdown (`run_producer`).

Exit codes: a user mistake 1 (in `cli.main`); stopped by a signal 128 + its number — Ctrl-C
(SIGINT) 130, SIGTERM 143 — after the recording is finished and closed.
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Iterator
from typing import Any

from ..errors import TransportError
from .args import existing_file, output_file, positive_newtons, tcp_port


# -- transport -----------------------------------------------------------------------------------
def add_zenoh_arguments(parser: argparse.ArgumentParser, *, default_transport: str = "zenoh") -> None:
    """`--transport NAME` (every transport of the registry, `streams.TRANSPORTS`) plus the options
    selecting the Zenoh session (every command that reads or writes streams). Any --zenoh* option
    implies `--transport zenoh`."""
    from ..streams import TRANSPORTS

    parser.add_argument("--transport", choices=TRANSPORTS, default=None,
                        help=f"the transport to read or write streams on (default {default_transport}; "
                             "inproc: this process only)")
    parser.set_defaults(default_transport=default_transport)
    g = parser.add_argument_group("Zenoh (default: a peer session limited to this machine)")
    g.add_argument("--zenoh", metavar="ENDPOINT", action="append", default=[],
                   help="connect to this Zenoh endpoint, e.g. tcp/127.0.0.1:7447 (repeatable)")
    g.add_argument("--zenoh-listen", metavar="ENDPOINT", action="append", default=[],
                   help="listen on this Zenoh endpoint (repeatable)")
    g.add_argument("--zenoh-config", metavar="FILE", type=existing_file, help="a Zenoh JSON5 configuration file")


def add_publish_arguments(parser: argparse.ArgumentParser) -> None:
    """`--transport` (default inproc) with `--publish inproc|zenoh` kept as its alias, plus the
    Zenoh options (the producer commands)."""
    parser.add_argument("--publish", choices=("inproc", "zenoh"), default=None,
                        help="alias of --transport: inproc: this process only (default; use with --record); "
                             "zenoh: publish on Zenoh (loopback unless configured; any --zenoh* option implies it)")
    add_zenoh_arguments(parser, default_transport="inproc")


def _zenoh_options(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "zenoh", None) or getattr(args, "zenoh_listen", None)
                or getattr(args, "zenoh_config", None))


def transport_name(args: argparse.Namespace) -> str:
    """The transport the command uses: `--transport`, else its alias `--publish inproc|zenoh` of the
    producer commands (`replay --publish` is a flag, not a transport), else Zenoh when a --zenoh* option is given, else the
    command's default. Contradictory choices are refused (TransportError, one line)."""
    chosen = getattr(args, "transport", None)
    alias = getattr(args, "publish", None)
    alias = alias if isinstance(alias, str) else None  # `replay --publish` is a flag: publish, on --transport
    if chosen and alias and chosen != alias:
        raise TransportError(f"--transport {chosen} contradicts --publish {alias}; give one of them")
    name = chosen or alias or ("zenoh" if _zenoh_options(args) else str(getattr(args, "default_transport", "zenoh")))
    if name != "zenoh" and _zenoh_options(args):
        raise TransportError(f"--zenoh/--zenoh-listen/--zenoh-config apply to --transport zenoh, not {name}")
    return name


def transport_spec(args: argparse.Namespace):
    """The `run.TransportSpec` the options select."""
    from ..run import TransportSpec

    name = transport_name(args)
    if name != "zenoh":
        return TransportSpec(name)
    return TransportSpec("zenoh", config=getattr(args, "zenoh_config", None),
                         listen=tuple(getattr(args, "zenoh_listen", None) or ()),
                         connect=tuple(getattr(args, "zenoh", None) or ()))


def open_transport_from(args: argparse.Namespace):
    """Open the transport the options select (from the transport registry)."""
    try:
        return transport_spec(args).open()
    except ImportError as exc:
        raise TransportError(f"the {transport_name(args)} transport is unavailable: {exc}") from exc


def open_zenoh(args: argparse.Namespace):
    """The transport a command reads or writes streams on (kept name: every command called it
    when Zenoh was the only choice; now any transport of the registry, `--transport`)."""
    return open_transport_from(args)


def wants_zenoh(args: argparse.Namespace) -> bool:
    """True when the options select a transport other processes can reach (not inproc)."""
    return transport_name(args) != "inproc"


def open_output(args: argparse.Namespace):
    """The transport a producer command publishes on (`--transport`, default in-process)."""
    return open_transport_from(args)


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
    add_log_time_argument(parser)


def add_view_recording_argument(parser: argparse.ArgumentParser) -> None:
    """`--no-record-view` (dest `record_view`, default on): the 3-D view's topics in `--record`."""
    parser.add_argument("--no-record-view", dest="record_view", action="store_false",
                        help="leave the 3-D view's topics (<collection>/view/scene, /tf, /resultants, /images) out "
                             "of --record (default: recorded, so the file opens with the hand in Lichtblick/Foxglove)")


def add_log_time_argument(parser: argparse.ArgumentParser) -> None:
    """`--log-time-base epoch|monotonic` (every command that records)."""
    parser.add_argument("--log-time-base", choices=("epoch", "monotonic"), default="epoch",
                        help="MCAP log times of the recording: epoch (UTC ns, default: lines up with other "
                             "recordings and shows the real date in viewers) or monotonic (this machine's monotonic "
                             "clock, as files were written before); the records' own timestamps are the same "
                             "either way")


# -- live view -----------------------------------------------------------------------------------
def add_foxglove_arguments(parser: argparse.ArgumentParser) -> None:
    """`--foxglove` and its options, for commands that produce or replay in this process."""
    g = parser.add_argument_group("Foxglove live view (extra 'view')")
    g.add_argument("--foxglove", action="store_true",
                   help="also serve a live 3-D view to Foxglove (see `wuji-tactile view --help`)")
    g.add_argument("--foxglove-host", default="127.0.0.1", metavar="HOST",
                   help="address of the view (default 127.0.0.1: this machine only)")
    g.add_argument("--foxglove-port", type=tcp_port, default=8765, metavar="PORT", help="TCP port (default 8765)")
    g.add_argument("--foxglove-range", type=positive_newtons, default=None, metavar="N",
                   help="fixed |f| range of the taxel colours and sizes [N] (default 0.25)")


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
    layout = "a layout: wuji-tactile layout -o tactile_view.json"
    if getattr(args, "images", None):  # `sim --images` also serves the force images
        layout = layout.replace("layout -o", "layout --images -o")
    text = (f"foxglove: serving {', '.join(collections)} on ws://{args.foxglove_host}:{sink.port} "
            f"(Lichtblick / Foxglove: Open connection → Foxglove WebSocket; {layout})")
    if say is None:
        print(text, file=sys.stderr, flush=True)
    else:
        say(text)
    return sink


# -- shutdown ------------------------------------------------------------------------------------
# (`run.signals_ignored`: SIGINT/SIGTERM ignored while a file's summary is written.)
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
    """The producer commands' (`sim`, `hw`, `replay --publish`) options turned into one call of
    the library's run function (`run.run`): the transport `--transport` selects (or `transport`),
    `--record` (+ `--overwrite`, `--compression`, `--profile`, `--log-time-base`, plus
    `file_metadata`), a progress bar on stderr (the package logger `log_name` printed above it for
    the run), `--foxglove` (a live view of every collection; a recording's hand channels
    `foxglove_hands` place the taxels when the producer does not know the hand's pose) and
    `args.record_view` (sim/hw: on unless `--no-record-view`: the 3-D view's topics written into
    the recording, `integrations.scene_recording.ViewRecording`). Returns each producer's `RunCounters`."""
    from tqdm import tqdm

    from ..run import RecordOptions, run

    bar = tqdm(total=total, desc=desc, unit=" frames", file=sys.stderr, mininterval=0.5,
               disable=quiet or not getattr(args, "progress", True))  # no bar in logs unless --progress
    record = None
    if getattr(args, "record", None):
        recorded_view = None
        if getattr(args, "record_view", False):
            from ..integrations.scene_recording import ViewRecording

            def recorded_view(recorder, producer, index):
                return [ViewRecording(recorder, producer, index=index, hands=foxglove_hands)]

        record = RecordOptions(args.record, overwrite=args.overwrite, compression=getattr(args, "compression", None),
                               profile=getattr(args, "profile", "default"), file_metadata=dict(file_metadata or {}),
                               log_time_base=getattr(args, "log_time_base", "epoch"), derived_sinks=recorded_view)
    collections = [p.collection_id for p in producers]

    def views(opened) -> list:
        view = open_foxglove_sink(args, opened, collections, hands=foxglove_hands,
                                  say=lambda text: bar.write(text, file=sys.stderr))
        if announce:
            bar.write(announce, file=sys.stderr)
        return [] if view is None else [view]

    def around_loop():
        return log_to(bar, log_name, desc) if log_name else contextlib.nullcontext()

    try:
        return run(producers, transport=transport if transport is not None else transport_spec(args),
                   record=record, sinks=sinks, views=views, speed=speed, duration_s=duration_s,
                   max_frames=max_frames, progress=bar, metadata_period_s=metadata_period_s, around_loop=around_loop,
                   close_transport=True)
    finally:
        bar.close()
