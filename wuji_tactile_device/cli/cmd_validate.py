"""`wuji-tactile validate`: exit 0 only if every recording is complete and every check passes;
`--json` gives the verdicts as one JSON object (schema `wuji-tactile.validate/1`, docs/cli.md)."""
from __future__ import annotations

import argparse
import json

from ..errors import TactileError, printable

VALIDATE_FORMAT = "wuji-tactile.validate/1"


def register(subparsers) -> None:
    p = subparsers.add_parser("validate", help="check MCAP recordings; exit 1 on any fault",
                              description="Check every chunk CRC, every record through the verifier, every "
                                          "metadata through validation, and that the file is complete. "
                                          "A file without any tactile collection is not valid. Prints the "
                                          "faults; exit 0 = all valid, 1 = any not (a file that cannot be "
                                          "opened or is not MCAP counts as invalid).")
    p.add_argument("input", metavar="FILE.mcap", nargs="+")
    p.add_argument("--json", action="store_true",
                   help=f"print the verdicts as one JSON object (format {VALIDATE_FORMAT!r}, see docs/cli.md)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..recording.inspect import inspect_file
    from .cmd_inspect import report_json

    verdicts = []
    for path in args.input:
        try:
            full = report_json(inspect_file(path))
        except TactileError as exc:  # not MCAP, unreadable, not a regular file: this file is invalid, go on
            verdicts.append({"path": path, "valid": False, "error": str(exc), "collections": [],
                             "checked_messages": 0, "truncation": None, "problem_count": 0, "problems": []})
            continue
        verdicts.append({"path": path, "valid": full["valid"], "error": None,
                         **{k: full[k] for k in ("collections", "checked_messages", "truncation", "problem_count", "problems")}})
    if args.json:
        print(json.dumps({"format": VALIDATE_FORMAT, "valid": all(v["valid"] for v in verdicts), "files": verdicts},
                         indent=2))
    else:
        for v in verdicts:
            print(_text(v))
    return 0 if all(v["valid"] for v in verdicts) else 1


def _text(v: dict) -> str:
    if v["valid"]:
        return printable(f"{v['path']}: valid ({v['checked_messages']} messages checked)")
    lines = [f"{v['path']}: INVALID"]
    if v["error"]:
        lines.append(f"  {v['error']}")
    t = v["truncation"]
    if t is not None:
        lines.append(f"  truncated: {t['reason']} ({t['bytes_lost']} bytes unreadable; `wuji-tactile recover` "
                     "keeps the rest)")
    lines += [f"  {p}" for p in v["problems"]]
    if v["problem_count"] > len(v["problems"]):
        lines.append(f"  ... and {v['problem_count'] - len(v['problems'])} more")
    if not v["error"] and not v["collections"]:
        from ..recording.inspect import InspectReport

        lines.append(f"  {InspectReport.NO_COLLECTION}")
    return "\n".join(printable(ln) for ln in lines)  # names from the file: control characters escaped
