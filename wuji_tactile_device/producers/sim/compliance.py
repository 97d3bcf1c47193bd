"""MuJoCo's contact compliance for the pads, derived from the elastomer layer (docs/sim.md).

The distributed contact model reads the pad as a thin bonded layer (Winkler foundation):
p = K·u, K = E_c / h (`contact_model.STIFFNESS`), so a body pressed into the pad with normal
force F sinks by the approach δ(F) that makes Σ A·K·max(δ − g, 0) = F. MuJoCo's soft contact
instead settles where its reference acceleration balances the solver's regulariser:

    F = K_ref · d(r)² · r / (Â · (1 − d(r))),

r the penetration, d(r) the impedance (`solimp`), Â the constraint's diagonal approximation — the
sum of the two bodies' translational `body_invweight0` (a constant of the pair, fixed at compile
time) — and K_ref the reference stiffness (`solref` given directly as (−K_ref·d_max², −B·d_max)).
Because Â holds the object's inverse mass, one geom-level stiffness makes the penetration depend
on the object's mass. Here every (distal segment, object geom) pair is an explicit contact pair
whose K_ref is set from that pair's Â after compiling, so the penetration MuJoCo solves at the
reference load `REFERENCE_FORCE` equals the layer's indentation there, whatever the object's mass.

The layer's indentation for the pair's shape (its curvature against the pad cylinder of radius
R_p, the pad's cylindrical length L) on a Winkler layer:
- sphere / ellipsoid (radius R; an ellipsoid by its smallest semi-axis) and cylinder / capsule
  across the finger (point contacts): F = K·π·√(R₁R₂)·δ², R₁ = R, 1/R₂ = 1/R + 1/R_p (sphere) or
  R₁ = R_p, R₂ = R (crossed cylinders);
- box / plane (a flat face): F = K·π·R_p·δ², the face meeting the pad's curvature in both
  directions. A face exactly parallel to the pad cylinder would make a line contact
  (F = K·L·(4/3)·√(2R_p)·δ^{3/2}, L the pad's length, ≈ 3× stiffer at 0.5 N), but a tilt of a
  fraction of a degree — the pad's own deflection under load — already lifts one end: the flat
  pads of the scenarios load as the point contact (measured, docs/sim.md).

The impedance rises linearly from `SOLIMP[0]` = 0.85 to `SOLIMP[1]` = 0.9999 over a width equal
to the layer's thickness: the contact stiffens as it sinks (F ∝ r·d²/(1 − d): ≈ 1.6× the secant
stiffness at half the thickness, 30× at 90 %) and past the thickness it is ≈ 2000× stiffer than at
first touch, so a body cannot sink through the layer (≈ 1.5 mm at 20 N where MuJoCo's default
contact sinks 8 mm). Damping: B = 2·√K_ref (critical in MuJoCo's reference dynamics, as its own positive solref).
"""
from __future__ import annotations

from collections.abc import Sequence

import mujoco
import numpy as np

from ...hands.wuji_hand2 import hand_kinematics
from .contact_model import LAYER_THICKNESS, STIFFNESS
from .model import distal_geometry
from .taxels import PAD_BOUNDARY, PAD_TOP_Z

#: Load [N] at which MuJoCo's penetration is matched to the layer's indentation exactly.
REFERENCE_FORCE = 0.5
#: Damping of the friction rows as a share of the normal row's. With MuJoCo's elliptic cone a
#: sliding contact's friction rows (reference acceleration −B·v_t) push the surfaces apart: at
#: the normal row's B the slip scenario's 0.3 N contact slid at 0.035 mm median penetration
#: (static: 0.23 mm) and lost contact in single frames; at 0.2·B it slides at 0.18–0.23 mm.
FRICTION_DAMPING_SHARE = 0.5
#: solimp of the pad contacts: (d0, d_width, width = layer thickness [m], midpoint, power).
SOLIMP = (0.85, 0.9999, LAYER_THICKNESS, 0.5, 1.0)

_G = mujoco.mjtGeom
_POINT_CONTACT = {int(_G.mjGEOM_SPHERE), int(_G.mjGEOM_ELLIPSOID), int(_G.mjGEOM_CYLINDER), int(_G.mjGEOM_CAPSULE)}


def impedance(r: np.ndarray | float, solimp: Sequence[float] | None = None) -> np.ndarray:
    """MuJoCo's impedance d(r) for penetration `r` [m] (its solimp sigmoid; default `SOLIMP`)."""
    d0, dw, width, mid, power = SOLIMP if solimp is None else solimp
    x = np.clip(np.asarray(r, dtype=np.float64) / width, 0.0, 1.0)
    lo = x ** power / mid ** (power - 1)
    hi = 1.0 - (1.0 - x) ** power / (1.0 - mid) ** (power - 1)
    y = np.where(x <= mid, lo, hi)
    return d0 + y * (dw - d0)


def layer_indentation(geom_type: int, size: np.ndarray, pad_radius: float, pad_length: float,
                      force: float | np.ndarray, stiffness: float = STIFFNESS, *,
                      line_contact: bool = False) -> np.ndarray:
    """The Winkler layer's approach δ [m] under normal `force` [N] for an object of MuJoCo
    `geom_type`/`size` [m] on the pad (cylinder radius `pad_radius`, length `pad_length` [m]);
    `line_contact`: a flat face exactly parallel to the pad's cylinder (else its point contact)."""
    f = np.asarray(force, dtype=np.float64)
    t = int(geom_type)
    if t in _POINT_CONTACT:
        if t == int(_G.mjGEOM_ELLIPSOID):
            r = float(np.min(size[:3]))
        else:
            r = float(size[0])
        if t in (int(_G.mjGEOM_SPHERE), int(_G.mjGEOM_ELLIPSOID)):
            r1, r2 = r, 1.0 / (1.0 / r + 1.0 / pad_radius)
        else:
            r1, r2 = pad_radius, r
        return np.sqrt(f / (stiffness * np.pi * np.sqrt(r1 * r2)))
    if line_contact:
        return (f / (stiffness * pad_length * (4.0 / 3.0) * np.sqrt(2.0 * pad_radius))) ** (2.0 / 3.0)
    return np.sqrt(f / (stiffness * np.pi * pad_radius))      # flat face on the pad's curvature


def reference_stiffness(inv_weight: float, indentation: float, force: float = REFERENCE_FORCE,
                        solimp: Sequence[float] | None = None) -> float:
    """K_ref [1/s²] that makes MuJoCo's static penetration under `force` [N] equal `indentation`
    [m] for a pair whose diagonal approximation is `inv_weight` [1/kg]."""
    d = float(impedance(indentation, solimp))
    return force * inv_weight * (1.0 - d) / (d * d * indentation)


def add_pad_pairs(spec: mujoco.MjSpec, side: str, object_geoms: Sequence[str]) -> list[tuple[str, str]]:
    """Make every (distal segment, object-body geom) contact an explicit pair (the bodies' dynamic
    contacts excluded) with the layer's solimp; the stiffness is set after compiling
    (`set_pad_stiffness`). Returns the (distal geom, object geom) names of the pairs added."""
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
                              solimp=list(SOLIMP), solref=[-1.0, -1.0])
                pairs.append((pad_geom.name, g.name))
    return pairs


def set_pad_stiffness(model: mujoco.MjModel, side: str) -> None:
    """Set each pad pair's solref from its bodies' `body_invweight0` and the layer's indentation
    at `REFERENCE_FORCE` for the object's shape (no-op for models without pad pairs)."""
    prefix = "pad:"
    for i in range(model.npair):
        name = model.pair(i).name
        if not name.startswith(prefix):
            continue
        g1, g2 = int(model.pair_geom1[i]), int(model.pair_geom2[i])
        finger = next(f.finger for f in hand_kinematics(side).fingers if name.startswith(f"{prefix}{f.links[3].body}:"))
        geo = distal_geometry(side, finger)
        pad_length = (PAD_TOP_Z - PAD_BOUNDARY) - geo.z_bottom
        delta = float(layer_indentation(model.geom_type[g2], model.geom_size[g2], geo.radius, pad_length, REFERENCE_FORCE))
        inv_w = float(model.body_invweight0[model.geom_bodyid[g1], 0] + model.body_invweight0[model.geom_bodyid[g2], 0])
        k = reference_stiffness(inv_w, delta)
        dmax = SOLIMP[1]
        model.pair_solref[i] = (-k * dmax * dmax, -2.0 * np.sqrt(k) * dmax)
        model.pair_solreffriction[i] = (-k * dmax * dmax, -FRICTION_DAMPING_SHARE * 2.0 * np.sqrt(k) * dmax)


__all__ = ["REFERENCE_FORCE", "SOLIMP", "FRICTION_DAMPING_SHARE", "impedance", "layer_indentation", "reference_stiffness",
           "add_pad_pairs", "set_pad_stiffness"]
