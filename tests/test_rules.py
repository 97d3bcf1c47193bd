"""Rules of docs/architecture.md that a reading of the source (or one call) can check, in the
spirit of test_architecture.py: counters are dataclasses, not dicts; a programmer's wrong
argument raises ValueError/TypeError, not a TactileError."""
from __future__ import annotations

import ast
import dataclasses
import importlib
from pathlib import Path

import pytest

from wuji_tactile_device.errors import TactileError
from wuji_tactile_device.recording import McapRecorder

PACKAGE = "wuji_tactile_device"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE


def _sources() -> list[tuple[str, Path, ast.Module]]:
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent)
        if rel.parts[1] == "generated":  # flatc output
            continue
        out.append((".".join(rel.with_suffix("").parts), path, ast.parse(path.read_text())))
    return out


def _zero_count_dict(node: ast.AST) -> bool:
    """`{"a": 0, "b": 0, ...}`: a dict of counts starting at zero (two keys or more)."""
    return (isinstance(node, ast.Dict) and len(node.keys) >= 2
            and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys)
            and all(isinstance(v, ast.Constant) and type(v.value) is int and v.value == 0 for v in node.values))


def _counters_dicts(tree: ast.Module) -> list[int]:
    """Lines where a dict of zero counts is bound, or where something named *counters* is bound to a
    dict, a `Counter` or a `defaultdict`."""
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = [t.attr if isinstance(t, ast.Attribute) else t.id if isinstance(t, ast.Name) else "" for t in targets]
        value = node.value
        dict_like = isinstance(value, (ast.Dict, ast.DictComp)) or (
            isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute))
            and (value.func.id if isinstance(value.func, ast.Name) else value.func.attr)
            in ("dict", "Counter", "defaultdict"))
        if _zero_count_dict(value) or (dict_like and any("counter" in n.lower() for n in names)):
            lines.append(node.lineno)
    return lines


def test_the_scan_finds_a_dict_of_counters():
    tree = ast.parse("class A:\n    def __init__(self):\n        self.counters = {'a': 0, 'b': 0}\n"
                     "        self.link_counters = dict(x=0)\n        self.hits = {'x': 0, 'y': 0}\n"
                     "        self.sizes = {'x': 1, 'y': 0}\n")
    assert _counters_dicts(tree) == [3, 4, 5]


def test_nothing_counts_in_a_dict():
    found = [f"{path.relative_to(ROOT.parent)}:{line}" for _, path, tree in _sources()
             for line in _counters_dicts(tree)]
    assert not found, ("counters belong in a dataclass of int fields (docs/architecture.md, Counters): "
                       + ", ".join(found))


def test_every_counters_class_is_a_dataclass():
    classes = []
    for module, _, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name.endswith("Counters"):
                classes.append((module, node.name))
    assert len(classes) >= 6  # tracker, recorder, assembly, hardware, link, recovery, joint states, ...
    not_dataclasses = [f"{m}.{c}" for m, c in classes
                       if not dataclasses.is_dataclass(getattr(importlib.import_module(m), c))]
    assert not not_dataclasses, not_dataclasses


def test_the_recorders_and_devices_counters_are_read_as_attributes(tmp_path):
    from wuji_tactile_device.producers.hardware.device import LinkCounters
    from wuji_tactile_device.producers.hardware.producer import HardwareCounters, RecoveryCounters

    with McapRecorder(tmp_path / "a.mcap") as rec:
        assert rec.counters.written_data == 0 and dataclasses.asdict(rec.counters)["refused_samples"] == 0
    c = HardwareCounters()
    assert isinstance(c.link, LinkCounters) and isinstance(c.recovery, RecoveryCounters)
    assert c.link.reconnects == 0 and c.recovery.recovered == 0


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"compression": "gzip"}, ValueError, "compression 'gzip' is not one of"),
    ({"flush_period_s": 0.0}, ValueError, "flush_period_s must be > 0 s, got 0.0"),
    ({"flush_period_s": float("nan")}, ValueError, "flush_period_s must be > 0 s, got nan"),
    ({"file_metadata": {"k": 1}}, TypeError, "file_metadata must map str to str, got 'k': 1"),
])
def test_a_wrong_recorder_argument_is_a_programmer_error(tmp_path, kwargs, error, message):
    path = tmp_path / "a.mcap"
    with pytest.raises(error, match=message) as info:
        McapRecorder(path, **kwargs)
    assert not isinstance(info.value, TactileError)
    assert not path.exists()  # refused before the file is created


def test_a_wrong_channel_argument_is_a_programmer_error(tmp_path):
    with McapRecorder(tmp_path / "a.mcap") as rec:
        for call, error, message in [
            (lambda: rec.add_json_channel("", {"title": "x", "type": "object"}), ValueError, "non-empty str, got ''"),
            (lambda: rec.add_json_channel(7, {"title": "x", "type": "object"}), TypeError, "non-empty str, got 7"),
            (lambda: rec.add_encoded_channel(None, "s", "protobuf", b"", "protobuf"), TypeError, "got None"),
            (lambda: rec.add_json_channel("aux", {"type": "object"}), ValueError, "needs a schema name"),
            (lambda: rec.add_json_channel("aux", {"title": "x", "type": "object"}, metadata={"k": 2}), TypeError,
             "channel metadata must map str to str, got 'k': 2"),
            (lambda: rec.write_json(99, {}, log_time_ns=1, publish_time_ns=1), ValueError,
             "99 is not an auxiliary channel"),
            (lambda: rec.write_flatbuffer(99, b"", log_time_ns=1, publish_time_ns=1), ValueError,
             "99 is not a FlatBuffers channel"),
        ]:
            with pytest.raises(error, match=message) as info:
                call()
            assert not isinstance(info.value, TactileError), message
