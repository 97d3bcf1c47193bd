"""Pad forces from MuJoCo's contact solution, distributed onto the taxels (vectorised).

Per frame (after `mj_forward`):
1. contacts in the solver (`efc_address ≥ 0`, no flex geom −1) between a distal segment's geoms
   and a chosen object's geoms;
2. the contact-frame force, rebuilt from `efc_force` (elliptic cones: the first three rows;
   pyramidal: normal = Σ pyramid rows, tangent i = (row 2i − row 2i+1)·μ_i), which equals
   `mj_contactForce` bit for bit; world force on geom[1] = frameᵀ f, negated when the pad is
   geom[0] → the force the object exerts ON the pad;
3. the active-pad mask: contact on the palm side of the distal segment, nearest taxel within
   r = 0.9 × max NN spacing + 0.2 mm of the pad-surface contact point, and outward contact normal
   · that taxel's normal ≥ 0.25 (back-side and side contacts are dropped, not the collisions);
4. Gaussian spatial response σ = 1.5 mm around the pad-surface contact point with the relative
   cutoff Δ = r² − min r² ≤ (3σ)², normalised per contact, so each axis of the pad-frame force
   is conserved exactly; then each taxel's share is expressed in its own axes (+Z outward normal;
   pressing gives fz < 0).
"""
from __future__ import annotations

from typing import NamedTuple

import mujoco
import numpy as np

from ...errors import ProducerError
from ..wuji_hand2 import FINGERS
from .model import distal_body_ids
from .taxels import IMAGE_SHAPE, pad_layouts

SIGMA = 0.0015               # spatial response width [m]
CUTOFF = (3.0 * SIGMA) ** 2  # relative squared-distance cutoff [m²]
MIN_NORMAL_ALIGNMENT = 0.25


class PadContacts(NamedTuple):
    """Accepted contacts of one frame (C contacts), all float64."""

    pad: np.ndarray            # (C,) pad index 0..4 (thumb → pinky)
    force_pad: np.ndarray      # (C, 3) force on the pad in its pad frame [N]
    force_world: np.ndarray    # (C, 3) force on the pad in world axes [N]
    position_distal: np.ndarray  # (C, 3) pad-surface contact point in the distal frame [m]


class TactileReading(NamedTuple):
    """One frame of simulated tactile output."""

    taxel_forces: np.ndarray   # (176, 3) float32, each taxel's own axes, force ON the taxel [N]
    taxel_forces_pad: np.ndarray  # (176, 3) float64, the same shares in their pad's frame [N]
    resultants: np.ndarray     # (5, 3) float64 per-pad resultant in the pad frame [N], thumb → pinky
    pad_forces_world: np.ndarray  # (5, 3) float64 per-pad resultant in world axes [N]
    num_contacts: int          # accepted (masked-in) contacts
    num_rejected: int          # distal–object contacts dropped by the active-pad mask
    images: np.ndarray | None  # (5, 3, 48, 32) float64 pad-frame N/pixel, NaN-free (0 outside mask)

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
    out = np.zeros((len(idx), 3))
    if len(idx) == 0:
        return out
    efc = data.efc_force
    if model.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC:
        out[:, 0] = efc[adr]
        fr = dim > 1
        out[fr, 1] = efc[adr[fr] + 1]
        out[fr, 2] = efc[adr[fr] + 2]
        return out
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

    def __init__(self, model: mujoco.MjModel, side: str, object_geoms) -> None:
        self.model = model
        self.side = side
        self.pads = pad_layouts(side)
        self.distal_bodies = distal_body_ids(model, side)
        obj = np.asarray(list(object_geoms), dtype=np.int64)
        if obj.size == 0:
            raise ProducerError("sim: no object geoms chosen for the tactile pads")
        if obj.min() < 0 or obj.max() >= model.ngeom:
            raise ProducerError(f"sim: object geom id out of range 0..{model.ngeom - 1}: {obj.tolist()}")
        self.is_object = np.zeros(model.ngeom + 1, dtype=bool)  # last slot: flex geom (−1)
        self.is_object[obj] = True
        self.pad_of_geom = np.full(model.ngeom + 1, -1, dtype=np.int64)
        for k, b in enumerate(self.distal_bodies):
            self.pad_of_geom[:-1][model.body_weldid[model.geom_bodyid] == b] = k
        if np.any(self.pad_of_geom[obj] >= 0):
            raise ProducerError("sim: an object geom belongs to a distal segment")
        counts = [len(p.positions) for p in self.pads]
        self.taxel_pad = np.repeat(np.arange(5), counts)
        self.taxel_pos = np.concatenate([p.positions for p in self.pads])          # (N, 3) distal
        self.taxel_normal = np.concatenate([p.normals for p in self.pads])         # (N, 3) distal
        self.pad_rot = np.stack([p.pad_rotation for p in self.pads])               # (5, 3, 3)
        taxel_rot = np.concatenate([p.rotations for p in self.pads])               # (N, 3, 3)
        # Taxel axes expressed in their pad frame: f_taxel = R_tpᵀ f_pad.
        self.taxel_rot_in_pad = np.einsum("nji,njk->nik", self.pad_rot[self.taxel_pad], taxel_rot)
        self.radius = np.array([p.active_radius for p in self.pads])
        self.pad_side = np.array([p.geometry.pad_side for p in self.pads])
        self.num_taxels = len(self.taxel_pos)
        # Force-image pixels (valid ones only), flattened per pad.
        self.pix_pos = np.concatenate([p.pixel_positions[p.pixel_valid] for p in self.pads])
        self.pix_pad = np.concatenate([np.full(int(p.pixel_valid.sum()), k) for k, p in enumerate(self.pads)])
        self.pix_flat_index = np.concatenate([np.flatnonzero(p.pixel_valid.ravel()) for p in self.pads])

    # -- contact selection ------------------------------------------------------------------------
    def pad_contacts(self, data: mujoco.MjData) -> tuple[PadContacts, int]:
        """Accepted pad contacts of the current state and the number rejected by the mask."""
        empty = PadContacts(np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)))
        n = data.ncon
        if n == 0:
            return empty, 0
        con = data.contact
        geom = con.geom  # (n, 2); −1 for flex → indexes the extra slot (never pad nor object)
        pad0, pad1 = self.pad_of_geom[geom[:, 0]], self.pad_of_geom[geom[:, 1]]
        obj0, obj1 = self.is_object[geom[:, 0]], self.is_object[geom[:, 1]]
        pad_is_g1 = (pad1 >= 0) & obj0
        cand = (con.efc_address >= 0) & (((pad0 >= 0) & obj1) | pad_is_g1)
        idx = np.flatnonzero(cand)
        if idx.size == 0:
            return empty, 0
        g1 = pad_is_g1[idx]
        pad = np.where(g1, pad1[idx], pad0[idx])
        sign = np.where(g1, 1.0, -1.0)
        frame = con.frame[idx].reshape(-1, 3, 3)          # rows: normal, t1, t2 (world)
        f_c = contact_frame_forces(self.model, data, idx)
        f_world = sign[:, None] * np.einsum("cki,ck->ci", frame, f_c)   # force ON the pad
        n_out = -sign[:, None] * frame[:, 0, :]           # pad → object
        p_surf = con.pos[idx] - n_out * (0.5 * con.dist[idx])[:, None]
        body = self.distal_bodies[pad]
        R = data.xmat[body].reshape(-1, 3, 3)
        p_loc = np.einsum("cji,cj->ci", R, p_surf - data.xpos[body])
        n_loc = np.einsum("cji,cj->ci", R, n_out)
        f_loc = np.einsum("cji,cj->ci", R, f_world)
        # Active-pad mask.
        d2 = self._sq_dist(p_loc, pad, self.taxel_pos, self.taxel_pad)
        nearest = np.argmin(d2, axis=1)
        near_ok = np.sqrt(d2[np.arange(len(idx)), nearest]) <= self.radius[pad]
        front = self.pad_side[pad] * p_loc[:, 1] > 0
        aligned = np.einsum("ci,ci->c", n_loc, self.taxel_normal[nearest]) >= MIN_NORMAL_ALIGNMENT
        ok = front & near_ok & aligned
        f_pad = np.einsum("cji,cj->ci", self.pad_rot[pad[ok]], f_loc[ok])
        return PadContacts(pad[ok], f_pad, f_world[ok], p_loc[ok]), int((~ok).sum())

    @staticmethod
    def _sq_dist(p: np.ndarray, pad: np.ndarray, pts: np.ndarray, pts_pad: np.ndarray) -> np.ndarray:
        d2 = ((p[:, None, :] - pts[None, :, :]) ** 2).sum(axis=2)
        d2[pad[:, None] != pts_pad[None, :]] = np.inf
        return d2

    @staticmethod
    def _weights(d2: np.ndarray) -> np.ndarray:
        delta = d2 - d2.min(axis=1, keepdims=True)
        u = np.where(delta <= CUTOFF, np.exp(-delta / (2 * SIGMA * SIGMA)), 0.0)
        return u / u.sum(axis=1, keepdims=True)

    # -- distribution -----------------------------------------------------------------------------
    def read(self, data: mujoco.MjData, *, images: bool = False) -> TactileReading:
        """The tactile reading of the current state (call after `mj_forward`)."""
        contacts, rejected = self.pad_contacts(data)
        res = np.zeros((5, 3))
        world = np.zeros((5, 3))
        if len(contacts.pad) == 0:
            taxel_pad = np.zeros((self.num_taxels, 3))
            taxel = np.zeros((self.num_taxels, 3), dtype=np.float32)
            img = np.zeros((5, 3) + IMAGE_SHAPE) if images else None
            return TactileReading(taxel, taxel_pad, res, world, 0, rejected, img)
        w = self._weights(self._sq_dist(contacts.position_distal, contacts.pad, self.taxel_pos, self.taxel_pad))
        taxel_pad = w.T @ contacts.force_pad                       # (N, 3) pad frame
        np.add.at(res, contacts.pad, contacts.force_pad)
        np.add.at(world, contacts.pad, contacts.force_world)
        taxel = np.einsum("nji,nj->ni", self.taxel_rot_in_pad, taxel_pad).astype(np.float32)
        img = self._images(contacts) if images else None
        return TactileReading(taxel, taxel_pad, res, world, len(contacts.pad), rejected, img)

    def _images(self, contacts: PadContacts) -> np.ndarray:
        """(5, 3, 48, 32) pad-frame force images [N/pixel]; zero outside the valid mask."""
        w = self._weights(self._sq_dist(contacts.position_distal, contacts.pad, self.pix_pos, self.pix_pad))
        pix = w.T @ contacts.force_pad                              # (P, 3)
        img = np.zeros((5, 3, IMAGE_SHAPE[0] * IMAGE_SHAPE[1]))
        img[self.pix_pad, :, self.pix_flat_index] = pix
        return img.reshape((5, 3) + IMAGE_SHAPE)


__all__ = ["ContactForceModel", "TactileReading", "PadContacts", "contact_frame_forces", "SIGMA", "FINGERS"]
