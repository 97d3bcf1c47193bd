"""`wuji-tactile inspect`: per-topic counts, time range, rate and schema of a recording, with every
chunk, record and metadata checked (see `recording.inspect`); `--json` gives the same report as
one JSON object (`report_json`, schema `wuji-tactile.inspect/1`, documented in docs/cli.md)."""
from __future__ import annotations

import argparse
import json

#: Identifies the layout of the JSON reports; bumped on any incompatible change.
INSPECT_FORMAT = "wuji-tactile.inspect/1"


def register(subparsers) -> None:
    p = subparsers.add_parser("inspect", help="summarise and check an MCAP recording",
                              description="Print per-topic counts, time range, rate, schema names and "
                                          "producer sessions; check every chunk CRC, every record through the "
                                          "verifier and every metadata through validation. Exit 0 when the "
                                          "file could be read (see `validate` for a strict verdict).")
    p.add_argument("input", metavar="FILE.mcap")
    p.add_argument("--json", action="store_true",
                   help=f"print the report as one JSON object (format {INSPECT_FORMAT!r}, see docs/cli.md)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..errors import TactileError
    from ..recording.inspect import inspect_file

    try:
        report = inspect_file(args.input)
    except TactileError as exc:  # missing, not MCAP, a FIFO: with --json, still one JSON object
        if args.json:
            print(json.dumps({"format": INSPECT_FORMAT, "path": str(args.input), "error": str(exc),
                              "ok": False, "valid": False}, indent=2))
        raise
    print(json.dumps(report_json(report), indent=2) if args.json else report.text())
    return 0


def _range(first, last) -> list[int] | None:
    return None if first is None else [first, last]


def report_json(report) -> dict:
    """An `InspectReport` as plain JSON data: the same facts `text()` prints."""
    sc = report.scan
    tr = sc.truncation
    return {
        "format": INSPECT_FORMAT,
        "path": str(report.path),
        "size_bytes": sc.size,
        "complete": sc.complete,
        "chunks": len(sc.chunks),
        "collections": list(report.collections),
        "library": sc.library,
        "file_metadata": [{"name": md.name, "metadata": dict(md.metadata)} for md in sc.metadata],
        "topics": [{
            "topic": t.topic,
            "schema": t.schema_name,
            "message_encoding": t.message_encoding,
            "schema_encoding": t.schema_encoding,
            "messages": t.count,
            "producer_sessions": [f"{s:016x}" for s in sorted(t.sessions)],
            "log_time_ns": _range(t.first_ns, t.last_ns),
            "sample_time_ns": _range(t.first_sample_ns, t.last_sample_ns),
            "log_rate_hz": t.rate_hz,
            "sample_rate_hz": t.sample_rate_hz,
            "max_message_bytes": t.max_bytes,
        } for t in sorted(report.topics.values(), key=lambda t: t.topic)],
        "truncation": None if tr is None else {
            "reason": tr.reason, "valid_until_byte": tr.valid_until, "bytes_lost": tr.bytes_lost,
            "cut_off_chunk_log_time_ns": list(tr.partial_chunk_range) if tr.partial_chunk_range else None},
        "notes": list(report.notes),
        "checked_messages": report.checked_messages,
        "problem_count": report.problem_count,
        "problems": list(report.problems),
        "ok": report.ok,
        "valid": report.valid,
    }
