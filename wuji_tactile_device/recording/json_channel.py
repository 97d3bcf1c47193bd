"""Auxiliary (non-contract) JSON channels in a recording: encoding and a small schema check.

Auxiliary topics carry what is recorded *alongside* the contract (e.g. a device's own per-finger
resultants) with MCAP message encoding `json` and schema encoding `jsonschema`, which Foxglove
decodes and plots natively. Replay and the tracker ignore them (they are not tactile streams);
`inspect`/`validate` parse every message and check it against its channel's schema.

The schema check covers the subset of JSON Schema these channels use: `type` (a name or a list
of names), `properties`, `required`, `additionalProperties: false`, `items`, `minimum`/`maximum`.
Other keywords are not checked.

Messages and schemas read from a file are refused beyond `MAX_DEPTH` levels of nesting before
they are parsed (Python's parser and the schema check recurse: a hostile message nested 200,000
levels deep would otherwise end in `RecursionError`).
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import RecordingError

MESSAGE_ENCODING = "json"
SCHEMA_ENCODING = "jsonschema"
#: Deepest nesting of arrays/objects accepted when decoding (a message of this package: 3).
MAX_DEPTH = 64
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


def encode(obj: Any, *, topic: str) -> bytes:
    """Compact UTF-8 JSON of `obj`. Floats are written in Python's shortest round-trip form, so
    a float64 value parses back to the same bits. NaN/infinity (not JSON; Foxglove's parser
    refuses them) and non-JSON types raise RecordingError naming the topic."""
    try:
        return json.dumps(obj, separators=(",", ":"), allow_nan=False, ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise RecordingError(f"topic {topic!r}: message is not JSON-encodable ({exc}); "
                             "use dicts, lists, str, int, finite float (omit unknown values)") from exc


def decode(data: bytes) -> Any:
    """Parse one JSON message. Raises ValueError (with the position) for malformed JSON, invalid
    UTF-8, or the non-standard NaN/Infinity literals."""
    def refuse(literal: str) -> float:
        raise ValueError(f"non-standard JSON literal {literal}")

    raw = bytes(data)
    depth = nesting_depth(raw)
    if depth > MAX_DEPTH:
        raise ValueError(f"nested {depth} levels deep, more than the {MAX_DEPTH} accepted")
    return json.loads(raw.decode("utf-8"), parse_constant=refuse)


def nesting_depth(raw: bytes) -> int:
    """Deepest nesting of `[`/`{` in JSON text, brackets inside strings not counted (vectorised)."""
    if b"[" not in raw and b"{" not in raw:
        return 0
    codes = np.frombuffer(_STRING.sub(b'""', raw), np.uint8)
    step = (np.isin(codes, (0x5B, 0x7B)).astype(np.int64) - np.isin(codes, (0x5D, 0x7D)))
    return int(np.cumsum(step).max(initial=0))


def check_schema(schema: Any, *, topic: str) -> None:
    """Refuse a schema that is not a JSON object with a known `type` (RecordingError)."""
    if not isinstance(schema, dict):
        raise RecordingError(f"topic {topic!r}: the JSON schema must be a dict, got {type(schema).__name__}")
    for kind in ([schema["type"]] if isinstance(schema.get("type"), str) else schema.get("type", [])):
        if kind not in _TYPES:
            raise RecordingError(f"topic {topic!r}: JSON schema type {kind!r} is not one of {', '.join(_TYPES)}")


#: The Python type of each JSON Schema type name, for values parsed by `decode` (exact types).
_PARSED_TYPES: dict[str, frozenset[type]] = {
    "object": frozenset({dict}), "array": frozenset({list}), "string": frozenset({str}),
    "boolean": frozenset({bool}), "null": frozenset({type(None)}), "integer": frozenset({int}),
    "number": frozenset({int, float})}
_NUMBERS = frozenset({int, float})
Checker = Callable[[Any], bool]


def conforms(value: Any, schema: Any) -> bool:
    """`not violations(value, schema)` for a value parsed by `decode` (see `checker`)."""
    return checker(schema)(value)


def checker(schema: Any) -> Checker:
    """The schema compiled once into a yes/no check equal to `not violations(value, schema)` for
    values parsed by `decode`. `inspect`/`validate` ask it of every message (a scene message has
    thousands of nodes) and build the detailed `violations` only for a message that fails; the
    compiled form reads no schema keyword per node and checks arrays of plain numbers in C
    (`set(map(type, ...))`, `min`, `max`) instead of per element."""
    if not isinstance(schema, dict):
        return _anything
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds if isinstance(kinds, list) else []
    kinds = [k for k in kinds if isinstance(k, str) and k in _PARSED_TYPES]
    allowed = frozenset().union(*(_PARSED_TYPES[k] for k in kinds)) if kinds else None
    props = schema.get("properties")
    props = {k: checker(v) for k, v in props.items()} if isinstance(props, dict) else {}
    required = schema.get("required")
    required = tuple(k for k in required if isinstance(k, str)) if isinstance(required, list) else ()
    closed = schema.get("additionalProperties") is False
    items = schema.get("items")
    item_check = checker(items) if isinstance(items, dict) else None
    numeric = _numeric_items(items) if isinstance(items, dict) else None
    low, high = schema.get("minimum"), schema.get("maximum")
    low = low if _TYPES["number"](low) else None
    high = high if _TYPES["number"](high) else None

    def check(value: Any) -> bool:
        kind = type(value)
        if allowed is not None and kind not in allowed:
            return False
        if kind is dict:
            for k in required:
                if k not in value:
                    return False
            for k, v in value.items():
                c = props.get(k)
                if c is None:
                    if closed:
                        return False
                elif not c(v):
                    return False
            return True
        if kind is list:
            if item_check is None or not value:
                return True
            if numeric is not None and set(map(type, value)) <= numeric[0]:
                lo, hi = min(value), max(value)
                return (-math.inf < lo and hi < math.inf and (numeric[1] is None or lo >= numeric[1])
                        and (numeric[2] is None or hi <= numeric[2]))
            for v in value:
                if not item_check(v):
                    return False
            return True
        if kind in _NUMBERS:
            return not ((kind is float and not -math.inf < value < math.inf)
                        or (low is not None and value < low) or (high is not None and value > high))
        return True
    return check


def _anything(value: Any) -> bool:
    return True


def _numeric_items(items: dict) -> tuple[frozenset[type], Any, Any] | None:
    """(allowed Python types, minimum or None, maximum or None) when an array's item schema is
    only a numeric type with bounds; None for any other item schema (checked per element)."""
    kinds = items.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds if isinstance(kinds, list) else []
    if not kinds or any(k not in ("number", "integer") for k in kinds):
        return None
    low, high = items.get("minimum"), items.get("maximum")
    low = low if _TYPES["number"](low) else None
    high = high if _TYPES["number"](high) else None
    return frozenset().union(*(_PARSED_TYPES[k] for k in kinds)), low, high


def violations(value: Any, schema: Any, path: str = "") -> list[str]:
    """Where `value` breaks `schema` (the subset in the module doc); [] when it conforms.
    Keywords of the wrong shape (a schema from another tool) are ignored, never a crash."""
    if not isinstance(schema, dict):
        return []
    where = path or "the message"
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds if isinstance(kinds, list) else []
    kinds = [k for k in kinds if isinstance(k, str) and k in _TYPES]
    if kinds and not any(_TYPES[k](value) for k in kinds):
        return [f"{where} is {type(value).__name__} {_short(value)}, the schema wants {' or '.join(kinds)}"]
    out: list[str] = []
    if isinstance(value, dict):
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        required = schema.get("required")
        out += [f"{where} lacks required {k!r}" for k in (required if isinstance(required, list) else ())
                if isinstance(k, str) and k not in value]
        for k, v in value.items():
            if k in props:
                out += violations(v, props[k], f"{path}.{k}" if path else k)
            elif schema.get("additionalProperties") is False:
                out.append(f"{where} has {k!r}, which the schema does not allow")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += violations(v, schema.get("items"), f"{path}[{i}]")
    elif _TYPES["number"](value):
        if isinstance(value, float) and not math.isfinite(value):
            out.append(f"{where} overflows a double (parsed as {value})")
        low, high = schema.get("minimum"), schema.get("maximum")
        if _TYPES["number"](low) and value < low:
            out.append(f"{where} = {value} is below the minimum {low}")
        if _TYPES["number"](high) and value > high:
            out.append(f"{where} = {value} is above the maximum {high}")
    return out


def _short(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, float) or math.isfinite(value) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
