"""Issue-21 measurements of the simulated pads (prints tables; `--figures DIR` saves taxel maps).

    python tools/sim_tables.py penetration      # MuJoCo penetration vs the layer model (10–500 g, 8 N edge)
    python tools/sim_tables.py footprint [--figures out/]   # taxel count / second moment vs load, maps
    python tools/sim_tables.py continuity       # 0.25 mm steps at 0.5 N: max share change per step
    python tools/sim_tables.py slip             # the slip scenario's per-taxel cone, stuck fraction, slip speed
    python tools/sim_tables.py cone             # every scenario: worst per-taxel cone excess, frames past 1 mN
    python tools/sim_tables.py edge             # a sphere moved around the finger: largest taxel share

Not part of the package: a measuring script over `wuji_tactile_device.producers.sim`.
"""
from __future__ import annotations

import argparse
import sys

import mujoco
import numpy as np

from wuji_tactile_device.producers.sim.contact_model import LAYER_THICKNESS
from wuji_tactile_device.producers.sim.hand_sim import HandSimulation
from wuji_tactile_device.producers.sim.model import build_hand_spec
from wuji_tactile_device.producers.sim.scenarios.base import _pad_points
from wuji_tactile_device.hands.wuji_hand2 import NUM_ACTUATED_JOINTS, hand_kinematics

SIDE = "right"
MOUNT = np.array([0.0, 0.0, 0.3])


def _finger_pose() -> np.ndarray:
    q = np.zeros(NUM_ACTUATED_JOINTS)
    q[4:8] = (0.6, 0.0, 0.65, 0.4)          # index flexed (the slip scenario's pose)
    return q


def pressed_object(kind: str, mass: float, force: float, *, layer_compliance: bool = True,
                   tilt_deg: float = 0.0, seconds: float = 1.5, axis: np.ndarray | None = None):
    """An object of `kind` (sphere R 10 mm | box) and `mass` [kg], on a slide along the index pad's normal, no gravity, pushed into the
    index pad's centre with `force` [N] along the pad normal; returns (MuJoCo penetration [m],
    solver normal force [N], the layer model's approach δ [m] for that contact, sim)."""
    q = _finger_pose()
    spec = build_hand_spec(SIDE, lift_kp=4e4)
    spec.option.gravity = [0.0, 0.0, 0.0]
    c, n, R = _pad_points(SIDE, q)["index"]
    push = n if axis is None else axis       # slide and push direction (outward contact normal)
    body = spec.worldbody.add_body(name="obj")
    # A slide along the pad normal: a free body rolls off the convex pad; the slide keeps the
    # object's inverse mass 1/m along the normal, which is what sets MuJoCo's penetration.
    body.add_joint(name="obj_slide", type=mujoco.mjtJoint.mjJNT_SLIDE, axis=list(push))
    if kind == "sphere":
        size, gtype = [0.01, 0, 0], mujoco.mjtGeom.mjGEOM_SPHERE
        centre = MOUNT + c + n * size[0]
        quat = [1, 0, 0, 0]
    else:                                   # a box face (or, tilted, an edge) on the pad
        size, gtype = [0.004, 0.006, 0.004], mujoco.mjtGeom.mjGEOM_BOX
        t = np.radians(tilt_deg)
        Rb = np.stack([R[:, 0], np.cross(n, R[:, 0]), n], axis=1)
        # tilted about its own axis across the finger: the lowest edge crosses the pad cylinder
        Rt = Rb @ np.array([[1, 0, 0], [0, np.cos(t), -np.sin(t)], [0, np.sin(t), np.cos(t)]])
        qb = np.zeros(4)
        mujoco.mju_mat2Quat(qb, np.ascontiguousarray(Rt).ravel())
        quat = list(qb)
        reach = float(np.abs(Rt.T @ n) @ np.asarray(size))
        centre = MOUNT + c + n * (reach + 1e-4)
    body.pos = list(centre)
    body.quat = quat
    body.add_geom(name="obj_geom", type=gtype, size=size, mass=mass, friction=[1.0, 0.005, 0.0001], condim=4)
    sim = HandSimulation(SIDE, spec, ["obj_geom"], layer_compliance=layer_compliance)
    sim.data.qpos[sim.qpos_adr] = q          # start in the pose (the object sits at the pad)
    # Hold the finger on its joint limits (range = the pose ± 1 mrad): the servos would yield
    # under 8 N; the penetration does not depend on how the finger is held (Â is fixed).
    jnt = [sim.model.joint(n).id for n in hand_kinematics(SIDE).joint_names]
    sim.model.jnt_range[jnt] = np.stack([q - 1e-3, q + 1e-3], axis=1)
    sim.set_joint_targets(q)
    sim.set_lift(0.0)
    mujoco.mj_forward(sim.model, sim.data)
    bid = sim.model.body("obj").id
    frames = int(seconds / 0.01)
    for k in range(frames):
        ramp = min(1.0, (k + 1) / (0.5 * frames))
        sim.data.xfrc_applied[bid, :3] = -push * force * ramp
        sim.step_frame()
    d = sim.data
    obj = sim.object_geom_ids[0]
    g = d.contact.geom[:d.ncon]
    sel = np.flatnonzero(((g == obj).any(axis=1)) & (d.contact.efc_address[:d.ncon] >= 0))
    pen = float(-d.contact.dist[sel].min()) if sel.size else 0.0
    fn = 0.0
    for i in sel:
        f6 = np.zeros(6)
        mujoco.mj_contactForce(sim.model, d, int(i), f6)
        fn += f6[0]
    return pen, fn, _layer_delta(sim, fn), sim


def contact_normal(sim: HandSimulation) -> np.ndarray:
    """World outward normal of the (first) pad–object contact, from the pad to the object."""
    d = sim.data
    i = int(np.flatnonzero((d.contact.geom[:d.ncon] == sim.object_geom_ids[0]).any(axis=1))[0])
    nrm = d.contact.frame[i][:3].copy()
    return nrm if d.contact.geom[i][1] == sim.object_geom_ids[0] else -nrm


def _layer_delta(sim: HandSimulation, fn: float) -> float:
    """The distributed model's approach δ for the index pad's object contact (its own quadrature)."""
    cm = sim.contacts.distributed
    pad = np.array([1])
    geom = sim.object_geom_ids[:1]
    quad = cm.pixel_quad
    local = cm._transforms(sim.data, pad, geom) @ quad.points_h.take(pad, axis=0)
    sdf = cm._sdf(geom, local)
    _, _, lam = cm.weights(sim.data, quad, pad, geom, np.array([fn]))
    return float(lam[0] - sdf.min())


def penetration_table() -> None:
    print("| object | mass | MuJoCo penetration at 0.5 N [mm] | layer model δ [mm] | ratio | default contact [mm] |")
    print("|---|---:|---:|---:|---:|---:|")
    for kind in ("sphere", "box"):
        for mass in (0.01, 0.05, 0.1, 0.5):
            pen, fn, delta, _ = pressed_object(kind, mass, 0.5)
            pen0, _, _, _ = pressed_object(kind, mass, 0.5, layer_compliance=False)
            print(f"| {kind} | {mass * 1e3:.0f} g | {pen * 1e3:.3f} (F {fn:.3f} N) | {delta * 1e3:.3f} | {pen / delta:.3f} | {pen0 * 1e3:.3f} |")
    print()
    print("| object (100 g), layer vs default contact | push [N] | solver normal force [N] | penetration [mm] | / layer thickness |")
    print("|---|---:|---:|---:|---:|")
    for kind, tilt in (("sphere", 0.0), ("box", 0.0), ("box", 45.0)):
        for force in (0.5, 2.0, 8.0, 20.0):
            for lc in (True, False):
                pen, fn, _, _ = pressed_object(kind, 0.1, force, tilt_deg=tilt, layer_compliance=lc)
                what = f"{kind}{' edge 45°' if tilt else ''}, {'layer' if lc else 'default'}"
                if fn == 0.0:
                    print(f"| {what} | {force:g} | 0 (no contact at the end: pushed through or off) | — | — |")
                else:
                    print(f"| {what} | {force:g} | {fn:.2f} | {pen * 1e3:.3f} | {pen / LAYER_THICKNESS:.2f} |")


def _helpers():
    """The static pad–object fixtures shared with the tests (tests/contact_model_helpers.py,
    tests/sensing_helpers.py)."""
    from pathlib import Path
    tests = str(Path(__file__).resolve().parent.parent / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    import contact_model_helpers as cmh
    import sensing_helpers as sh
    return cmh, sh


LOADS = np.array([0.1, 0.2, 0.5, 1.0, 2.0])
CASES = (("sphere", 0.005), ("sphere", 0.010), ("sphere", 0.020), ("cylinder", 0.005), ("plate", 0.010))


def footprint_table(figures: str | None) -> None:
    """Per case and load on the 34 published index taxels: taxels above 5 % of the peak, their
    second moment m2 [mm²], its load-weighted point-load floor (`sensing_helpers.taxel_floor`) and m2 − floor;
    the model's continuous fields: the sensing-plane field's area above 5 % of its peak, its m2,
    its floor (`sensing_helpers.field_floor`) and m2 − floor, and the surface pressure's m2 (variances add under
    a convolution: m2 − floor estimates the footprint's own m2)."""
    cmh, sh = _helpers()
    from wuji_tactile_device.producers.sim import sensing
    from wuji_tactile_device.producers.sim.taxels import pad_taxels
    pad = pad_taxels(SIDE)[cmh.INDEX]
    x_pix, _, flat = sensing._grid_areas(pad, 1)
    print("| case | F [N] | taxels > 5 % peak | field area > 5 % [mm²] | taxel m2 [mm²] | taxel floor | "
          "taxel m2 − floor | field m2 | field floor | field m2 − floor | surface pressure m2 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    summary = []
    for kind, radius in CASES:
        sim, g = cmh.object_on_index_pad(kind, radius=radius)
        rows = []
        maps = []
        for F in LOADS:
            t, floor_t, _, _, point_t = sh.taxel_floor(sim, g, F)
            _, pix = sh.index_taxels(sim, g, F)
            y, fy, ay = sh.continuous_field(pix)
            p = fy / ay
            m2_t = 1e6 * sh.second_moment(pad.positions, np.maximum(t, 0))
            m2_f = 1e6 * sh.second_moment(y, fy)
            m2_s = 1e6 * sh.second_moment(x_pix, pix[flat])
            floor_f = 1e6 * sh.field_floor(pix)
            rows.append((int(np.sum(t > 0.05 * t.max())), 1e6 * float(ay[p > 0.05 * p.max()].sum()),
                         m2_t, 1e6 * floor_t, m2_f, floor_f, m2_s, 1e6 * point_t))
            maps.append((F, t, pix))
        r = np.array(rows)
        for F, row in zip(LOADS, r, strict=True):
            cnt, area, m2_t, fl_t, m2_f, fl_f, m2_s, _ = row
            print(f"| {kind} R {radius * 1e3:g} mm | {F:g} | {int(cnt)} | {area:.2f} | {m2_t:.3f} | {fl_t:.3f} | "
                  f"{m2_t - fl_t:.3f} | {m2_f:.3f} | {fl_f:.3f} | {m2_f - fl_f:.3f} | {m2_s:.3f} |")
        dt, df, dp = r[:, 2] - r[:, 3], r[:, 4] - r[:, 5], r[:, 2] - r[:, 7]
        s_dp = sh.slope(LOADS, dp) if (dp > 0).all() else float("nan")
        s_dt = sh.slope(LOADS, dt) if (dt > 0).all() else float("nan")
        s_df = sh.slope(LOADS, df) if (df > 0).all() else float("nan")
        monotone = bool(np.all(np.diff(r[:, 0]) >= 0) and np.all(np.diff(r[:, 2]) > 0))
        summary.append((f"{kind} R {radius * 1e3:g} mm", sh.slope(LOADS, r[:, 0]), sh.slope(LOADS, r[:, 1]),
                        sh.slope(LOADS, r[:, 2]), sh.slope(LOADS, r[:, 4]), s_dt, s_df, sh.slope(LOADS, r[:, 6]),
                        monotone, bool(np.all(np.diff(dt) > 0)), s_dp, float(r[:, 7].min()), float(r[:, 7].max())))
        if figures:
            _save_maps(figures, f"{kind}_R{radius * 1e3:g}mm", pad, maps)
    print()
    print("| case | slope taxel count / field area | ratio | slope taxel m2 / field m2 | ratio | "
          "slope (m2 − floor) taxels / field | ratio | slope surface m2 | count and m2 monotone | m2 − floor monotone | "
          "one-point floor [mm²] | slope (m2 − one-point floor) / field | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|")
    for name, sc, sa, st, sf, sdt, sdf, ss, mono, mono_d, sdp, p_lo, p_hi in summary:
        print(f"| {name} | {sc:.3f} / {sa:.3f} | {sc / sa:.2f} | {st:.3f} / {sf:.3f} | {st / sf:.2f} | "
              f"{sdt:.3f} / {sdf:.3f} | {sdt / sdf:.2f} | {ss:.3f} | {'yes' if mono else 'NO'} | {'yes' if mono_d else 'NO'} | "
              f"{p_lo:.2f}–{p_hi:.2f} | {sdp:.3f} / {sdf:.3f} | {sdp / sdf:.2f} |")


def _save_maps(out: str, name: str, pad, maps) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from pathlib import Path
    Path(out).mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(2, len(maps), figsize=(3.0 * len(maps), 6.2))
    px, pz = pad.positions[:, 0] * 1e3, pad.positions[:, 2] * 1e3
    for k, (F, t, pix) in enumerate(maps):
        ax = axes[0, k]
        sc = ax.scatter(px, pz, c=t / t.max(), s=260 * np.maximum(t / t.max(), 0.03), cmap="viridis", vmin=0, vmax=1,
                        edgecolors="k", linewidths=0.4)
        ax.set_title(f"{name}\n{F:g} N: taxels (share of peak)", fontsize=8)
        ax.set_aspect("equal")
        ax.set_xlabel("distal x [mm]", fontsize=7)
        ax.set_ylabel("distal z [mm]", fontsize=7)
        ax.tick_params(labelsize=6)
        im = pix.reshape(48, 32)
        axes[1, k].imshow(im / max(im.max(), 1e-30), cmap="viridis", vmin=0, vmax=1, aspect="auto")
        axes[1, k].set_title(f"{F:g} N: surface pressure (image grid)", fontsize=8)
        axes[1, k].tick_params(labelsize=6)
    fig.colorbar(sc, ax=axes[0, :].tolist(), shrink=0.7)
    fig.savefig(Path(out) / f"taxels_{name}.png", dpi=90)
    plt.close(fig)


def continuity_table() -> None:
    """0.5 N moved 4 mm in 0.25 mm steps across the index pad (distal x and z): the largest change
    of any published taxel's share per step."""
    cmh, sh = _helpers()
    print("| case | axis | max share change per 0.25 mm step | largest taxel share range |")
    print("|---|---|---:|---:|")
    for kind, radius in (("sphere", 0.005), ("sphere", 0.010), ("sphere", 0.020), ("cylinder", 0.005),
                         ("plate", 0.010), ("edge", 0.010)):
        for axis, label in ((0, "x (across)"), (2, "z (along)")):
            sim, g = cmh.object_on_index_pad(kind, radius=radius)
            R = sim.data.xmat[sim.distal_bodies[1]].reshape(3, 3)
            x0 = sim.data.geom_xpos[g].copy()
            shares = []
            for step in np.arange(-8, 9) * 0.25e-3:
                sim.data.geom_xpos[g] = x0 + R[:, axis] * step
                shares.append(sh.published_taxels(sim, g, 0.5) / 0.5)
            a = np.array(shares)
            print(f"| {kind} R {radius * 1e3:g} mm | {label} | {np.abs(np.diff(a, axis=0)).max():.3f} | "
                  f"{np.ptp(a.max(axis=1)):.3f} |")


def slip_table() -> None:
    """The slip scenario (μ = 1, 0.3 N, drag 10 mm/s from 3 s) at the index pad, every frame."""
    from wuji_tactile_device.producers.sim.producer import SimProducer
    from wuji_tactile_device.producers.sim.scenarios import make_scenario
    sc = make_scenario("slip")
    prod = SimProducer(sc)
    rows = []
    while True:
        frame = prod.next_frame()
        if frame is None:
            break
        r = prod.reading
        tp = r.taxel_forces.astype(np.float64)[40:74]          # index taxels, own axes (z normal)
        ideal = r.taxel_forces_distal[40:74]
        rows.append((prod.sim.time_ns * 1e-9, float(np.max(_cone_excess(tp, _solver_mu(prod.sim.data)))),
                     frame.extras["pad_slip"][1].copy(), float(np.linalg.norm(ideal.sum(axis=0)))))
        if prod.finished:
            break
    t = np.array([x[0] for x in rows])
    excess = np.array([x[1] for x in rows])
    slip = np.array([x[2] for x in rows])
    stuck, speed = slip[:, 3], np.linalg.norm(slip[:, :3], axis=1)
    rel = np.array(sc.rel)
    vrel = np.gradient(rel, np.array(sc.t))
    drag = t > sc.DRAG_START
    first = int(np.argmax(drag & (stuck < 1.0))) if np.any(drag & (stuck < 1.0)) else -1
    gross = int(np.argmax(drag & (stuck == 0.0))) if np.any(drag & (stuck == 0.0)) else -1
    print("| measure | value | criterion |")
    print("|---|---:|---|")
    print(rf"| max over frames and taxels of \|shear\| − μ\|normal\| | {excess.max() * 1e3:.6f} mN | ≤ 1 mN |")
    for lo, hi, what in ((0, 0.5, "stuck fraction ≥ 0.5"), (0.0, 1e-9, "gross slip (stuck 0)"),
                         (1e-9, 0.5, "partial slip, stuck < 0.5")):
        sel = (stuck >= lo) & (stuck <= hi) if what != "stuck fraction ≥ 0.5" else stuck >= 0.5
        if sel.any():
            print(f"| … in frames with {what} | {excess[sel].max() * 1e3:.6f} mN | ≤ 1 mN |")
    print(f"| stuck fraction at the drag start ({sc.DRAG_START:g} s) | {stuck[np.argmin(np.abs(t - sc.DRAG_START))]:.3f} | 1 |")
    print(f"| stuck fraction before the drag (min) | {stuck[~drag & (t > 1.0)].min():.3f} | 1 |")
    print(f"| first frame with stuck < 1 / first with stuck 0 | {t[first]:.2f} s / {t[gross]:.2f} s | falls before gross slip |")
    stuck_sel = drag & (stuck > 0)
    print(f"| max slip speed while any of the footprint sticks | {speed[stuck_sel].max() * 1e3:.4f} mm/s | 0 ± 0.1 mm/s |")
    late = drag & (t > t[gross] + 0.05) & (t <= sc.DRAG_END)
    ratio = speed[late] / np.abs(vrel[late])
    print(f"| slip speed / object–pad relative speed once sliding (mean, min–max) | {ratio.mean():.3f} "
          f"({ratio.min():.3f}–{ratio.max():.3f}) | within 10 % |")


def _solver_mu(data: mujoco.MjData) -> float:
    """The friction coefficient the solver used this frame (largest over the contacts; 0 without)."""
    return float(data.contact.friction[:data.ncon, 0].max(initial=0.0))


def _cone_excess(taxels: np.ndarray, mu: float) -> np.ndarray:
    """|shear| − μ·|normal| [N] of published taxel forces (n, 3) in their own axes (+Z the normal)."""
    return np.hypot(taxels[:, 0], taxels[:, 1]) - mu * np.abs(taxels[:, 2])


CONE_SCENARIOS = ("press", "lift", "nail-contact", "grasp-sphere", "grasp-cylinder", "grasp-box", "release", "slip", "roll")


def cone_table() -> None:
    """Every frame of each scenario, all 176 published taxels (float32, own axes): the largest
    |shear| − μ·|normal| (μ: the solver's), and the frames where it passes 1 mN."""
    from wuji_tactile_device.producers.sim.producer import SimProducer
    from wuji_tactile_device.producers.sim.scenarios import make_scenario
    print("| scenario | frames | frames with contact | worst \\|shear\\| − μ\\|normal\\| [mN] | frames > 1 mN (times) |")
    print("|---|---:|---:|---:|---|")
    for name in CONE_SCENARIOS:
        prod = SimProducer(make_scenario(name))
        n = loaded = 0
        worst, over = 0.0, []
        while not prod.finished:
            if prod.next_frame() is None:
                break
            r = prod.reading
            n += 1
            loaded += r.num_contacts > 0
            e = float(_cone_excess(r.taxel_forces.astype(np.float64), _solver_mu(prod.sim.data)).max())
            worst = max(worst, e)
            if e > 1e-3:
                over.append(f"{prod.sim.time_ns * 1e-9:.2f} s: {e * 1e3:.2f}")
        print(f"| {name} | {n} | {loaded} | {worst * 1e3:.6f} | {len(over)}{' (' + ', '.join(over) + ')' if over else ''} |")


def edge_table() -> None:
    """0.5 N of a sphere (R 10 mm) at angle θ around the index finger from the pad normal (distal
    +y toward +x, at z = −12 mm): the largest published taxel share and the taxels above 5 %."""
    cmh, sh = _helpers()
    sim, g = cmh.object_on_index_pad("sphere", radius=0.010)
    geo = sim.contacts.pads[cmh.INDEX].geometry
    R = sim.data.xmat[sim.distal_bodies[1]].reshape(3, 3)
    o = sim.data.xpos[sim.distal_bodies[1]]
    print("| angle [deg] | largest taxel share | taxels > 5 % of peak |")
    print("|---:|---:|---:|")
    for deg in (0, 30, 50, 60, 70, 75, 78, 80, 85, 88):
        th = np.radians(deg)
        local = np.array([np.sin(th), geo.pad_side * np.cos(th), 0.0]) * (geo.radius + 0.010)
        local[2] = cmh.CONTACT_Z
        sim.data.geom_xpos[g] = o + R @ local
        t = sh.published_taxels(sim, g, 0.5)
        print(f"| {deg} | {t.max() / t.sum():.3f} | {int(np.sum(t > 0.05 * t.max()))} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table", choices=["penetration", "footprint", "continuity", "slip", "cone", "edge"])
    ap.add_argument("--figures", help="directory for the taxel-map PNGs (footprint)")
    a = ap.parse_args(argv)
    if a.table == "penetration":
        penetration_table()
    elif a.table == "footprint":
        footprint_table(a.figures)
    elif a.table == "continuity":
        continuity_table()
    elif a.table == "edge":
        edge_table()
    elif a.table == "cone":
        cone_table()
    else:
        slip_table()
    return 0


if __name__ == "__main__":
    sys.exit(main())
