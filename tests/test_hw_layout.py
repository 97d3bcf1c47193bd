"""Device placement → contract taxel frames through the axis/sign mapping, checked against
hand-worked rotations; metadata shape shared with the simulation."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from wuji_tactile_device.errors import ProducerError
from wuji_tactile_device.contract.geometry import quat_to_matrix
from wuji_tactile_device.producers.hardware.format import build_format, parse_format
from wuji_tactile_device.producers.hardware.format import Mounting
from wuji_tactile_device.producers.hardware.layout_metadata import (DEFAULT_AXIS_MAPPING, AxisMapping,
                                                                    device_taxel_poses, hardware_metadata)
from wuji_tactile_device.producers.sim.taxels import taxel_poses_in_distal
from wuji_tactile_device.hands.wuji_hand2 import FINGERS, lbs_metadata

H = math.pi / 2


def one_point_format(**kw):
    mounting = Mounting(np.array([[0.0, 0.0, H]]), np.array([0.0, 0.008, -0.015]), np.array([H, 0.0, 0.0]))
    return parse_format("index", json.dumps(build_format(point_count=1, positions=np.array([[0.001, 0.002, 0.0]]),
                                                         mounting=mounting, **kw)))


def test_position_and_axes_by_hand():
    # R(base_rpy) = Rx(90°): (x, y, z) → (x, −z, y); point axes R_base·Rz(90°)
    pose = device_taxel_poses(one_point_format(), DEFAULT_AXIS_MAPPING)[0]
    np.testing.assert_allclose(pose[:3], [0.001, 0.008 + 0.0, -0.015 + 0.002], atol=1e-15)
    R = quat_to_matrix(pose[3:])
    np.testing.assert_allclose(R[:, 0], [0, 0, 1], atol=1e-12)   # device x_p = Rx90·(0,1,0)
    np.testing.assert_allclose(R[:, 1], [-1, 0, 0], atol=1e-12)  # device y_p = Rx90·(−1,0,0)
    np.testing.assert_allclose(R[:, 2], [0, -1, 0], atol=1e-12)  # device z_p = Rx90·(0,0,1)


def test_mapping_permutes_and_signs_the_taxel_axes():
    mapping = AxisMapping(("+y", "-x", "+z"))
    R = quat_to_matrix(device_taxel_poses(one_point_format(), mapping)[0, 3:])
    np.testing.assert_allclose(R[:, 0], [-1, 0, 0], atol=1e-12)  # contract X = device +y
    np.testing.assert_allclose(R[:, 1], [0, 0, -1], atol=1e-12)  # contract Y = device −x
    np.testing.assert_allclose(R[:, 2], [0, -1, 0], atol=1e-12)


def test_default_mapping_turns_a_positive_device_normal_reading_into_a_press():
    # the normalized firmware reports a press as fz in 0..1; the contract wants fz < 0
    f_contract = DEFAULT_AXIS_MAPPING.force_matrix @ np.array([0.1, -0.2, 0.7])
    np.testing.assert_array_equal(f_contract, [-0.1, 0.2, -0.7])
    flipped = AxisMapping(("-x", "-y", "+z"), force_sign=1).force_matrix @ np.array([0.1, -0.2, 0.7])
    np.testing.assert_array_equal(flipped, [-0.1, 0.2, 0.7])


@pytest.mark.parametrize("axes,message", [
    (("+x", "+y", "-z"), "is a reflection"),
    (("+x", "+x", "+z"), "must use each device axis x, y, z once"),
    (("x", "+y", "+z"), "use a sign and a device axis"),
    (("+x", "+y"), "needs 3 axes"),
])
def test_bad_mappings_are_refused(axes, message):
    with pytest.raises(ProducerError, match=message):
        AxisMapping(axes)


def test_force_sign_must_be_unit_and_cli_form_parses():
    with pytest.raises(ProducerError, match="force_sign must be"):
        AxisMapping(force_sign=2)
    assert AxisMapping.parse(" +y, -x ,+z", 1) == AxisMapping(("+y", "-x", "+z"), 1)


def _sim_formats(side, with_placement):
    from wuji_tactile_device.producers.emulated import EmulatedHand2
    emu = EmulatedHand2(side, mounting=with_placement, positions=with_placement)
    return {f: parse_format(f, emu.pad(f).format_text) for f in FINGERS}


@pytest.mark.parametrize("side", ["right", "left"])
def test_metadata_shape_equals_the_simulations(side):
    md, sources = hardware_metadata(side, _sim_formats(side, True))
    sim = lbs_metadata(side, taxel_poses_in_distal(side))
    assert sources == {f: "device" for f in FINGERS}
    assert md.num_taxels == 176 and md.joint_ids == sim.joint_ids
    np.testing.assert_array_equal(md.segment_weights, sim.segment_weights)
    np.testing.assert_allclose(md.taxel_bind_poses[:, :3], sim.taxel_bind_poses[:, :3], atol=1e-7)


def test_left_and_right_pads_mirror_in_their_wrist_frames():
    right, _ = hardware_metadata("right", _sim_formats("right", True))
    left, _ = hardware_metadata("left", _sim_formats("left", True))
    # OpenXR: right +X to the little finger, left +X to the thumb: x flips, y and z agree
    np.testing.assert_allclose(left.taxel_bind_poses[:, 0], -right.taxel_bind_poses[:, 0], atol=1e-6)
    np.testing.assert_allclose(left.taxel_bind_poses[:, 1:3], right.taxel_bind_poses[:, 1:3], atol=1e-6)


def test_fallback_layout_must_match_the_device_point_count():
    formats = _sim_formats("right", False)
    layout = dict(zip(FINGERS, taxel_poses_in_distal("right"), strict=True))
    layout["pinky"] = layout["pinky"][:30]
    with pytest.raises(ProducerError, match="pinky: simulation layout has 30 taxels but the device declares point_count 34"):
        hardware_metadata("right", formats, fallback_layout=layout, fallback_name="simulation layout")
