"""Pad forces from MuJoCo's contact solution, distributed onto the taxels (vectorised).

Per frame (after `mj_forward`):
1. contacts in the solver (`efc_address ≥ 0`, no flex geom −1) between a distal segment's geoms
   and a chosen object's geoms;
2. the contact-frame force, rebuilt from `efc_force` (elliptic cones: the first three rows;
   pyramidal: normal = Σ pyramid rows, tangent i = (row 2i − row 2i+1)·μ_i), which equals
   `mj_contactForce` bit for bit; world force on geom[1] = frameᵀ f, negated when the pad is
   geom[0] → the force the object exerts ON the pad;
3. the active-pad mask: contact on the palm side of the distal segment (or less than
   `FRONT_MARGIN` = 3 mm beyond its mid-plane, ≈ 110° around the finger: the footprint of a
   contact just past the pad's border still reaches it), nearest taxel within r = 0.9 × max NN
   spacing + 0.2 mm of the pad-surface contact point, and outward contact normal · that taxel's
   normal ≥ 0.25 (back-side contacts are dropped, not the collisions);
4. Gaussian spatial response σ = 1.5 mm around the pad-surface contact point with the relative
   cutoff Δ = r² − min r² ≤ (3σ)², normalised per contact, so each axis of the pad-frame force
   is conserved exactly; then each taxel's share is expressed in its own axes (+Z outward normal;
   pressing gives fz < 0).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import mujoco
import numpy as np

from ...errors import ProducerError
from .model import distal_body_ids
from .contact_model import DistributedContact
from .taxels import IMAGE_SHAPE, pad_taxels

#: Selectable spatial models: "distributed" (pressure from the contact geometry through a
#: compliant layer, `contact_model.py`) and "gaussian" (a fixed σ = 1.5 mm blob per contact point).
CONTACT_MODELS = ("distributed", "gaussian")


# numpy ≥ 2.2 gufuncs: far cheaper per call than einsum on these small arrays (per-call overhead
# dominates this pipeline); einsum equivalents keep numpy 1.26 working.
def _vecdot_einsum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("...i,...i->...", a, b)


def _vecmat_einsum(v: np.ndarray, m: np.ndarray) -> np.ndarray:
    return np.einsum("...i,...ij->...j", v, m)


def _matvec_einsum(m: np.ndarray, v: np.ndarray) -> np.ndarray:
    return np.einsum("...ij,...j->...i", m, v)


_vecdot = getattr(np, "vecdot", _vecdot_einsum)
_vecmat = getattr(np, "vecmat", _vecmat_einsum)
_matvec = getattr(np, "matvec", _matvec_einsum)

SIGMA = 0.0015               # spatial response width [m]
CUTOFF = (3.0 * SIGMA) ** 2  # relative squared-distance cutoff [m²]
MIN_NORMAL_ALIGNMENT = 0.25
#: [m] how far beyond the distal segment's mid-plane (toward the nail) a contact point may lie
#: and still belong to its pad (the mask; `_native/contact_read.c` holds the same value).
FRONT_MARGIN = 0.003


class PadContacts(NamedTuple):
    """Accepted contacts of one frame (C contacts), all float64."""

    pad: np.ndarray            # (C,) pad index 0..4 (thumb → pinky)
    force_pad: np.ndarray      # (C, 3) force on the pad in its pad frame [N]
    force_distal: np.ndarray   # (C, 3) force on the pad in the distal body frame [N]
    position_distal: np.ndarray  # (C, 3) pad-surface contact point in the distal frame [m]


class TactileReading(NamedTuple):
    """One frame of simulated tactile output."""

    taxel_forces: np.ndarray   # (176, 3) float32, each taxel's own axes, force ON the taxel [N]
    taxel_forces_distal: np.ndarray  # (176, 3) float64, the same shares in their distal body frame [N]
    pad_forces_distal: np.ndarray  # (5, 3) float64 per-pad resultant in its distal body frame [N]
    distal_rotations: np.ndarray   # (5, 3, 3) distal body → world rotations at this frame
    pad_rotation: np.ndarray   # (3, 3) pad axes (columns) in the distal frame, same for all pads
    num_contacts: int          # accepted (masked-in) contacts
    num_rejected: int          # distal–object contacts dropped by the active-pad mask
    images: np.ndarray | None  # (5, 3, 48, 32) float64 pad-frame N/pixel, NaN-free (0 outside mask)
    ideal_taxel_forces: np.ndarray | None = None  # with a sensor model: the ideal `taxel_forces`
    pad_slip_velocity: np.ndarray | None = None  # (5, 3) [m/s] pad frame, object relative to pad, 0 while stuck
    pad_stuck_fraction: np.ndarray | None = None  # (5,) stuck share of each footprint's area (1: no contact)
    #: (5, 3) float64 each pad's load that no taxel reads [N, distal frame] (the distributed model:
    #: the part of the footprint's load carried beyond the sensing area; 0 under the Gaussian one):
    #: taxels + unsensed = the pad's resultant
    pad_unsensed_distal: np.ndarray | None = None

    @property
    def unsensed(self) -> np.ndarray:
        """(5, 3) each pad's load that no taxel reads [N, pad frame]: the pad's resultant minus
        the sum of its taxels (0 without contact or under the Gaussian model)."""
        if self.pad_unsensed_distal is None:
            return np.zeros((5, 3))
        return self.pad_unsensed_distal @ self.pad_rotation

    @property
    def true_taxel_forces(self) -> np.ndarray:
        """(176, 3) float32 the noise-free taxel forces: `ideal_taxel_forces` under a sensor
        model, else `taxel_forces` (what the physics gives, for checks about the contact)."""
        return self.taxel_forces if self.ideal_taxel_forces is None else self.ideal_taxel_forces

    @property
    def resultants(self) -> np.ndarray:
        """(5, 3) per-pad resultant force ON the pad in its pad frame [N], thumb → pinky."""
        return self.pad_forces_distal @ self.pad_rotation

    @property
    def taxel_forces_pad(self) -> np.ndarray:
        """(176, 3) each taxel's share in its pad's frame [N] (with `unsensed`, sums to the pad's
        resultant)."""
        return self.taxel_forces_distal @ self.pad_rotation

    @property
    def pad_forces_world(self) -> np.ndarray:
        """(5, 3) per-pad resultant force ON the pad in world axes [N]."""
        return np.einsum("kij,kj->ki", self.distal_rotations, self.pad_forces_distal)

    @property
    def resultant_components(self) -> np.ndarray:
        """The 15 values Fx, Fy, Fz per pad (pad frame), thumb → pinky."""
        return self.resultants.reshape(15)


def contact_frame_forces(model: mujoco.MjModel, data: mujoco.MjData, idx: np.ndarray) -> np.ndarray:
    """(C, 3) contact-frame forces (normal, t1, t2) of contacts `idx`, from `efc_force`, equal to
    `mj_contactForce(...)[:3]` bit for bit."""
    con = data.contact
    adr = con.efc_address[idx]
    dim = con.dim[idx]
    if len(idx) == 0:
        return np.zeros((0, 3))
    efc = data.efc_force
    if model.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC:
        if dim.min() >= 3:  # the common case: normal, t1, t2 are the first three rows
            return efc[adr[:, None] + _XYZ]
        out = np.zeros((len(idx), 3))
        out[:, 0] = efc[adr]
        fr = dim > 1
        out[fr, 1] = efc[adr[fr] + 1]
        out[fr, 2] = efc[adr[fr] + 2]
        return out
    out = np.zeros((len(idx), 3))
    # Pyramidal: 2(dim−1) rows per contact (1 row for dim 1); same operation order as MuJoCo.
    one = dim == 1
    out[one, 0] = efc[adr[one]]
    for d in np.unique(dim[~one]):
        sel = np.flatnonzero(dim == d)
        a = adr[sel]
        rows = efc[a[:, None] + np.arange(2 * (d - 1))]
        n = rows[:, 0].copy()
        for k in range(1, 2 * (d - 1)):
            n = n + rows[:, k]
        out[sel, 0] = n
        mu = con.friction[idx[sel]]
        for k in range(min(d - 1, 2)):
            out[sel, k + 1] = (rows[:, 2 * k] - rows[:, 2 * k + 1]) * mu[:, k]
    return out


class ContactForceModel:
    """Turns a MuJoCo state into taxel forces for one hand and one chosen object.

    `object_geoms`: ids of the geoms whose contacts with the distal segments are measured."""

    def __init__(self, model: mujoco.MjModel, side: str, object_geoms, *,
                 contact_model: str = "distributed") -> None:
        if contact_model not in CONTACT_MODELS:
            raise ValueError(f"contact_model must be one of {', '.join(CONTACT_MODELS)}, got {contact_model!r}")
        self.contact_model = contact_model
        self.model = model
        self.side = side
        self.pads = pad_taxels(side)
        self.distal_bodies = distal_body_ids(model, side)
        obj = np.asarray(list(object_geoms), dtype=np.int64)
        if obj.size == 0:
            raise ProducerError("sim: no object geoms chosen for the tactile pads")
        if obj.min() < 0 or obj.max() >= model.ngeom:
            raise ProducerError(f"sim: object geom id out of range 0..{model.ngeom - 1}: {obj.tolist()}")
        self.pad_of_geom = np.full(model.ngeom + 1, -1, dtype=np.int64)
        for k, b in enumerate(self.distal_bodies):
            self.pad_of_geom[:-1][model.body_weldid[model.geom_bodyid] == b] = k
        if np.any(self.pad_of_geom[obj] >= 0):
            raise ProducerError("sim: an object geom belongs to a distal segment")
        self._object_geoms = obj
        self._configure_cone()
        self._code_pad = np.array([-1, 0, 1, 2, 3, 4, 4, 3, 2, 1, 0])          # index = code mod 11
        self._code_sign = np.array([0.0, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1])[:, None, None]
        # Geom-pair lookup: +(k+1) when geom[1] is pad k's segment and geom[0] the object,
        # −(k+1) for the reverse order, 0 otherwise (index −1 = flex lands on the zero row/col).
        self.pair_code = np.zeros((model.ngeom + 1, model.ngeom + 1), dtype=np.int64)
        pads_of = self.pad_of_geom[:-1]
        for g in np.flatnonzero(pads_of >= 0):
            self.pair_code[obj, g] = pads_of[g] + 1
            self.pair_code[g, obj] = -(pads_of[g] + 1)
        counts = [len(p.positions) for p in self.pads]
        self.taxel_pad = np.repeat(np.arange(5), counts)
        self.taxel_pos = np.concatenate([p.positions for p in self.pads])          # (N, 3) distal
        self.taxel_rot = np.concatenate([p.rotations for p in self.pads])  # (N, 3, 3) columns: taxel axes
        self.radius = np.array([p.active_radius for p in self.pads])
        self.radius_sq = self.radius ** 2
        self.side_sign = float(self.pads[0].geometry.pad_side)
        if not all(np.array_equal(p.pad_rotation, self.pads[0].pad_rotation) for p in self.pads):
            raise AssertionError("pad frames differ between pads of one hand")
        self.pad_rot_common = self.pads[0].pad_rotation                 # columns: pad axes (distal)
        self.num_taxels = len(self.taxel_pos)
        # Own-pad taxel slots, padded to the largest pad (40; padding sits 1 km away: never
        # nearest, always beyond the cutoff), and the slot of each taxel in the 5 × 40 table.
        self.pad_slots = _padded([p.positions for p in self.pads])
        self.pad_slot_normals = _padded([p.normals for p in self.pads], fill=0.0)
        self.slot_to_taxel = _padded_index([len(p.positions) for p in self.pads])
        self.taxel_slot = np.flatnonzero(self.slot_to_taxel.ravel() >= 0)   # slot of each taxel
        # Full image grids per pad for windowed image distribution (invalid pixels far away).
        grid = np.stack([p.pixel_positions for p in self.pads])                  # (5, 48, 32, 3)
        self.pix_grid = np.where(np.isfinite(grid), grid, _FAR)
        geoms = [p.geometry for p in self.pads]
        self.grid_z0 = np.array([-0.006 for _ in geoms])   # first row's upper edge (pad top − boundary)
        self.grid_dz = np.array([((gg.z_bottom - gg.radius) - (-0.006)) / IMAGE_SHAPE[0] for gg in geoms])  # < 0
        self.grid_x0 = np.array([-gg.radius for gg in geoms])
        self.grid_dx = np.array([2 * gg.radius / IMAGE_SHAPE[1] for gg in geoms])
        self.inv_dz = 1.0 / np.abs(self.grid_dz)
        self.inv_dx = 1.0 / self.grid_dx
        # Smallest grid-plane distance from a contact to its window's border [m²] (see _images).
        self.window_bound_sq = np.minimum(_WIN_ROWS * np.abs(self.grid_dz), _WIN_COLS * self.grid_dx) ** 2
        npx = IMAGE_SHAPE[0] * IMAGE_SHAPE[1]
        flat_grid = self.pix_grid.reshape(-1, 3)
        self._pix_aug = np.concatenate([flat_grid, (flat_grid * flat_grid).sum(axis=1, keepdims=True)],
                                       axis=1)                                   # (5·1536, 4)
        # Window placement per pad on the five images stacked as one (5·48) × 32 grid: pad k's
        # rows start at 48k (its first row's upper edge moved up by 48k rows), window centres
        # clamped inside pad k; and the exactness limit (window_bound² − (3σ)²) [m²].
        rows_n, cols_n = IMAGE_SHAPE
        pad_k = np.arange(5)
        self._grid_tab = np.stack([
            self.grid_z0 + rows_n * pad_k * np.abs(self.grid_dz), self.grid_x0, -self.inv_dz, self.inv_dx,
            rows_n * pad_k + _WIN_ROWS, np.full(5, _WIN_COLS), rows_n * pad_k + rows_n - 1 - _WIN_ROWS,
            np.full(5, cols_n - 1 - _WIN_COLS), self.window_bound_sq - CUTOFF], axis=1)     # (5, 9)
        self._pad_px0 = pad_k * npx
        self._axis_px0 = (np.arange(3) * 5 * npx)[:, None, None]
        self._win_offsets = (np.arange(-_WIN_ROWS, _WIN_ROWS + 1)[:, None] * IMAGE_SHAPE[1]
                             + np.arange(-_WIN_COLS, _WIN_COLS + 1)).ravel()
        # Per-frame lookups: pair code from the flat geom-pair index g0·(G+1) + g1 (−1 = flex wraps
        # onto the zero row/column), per-code tables, the nearest-slot table (normal, r²).
        self._opt = model.opt
        self._pair_code_flat = self.pair_code.ravel()
        self._pair_stride = np.array([model.ngeom + 1, 1], dtype=np.int32)  # geom ids are int32
        self._code_onehot = np.vstack([np.zeros(5), np.eye(5), np.eye(5)[::-1]])  # index = code mod 11
        self._slots = self.pad_slots.shape[1]
        self._slot_info = np.concatenate([self.pad_slot_normals, np.broadcast_to(
            self.radius_sq[:, None, None], (5, self._slots, 1))], axis=2).reshape(-1, 4)
        # Per pair-code tables (index = code mod 11; code 0 is never looked up), so the hot path
        # needs no pad index.
        self._code_body = self.distal_bodies[self._code_pad]
        self._code_slots = self.pad_slots[self._code_pad]                     # (11, 40, 3)
        self._code_slot0 = self._code_pad * self._slots                       # first slot in _slot_info
        self._front = np.greater if self.side_sign > 0 else np.less       # palm side of the distal
        self.distributed = (DistributedContact(model, self.pads, self.distal_bodies, obj)
                            if contact_model == "distributed" else None)
        self._slide = np.empty((16, 8))                        # its sliding pairs, per read

    def _configure_cone(self) -> None:
        """Elliptic cones with condim ≥ 3 on every measured pair (a geom pair's condim is the
        larger geom's, or the higher-priority geom's; an explicit `<pair>`'s is its own, as the
        layer compliance makes them): force = first three efc rows."""
        m = self.model
        self._cone = int(m.opt.cone)
        self.efc_first_three = bool(m.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC
                                    and _pairs_condim_at_least_3(m, self._object_geoms, self.pad_of_geom)
                                    and _explicit_pairs_condim_at_least_3(m, self.pad_of_geom))

    # -- contact selection ------------------------------------------------------------------------
    def pad_contacts(self, data: mujoco.MjData) -> tuple[PadContacts, int, np.ndarray | None]:
        """Accepted pad contacts of the current state, the number rejected by the mask, and the
        accepted contacts' squared distances to their pad's taxel slots (C, 40) [m²]."""
        found = self._extract(data)
        if found is None:
            return _EMPTY, 0, None
        code, f_loc, p_loc, d2, dmin, rejected = found
        return (PadContacts(self._code_pad[code], f_loc @ self.pad_rot_common, f_loc, p_loc), rejected, d2)

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
    def read(self, data: mujoco.MjData, *, images: bool = False) -> TactileReading:
        """The tactile reading of the current state (call after `mj_forward`)."""
        dm = self.distributed
        if dm is not None and dm.native is not None:
            if self._opt.cone != self._cone:  # the model's options were changed after construction
                self._configure_cone()
            if self.efc_first_three:      # else (pyramidal cones, condim < 3) the numpy path below
                return self._read_native(data, dm, images)
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

    def _read_distributed(self, data: mujoco.MjData, code: np.ndarray, f_loc: np.ndarray, rejected: int,
                          images: bool) -> TactileReading:
        """The reading under the distributed model (`contact_model.py`): pressure field, stick
        and slip inside each footprint, taxels through the elastomer, the pads' slip velocity."""
        dm = self.distributed
        assert dm is not None, "read() calls this under the distributed model only"
        pad, geom, f_pair, fn_pair, ex, inv_fn, mu = self._pairs_of(data, code, f_loc)
        # One solution per frame for taxels, images and resultants: on the 0.5 mm image grid when
        # images are asked for, else on the 1 mm grid (4× fewer points; taxels within 1.5 %).
        sol = dm.solve(data, pad, geom, f_pair, fn_pair, ex[:, :3], mu, fine=images)
        stuck = sol.stuck
        slots, unsensed = dm.pad_readings(sol)
        taxel_distal = slots.take(self.taxel_slot, axis=0)
        taxel = _vecmat(taxel_distal, self.taxel_rot).astype(np.float32)
        res_distal = self._code_onehot.take(code, axis=0).T @ f_loc
        rot = data.xmat.take(self.distal_bodies, axis=0).reshape(5, 3, 3)
        img = dm.solution_images(sol, self.pad_rot_common) if images else None
        point = ex[:, 4:7] * inv_fn[:, None]                     # force-weighted contact point (world)
        slip, frac = self._pad_slip(data, pad, geom, point, ex[:, :3], fn_pair, stuck)
        return TactileReading(taxel, taxel_distal, res_distal, rot, self.pad_rot_common,
                              len(code), rejected, img, pad_slip_velocity=slip, pad_stuck_fraction=frac,
                              pad_unsensed_distal=unsensed)

    def _read_native(self, data: mujoco.MjData, dm: DistributedContact, images: bool) -> TactileReading:
        """`read` under the distributed model in one compiled call (`DistributedContact.native`:
        extraction, mask, pairs, footprints, stick/slip, taxels, resultants, stuck fractions,
        images); the slip velocity of the sliding pairs (≤ one per pair) stays here."""
        reader = dm.native
        if dm.native_owner is not self:       # the reader holds another hand's tables (or none)
            reader.configure(self._pair_code_flat, self._code_pad, np.ascontiguousarray(self._code_sign.ravel()),
                             np.ascontiguousarray(self._code_body, dtype=np.int64),
                             np.ascontiguousarray(self._code_slots), np.ascontiguousarray(self._slot_info),
                             np.ascontiguousarray(self._code_slot0, dtype=np.int64), self.taxel_slot,
                             np.ascontiguousarray(self.taxel_rot), np.ascontiguousarray(self.pad_rot_common),
                             self.side_sign)
            dm.native_owner = self
        if self._slide.shape[0] < data.ncon:
            self._slide = np.empty((2 * data.ncon, 8))
        n = self.num_taxels
        taxel, distal = np.empty((n, 3), np.float32), np.empty((n, 3))
        res, unsensed, rot, frac = np.empty((5, 3)), np.empty((5, 3)), np.empty((5, 3, 3)), np.empty(5)
        img = np.empty((5, 3) + IMAGE_SHAPE) if images else None
        con = data.contact
        accepted, rejected, sliding = reader.read(
            con.geom, con.efc_address, con.frame, con.pos, con.dist, con.friction, data.efc_force, data.xmat,
            data.xpos, data.geom_xmat, data.geom_xpos, images, taxel, distal, res, unsensed, rot, frac, img,
            self._slide)
        slip = np.zeros((5, 3))
        for row in self._slide[:sliding].tolist():      # the sliding pairs only
            k = int(row[0])
            slip[k] += self._slip_velocity(data, k, int(row[1]), np.array(row[2:5]), np.array(row[5:8]))
        return TactileReading(taxel, distal, res, rot, self.pad_rot_common, accepted, rejected, img,
                              pad_slip_velocity=slip, pad_stuck_fraction=frac, pad_unsensed_distal=unsensed)

    def read_many(self, datas: Sequence[mujoco.MjData]) -> np.ndarray:
        """(S, N, 3) float32 taxel forces [N, each taxel's axes] of many states of this model
        (e.g. a batch of scenes), each equal to `read(data).taxel_forces` bit for bit. Under the
        distributed model all states are read in one pass: their contact arrays are stacked, then
        extraction (`_extract`'s steps), pressure, stick/slip and the elastomer's influence run
        once over every state's contacts, so the per-call cost is paid once per batch, not per
        state. A state with several contacts on one pad (one pair of several contacts, or several
        objects), or whose footprints need the grown support, is read alone (`read`)."""
        S = len(datas)
        out = np.zeros((S, self.num_taxels, 3), np.float32)
        dm = self.distributed
        # The compiled read (backend "native") reads each state in one call: cheaper than one pass.
        if dm is None or dm.backend != "numpy" or not self.efc_first_three or self._opt.cone != self._cone:
            for s, d in enumerate(datas):
                out[s] = self.read(d).taxel_forces
            return out
        m = self.model
        cons = [d.contact for d in datas]
        ncon = np.array([d.ncon for d in datas])
        if ncon.sum() == 0:
            return out
        cat = np.concatenate
        geom_pairs = cat([c.geom for c in cons])
        code = self._pair_code_flat.take(geom_pairs @ self._pair_stride)          # 0 unless distal–object
        adr = cat([c.efc_address for c in cons])
        idx = np.flatnonzero(code)
        idx = idx[adr.take(idx) >= 0]       # contacts outside the solver carry no force
        if idx.size == 0:
            return out
        scene_of = np.repeat(np.arange(S), ncon)
        sc = scene_of.take(idx)
        efc0 = cat([[0], np.cumsum([d.nefc for d in datas])[:-1]])
        code = code.take(idx)
        rows = cat([c.frame for c in cons]).take(idx, axis=0).reshape(-1, 3, 3) * self._code_sign.take(code, axis=0)
        f_c = cat([d.efc_force for d in datas]).take((adr.take(idx) + efc0.take(sc))[:, None] + _XYZ)
        body = self._code_body.take(code) + sc * m.nbody      # in the stacked body tables
        xmat, xpos = cat([d.xmat for d in datas]), cat([d.xpos for d in datas])
        R = xmat.take(body, axis=0).reshape(-1, 3, 3)
        rows_loc = rows @ R
        f_loc = _vecmat(f_c, rows_loc)
        pos = cat([c.pos for c in cons]).take(idx, axis=0)
        p_mid = _vecmat(pos - xpos.take(body, axis=0), R)
        p_loc = p_mid + rows_loc[:, 0] * (0.5 * cat([c.dist for c in cons]).take(idx))[:, None]
        diff = self._code_slots.take(code, axis=0) - p_loc[:, None, :]
        d2 = _vecdot(diff, diff)
        nearest = d2.argmin(axis=1)
        dmin = d2.min(axis=1)
        near = self._slot_info.take(self._code_slot0.take(code) + nearest, axis=0)
        ok = ((dmin <= near[:, 3]) & self._front(p_loc[:, 1], -self.side_sign * FRONT_MARGIN)
              & (_vecdot(rows_loc[:, 0], near[:, :3]) <= -MIN_NORMAL_ALIGNMENT))
        if not ok.all():
            idx, sc, code, f_c, rows_loc, f_loc = (a[ok] for a in (idx, sc, code, f_c, rows_loc, f_loc))
            if idx.size == 0:
                return out
        pad = self._code_pad.take(code)
        block = sc * 5 + pad
        alone = np.zeros(S, bool)
        counts = np.bincount(block, minlength=5 * S)
        if counts.max() > 1:                 # several contacts on one pad: those states alone
            alone[np.flatnonzero(counts > 1) // 5] = True
        # Pairs (one contact each): `_pairs_of` without grouping.
        g = geom_pairs.take(idx, axis=0)
        geom = np.where(code > 0, g[:, 0], g[:, 1]).astype(np.int64)
        fn = f_c[:, 0]
        fn_vec = fn[:, None] * rows_loc[:, 0]
        inv_fn = 1.0 / np.maximum(fn, 1e-300)
        mu = np.where(fn > 0, fn * cat([c.friction for c in cons]).take(idx, axis=0)[:, 0] * inv_fn, 1.0)
        gxmat, gxpos = cat([d.geom_xmat for d in datas]), cat([d.geom_xpos for d in datas])
        gg = geom + sc * m.ngeom
        pb = self.distal_bodies.take(pad) + sc * m.nbody     # `DistributedContact._transforms`
        B = np.empty((len(idx), 3, 4))
        B[:, :, :3] = xmat.take(pb, axis=0).reshape(-1, 3, 3)
        B[:, :, 3] = xpos.take(pb, axis=0)
        B[:, :, 3] -= gxpos.take(gg, axis=0)
        T = gxmat.take(gg, axis=0).reshape(-1, 3, 3).transpose(0, 2, 1) @ B
        grid = dm.coarse
        flat, w, area, area_sum, held = dm._footprint(T, pad, geom, fn, grid, grow=False)
        alone[sc[~held]] = True              # these footprints need the grown support
        if alone.any():
            for s in np.flatnonzero(alone).tolist():
                out[s] = self.read(datas[s]).taxel_forces
            keep = ~alone.take(sc)
            if not keep.any():
                return out
            sc, pad, f_loc, fn_vec, mu, flat, w, area, area_sum = (
                a[keep] for a in (sc, pad, f_loc, fn_vec, mu, flat, w, area, area_sum))
        t = dm._traction_of(pad, flat, w, area, area_sum, f_loc, fn_vec, mu, grid)
        r, _ = dm._pad_readings(sc * 5 + pad, dm._pair_readings(t), t.force, 5 * S)   # (5·S, slots, 3)
        taxel = _vecmat(r.reshape(S, -1, 3).take(self.taxel_slot, axis=1), self.taxel_rot).astype(np.float32)
        done = np.unique(sc)
        out[done] = taxel[done]
        return out

    def _pairs_of(self, data: mujoco.MjData, code: np.ndarray, f_loc: np.ndarray) -> tuple[np.ndarray, ...]:
        """The accepted contacts of `_extract` (pair codes, forces ON the pad, distal frame [N])
        grouped into (pad, object geom) pairs: pad, geom, force (P, 3) [N], normal force (P,) [N],
        the pair sums (P, 7) of the normal force vector, μ·F_n and F_n·contact point (world) [N, N,
        N·m], 1/F_n and the pair's friction coefficient μ (F_n-weighted; 1 without load)."""
        idx = self._last_idx
        con = data.contact
        g = con.geom.take(idx, axis=0)
        geom = np.where(code > 0, g[:, 0], g[:, 1]).astype(np.int64)   # the object's geom
        fn_c = self._last_fn
        extra = np.concatenate([self._last_fn_vec, (fn_c * con.friction.take(idx, axis=0)[:, 0])[:, None],
                                fn_c[:, None] * con.pos.take(idx, axis=0)], axis=1)
        assert self.distributed is not None, "pairs exist under the distributed model only"
        pad, geom, f_pair, fn_pair, ex = self.distributed.pairs(self._code_pad.take(code), geom, f_loc, fn_c, extra)
        inv_fn = 1.0 / np.maximum(fn_pair, 1e-300)
        mu = np.where(fn_pair > 0, ex[:, 3] * inv_fn, 1.0)
        return pad, geom, f_pair, fn_pair, ex, inv_fn, mu

    def _pad_slip(self, data, pad, geom, point, fn_vec, fn, stuck) -> tuple[np.ndarray, np.ndarray]:
        """(5, 3) pad slip velocity [m/s, pad frame]: the object's velocity relative to the pad
        at the contact point, tangential part, while the footprint slides as a whole (no stuck
        point left), else 0 (a stick zone holds the surfaces together; the rest is the layer's
        shear); and (5,) the stuck fraction of each pad's footprint (1 without contact)."""
        slip = np.zeros((5, 3))
        frac = np.ones(5)
        if len(set(pad.tolist())) == len(pad):
            frac[pad] = stuck
        else:
            np.minimum.at(frac, pad, stuck)
        for p in np.flatnonzero((stuck <= 0) & (fn > 0)).tolist():   # the sliding pairs only (≤ 5)
            k = int(pad[p])
            slip[k] += self._slip_velocity(data, k, int(geom[p]), point[p], fn_vec[p])
        return slip, frac

    def _slip_velocity(self, data: mujoco.MjData, k: int, geom: int, point: np.ndarray,
                       fn_vec: np.ndarray) -> np.ndarray:
        """(3,) [m/s, pad frame] the object's velocity relative to pad k at `point` (world),
        tangential to the pair's normal force vector `fn_vec` (distal frame)."""
        v = np.zeros(6)
        mujoco.mj_objectVelocity(self.model, data, mujoco.mjtObj.mjOBJ_GEOM, geom, v, 0)
        v_obj = v[3:] + np.cross(v[:3], point - data.geom_xpos[geom])
        b = int(self.distal_bodies[k])
        mujoco.mj_objectVelocity(self.model, data, mujoco.mjtObj.mjOBJ_BODY, b, v, 0)
        v_pad = v[3:] + np.cross(v[:3], point - data.xpos[b])
        R = data.xmat[b].reshape(3, 3)
        rel = (v_obj - v_pad) @ R                               # distal frame
        n = fn_vec / np.linalg.norm(fn_vec)
        return (rel - (rel @ n) * n) @ self.pad_rot_common

    def _images(self, contacts: PadContacts) -> np.ndarray:
        """(5, 3, 48, 32) pad-frame force images [N/pixel]; zero outside the valid mask.

        Same rule as the taxels, evaluated on a window of 23 × 21 pixels around each contact: a
        pixel's 3D distance is at least its distance in the (x, z) grid plane, and every pixel
        outside the window is at least `window_bound` (≥ 4.7 mm) away in that plane, so when the
        nearest window pixel's r² plus the cutoff (3σ)² stays below window_bound², no outside pixel
        can be nearest or inside the cutoff: the windowed result is exact. Contacts failing that
        test (far off the surface) use every pixel of their pad."""
        npx = IMAGE_SHAPE[0] * IMAGE_SHAPE[1]
        p, pad, f = contacts.position_distal, contacts.pad, contacts.force_pad
        grid = self._grid_tab.take(pad, axis=0)
        # Window centre (row in the stacked grid, column): the pixel under the contact, clamped.
        rc = np.minimum(np.maximum((p.take(_ZX, axis=1) - grid[:, 0:2]) * grid[:, 2:4], grid[:, 4:6]),
                        grid[:, 6:8]).astype(np.int64)
        flat = (rc @ _RC_STRIDE)[:, None] + self._win_offsets            # (C, 23·21) stacked pixels
        # r² − |p|² = |pixel|² − 2 pixel·p: one product with the pixel table (x, y, z, |x|²).
        v = p @ _V_MAP + _V_ONE                                          # (−2p, 1)
        d2 = _matvec(self._pix_aug.take(flat, axis=0), v)
        dmin = d2.min(axis=1)
        # nearest r² + (3σ)² < window_bound²
        exact = dmin < grid[:, 8] - _vecdot(p, p)
        if exact.all():
            return self._scatter_image(flat, d2, dmin, f)
        # The whole pad for contacts the window cannot settle (far off the surface).
        far = ~exact
        full = (self._pad_px0[pad[far]])[:, None] + np.arange(npx)
        d2_far = _sq_dist(p[far], self.pix_grid[pad[far]].reshape(-1, npx, 3))
        img = self._scatter_image(full, d2_far, d2_far.min(axis=1), f[far])
        if exact.any():
            img = img + self._scatter_image(flat[exact], d2[exact], dmin[exact], f[exact])
        return img

    def _scatter_image(self, flat: np.ndarray, d2: np.ndarray, dmin: np.ndarray, f: np.ndarray) -> np.ndarray:
        """Distribute forces `f` (C, 3) [N] over image pixels `flat` (C, S) with squared distances
        `d2` (C, S) [m²] (any per-row constant added) by the Gaussian rule: (5, 3, 48, 32)."""
        delta = d2 - dmin[:, None]
        u = np.exp(delta * (-0.5 / (SIGMA * SIGMA)))
        np.putmask(u, delta > CUTOFF, 0.0)
        f_scaled = f / u.sum(axis=1, keepdims=True)             # per-contact normalisation
        values = f_scaled.T[:, :, None] * u                     # (3, C, S): axis-major
        index = flat + self._axis_px0                           # (3, C, S)
        img = np.bincount(index.ravel(), values.ravel(), 15 * IMAGE_SHAPE[0] * IMAGE_SHAPE[1])
        return img.reshape((3, 5) + IMAGE_SHAPE).transpose(1, 0, 2, 3)


def _pairs_condim_at_least_3(model: mujoco.MjModel, obj: np.ndarray, pad_of_geom: np.ndarray) -> bool:
    pads = np.flatnonzero(pad_of_geom[:-1] >= 0)
    for g in pads:
        for o in obj:
            pg, po = model.geom_priority[g], model.geom_priority[o]
            cd = (model.geom_condim[g] if pg > po else model.geom_condim[o] if po > pg
                  else max(model.geom_condim[g], model.geom_condim[o]))
            if cd < 3:
                return False
    return True


def _explicit_pairs_condim_at_least_3(model: mujoco.MjModel, pad_of_geom: np.ndarray) -> bool:
    """Every explicit pair that touches a pad geom has condim ≥ 3 (True without pairs)."""
    if model.npair == 0:
        return True
    pad_geom = pad_of_geom[:-1] >= 0
    touches = pad_geom.take(model.pair_geom1) | pad_geom.take(model.pair_geom2)
    return bool((model.pair_dim[touches] >= 3).all())


_NO_SLIP = {"pad_slip_velocity": np.zeros((5, 3)), "pad_stuck_fraction": np.ones(5), "pad_unsensed_distal": np.zeros((5, 3))}
for _a in _NO_SLIP.values():
    _a.setflags(write=False)
_EMPTY = PadContacts(np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)))
_FAR = 1e3  # [m] position of padding slots
_XYZ = np.arange(3)
_WIN_ROWS, _WIN_COLS = 11, 10  # image window half sizes [pixels] (≥ 4.7 mm > 3σ + half a pixel)
_RC_STRIDE = np.array([IMAGE_SHAPE[1], 1])
_ZX = np.array([2, 0])
_V_MAP = np.hstack([-2.0 * np.eye(3), np.zeros((3, 1))])   # p ↦ (−2p, 1) with _V_ONE
_V_ONE = np.array([0.0, 0.0, 0.0, 1.0])


def _padded(arrays: list[np.ndarray], fill: float = _FAR) -> np.ndarray:
    n = max(len(a) for a in arrays)
    out = np.full((len(arrays), n, 3), fill)
    for k, a in enumerate(arrays):
        out[k, :len(a)] = a
    return out


def _padded_index(counts: list[int]) -> np.ndarray:
    """(5, max) global index of each pad slot (taxel order thumb → pinky), −1 for padding."""
    out = np.full((len(counts), max(counts)), -1, dtype=np.int64)
    start = 0
    for k, c in enumerate(counts):
        out[k, :c] = np.arange(start, start + c)
        start += c
    return out


def _sq_dist(p: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """(C, S) squared distances from points (C, 3) to each one's slots (C, S, 3)."""
    diff = slots - p[:, None, :]
    return _vecdot(diff, diff)


__all__ = ["CONTACT_MODELS", "ContactForceModel", "TactileReading", "PadContacts", "contact_frame_forces", "SIGMA",
           "FRONT_MARGIN"]
