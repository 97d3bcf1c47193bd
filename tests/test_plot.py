"""Pictures: pad resultants (physics: rotation into the pad frame, conservation), the three
figures' panels and labels, and the PNG files written from a real MCAP recording."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.image  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from retargeting_helpers import CurvedPadLayout, press_profile, record_synthetic  # noqa: E402
from wuji_tactile_device.errors import DataLayoutError, RecordingError, TactileError  # noqa: E402
from wuji_tactile_device.contract import HandJoint  # noqa: E402
from wuji_tactile_device.contract import TactileMetadata  # noqa: E402
from wuji_tactile_device.contract.pads import FINGERS, pad_layout, pad_resultants  # noqa: E402
from wuji_tactile_device.plot import (load_recording, plot_layout, plot_recording, plot_resultants,  # noqa: E402
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
    bad = TactileMetadata(joint_ids, poses, md.taxel_bind_poses, md.segment_indices, md.segment_weights)
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


def test_taxel_map_figure_uses_one_fixed_symmetric_range(layout):
    forces = press_profile(layout, frames=11)[5]
    fig = plot_taxel_maps(pad_layout(layout.metadata), forces, vmax=2.5)
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert len(panels) == 15
    assert {ax.get_title().split(" (")[0] for ax in panels} == {f"{f} {c}" for f in FINGERS for c in ("fx", "fy", "fz")}
    assert all(ax.collections[0].get_clim() == (-2.5, 2.5) for ax in panels)
    colorbar = [ax for ax in fig.axes if "taxel axes [N]" in ax.get_ylabel()]
    assert len(colorbar) == 1
    index_fz = next(ax for ax in panels if ax.get_title().startswith("index fz"))
    np.testing.assert_allclose(index_fz.collections[0].get_array(), forces[layout.seg_of == 1, 2])
    plt.close(fig)


def test_layout_figure_is_a_3d_scatter_in_the_wrist_frame(layout):
    forces = press_profile(layout, frames=11)[5]
    fig = plot_layout(layout.metadata, forces, vmax=1.0)
    ax3d = fig.axes[0]
    assert ax3d.name == "3d"
    assert "wrist frame" in ax3d.get_xlabel() and "[mm]" in ax3d.get_zlabel()
    np.testing.assert_allclose(ax3d.collections[0].get_array(), np.linalg.norm(forces, axis=1), rtol=1e-6)
    assert any("|f|" in ax.get_ylabel() for ax in fig.axes[1:])
    plt.close(fig)


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


def test_pad_resultants_of_the_simulated_press_hold_at_the_target(tmp_path):
    """Physics cross-check against the simulation: its press scenario holds every pad at 0.5 N
    (its own check, from contact forces). Rebuilding each pad's resultant from the 176 recorded
    taxel forces and the bind rotations must give the same 0.5 N, and zero after release."""
    import subprocess
    import sys
    from pathlib import Path

    path = tmp_path / "press.mcap"
    script = Path(sys.executable).parent / "wuji-tactile"
    result = subprocess.run([str(script), "sim", "--scenario", "press", "--record", str(path), "--quiet"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    rec = load_recording(path)
    magnitude = np.linalg.norm(pad_resultants(pad_layout(rec.metadata), rec.forces), axis=2)  # (T, 5)
    hold = (rec.times_s >= 7.0) & (rec.times_s <= 10.5)
    assert np.abs(magnitude[hold] - 0.5).max() <= 0.011
    assert np.all(magnitude[rec.times_s >= 12.0] == 0.0)
