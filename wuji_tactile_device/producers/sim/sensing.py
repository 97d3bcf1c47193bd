"""What a taxel reads: the pad's surface traction field carried through the elastomer to the
sensing plane and integrated over the taxel's sensitive area (a fixed linear map, precomputed).

The elastomer is modelled locally as an elastic half-space of depth `SENSING_DEPTH` above the
sensing plane (the taxels sit at the base of the 2 mm layer). A surface point load carries to
that depth as Boussinesq's (normal load) and Cerruti's (tangential load) stresses; the tractions
on the sensing plane (σ_zz, τ_xz, τ_yz) under a point load Q at lateral distance r are

    σ_zz = 3·P·d³ / (2π·(r² + d²)^{5/2})        (P normal),
    τ_xz ≈ 3·Q·d³ / (2π·(r² + d²)^{5/2})        (Q tangential, its axisymmetric part),

independent of the Poisson ratio ν in the half-space (ν enters σ_xx, σ_yy, which the taxels do
not read). Both integrate to the applied load over the plane; here one axisymmetric kernel k(r)
carries every traction component (Cerruti's τ_xz is this kernel times 3·x²/(r² + d²) averaged over
direction; the direction-dependent part and the normal dipole a tangential load adds are not
modelled). Distances are chords between surface points (the layer is thin against the pad's
radius: 2 mm against 8–9.5 mm).

A taxel's sensitive area is its cell of the sensing plane: the points nearer to it than to any
other taxel of its pad, so the cells tile the pad and the readings of a pad sum to its load
exactly. The kernel is normalised over the pad (the load near the rim stays on the pad's edge
taxels). So taxel j of a pad reads

    f_j = Σ_x G[j, x] · t(x),   G[j, x] = Σ_{y ∈ cell j} A_y·k(|x − y|) / Σ_y A_y·k(|x − y|),

t(x) the traction (force per quadrature point, three axes) of the contact model's field at
surface point x. Σ_j G[j, x] = 1 for every x: conservation per axis is exact.

The sensing plane is sampled at the 0.5 mm image grid (its areas); the load points x are any
surface points (the image grid's pixels, or every second one, in the producer). Convergence (`tests/test_sim_sensing.py`):
the taxel shares move by ≤ 0.4 % of the load (L1) against a 4× finer load grid, ≤ 2 % with the
sensing plane also 4× finer.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from ...errors import ProducerError
from .taxels import IMAGE_SHAPE, PAD_BOUNDARY, PAD_TOP_Z, PadTaxels, pad_taxels

#: Depth of the sensing plane below the pad surface [m] (the elastomer's thickness).
SENSING_DEPTH = 0.002


def layer_kernel(r2: np.ndarray, depth: float = SENSING_DEPTH) -> np.ndarray:
    """Boussinesq traction [1/m²] on the sensing plane at squared lateral distance `r2` [m²] from
    a unit surface point load: 3·d³ / (2π·(r² + d²)^{5/2}); integrates to 1 over the plane."""
    d2 = depth * depth
    return (3.0 * depth * d2 / (2.0 * np.pi)) * (r2 + d2) ** -2.5


def _grid_areas(pad: PadTaxels, step: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Valid points (M, 3) [m] of the pad's image grid subdivided `step`× per axis, their surface
    areas (M,) [m²] and (for step 1) their flat pixel index (M,)."""
    g = pad.geometry
    rows, cols = IMAGE_SHAPE[0] * step, IMAGE_SHAPE[1] * step
    z_hi, z_lo = PAD_TOP_Z - PAD_BOUNDARY, g.z_bottom - g.radius  # the image grid's rows (taxels._image_grid)
    z = z_hi + (np.arange(rows) + 0.5) / rows * (z_lo - z_hi)
    x = -g.radius + (np.arange(cols) + 0.5) / cols * 2 * g.radius
    Z, X = np.meshgrid(z, x, indexing="ij")
    dz = np.minimum(Z - g.z_bottom, 0.0)
    rho2 = g.radius ** 2 - X ** 2 - dz ** 2
    with np.errstate(invalid="ignore"):
        Y = g.pad_side * np.sqrt(rho2)
    ny = Y / g.radius
    valid = (rho2 > 0) & (g.pad_side * ny > 0.2)
    pts = np.stack([X, Y, Z], axis=-1)[valid]
    area = (abs(z_lo - z_hi) / rows) * (2 * g.radius / cols) / np.abs(ny[valid])
    return pts, area, np.flatnonzero(valid.ravel())


def influence(pad: PadTaxels, load_points: np.ndarray, *, sensing_step: int = 1,
              depth: float = SENSING_DEPTH) -> np.ndarray:
    """(n_taxels, L) G: the share of a unit load at each of `load_points` (L, 3) [m, distal
    frame] that each taxel of `pad` reads; every column sums to 1. `sensing_step`: the sensing
    plane's sampling, 1 = the 0.5 mm image grid, 4 = 0.125 mm (convergence checks)."""
    y, a_y, _ = _grid_areas(pad, sensing_step)
    d2 = ((y[:, None, :] - pad.positions[None, :, :]) ** 2).sum(axis=2)
    cell = d2.argmin(axis=1)                                          # sensitive area of each y
    n = len(pad.positions)
    onehot = (cell[None, :] == np.arange(n)[:, None]).astype(np.float64)    # (n, Y)
    out = np.empty((n, len(load_points)))
    for start in range(0, len(load_points), 512):                    # bounded memory
        x = load_points[start:start + 512]
        r2 = (x * x).sum(axis=1)[None, :] + (y * y).sum(axis=1)[:, None] - 2.0 * (y @ x.T)
        k = layer_kernel(np.maximum(r2, 0.0), depth) * a_y[:, None]     # (Y, L)
        k /= k.sum(axis=0, keepdims=True)
        out[:, start:start + 512] = onehot @ k
    return out


def compute_pixel_influence(side: str = "right", slots: int = 40) -> np.ndarray:
    """(5, slots, 48·32) G per pad for loads at the image grid's pixels (zero columns at invalid
    pixels, zero rows at padding slots), thumb → pinky; ≈ 2 s. The same for both hands (the left
    pad is the right one mirrored). `INFLUENCE_FILE` holds it precomputed."""
    npx = IMAGE_SHAPE[0] * IMAGE_SHAPE[1]
    out = np.zeros((5, slots, npx))
    for k, pad in enumerate(pad_taxels(side)):
        x, _, flat = _grid_areas(pad, 1)
        out[k, :len(pad.positions)][:, flat] = influence(pad, x)
    return out


#: The precomputed `compute_pixel_influence()` (float32; `python -m
#: wuji_tactile_device.producers.sim.sensing` rewrites it), shipped so no run pays its 2 s.
INFLUENCE_FILE = Path(__file__).with_name("taxel_influence.npz")


@lru_cache(maxsize=1)
def pixel_influence() -> np.ndarray:
    """`compute_pixel_influence()` from `INFLUENCE_FILE`, float64, each column renormalised to
    sum to exactly 1 (conservation to rounding). Read-only."""
    try:
        with np.load(INFLUENCE_FILE) as f:
            g = f["influence"].astype(np.float64)
            depth = float(f["depth"])
    except FileNotFoundError:
        raise ProducerError(f"sim: the taxel influence file {str(INFLUENCE_FILE)!r} is missing "
                            "(reinstall, or rebuild it: python -m wuji_tactile_device.producers.sim.sensing)") from None
    if depth != SENSING_DEPTH:
        raise ProducerError(f"sim: {str(INFLUENCE_FILE)!r} was built for a {depth * 1e3:g} mm sensing depth, "
                            f"the model uses {SENSING_DEPTH * 1e3:g} mm; rebuild it")
    col = g.sum(axis=1, keepdims=True)
    np.divide(g, col, out=g, where=col > 0)
    g.setflags(write=False)
    return g


def write_influence_file() -> None:
    g = compute_pixel_influence()
    np.savez_compressed(INFLUENCE_FILE, influence=g.astype(np.float32), depth=np.float64(SENSING_DEPTH))


if __name__ == "__main__":
    write_influence_file()
    print(f"wrote {INFLUENCE_FILE}")


__all__ = ["SENSING_DEPTH", "INFLUENCE_FILE", "layer_kernel", "influence", "compute_pixel_influence", "pixel_influence"]
