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

The sensing surface is the whole distal capsule (`sensing_plane`: the cylinder and the tip cap,
all the way around). A taxel's sensitive area is its cell of the sensing area (the pad region
where the taxels were placed): the points of it nearer to the taxel than to any other taxel of its
pad. The kernel is normalised over the whole capsule, so a load near or past the pad's border is
partly carried beyond the sensing area (the pad's unsensed rim, the finger shell) and read by no
taxel. Taxel j of a pad reads

    f_j = Σ_x G[j, x] · t(x),   G[j, x] = Σ_{y ∈ cell j} A_y·k(|x − y|) / Σ_{y ∈ capsule} A_y·k(|x − y|),

t(x) the traction (force per quadrature point, three axes) of the contact model's field at
surface point x. Σ_j G[j, x] = s(x) ≤ 1 is the point's sensed share (0.98–0.995 mid-pad, ≈ 0.5 on
the border, < 0.02 at `RIM_ANGLE`); the contact model accounts the rest as the pad's unsensed load.

The sensing surface is sampled at ≈ 0.5 mm; the load points x are any surface points (the image
grid's pixels and the quadrature's rim, `rim_points`, in the producer). Convergence
(`tests/test_sim_sensing.py`): the taxel shares move by ≤ 0.5 % of the load (L1) against a 4×
finer load grid, ≤ 2.5 % with the sensing surface also 4× finer.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ...errors import ProducerError
from .taxels import IMAGE_SHAPE, PAD_BOUNDARY, PAD_MIN_NORMAL, PAD_TOP_Z, PadTaxels, image_grid, pad_taxels

#: Depth of the sensing plane below the pad surface [m] (the elastomer's thickness).
SENSING_DEPTH = 0.002


def layer_kernel(r2: np.ndarray, depth: float = SENSING_DEPTH) -> np.ndarray:
    """Boussinesq traction [1/m²] on the sensing plane at squared lateral distance `r2` [m²] from
    a unit surface point load: 3·d³ / (2π·(r² + d²)^{5/2}); integrates to 1 over the plane."""
    d2 = depth * depth
    return (3.0 * depth * d2 / (2.0 * np.pi)) * (r2 + d2) ** -2.5


def _grid_areas(pad: PadTaxels, step: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Valid points (M, 3) [m] of the pad's image grid subdivided `step`× per axis
    (`taxels.image_grid`), their surface areas (M,) [m²] and (for step 1) their flat pixel index (M,)."""
    pts, valid, area = image_grid(pad.geometry, step)
    return pts[valid], area[valid], np.flatnonzero(valid.ravel())


#: Rim of the load quadrature: surface points of the distal capsule beyond the pad's sensing
#: area, around the finger up to this angle from the palm direction [rad] (a footprint reaching
#: past the pad's border carries load there; the mask drops contacts long before it).
RIM_ANGLE = np.radians(125.0)
#: The load quadrature takes the image grid's pixels whose normal has a palm-side component ≥
#: this (there its x-uniform columns lie ≤ 1/0.6 of their width apart along the surface; toward
#: the pad's sides they thin out to 5× at its border), and angle-uniform points beyond
#: (`rim_points`).
QUAD_MIN_NORMAL = 0.6
#: The rim's sampling: every `RIM_STEP`-th pixel row, arcs of `RIM_STEP` × 0.5 mm.
RIM_STEP = 2


def sensing_plane(pad: PadTaxels, step: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The whole sensing surface of the distal segment (the capsule's cylinder from `z_top` down
    and its tip cap, all the way around), sampled at ≈ 0.5 mm / `step`: points (Y, 3) [m, distal
    frame], areas (Y,) [m²] (they sum to the capsule's area) and the receiving cell of each (Y,):
    the nearest taxel of `pad` inside the sensing area (palm-side normal > `PAD_MIN_NORMAL`, below
    `PAD_TOP_Z − PAD_BOUNDARY`: where the taxels were placed), −1 beyond it (unsensed)."""
    g = pad.geometry
    h = 0.0005 / step
    n_phi = int(round(2 * np.pi * g.radius / h))
    n_z = max(1, int(round((g.z_top - g.z_bottom) / h)))
    phi = (np.arange(n_phi) + 0.5) * (2 * np.pi / n_phi)
    z = g.z_bottom + (np.arange(n_z) + 0.5) * ((g.z_top - g.z_bottom) / n_z)
    P, Z = np.meshgrid(phi, z, indexing="ij")
    cyl = np.stack([g.radius * np.sin(P), g.radius * np.cos(P), Z], axis=-1).reshape(-1, 3)
    a_cyl = np.full(len(cyl), (2 * np.pi * g.radius / n_phi) * ((g.z_top - g.z_bottom) / n_z))
    # Tip cap: rings of equal polar step θ (0 at the tip), each split into ≈ h-long arcs.
    n_t = max(1, int(round(0.5 * np.pi * g.radius / h)))
    edges = np.linspace(0.0, 0.5 * np.pi, n_t + 1)
    cap, a_cap = [], []
    for t0, t1 in zip(edges[:-1], edges[1:], strict=True):
        t = 0.5 * (t0 + t1)
        n = max(1, int(round(2 * np.pi * g.radius * np.sin(t) / h)))
        f = (np.arange(n) + 0.5) * (2 * np.pi / n)
        rho = g.radius * np.sin(t)
        cap.append(np.stack([rho * np.sin(f), rho * np.cos(f), np.full(n, g.z_bottom - g.radius * np.cos(t))], axis=1))
        a_cap.append(np.full(n, 2 * np.pi * g.radius ** 2 * (np.cos(t0) - np.cos(t1)) / n))
    pts = np.concatenate([cyl] + cap)
    pts[:, 1] *= g.pad_side
    area = np.concatenate([a_cyl] + a_cap)
    c = np.zeros_like(pts)
    c[:, 2] = np.maximum(pts[:, 2], g.z_bottom)
    ny = (pts[:, 1] - c[:, 1]) / g.radius
    inside = (g.pad_side * ny > PAD_MIN_NORMAL) & (pts[:, 2] < PAD_TOP_Z - PAD_BOUNDARY)
    d2 = ((pts[:, None, :] - pad.positions[None, :, :]) ** 2).sum(axis=2)
    cell = np.where(inside, d2.argmin(axis=1), -1)
    return pts, area, cell


def rim_points(pad: PadTaxels, step: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The load quadrature's rim beside the image grid subdivided 1/`step` (the grid the contact
    model solves on: every `step`-th pixel whose normal's palm-side component is ≥
    `QUAD_MIN_NORMAL`): on every second pixel row (1 mm apart, whatever `step`: the rim's
    points cost per frame like the pixels), the capsule's cross-section beyond that row's pixels
    on both sides, from where their areas end (their summed area over R·Δz, as an arc from the
    palm direction) to `RIM_ANGLE`, in ≈ 1 mm arcs (the pad's sides up to its border, then the
    rim beyond it); and past the grid's proximal edge, rows of the same height up to the
    cylinder's top `z_top` around to ±`RIM_ANGLE`. Returns
    points (R, 3) [m], areas (R,) [m²] (dA = R·dφ·dz on the cylinder and the cap alike) and the
    flat index (R,) of the nearest valid pixel of the row (where the images place the rim's
    load; the pad's nearest valid pixel for rows without one)."""
    g = pad.geometry
    rows, cols = IMAGE_SHAPE
    r_idx = np.arange(RIM_STEP // 2, rows, RIM_STEP)
    c_idx = np.arange(step // 2, cols, step)
    z_hi, z_lo = PAD_TOP_Z - PAD_BOUNDARY, g.z_bottom - g.radius
    dz = abs(z_lo - z_hi) / rows * RIM_STEP
    dx = 2 * g.radius / cols * step
    valid = pad.pixel_valid
    vflat = np.flatnonzero(valid.ravel())
    vpts = pad.pixel_positions.reshape(-1, 3)[vflat]
    pts, area, pix = [], [], []
    for r in r_idx.tolist():
        z = z_hi + (r + 0.5) / rows * (z_lo - z_hi)
        dzc = min(z - g.z_bottom, 0.0)
        rho = np.sqrt(max(g.radius ** 2 - dzc ** 2, 0.0))
        if rho <= 0.0:
            continue
        cs = c_idx[valid[r, c_idx]]
        x = -g.radius + (cs + 0.5) / cols * 2 * g.radius
        ny = np.sqrt(np.maximum(g.radius ** 2 - x ** 2 - dzc ** 2, 1e-30)) / g.radius
        ny = ny[ny >= QUAD_MIN_NORMAL]
        phi0 = 0.5 * float((dx / ny).sum()) / g.radius            # the row's pixels' half-coverage [rad]
        if phi0 >= RIM_ANGLE:
            continue
        n = int(np.ceil((RIM_ANGLE - phi0) * g.radius / (0.0005 * RIM_STEP)))
        dphi = (RIM_ANGLE - phi0) / n
        phi = phi0 + (np.arange(n) + 0.5) * dphi
        phi = np.concatenate([phi, -phi])
        p = np.stack([rho * np.sin(phi), g.pad_side * rho * np.cos(phi), np.full(len(phi), z)], axis=1)
        pts.append(p)
        area.append(np.full(len(phi), g.radius * dphi * dz))
        row_valid = np.flatnonzero(valid[r])
        if len(row_valid):
            xr = -g.radius + (row_valid + 0.5) / cols * 2 * g.radius
            near = row_valid[np.abs(p[:, 0:1] - xr[None, :]).argmin(axis=1)]
            pix.append(r * cols + near)
        else:
            pix.append(vflat[((p[:, None, :] - vpts[None, :, :]) ** 2).sum(axis=2).argmin(axis=1)])
    # Past the grid's proximal edge up to the cylinder's top (`z_top`): whole rows, ≈ 1 mm arcs from
    # the palm direction to ±`RIM_ANGLE` (a footprint reaching past the pad's proximal edge).
    n_prox = int(np.ceil((g.z_top - z_hi) / dz - 1e-9))
    if n_prox > 0:
        dzp = (g.z_top - z_hi) / n_prox
        n = int(np.ceil(RIM_ANGLE * g.radius / (0.0005 * RIM_STEP)))
        dphi = RIM_ANGLE / n
        phi = (np.arange(n) + 0.5) * dphi
        phi = np.concatenate([phi, -phi])
        for k in range(n_prox):
            p = np.stack([g.radius * np.sin(phi), g.pad_side * g.radius * np.cos(phi),
                          np.full(len(phi), z_hi + (k + 0.5) * dzp)], axis=1)
            pts.append(p)
            area.append(np.full(len(phi), g.radius * dphi * dzp))
            pix.append(vflat[((p[:, None, :] - vpts[None, :, :]) ** 2).sum(axis=2).argmin(axis=1)])
    return np.concatenate(pts), np.concatenate(area), np.concatenate(pix).astype(np.int64)


def influence(pad: PadTaxels, load_points: np.ndarray, *, sensing_step: int = 1,
              depth: float = SENSING_DEPTH) -> np.ndarray:
    """(n_taxels, L) G: the share of a unit load at each of `load_points` (L, 3) [m, distal
    frame] that each taxel of `pad` reads: the part of its layer kernel that lands on the taxel's
    cell, over the kernel on the whole sensing surface (`sensing_plane`). A column sums to the
    point's sensed share s(x) ≤ 1 (1 − s(x) lands beyond the sensing area: the unsensed rim).
    `sensing_step`: the sensing surface's sampling, 1 = 0.5 mm, 4 = 0.125 mm (convergence checks)."""
    y, a_y, cell = sensing_plane(pad, sensing_step)
    n = len(pad.positions)
    inside = cell >= 0
    onehot = np.zeros((n, len(y)))
    onehot[cell[inside], np.flatnonzero(inside)] = 1.0                 # (n, Y)
    out = np.empty((n, len(load_points)))
    chunk = max(16, 2_000_000 // len(y))                              # bounded memory
    yy = (y * y).sum(axis=1)[:, None]
    for start in range(0, len(load_points), chunk):
        x = load_points[start:start + chunk]
        r2 = (x * x).sum(axis=1)[None, :] + yy - 2.0 * (y @ x.T)
        k = layer_kernel(np.maximum(r2, 0.0), depth) * a_y[:, None]     # (Y, L)
        k /= k.sum(axis=0, keepdims=True)
        out[:, start:start + chunk] = onehot @ k
    return out


class InfluenceTables(NamedTuple):
    """The precomputed influence of the load quadrature's points (read-only; see `influence_tables`
    for the dtypes)."""

    pixels: np.ndarray       # (5, slots, 48·32) loads at the image grid's pixels (0 at invalid ones)
    rim_fine: tuple[np.ndarray, ...]    # per pad (slots, R) loads at `rim_points(pad, 1)`
    rim_coarse: tuple[np.ndarray, ...]  # per pad (slots, R) loads at `rim_points(pad, 2)`


def compute_influence(side: str = "right", slots: int = 40, coarse_step: int = 2) -> InfluenceTables:
    """The influence tables (`InfluenceTables`) of every pad, thumb → pinky; ≈ 5 s. The same for
    both hands (the left pad is the right one mirrored). `INFLUENCE_FILE` holds them precomputed."""
    npx = IMAGE_SHAPE[0] * IMAGE_SHAPE[1]
    pix = np.zeros((5, slots, npx))
    fine: list[np.ndarray] = []
    coarse: list[np.ndarray] = []
    for k, pad in enumerate(pad_taxels(side)):
        x, _, flat = _grid_areas(pad, 1)
        n = len(pad.positions)
        rf, _, _ = rim_points(pad, 1)
        rc, _, _ = rim_points(pad, coarse_step)
        g = influence(pad, np.concatenate([x, rf, rc]))
        pix[k, :n][:, flat] = g[:, :len(x)]
        for out, part in ((fine, g[:, len(x):len(x) + len(rf)]), (coarse, g[:, len(x) + len(rf):])):
            t = np.zeros((slots, part.shape[1]))
            t[:n] = part
            out.append(t)
    return InfluenceTables(pix, tuple(fine), tuple(coarse))


def compute_pixel_influence(side: str = "right", slots: int = 40) -> np.ndarray:
    """(5, slots, 48·32) G per pad for loads at the image grid's pixels (`compute_influence`)."""
    return compute_influence(side, slots).pixels


#: The precomputed `compute_influence()` (float32; `python -m
#: wuji_tactile_device.producers.sim.sensing` rewrites it), shipped so no run pays its seconds.
INFLUENCE_FILE = Path(__file__).with_name("taxel_influence.npz")


@lru_cache(maxsize=1)
def influence_tables() -> InfluenceTables:
    """`compute_influence()` from `INFLUENCE_FILE`, read-only: the pixels' table float64 (the images
    multiply it every frame), the rim tables float32 as stored (copied into the read's float64
    tables when a model is built: the same values, without a float64 copy held by this cache)."""
    try:
        with np.load(INFLUENCE_FILE) as f:
            depth = float(f["depth"])
            if "rim_angle" not in f.files or float(f["rim_angle"]) != RIM_ANGLE:
                raise ProducerError(f"sim: {str(INFLUENCE_FILE)!r} predates the edge roll-off (no rim tables "
                                    "for this rim); rebuild it: python -m wuji_tactile_device.producers.sim.sensing")
            pix = f["influence"].astype(np.float64)
            counts_f, counts_c = f["rim_fine_count"], f["rim_coarse_count"]
            rim_f, rim_c = f["rim_fine"], f["rim_coarse"]
            fine = tuple(rim_f[k, :, :int(counts_f[k])] for k in range(5))
            coarse = tuple(rim_c[k, :, :int(counts_c[k])] for k in range(5))
    except FileNotFoundError:
        raise ProducerError(f"sim: the taxel influence file {str(INFLUENCE_FILE)!r} is missing "
                            "(reinstall, or rebuild it: python -m wuji_tactile_device.producers.sim.sensing)") from None
    if depth != SENSING_DEPTH:
        raise ProducerError(f"sim: {str(INFLUENCE_FILE)!r} was built for a {depth * 1e3:g} mm sensing depth, "
                            f"the model uses {SENSING_DEPTH * 1e3:g} mm; rebuild it")
    for a in (pix,) + fine + coarse:
        a.setflags(write=False)
    return InfluenceTables(pix, fine, coarse)


def pixel_influence() -> np.ndarray:
    """(5, 40, 48·32) the pixels' influence (`influence_tables().pixels`): column sums are the
    pixels' sensed shares (1 inside the pad, falling toward its border). Read-only."""
    return influence_tables().pixels


def write_influence_file() -> None:
    t = compute_influence()

    def padded(parts: tuple[np.ndarray, ...]) -> np.ndarray:
        out = np.zeros((5, parts[0].shape[0], max(p.shape[1] for p in parts)), np.float32)
        for k, p in enumerate(parts):
            out[k, :, :p.shape[1]] = p
        return out

    np.savez_compressed(INFLUENCE_FILE, influence=t.pixels.astype(np.float32), depth=np.float64(SENSING_DEPTH),
                        rim_angle=np.float64(RIM_ANGLE), rim_fine=padded(t.rim_fine), rim_coarse=padded(t.rim_coarse),
                        rim_fine_count=np.array([p.shape[1] for p in t.rim_fine]),
                        rim_coarse_count=np.array([p.shape[1] for p in t.rim_coarse]))


if __name__ == "__main__":
    write_influence_file()
    print(f"wrote {INFLUENCE_FILE}")


__all__ = ["SENSING_DEPTH", "INFLUENCE_FILE", "RIM_ANGLE", "QUAD_MIN_NORMAL", "InfluenceTables", "layer_kernel", "sensing_plane",
           "rim_points", "influence", "compute_influence", "compute_pixel_influence", "influence_tables",
           "pixel_influence"]
