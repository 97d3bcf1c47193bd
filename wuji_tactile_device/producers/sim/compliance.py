"""MuJoCo's contact compliance for the pads, derived from the elastomer layer (docs/sim.md).

The distributed contact model reads the pad as a thin bonded layer (Winkler foundation):
p = K·u, K = E_c / h (`contact_model.STIFFNESS`), so a body pressed into the pad with normal
force F sinks by the approach δ(F) that makes Σ A·K·max(δ − g, 0) = F. For the contact shapes
of a primitive on the pad cylinder (radius R_p) this is a power law F = C·δⁿ (`layer_law`):
- sphere / ellipsoid (radius R; an ellipsoid by its smallest semi-axis) and cylinder / capsule
  across the finger (point contacts, a paraboloid gap x²/2R₁ + y²/2R₂): C = K·π·√(R₁R₂), n = 2,
  R₁ = R, 1/R₂ = 1/R + 1/R_p (sphere) or R₁ = R_p, R₂ = R (crossed cylinders);
- box / plane (a flat face along the pad, a line contact of length L = the face's longer side,
  at most the pad cylinder's length): C = K·L·(4/3)·√(2R_p), n = 3/2.

MuJoCo's soft contact settles where its reference acceleration balances the solver's regulariser:

    F_c = K_ref · d(r)² · r / (Â · (1 − d(r))),

per contact, r its penetration, d(r) the impedance (`solimp`), Â the constraint's diagonal
approximation — the sum of the two bodies' translational `body_invweight0` (a constant of the
pair, fixed at compile time: it holds the object's inverse mass, so one geom-level stiffness makes
the penetration depend on the mass) — and K_ref the reference stiffness (`solref` given directly
as (−K_ref·d_max², −B·d_max)). MuJoCo's collider gives a sphere or crossed cylinder one contact,
and a flat face lying along the capsule two (one at each end of the overlap), which share the
load: `LayerLaw.contacts`.

Every (distal segment, object geom) pair is an explicit contact pair whose parameters are set
after compiling (`set_pad_stiffness`) from the pair's own Â and its shape's law so that MuJoCo's
force law touches the layer's at the reference load `REFERENCE_FORCE`: same indentation δ₀
(K_ref from F_c(δ₀) = F₀ / contacts) and same stiffness (the log-slope r·F_c′/F_c = n at δ₀). The
impedance rises from `D_FIRST_TOUCH` at first touch to `D_MAX` at the layer's thickness h along
MuJoCo's solimp curve with a small midpoint (concave: 1 − (1 − r/h)^p); its power p is what makes
the log-slope n at δ₀ (`pad_solimp`). Past δ₀ MuJoCo stiffens faster than the layer (1 − d → 10⁻⁴
at h), so a body cannot sink through the layer: the penetration saturates below h where the
layer's unbounded Winkler law passes it. Damping: B = 2·√K_ref (critical in MuJoCo's
reference dynamics, as its own positive solref).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import mujoco
import numpy as np

from ...hands.wuji_hand2 import hand_kinematics
from .contact_model import LAYER_THICKNESS, STIFFNESS
from .model import distal_geometry
from .taxels import PAD_BOUNDARY, PAD_TOP_Z

#: Load [N] at which MuJoCo's force law is matched to the layer's (indentation and stiffness).
REFERENCE_FORCE = 0.5
#: Damping of the friction rows as a share of the normal row's. With MuJoCo's elliptic cone a
#: sliding contact's friction rows (reference acceleration −B·v_t) push the surfaces apart: at
#: the normal row's B the slip scenario's contact lost contact in single frames. At 0.5 with
#: this normal law the slip scenario's stuck fraction rose once by one pixel step during the
#: drag (0.548 → 0.577); at 0.4 it falls monotonically (a sensitivity, not a derivation).
FRICTION_DAMPING_SHARE = 0.4
#: The impedance at the layer's full thickness (solimp d_max): the regulariser is 10⁻⁴·Â there.
D_MAX = 0.9999
#: The impedance at first touch (solimp d0). The solver passes a share 1 − d of the approaching
#: motion through the contact: the press scenario's guarded 12 mm/s closing hit its pads with
#: 0.078 / 0.061 / 0.050 N for d0 0.5 / 0.7 / 0.85 (linear ramps; with a ramp from ≈ 0.17:
#: 0.093 N, over its 0.075 N limit). This law as set: 0.060 N.
D_FIRST_TOUCH = 0.85
#: solimp midpoint: the ramp is concave from first touch (it rises fastest there and reaches
#: D_MAX only at the layer's thickness, with zero slope).
MIDPOINT = 0.01
#: solimp placeholder until `set_pad_stiffness` sets each pair's own.
_PLACEHOLDER_SOLIMP = (D_FIRST_TOUCH, D_MAX, LAYER_THICKNESS, 0.5, 1.0)

_G = mujoco.mjtGeom
_POINT_CONTACT = {int(_G.mjGEOM_SPHERE), int(_G.mjGEOM_ELLIPSOID), int(_G.mjGEOM_CYLINDER), int(_G.mjGEOM_CAPSULE)}


@dataclass(frozen=True)
class LayerLaw:
    """The layer's force–indentation law F = coefficient · δ^exponent [N, m] for one contact
    shape, and how many MuJoCo contacts share that force."""

    coefficient: float
    exponent: float
    contacts: int

    def indentation(self, force: float | np.ndarray) -> np.ndarray:
        """Approach δ [m] under normal `force` [N]."""
        return (np.asarray(force, dtype=np.float64) / self.coefficient) ** (1.0 / self.exponent)


def impedance(r: np.ndarray | float, solimp: Sequence[float]) -> np.ndarray:
    """MuJoCo's impedance d(r) for penetration `r` [m] (its solimp sigmoid)."""
    d0, dw, width, mid, power = solimp
    x = np.clip(np.asarray(r, dtype=np.float64) / width, 0.0, 1.0)
    lo = x ** power / mid ** (power - 1)
    hi = 1.0 - (1.0 - x) ** power / (1.0 - mid) ** (power - 1)
    y = np.where(x <= mid, lo, hi)
    return d0 + y * (dw - d0)


def mujoco_law(r: np.ndarray | float, k_ref: float, inv_weight: float, solimp: Sequence[float]) -> np.ndarray:
    """MuJoCo's static contact force [N] at penetration `r` [m]: K_ref·d²·r / (Â·(1 − d))."""
    d = impedance(r, solimp)
    return k_ref * d * d * np.asarray(r, dtype=np.float64) / (inv_weight * (1.0 - d))


def layer_law(geom_type: int, size: np.ndarray, pad_radius: float, pad_length: float,
              stiffness: float = STIFFNESS) -> LayerLaw:
    """The Winkler layer's law for an object of MuJoCo `geom_type`/`size` [m] on the pad
    (cylinder radius `pad_radius`, cylindrical length `pad_length` [m])."""
    t = int(geom_type)
    if t in _POINT_CONTACT:
        r = float(np.min(size[:3])) if t == int(_G.mjGEOM_ELLIPSOID) else float(size[0])
        if t in (int(_G.mjGEOM_SPHERE), int(_G.mjGEOM_ELLIPSOID)):
            r1, r2 = r, 1.0 / (1.0 / r + 1.0 / pad_radius)
        else:
            r1, r2 = pad_radius, r
        return LayerLaw(stiffness * np.pi * np.sqrt(r1 * r2), 2.0, 1)
    length = pad_length if t == int(_G.mjGEOM_PLANE) else min(2.0 * float(np.max(size[:3])), pad_length)
    return LayerLaw(stiffness * length * (4.0 / 3.0) * np.sqrt(2.0 * pad_radius), 1.5, 2)


def layer_indentation(geom_type: int, size: np.ndarray, pad_radius: float, pad_length: float,
                      force: float | np.ndarray, stiffness: float = STIFFNESS) -> np.ndarray:
    """The Winkler layer's approach δ [m] under normal `force` [N] (`layer_law`)."""
    return layer_law(geom_type, size, pad_radius, pad_length, stiffness).indentation(force)


def log_slope(r: float, solimp: Sequence[float]) -> float:
    """r·F′/F of MuJoCo's static law F ∝ d²·r/(1 − d) at penetration `r` [m] (inside the width):
    1 + r·d′·(2/d + 1/(1 − d))."""
    d0, dmax, width, mid, power = solimp
    x = r / width
    if x <= mid:
        dy = power * x ** (power - 1) / mid ** (power - 1)
    else:
        dy = power * (1.0 - x) ** (power - 1) / (1.0 - mid) ** (power - 1)
    d = float(impedance(r, solimp))
    return 1.0 + x * dy * (dmax - d0) * (2.0 / d + 1.0 / (1.0 - d))


@lru_cache(maxsize=256)  # a pure function of its three floats; the pairs of one shape share it
def pad_solimp(exponent: float, indentation: float, thickness: float = LAYER_THICKNESS) -> tuple[float, ...]:
    """solimp (`D_FIRST_TOUCH`, `D_MAX`, thickness, `MIDPOINT`, p) whose power p gives MuJoCo's
    static law the layer's log-slope `exponent` at penetration `indentation` [m]
    (`log_slope` = exponent; the smallest such p). Memoised: ≈ 650 scalar evaluations of
    `log_slope` (14 ms), which every pad pair of a scene repeated (25 in `press`: 0.35 s of its
    start)."""
    if not 0.0 < indentation < thickness:
        raise ValueError(f"compliance: reference indentation {indentation} m is not inside the layer (0, {thickness}) m")

    def miss(p: float) -> float:
        return log_slope(indentation, (D_FIRST_TOUCH, D_MAX, thickness, MIDPOINT, p)) - exponent

    grid = np.linspace(1.0, 60.0, 591)
    values = np.array([miss(p) for p in grid])
    change = np.flatnonzero(np.sign(values[:-1]) != np.sign(values[1:]))
    if change.size == 0:
        raise ValueError(f"compliance: no solimp power gives the log-slope {exponent} at {indentation} m "
                         f"(it spans {values.min() + exponent:.3f}-{values.max() + exponent:.3f})")
    lo, hi = float(grid[change[0]]), float(grid[change[0] + 1])
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if np.sign(miss(mid)) == np.sign(values[change[0]]):
            lo = mid
        else:
            hi = mid
    return (D_FIRST_TOUCH, D_MAX, thickness, MIDPOINT, 0.5 * (lo + hi))


def reference_stiffness(inv_weight: float, indentation: float, force: float, solimp: Sequence[float]) -> float:
    """K_ref [1/s²] that makes MuJoCo's static penetration under `force` [N] (one contact) equal
    `indentation` [m] for a pair whose diagonal approximation is `inv_weight` [1/kg]."""
    d = float(impedance(indentation, solimp))
    return force * inv_weight * (1.0 - d) / (d * d * indentation)


def add_pad_pairs(spec: mujoco.MjSpec, side: str, object_geoms: Sequence[str]) -> list[tuple[str, str]]:
    """Make every (distal segment, object-body geom) contact an explicit pair (the bodies' dynamic
    contacts excluded); stiffness and impedance are set after compiling (`set_pad_stiffness`).
    Returns the (distal geom, object geom) names of the pairs added."""
    kin = hand_kinematics(side)
    wanted = set(object_geoms)
    geoms = {g.name: g for g in spec.geoms}
    bodies: dict[str, list] = {}
    for name in object_geoms:
        g = geoms.get(name)
        if g is None:
            continue                       # HandSimulation names the missing geom after compiling
        bodies.setdefault(g.parent.name, [])
    for g in spec.geoms:                   # every collidable geom of an object body gets a pair
        if g.parent.name in bodies and (g.contype or g.conaffinity) and g.name:
            bodies[g.parent.name].append(g)
    pairs = []
    have = {p.name for p in spec.pairs}    # a spec compiled before keeps its pairs: add them once
    for f in kin.fingers:
        distal = f.links[3].body
        pad_geom = geoms[f"{distal}_collision"]
        for body, members in bodies.items():
            if any(p.startswith(f"pad:{distal}:") and p.split(":", 2)[2] in {g.name for g in members} for p in have):
                continue
            spec.add_exclude(bodyname1=distal, bodyname2=body)
            for g in members:
                if g.name not in wanted and not (g.contype & pad_geom.conaffinity or g.conaffinity & pad_geom.contype):
                    continue
                fr = np.maximum(np.asarray(pad_geom.friction), np.asarray(g.friction))
                spec.add_pair(name=f"pad:{distal}:{g.name}", geomname1=pad_geom.name, geomname2=g.name,
                              condim=max(pad_geom.condim, g.condim),
                              friction=[fr[0], fr[0], fr[1], fr[2], fr[2]],
                              margin=max(pad_geom.margin, g.margin), gap=max(pad_geom.gap, g.gap),
                              solimp=list(_PLACEHOLDER_SOLIMP), solref=[-1.0, -1.0])
                pairs.append((pad_geom.name, g.name))
    return pairs


def pair_law(model: mujoco.MjModel, side: str, pair: int) -> LayerLaw:
    """The layer's law (`layer_law`) of pad pair `pair` (its object geom on its finger's pad)."""
    name = model.pair(pair).name
    finger = next(f.finger for f in hand_kinematics(side).fingers if name.startswith(f"pad:{f.links[3].body}:"))
    geo = distal_geometry(side, finger)
    g2 = int(model.pair_geom2[pair])
    return layer_law(model.geom_type[g2], model.geom_size[g2], geo.radius, (PAD_TOP_Z - PAD_BOUNDARY) - geo.z_bottom)


def set_pad_stiffness(model: mujoco.MjModel, side: str) -> None:
    """Set each pad pair's solimp and solref from its shape's layer law and its bodies'
    `body_invweight0` (no-op for models without pad pairs)."""
    for i in range(model.npair):
        if not model.pair(i).name.startswith("pad:"):
            continue
        law = pair_law(model, side, i)
        delta = float(law.indentation(REFERENCE_FORCE))
        solimp = pad_solimp(law.exponent, delta)
        g1, g2 = int(model.pair_geom1[i]), int(model.pair_geom2[i])
        inv_w = float(model.body_invweight0[model.geom_bodyid[g1], 0] + model.body_invweight0[model.geom_bodyid[g2], 0])
        k = reference_stiffness(inv_w, delta, REFERENCE_FORCE / law.contacts, solimp)
        model.pair_solimp[i] = solimp
        model.pair_solref[i] = (-k * D_MAX * D_MAX, -2.0 * np.sqrt(k) * D_MAX)
        model.pair_solreffriction[i] = (-k * D_MAX * D_MAX, -FRICTION_DAMPING_SHARE * 2.0 * np.sqrt(k) * D_MAX)


__all__ = ["REFERENCE_FORCE", "D_MAX", "D_FIRST_TOUCH", "MIDPOINT", "FRICTION_DAMPING_SHARE", "LayerLaw", "impedance",
           "mujoco_law", "layer_law", "layer_indentation", "log_slope", "pad_solimp", "reference_stiffness",
           "add_pad_pairs", "pair_law", "set_pad_stiffness"]
