"""The package's layers import only downward (docs/architecture.md), with no import cycles.

Imports are read from the source (module level AND inside functions, so a lazy import cannot hide a
cycle or an upward dependency)."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = "wuji_tactile_device"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE

#: What each layer may import from the package, besides itself. The package root (`__init__`)
#: provides `__version__` and re-exports of the contract.
ALLOWED = {
    "errors": set(),
    "generated": set(),
    "contract": {"errors", "generated"},
    "streams": {"errors", "contract"},
    "recording": {"errors", "contract", "streams", ""},
    "hands": {"errors", "contract"},
    "producers": {"errors", "contract", "streams", "hands", ""},  # beside recording: frames, not files
    "integrations": {"errors", "contract", "streams", "recording", "hands", "producers", ""},
    "run": {"errors", "contract", "streams", "recording", "hands", "producers", ""},
    "plot": {"errors", "contract", "streams", "recording", "hands", ""},
    "demo": {"errors", "contract", ""},
    "benchmarks": {"errors", "contract", "streams", "recording", "hands", "producers", ""},
    "cli": {"errors", "contract", "streams", "recording", "hands", "producers", "integrations", "plot",
            "benchmarks", "run", ""},
    "": {"errors", "contract", "streams", "recording"},  # the package root (lazy re-exports)
}


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name: its .py files, and its compiled extensions by
    their type stubs (`_contact_read.pyi`, `_record_check.pyi`), which import nothing of the package."""
    out = {}
    for path in sorted(ROOT.rglob("*.py")) + sorted(p for p in ROOT.rglob("*.pyi") if not p.with_suffix(".py").exists()):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        if "generated" in parts[1:2]:
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    is_package = path.name == "__init__.py"
    base = name.split(".") if is_package else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parent = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join(parent + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith(PACKAGE):
                continue
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                found.add(candidate if candidate in modules else target)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith(PACKAGE))
    return {m for m in found if m != name}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


GRAPH = {name: _imports(name, path, _modules()) for name, path in _modules().items()}


def test_every_module_belongs_to_a_known_layer():
    unknown = sorted({_layer(m) for m in GRAPH} - set(ALLOWED))
    assert not unknown, f"modules outside the documented layers: {unknown}"


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_module_imports_only_lower_layers(module):
    layer = _layer(module)
    upward = sorted(dep for dep in GRAPH[module]
                    if _layer(dep) != layer and _layer(dep) not in ALLOWED[layer] and dep != "wuji_tactile_device.generated")
    assert not upward, f"{module} (layer {layer or 'root'!r}) imports {upward}, which its layer may not use"


def test_no_import_cycles():
    # Tarjan's strongly connected components over every import, lazy ones included.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        for w in GRAPH.get(v, ()):
            if w not in GRAPH:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in GRAPH:
        if v not in index:
            visit(v)
    assert cycles == []


def test_the_hardware_producer_does_not_load_mujoco():
    code = ("import sys, wuji_tactile_device.producers.hardware as h; "
            "print('mujoco' in sys.modules, 'wuji_tactile_device.producers.sim' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["False", "False"], out.stdout + out.stderr


def test_the_contract_and_streams_load_without_mujoco_or_zenoh():
    code = ("import sys, wuji_tactile_device, wuji_tactile_device.contract, wuji_tactile_device.streams; "
            "print('mujoco' in sys.modules, 'zenoh' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["False", "False"], out.stdout + out.stderr


#: Modules that may construct the run loop (`ProducerRunner`, `run_together`) or a recorder
#: (`McapRecorder`), and why. Everything else goes through the one run function (`run.run`).
WIRING_ALLOWED = {
    "wuji_tactile_device.producers.base": "defines the run loop",
    "wuji_tactile_device.run": "THE run function: producers → transport → recorder → sinks",
    "wuji_tactile_device.cli.cmd_record": "records what other processes publish (no producer)",
    "wuji_tactile_device.benchmarks.mcap": "times the recorder itself (no producer)",
    # one pass of the loop (ProducerRunner.step) on an in-process bus, no recorder: the per-frame
    # cost the run function pays; importing the run layer would put benchmarks a floor higher
    "wuji_tactile_device.benchmarks.sim": "times one pass of the run loop",
    "wuji_tactile_device.benchmarks.hardware": "times one pass of the run loop",
}
WIRING_NAMES = ("ProducerRunner", "run_together", "McapRecorder")


def _calls(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in WIRING_NAMES:
                names.add(name)
    return names


def test_only_the_run_function_wires_producers_to_transports_and_recorders():
    wiring = {name: sorted(_calls(path)) for name, path in _modules().items() if _calls(path)}
    outside = {m: names for m, names in wiring.items() if m not in WIRING_ALLOWED}
    assert outside == {}, f"wire producers through wuji_tactile_device.run.run, not by hand: {outside}"
    assert "ProducerRunner" in wiring["wuji_tactile_device.run"] and "McapRecorder" in wiring["wuji_tactile_device.run"]


def layer_figures() -> dict[str, int]:
    """Structure figures: modules, layers, floors (the longest chain of layer imports, a layer
    that imports nothing being floor 1) and arrows (distinct layer → layer imports)."""
    edges = {(_layer(m), _layer(d)) for m, deps in GRAPH.items() for d in deps
             if d in GRAPH and _layer(d) != _layer(m)}
    layers = {_layer(m) for m in GRAPH}
    floor: dict[str, int] = {}

    def height(layer: str) -> int:
        if layer not in floor:
            floor[layer] = 1 + max((height(b) for a, b in edges if a == layer), default=0)
        return floor[layer]

    return {"modules": len(GRAPH), "layers": len(layers), "floors": max(height(x) for x in layers),
            "arrows": len(edges)}


def test_structure_figures_hold_the_target():
    figures = layer_figures()
    assert figures["floors"] <= 6, figures


if __name__ == "__main__":
    print(layer_figures())
