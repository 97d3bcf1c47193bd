"""Distributed contact: a pressure field over each pad from the contact geometry (vectorised).

The pad is a compliant layer of thickness `LAYER_THICKNESS` bonded to the rigid distal capsule. A
thin bonded layer behaves as a Winkler foundation: the pressure at a surface point is proportional
to the local compression, p = K·u, K = E_c / h (E_c the layer's confined modulus, h its thickness).

Per frame and per (pad, object geom) pair in contact (several solver contacts of one pair are one
footprint):
1. g(x) ≥ 0: the gap between each quadrature point x of the pad (the valid pixels of the pad's
   force-image grid, each with its surface area A) and the object, from the object's analytic
   signed distance function (sphere, capsule, cylinder, box, plane, ellipsoid), relative to the
   pad's closest point: g = sdf(x) − min sdf.
2. The approach δ of the undeformed surfaces solves Σ A·K·max(δ − g, 0) = F_n exactly (F_n the
   solver's normal force of the pair): sort g, cumulative sums, first segment that holds the load.
3. Each point carries the weight w = A·max(δ − g, 0) / Σ A·max(δ − g, 0); the pair's whole force
   vector (normal and friction, from the solver) is spread by these weights, so every axis of the
   pad's total equals the solver's resultant exactly (traction ∝ pressure).
4. The field is solved on the 0.5 mm image grid (`field`); the images are that field, and a
   taxel reads it carried through the elastomer to its sensitive area (`sensing.py`): one
   solution for taxels, images and resultants.

For a sphere of radius R_s on the cylindrical pad (radius R_p) the gap is g ≈ x²/2R₁ + y²/2R₂ with
R₁ = R_s (along the finger), 1/R₂ = 1/R_s + 1/R_p, so the footprint is an ellipse of area
A_c = 2π√(R₁R₂)·δ and F_n = K·π√(R₁R₂)·δ², i.e. A_c = 2·√(π√(R₁R₂)·F_n / K) ∝ F_n^½.
"""
from __future__ import annotations

from typing import NamedTuple

import mujoco
import numpy as np

from ...errors import ProducerError
from .contact_kernel import KERNEL
from .sensing import pixel_influence
from .taxels import IMAGE_SHAPE, PadTaxels

#: Layer thickness [m] and confined modulus [Pa] of the pad's elastomer; K = E_c / h [N/m³].
LAYER_THICKNESS = 0.002
CONFINED_MODULUS = 0.3e6
STIFFNESS = CONFINED_MODULUS / LAYER_THICKNESS
#: Quadrature for the taxels: every `TAXEL_GRID_STEP`-th image pixel in both directions (1 mm).
TAXEL_GRID_STEP = 2
_vecdot = getattr(np, "vecdot", lambda a, b: np.einsum("...i,...i->...", a, b))
_matvec = getattr(np, "matvec", lambda m, v: np.einsum("...ij,...j->...i", m, v))
_FAR = 1.0  # [m] signed distance given to padding points (never inside a footprint)
_MIN_VOLUME = 1e-24  # [m³] keeps the closest point active when the normal force is 0

_G = mujoco.mjtGeom
SUPPORTED_TYPES = {int(_G.mjGEOM_PLANE): "plane", int(_G.mjGEOM_SPHERE): "sphere",
                   int(_G.mjGEOM_CAPSULE): "capsule", int(_G.mjGEOM_ELLIPSOID): "ellipsoid",
                   int(_G.mjGEOM_CYLINDER): "cylinder", int(_G.mjGEOM_BOX): "box"}


def signed_distance(geom_type: int, size: np.ndarray, p: np.ndarray) -> np.ndarray:
    """(P, M) signed distance [m] of points `p` (P, 3, M) — coordinate-major, in each geom's own
    frame — to geoms of one MuJoCo type with sizes `size` (P, 3); negative inside. The
    ellipsoid's is the usual first-order estimate (exact on its axes). Coordinate-major because
    reductions over a contiguous length-3 axis cost far more than row operations."""
    s = size[:, :, None]
    if geom_type == _G.mjGEOM_PLANE:
        return p[:, 2]
    if geom_type == _G.mjGEOM_SPHERE:
        return np.sqrt((p * p).sum(axis=1)) - s[:, 0]
    if geom_type == _G.mjGEOM_CAPSULE:
        q = p.copy()
        q[:, 2] -= np.clip(p[:, 2], -s[:, 1], s[:, 1])
        return np.sqrt((q * q).sum(axis=1)) - s[:, 0]
    if geom_type == _G.mjGEOM_CYLINDER:
        d0 = np.hypot(p[:, 0], p[:, 1]) - s[:, 0]
        d1 = np.abs(p[:, 2]) - s[:, 1]
        return np.minimum(np.maximum(d0, d1), 0.0) + np.hypot(np.maximum(d0, 0.0), np.maximum(d1, 0.0))
    if geom_type == _G.mjGEOM_BOX:
        q = np.abs(p) - s
        inside = np.minimum(q.max(axis=1), 0.0)
        np.maximum(q, 0.0, out=q)
        return np.sqrt((q * q).sum(axis=1)) + inside
    if geom_type == _G.mjGEOM_ELLIPSOID:
        return _ellipsoid_distance(s, p)
    raise ValueError(f"no signed distance for MuJoCo geom type {geom_type}")


#: Newton steps of the ellipsoid distance: 6 reach 1e-13 m from the starting bound (checked on
#: 20 000 points in and around a 4 × 7 × 3 mm ellipsoid), 8 leave a margin.
ELLIPSOID_ITERATIONS = 8


def _ellipsoid_distance(s: np.ndarray, p: np.ndarray) -> np.ndarray:
    """(P, M) exact signed distance [m] to ellipsoids of semi-axes `s` (P, 3, 1) of points `p`
    (P, 3, M). The closest surface point is x_i = s_i²·p_i / (t + s_i²) with t the root of
    Σ (s_i·p_i / (t + s_i²))² = 1 on t > −min s_i² (t > 0 outside, < 0 inside); the distance is
    |t|·‖p / (t + s²)‖. Newton on 1/‖q(t)‖ − 1 (linear in t for a sphere) from the lower bound
    t ≥ max_i(s_i|p_i| − s_i²). Not exact only on the ellipsoid's inner medial set (points deep
    inside, on the plane of its shortest axis, whose closest point is not unique; the centre
    reads 0 instead of −min s): no pad reaches that depth."""
    s2 = s * s
    lo = -s2.min(axis=1, keepdims=True) * (1.0 - 1e-12)
    t = np.maximum(np.max(s * np.abs(p) - s2, axis=1, keepdims=True), lo)
    sp = s * p
    for _ in range(ELLIPSOID_ITERATIONS):
        den = t + s2
        q = sp / den
        q2 = q * q
        r2 = q2.sum(axis=1, keepdims=True)
        r = np.sqrt(r2)
        # g = 1/r − 1, g' = (Σ q²/den) / r³: the step (1/r − 1)·r³ / Σ q²/den = (1 − r)·r² / Σ q²/den
        t = np.maximum(t - (1.0 - r) * r2 / np.maximum((q2 / den).sum(axis=1, keepdims=True), 1e-300), lo)
    u = p / (t + s2)
    return t[:, 0] * np.sqrt((u * u).sum(axis=1))


def _row_offsets(P: int, M: int) -> np.ndarray:
    """Flat offsets of the rows of a (P, M) array."""
    return np.arange(0, P * M, M)


class _Quadrature(NamedTuple):
    """Quadrature points of the five pads, padded to M per pad (padding: area 0, never active)."""

    points: np.ndarray   # (5, M, 3) distal frame [m]
    points_h: np.ndarray  # (5, 4, M) the same, homogeneous (x, y, z, 1), coordinate-major
    area: np.ndarray     # (5, M) surface area [m²]
    cell: np.ndarray     # (5, M) index of the receiving cell (taxel slot 0..39, or pixel 0..1535)


def _quadrature(pads: tuple[PadTaxels, ...], step: int, to_pixels: bool) -> _Quadrature:
    rows, cols = IMAGE_SHAPE
    r_idx = np.arange(step // 2, rows, step)
    c_idx = np.arange(step // 2, cols, step)
    per_pad = []
    for pad in pads:
        g = pad.geometry
        dz = abs(((g.z_bottom - g.radius) - (-0.006)) / rows) * step
        dx = 2 * g.radius / cols * step
        pts = pad.pixel_positions[np.ix_(r_idx, c_idx)]
        valid = pad.pixel_valid[np.ix_(r_idx, c_idx)]
        flat_index = (r_idx[:, None] * cols + c_idx[None, :])[valid]
        p = pts[valid]
        # Surface normal of the capsule at the point (cylinder part or tip cap) → area dx·dz/|n_y|.
        c = np.stack([np.zeros(len(p)), np.zeros(len(p)), np.maximum(p[:, 2], g.z_bottom)], axis=1)
        n = (p - c) / g.radius
        area = dx * dz / np.abs(n[:, 1])
        if to_pixels:
            cell = flat_index
        else:
            d2 = ((p[:, None, :] - pad.positions[None, :, :]) ** 2).sum(axis=2)
            cell = d2.argmin(axis=1)
        per_pad.append((p, area, cell))
    m = max(len(p) for p, _, _ in per_pad)
    points = np.full((5, m, 3), _FAR)
    area = np.zeros((5, m))
    cell = np.zeros((5, m), dtype=np.int64)
    for k, (p, a, c) in enumerate(per_pad):
        points[k, :len(p)], area[k, :len(p)], cell[k, :len(p)] = p, a, c
    points_h = np.ascontiguousarray(np.concatenate([points, np.ones((5, m, 1))], axis=2).transpose(0, 2, 1))
    return _Quadrature(points, points_h, area, cell)


class DistributedContact:
    """The distributed contact model of one hand (see the module docstring).

    `object_geoms`: ids of the measured object geoms; all must be of a supported primitive type.
    `backend`: "numba" (compiled kernel, when numba is installed: the default then) or "numpy"
    (the reference; the same result to rounding)."""

    def __init__(self, model: mujoco.MjModel, pads: tuple[PadTaxels, ...], distal_bodies: np.ndarray,
                 object_geoms: np.ndarray, *, stiffness: float = STIFFNESS, taxel_grid_step: int = TAXEL_GRID_STEP,
                 backend: str | None = None):
        if backend is None:
            backend = "numba" if KERNEL is not None else "numpy"
        if backend not in ("numba", "numpy"):
            raise ValueError(f"distributed contact: backend must be 'numba' or 'numpy', got {backend!r}")
        if backend == "numba" and KERNEL is None:
            raise ValueError("distributed contact: backend 'numba' needs numba (pip install 'wuji-tactile-device[fast]')")
        self.backend = backend
        if not stiffness > 0:
            raise ValueError(f"distributed contact: stiffness must be > 0 N/m³, got {stiffness}")
        if taxel_grid_step < 1:
            raise ValueError(f"distributed contact: taxel_grid_step must be ≥ 1, got {taxel_grid_step}")
        bad = [int(g) for g in object_geoms if int(model.geom_type[g]) not in SUPPORTED_TYPES]
        if bad:
            names = [f"{mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g) or g} "
                     f"({mujoco.mjtGeom(int(model.geom_type[g])).name})" for g in bad]
            raise ProducerError(f"sim: distributed contact needs primitive object geoms "
                                f"({', '.join(sorted(SUPPORTED_TYPES.values()))}); unsupported: {', '.join(names)}")
        self.model = model
        self.stiffness = float(stiffness)
        self.distal_bodies = distal_bodies
        self.object_geoms = np.asarray(object_geoms, dtype=np.int64)
        self.taxel_quad = _quadrature(pads, taxel_grid_step, to_pixels=False)
        self.pixel_quad = _quadrature(pads, 1, to_pixels=True)
        self.slots = max(len(p.positions) for p in pads)
        self._types = np.unique(model.geom_type[self.object_geoms])
        self._pair_stride = model.ngeom
        self._cell_offsets = (np.arange(64) * self.slots)[:, None]     # per-pair cell blocks
        self._pad_onehot = np.eye(5)
        self._geom_type = model.geom_type.astype(np.int64)
        self._no_level = np.full(64, np.nan)
        self.influence = pixel_influence()[:, :self.slots]     # (5, slots, 48·32)
        # The same restricted to each pad's quadrature points (padding points: zero columns).
        q = self.pixel_quad
        self._influence_q = np.ascontiguousarray(np.stack(
            [self.influence[k][:, q.cell[k]] * (q.area[k] > 0) for k in range(5)]))  # (5, slots, M)

    # -- per frame --------------------------------------------------------------------------------
    def pairs(self, pad: np.ndarray, geom: np.ndarray, f_loc: np.ndarray, f_normal: np.ndarray):
        """Group contacts into (pad, object geom) pairs: pair pad (P,), geom (P,), force ON the pad
        (P, 3) in the distal frame [N], normal force (P,) [N]."""
        key = pad * self._pair_stride + geom
        keys = key.tolist()
        if len(set(keys)) == len(keys):      # the common case: one contact per pair
            return pad, geom, f_loc, f_normal
        uniq, inv = np.unique(key, return_inverse=True)
        onehot = (inv[None, :] == np.arange(len(uniq))[:, None]).astype(np.float64)   # (P, C)
        return uniq // self._pair_stride, uniq % self._pair_stride, onehot @ f_loc, onehot @ f_normal

    def weights(self, data: mujoco.MjData, quad: _Quadrature, pad: np.ndarray, geom: np.ndarray,
                f_normal: np.ndarray, level: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Unnormalised weights (P, M) = A·max(λ − sdf, 0) of each quadrature point, their row
        sums (P,) and the level λ (P,) [m] — λ = δ + min sdf, the same equation as for δ without
        forming the gap — solved on this quadrature unless `level` is given."""
        local = self._transforms(data, pad, geom) @ quad.points_h.take(pad, axis=0)   # (P, 3, M)
        sdf = self._sdf(geom, local)       # padding points sit ≥ 1 m away: never in a footprint
        area = quad.area.take(pad, axis=0)
        lam = self._level(sdf, area, f_normal * (1.0 / self.stiffness) + _MIN_VOLUME) if level is None else level
        w = np.maximum(lam[:, None] - sdf, 0.0)
        w *= area
        return w, w.sum(axis=1), lam

    def _transforms(self, data: mujoco.MjData, pad: np.ndarray, geom: np.ndarray) -> np.ndarray:
        """(P, 3, 4) distal → object-geom affine maps [A | b] (homogeneous points in one product)."""
        body = self.distal_bodies.take(pad)
        Rd = data.xmat.take(body, axis=0).reshape(-1, 3, 3)
        RgT = data.geom_xmat.take(geom, axis=0).reshape(-1, 3, 3).transpose(0, 2, 1)
        T = np.empty((len(pad), 3, 4))
        T[:, :, :3] = RgT @ Rd
        T[:, :, 3] = _matvec(RgT, data.xpos.take(body, axis=0) - data.geom_xpos.take(geom, axis=0))
        return T

    def _kernel(self, data, quad: _Quadrature, cells_per_pad: int, pad, geom, force, f_normal, level=None):
        """The compiled path: (cells, 3) forces and the level per pair."""
        out = np.zeros((5 * cells_per_pad, 3))
        volume = f_normal * (1.0 / self.stiffness) + _MIN_VOLUME
        lam = KERNEL(quad.points_h, quad.area, quad.cell, cells_per_pad, pad, geom, self.distal_bodies,
                     data.xmat, data.xpos, data.geom_xmat, data.geom_xpos, self._geom_type, self.model.geom_size,
                     volume, (self._no_level[:len(pad)] if len(pad) <= len(self._no_level) else
                              np.full(len(pad), np.nan)) if level is None else level, force, out)
        return out, lam

    def _sdf(self, geom: np.ndarray, local: np.ndarray) -> np.ndarray:
        size = self.model.geom_size.take(geom, axis=0)
        if len(self._types) == 1:
            return signed_distance(int(self._types[0]), size, local)
        types = self.model.geom_type.take(geom)
        out = np.empty((local.shape[0], local.shape[2]))
        for t in np.unique(types):
            sel = types == t
            out[sel] = signed_distance(int(t), size[sel], local[sel])
        return out

    @staticmethod
    def _level(sdf: np.ndarray, area: np.ndarray, volume: np.ndarray) -> np.ndarray:
        """(P,) level λ with Σ area·max(λ − sdf, 0) = volume [m³], exactly (the left side is
        piecewise linear and increasing in λ: sort, cumulative sums, first segment that holds
        `volume` > 0)."""
        P, M = sdf.shape
        order = np.argsort(sdf, axis=1)
        order += _row_offsets(P, M)[:, None]
        s = sdf.take(order)
        a = area.take(order)
        ca = np.cumsum(a, axis=1)
        cas = np.cumsum(a * s, axis=1)
        # Volume when λ reaches the next level with the first m points active.
        at_next = s[:, 1:] * ca[:, :-1] - cas[:, :-1]
        m = (at_next < volume[:, None]).sum(axis=1) + _row_offsets(P, M)   # increasing: count = first ≥
        return (volume + cas.take(m)) / ca.take(m)

    def field(self, data, pad, geom, f_loc, f_normal) -> tuple[np.ndarray, np.ndarray]:
        """The contact's surface traction field: (5, 48·32, 3) force ON each pad's image pixels
        [N] in the distal frame (the pressure field A·max(λ − sdf, 0) of each pair, λ solved on
        this 0.5 mm grid, normalised and times the pair's force), and each pair's level λ (P,) [m].
        Taxels, images and resultants all come from this one solution."""
        q = self.pixel_quad
        npx = IMAGE_SHAPE[0] * IMAGE_SHAPE[1]
        if self.backend == "numba":
            out, lam = self._kernel(data, q, npx, pad, geom, f_loc, f_normal)
            return out.reshape(5, npx, 3), lam
        w, total, lam = self.weights(data, q, pad, geom, f_normal)
        w /= total[:, None]
        cell = q.cell.take(pad, axis=0) + (pad * npx)[:, None]                  # (P, M) stacked pixel
        index = cell[:, :, None] * 3 + _AXES                                      # (P, M, 3)
        values = w[:, :, None] * f_loc[:, None, :]
        return np.bincount(index.ravel(), values.ravel(), 15 * npx).reshape(5, npx, 3), lam

    def taxel_slots(self, field: np.ndarray) -> np.ndarray:
        """(5 · slots, 3) force ON each pad's taxel slots [N] (distal frame): the field carried
        through the elastomer to each taxel's sensitive area (`sensing.py`)."""
        return np.matmul(self.influence, field).reshape(-1, 3)

    def taxel_slot_forces(self, data, pad, geom, f_loc, f_normal) -> tuple[np.ndarray, np.ndarray]:
        """(5 · slots, 3) force ON each pad's taxel slots [N] in the distal frame, and each
        pair's level λ (P,) [m]: `taxel_slots(field(...))`, computed without forming the
        three-axis field when each pad has one pair (numpy backend; the same to rounding)."""
        if self.backend == "numba" or len(np.unique(pad)) != len(pad):
            f, lam = self.field(data, pad, geom, f_loc, f_normal)
            return self.taxel_slots(f), lam
        w, total, lam = self.weights(data, self.pixel_quad, pad, geom, f_normal)
        wfull = np.zeros((5, w.shape[1], 1))
        wfull[pad, :, 0] = w / total[:, None]
        share = np.matmul(self._influence_q, wfull)                 # (5, slots, 1) share per slot
        force = np.zeros((5, 1, 3))
        force[pad, 0] = f_loc
        return (share * force).reshape(-1, 3), lam

    def images(self, data, pad, geom, f_pad, f_normal, level: np.ndarray | None = None) -> np.ndarray:
        """(5, 3, 48, 32) pad-frame force images [N/pixel]: the field on the full 0.5 mm grid
        (`f_pad`: the pairs' forces in the pad frame; `level` is ignored: the field solves its own)."""
        f, _ = self.field(data, pad, geom, f_pad, f_normal)
        return self.images_of(f, np.eye(3))

    @staticmethod
    def images_of(field: np.ndarray, pad_rotation: np.ndarray) -> np.ndarray:
        """(5, 3, 48, 32) images [N/pixel] of a `field` (5, 48·32, 3), axes turned by
        `pad_rotation` (columns: pad axes in the field's frame)."""
        return (field @ pad_rotation).transpose(0, 2, 1).reshape((5, 3) + IMAGE_SHAPE)


_AXES = np.arange(3)


__all__ = ["DistributedContact", "signed_distance", "STIFFNESS", "LAYER_THICKNESS", "CONFINED_MODULUS",
           "TAXEL_GRID_STEP", "SUPPORTED_TYPES"]
