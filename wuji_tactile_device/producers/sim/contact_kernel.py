"""Compiled kernel of the distributed contact model (optional, `pip install .[fast]` = numba).

The same arithmetic as `DistributedContact`'s numpy path — signed distances, the exact level
solve, weights, binning into cells — in one compiled call per frame instead of ~45 numpy calls
(whose fixed per-call cost dominates at these sizes). The numpy path stays the reference; the
tests hold the two to the same result. Asked for only (`DistributedContact(backend="numba")`):
numba is imported and the kernel loaded on the first `kernel()` call, so a run that does not
ask for it pays neither numba's import (≈ 0.5 s, 40 MB) nor its JIT cache. `KERNEL` (module
attribute) is `kernel()`: None when numba is not installed.
"""
from __future__ import annotations

import importlib.util

import numpy as np

#: Whether numba is installed (checked without importing it).
AVAILABLE = importlib.util.find_spec("numba") is not None
_compiled: list = []

# MuJoCo geom type codes (mjtGeom)
_PLANE, _SPHERE, _CAPSULE, _ELLIPSOID, _CYLINDER, _BOX = 0, 2, 3, 4, 5, 6


def _sdf(t, s0, s1, s2, x, y, z):
    if t == _BOX:
        qx, qy, qz = abs(x) - s0, abs(y) - s1, abs(z) - s2
        inside = min(max(qx, max(qy, qz)), 0.0)
        qx, qy, qz = max(qx, 0.0), max(qy, 0.0), max(qz, 0.0)
        return np.sqrt(qx * qx + qy * qy + qz * qz) + inside
    if t == _SPHERE:
        return np.sqrt(x * x + y * y + z * z) - s0
    if t == _CAPSULE:
        dz = z - min(max(z, -s1), s1)
        return np.sqrt(x * x + y * y + dz * dz) - s0
    if t == _CYLINDER:
        d0 = np.sqrt(x * x + y * y) - s0
        d1 = abs(z) - s1
        a, b = max(d0, 0.0), max(d1, 0.0)
        return min(max(d0, d1), 0.0) + np.sqrt(a * a + b * b)
    if t == _ELLIPSOID:      # exact: the root solve of contact_model._ellipsoid_distance
        a0, a1, a2 = s0 * s0, s1 * s1, s2 * s2
        lo = -min(a0, min(a1, a2)) * (1.0 - 1e-12)
        tt = max(max(s0 * abs(x) - a0, max(s1 * abs(y) - a1, s2 * abs(z) - a2)), lo)
        for _ in range(8):
            d0, d1, d2 = tt + a0, tt + a1, tt + a2
            q0, q1, q2 = s0 * x / d0, s1 * y / d1, s2 * z / d2
            r2 = q0 * q0 + q1 * q1 + q2 * q2
            r = np.sqrt(r2)
            tt = max(tt - (1.0 - r) * r2 / max(q0 * q0 / d0 + q1 * q1 / d1 + q2 * q2 / d2, 1e-300), lo)
        u0, u1, u2 = x / (tt + a0), y / (tt + a1), z / (tt + a2)
        return tt * np.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
    return z  # plane


def _distribute(points_h, area, cell, cells_per_pad, pad, geom, distal_bodies, xmat, xpos, geom_xmat, geom_xpos,
                geom_type, geom_size, volume, level, force, out):
    """For each pair p (pad[p], object geom[p]): the field A·max(λ − sdf, 0) over the pad's
    quadrature points (λ solved exactly for `volume[p]` [m³] unless `level[p]` is finite),
    normalised, times force[p] (3,), added to out[p·cells_per_pad + cell] (rows: cells,
    columns: axes). Poses come straight from MjData (xmat, xpos, geom_xmat, geom_xpos).
    Returns λ per pair [m]."""
    P = pad.shape[0]
    M = points_h.shape[2]
    lam_out = np.empty(P)
    sdf = np.empty(M)
    T = np.empty((3, 4))
    for p in range(P):
        k = pad[p]
        g = geom[p]
        b = distal_bodies[k]
        # distal → geom: A = Rgᵀ·Rd, t = Rgᵀ·(xd − xg)  (row-major 3 × 3 rotations)
        for i in range(3):
            for j in range(3):
                acc = 0.0
                for r in range(3):
                    acc += geom_xmat[g, 3 * r + i] * xmat[b, 3 * r + j]
                T[i, j] = acc
            acc = 0.0
            for r in range(3):
                acc += geom_xmat[g, 3 * r + i] * (xpos[b, r] - geom_xpos[g, r])
            T[i, 3] = acc
        t = geom_type[g]
        s0, s1, s2 = geom_size[g, 0], geom_size[g, 1], geom_size[g, 2]
        smin = np.inf
        for m in range(M):
            px, py, pz = points_h[k, 0, m], points_h[k, 1, m], points_h[k, 2, m]
            x = T[0, 0] * px + T[0, 1] * py + T[0, 2] * pz + T[0, 3]
            y = T[1, 0] * px + T[1, 1] * py + T[1, 2] * pz + T[1, 3]
            z = T[2, 0] * px + T[2, 1] * py + T[2, 2] * pz + T[2, 3]
            v = _sdf(t, s0, s1, s2, x, y, z)
            sdf[m] = v
            if v < smin:
                smin = v
        lam = level[p]
        if np.isfinite(lam):
            total = 0.0
            for m in range(M):
                d = lam - sdf[m]
                if d > 0.0:
                    total += area[k, m] * d
        else:
            # Φ(λ) = Σ A·max(λ − sdf, 0) is convex, piecewise linear and increasing: Newton from
            # the right (λ₀ = min sdf + V / A_closest has Φ(λ₀) ≥ V) lands on the exact root once
            # its active set stops changing — no sort of every point.
            vol = volume[p]
            a_min = 0.0
            for m in range(M):
                if sdf[m] == smin:
                    a_min = max(a_min, area[k, m])
            lam = smin + vol / a_min
            total = 0.0
            for _ in range(200):
                phi = 0.0
                dphi = 0.0
                for m in range(M):
                    d = lam - sdf[m]
                    if d > 0.0:
                        phi += area[k, m] * d
                        dphi += area[k, m]
                total = phi
                step = (phi - vol) / dphi
                if step <= 1e-15 * (lam - smin):
                    break
                lam -= step
        lam_out[p] = lam
        base = p * cells_per_pad      # one block of cells per pair
        for m in range(M):
            d = lam - sdf[m]
            if d > 0.0:
                w = area[k, m] * d / total
                r = base + cell[k, m]
                out[r, 0] += w * force[p, 0]
                out[r, 1] += w * force[p, 1]
                out[r, 2] += w * force[p, 2]
    return lam_out


def kernel():
    """The compiled `_distribute` (numba imported and the kernel compiled or loaded from its cache
    on the first call), or None when numba is not installed."""
    if not _compiled:
        if not AVAILABLE:
            return None
        import numba

        global _sdf
        _sdf = numba.njit(cache=True, inline="always")(_sdf)
        _compiled.append(numba.njit(cache=True)(_distribute))
    return _compiled[0]


def __getattr__(name: str):
    if name == "KERNEL":
        return kernel()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["AVAILABLE", "kernel"]
