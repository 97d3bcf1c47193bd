"""`wuji-tactile record`: record tactile collections from Zenoh into an MCAP file until Ctrl-C
(or `--duration`). Ctrl-C / SIGTERM finish the file: it is complete and indexed."""
from __future__ import annotations

import argparse
import signal
import sys
import time

from ..errors import RecordingError
from .common import add_zenoh_arguments, open_zenoh, signals_ignored


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
    p.add_argument("--duration", type=float, metavar="S", help="stop after S seconds (default: until Ctrl-C)")
    p.add_argument("--overwrite", action="store_true", help="replace OUT.mcap if it exists")
    p.add_argument("--producer-kind", metavar="KIND", help="written to the file metadata, e.g. sim or hardware")
    p.add_argument("--hand-side", choices=("right", "left"), help="written to the file metadata")
    p.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE",
                   help="extra file metadata (repeatable)")
    p.add_argument("--fsync", action="store_true", help="fsync every flush (survives power loss, costs I/O)")
    add_zenoh_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from ..recording import McapRecorder

    meta = parse_pairs(args.meta)
    if args.producer_kind:
        meta["producer_kind"] = args.producer_kind
    if args.hand_side:
        meta["hand_side"] = args.hand_side
    meta["collections"] = ",".join(args.collection)
    transport = open_zenoh(args)
    recorder = None
    previous_term = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        recorder = McapRecorder(args.output, file_metadata=meta, overwrite=args.overwrite, fsync=args.fsync)
        for cid in args.collection:
            recorder.add_collection(transport, cid)
        deadline = None if args.duration is None else time.monotonic() + args.duration
        bar = tqdm(desc=f"recording {args.output}", unit=" msg", file=sys.stderr, mininterval=0.5)
        try:
            while deadline is None or time.monotonic() < deadline:
                n = recorder.poll()
                if n:
                    bar.update(n)
                time.sleep(0.005)
        except KeyboardInterrupt:
            pass
        finally:
            bar.close()
    finally:
        signal.signal(signal.SIGTERM, previous_term)
        with signals_ignored():  # a second Ctrl-C must not cut the summary in half
            try:
                if recorder is not None:
                    recorder.close()
            finally:
                transport.close()
    c = recorder.counters
    print(f"wrote {args.output}: {c['written_data']} data and {c['written_metadata']} metadata records "
          f"({c['metadata_repeats_skipped']} metadata republishes not repeated)", file=sys.stderr)
    if recorder.dropped_by_transport or c["unreadable_timestamp"]:
        print(f"warning: {recorder.dropped_by_transport} events dropped by the transport, "
              f"{c['unreadable_timestamp']} records without a readable timestamp", file=sys.stderr)
        return 1
    return 0


def _raise_interrupt(signum, frame) -> None:
    raise KeyboardInterrupt
