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
3. Each point carries the normal force P = |F_n|·w, w = A·max(δ − g, 0) / Σ A·max(δ − g, 0);
   the friction part F_t of the solver force is spread by stick and slip (`traction`):
   Q = min(s·A, μ·P), s solved exactly from Σ Q = |F_t| — slip starts at the rim.
4. One solution per frame (`solve`) on the 0.5 mm image grid when images are asked for, else on
   the 1 mm grid (every second pixel): the images are its field (`traction_field`; pressure
   along each point's normal, friction in its tangent plane), and a taxel reads it carried
   through the elastomer to its sensitive area (`taxel_readings`, `sensing.py`), its normal along
   its own normal and its friction in its own tangent plane; what lands beyond the sensing area
   is the pad's unsensed load (`pad_readings`), and the pad's remainder against its sensed force
   is placed inside the taxels' friction cones (`cone_spread`). Every pad's field and images sum
   to its solver force exactly, its taxels plus its unsensed load too.

For a sphere of radius R_s on the cylindrical pad (radius R_p) the gap is g ≈ x²/2R₁ + y²/2R₂ with
R₁ = R_s (along the finger), 1/R₂ = 1/R_s + 1/R_p, so the footprint is an ellipse of area
A_c = 2π√(R₁R₂)·δ and F_n = K·π√(R₁R₂)·δ², i.e. A_c = 2·√(π√(R₁R₂)·F_n / K) ∝ F_n^½.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, NamedTuple

import mujoco
import numpy as np

from ...contract.extensions import load_extension
from ...errors import ProducerError
from . import contact_kernel
from .sensing import QUAD_MIN_NORMAL, influence, influence_tables, rim_points
from .taxels import IMAGE_SHAPE, PadTaxels

#: The compiled read's calling convention this module speaks (`CONTACT_READ_ABI` in contact_read.c).
NATIVE_ABI = 3
# The compiled read, built at install (setup.py; optional: needs a C compiler).
# Not built: the numpy path reads the same forces.
_native: Any = load_extension(f"{__package__}._contact_read", NATIVE_ABI, "the compiled contact read")
#: Whether the compiled read (`backend="native"`, the default when built) is in this install.
NATIVE_AVAILABLE = _native is not None
BACKENDS = ("native", "numpy", "numba")

#: Layer thickness [m] and confined modulus [Pa] of the pad's elastomer; K = E_c / h [N/m³].
LAYER_THICKNESS = 0.002
CONFINED_MODULUS = 0.3e6
STIFFNESS = CONFINED_MODULUS / LAYER_THICKNESS
#: |F_t| ≥ (1 − this)·μ|F_n| is gross slip (every point slides): MuJoCo's soft friction cone
#: carries 0.999–1.000 μ·F_n while the surfaces slide (slip scenario), not exactly μ.
GROSS_SLIP_TOLERANCE = 0.005
#: Quadrature for the taxels: every `TAXEL_GRID_STEP`-th image pixel in both directions (1 mm).
TAXEL_GRID_STEP = 2
_vecdot = getattr(np, "vecdot", lambda a, b: np.einsum("...i,...i->...", a, b))
_matvec = getattr(np, "matvec", lambda m, v: np.einsum("...ij,...j->...i", m, v))
_accumulate, _reduce = np.add.accumulate, np.add.reduce   # cumsum / sum without their wrappers' cost
_FAR = 1.0  # [m] position of padding points (never inside a footprint, but for a plane's far side)
_FAR_SDF = 1e30  # [m] the signed distance padding points get against a plane
_MIN_VOLUME = 1e-24  # [m³] keeps the closest point active when the normal force is 0

_G = mujoco.mjtGeom
SUPPORTED_TYPES = {int(_G.mjGEOM_PLANE): "plane", int(_G.mjGEOM_SPHERE): "sphere",
                   int(_G.mjGEOM_CAPSULE): "capsule", int(_G.mjGEOM_ELLIPSOID): "ellipsoid",
                   int(_G.mjGEOM_CYLINDER): "cylinder", int(_G.mjGEOM_BOX): "box"}


def signed_distance(geom_type: int, size: np.ndarray, p: np.ndarray, *, scratch: bool = False) -> np.ndarray:
    """(P, M) signed distance [m] of points `p` (P, 3, M) — coordinate-major, in each geom's own
    frame — to geoms of one MuJoCo type with sizes `size` (P, 3); negative inside. The
    ellipsoid's is the usual first-order estimate (exact on its axes). Coordinate-major because
    reductions over a contiguous length-3 axis cost far more than row operations. `scratch`: `p`
    may be overwritten (the box works in it, no temporary of its size)."""
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
    if geom_type == _G.mjGEOM_BOX:      # in place: no temporary of p's size (2× faster on a batch)
        q = np.abs(p, out=p) if scratch else np.abs(p)
        q -= s
        inside = q.max(axis=1)
        np.minimum(inside, 0.0, out=inside)
        np.maximum(q, 0.0, out=q)
        q *= q
        r = q.sum(axis=1)
        np.sqrt(r, out=r)
        r += inside
        return r
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


@lru_cache(maxsize=256)
def _row_offsets(P: int, M: int) -> np.ndarray:
    """Flat offsets of the rows of a (P, M) array (cached, read-only)."""
    out = np.arange(0, P * M, M)
    out.setflags(write=False)
    return out


@lru_cache(maxsize=256)
def _col_offsets(P: int, M: int) -> np.ndarray:
    """`_row_offsets` as a column (P, 1) (cached, read-only)."""
    return _row_offsets(P, M)[:, None]


class _Quadrature(NamedTuple):
    """Quadrature points of the five pads, padded to M per pad (padding: area 0, never active):
    per pad its image-grid pixels, then its rim (`sensing.rim_points`: the capsule beyond the
    pixels, around the finger), then padding."""

    points: np.ndarray   # (5, M, 3) distal frame [m]
    points_h: np.ndarray  # (5, 4, M) the same, homogeneous (x, y, z, 1), coordinate-major
    area: np.ndarray     # (5, M) surface area [m²]
    cell: np.ndarray     # (5, M) index of the receiving cell (taxel slot 0..39, or pixel 0..1535;
                         # a rim point: the nearest valid pixel of its row)
    n_pixels: np.ndarray  # (5,) the pixel points of each pad (the rim's follow)


def _quadrature(pads: tuple[PadTaxels, ...], step: int, to_pixels: bool) -> _Quadrature:
    """Every `step`-th pixel of each pad's image grid (both directions) and the rim beside that
    grid (`sensing.rim_points(pad, step)`)."""
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
        with np.errstate(invalid="ignore"):
            valid &= g.pad_side * pts[..., 1] >= QUAD_MIN_NORMAL * g.radius      # the rest: `rim_points`
        flat_index = (r_idx[:, None] * cols + c_idx[None, :])[valid]
        p = pts[valid]
        # Surface normal of the capsule at the point (cylinder part or tip cap) → area dx·dz/|n_y|.
        c = np.stack([np.zeros(len(p)), np.zeros(len(p)), np.maximum(p[:, 2], g.z_bottom)], axis=1)
        n = (p - c) / g.radius
        area = dx * dz / np.abs(n[:, 1])
        n_pix = len(p)
        rim, rim_area, rim_pixel = rim_points(pad, step)
        p, area = np.concatenate([p, rim]), np.concatenate([area, rim_area])
        if to_pixels:
            cell = np.concatenate([flat_index, rim_pixel])
        else:
            d2 = ((p[:, None, :] - pad.positions[None, :, :]) ** 2).sum(axis=2)
            cell = d2.argmin(axis=1)
        per_pad.append((p, area, cell, n_pix))
    m = max(len(p) for p, _, _, _ in per_pad)
    points = np.full((5, m, 3), _FAR)
    area = np.zeros((5, m))
    cell = np.zeros((5, m), dtype=np.int64)
    for k, (p, a, c, _) in enumerate(per_pad):
        points[k, :len(p)], area[k, :len(p)], cell[k, :len(p)] = p, a, c
    points_h = np.ascontiguousarray(np.concatenate([points, np.ones((5, m, 1))], axis=2).transpose(0, 2, 1))
    return _Quadrature(points, points_h, area, cell, np.array([n for _, _, _, n in per_pad]))


class DistributedContact:
    """The distributed contact model of one hand (see the module docstring).

    `object_geoms`: ids of the measured object geoms; all must be of a supported primitive type.
    `backend`: "native" (the default when the install compiled it, `NATIVE_AVAILABLE`: the
    whole per-frame read of `ContactForceModel.read` in one compiled call, `_contact_read`; this
    class's own methods then run their numpy code), "numpy" (the default without a compiler, and
    the reference the tests hold "native" to) or "numba" (the compiled kernel, extra `fast`; the
    same result to rounding; imports numba when asked for)."""

    def __init__(self, model: mujoco.MjModel, pads: tuple[PadTaxels, ...], distal_bodies: np.ndarray,
                 object_geoms: np.ndarray, *, stiffness: float = STIFFNESS, taxel_grid_step: int = TAXEL_GRID_STEP,
                 backend: str | None = None):
        backend = ("native" if NATIVE_AVAILABLE else "numpy") if backend is None else backend
        if backend not in BACKENDS:
            raise ValueError(f"distributed contact: backend must be one of {', '.join(map(repr, BACKENDS))}, "
                             f"got {backend!r}")
        if backend == "native" and _native is None:
            raise ValueError("distributed contact: backend 'native' was not compiled in this install (needs a C "
                             "compiler and the Python headers at `pip install`); backend 'numpy' gives the same forces")
        self._compiled: Any = contact_kernel.kernel() if backend == "numba" else None
        if backend == "numba" and self._compiled is None:
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
        self._plane = bool(np.any(self._types == int(_G.mjGEOM_PLANE)))
        self._pair_stride = model.ngeom
        self._cell_offsets = (np.arange(64) * self.slots)[:, None]     # per-pair cell blocks
        self._geom_type = model.geom_type.astype(np.int64)
        self._no_level = np.full(64, np.nan)
        tables = influence_tables()
        self.influence = tables.pixels[:, :self.slots]     # (5, slots, 48·32)
        self._slot_normals = np.zeros((5, self.slots, 3))         # outward taxel normals (padding 0)
        for k, pd in enumerate(pads):
            self._slot_normals[k, :len(pd.positions)] = pd.normals
        self.fine = self._grid(pads, self.pixel_quad, tables.rim_fine)
        coarse = _quadrature(pads, taxel_grid_step, to_pixels=True)
        rim = tables.rim_coarse if taxel_grid_step == 2 else tuple(
            influence(pd, coarse.points[k, coarse.n_pixels[k]:int((coarse.area[k] > 0).sum())])
            for k, pd in enumerate(pads))
        self.coarse = self._grid(pads, coarse, rim)
        #: the compiled read's tables (backend "native"), checked once here
        self.native: Any = self._native_reader() if backend == "native" else None
        #: the `ContactForceModel` whose extraction tables `native` holds (set by its first read)
        self.native_owner: Any = None

    def _native_reader(self):
        assert _native is not None, "only built with backend 'native'"
        m = self.model
        grids = []
        for g in (self.coarse, self.fine):
            grids += [g.quad.points_h, g.area_flat, g.inv_area_flat, g.normal_flat, g.pixel_flat, g.GT, g.rim_groups]
        return _native.Reader(*[np.ascontiguousarray(a) for a in grids], m.geom_type, m.geom_size,
                              np.ascontiguousarray(self.distal_bodies, dtype=np.int64),
                              np.ascontiguousarray(self._slot_normals), self.stiffness, self.coarse.first_k,
                              self.fine.first_k)

    def native_solve(self, data: mujoco.MjData, pad: np.ndarray, geom: np.ndarray, f_loc: np.ndarray,
                     f_normal: np.ndarray, f_normal_vec: np.ndarray, mu: np.ndarray, *, fine: bool = True,
                     pad_rotation: np.ndarray | None = None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
        """The compiled solution of given pairs (backend "native"; the arguments of `solve`):
        `taxel_readings` (5 · slots, 3) [N, distal frame], each pair's stuck fraction (P,), with
        `pad_rotation` (3, 3) the images (5, 3, 48, 32) [N/pixel] in those axes
        (`solution_images`; the identity gives `traction_field` in the image layout), and each
        pad's unsensed load (5, 3) [N, distal frame] (`pad_readings`)."""
        if self.native is None:
            raise ValueError(f"distributed contact: native_solve needs backend 'native', this one is {self.backend!r}")
        slots, unsensed = np.empty((5 * self.slots, 3)), np.empty((5, 3))
        stuck = np.empty(len(pad))
        img = None if pad_rotation is None else np.empty((5, 3) + IMAGE_SHAPE)
        rot = np.eye(3) if pad_rotation is None else np.ascontiguousarray(pad_rotation, dtype=np.float64)
        self.native.solve(pad, geom, f_loc, f_normal, f_normal_vec, mu, data.xmat, data.xpos, data.geom_xmat,
                          data.geom_xpos, fine, slots, unsensed, stuck, img, rot)
        return slots, stuck, img, unsensed

    def _grid(self, pads, quad: _Quadrature, rim: tuple[np.ndarray, ...]) -> _Grid:
        """The per-point tables of one quadrature whose cells are image pixels; `rim` per pad:
        the influence (slots', R) of its rim points (`sensing.InfluenceTables`)."""
        valid = quad.area > 0
        inv = np.divide(1.0, quad.area, out=np.zeros_like(quad.area), where=valid)
        normal = np.zeros(quad.points.shape)
        for k, pd in enumerate(pads):
            c = np.zeros(quad.points[k].shape)
            c[:, 2] = np.maximum(quad.points[k, :, 2], pd.geometry.z_bottom)
            normal[k] = np.where(valid[k][:, None], (quad.points[k] - c) / pd.geometry.radius, 0.0)
        M = quad.area.shape[1]
        GT = np.zeros((5, M, self.slots))                 # G[k, j, x] stored as (5, M, slots)
        for k in range(5):
            npx, nrim = int(quad.n_pixels[k]), int(valid[k].sum()) - int(quad.n_pixels[k])
            if rim[k].shape[1] != nrim:
                raise ProducerError(f"sim: the influence tables hold {rim[k].shape[1]} rim points for pad {k}, "
                                    f"its quadrature has {nrim}; rebuild them: "
                                    "python -m wuji_tactile_device.producers.sim.sensing")
            GT[k, :npx] = self.influence[k][:, quad.cell[k, :npx]].T
            GT[k, npx:npx + nrim] = rim[k][:self.slots].T
        ident = np.broadcast_to(np.arange(quad.area.shape[1]), quad.area.shape).copy()
        return _Grid(quad, inv, normal, quad._replace(cell=ident), GT.reshape(5 * M, self.slots),
                     quad.area.ravel().copy(), inv.ravel().copy(), normal.reshape(-1, 3).copy(),
                     quad.cell.ravel().copy(), max(16, int(quad.n_pixels.max()) // 6), _rim_groups(quad))

    # -- per frame --------------------------------------------------------------------------------
    def pairs(self, pad: np.ndarray, geom: np.ndarray, f_loc: np.ndarray, f_normal: np.ndarray,
              extra: np.ndarray | None = None):
        """Group contacts into (pad, object geom) pairs: pair pad (P,), geom (P,), force ON the pad
        (P, 3) in the distal frame [N], normal force (P,) [N] (and the per-pair sums of `extra`
        (C, k) when given, as a fifth value)."""
        key = pad * self._pair_stride + geom
        keys = key.tolist()
        if len(set(keys)) == len(keys):      # the common case: one contact per pair
            return (pad, geom, f_loc, f_normal) + (() if extra is None else (extra,))
        uniq, inv = np.unique(key, return_inverse=True)
        onehot = (inv[None, :] == np.arange(len(uniq))[:, None]).astype(np.float64)   # (P, C)
        out = (uniq // self._pair_stride, uniq % self._pair_stride, onehot @ f_loc, onehot @ f_normal)
        return out + (() if extra is None else (onehot @ extra,))

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
        B = np.empty((len(pad), 3, 4))                   # [Rd | xd − xg]
        B[:, :, :3] = data.xmat.take(body, axis=0).reshape(-1, 3, 3)
        B[:, :, 3] = data.xpos.take(body, axis=0)
        B[:, :, 3] -= data.geom_xpos.take(geom, axis=0)
        return data.geom_xmat.take(geom, axis=0).reshape(-1, 3, 3).transpose(0, 2, 1) @ B

    def _kernel(self, data, quad: _Quadrature, cells_per_pad: int, pad, geom, force, f_normal, level=None):
        """The compiled path: (P · cells, 3) forces, one block of cells per pair, and the level
        per pair."""
        out = np.zeros((len(pad) * cells_per_pad, 3))
        volume = f_normal * (1.0 / self.stiffness) + _MIN_VOLUME
        lam = self._compiled(quad.points_h, quad.area, quad.cell, cells_per_pad, pad, geom, self.distal_bodies,
                     data.xmat, data.xpos, data.geom_xmat, data.geom_xpos, self._geom_type, self.model.geom_size,
                     volume, (self._no_level[:len(pad)] if len(pad) <= len(self._no_level) else
                              np.full(len(pad), np.nan)) if level is None else level, force, out)
        return out, lam

    def _sdf(self, geom: np.ndarray, local: np.ndarray) -> np.ndarray:
        """(P, M) signed distances of `local` (P, 3, M) to the pairs' geoms; `local` is scratch."""
        size = self.model.geom_size.take(geom, axis=0)
        if len(self._types) == 1:
            return signed_distance(int(self._types[0]), size, local, scratch=True)
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
        return DistributedContact._level_sorted(sdf.take(order), area.take(order), volume)

    @staticmethod
    def _level_sorted(s: np.ndarray, a: np.ndarray, volume: np.ndarray) -> np.ndarray:
        """`_level` of rows already in increasing `s` (signed distance) order."""
        P, M = s.shape
        ca = np.cumsum(a, axis=1)
        cas = np.cumsum(a * s, axis=1)
        # Volume when λ reaches the next level with the first m points active.
        at_next = s[:, 1:] * ca[:, :-1] - cas[:, :-1]
        m = (at_next < volume[:, None]).sum(axis=1) + _row_offsets(P, M)   # increasing: count = first ≥
        return (volume + cas.take(m)) / ca.take(m)

    def support(self, data, pad, geom, f_normal, grid: _Grid | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Each pair's footprint: (flat (P, K) indices into the grid's (5·M) point tables, w (P, K)
        normalised pressure weights A·max(λ − sdf, 0) / Σ there; rows sum to 1), each row in
        order of decreasing pressure. K covers the largest footprint (a row's spare entries carry
        w = 0). The same λ as `weights`: the level solve needs only the points below λ, so it
        runs on the K lowest points of each row (`argpartition`, no full sort) and is accepted
        when no row has more than K points below its λ (then the subset's root is the full
        set's root exactly); else K grows 4×."""
        grid = self.fine if grid is None else grid
        quad = grid.quad
        P, M = len(pad), quad.area.shape[1]
        base = (pad * M)[:, None]
        if self.backend == "numba":
            w = self.pressure(data, pad, geom, f_normal, grid)
            K = int((w > 0).sum(axis=1).max(initial=1))
            idx = np.argpartition(-w, K - 1, axis=1)[:, :K] if K < M else np.arange(M)[None, :]
            flat = base + idx
            w = w.take(flat - base + _row_offsets(P, M)[:, None])
            order = np.argsort(-(w * grid.inv_area_flat.take(flat)), axis=1) + _row_offsets(P, flat.shape[1])[:, None]
            return flat.take(order), w.take(order)
        flat, w, _, _, _ = self._footprint(self._transforms(data, pad, geom), pad, geom, f_normal, grid)
        return flat, w

    def _footprint(self, T: np.ndarray, pad: np.ndarray, geom: np.ndarray, f_normal: np.ndarray, grid: _Grid,
                   grow: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`support` from the pairs' distal → object-geom maps `T` (P, 3, 4), plus the support's
        areas (P, K) [m²], their running sums along each row (the stick/slip solve reuses both:
        the same order) and (P,) whether each row's subset held its footprint. The level solve:
        `_level_sorted` inlined. Without `grow` the first subset size is kept whatever the rows
        say (a batch of scenes re-reads the scenes whose rows did not hold)."""
        P, M = len(pad), grid.quad.area.shape[1]
        sdf = self._sdf(geom, T @ grid.quad.points_h.take(pad, axis=0))   # (P, M); padding ≥ 1 m away
        if self._plane:      # … but a plane's far side is inside it: padding must never be the lowest
            np.putmask(sdf, grid.quad.area.take(pad, axis=0) == 0, _FAR_SDF)
        volume = f_normal * (1.0 / self.stiffness) + _MIN_VOLUME
        rows = _col_offsets(P, M)
        shift = (pad * M)[:, None] - rows                 # row offsets → the grid's (5·M) tables
        K = grid.first_k
        while True:
            if K < M:
                idx = np.argpartition(sdf, K - 1, axis=1)[:, :K]
                idx += rows
            else:
                idx = np.broadcast_to(np.arange(M), (P, M)) + rows
            sdf_k = sdf.take(idx)
            order = np.argsort(sdf_k, axis=1)
            order += _col_offsets(P, idx.shape[1])
            s_ = sdf_k.take(order)
            flat = idx.take(order)
            flat += shift
            area = grid.area_flat.take(flat)
            ca = _accumulate(area, axis=1)
            cas = _accumulate(area * s_, axis=1)
            at_next = s_[:, 1:] * ca[:, :-1]
            at_next -= cas[:, :-1]
            m = _reduce(at_next < volume[:, None], axis=1, dtype=np.intp) + _row_offsets(P, idx.shape[1])
            lam = (volume + cas.take(m)) / ca.take(m)
            # Every point outside the subset lies at or above the subset's highest: none is
            # below λ when that one is not.
            held = s_[:, -1] >= lam
            if K >= M or not grow or held.all():
                break
            K *= 4
        w = np.maximum(lam[:, None] - s_, 0.0)
        w *= area
        w /= _reduce(w, axis=1)[:, None]
        return flat, w, area, ca, held | (K >= M)

    def pressure(self, data, pad, geom, f_normal, grid: _Grid | None = None) -> np.ndarray:
        """(P, M) each pair's normalised pressure weights A·max(λ − sdf, 0) / Σ on the points of
        `grid` (default the 0.5 mm image grid; λ solved on that grid; rows sum to 1)."""
        grid = self.fine if grid is None else grid
        P, M = len(pad), grid.quad.area.shape[1]
        if self.backend == "numba":
            unit = np.zeros((P, 3))
            unit[:, 0] = 1.0
            out, _ = self._kernel(data, grid.by_point, M, pad, geom, unit, f_normal)
            return out[:, 0].reshape(P, M)
        flat, w = self.support(data, pad, geom, f_normal, grid)
        out = np.zeros((P, M))
        np.put_along_axis(out, flat - (pad * M)[:, None], w, axis=1)
        return out

    def traction(self, weights: np.ndarray, pad: np.ndarray, f_normal_vec: np.ndarray, f_tangent_vec: np.ndarray,
                 mu: np.ndarray, grid: _Grid | None = None, flat: np.ndarray | None = None,
                 presorted: bool = False, area: np.ndarray | None = None, area_sum: np.ndarray | None = None,
                 tangent_norm: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Stick and slip inside each pair's footprint (partial slip, Cattaneo–Mindlin on the
        thin layer). Normal force per pixel P_x = |F_n|·w_x. The layer's shear is Winkler too:
        where the surface sticks, the traction is the same for every point (the object's rigid
        tangential displacement over the layer, s per unit area); where that would exceed
        μ·p_x, the point slides at μ·p_x. So Q_x = min(s·A_x, μ·P_x) with s solved exactly from
        Σ Q_x = |F_t| (sort by pressure, cumulative sums): slip starts at the rim, where p → 0,
        and spreads inward as |F_t| → μ|F_n|; at μ|F_n| (gross slip) every point slides.
        `weights` (P, M) on every point of `grid`, or (P, K) on the points `flat` (`support`;
        points without load change nothing); `presorted`: each row is already in order of
        decreasing pressure (`support`'s order: no sort); `area`, `area_sum`: with `presorted`, the
        points' areas and their running sums along each row (`_footprint`'s). Returns P and Q [N
        per point, the shape of `weights`] and the stuck fraction of the footprint's area (P,).
        `tangent_norm`: |f_tangent_vec| (P,) when the caller has it."""
        grid = self.fine if grid is None else grid
        if flat is None:
            flat = (pad * grid.quad.area.shape[1])[:, None] + np.arange(weights.shape[1])
        if area is None or not presorted:
            area = area_sum = None
        fn = np.sqrt(_vecdot(f_normal_vec, f_normal_vec))
        ft = np.sqrt(_vecdot(f_tangent_vec, f_tangent_vec)) if tangent_norm is None else tangent_norm
        Pn = weights * fn[:, None]
        C = Pn * mu[:, None]                                      # slip limit per pixel [N]
        pres = C * grid.inv_area_flat.take(flat)                  # μ·p [N/m²]
        P_, M = pres.shape
        if area is None:
            area = grid.area_flat.take(flat)
        if presorted:
            ps, a, c = pres, area, C
        else:
            order = np.argsort(-pres, axis=1) + _row_offsets(P_, M)[:, None]
            ps, a, c = pres.take(order), area.take(order), C.take(order)
        ca = _accumulate(a, axis=1) if area_sum is None else area_sum
        cc = _accumulate(c, axis=1)
        ctot = cc[:, -1]
        # Σ Q when s reaches the k-th pressure with points 0..k−1 stuck (decreasing in k).
        at = ps * (ca - a)
        at += ctot[:, None] - (cc - c)
        m = _reduce(at > ft[:, None], axis=1, dtype=np.intp)
        gross = (m == 0) | (ft >= (1.0 - GROSS_SLIP_TOLERANCE) * ctot)
        k = np.maximum(m - 1, 0) + _row_offsets(P_, M)
        s_ = (ft - ctot + cc.take(k)) / np.maximum(ca.take(k), 1e-300)
        s_[gross] = 0.0
        sA = s_[:, None] * area
        Q = np.minimum(sA, C)
        stuck = sA < C
        if gross.any():
            scale = np.divide(ft, ctot, out=np.zeros_like(ft), where=ctot > 0)
            Q[gross] = C[gross] * scale[gross, None]
            stuck[gross] = False
        loaded = Pn > 0
        stuck &= loaded
        foot = _vecdot(area, loaded)
        held = _vecdot(area, stuck)
        frac = held / np.where(foot > 0, foot, 1.0)
        frac[foot <= 0] = 1.0
        return Pn, Q, frac

    def solve(self, data, pad, geom, f_loc, f_normal, f_normal_vec, mu, *, fine: bool = True) -> Traction:
        """Pressure, stick and slip of each pair (`traction`) on the 0.5 mm image grid (`fine`)
        or the 1 mm grid, with the normal and friction directions: `f_normal_vec` (P, 3) the
        normal part of each pair's force `f_loc` (the rest is friction), `mu` (P,) its friction
        coefficient. Solved on each footprint's support (`support`): every array is (P, K)."""
        grid = self.fine if fine else self.coarse
        if self.backend == "numba":
            flat, w = self.support(data, pad, geom, f_normal, grid)
            area = area_sum = None
        else:
            flat, w, area, area_sum, _ = self._footprint(self._transforms(data, pad, geom), pad, geom, f_normal, grid)
        return self._traction_of(pad, flat, w, area, area_sum, f_loc, f_normal_vec, mu, grid)

    def _traction_of(self, pad, flat, w, area, area_sum, f_loc, f_normal_vec, mu, grid: _Grid) -> Traction:
        ft_vec = f_loc - f_normal_vec
        ft = np.sqrt(_vecdot(ft_vec, ft_vec))
        Pn, Q, frac = self.traction(w, pad, f_normal_vec, ft_vec, mu, grid, flat, presorted=True,
                                    area=area, area_sum=area_sum, tangent_norm=ft)
        t_hat = ft_vec / np.maximum(ft, 1e-300)[:, None]
        return Traction(pad, w, Pn, Q, t_hat, f_loc, frac, grid, flat, np.asarray(mu, dtype=np.float64))

    def field(self, data, pad, geom, f_loc, f_normal, f_normal_vec=None, mu=None
              ) -> tuple[np.ndarray, np.ndarray]:
        """The contact's surface traction field on the 0.5 mm image grid: (5, 48·32, 3) force ON
        each pad's pixels [N] in the distal frame, and the stuck fraction of each pair's
        footprint (P,). Without `f_normal_vec` the whole force follows the pressure; with it see
        `solve`."""
        P = len(pad)
        if f_normal_vec is None:
            w = self.pressure(data, pad, geom, f_normal)
            return self._to_pixels(pad, w[:, :, None] * f_loc[:, None, :]), np.ones(P)
        t = self.solve(data, pad, geom, f_loc, f_normal, f_normal_vec, mu)
        return self.traction_field(t), t.stuck

    def traction_field(self, t: Traction) -> np.ndarray:
        """(5, 48·32, 3) the image-grid field of a solution: pressure along each point's own
        surface normal, friction in its tangent plane, and the small remainder the curvature
        leaves (a few % of F) spread with the pressure, so each pair's field sums to its force
        exactly."""
        npx = IMAGE_SHAPE[0] * IMAGE_SHAPE[1]
        cell = t.grid.pixel_flat.take(t.flat) + (t.pad * npx)[:, None]        # (P, K) stacked pixel
        index = cell[:, :, None] * 3 + _AXES
        return np.bincount(index.ravel(), self._point_forces(t).ravel(), 15 * npx).reshape(5, npx, 3)

    def _point_forces(self, t: Traction) -> np.ndarray:
        """(P, K, 3) each support point's force [N, distal frame] (`traction_field`)."""
        n_loc = t.grid.normal_flat.take(t.flat, axis=0)                        # (P, K, 3) outward
        t_loc = t.t_hat[:, None, :] - (n_loc @ t.t_hat[:, :, None]) * n_loc
        t_loc /= np.maximum(np.sqrt(_vecdot(t_loc, t_loc)), 1e-300)[:, :, None]
        t_loc *= t.Q[:, :, None]
        t_loc -= t.Pn[:, :, None] * n_loc
        t_loc += t.w[:, :, None] * (t.force - _reduce(t_loc, axis=1))[:, None, :]
        return t_loc

    def solution_images(self, t: Traction, pad_rotation: np.ndarray) -> np.ndarray:
        """`images_of(traction_field(t), pad_rotation)` in one scatter: each support point's force
        turned into the pad axes first (K points per pair instead of every pixel), binned straight
        into the (5, 3, 48, 32) layout (no transposed copy); the same images to rounding."""
        npx = IMAGE_SHAPE[0] * IMAGE_SHAPE[1]
        v = self._point_forces(t) @ pad_rotation                                   # (P, K, 3) pad axes
        index = (t.grid.pixel_flat.take(t.flat) + (t.pad * (3 * npx))[:, None])[:, :, None] + _AXES_PX
        return np.bincount(index.ravel(), v.ravel(), 15 * npx).reshape((5, 3) + IMAGE_SHAPE)

    def _to_pixels(self, pad: np.ndarray, per_point: np.ndarray, grid: _Grid | None = None) -> np.ndarray:
        """(5, 48·32, 3) per-pair point forces (P, M, 3) binned into their pads' pixels."""
        grid = self.fine if grid is None else grid
        npx = IMAGE_SHAPE[0] * IMAGE_SHAPE[1]
        cell = grid.quad.cell.take(pad, axis=0) + (pad * npx)[:, None]          # (P, M) stacked pixel
        index = cell[:, :, None] * 3 + _AXES
        return np.bincount(index.ravel(), per_point.ravel(), 15 * npx).reshape(5, npx, 3)

    def taxel_readings(self, t: Traction) -> np.ndarray:
        """(5 · slots, 3) what each taxel reads [N, distal frame] (`pad_readings`' taxels)."""
        return self.pad_readings(t)[0]

    def pad_readings(self, t: Traction) -> tuple[np.ndarray, np.ndarray]:
        """(5 · slots, 3) what each taxel reads [N, distal frame], force ON the taxel, and (5, 3)
        each pad's unsensed load [N, distal frame]. A taxel reads the normal load Σ G·P and the
        friction Σ G·Q carried through the elastomer to its sensitive area (`sensing.py`; G's
        columns sum to each point's sensed share s(x) ≤ 1), the normal along the taxel's own
        normal and the friction along the pair's slip direction in the taxel's tangent plane — so
        |shear| ≤ μ·|normal| holds on every taxel. A pair's sensed force is its solver force with
        its normal part scaled by σ_n = Σ_j (G·P)_j / Σ P and its friction part by σ_t = Σ_j (G·Q)_j
        / Σ Q (the sensed shares of its pressure and friction); the rest, (1 − σ_n)·F_n + (1 −
        σ_t)·F_t, lands beyond the sensing area (the pad's unsensed rim and the finger shell) and is
        the pad's unsensed load. Each pad's remainder against its sensed force (the curvature's
        few %) is placed inside the taxels' friction cones (`cone_spread`): each pad's taxels sum
        to its sensed force, taxels + unsensed to its solver force, exactly. Only the influence
        columns of each footprint's points are read (`Traction.flat`)."""
        taxels, unsensed = self._pad_readings(t.pad, self._pair_readings(t), t.force, 5)
        return taxels.reshape(-1, 3), unsensed

    def _pair_readings(self, t: Traction) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Each pair's taxel readings (P, slots, 3) [N, distal frame] before the remainder, each
        pair's normal loads (P, slots) [N], its friction coefficient (P,) and its unsensed load
        (P, 3) [N, distal frame] (`pad_readings`)."""
        if t.mu is None:
            raise ValueError("distributed contact: taxel_readings needs the pairs' friction coefficients "
                             "(Traction.mu; solve() sets it)")
        P, K = t.flat.shape
        g = t.grid.GT.take(t.flat, axis=0)                                         # (P, K, slots)
        x = np.empty((P, 2, K))
        x[:, 0] = t.Pn
        x[:, 1] = t.Q
        s = np.matmul(x, g)                                                        # (P, 2, slots)
        normals = self._slot_normals.take(t.pad, axis=0)                           # (P, slots, 3)
        th = t.t_hat[:, None, :]
        t_slot = th - (normals @ t.t_hat[:, :, None]) * normals                   # matmul: 4× vecdot's speed
        t_slot /= np.maximum(np.sqrt(_vecdot(t_slot, t_slot)), 1e-300)[..., None]
        t_slot *= s[:, 1, :, None]
        t_slot -= s[:, 0, :, None] * normals                                     # (P, slots, 3)
        # Sensed shares of the pressure and the friction: Σ_j (G·P)_j / Σ P, Σ_j (G·Q)_j / Σ Q.
        sensed = _reduce(s, axis=2)                                                # (P, 2)
        total = np.stack([_reduce(t.Pn, axis=1), _reduce(t.Q, axis=1)], axis=1)
        lost = 1.0 - np.divide(sensed, total, out=np.zeros_like(sensed), where=total > 0)
        f_t = total[:, 1, None] * t.t_hat                                          # friction part
        unsensed = lost[:, 0, None] * (t.force - f_t)
        unsensed += lost[:, 1, None] * f_t
        return t_slot, s[:, 0], t.mu, unsensed

    def _pad_readings(self, pad: np.ndarray, r: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
                      force: np.ndarray, blocks: int) -> tuple[np.ndarray, np.ndarray]:
        """(blocks, slots, 3) pair readings `r` (`_pair_readings`) placed in the slot block of
        each pair's `pad` (blocks distinct, or summed per block), each block's remainder against
        its sensed force (solver `force` (P, 3) − unsensed) placed inside the taxels' friction
        cones (`cone_spread`); and (blocks, 3) each block's unsensed load."""
        r_pair, sn, mu, unsensed = r
        force = force - unsensed                                      # the sensed force
        if len(set(pad.tolist())) == len(pad):
            normals = self._slot_normals.take(pad % 5, axis=0)        # blocks: scene · 5 + pad (read_many)
            r_pair += cone_spread(r_pair, sn, normals, mu[:, None], force - _reduce(r_pair, axis=1))
            out = np.zeros((blocks, self.slots, 3))
            out[pad] = r_pair
            u = np.zeros((blocks, 3))
            u[pad] = unsensed
            return out, u
        onehot = (pad[:, None] == np.arange(blocks)).astype(np.float64)          # (P, blocks)
        out = (onehot.T @ r_pair.reshape(len(pad), -1)).reshape(blocks, self.slots, 3)
        sn_b, force, u = onehot.T @ sn, onehot.T @ force, onehot.T @ unsensed
        # A taxel loaded by several pairs: the friction bound Σ_p μ_p·N_p over its normal load Σ_p N_p.
        mu_b = np.divide(onehot.T @ (mu[:, None] * sn), sn_b, out=np.ones_like(sn_b), where=sn_b > 0)
        normals = self._slot_normals.take(np.arange(blocks) % 5, axis=0)
        out += cone_spread(out, sn_b, normals, mu_b, force - out.sum(axis=1))
        return out, u

    def taxel_slots(self, field: np.ndarray) -> np.ndarray:
        """(5 · slots, 3) force ON each pad's taxel slots [N] (distal frame): the field carried
        through the elastomer to each taxel's sensitive area (`sensing.py`)."""
        return np.matmul(self.influence, field).reshape(-1, 3)

    def taxel_slot_forces(self, data, pad, geom, f_loc, f_normal) -> tuple[np.ndarray, np.ndarray]:
        """(5 · slots, 3) force ON each pad's taxel slots [N] in the distal frame (the whole force
        following the pressure), and each pair's stuck fraction (P,)."""
        f, frac = self.field(data, pad, geom, f_loc, f_normal)
        return self.taxel_slots(f), frac

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


def cone_capacity(r: np.ndarray, normals: np.ndarray, remainder: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """(B, S) the largest ω ≥ 0 for which each taxel's reading r + ω·R stays inside its friction
    cone |shear| ≤ μ·normal (+inf when no ω leaves it): readings `r` (B, S, 3) [N, force ON the
    taxel], outward taxel normals `normals` (B, S, 3), each block's remainder R `remainder` (B, 3)
    [N], friction coefficients `mu` (B, S) or broadcastable. With ν = −r·n, τ = r + ν·n, R_n = −R·n,
    R_t = R + R_n·n the cone holds where f(ω) = |τ + ωR_t|² − μ²(ν + ωR_n)² = Aω² + 2Bω + C ≤ 0
    (A = |R_t|² − μ²R_n², B = τ·R_t − μ²νR_n, C = min(|τ|² − μ²ν², 0), D = B² − AC); f(0) = C ≤ 0
    and the cone is convex, so the admissible ω form [0, ω*], ω* the exit root, in the forms
    without cancellation: B < 0: ω* = (−B + √D)/A if A > 0, else +inf; B ≥ 0: ω* = −C/(B + √D)
    if D ≥ 0 and B + √D > 0, else 0 if A > 0 (B = C = 0: on the cone, R outward), else +inf."""
    # Unit normals: |R_t|² = |R|² − R_n², τ·R_t = r·R − ν·R_n, |τ|² = |r|² − ν² (no 3-vector temporaries).
    k = 1.0 + mu * mu
    rn = -(normals @ remainder[:, :, None])[..., 0]                               # (B, S) R_n
    nu = -_vecdot(r, normals)
    a = _vecdot(remainder, remainder)[:, None] - k * rn * rn
    b = (r @ remainder[:, :, None])[..., 0] - k * nu * rn
    c = np.minimum(_vecdot(r, r) - k * nu * nu, 0.0)
    disc = b * b - a * c
    root = np.sqrt(np.maximum(disc, 0.0))
    den = b + root
    inward = np.where(a > 0, (root - b) / np.where(a > 0, a, 1.0), np.inf)              # B < 0
    outward = np.where((disc >= 0) & (den > 0), -c / np.where(den > 0, den, 1.0),
                       np.where(a > 0, 0.0, np.inf))                                  # B ≥ 0
    return np.where(b < 0, inward, outward)


def cone_spread(r: np.ndarray, normal_load: np.ndarray, normals: np.ndarray, mu: np.ndarray,
                remainder: np.ndarray) -> np.ndarray:
    """(B, S, 3) the part ω_i·R of each block's remainder R (B, 3) [N] that each of its S taxels
    takes: Σ_i ω_i = 1 (the block then sums to its solver force exactly) and, where the cones can
    take R, every taxel stays inside its friction cone (`cone_capacity` ω*_i). Water-filling on
    the normal-load shares s_i = N_i / Σ N (`normal_load` (B, S) [N]): ω_i = min(ω*_i, L·s_i)
    with the smallest L ≥ 1 that gives Σ ω_i = 1 — so where no cone binds (L = 1) this is the
    plain spread with the normal loads, and near gross slip the part a taxel on its cone cannot
    take goes to the taxels that can. If Σ ω*_i < 1 (the cones cannot take R along R) the
    block's readings move to the nearest ones inside the cones with its sum (`nearest_in_cones`,
    the normal loads shift too); where even that finds none (its force is outside the sum of the
    cones) every taxel takes its capacity and the rest, (1 − Σ ω*)·R, is spread with the normal
    loads: the sum stays exact, the cones do not. Returns what each reading changes by. A block without
    normal load takes nothing (R = 0 there: no pair). `normal_load` must be −r·n (the readings'
    own normal loads, as `_pair_readings` gives them)."""
    B, S = normal_load.shape
    total = _reduce(normal_load, axis=1)
    share = normal_load * (1.0 / np.where(total > 0, total, 1.0))[:, None]    # 0 where no load
    # Sufficient for every share to fit (the common case, a footprint that sticks somewhere):
    # s_i·|R|·(1 + μ) ≤ μ·N_i − |shear_i| (|shear_i|² = |r_i|² − N_i², N_i = −r_i·n_i) — then
    # the capacities are not needed.
    shear = np.sqrt(np.maximum(_vecdot(r, r) - normal_load * normal_load, 0.0))
    if (share * (np.sqrt(_vecdot(remainder, remainder))[:, None] * (1.0 + mu)) <= mu * normal_load - shear).all():
        return share[..., None] * remainder[:, None, :]
    cap = np.where(share > 0, cone_capacity(r, normals, remainder, mu), 0.0)
    if (share <= cap).all():              # no cone binds at L = 1: the plain spread
        return share[..., None] * remainder[:, None, :]
    brk = np.where(share > 0, cap / np.where(share > 0, share, 1.0), np.inf)       # L where taxel i caps
    order = np.argsort(brk, axis=1) + _row_offsets(B, S)[:, None]
    b_s, s_s, c_s = brk.take(order), share.take(order), cap.take(order)
    # The first k (in breakpoint order) capped: L_k = (1 − Σ_{j<k} ω*_j) / Σ_{j≥k} s_j, valid if L_k ≤ b_k.
    capped = _accumulate(np.where(np.isfinite(c_s), c_s, 0.0), axis=1) - np.where(np.isfinite(c_s), c_s, 0.0)
    rest = _accumulate(s_s[:, ::-1], axis=1)[:, ::-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        lev = (1.0 - capped) / rest
    ok = (rest > 0) & (lev <= b_s)
    feasible = ok.any(axis=1)
    k = ok.argmax(axis=1) + _row_offsets(B, S)
    level = np.where(feasible, lev.take(k), 0.0)
    omega = np.minimum(cap, level[:, None] * share)
    part = omega[..., None] * remainder[:, None, :]
    bad = ~feasible & (total > 0)
    if bad.any():                         # the cones cannot take R along R: move the readings
        b = np.flatnonzero(bad)
        omega_b = cap[b] + (1.0 - _reduce(cap[b], axis=1))[:, None] * share[b]
        spread = omega_b[..., None] * remainder[b][:, None, :]
        y, found = nearest_in_cones(r[b] + spread, share[b] > 0, normals[b], np.broadcast_to(mu, share.shape)[b])
        part[b] = np.where(found[:, None, None], y - r[b], spread)
    return part


#: `nearest_in_cones` stops once each block's sum is off by no more than this share of its largest
#: reading's largest component (3–5 Newton steps in `press`'s frames that need it) …
CONE_TOLERANCE = 1e-13
#: … and gives up (the readings stay as they were) after this many steps: the block's force does
#: not lie in the sum of its taxels' cones (its dual has no minimum), or not within the tolerance.
CONE_ITERATIONS = 50
#: Backtracking halvings of one Newton step before it is taken as it is.
_CONE_HALVINGS = 40


def _cone_split(x: np.ndarray, normals: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Forces ON taxels `x` (..., 3) split against outward `normals`: the normal load ν = −x·n [N],
    the shear t = x + ν·n (..., 3) [N] and its size |t|."""
    nu = -_vecdot(x, normals)
    t = x + nu[..., None] * normals
    return nu, t, np.sqrt(_vecdot(t, t))


def _onto_cones(x: np.ndarray, normals: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Each force ON a taxel `x` (..., 3) projected (nearest point) onto its cone |t| ≤ μ·ν
    (`_cone_split`): itself inside, 0 in the polar cone (μ|t| ≤ −ν), else α·(μ·t/|t| − n) with
    α = (ν + μ|t|)/(1 + μ²)."""
    nu, t, tn = _cone_split(x, normals)
    alpha = np.maximum(nu + mu * tn, 0.0) / (1.0 + mu * mu)
    y = alpha[..., None] * (mu[..., None] * t / np.where(tn > 0, tn, 1.0)[..., None] - normals)
    return np.where((tn <= mu * nu)[..., None], x, y)


_EYE = np.eye(3)


def _cone_jacobians(x: np.ndarray, normals: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """(..., 3, 3) the derivative of `_onto_cones` at `x` (..., 3): I inside the cone, 0 in its
    polar, else w·wᵀ/(1 + μ²) + (α·μ/|t|)·(I − n·nᵀ − t̂·t̂ᵀ) with w = μ·t̂ − n (symmetric, PSD)."""
    nu, t, tn = _cone_split(x, normals)
    th = t / np.where(tn > 0, tn, 1.0)[..., None]
    w = mu[..., None] * th - normals
    alpha = np.maximum(nu + mu * tn, 0.0) / (1.0 + mu * mu)
    j = (w[..., :, None] * w[..., None, :]) / (1.0 + mu * mu)[..., None, None] \
        + (alpha * mu / np.where(tn > 0, tn, 1.0))[..., None, None] \
        * (_EYE - normals[..., :, None] * normals[..., None, :] - th[..., :, None] * th[..., None, :])
    j = np.where((tn <= mu * nu)[..., None, None], _EYE, j)
    return np.where((mu * tn <= -nu)[..., None, None] & (tn > mu * nu)[..., None, None], 0.0, j)


def nearest_in_cones(x: np.ndarray, loaded: np.ndarray, normals: np.ndarray, mu: np.ndarray,
                     tolerance: float = CONE_TOLERANCE, iterations: int = CONE_ITERATIONS
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The taxel readings y (B, S, 3) [N, force ON the taxel] nearest to `x` (Σ|y − x|² least) with
    each block's sum kept (Σ_i y_i = Σ_i x_i) and every `loaded` (B, S) taxel inside its friction
    cone (outward `normals` (B, S, 3), coefficients `mu` (B, S)); the others keep their x.

    The nearest point is y_i = Π_i(x_i + λ) (Π_i the projection onto taxel i's cone) with the one
    λ [N] (B, 3) that gives the sum T: the minimum of the convex ψ(λ) = Σ_i ½|Π_i(x_i + λ)|² − λ·T,
    whose gradient is Σ_i Π_i(x_i + λ) − T. Newton steps on it (Hessian Σ_i Π_i′ + ε·I, ε the
    residual's size relative to the block's largest reading component, at most 1; backtracking on
    ψ, or taken once the residual halves) until the sum is off by ≤ `tolerance` × that component;
    that rest is shared equally among the loaded taxels, so the sum is exact. Returns y and (B,)
    whether each block got there within `iterations` (where not, y is meaningless: keep x)."""
    m = loaded[..., None]
    target = _reduce(np.where(m, x, 0.0), axis=1)
    scale = np.abs(x).max(axis=(1, 2))
    y = x.copy()
    found = np.zeros(len(x), dtype=bool)
    live = np.flatnonzero(loaded.any(axis=1))
    lam = np.zeros((len(x), 3))

    def dual(idx: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per block `idx` at λ = `at`: the shifted readings, their projections, ψ's gradient and ψ."""
        z = x[idx] + at[:, None, :]
        p = np.where(m[idx], _onto_cones(z, normals[idx], mu[idx]), 0.0)
        g = _reduce(p, axis=1) - target[idx]
        return z, p, g, 0.5 * _reduce(_vecdot(p, p), axis=1) - _vecdot(at, target[idx])

    z, p, g, psi = dual(live, lam[live])
    for k in range(iterations + 1):
        residual = np.abs(g).max(axis=1)
        done = residual <= tolerance * scale[live]
        if done.any():
            idx = live[done]
            share = m[idx] / _reduce(m[idx], axis=1)[:, None]
            y[idx] = np.where(m[idx], p[done] - share * g[done][:, None, :], x[idx])
            found[idx] = True
            keep = ~done
            live, z, p, g, psi, residual = live[keep], z[keep], p[keep], g[keep], psi[keep], residual[keep]
        if live.size == 0 or k == iterations:
            break
        jac = np.where(m[live][..., None], _cone_jacobians(z, normals[live], mu[live]), 0.0)
        size = np.sqrt(_vecdot(g, g))
        reg = np.where(size < scale[live], size / np.where(scale[live] > 0, scale[live], 1.0), 1.0)
        step = -np.linalg.solve(_reduce(jac, axis=1) + reg[:, None, None] * _EYE, g[..., None])[..., 0]
        slope, start, tau = _vecdot(g, step), lam[live], np.ones(len(live))
        pending = np.arange(len(live))
        for h in range(_CONE_HALVINGS):
            at = start[pending] + tau[pending, None] * step[pending]
            zk, pk, gk, sk = dual(live[pending], at)
            ok = (sk <= psi[pending] + 1e-4 * tau[pending] * slope[pending]) \
                | (np.abs(gk).max(axis=1) <= 0.5 * residual[pending]) | (h == _CONE_HALVINGS - 1)
            a = pending[ok]
            lam[live[a]], z[a], p[a], g[a], psi[a] = at[ok], zk[ok], pk[ok], gk[ok], sk[ok]
            pending = pending[~ok]
            if pending.size == 0:
                break
            tau[pending] *= 0.5
    return y, found


_AXES = np.arange(3)
_AXES_PX = _AXES * (IMAGE_SHAPE[0] * IMAGE_SHAPE[1])   # axis-major image planes


class Traction(NamedTuple):
    """One frame's contact solution per pair (P pairs, K points of each footprint's support)."""

    pad: np.ndarray     # (P,) pad index
    w: np.ndarray       # (P, K) normalised pressure weights at the points `flat`
    Pn: np.ndarray      # (P, K) normal force per point [N]
    Q: np.ndarray       # (P, K) friction force per point [N], ≤ μ·Pn
    t_hat: np.ndarray   # (P, 3) friction direction (distal frame)
    force: np.ndarray   # (P, 3) the pair's solver force ON the pad (distal frame) [N]
    stuck: np.ndarray   # (P,) stuck fraction of the footprint's area
    grid: _Grid       # the points it was solved on
    flat: np.ndarray    # (P, K) the points of each pair's support: indices into grid's (5·M) tables
    mu: np.ndarray | None = None   # (P,) the pair's friction coefficient (`solve` sets it; the taxels need it)


class _Grid(NamedTuple):
    """A quadrature whose cells are image pixels, with its per-point tables."""

    quad: _Quadrature        # points, areas (5, M), cell = pixel index
    inv_area: np.ndarray     # (5, M) 1/area, 0 at padding
    normal: np.ndarray       # (5, M, 3) outward surface normal (distal frame), 0 at padding
    by_point: _Quadrature    # the same with cell = point index (the compiled kernel's output rows)
    GT: np.ndarray           # (5·M, slots) the taxel influence G[k, j, x] of a load at each point
                             # (sensing.py), one row per point (rows gathered per footprint); the
                             # (5, slots, M) layout is not kept (4 MB that only the tests read)
    area_flat: np.ndarray    # (5·M,) quad.area flattened
    inv_area_flat: np.ndarray  # (5·M,) inv_area flattened
    normal_flat: np.ndarray  # (5·M, 3) normal flattened
    pixel_flat: np.ndarray   # (5·M,) quad.cell (image pixel) flattened
    first_k: int             # support size tried first (the level solve's subset, `support`): a sixth
                             # of a pad's pixels (the rim's points, loaded only past the pad's sides, not counted)
    rim_groups: np.ndarray   # (5, R, 6) the rim's points by row and side, in runs of ≤ `RIM_GROUP`: start, end, centre, radius
                             # (the compiled read skips a run whose centre lies too far above the level)


#: Rim points per group of the compiled read's skip test (`_native/contact_read.c`, `solve_pair`).
RIM_GROUP = 12


def _rim_groups(quad: _Quadrature) -> np.ndarray:
    """(5, R, 6) each pad's rim points (after its pixels, up to its valid points) in groups: the
    points of one rim row on one side of the pad (`sensing.rim_points`' order), split into runs
    of at most `RIM_GROUP`: [start, end), the group's centre (distal frame) and the largest
    distance of its points from it [m]; padding rows 0."""
    valid = (quad.area > 0).sum(axis=1)
    per_pad = []
    for k in range(5):
        a0, n = int(quad.n_pixels[k]), int(valid[k])
        p = quad.points[k, a0:n]
        key = np.round(p[:, 2], 9) * 4 + np.sign(p[:, 0])          # row and side
        cuts = np.flatnonzero(np.diff(key) != 0) + 1
        bounds = []
        for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, len(p)], strict=True):
            bounds += [(a0 + s, a0 + min(s + RIM_GROUP, hi)) for s in range(int(lo), int(hi), RIM_GROUP)]
        per_pad.append(bounds)
    out = np.zeros((5, max(1, max(len(b) for b in per_pad)), 6))
    for k, bounds in enumerate(per_pad):
        for j, (a, e) in enumerate(bounds):
            p = quad.points[k, a:e]
            c = p.mean(axis=0)
            out[k, j] = (a, e, *c, np.sqrt(((p - c) ** 2).sum(axis=1)).max())
    return out


def __getattr__(name: str):
    if name == "KERNEL":    # the compiled kernel (imports numba): `contact_kernel.kernel()`
        return contact_kernel.kernel()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["DistributedContact", "NATIVE_AVAILABLE", "BACKENDS", "signed_distance", "cone_capacity", "cone_spread", "nearest_in_cones",
           "STIFFNESS", "LAYER_THICKNESS", "CONFINED_MODULUS",
           "TAXEL_GRID_STEP", "SUPPORTED_TYPES"]
