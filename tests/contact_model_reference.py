"""The distributed contact model's read as it was first written: every step on every point of
the grid (dense (pairs, points) arrays, a sort of all points). Kept only as the reference the
optimised path (`DistributedContact.solve` on each footprint's support) is tested against."""
from __future__ import annotations

import numpy as np

from wuji_tactile_device.producers.sim.contact_model import GROSS_SLIP_TOLERANCE, cone_spread
from wuji_tactile_device.producers.sim.taxels import IMAGE_SHAPE


def _vecdot(a, b):
    return np.einsum("...i,...i->...", a, b)


def _offsets(P, M):
    return np.arange(0, P * M, M)


def dense_solve(dm, data, pad, geom, f_loc, f_normal, f_normal_vec, mu, *, fine):
    """(w, Pn, Q, t_hat, stuck, grid) on every point of the grid: the level solved by sorting all
    points (`DistributedContact.weights`), stick/slip by sorting all points."""
    grid = dm.fine if fine else dm.coarse
    w, total, _ = dm.weights(data, grid.quad, pad, geom, f_normal)
    w = w / total[:, None]
    ft_vec = f_loc - f_normal_vec
    area = grid.quad.area.take(pad, axis=0)
    fn = np.sqrt(_vecdot(f_normal_vec, f_normal_vec))
    ft = np.sqrt(_vecdot(ft_vec, ft_vec))
    Pn = w * fn[:, None]
    C = Pn * mu[:, None]
    pres = C * grid.inv_area.take(pad, axis=0)
    P_, M = pres.shape
    order = np.argsort(-pres, axis=1) + _offsets(P_, M)[:, None]
    ps, a, c = pres.take(order), area.take(order), C.take(order)
    ca, cc = np.cumsum(a, axis=1), np.cumsum(c, axis=1)
    ctot = cc[:, -1]
    at = ps * (ca - a) + (ctot[:, None] - (cc - c))
    m = (at > ft[:, None]).sum(axis=1)
    gross = (m == 0) | (ft >= (1.0 - GROSS_SLIP_TOLERANCE) * ctot)
    k = np.maximum(m - 1, 0) + _offsets(P_, M)
    s_ = np.where(gross, 0.0, (ft - ctot + cc.take(k)) / np.maximum(ca.take(k), 1e-300))
    Q = np.minimum(s_[:, None] * area, C)
    if gross.any():
        scale = np.divide(ft, ctot, out=np.zeros_like(ft), where=ctot > 0)
        Q[gross] = C[gross] * scale[gross, None]
    loaded = Pn > 0
    stuck = loaded & (s_[:, None] * area < C) & ~gross[:, None]
    foot = (area * loaded).sum(axis=1)
    frac = np.divide((area * stuck).sum(axis=1), foot, out=np.ones_like(foot), where=foot > 0)
    t_hat = ft_vec / np.maximum(np.sqrt(_vecdot(ft_vec, ft_vec)), 1e-300)[:, None]
    return w, Pn, Q, t_hat, frac, grid


def _per_pad(pad, per_pair):
    out = np.zeros((5,) + per_pair.shape[1:])
    np.add.at(out, pad, per_pair)
    return out


def dense_taxel_readings(dm, pad, w, Pn, Q, t_hat, force, grid, mu):
    """(5 · slots, 3) taxel readings from the dense solution, per pair then summed per pad, and
    (5, 3) the pads' unsensed loads: a pair's normal part times 1 − Σ G·P / Σ P, its friction part
    times 1 − Σ G·Q / Σ Q; the pads' remainders against their sensed forces placed by the model's
    own final stage (`cone_spread`, tested on its own in tests/test_sim_taxel_cone.py), per-taxel
    μ = Σ_p μ_p·N_p / Σ_p N_p."""
    G = grid.GT.reshape(5, -1, dm.slots).transpose(0, 2, 1)  # (5, slots, M)
    normals = dm._slot_normals
    r = np.zeros((5, dm.slots, 3))
    unsensed = np.zeros((5, 3))
    for p in range(len(pad)):
        k = int(pad[p])
        sn, sq = G[k] @ Pn[p], G[k] @ Q[p]
        ts = t_hat[p] - (normals[k] @ t_hat[p])[:, None] * normals[k]
        ts /= np.maximum(np.linalg.norm(ts, axis=1), 1e-300)[:, None]
        r[k] += sq[:, None] * ts - sn[:, None] * normals[k]
        pn_sum, q_sum = Pn[p].sum(), Q[p].sum()
        lost_n = 1.0 - (sn.sum() / pn_sum if pn_sum > 0 else 0.0)
        lost_t = 1.0 - (sq.sum() / q_sum if q_sum > 0 else 0.0)
        unsensed[k] += lost_n * (force[p] - q_sum * t_hat[p]) + lost_t * q_sum * t_hat[p]
    sn = np.matmul(G, _per_pad(pad, Pn)[:, :, None])[..., 0]
    mu_sn = np.matmul(G, _per_pad(pad, mu[:, None] * Pn)[:, :, None])[..., 0]
    mu_t = np.divide(mu_sn, sn, out=np.ones_like(sn), where=sn > 0)
    r += cone_spread(r, sn, normals, mu_t, _per_pad(pad, force) - unsensed - r.sum(axis=1))
    return r.reshape(-1, 3), unsensed


def dense_traction_field(pad, w, Pn, Q, t_hat, force, grid):
    """(5, 48·32, 3) the image-grid field of the dense solution."""
    n_loc = grid.normal.take(pad, axis=0)
    t_loc = t_hat[:, None, :] - _vecdot(n_loc, t_hat[:, None, :])[:, :, None] * n_loc
    t_loc /= np.maximum(np.sqrt(_vecdot(t_loc, t_loc)), 1e-300)[:, :, None]
    per_pair = Q[:, :, None] * t_loc - Pn[:, :, None] * n_loc
    per_pair += w[:, :, None] * (force - per_pair.sum(axis=1))[:, None, :]
    npx = IMAGE_SHAPE[0] * IMAGE_SHAPE[1]
    out = np.zeros((5 * npx, 3))
    cell = grid.quad.cell.take(pad, axis=0) + (pad * npx)[:, None]
    np.add.at(out, cell.ravel(), per_pair.reshape(-1, 3))
    return out.reshape(5, npx, 3)
