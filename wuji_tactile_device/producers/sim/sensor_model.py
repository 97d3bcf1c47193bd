"""A seeded model of the taxel electronics, applied to ideal taxel forces frame by frame.

Stages, in signal order, each on every taxel axis (176 × 3 channels), all vectorised:
1. crosstalk: each taxel picks up `crosstalk` × the force of every neighbour on its pad whose
   centre lies within `crosstalk_radius`;
2. hysteresis: a play (backlash) operator of half-width `hysteresis` — the output follows the
   input only once the input has moved `hysteresis` past it, so loading and unloading differ by
   2 × `hysteresis` at the same input;
3. first-order lag: y ← y + (1 − e^(−Δt/τ))·(x − y), τ = `time_constant`;
4. fixed latency: `latency` rounded to whole frames;
5. bias: an initial offset N(0, `bias_initial`²) plus a random walk of intensity `bias_drift`
   (its standard deviation grows as `bias_drift`·√t);
6. white noise N(0, `noise_std`²), independent per channel and frame;
7. saturation: clipped to ±`saturation`;
8. quantisation: rounded to multiples of `quantisation`;
9. dead taxels: a `dead_fraction` of the taxels (chosen per episode) read exactly 0.

Parameters live in one JSON file (`SensorModel.from_file`), every value with its unit:

    {"format": "wuji-tactile-sensor-model", "version": 1,
     "parameters": {"noise_std": {"value": 0.002, "unit": "N"},
                    "time_constant": {"range": [0.005, 0.02], "unit": "s"}, ...}}

A `range` is drawn uniformly at every `reset(seed)` (per-episode domain randomisation); the same
seed gives the same parameters, dead taxels and noise sequence.

The package ships an example (`EXAMPLE_NAME`, package data `sensor_model_example.json`, the same
bytes as the clone's `docs/sensor_model_example.json`): `from_file("example")`, `sim
--sensor-model example`, `example_text()` (what `wuji-tactile sensor-model` prints, to copy and edit).
"""
from __future__ import annotations

import json
import re
import math
from dataclasses import dataclass, fields
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ...errors import ProducerError

if TYPE_CHECKING:  # annotations only: no run-time dependency
    from typing_extensions import TypeIs

FORMAT_NAME = "wuji-tactile-sensor-model"
FORMAT_VERSION = 1
FRAME_S = 0.01


@dataclass(frozen=True)
class SensorParams:
    """One episode's sensor parameters (all ≥ 0; 0 disables a stage)."""

    noise_std: float = 0.0          # [N] white noise σ per channel and frame
    bias_initial: float = 0.0       # [N] σ of each channel's initial bias
    bias_drift: float = 0.0         # [N/√s] random-walk intensity of the bias
    hysteresis: float = 0.0         # [N] half-width of the play operator
    time_constant: float = 0.0      # [s] first-order lag
    latency: float = 0.0            # [s] fixed delay, rounded to whole frames
    crosstalk: float = 0.0          # [1] fraction of each neighbour's force picked up
    crosstalk_radius: float = 0.004  # [m] neighbours: same pad, centres within this distance
    quantisation: float = 0.0       # [N] output step (LSB)
    saturation: float = math.inf    # [N] |output| limit per channel
    dead_fraction: float = 0.0      # [1] fraction of taxels reading 0


def _is_fixed(spec: float | tuple[float, float]) -> TypeIs[float]:
    """True for a fixed parameter value (a scalar), False for a (lo, hi) range."""
    return bool(np.isscalar(spec))


UNITS = {"noise_std": "N", "bias_initial": "N", "bias_drift": "N/sqrt(s)", "hysteresis": "N",
         "time_constant": "s", "latency": "s", "crosstalk": "1", "crosstalk_radius": "m",
         "quantisation": "N", "saturation": "N", "dead_fraction": "1"}
_UPPER = {"crosstalk": 0.5, "dead_fraction": 1.0}


class SensorModel:
    """Per-frame sensor effects for one hand. `specs`: per parameter a fixed value or a (lo, hi)
    range drawn at each `reset`; `taxel_positions` (N, 3) [m] and `taxel_pad` (N,) place the
    taxels for crosstalk (same pad, distance ≤ radius)."""

    def __init__(self, specs: dict[str, float | tuple[float, float]], taxel_positions: np.ndarray,
                 taxel_pad: np.ndarray, *, seed: int = 0, frame_s: float = FRAME_S):
        unknown = sorted(set(specs) - set(UNITS))
        if unknown:
            raise ValueError(f"sensor model: unknown parameter(s) {unknown}; known: {sorted(UNITS)}")
        for name, v in specs.items():
            lo, hi = (v, v) if _is_fixed(v) else v
            if not (0 <= lo <= hi) or (name in _UPPER and hi > _UPPER[name]) or math.isnan(hi):
                raise ValueError(f"sensor model: {name} must satisfy 0 <= lo <= hi"
                                 f"{' <= ' + str(_UPPER[name]) if name in _UPPER else ''}, got {v}")
        self.specs = dict(specs)
        self.positions = np.asarray(taxel_positions, dtype=np.float64)
        self.taxel_pad = np.asarray(taxel_pad)
        self.frame_s = float(frame_s)
        self.reset(seed)

    @classmethod
    def for_hand(cls, specs, side: str = "right", *, seed: int = 0) -> SensorModel:
        """A model over the simulated hand's 176 taxels (distal-frame positions)."""
        from .taxels import pad_taxels
        pads = pad_taxels(side)
        pos = np.concatenate([p.positions for p in pads])
        pad = np.repeat(np.arange(len(pads)), [len(p.positions) for p in pads])
        return cls(specs, pos, pad, seed=seed)

    @classmethod
    def from_file(cls, path: str | Path, side: str = "right", *, seed: int = 0) -> SensorModel:
        return cls.for_hand(load_sensor_specs(path), side, seed=seed)

    # -- episode ----------------------------------------------------------------------------------
    def reset(self, seed: int) -> None:
        """Start an episode: draw the ranged parameters, the dead taxels, the initial bias; clear
        the lag, hysteresis and latency states."""
        self.rng = np.random.default_rng(seed)
        drawn = {}
        defaults = SensorParams()
        for f in fields(SensorParams):
            v = self.specs.get(f.name, getattr(defaults, f.name))
            drawn[f.name] = float(v) if _is_fixed(v) else float(self.rng.uniform(v[0], v[1]))
        self.params = p = SensorParams(**drawn)
        n = len(self.positions)
        self.shape = (n, 3)
        self.dead = np.zeros(n, dtype=bool)
        self.dead[self.rng.choice(n, int(round(p.dead_fraction * n)), replace=False)] = True
        self.bias = self.rng.normal(0.0, p.bias_initial, self.shape) if p.bias_initial > 0 else np.zeros(self.shape)
        d = np.linalg.norm(self.positions[:, None] - self.positions[None], axis=2)
        near = (d <= p.crosstalk_radius) & (self.taxel_pad[:, None] == self.taxel_pad[None]) & (d > 0)
        self.mix = np.eye(n) + p.crosstalk * near if p.crosstalk > 0 else None
        self.alpha = 1.0 - math.exp(-self.frame_s / p.time_constant) if p.time_constant > 0 else 1.0
        self.delay = int(round(p.latency / self.frame_s))
        self.queue = np.zeros((self.delay,) + self.shape)
        self.head = 0
        self.play: np.ndarray | None = None  # hysteresis state (play operator output)
        self.lagged: np.ndarray | None = None  # first-order lag state

    # -- per frame --------------------------------------------------------------------------------
    def apply(self, forces: np.ndarray) -> np.ndarray:
        """The measured (176, 3) float32 output for this frame's ideal taxel forces [N]."""
        p = self.params
        x = np.asarray(forces, dtype=np.float64)
        if x.shape != self.shape:
            raise ValueError(f"sensor model: forces must have shape {self.shape}, got {x.shape}")
        if self.mix is not None:
            x = self.mix @ x
        if p.hysteresis > 0:
            self.play = x.copy() if self.play is None else np.clip(self.play, x - p.hysteresis, x + p.hysteresis)
            x = self.play
        if self.alpha < 1.0:
            self.lagged = x.copy() if self.lagged is None else self.lagged + self.alpha * (x - self.lagged)
            x = self.lagged
        if self.delay:
            out = self.queue[self.head].copy()
            self.queue[self.head] = x
            self.head = (self.head + 1) % self.delay
            x = out
        if p.bias_drift > 0:
            self.bias += self.rng.normal(0.0, p.bias_drift * math.sqrt(self.frame_s), self.shape)
        y = x + self.bias
        if p.noise_std > 0:
            y = y + self.rng.normal(0.0, p.noise_std, self.shape)
        if math.isfinite(p.saturation):
            y = np.clip(y, -p.saturation, p.saturation)
        if p.quantisation > 0:
            y = np.round(y / p.quantisation) * p.quantisation
        if self.dead.any():
            y[self.dead] = 0.0
        return y.astype(np.float32)


#: Limits of a sensor-model file: its size [bytes], its JSON nesting, and per parameter the
#: largest value a file may give (latency: its frames are buffered, 1 s = 100 frames).
FILE_MAX_BYTES = 1 << 20
FILE_MAX_DEPTH = 16
FILE_MAX_VALUE = {"latency": 1.0}


# everything but brackets (strings are not parsed: brackets inside one count too, an
# over-estimate that only a string of 16 nested brackets could trip)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")


#: The name that stands for the shipped example model wherever a sensor-model file is asked for
#: (a file of that name in the working directory is given as `./example`).
EXAMPLE_NAME = "example"
_EXAMPLE_RESOURCE = "sensor_model_example.json"


def example_path() -> Path:
    """The shipped example sensor model (package data) as a file path."""
    resource = resources.files(__package__).joinpath(_EXAMPLE_RESOURCE)
    if not resource.is_file():
        raise ProducerError(f"the package's example sensor model ({_EXAMPLE_RESOURCE}) is missing from "
                            f"{resources.files(__package__)}: a broken install, reinstall the package")
    return Path(str(resource))


def example_text() -> str:
    """The shipped example sensor model, as JSON text (UTF-8)."""
    return example_path().read_text(encoding="utf-8")


def sensor_model_path(path: str | Path) -> Path:
    """`path`, or the shipped example's for `EXAMPLE_NAME`."""
    return example_path() if str(path) == EXAMPLE_NAME else Path(path)


def load_sensor_specs(path: str | Path) -> dict[str, float | tuple[float, float]]:
    """Parameter specs from a sensor-model JSON file (format in the module docstring; `"example"`:
    the shipped example). A file larger than `FILE_MAX_BYTES`, not UTF-8 text, nested deeper than
    `FILE_MAX_DEPTH` or giving a parameter beyond `FILE_MAX_VALUE` is refused with a
    `ProducerError` naming the key and limit."""
    path = sensor_model_path(path)
    where = f"sensor model file {str(path)!r}"
    try:
        size = path.stat().st_size
        if size > FILE_MAX_BYTES:
            raise ProducerError(f"{where} is {size} bytes, larger than the {FILE_MAX_BYTES >> 20} MiB a sensor "
                                "model file may be")
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ProducerError(f"{where} does not exist") from None
    except OSError as exc:
        raise ProducerError(f"{where}: cannot read it ({exc.strerror})") from None
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise ProducerError(f"{where} is UTF-16 text; save it as UTF-8")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProducerError(f"{where} is not UTF-8 text (byte {exc.start} is 0x{raw[exc.start]:02x}): "
                            "not a JSON sensor model") from None
    depth = deepest = 0
    for ch in _NOT_BRACKETS.sub("", text):  # nesting counted before parsing (no RecursionError)
        depth += 1 if ch in "[{" else -1
        deepest = max(deepest, depth)
        if deepest > FILE_MAX_DEPTH:
            raise ProducerError(f"{where}: JSON nested more than {FILE_MAX_DEPTH} levels deep (a sensor model "
                                "needs 3)")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProducerError(f"{where}: not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
        raise ProducerError(f"{where}: 'format' must be {FORMAT_NAME!r}")
    if doc.get("version") != FORMAT_VERSION:
        raise ProducerError(f"{where}: unsupported version {doc.get('version')!r} (this reader: {FORMAT_VERSION})")
    params = doc.get("parameters")
    if not isinstance(params, dict):
        raise ProducerError(f"{where}: 'parameters' must be an object")
    specs: dict[str, float | tuple[float, float]] = {}
    for name, entry in params.items():
        if name not in UNITS:
            raise ProducerError(f"{where}: unknown parameter {name!r}; known: {', '.join(sorted(UNITS))}")
        if not isinstance(entry, dict) or entry.get("unit") != UNITS[name]:
            raise ProducerError(f"{where}: parameter {name!r} needs \"unit\": {UNITS[name]!r}, "
                                f"got {entry.get('unit') if isinstance(entry, dict) else entry!r}")
        if ("value" in entry) == ("range" in entry):
            raise ProducerError(f"{where}: parameter {name!r} needs exactly one of 'value' or 'range'")
        try:
            if "value" in entry:
                specs[name] = float(entry["value"])
            else:
                lo, hi = entry["range"]
                specs[name] = (float(lo), float(hi))
        except (TypeError, ValueError):
            raise ProducerError(f"{where}: parameter {name!r}: 'value' must be a number, 'range' [lo, hi]") from None
        spec = specs[name]
        top = spec if isinstance(spec, float) else spec[1]
        limit = FILE_MAX_VALUE.get(name)
        if limit is not None and not top <= limit:
            raise ProducerError(f"{where}: parameter {name!r}: {top:g} {UNITS[name]} is more than the {limit:g} "
                                f"{UNITS[name]} a sensor model file may give")
    try:
        SensorModel(specs, np.zeros((1, 3)), np.zeros(1))   # range and bound checks
    except ValueError as exc:
        raise ProducerError(f"{where}: {exc}") from None
    return specs


__all__ = ["SensorModel", "SensorParams", "load_sensor_specs", "UNITS", "FORMAT_NAME", "FORMAT_VERSION"]
