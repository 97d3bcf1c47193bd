"""Pictures: pad resultants (physics: rotation into the pad frame, conservation), the three
figures' panels and labels, and the PNG files written from a real MCAP recording."""
from __future__ import annotations

import dataclasses

import matplotlib

matplotlib.use("Agg")

import matplotlib.image
import matplotlib.pyplot as plt
import numpy as np
import pytest

from retargeting_helpers import CurvedPadLayout, press_profile, record_synthetic
from wuji_tactile_device.errors import DataLayoutError, RecordingError, TactileError
from wuji_tactile_device.contract import HandJoint
from wuji_tactile_device.contract.pads import FINGERS, pad_layout, pad_resultants
from wuji_tactile_device.plot import (load_recording, plot_layout, plot_recording, plot_resultants,
                                      plot_taxel_maps)


@pytest.fixture(scope="module")
def layout():
    return CurvedPadLayout(per_pad=9)


@pytest.fixture(scope="module")
def recording(tmp_path_factory, layout):
    path = tmp_path_factory.mktemp("rec") / "press.mcap"
    forces = press_profile(layout, frames=101)
    record_synthetic(path, layout, forces)
    return path, forces


def test_pad_resultants_rotate_into_the_pad_frame_and_conserve_force(layout):
    """A force F given in the pad frame to every taxel (in taxel axes: R_local⁻¹ F) sums to
    per_pad · F in the pad frame, although the raw taxel-axis sum differs (curved pad)."""
    rng = np.random.default_rng(3)
    pad_f = rng.normal(size=(5, 3))
    taxel_f = np.einsum("nji,nj->ni", layout.local_m[:, :3, :3], pad_f[layout.seg_of])
    res = pad_resultants(pad_layout(layout.metadata), taxel_f)
    np.testing.assert_allclose(res, layout.per_pad * pad_f, atol=1e-5)
    raw = np.stack([taxel_f[layout.seg_of == p].sum(axis=0) for p in range(5)])
    assert np.abs(raw - layout.per_pad * pad_f).max() > 0.1  # the rotation matters
    # Vectorised over time: (T, N, 3) → (T, 5, 3), each frame independent.
    stacked = pad_resultants(pad_layout(layout.metadata), np.stack([taxel_f, 2 * taxel_f]))
    np.testing.assert_allclose(stacked[1], 2 * stacked[0], atol=1e-5)


def test_pad_layout_refuses_a_taxel_off_the_fingers(layout):
    md = layout.metadata
    joint_ids = (HandJoint.WRIST,) + md.joint_ids[1:]
    poses = md.segment_bind_poses.copy()
    poses[0] = [0, 0, 0, 0, 0, 0, 1]
    bad = dataclasses.replace(md, joint_ids=joint_ids, segment_bind_poses=poses)
    with pytest.raises(DataLayoutError, match=r"taxel 0 is attached to segment 0 \(WRIST\)"):
        pad_layout(bad)


def test_resultant_figure_has_15_labelled_panels():
    t = np.linspace(0, 1, 11)
    res = np.zeros((11, 5, 3))
    res[:, 1, 1] = np.sin(t)
    fig = plot_resultants(t, res, title="x")
    axes = fig.axes
    assert len(axes) == 15
    assert [ax.get_title() for ax in axes[:3]] == ["thumb Fx", "thumb Fy", "thumb Fz"]
    assert axes[-1].get_title() == "pinky Fz"
    assert all("[N]" in axes[3 * p].get_ylabel() and FINGERS[p] in axes[3 * p].get_ylabel() for p in range(5))
    assert "[s]" in axes[-1].get_xlabel()
    assert "pad frame" in fig._suptitle.get_text()
    np.testing.assert_allclose(axes[4].lines[0].get_ydata(), np.sin(t))  # index Fy row/column
    plt.close(fig)


def test_resultant_figure_draws_the_magnitude_labels_every_line_and_shares_y_per_row():
    """|F| is drawn in every panel; every line has a label in the figure legend; a pad's three
    panels share one y-scale (a 0.01 N tangential blip is drawn at the scale of its 0.5 N load),
    rows are independent; `share="all"` gives one scale; the sign convention is in the title."""
    t = np.linspace(0, 2, 201)
    res = np.zeros((201, 5, 3))
    res[:, 0, 1] = 0.5  # thumb: 0.5 N normal (pad +y)
    res[100:110, 0, 0] = 0.01  # and a 0.01 N tangential blip
    res[:, 2, 1] = 0.05  # middle: light contact
    fig = plot_resultants(t, res, mark_time_s=1.0)
    axes = np.array(fig.axes).reshape(5, 3)
    np.testing.assert_allclose(axes[0, 0].lines[1].get_ydata(), np.linalg.norm(res[:, 0], axis=1))
    assert axes[0, 0].get_ylim() == axes[0, 1].get_ylim() == axes[0, 2].get_ylim()
    assert axes[0, 0].get_ylim()[1] >= 0.5 and axes[2, 0].get_ylim()[1] < 0.1
    for ax in axes.ravel():
        assert all(line.get_label() and not line.get_label().startswith("_") for line in ax.lines)
    legend = fig.legends[0]
    texts = [x.get_text() for x in legend.get_texts()]
    assert texts == ["Fx (pad frame)", "Fy (pad frame)", "Fz (pad frame)", "|F| of the pad", "0 N",
                     "t = 1.000 s (taxel maps, layout)"]
    assert "pressing a fingertip pad gives Fy > 0" in fig._suptitle.get_text()
    # A pad without load gets a readable scale and says so (not float noise blown up to ±1e-17).
    assert axes[4, 0].get_ylim() == (-0.01, 0.01)
    assert any("no load" in txt.get_text() for txt in axes[4, 1].texts)
    shared = plot_resultants(t, res, share="all")
    assert len({ax.get_ylim() for ax in shared.axes}) == 1
    with pytest.raises(ValueError, match="share must be one of"):
        plot_resultants(t, res, share="col")


def test_taxel_map_figure_uses_one_fixed_symmetric_range(layout):
    forces = press_profile(layout, frames=11)[5]
    pl = pad_layout(layout.metadata)
    fig = plot_taxel_maps(pl, forces, vmax=2.5)
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert len(panels) == 20
    assert {ax.get_title() for ax in panels} == {f"{f} {c}" for f in FINGERS for c in ("|f|", "Fx", "Fy", "Fz")}
    assert all(ax.collections[0].get_clim() == (-2.5, 2.5) for ax in panels if " F" in ax.get_title())
    assert all(ax.collections[0].get_clim() == (0.0, 2.5) for ax in panels if "|f|" in ax.get_title())
    colorbar = [ax for ax in fig.axes if "pad frame [N]" in ax.get_ylabel()]
    assert len(colorbar) == 1
    # Index Fz: the taxel forces rotated into the pad frame (one convention with the resultants).
    index_fz = next(ax for ax in panels if ax.get_title() == "index Fz")
    pad_f = np.einsum("nij,nj->ni", pl.taxel_to_pad, forces.astype(np.float64))
    np.testing.assert_allclose(index_fz.collections[0].get_array(), pad_f[layout.seg_of == 1, 2], rtol=1e-6)
    plt.close(fig)


def test_taxel_maps_add_up_to_the_pad_resultants(layout):
    """The one sign convention makes the pictures agree: Σ of a pad's Fx/Fy/Fz map values is the
    resultant the resultant figure plots for that pad at that time."""
    forces = press_profile(layout, frames=11)[7]
    pl = pad_layout(layout.metadata)
    fig = plot_taxel_maps(pl, forces)
    want = pad_resultants(pl, forces)
    for p, finger in enumerate(FINGERS):
        for c, comp in enumerate(("Fx", "Fy", "Fz")):
            ax = next(a for a in fig.axes if a.get_title() == f"{finger} {comp}")
            assert np.nansum(ax.collections[0].get_array().filled(np.nan)) == pytest.approx(want[p, c], abs=1e-5)


def test_taxel_map_range_is_per_figure_so_a_light_contact_shows(layout, tmp_path):
    """Regression: a recording-wide range made a 0.05 N contact invisible next to a later 5 N
    press. Now the default range is the largest |f| at the chosen time; --range fixes it."""
    from wuji_tactile_device.plot import recording_figures

    forces = np.zeros((300, layout.num_taxels, 3), np.float32)
    light = np.flatnonzero(layout.seg_of == 1)[:2]
    forces[:100, light, 2] = -0.025  # 0.05 N over two taxels
    forces[150:, layout.seg_of == 1, 2] = -5.0 / layout.per_pad
    path = tmp_path / "light.mcap"
    record_synthetic(path, layout, forces)
    rec = load_recording(path)
    fig = recording_figures(rec, "light.mcap", time_s=0.5)["taxel_maps"]()
    index_f = next(ax for ax in fig.axes if ax.get_title() == "index |f|")
    assert index_f.collections[0].get_clim() == pytest.approx((0.0, 0.025))
    values = index_f.collections[0].get_array()
    assert values.max() == pytest.approx(0.025)  # the loaded taxels sit at the top of the scale
    fixed = recording_figures(rec, "light.mcap", time_s=0.5, vmax=5.0)["taxel_maps"]()
    assert next(ax for ax in fixed.axes if ax.get_title() == "index |f|").collections[0].get_clim() == (0.0, 5.0)
    whole = recording_figures(rec, "light.mcap", time_s=0.5, vmax="recording")["taxel_maps"]()
    clim = next(ax for ax in whole.axes if ax.get_title() == "index |f|").collections[0].get_clim()
    assert clim[1] == pytest.approx(5.0 / layout.per_pad, rel=1e-3)
    # Regression: any other string went on to matplotlib as the colour range.
    with pytest.raises(ValueError, match="vmax must be a number \\[N\\], None or 'recording', got 'whole'"):
        recording_figures(rec, "light.mcap", time_s=0.5, vmax="whole")


def test_layout_figure_draws_loaded_taxels_on_top_at_the_given_pose(layout):
    forces = press_profile(layout, frames=11)[5]
    fig = plot_layout(layout.metadata, forces, vmax=1.0)
    palm, side = fig.axes[:2]
    assert "wrist frame" in palm.get_xlabel() and "[mm]" in palm.get_ylabel()
    magnitude = np.linalg.norm(forces.astype(np.float64), axis=1)
    drawn = palm.collections[0].get_array().filled(0.0)
    np.testing.assert_allclose(drawn, np.sort(magnitude), rtol=1e-6)  # increasing: loaded drawn last
    assert any("|f|" in ax.get_ylabel() for ax in fig.axes[2:])
    assert "bind pose" in fig._suptitle.get_text()
    # A moved segment moves its taxels: the index segment shifted 10 mm along the wrist x axis.
    poses = layout.metadata.segment_bind_poses.astype(np.float64).copy()
    poses[1, 0] += 0.010
    moved = plot_layout(layout.metadata, forces, vmax=1.0, segment_poses=poses)
    order = np.argsort(magnitude, kind="stable")
    before = palm.collections[0].get_offsets()
    after = moved.axes[0].collections[0].get_offsets()
    shift = (after - before)[:, 0]
    np.testing.assert_allclose(shift[layout.seg_of[order] == 1], 10.0, atol=1e-4)
    np.testing.assert_allclose(shift[layout.seg_of[order] != 1], 0.0, atol=1e-9)
    assert "the hand's pose" in moved._suptitle.get_text()


def test_unrolled_pad_maps_keep_every_sim_taxel_apart():
    """On the simulated hand's curved pads no two taxels land on the same map spot: the smallest
    2-D distance is at least 60 % of the smallest 3-D distance between taxels of that pad."""
    from wuji_tactile_device.plot import unrolled_positions
    from wuji_tactile_device.producers.sim.layout_metadata import sim_metadata

    pl = pad_layout(sim_metadata("right"))
    uv = unrolled_positions(pl)
    for p in range(5):
        m = pl.pad_of_taxel == p
        d2 = np.linalg.norm(uv[m][:, None] - uv[m][None], axis=2)
        d3 = np.linalg.norm(pl.taxel_pad_positions[m][:, None] - pl.taxel_pad_positions[m][None], axis=2) * 1e3
        off = ~np.eye(m.sum(), dtype=bool)
        assert d2[off].min() >= 0.6 * d3[off].min(), FINGERS[p]


def test_plot_leaves_the_matplotlib_backend_alone(recording, tmp_path):
    """Regression: plotting forced the Agg backend on the whole process (an application's
    interactive backend was switched under it)."""
    path, _ = recording
    matplotlib.use("svg")
    try:
        plot_recording(path, tmp_path)
        assert matplotlib.get_backend() == "svg"
    finally:
        matplotlib.use("Agg")


def test_plot_refuses_a_missing_file_before_any_progress_output(tmp_path, capsys):
    with pytest.raises(RecordingError, match=r"nothere.mcap: no such file"):
        plot_recording(tmp_path / "nothere.mcap", tmp_path, progress=True)
    assert capsys.readouterr().err == ""


def test_load_recording_returns_every_frame_in_order(recording, layout):
    path, forces = recording
    rec = load_recording(path)
    assert rec.collection_id == "tactile/right"
    assert rec.metadata == layout.metadata
    np.testing.assert_array_equal(rec.forces, forces)
    np.testing.assert_allclose(rec.times_s, np.arange(len(forces)) * 0.01, atol=1e-9)


def test_plot_recording_writes_three_png(recording, tmp_path):
    path, _ = recording
    outputs = plot_recording(path, tmp_path / "png")
    assert [p.name for p in outputs] == ["press_resultants.png", "press_taxel_maps.png", "press_layout.png"]
    for p in outputs:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        image = matplotlib.image.imread(p)
        assert image.shape[0] >= 800 and image.shape[1] >= 900
        assert image[..., :3].std() > 0.05, f"{p.name} looks blank"


def test_plot_recording_refuses_bad_time_and_ambiguous_collection(recording, tmp_path, layout):
    path, _ = recording
    with pytest.raises(TactileError, match=r"time 5.0 s is outside the recording of 'tactile/right' \(0.000 … 1.000 s"):
        plot_recording(path, tmp_path, time_s=5.0)
    two = tmp_path / "two.mcap"
    from wuji_tactile_device.recording import McapRecorder
    from wuji_tactile_device.streams.inproc import InProcessBus

    bus = InProcessBus()
    with McapRecorder(two) as recorder:
        forces = press_profile(layout, frames=3)
        record_synthetic(two, layout, forces, collection_id="tactile/left", bus=bus, recorder=recorder)
        record_synthetic(two, layout, forces, collection_id="tactile/right", bus=bus, recorder=recorder)
    with pytest.raises(RecordingError, match="holds 2 collections .*tactile/left, tactile/right.*--collection"):
        plot_recording(two, tmp_path)
    assert len(plot_recording(two, tmp_path, collection_id="tactile/left")) == 3
    with pytest.raises(RecordingError, match="no collection 'tactile/x'"):
        plot_recording(two, tmp_path, collection_id="tactile/x")


def test_default_time_is_the_sustained_peak_not_a_spike(layout):
    """A 3-frame 10 N impact must not be chosen over a 1 s plateau at 2 N."""
    from wuji_tactile_device.plot import Recording, frame_index_at

    forces = np.zeros((300, layout.num_taxels, 3), np.float32)
    forces[20:23, layout.seg_of == 0, 2] = -10.0 / layout.per_pad
    forces[150:250, layout.seg_of == 1, 2] = -2.0 / layout.per_pad
    rec = Recording("tactile/right", layout.metadata, np.arange(300) * 0.01, forces, 0)
    k = frame_index_at(rec, None)
    assert 150 <= k < 250
    assert frame_index_at(rec, 0.205) == 20  # an explicit time: the nearest frame


def test_colour_range_ignores_rare_outliers():
    from wuji_tactile_device.plot import colour_range

    values = np.concatenate([np.linspace(-0.4, 0.4, 10_000), [25.0]])
    assert 0.39 < colour_range(values) < 0.41
    assert colour_range(np.zeros(10)) == 1.0


def test_pad_resultants_of_the_simulated_press_hold_at_the_target(sim_press_run):
    """Physics cross-check against the simulation: its press scenario holds every pad at 0.5 N
    (its own check, from contact forces). Rebuilding each pad's resultant from the 176 recorded
    taxel forces and the bind rotations must give the same 0.5 N, and zero after release."""
    path, result = sim_press_run  # `wuji-tactile sim --scenario press --record press.mcap`, once a session
    assert result.returncode == 0, result.stderr
    rec = load_recording(path)
    magnitude = np.linalg.norm(pad_resultants(pad_layout(rec.metadata), rec.forces), axis=2)  # (T, 5)
    hold = (rec.times_s >= 7.0) & (rec.times_s <= 10.5)
    assert np.abs(magnitude[hold] - 0.5).max() <= 0.011
    assert np.all(magnitude[rec.times_s >= 12.0] == 0.0)
