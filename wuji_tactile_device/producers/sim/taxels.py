"""Synthetic taxel layout on the simulated fingertip pads (40 thumb + 34 × 4 = 176 taxels).

The pad is the palm-side region of the distal capsule (distal body = `tip_sensor_frame`):
outward normal with palm-side component > 0.2, on the palm side, and more than 1 mm below the
pad's proximal edge (z < −6 mm; the pad spans z ≈ −5 mm to the fingertip). Taxels are chosen
from area-weighted random candidates on that surface (fixed seed: the layout is deterministic)
by farthest-point selection. These are simulated sensing locations, not measured hardware ones.

Frames (all in the distal body frame, right-handed):
- taxel frame: +Z = outward surface normal, +X = the direction toward the fingertip (distal −z)
  projected on the tangent plane, +Y = Z × X;
- pad frame (resultants, force images): the distal segment's OpenXR joint axes, the same frame
  as the metadata's segment bind pose and `wuji_tactile_device.contract.pads`: +Z along the bone toward
  the wrist (distal +z), +Y toward the nail (away from the pad), +X = Y × Z; origin at the pad
  centre on the surface. Pressing the pad gives a resultant Fy > 0 (the force pushes the pad
  toward the nail).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...hands.wuji_hand2 import FINGERS, TAXELS_PER_FINGER
from .model import FingerGeometry, distal_geometry

PAD_TOP_Z = -0.005           # pad's proximal edge in the distal frame [m]
PAD_BOUNDARY = 0.001         # excluded band below the proximal edge [m]
PAD_MIN_NORMAL = 0.2         # palm-side component of the outward normal inside the pad
IMAGE_SHAPE = (48, 32)       # rows along the finger (proximal → tip), columns across
LAYOUT_SEED = 20261111
NUM_CANDIDATES = 6000
TOWARD_TIP = np.array([0.0, 0.0, -1.0])  # distal frame; taxel +X = its tangent projection


def _surface_points(g: FingerGeometry, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """`n` points uniformly distributed by area on the capsule (cylinder + lower cap), with normals."""
    L = g.z_top - g.z_bottom
    a_cyl, a_cap = 2 * np.pi * g.radius * L, 2 * np.pi * g.radius ** 2
    on_cyl = rng.random(n) < a_cyl / (a_cyl + a_cap)
    phi = rng.random(n) * 2 * np.pi
    z = g.z_bottom + rng.random(n) * L
    nrm_cyl = np.stack([np.cos(phi), np.sin(phi), np.zeros(n)], axis=1)
    v = rng.normal(size=(n, 3))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    v[:, 2] = -np.abs(v[:, 2])  # lower hemisphere
    normals = np.where(on_cyl[:, None], nrm_cyl, v)
    centres = np.where(on_cyl[:, None], np.stack([np.zeros(n), np.zeros(n), z], axis=1),
                       np.array([0.0, 0.0, g.z_bottom]))
    return centres + g.radius * normals, normals


def _in_pad(points: np.ndarray, normals: np.ndarray, g: FingerGeometry) -> np.ndarray:
    return ((g.pad_side * normals[:, 1] > PAD_MIN_NORMAL) & (g.pad_side * points[:, 1] > 0)
            & (points[:, 2] < PAD_TOP_Z - PAD_BOUNDARY))


def _farthest_points(points: np.ndarray, k: int, start: int) -> np.ndarray:
    chosen = [start]
    d = np.linalg.norm(points - points[start], axis=1)
    for _ in range(k - 1):
        i = int(np.argmax(d))
        chosen.append(i)
        d = np.minimum(d, np.linalg.norm(points - points[i], axis=1))
    return np.array(chosen)


def _tangent_frames(normals: np.ndarray, pad_x: np.ndarray) -> np.ndarray:
    """(n, 3, 3) rotations whose columns are the taxel X, Y, Z axes."""
    x = pad_x - (normals @ pad_x)[:, None] * normals
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = np.cross(normals, x)
    return np.stack([x, y, normals], axis=2)


def nearest_neighbour_spacing(points: np.ndarray) -> np.ndarray:
    d = np.linalg.norm(points[:, None, :] - points[None, :, :], axis=2)
    np.fill_diagonal(d, np.inf)
    return d.min(axis=1)


@dataclass(frozen=True)
class PadTaxels:
    """One pad's taxels and force-image grid, in the distal body frame [m]."""

    finger: str
    geometry: FingerGeometry
    positions: np.ndarray      # (n, 3)
    rotations: np.ndarray      # (n, 3, 3) taxel axes as columns (X tangent, Y, Z normal)
    pad_rotation: np.ndarray   # (3, 3) pad axes as columns
    pad_origin: np.ndarray     # (3,)
    nn_spacing: np.ndarray     # (n,) nearest-neighbour distance of each taxel [m]
    pixel_positions: np.ndarray  # (48, 32, 3); invalid pixels hold NaN
    pixel_valid: np.ndarray    # (48, 32) bool

    @property
    def normals(self) -> np.ndarray:
        return self.rotations[:, :, 2]

    @property
    def tangents(self) -> np.ndarray:
        return self.rotations[:, :, 0]

    @property
    def active_radius(self) -> float:
        """Nearest-taxel radius of the active-pad mask: 0.9 × max NN spacing + 0.2 mm [m]."""
        return 0.9 * float(self.nn_spacing.max()) + 0.0002


def _pad_frame(g: FingerGeometry) -> tuple[np.ndarray, np.ndarray]:
    """Pad frame = the distal segment's OpenXR joint axes (as `pads.py` and the metadata's segment
    bind poses use): +Z along the bone toward the wrist, +Y toward the nail, X = Y × Z."""
    y = np.array([0.0, -g.pad_side, 0.0])
    z = np.array([0.0, 0.0, 1.0])
    R = np.stack([np.cross(y, z), y, z], axis=1)
    origin = np.array([0.0, g.pad_side * g.radius, 0.5 * (PAD_TOP_Z + g.z_bottom - g.radius)])
    return R, origin


def image_grid(g: FingerGeometry, step: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pad's image grid (`IMAGE_SHAPE`), each cell subdivided `step`× per axis: rows at even
    steps of z from `PAD_TOP_Z − PAD_BOUNDARY` down to the tip, columns at even steps of x across
    the capsule. Returns the cell centres on the capsule's surface (rows, cols, 3) [m, distal
    frame], NaN outside the pad; the mask of the pad's cells (rows, cols): on the surface, palm-side
    normal component > `PAD_MIN_NORMAL`; and each cell's surface area (rows, cols) [m²] (its
    projected area over that normal component), NaN outside the pad."""
    rows, cols = IMAGE_SHAPE[0] * step, IMAGE_SHAPE[1] * step
    z_hi, z_lo = PAD_TOP_Z - PAD_BOUNDARY, g.z_bottom - g.radius
    z = z_hi + (np.arange(rows) + 0.5) / rows * (z_lo - z_hi)
    x = -g.radius + (np.arange(cols) + 0.5) / cols * 2 * g.radius
    Z, X = np.meshgrid(z, x, indexing="ij")
    dz = np.minimum(Z - g.z_bottom, 0.0)
    rho2 = g.radius ** 2 - X ** 2 - dz ** 2
    with np.errstate(invalid="ignore"):
        Y = g.pad_side * np.sqrt(rho2)
    pts = np.stack([X, Y, Z], axis=-1)
    normals = np.stack([X, Y, dz], axis=-1) / g.radius
    valid = (rho2 > 0) & (g.pad_side * normals[..., 1] > PAD_MIN_NORMAL)
    pts[~valid] = np.nan
    area = np.full(valid.shape, np.nan)
    area[valid] = (abs(z_lo - z_hi) / rows) * (2 * g.radius / cols) / np.abs(normals[..., 1][valid])
    return pts, valid, area


@lru_cache(maxsize=4)
def pad_taxels(side: str) -> tuple[PadTaxels, ...]:
    """The five pad layouts of one hand (thumb → pinky); deterministic."""
    out = []
    for fi, (finger, count) in enumerate(zip(FINGERS, TAXELS_PER_FINGER, strict=True)):
        g = distal_geometry(side, finger)
        g_right = distal_geometry("right", finger)
        # The left pad is the right pad mirrored (y → −y): same taxel index, mirrored place.
        rng = np.random.default_rng(LAYOUT_SEED + fi)
        pts, nrm = _surface_points(g_right, NUM_CANDIDATES, rng)
        keep = _in_pad(pts, nrm, g_right)
        pts, nrm = pts[keep], nrm[keep]
        _, origin_right = _pad_frame(g_right)
        start = int(np.argmin(np.linalg.norm(pts - origin_right, axis=1)))
        idx = _farthest_points(pts, count, start)
        # Order taxels proximal → distal, then across (stable, readable indices).
        idx = idx[np.lexsort((np.round(pts[idx, 0], 6), -np.round(pts[idx, 2], 4)))]
        mirror = np.array([1.0, g.pad_side, 1.0])
        p, n = pts[idx] * mirror, nrm[idx] * mirror
        R_pad, origin = _pad_frame(g)
        rot = _tangent_frames(n, TOWARD_TIP)
        pix, valid, _ = image_grid(g)
        for a in (p, rot, R_pad, origin, pix, valid):
            a.setflags(write=False)
        spacing = nearest_neighbour_spacing(p)
        spacing.setflags(write=False)
        out.append(PadTaxels(finger=finger, geometry=g, positions=p, rotations=rot, pad_rotation=R_pad,
                             pad_origin=origin, nn_spacing=spacing, pixel_positions=pix, pixel_valid=valid))
    return tuple(out)


def taxel_poses_in_distal(side: str) -> list[np.ndarray]:
    """Per finger (thumb → pinky), (n, 7) taxel poses (x y z qx qy qz qw) in the distal frame."""
    from ...hands.wuji_hand2 import matrix_to_pose
    out = []
    for pad in pad_taxels(side):
        T = np.tile(np.eye(4), (len(pad.positions), 1, 1))
        T[:, :3, :3] = pad.rotations
        T[:, :3, 3] = pad.positions
        out.append(np.stack([matrix_to_pose(t) for t in T]))
    return out


def spacing_summary(side: str) -> dict[str, tuple[float, float, float]]:
    """Nearest-neighbour spacing (min, median, max) [mm] per pad."""
    return {p.finger: (1e3 * float(p.nn_spacing.min()), 1e3 * float(np.median(p.nn_spacing)),
                       1e3 * float(p.nn_spacing.max())) for p in pad_taxels(side)}
