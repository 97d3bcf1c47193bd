"""Issue-21 measurements of the simulated pads (prints tables; `--figures DIR` saves taxel maps).

    python tools/sim_tables.py penetration      # MuJoCo penetration vs the layer model (10–500 g, 0.1–20 N, box edge)
    python tools/sim_tables.py footprint [--figures out/]   # taxel count / second moment vs load, maps
    python tools/sim_tables.py continuity       # 0.25 mm steps at 0.5 N: max share change per step
    python tools/sim_tables.py slip             # the slip scenario's per-taxel cone, stuck fraction, slip speed
    python tools/sim_tables.py cone             # every scenario: worst per-taxel cone excess, frames past 1 mN
    python tools/sim_tables.py edge             # a sphere moved around the finger: the roll-off at the pad edge
    python tools/sim_tables.py pitch            # the footprint slopes an ideal sensor reads vs its taxel pitch

Not part of the package: a measuring script over `wuji_tactile_device.producers.sim`.
"""
from __future__ import annotations

import argparse
import sys

import mujoco
import numpy as np

from wuji_tactile_device.producers.sim.contact_model import LAYER_THICKNESS

SIDE = "right"
MOUNT = np.array([0.0, 0.0, 0.3])


def _compliance():
    """The held press fixture shared with the tests (tests/compliance_helpers.py)."""
    _helpers()
    import compliance_helpers as ch
    return ch


def penetration_table() -> None:
    """MuJoCo's penetration against the layer model's approach δ: every shape × mass × load up to
    2 N (ratio = MuJoCo / layer), a tilt sweep of the box face, and the saturation past the layer's
    thickness up to 20 N (box edge included), with MuJoCo's default contact beside."""
    ch = _compliance()
    loads = (0.1, 0.2, 0.5, 1.0, 2.0)
    print("Ratio MuJoCo penetration / layer model δ (held fixture, no gravity):")
    print()
    print("| object | mass | " + " | ".join(f"{f:g} N" for f in loads) + " | δ layer at 0.5 N [mm] | contacts |")
    print("|---|---:|" + "---:|" * len(loads) + "---:|---:|")
    for kind in ("sphere", "cylinder", "box", "plate", "edge"):
        for mass in (0.01, 0.05, 0.1, 0.5):
            cells, ref = [], (0.0, 0)
            for force in loads:
                pen, fn, nc, delta, _ = ch.pressed_object(kind, mass, force)
                cells.append(f"{pen / delta:.3f}" if fn > 0 else "lost")
                if force == 0.5:
                    ref = (delta, nc)
            print(f"| {kind} | {mass * 1e3:.0f} g | " + " | ".join(cells) + f" | {ref[0] * 1e3:.3f} | {ref[1]} |")
    print()
    print("Box face (100 g, 0.5 N) turned about the finger's cross axis:")
    print()
    print("| tilt [deg] | MuJoCo penetration [mm] | contacts | layer δ [mm] | ratio |")
    print("|---:|---:|---:|---:|---:|")
    for tilt in (0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0):
        pen, fn, nc, delta, _ = ch.pressed_object("box", 0.1, 0.5, tilt_deg=tilt)
        print(f"| {tilt:g} | {pen * 1e3:.3f} | {nc} | {delta * 1e3:.3f} | {pen / delta:.3f} |")
    print()
    print("Past the layer's thickness (100 g; penetration [mm], / layer thickness in brackets):")
    print()
    print("| object | push [N] | solver normal force [N] | layer contact | layer model δ (unbounded Winkler) | MuJoCo default contact |")
    print("|---|---:|---:|---:|---:|---:|")
    h = LAYER_THICKNESS
    for kind in ("sphere", "box", "edge"):
        for force in (0.5, 1.0, 2.0, 4.0, 6.0, 8.0, 20.0):
            pen, fn, _, delta, _ = ch.pressed_object(kind, 0.1, force)
            pen0, fn0, _, _, _ = ch.pressed_object(kind, 0.1, force, layer_compliance=False)
            p0 = f"{pen0 * 1e3:.3f} ({pen0 / h:.2f})" if fn0 > 0 else "lost contact"
            print(f"| {kind} | {force:g} | {fn:.2f} | {pen * 1e3:.3f} ({pen / h:.2f}) | {delta * 1e3:.3f} ({delta / h:.2f}) | {p0} |")
    print()
    print("In the scenarios:")
    print()
    scenario_penetration_table()


def scenario_penetration_table() -> None:
    """In the scenarios (seed 0, right hand): MuJoCo's deepest penetration of each pad's contacts
    with the object against the layer model's δ for the same contact and solver normal force."""
    import mujoco
    from wuji_tactile_device.producers.sim.producer import SimProducer
    from wuji_tactile_device.producers.sim.scenarios import make_scenario
    fingers = ("thumb", "index", "middle", "ring", "pinky")
    print("| scenario, time | pad (MuJoCo contacts) | solver normal force [N] | MuJoCo penetration [mm] | layer δ [mm] | ratio |")
    print("|---|---|---:|---:|---:|---:|")
    for name, at in (("press", 9.0), ("grasp-sphere", 8.0), ("grasp-box", 8.0), ("slip", 2.9)):
        prod = SimProducer(make_scenario(name))
        while prod.next_frame() is not None and not prod.finished and prod.sim.time_ns * 1e-9 < at - 1e-9:
            pass
        sim = prod.sim
        m, d, cm = sim.model, sim.data, sim.contacts.distributed
        for p, b in enumerate(sim.distal_bodies):
            for g in sim.object_geom_ids:
                sel = [i for i in range(d.ncon) if d.contact.efc_address[i] >= 0 and g in d.contact.geom[i]
                       and b in m.geom_bodyid[d.contact.geom[i]]]
                fn = 0.0
                for i in sel:
                    f6 = np.zeros(6)
                    mujoco.mj_contactForce(m, d, i, f6)
                    fn += f6[0]
                if fn < 0.05:
                    continue
                pad, geom = np.array([p]), np.array([g])
                local = cm._transforms(d, pad, geom) @ cm.pixel_quad.points_h.take(pad, axis=0)
                _, _, lam = cm.weights(d, cm.pixel_quad, pad, geom, np.array([fn]))
                delta = float(lam[0] - cm._sdf(geom, local).min())
                pen = float(-d.contact.dist[sel].min())
                print(f"| {name}, {at:g} s | {fingers[p]} ({len(sel)}) | {fn:.3f} | {pen * 1e3:.3f} | {delta * 1e3:.3f} | "
                      f"{pen / delta:.2f} |")


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
    """0.5 N of a sphere (R 10 mm) along its contact normal at angle θ around the index finger
    from the pad normal (distal +y toward +x, at z = −12 mm), read as the producer reads it
    without images (`tests/sensing_helpers.edge_sweep`): the taxels' sensed share of the load,
    the largest taxel's, the taxels above 5 % of the peak and whether the active-pad mask keeps
    the contact; then the largest change between 1° steps and the share where the mask drops it."""
    _, sh = _helpers()
    rows = sh.edge_sweep(sh.EDGE_ANGLES)
    shown = [0, 30, 50] + list(range(60, 101, 2)) + [105, 110, 115, 120]
    print("| angle [deg] | sensed share | largest taxel / load | taxels > 5 % of peak | mask keeps it |")
    print("|---:|---:|---:|---:|---|")
    for deg in shown:
        sensed, largest, count, kept, _ = rows[deg]
        print(f"| {deg} | {sensed:.3f} | {largest:.3f} | {int(count)} | {'yes' if kept else 'no'} |")
    steps = np.abs(np.diff(rows[:, 0]))
    cut = int(sh.EDGE_ANGLES[rows[:, 3] > 0].max())
    print(f"\nlargest change of the sensed share between 1° steps: {steps.max():.3f} of the load "
          f"(at {int(sh.EDGE_ANGLES[steps.argmax()])}°); the mask keeps the contact up to {cut}°, where "
          f"the taxels read {rows[cut, 0]:.3f} of it; max |taxels + unsensed − F| = {rows[:, 4].max():.1e} N")


PITCHES = (4.0e-3, 3.5e-3, 2.5e-3, 1.5e-3, 1.0e-3, 0.5e-3)
SHIFTS = 4  # positions per axis of an ideal array over one pitch (SHIFTS² placements)


def pitch_table() -> None:
    """The footprint criterion's slopes (taxels above 5 % of the peak, second moment m2) as an
    ideal sensor reads the model's own continuous sensing-plane field: square taxels of side
    `PITCHES` tiling the unrolled pad, each integrating the whole field on its cell, over SHIFTS²
    placements of the array; and on the hardware's layout (every sensing-plane point to its
    nearest taxel) against the published taxels. Ratios: slope / the continuous field's slope
    (area above 5 % of its peak pressure, m2). Not the plate: this field is built from the image
    field, which folds the rim's load into its border pixels, and the plate's face passes the
    pad's edges."""
    cmh, sh = _helpers()
    from wuji_tactile_device.producers.sim.taxels import pad_taxels
    pos = pad_taxels(SIDE)[cmh.INDEX].positions
    print("| case | pitch [mm] | count ratio, mean over placements | per placement | "
          "m2 ratio, mean over placements | per placement |")
    print("|---|---:|---:|---|---:|---|")
    layout = []
    for kind, radius in CASES:
        if kind == "plate":
            continue
        sim, g = cmh.object_on_index_pad(kind, radius=radius)
        fields, published = [], []
        for F in LOADS:
            fields.append(sh.continuous_field(sh.index_taxels(sim, g, F)[1]))
            published.append(sh.published_taxels(sim, g, F))
        area, m2 = np.array([sh.field_area_and_m2(*f) for f in fields]).T
        s_area, s_m2 = sh.slope(LOADS, area), sh.slope(LOADS, m2)
        name = f"{kind} R {radius * 1e3:g} mm"
        for pitch in PITCHES:
            shifts = [(a * pitch / SHIFTS, b * pitch / SHIFTS) for a in range(SHIFTS) for b in range(SHIFTS)]
            st = np.array([[sh.square_cells(y, fy, pitch, o) for o in shifts] for y, fy, _ in fields])  # (L, S, 2)
            rc = np.array([sh.slope(LOADS, st[:, k, 0]) for k in range(len(shifts))]) / s_area
            rm = np.array([sh.slope(LOADS, st[:, k, 1]) for k in range(len(shifts))]) / s_m2
            print(f"| {name} | {pitch * 1e3:g} | {sh.slope(LOADS, st[:, :, 0].mean(axis=1)) / s_area:.2f} | "
                  f"{rc.min():.2f}–{rc.max():.2f} | {sh.slope(LOADS, st[:, :, 1].mean(axis=1)) / s_m2:.2f} | "
                  f"{rm.min():.2f}–{rm.max():.2f} |")
        vor = [sh.voronoi_taxels(y, fy) for y, fy, _ in fields]
        stats = [[(int(np.sum(t > 0.05 * t.max())), sh.second_moment(pos, np.maximum(t, 0))) for t in ts]
                 for ts in (vor, published)]
        (cv, mv), (cp, mp) = (np.array(x).T for x in stats)
        layout.append((name, cv, cp, sh.slope(LOADS, cv) / s_area, sh.slope(LOADS, cp) / s_area,
                       sh.slope(LOADS, mv) / s_m2, sh.slope(LOADS, mp) / s_m2))
    print()
    print("| case | taxels > 5 %: ideal on the layout / published | count ratio ideal / published | "
          "m2 ratio ideal / published |")
    print("|---|---|---:|---:|")
    for name, cv, cp, rcv, rcp, rmv, rmp in layout:
        print(f"| {name} | {' '.join(str(int(c)) for c in cv)} / {' '.join(str(int(c)) for c in cp)} | "
              f"{rcv:.2f} / {rcp:.2f} | {rmv:.2f} / {rmp:.2f} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table", choices=["penetration", "footprint", "continuity", "slip", "cone", "edge", "pitch"])
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
    elif a.table == "pitch":
        pitch_table()
    else:
        slip_table()
    return 0


if __name__ == "__main__":
    sys.exit(main())
