"""`wuji-tactile record`: record tactile collections from Zenoh into an MCAP file until Ctrl-C
(or `--duration`). Ctrl-C / SIGTERM finish the file (complete and indexed), then exit 130 / 143;
`--duration` ends with 0 (1 if the transport dropped events)."""
from __future__ import annotations

import argparse
import signal
import time

from ..errors import RecordingError
from ..streams.zenoh_watch import ConnectionWatch
from .args import positive_seconds
from ..run import signals_ignored
from .common import add_log_time_argument, add_zenoh_arguments, open_zenoh


def parse_pairs(pairs: list[str]) -> dict[str, str]:
    out = {}
    for p in pairs:
        key, sep, value = p.partition("=")
        if not sep or not key:
            raise RecordingError(f"--meta expects KEY=VALUE, got {p!r}")
        out[key] = value
    return out


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "record", help="record tactile collections from Zenoh into an MCAP file",
        description="Record the data and metadata streams of one or more collections into OUT.mcap "
                    "(zstd chunks, CRCs, flushed every 0.5 s). Stop with Ctrl-C: the file is finished.")
    p.add_argument("output", metavar="OUT.mcap", help="file to create")
    p.add_argument("--collection", "-c", action="append", required=True, metavar="ID",
                   help="collection id to record, e.g. tactile/right (repeatable)")
    p.add_argument("--duration", type=positive_seconds, metavar="S", help="stop after S seconds (default: until Ctrl-C)")
    p.add_argument("--overwrite", action="store_true", help="replace OUT.mcap if it exists")
    p.add_argument("--producer-kind", metavar="KIND", help="written to the file metadata, e.g. sim or hardware")
    p.add_argument("--hand-side", choices=("right", "left"), help="written to the file metadata")
    p.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE",
                   help="extra file metadata (repeatable)")
    p.add_argument("--fsync", action="store_true", help="fsync every flush (survives power loss, costs I/O)")
    add_log_time_argument(p)
    add_zenoh_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..recording import McapRecorder

    meta = parse_pairs(args.meta)
    if args.producer_kind:
        meta["producer_kind"] = args.producer_kind
    if args.hand_side:
        meta["hand_side"] = args.hand_side
    meta["collections"] = ",".join(args.collection)
    console = args.console
    transport = open_zenoh(args)
    recorder = None
    stopped_by: list[int] = []  # SIGINT / SIGTERM: finish the file between two polls, then exit 128 + it

    def stop(signum, _frame) -> None:
        if stopped_by:
            raise KeyboardInterrupt  # a second signal: the user insists
        stopped_by.append(signum)

    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        recorder = McapRecorder(args.output, file_metadata=meta, overwrite=args.overwrite, fsync=args.fsync,
                                log_time_base=args.log_time_base)
        for cid in args.collection:
            recorder.add_collection(transport, cid)
        deadline = None if args.duration is None else time.monotonic() + args.duration
        watch = ConnectionWatch(transport)  # an unreachable --zenoh endpoint is said, not waited on in silence
        with console.bar(desc=f"recording {args.output}", unit=" msg") as bar:
            while not stopped_by and (deadline is None or time.monotonic() < deadline):
                n = recorder.poll()
                if n:
                    bar.update(n)
                unconnected = watch.check()
                if unconnected is not None:
                    console.warning(unconnected)
                time.sleep(0.005)
    finally:
        with signals_ignored():  # a second Ctrl-C must not cut the summary in half
            try:
                if recorder is not None:
                    recorder.close()
            finally:
                transport.close()
                for s, handler in previous.items():
                    signal.signal(s, handler)
    c = recorder.counters
    console.note(f"wrote {args.output}: {c.written_data} data and {c.written_metadata} metadata records "
                 f"({c.metadata_repeats_skipped} metadata republishes not repeated)")
    if c.refused_samples or c.sessions_evicted:
        console.warning(f"{c.refused_samples} samples of other producer sessions refused (not recordable as "
                        f"received), {c.sessions_evicted} idle producer sessions evicted (their records kept)")
    faulty = recorder.dropped_by_transport or c.unreadable_timestamp
    if faulty:
        console.warning(f"{recorder.dropped_by_transport} events dropped by the transport, "
                        f"{c.unreadable_timestamp} records without a readable timestamp")
    if stopped_by:
        return 128 + int(stopped_by[0])
    return 1 if faulty else 0
