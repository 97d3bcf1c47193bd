"""The simulated taxel read (contacts -> pressure, stick/slip -> 176 taxels, images) exactly as it
was before its per-frame cost was cut (frozen copy, commit 99a3ff2: `ContactForceModel.read` with
`DistributedContact`'s numpy path). Kept only as the reference the optimised read is held to
(tests/test_sim_read_equivalence.py); it reads the live objects' precomputed tables through
attribute delegation, and every per-frame step is its own code. Two deliberate changes since are
carried here, each in its own code: the edge roll-off (each pair's remainder is taken against
its sensed force, the rest of its force is its pad's unsensed load: `_unsensed`) and the mask's
`FRONT_MARGIN`."""

from __future__ import annotations

import mujoco
import numpy as np

from wuji_tactile_device.producers.sim.contact_forces import (_NO_SLIP, FRONT_MARGIN, MIN_NORMAL_ALIGNMENT, SIGMA, CUTOFF,
                                                             _XYZ, _vecmat)
from wuji_tactile_device.producers.sim.contact_forces import PadContacts, TactileReading, contact_frame_forces
from wuji_tactile_device.producers.sim.contact_model import GROSS_SLIP_TOLERANCE, _AXES, _MIN_VOLUME, Traction, _Grid
from wuji_tactile_device.producers.sim.taxels import IMAGE_SHAPE

_vecdot = getattr(np, "vecdot", lambda a, b: np.einsum("...i,...i->...", a, b))
_matvec = getattr(np, "matvec", lambda m, v: np.einsum("...ij,...j->...i", m, v))
_G = mujoco.mjtGeom


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
    return np.arange(0, P * M, M)


class _Delegate:
    def __init__(self, live):
        self._live = live

    def __getattr__(self, name):
        return getattr(self._live, name)


class DistributedV1(_Delegate):
    """`DistributedContact`'s numpy read path as it was."""

    backend = "numpy"
    _pad_onehot = np.eye(5)

    def _transforms(self, data: mujoco.MjData, pad: np.ndarray, geom: np.ndarray) -> np.ndarray:
        """(P, 3, 4) distal → object-geom affine maps [A | b] (homogeneous points in one product)."""
        body = self.distal_bodies.take(pad)
        Rd = data.xmat.take(body, axis=0).reshape(-1, 3, 3)
        RgT = data.geom_xmat.take(geom, axis=0).reshape(-1, 3, 3).transpose(0, 2, 1)
        T = np.empty((len(pad), 3, 4))
        T[:, :, :3] = RgT @ Rd
        T[:, :, 3] = _matvec(RgT, data.xpos.take(body, axis=0) - data.geom_xpos.take(geom, axis=0))
        return T

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
        local = self._transforms(data, pad, geom) @ quad.points_h.take(pad, axis=0)   # (P, 3, M)
        sdf = self._sdf(geom, local)       # padding points sit ≥ 1 m away: never in a footprint
        volume = f_normal * (1.0 / self.stiffness) + _MIN_VOLUME
        rows = _row_offsets(P, M)[:, None]
        K = grid.first_k
        while True:
            idx = np.argpartition(sdf, K - 1, axis=1)[:, :K] if K < M else np.broadcast_to(np.arange(M), (P, M))
            idx = idx + rows
            sdf_k = sdf.take(idx)
            order = np.argsort(sdf_k, axis=1)
            order += _row_offsets(P, idx.shape[1])[:, None]
            s_ = sdf_k.take(order)
            flat = idx.take(order)
            flat += base - rows
            area = grid.area_flat.take(flat)
            lam = self._level_sorted(s_, area, volume)
            # Every point outside the subset lies at or above the subset's highest: none is
            # below λ when that one is not.
            if K >= M or (s_[:, -1] >= lam).all():
                break
            K *= 4
        w = np.maximum(lam[:, None] - s_, 0.0)
        w *= area
        w /= w.sum(axis=1, keepdims=True)
        return flat, w

    def traction(self, weights: np.ndarray, pad: np.ndarray, f_normal_vec: np.ndarray, f_tangent_vec: np.ndarray,
                 mu: np.ndarray, grid: _Grid | None = None, flat: np.ndarray | None = None,
                 presorted: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Stick and slip inside each pair's footprint (partial slip, Cattaneo–Mindlin on the
        thin layer). Normal force per pixel P_x = |F_n|·w_x. The layer's shear is Winkler too:
        where the surface sticks, the traction is the same for every point (the object's rigid
        tangential displacement over the layer, s per unit area); where that would exceed
        μ·p_x, the point slides at μ·p_x. So Q_x = min(s·A_x, μ·P_x) with s solved exactly from
        Σ Q_x = |F_t| (sort by pressure, cumulative sums): slip starts at the rim, where p → 0,
        and spreads inward as |F_t| → μ|F_n|; at μ|F_n| (gross slip) every point slides.
        `weights` (P, M) on every point of `grid`, or (P, K) on the points `flat` (`support`;
        points without load change nothing); `presorted`: each row is already in order of
        decreasing pressure (`support`'s order: no sort). Returns P and Q [N per point, the shape of
        `weights`] and the stuck fraction of the footprint's area (P,)."""
        grid = self.fine if grid is None else grid
        if flat is None:
            flat = (pad * grid.quad.area.shape[1])[:, None] + np.arange(weights.shape[1])
        area = grid.area_flat.take(flat)
        fn = np.sqrt(_vecdot(f_normal_vec, f_normal_vec))
        ft = np.sqrt(_vecdot(f_tangent_vec, f_tangent_vec))
        Pn = weights * fn[:, None]
        C = Pn * mu[:, None]                                      # slip limit per pixel [N]
        pres = C * grid.inv_area_flat.take(flat)                  # μ·p [N/m²]
        P_, M = pres.shape
        if presorted:
            ps, a, c = pres, area, C
        else:
            order = np.argsort(-pres, axis=1) + _row_offsets(P_, M)[:, None]
            ps, a, c = pres.take(order), area.take(order), C.take(order)
        ca, cc = np.cumsum(a, axis=1), np.cumsum(c, axis=1)
        ctot = cc[:, -1]
        # Σ Q when s reaches the k-th pressure with points 0..k−1 stuck (decreasing in k).
        at = ps * (ca - a) + (ctot[:, None] - (cc - c))
        m = (at > ft[:, None]).sum(axis=1)
        gross = (m == 0) | (ft >= (1.0 - GROSS_SLIP_TOLERANCE) * ctot)
        k = np.maximum(m - 1, 0) + _row_offsets(P_, M)
        s_ = np.where(gross, 0.0, (ft - ctot + cc.take(k)) / np.maximum(ca.take(k), 1e-300))
        Q = np.minimum(s_[:, None] * area, C)
        if gross.any():
            scale = np.divide(ft, ctot, out=np.zeros_like(ft), where=ctot > 0)
            Q[gross] = C[gross] * scale[gross, None]
        loaded = Pn > 0
        stuck = loaded & (s_[:, None] * area < C) & ~gross[:, None]
        foot = (area * loaded).sum(axis=1)
        frac = np.divide((area * stuck).sum(axis=1), foot, out=np.ones_like(foot), where=foot > 0)
        return Pn, Q, frac

    def solve(self, data, pad, geom, f_loc, f_normal, f_normal_vec, mu, *, fine: bool = True) -> Traction:
        """Pressure, stick and slip of each pair (`traction`) on the 0.5 mm image grid (`fine`)
        or the 1 mm grid, with the normal and friction directions: `f_normal_vec` (P, 3) the
        normal part of each pair's force `f_loc` (the rest is friction), `mu` (P,) its friction
        coefficient. Solved on each footprint's support (`support`): every array is (P, K)."""
        grid = self.fine if fine else self.coarse
        flat, w = self.support(data, pad, geom, f_normal, grid)
        ft_vec = f_loc - f_normal_vec
        Pn, Q, frac = self.traction(w, pad, f_normal_vec, ft_vec, mu, grid, flat, presorted=True)
        t_hat = ft_vec / np.maximum(np.sqrt(_vecdot(ft_vec, ft_vec)), 1e-300)[:, None]
        return Traction(pad, w, Pn, Q, t_hat, f_loc, frac, grid, flat)

    def traction_field(self, t: Traction) -> np.ndarray:
        """(5, 48·32, 3) the image-grid field of a solution: pressure along each point's own
        surface normal, friction in its tangent plane, and the small remainder the curvature
        leaves (a few % of F) spread with the pressure, so each pair's field sums to its force
        exactly."""
        n_loc = t.grid.normal_flat.take(t.flat, axis=0)                        # (P, K, 3) outward
        t_loc = t.t_hat[:, None, :] - _vecdot(n_loc, t.t_hat[:, None, :])[:, :, None] * n_loc
        t_loc /= np.maximum(np.sqrt(_vecdot(t_loc, t_loc)), 1e-300)[:, :, None]
        per_pair = t.Q[:, :, None] * t_loc - t.Pn[:, :, None] * n_loc
        per_pair += t.w[:, :, None] * (t.force - per_pair.sum(axis=1))[:, None, :]
        npx = IMAGE_SHAPE[0] * IMAGE_SHAPE[1]
        cell = t.grid.pixel_flat.take(t.flat) + (t.pad * npx)[:, None]        # (P, K) stacked pixel
        index = cell[:, :, None] * 3 + _AXES
        return np.bincount(index.ravel(), per_pair.ravel(), 15 * npx).reshape(5, npx, 3)

    def _per_pad(self, pad: np.ndarray, per_pair: np.ndarray) -> np.ndarray:
        """(5, ...) per-pair arrays (P, ...) summed per pad."""
        P = len(pad)
        if len(np.unique(pad)) == P:
            out = np.zeros((5,) + per_pair.shape[1:])
            out[pad] = per_pair
            return out
        onehot = self._pad_onehot.take(pad, axis=0)                                # (P, 5)
        return (onehot.T @ per_pair.reshape(P, -1)).reshape((5,) + per_pair.shape[1:])

    def taxel_readings(self, t: Traction) -> np.ndarray:
        """(5 · slots, 3) what each taxel reads [N, distal frame], force ON the taxel: the
        normal load Σ G·P and the friction Σ G·Q carried through the elastomer to its sensitive
        area, the normal along the taxel's own normal and the friction along the pair's slip
        direction in the taxel's tangent plane — so |shear| ≤ μ·|normal| holds on every taxel
        — plus each pad's remainder against its solver force (the curvature's few %) spread with
        the normal load: each pad's taxels sum to its force exactly. Only the influence columns
        of each footprint's points are read (`Traction.flat`)."""
        P = len(t.pad)
        g = t.grid.GT.take(t.flat, axis=0)                                         # (P, K, slots)
        x = np.stack([t.Pn, t.Q], axis=1)                                          # (P, 2, K)
        s = np.matmul(x, g)                                                        # (P, 2, slots)
        normals = self._slot_normals.take(t.pad, axis=0)                           # (P, slots, 3)
        t_slot = t.t_hat[:, None, :] - _vecdot(normals, t.t_hat[:, None, :])[..., None] * normals
        t_slot /= np.maximum(np.sqrt(_vecdot(t_slot, t_slot)), 1e-300)[..., None]
        r_pair = s[:, 1, :, None] * t_slot - s[:, 0, :, None] * normals            # (P, slots, 3)
        sensed = t.force - self._unsensed(t, s)
        if len(set(t.pad.tolist())) == P:   # one pair per pad: the remainder per pair, then placed
            sn = s[:, 0]
            total = sn.sum(axis=1, keepdims=True)
            share = np.divide(sn, total, out=np.zeros_like(sn), where=total > 0)
            r_pair += share[..., None] * (sensed - r_pair.sum(axis=1))[:, None, :]
            r = np.zeros((5, self.slots, 3))
            r[t.pad] = r_pair
            return r.reshape(-1, 3)
        # several objects on one pad: summed per pad
        r, sn, force = self._per_pad(t.pad, r_pair), self._per_pad(t.pad, s[:, 0]), self._per_pad(t.pad, sensed)
        total = sn.sum(axis=1)
        share = np.divide(sn, total[:, None], out=np.zeros_like(sn), where=total[:, None] > 0)
        r += share[..., None] * (force - r.sum(axis=1))[:, None, :]
        return r.reshape(-1, 3)


    @staticmethod
    def _unsensed(t: Traction, s: np.ndarray) -> np.ndarray:
        """(P, 3) each pair's load no taxel reads: its normal part times 1 − Σ_j (G·P)_j / Σ P, its
        friction part (Σ Q along the slip direction) times 1 − Σ_j (G·Q)_j / Σ Q (`s` (P, 2, slots)
        the influence sums G·P, G·Q)."""
        out = np.zeros((len(t.pad), 3))
        for p in range(len(t.pad)):
            pn, q = float(t.Pn[p].sum()), float(t.Q[p].sum())
            lost_n = 1.0 - (float(s[p, 0].sum()) / pn if pn > 0 else 0.0)
            lost_t = 1.0 - (float(s[p, 1].sum()) / q if q > 0 else 0.0)
            f_t = q * t.t_hat[p]
            out[p] = lost_n * (t.force[p] - f_t) + lost_t * f_t
        return out

    def unsensed(self, t: Traction) -> np.ndarray:
        """(5, 3) each pad's unsensed load [N, distal frame]."""
        s = np.matmul(np.stack([t.Pn, t.Q], axis=1), t.grid.GT.take(t.flat, axis=0))
        return self._per_pad(t.pad, self._unsensed(t, s))


class ContactForceModelV1(_Delegate):
    """`ContactForceModel.read` as it was, over a live model's tables."""

    def __init__(self, live):
        super().__init__(live)
        self.distributed = DistributedV1(live.distributed) if live.distributed is not None else None

    def read(self, data: mujoco.MjData, *, images: bool = False) -> TactileReading:
        """The tactile reading of the current state (call after `mj_forward`)."""
        found = self._extract(data)
        if found is None or len(found[0]) == 0:
            rejected = 0 if found is None else found[5]
            img = np.zeros((5, 3) + IMAGE_SHAPE) if images else None
            return TactileReading(np.zeros((self.num_taxels, 3), np.float32), np.zeros((self.num_taxels, 3)),
                                  np.zeros((5, 3)), data.xmat.take(self.distal_bodies, axis=0).reshape(5, 3, 3),
                                  self.pad_rot_common, 0, rejected, img,
                                  **(_NO_SLIP if self.distributed is not None else {}))
        code, f_loc, p_loc, d2, dmin, rejected = found
        if self.distributed is not None:
            return self._read_distributed(data, code, f_loc, rejected, images)
        onehot = self._code_onehot.take(code, axis=0)                 # (C, 5)
        # Gaussian response with the relative cutoff; the per-contact normalisation is applied to
        # the force (C × 3) instead of the weights (C × 40).
        delta = d2 - dmin[:, None]
        u = np.exp(delta * (-0.5 / (SIGMA * SIGMA)))
        np.putmask(u, delta > CUTOFF, 0.0)
        f_scaled = f_loc / u.sum(axis=1, keepdims=True)
        # Each contact's weights placed in its own pad's 40 slots of the 5 × 40 slot table.
        w_slots = (onehot[:, :, None] * u[:, None, :]).reshape(len(u), -1)      # (C, 200)
        taxel_distal = (w_slots.T @ f_scaled).take(self.taxel_slot, axis=0)     # (176, 3) distal frame
        taxel = _vecmat(taxel_distal, self.taxel_rot).astype(np.float32)        # taxel axes
        res_distal = onehot.T @ f_loc                                           # (5, 3)
        rot = data.xmat.take(self.distal_bodies, axis=0).reshape(5, 3, 3)
        img = None
        if images:
            pad = self._code_pad.take(code)
            img = self._images(PadContacts(pad, f_loc @ self.pad_rot_common, f_loc, p_loc))
        return TactileReading(taxel, taxel_distal, res_distal, rot, self.pad_rot_common,
                              len(code), rejected, img)

    def _extract(self, data: mujoco.MjData):
        """The per-frame contact pipeline, in few whole-array operations (each numpy call costs
        about a microsecond whatever its size, so the op count, not the arithmetic, is the cost).
        Returns None without accepted contacts, else (pair code, force ON the pad [N] and
        pad-surface point [m] in the distal frame, squared distances to the pad's taxel slots and
        their minimum [m²], number rejected by the mask)."""
        if data.ncon == 0:
            return None
        con = data.contact
        code = self._pair_code_flat.take(con.geom @ self._pair_stride)  # 0 unless distal–object
        idx = np.flatnonzero(code)
        if idx.size == 0:
            return None
        adr = con.efc_address.take(idx)
        if adr.min() < 0:  # contacts outside the solver (e.g. inside the margin gap) carry no force
            idx, adr = idx[adr >= 0], adr[adr >= 0]
            if idx.size == 0:
                return None
        if self._opt.cone != self._cone:  # the model's options were changed after construction
            self._configure_cone()
        code = code.take(idx)
        # Contact frame rows (normal, t1, t2; world), negated when the pad is geom[0]: then
        # f_c · rows is the force ON the pad and −rows[0] the pad → object normal.
        rows = con.frame.take(idx, axis=0).reshape(-1, 3, 3) * self._code_sign.take(code, axis=0)
        if self.efc_first_three:
            f_c = data.efc_force.take(adr[:, None] + _XYZ)
        else:
            f_c = contact_frame_forces(self.model, data, idx)
        body = self._code_body.take(code)
        R = data.xmat.take(body, axis=0).reshape(-1, 3, 3)
        rows_loc = rows @ R                                   # row vectors: v_loc = Rᵀ v
        f_loc = _vecmat(f_c, rows_loc)                        # force ON the pad (distal frame)
        # Pad-surface point: the contact midpoint moved half the signed distance toward the pad.
        p_mid = _vecmat(con.pos.take(idx, axis=0) - data.xpos.take(body, axis=0), R)
        p_loc = p_mid + rows_loc[:, 0] * (0.5 * con.dist.take(idx))[:, None]
        # Active-pad mask: front side, nearest taxel within r, normal alignment.
        diff = self._code_slots.take(code, axis=0) - p_loc[:, None, :]
        d2 = _vecdot(diff, diff)
        nearest = d2.argmin(axis=1)
        dmin = d2.min(axis=1)
        near = self._slot_info.take(self._code_slot0.take(code) + nearest, axis=0)   # its normal and r²
        ok = ((dmin <= near[:, 3]) & self._front(p_loc[:, 1], -self.side_sign * FRONT_MARGIN)
              & (_vecdot(rows_loc[:, 0], near[:, :3]) <= -MIN_NORMAL_ALIGNMENT))
        accepted = int(np.count_nonzero(ok))
        rejected = len(idx) - accepted
        if rejected:
            code, f_loc, p_loc, d2, dmin = code[ok], f_loc[ok], p_loc[ok], d2[ok], dmin[ok]
            idx, f_c, rows_loc = idx[ok], f_c[ok], rows_loc[ok]
        self._last_idx, self._last_fn = idx, f_c[:, 0]
        self._last_fn_vec = f_c[:, 0:1] * rows_loc[:, 0]          # normal part of f_loc (distal)
        return code, f_loc, p_loc, d2, dmin, rejected

    # -- distribution -----------------------------------------------------------------------------

    def _read_distributed(self, data: mujoco.MjData, code: np.ndarray, f_loc: np.ndarray, rejected: int,
                          images: bool) -> TactileReading:
        """The reading under the distributed model (`contact_model.py`): pressure field, stick
        and slip inside each footprint, taxels through the elastomer, the pads' slip velocity."""
        dm = self.distributed
        idx = self._last_idx
        con = data.contact
        g = con.geom.take(idx, axis=0)
        geom = np.where(code > 0, g[:, 0], g[:, 1]).astype(np.int64)   # the object's geom
        pad_c = self._code_pad.take(code)
        fn_c = self._last_fn
        extra = np.concatenate([self._last_fn_vec, (fn_c * con.friction.take(idx, axis=0)[:, 0])[:, None],
                                fn_c[:, None] * con.pos.take(idx, axis=0)], axis=1)
        pad, geom, f_pair, fn_pair, ex = dm.pairs(pad_c, geom, f_loc, fn_c, extra)
        inv_fn = 1.0 / np.maximum(fn_pair, 1e-300)
        mu = np.where(fn_pair > 0, ex[:, 3] * inv_fn, 1.0)
        # One solution per frame for taxels, images and resultants: on the 0.5 mm image grid when
        # images are asked for, else on the 1 mm grid (4× fewer points; taxels within 1.5 %).
        sol = dm.solve(data, pad, geom, f_pair, fn_pair, ex[:, :3], mu, fine=images)
        stuck = sol.stuck
        taxel_distal = dm.taxel_readings(sol).take(self.taxel_slot, axis=0)
        taxel = _vecmat(taxel_distal, self.taxel_rot).astype(np.float32)
        res_distal = self._code_onehot.take(code, axis=0).T @ f_loc
        rot = data.xmat.take(self.distal_bodies, axis=0).reshape(5, 3, 3)
        img = dm.images_of(dm.traction_field(sol), self.pad_rot_common) if images else None
        point = ex[:, 4:7] * inv_fn[:, None]                     # force-weighted contact point (world)
        slip, frac = self._pad_slip(data, pad, geom, point, ex[:, :3], fn_pair, stuck)
        return TactileReading(taxel, taxel_distal, res_distal, rot, self.pad_rot_common,
                              len(code), rejected, img, pad_slip_velocity=slip, pad_stuck_fraction=frac,
                              pad_unsensed_distal=dm.unsensed(sol))

    def _pad_slip(self, data, pad, geom, point, fn_vec, fn, stuck) -> tuple[np.ndarray, np.ndarray]:
        """(5, 3) pad slip velocity [m/s, pad frame]: the object's velocity relative to the pad
        at the contact point, tangential part, while the footprint slides as a whole (no stuck
        point left), else 0 (a stick zone holds the surfaces together; the rest is the layer's
        shear); and (5,) the stuck fraction of each pad's footprint (1 without contact)."""
        slip = np.zeros((5, 3))
        frac = np.ones(5)
        v = np.zeros(6)
        for p in range(len(pad)):           # ≤ one pair per loaded pad: 5 small calls per frame
            k = int(pad[p])
            frac[k] = min(frac[k], float(stuck[p]))
            if stuck[p] > 0 or fn[p] <= 0:
                continue
            mujoco.mj_objectVelocity(self.model, data, mujoco.mjtObj.mjOBJ_GEOM, int(geom[p]), v, 0)
            v_obj = v[3:] + np.cross(v[:3], point[p] - data.geom_xpos[geom[p]])
            b = int(self.distal_bodies[k])
            mujoco.mj_objectVelocity(self.model, data, mujoco.mjtObj.mjOBJ_BODY, b, v, 0)
            v_pad = v[3:] + np.cross(v[:3], point[p] - data.xpos[b])
            R = data.xmat[b].reshape(3, 3)
            rel = (v_obj - v_pad) @ R                               # distal frame
            n = fn_vec[p] / np.linalg.norm(fn_vec[p])
            slip[k] += (rel - (rel @ n) * n) @ self.pad_rot_common
        return slip, frac
