"""Taxel statistics of the sensing model against its own continuous sensing-plane field (shared
by tests/test_sim_sensing.py and the footprint tables in docs/sim.md)."""
from __future__ import annotations

import numpy as np

from contact_model_helpers import INDEX, object_on_index_pad
from wuji_tactile_device.producers.sim import sensing
from wuji_tactile_device.producers.sim.taxels import pad_taxels


def index_taxels(sim, geom, force):
    """(34,) normal load [N] on each index taxel and the pad's pixel field (1536,) [N] for a
    pure normal load `force` [N] (the producer's path: field → influence)."""
    dm = sim.contacts.distributed
    f = np.array([[0.0, -force, 0.0]])
    field, _ = dm.field(sim.data, np.array([INDEX]), np.array([geom]), f, np.array([force]))
    taxels = dm.taxel_slots(field).reshape(5, -1, 3)[INDEX, :34]
    return -taxels[:, 1], -field[INDEX, :, 1]


def published_taxels(sim, geom, force, *, fine=False):
    """(34,) normal load [N] each index taxel publishes (own normal axis) for a pure normal load
    `force` [N]: the producer's path (`solve` → `taxel_readings`) on the 1 mm grid it uses
    without images (`fine`: the 0.5 mm image grid it uses with them)."""
    dm = sim.contacts.distributed
    f = np.array([[0.0, -force, 0.0]])
    t = dm.solve(sim.data, np.array([INDEX]), np.array([geom]), f, np.array([force]), f, np.array([1.0]), fine=fine)
    r = dm.taxel_readings(t).reshape(5, -1, 3)[INDEX, :34]
    return -(r * dm._slot_normals[INDEX, :34]).sum(axis=1)


def continuous_field(pixel_load, step=2):
    """The sensing-plane traction of a pixel load (1536,) [N]: (points (Y, 3) [m], force per
    point (Y,) [N], area (Y,) [m²]) on the image grid subdivided `step`×."""
    _, load, y, a_y, k = _loaded_kernel(pixel_load, step)
    return y, k @ load, a_y


def _loaded_kernel(pixel_load, step):
    """The loaded pixels' points x (X, 3) [m] and loads (X,) [N], the sensing-plane points y (Y, 3)
    [m] and areas (Y,) [m²] on the image grid subdivided `step`×, and the layer kernel (Y, X)
    normalised per loaded pixel."""
    pad = pad_taxels("right")[INDEX]
    x, _, flat = sensing._grid_areas(pad, 1)
    y, a_y, _ = sensing._grid_areas(pad, step)
    load = pixel_load[flat]
    keep = load > 0
    x, load = x[keep], load[keep]
    k = sensing.layer_kernel(((y[:, None, :] - x[None, :, :]) ** 2).sum(axis=2)) * a_y[:, None]
    k /= k.sum(axis=0, keepdims=True)                                     # (Y, X)
    return x, load, y, a_y, k


def second_moment(points, w):
    """Σ w·|p − c|² / Σ w [m²] about the w-centroid."""
    c = (w @ points) / w.sum()
    return float(w @ ((points - c) ** 2).sum(axis=1) / w.sum())


def statistics(kind, radius, loads, *, published=True):
    """Per load: (taxels above 5 % of the peak taxel, taxel second moment [mm²], continuous
    sensing-plane area above 5 % of its peak pressure [mm²], continuous second moment [mm²]);
    the taxels as published (`published_taxels`) or the fine field's (`index_taxels`)."""
    sim, g = object_on_index_pad(kind, radius=radius)
    pos = pad_taxels("right")[INDEX].positions
    rows = []
    for F in loads:
        t, pix = index_taxels(sim, g, F)
        if published:
            t = published_taxels(sim, g, F)
        y, fy, ay = continuous_field(pix)
        p = fy / ay
        rows.append((int(np.sum(t > 0.05 * t.max())), 1e6 * second_moment(pos, np.maximum(t, 0)),
                     1e6 * float(ay[p > 0.05 * p.max()].sum()), 1e6 * second_moment(y, fy)))
    return np.array(rows)


def taxel_floor(sim, geom, force):
    """The published index taxels' normal loads (34,) [N] for a pure normal load `force` (the
    producer's path, 1 mm grid) and the load-weighted point-load floor [m²] of their second
    moment: a load P_x at surface point x reaches the taxels as G[:, x]·P_x, whose own centroid
    is c(x) = Σ_j G[j, x]·y_j and spread s(x) = Σ_j G[j, x]·|y_j − c(x)|² (G's columns normalised
    to 1; the load reaching the taxels is W_x = P_x·(x's sensed share)), so for the taxel loads
    N = G·W exactly (law of total variance)
        m2(N) = Σ_x W_x·s(x) / Σ W  +  Var_W(c(x)):
    the first term is the floor (what the kernel and the taxel cells add, load-weighted over the
    footprint, not one point's), the second the footprint's spread as the taxels map it.
    Returns (published loads, floor [m²], Var_W(c) [m²], N = G·W (34,) [N]: the taxels' normal
    loads before the pad's remainder, s(x) [m²] at the footprint's highest-pressure point: the
    floor of one point load at the contact's place)."""
    dm = sim.contacts.distributed
    f = np.array([[0.0, -force, 0.0]])
    t = dm.solve(sim.data, np.array([INDEX]), np.array([geom]), f, np.array([force]), f, np.array([1.0]), fine=False)
    r = dm.taxel_readings(t).reshape(5, -1, 3)[INDEX, :34]
    published = -(r * dm._slot_normals[INDEX, :34]).sum(axis=1)
    G = t.grid.GT.take(t.flat[0], axis=0)[:, :34]                         # (K, 34) per footprint point
    sensed = G.sum(axis=1)                                                 # s(x): the share reaching the taxels
    G = G / sensed[:, None]
    y = sim.contacts.pads[INDEX].positions                                # (34, 3) taxel positions
    c = G @ y                                                              # (K, 3) centroid per point
    spread = (G * ((y[None, :, :] - c[:, None, :]) ** 2).sum(axis=2)).sum(axis=1)
    P = t.Pn[0]
    W = P * sensed                                                         # the load that reaches the taxels
    floor = float(W @ spread / W.sum())
    cbar = (W @ c) / W.sum()
    var = float(W @ ((c - cbar) ** 2).sum(axis=1) / W.sum())
    peak = int(np.argmax(P * t.grid.inv_area_flat.take(t.flat[0])))
    return published, floor, var, W @ G, float(spread[peak])


def field_floor(pixel_load, step=2):
    """The sensing-plane field's point-load floor [m²], load-weighted over the footprint: Σ_x
    p_x·s_k(x) / Σ p, s_k(x) the second moment of the (pad-normalised) kernel of a point at x."""
    _, load, y, _, k = _loaded_kernel(pixel_load, step)
    c = k.T @ y                                                            # (X, 3)
    s_k = (k * ((y[:, None, :] - c[None, :, :]) ** 2).sum(axis=2)).sum(axis=0)
    return float(load @ s_k / load.sum())


def slope(loads, values):
    return float(np.polyfit(np.log(loads), np.log(values), 1)[0])


def fine_taxels(sim, geom, force, load_step=4, sensing_step=1):
    """(34,) normal taxel loads [N] with the load field solved on the image grid subdivided
    `load_step`× and the sensing plane `sensing_step`× (convergence reference)."""
    from wuji_tactile_device.producers.sim.contact_model import signed_distance
    pad = pad_taxels("right")[INDEX]
    x, a_x, _ = sensing._grid_areas(pad, load_step)
    dm = sim.contacts.distributed
    T = dm._transforms(sim.data, np.array([INDEX]), np.array([geom]))[0]
    local = T[:, :3] @ x.T + T[:, 3:4]
    gt = int(sim.model.geom_type[geom])
    sdf = signed_distance(gt, sim.model.geom_size[geom][None], local[None])[0]
    lam = dm._level(sdf[None], a_x[None], np.array([force / dm.stiffness]))[0]
    w = a_x * np.maximum(lam - sdf, 0.0)
    keep = w > 0
    G = sensing.influence(pad, x[keep], sensing_step=sensing_step)
    return G @ (force * w[keep] / w.sum())


EDGE_ANGLES = np.arange(0, 121)          # [deg] around the index finger from the pad normal


def edge_sweep(angles=EDGE_ANGLES, force=0.5, radius=0.010, *, backend=None, z=None):
    """A sphere (`radius`) pressed with `force` [N] along its contact normal at angle θ around
    the index finger (from the pad normal toward distal +x, at z = CONTACT_Z, or at each of `z`
    (one per angle) [m, distal frame]: along the finger past the pad's proximal edge), read as the
    producer reads it without images (`solve` → `pad_readings`, the 1 mm grid). Per angle:
    (sensed share Σ taxels·n̂ / F, largest taxel share |f_j|·… / F, taxels above 5 % of the
    peak, whether the active-pad mask keeps the contact, max |taxels + unsensed − F| [N]);
    rows (A, 5). n̂: the inward contact normal; the taxels' normal loads along their own axes."""
    from contact_model_helpers import CONTACT_Z
    sim, g = object_on_index_pad("sphere", radius=radius)
    dm = sim.contacts.distributed
    if backend is not None:
        from wuji_tactile_device.producers.sim.contact_model import DistributedContact
        dm = DistributedContact(sim.model, sim.contacts.pads, sim.contacts.distal_bodies,
                                np.array([g]), backend=backend)
    pad = sim.contacts.pads[INDEX]
    geo = pad.geometry
    R = sim.data.xmat[sim.contacts.distal_bodies[INDEX]].reshape(3, 3)
    o = sim.data.xpos[sim.contacts.distal_bodies[INDEX]]
    rows = []
    zs = np.full(len(angles), CONTACT_Z) if z is None else np.asarray(z, dtype=np.float64)
    for deg, zk in zip(angles, zs, strict=True):
        th = np.radians(deg)
        n_out = np.array([np.sin(th), geo.pad_side * np.cos(th), 0.0])        # pad's outward normal
        local = n_out * (geo.radius + radius)
        local[2] = zk
        sim.data.geom_xpos[g] = o + R @ local
        f = -force * n_out[None, :]                                            # ON the pad
        p, gg, fn = np.array([INDEX]), np.array([g]), np.array([force])
        if dm.backend == "native":
            slots, _, _, unsensed = dm.native_solve(sim.data, p, gg, f, fn, f, np.array([1.0]), fine=False)
        else:
            t = dm.solve(sim.data, p, gg, f, fn, f, np.array([1.0]), fine=False)
            slots, unsensed = dm.pad_readings(t)
        r = slots.reshape(5, -1, 3)[INDEX, :len(pad.positions)]
        normal = -(r * pad.normals).sum(axis=1)
        sensed = float(r.sum(axis=0) @ -n_out) / force
        err = float(np.abs(r.sum(axis=0) + unsensed[INDEX] - f[0]).max())
        # the active-pad mask (contact_forces._extract): nearest taxel within its radius, palm
        # side, contact normal · that taxel's normal ≥ MIN_NORMAL_ALIGNMENT
        from wuji_tactile_device.producers.sim.contact_forces import FRONT_MARGIN, MIN_NORMAL_ALIGNMENT
        q = n_out * geo.radius
        q[2] = zk
        d2 = ((pad.positions - q) ** 2).sum(axis=1)
        j = int(d2.argmin())
        kept = bool(d2[j] <= pad.active_radius ** 2 and geo.pad_side * q[1] > -FRONT_MARGIN
                    and n_out @ pad.normals[j] >= MIN_NORMAL_ALIGNMENT)
        peak = float(normal.max())
        rows.append((sensed, peak / force, int(np.sum(normal > 0.05 * peak)) if peak > 0 else 0, kept, err))
    return np.array(rows, dtype=np.float64)


def unrolled(points):
    """Points on the distal capsule's cylinder (N, 3) [m, distal frame] → (arc length around the
    finger from the palm direction, z) (N, 2) [m]: the cylinder's isometric map to the plane."""
    r = pad_taxels("right")[INDEX].geometry.radius
    return np.stack([r * np.arctan2(points[:, 0], points[:, 1]), points[:, 2]], axis=1)


def field_area_and_m2(y, fy, ay):
    """The continuous sensing-plane field's area above 5 % of its peak pressure [m²] and its second
    moment on the unrolled surface [m²]."""
    p = fy / ay
    return float(ay[p > 0.05 * p.max()].sum()), second_moment(unrolled(y), fy)


def square_cells(y, fy, pitch, offset=(0.0, 0.0)):
    """An ideal array of square taxels of side `pitch` [m] tiling the unrolled surface (shifted by
    `offset` [m]), each reading the whole field on its cell: (cells above 5 % of the peak cell,
    second moment of the cell loads about their centroid, cells at their centres [m²])."""
    ij = np.floor((unrolled(y) - np.asarray(offset)) / pitch).astype(np.int64)
    cells, owner = np.unique(ij, axis=0, return_inverse=True)
    load = np.bincount(owner.ravel(), fy)
    centres = (cells + 0.5) * pitch + np.asarray(offset)
    return int(np.sum(load > 0.05 * load.max())), second_moment(centres, load)


def voronoi_taxels(y, fy):
    """(34,) the field's load [N] on each index taxel's Voronoi cell (every sensing-plane point
    to its nearest taxel): an ideal sensor on the hardware's own layout."""
    pos = pad_taxels("right")[INDEX].positions
    nearest = ((y[:, None, :] - pos[None, :, :]) ** 2).sum(axis=2).argmin(axis=1)
    return np.bincount(nearest, fy, minlength=len(pos))
