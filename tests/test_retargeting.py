"""Isaac Teleop retargeting nodes: TactileSource, TaxelSkinning, PadForceMagnitude, in real graphs
of the installed engine (`isaacteleop`, no XR runtime), fed by a real publisher → bus → tracker."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("isaacteleop", reason="the isaacteleop extra is not installed")

from isaacteleop.retargeters.tactile_retargeters import TactileVectorToFingerPower
from isaacteleop.retargeting_engine.interface import TensorGroup, ValueInput
from isaacteleop.retargeting_engine.tensor_types import HandInput

from retargeting_helpers import DISTAL, CurvedPadLayout, homogeneous, pose_of, rot
from wuji_tactile_device.contract import geometry
from wuji_tactile_device.errors import DataLayoutError, TactileError
from wuji_tactile_device.contract import HandJoint
from wuji_tactile_device.streams.publisher import TactilePublisher
from wuji_tactile_device.integrations.isaacteleop import (PadForceMagnitude, TactileLayoutIndex, TactileSource,
                                             TaxelSkinning)
from wuji_tactile_device.streams.tracker import TactileTracker
from wuji_tactile_device.streams.inproc import InProcessBus

CID = "tactile/right"


@pytest.fixture
def layout():
    return CurvedPadLayout(per_pad=6)


def _frame(n: int, k: int) -> np.ndarray:
    rng = np.random.default_rng(k)
    return rng.normal(0.0, 0.5, size=(n, 3)).astype(np.float32)


# ---------------------------------------------------------------------------------------------
# TactileSource
# ---------------------------------------------------------------------------------------------

def test_source_outputs_absent_before_metadata_then_equal_the_trackers(layout):
    bus = InProcessBus()
    source = TactileSource("tactile", CID, 5, layout.num_taxels, source=bus)

    out = source.execute_pipeline({})
    assert out[TactileSource.TAXEL_FORCES].is_none
    assert out[TactileSource.TACTILE_LAYOUT].is_none

    publisher = TactilePublisher(CID, layout.metadata, bus)  # publishes the metadata at start
    out = source.execute_pipeline({})
    assert out[TactileSource.TAXEL_FORCES].is_none, "no frame yet: forces stay absent"
    lay = out[TactileSource.TACTILE_LAYOUT]
    assert not lay.is_none
    md = layout.metadata
    assert lay[TactileLayoutIndex.SEGMENT_JOINT_IDS].tolist() == [int(j) for j in DISTAL]
    np.testing.assert_array_equal(lay[TactileLayoutIndex.SEGMENT_BIND_POSES], md.segment_bind_poses)
    np.testing.assert_array_equal(lay[TactileLayoutIndex.TAXEL_BIND_POSES], md.taxel_bind_poses)
    np.testing.assert_array_equal(lay[TactileLayoutIndex.SEGMENT_INDICES], md.segment_indices)
    np.testing.assert_array_equal(lay[TactileLayoutIndex.SEGMENT_WEIGHTS], md.segment_weights)

    for k in range(3):
        publisher.publish(_frame(layout.num_taxels, k), sample_time_ns=1_000 + k)
        out = source.execute_pipeline({})
        forces = out[TactileSource.TAXEL_FORCES][0]
        tracked = source.get_tracker().get_data()
        assert forces.shape == (layout.num_taxels, 3) and forces.dtype == np.float32
        np.testing.assert_array_equal(forces, tracked.forces)
        np.testing.assert_array_equal(forces, _frame(layout.num_taxels, k))
        assert tracked.timestamp.sample_time_local_common_clock == 1_000 + k
    publisher.close()


def test_source_replay_stepping_emits_each_frame_once_in_order_then_absent(layout):
    """step="replay": one recorded frame per graph run (Isaac Teleop's ReplaySession advances one
    record per update), never the newest-only of live stepping; absent once all were emitted."""
    bus = InProcessBus()
    tracker = TactileTracker(CID, bus)
    source = TactileSource("tactile", CID, 5, layout.num_taxels, tracker=tracker, step="replay")
    with TactilePublisher(CID, layout.metadata, bus) as publisher:
        for k in range(5):
            publisher.publish(_frame(layout.num_taxels, k), sample_time_ns=k)
    seen = []
    for k in range(5):
        out = source.execute_pipeline({})
        np.testing.assert_array_equal(out[TactileSource.TAXEL_FORCES][0], _frame(layout.num_taxels, k))
        seen.append(source.last_frame.timestamp.sample_time_local_common_clock)
    assert seen == [0, 1, 2, 3, 4]
    out = source.execute_pipeline({})
    assert out[TactileSource.TAXEL_FORCES].is_none and not out[TactileSource.TACTILE_LAYOUT].is_none


def test_source_count_mismatch_names_both_counts(layout):
    bus = InProcessBus()
    source = TactileSource("tactile", CID, 5, 176, source=bus)
    TactilePublisher(CID, layout.metadata, bus)
    with pytest.raises(DataLayoutError) as info:
        source.execute_pipeline({})
    message = str(info.value)
    assert "num_taxels=176" in message and f"num_taxels={layout.num_taxels}" in message
    assert CID in message and "'tactile'" in message


def test_source_constructor_refuses_bad_arguments():
    bus = InProcessBus()
    with pytest.raises(ValueError, match="num_taxels must be a positive int"):
        TactileSource("t", CID, 5, 0, source=bus)
    with pytest.raises(TypeError, match="at most one of source= .* or tracker="):
        TactileSource("t", CID, 5, 30, source=bus, tracker=TactileTracker(CID, bus))
    with pytest.raises(ValueError, match="step must be one of"):
        TactileSource("t", CID, 5, 30, source=bus, step="fast")
    with pytest.raises(TactileError, match="reads collection 'tactile/left'"):
        TactileSource("t", CID, 5, 30, tracker=TactileTracker("tactile/left", bus))


def test_import_without_isaacteleop_names_the_extra():
    code = ("import sys; sys.modules['isaacteleop'] = None\n"
            "import wuji_tactile_device, wuji_tactile_device.plot\n"
            "try:\n    import wuji_tactile_device.integrations.isaacteleop\n"
            "except ImportError as e:\n"
            "    from wuji_tactile_device.errors import TactileError\n"
            "    assert isinstance(e, TactileError)\n    print(e)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "pip install 'wuji-tactile-device[isaacteleop]'" in result.stdout


# ---------------------------------------------------------------------------------------------
# PadForceMagnitude → Isaac Teleop's TactileVectorToFingerPower
# ---------------------------------------------------------------------------------------------

def test_pad_force_magnitude_is_the_norm_of_each_pads_resultant(layout):
    """Give every taxel of pad p the same force F_p expressed in the pad (segment) frame; in taxel
    axes that is R_local⁻¹ F_p. The pad's resultant is per_pad · F_p, whatever the curvature."""
    pad_forces = np.array([[0.0, 1.0, 0.0], [0.2, 0.5, -0.1], [0.0, 0.0, 0.0],
                           [-0.3, 0.8, 0.4], [0.05, 0.1, 0.0]])
    taxel_forces = np.einsum("nji,nj->ni", layout.local_m[:, :3, :3], pad_forces[layout.seg_of])
    bus = InProcessBus()
    source = TactileSource("tactile", CID, 5, layout.num_taxels, source=bus)
    magnitude = PadForceMagnitude("pad_force", 5, layout.num_taxels)
    graph = magnitude.connect({PadForceMagnitude.TAXEL_FORCES: source.output(TactileSource.TAXEL_FORCES),
                               PadForceMagnitude.TACTILE_LAYOUT: source.output(TactileSource.TACTILE_LAYOUT)})
    out = graph.execute_pipeline({})
    np.testing.assert_array_equal(out[PadForceMagnitude.FINGER_FORCE][0], np.zeros(5, np.float32))

    with TactilePublisher(CID, layout.metadata, bus) as publisher:
        publisher.publish(taxel_forces, sample_time_ns=1)
    out = graph.execute_pipeline({})
    expected = layout.per_pad * np.linalg.norm(pad_forces, axis=1)
    np.testing.assert_allclose(out[PadForceMagnitude.FINGER_FORCE][0], expected, rtol=1e-5, atol=1e-6)


def test_graph_into_isaac_teleops_finger_power(layout):
    bus = InProcessBus()
    source = TactileSource("tactile", CID, 5, layout.num_taxels, source=bus)
    magnitude = PadForceMagnitude("pad_force", 5, layout.num_taxels).connect({
        "taxel_forces": source.output("taxel_forces"), "tactile_layout": source.output("tactile_layout")})
    power = TactileVectorToFingerPower("finger_power", num_taxels=5, gain=0.5, deadband=0.2)
    graph = power.connect({"tactile": magnitude.output("finger_force")})
    forces = np.zeros((layout.num_taxels, 3), np.float32)
    forces[layout.seg_of == 1, 2] = -0.5  # index pad: 6 taxels × 0.5 N along each normal
    with TactilePublisher(CID, layout.metadata, bus) as publisher:
        publisher.publish(forces, sample_time_ns=1)
    powers = graph.execute_pipeline({})["powers"][0]
    resultant = np.linalg.norm(np.einsum("nij,nj->ni", layout.local_m[layout.seg_of == 1][:, :3, :3],
                                         forces[layout.seg_of == 1]).sum(axis=0))
    assert resultant < 3.0  # curvature: the normals are not parallel
    expected_index = min(1.0, 0.5 * (resultant - 0.2))
    np.testing.assert_allclose(powers, [0, expected_index, 0, 0, 0], atol=1e-5)


def test_connect_refuses_mismatched_counts(layout):
    source = TactileSource("tactile", CID, 5, layout.num_taxels, source=InProcessBus())
    with pytest.raises(ValueError, match="mismatch"):
        PadForceMagnitude("pad_force", 5, 176).connect({"taxel_forces": source.output("taxel_forces"),
                                                        "tactile_layout": source.output("tactile_layout")})


# ---------------------------------------------------------------------------------------------
# TaxelSkinning
# ---------------------------------------------------------------------------------------------

def _hand_group(joint_m: dict[int, np.ndarray], *, valid: bool = True) -> TensorGroup:
    """A HandInput with the given 4×4 joint poses in base space (others at the wrist)."""
    positions = np.zeros((26, 3), np.float32)
    orientations = np.tile(np.array([0, 0, 0, 1], np.float32), (26, 1))
    for j, m in joint_m.items():
        p = pose_of(m)
        positions[j], orientations[j] = p[:3], p[3:]
    group = TensorGroup(HandInput())
    group[0], group[1] = positions, orientations
    group[2] = np.full(26, 0.01, np.float32)
    valid_flags = np.ones(26, np.uint8)
    if not valid:
        valid_flags[int(HandJoint.WRIST)] = 0
    group[3] = valid_flags
    return group


def _skinning_graph(layout: CurvedPadLayout, bus: InProcessBus):
    source = TactileSource("tactile", CID, 5, layout.num_taxels, source=bus)
    hand = ValueInput("hand", HandInput())
    skin = TaxelSkinning("skin", 5, layout.num_taxels)
    graph = skin.connect({"tactile_layout": source.output("tactile_layout"), "hand": hand.output("value"),
                          "taxel_forces": source.output("taxel_forces")})
    return source, graph


# A wrist rotated and translated in base space, and a bent hand: each distal segment moved from
# its bind pose by its own rotation about a point.
T_BASE_WRIST = homogeneous(rot([0.2, -0.5, 1.0], 2.1), [0.4, -0.25, 1.1])


def _bent(layout: CurvedPadLayout) -> list[np.ndarray]:
    """Current segment poses in the wrist frame (4×4), each a rigid motion of its bind pose."""
    return [homogeneous(rot([1.0, 0.1 * j, 0.0], 0.3 + 0.2 * j), [0.0, 0.01, 0.005 * j]) @ layout.seg_m[j]
            for j in range(len(DISTAL))]


def test_skinning_matches_the_core_lbs_and_rigid_transforms(layout):
    bus = InProcessBus()
    source, graph = _skinning_graph(layout, bus)
    bent = _bent(layout)
    joint_m = {int(HandJoint.WRIST): T_BASE_WRIST}
    joint_m.update({int(j): T_BASE_WRIST @ c for j, c in zip(DISTAL, bent, strict=True)})
    forces = _frame(layout.num_taxels, 7)
    with TactilePublisher(CID, layout.metadata, bus) as publisher:
        publisher.publish(forces, sample_time_ns=1)
    out = graph.execute_pipeline({"hand": {"value": _hand_group(joint_m)}})
    p_wrist = out["taxel_positions_wrist"][0]
    p_base = out["taxel_positions_base"][0]
    f_base = out["taxel_forces_base"][0]

    # 1. The core's LBS on the same (rebased) joint poses.
    base_poses = np.array([pose_of(joint_m[int(j)]) for j in DISTAL], dtype=np.float32)
    current = geometry.rebase_to_root(pose_of(T_BASE_WRIST).astype(np.float32), base_poses)
    np.testing.assert_allclose(p_wrist, geometry.skin_taxel_positions(layout.metadata, current), atol=2e-6)

    # 2. Independent: a rigid taxel follows its segment, T = C · B⁻¹ · T_bind (4×4 matrices).
    moved = np.array([bent[s] @ np.linalg.inv(layout.seg_m[s]) @ layout.taxel_m[n]
                      for n, s in enumerate(layout.seg_of)])
    np.testing.assert_allclose(p_wrist, moved[:, :3, 3], atol=1e-5)
    np.testing.assert_allclose(p_base, (T_BASE_WRIST @ moved)[:, :3, 3], atol=1e-5)
    # Forces rotate with the taxel frame, never translate.
    expected_f = np.einsum("nij,nj->ni", (T_BASE_WRIST @ moved)[:, :3, :3], forces)
    np.testing.assert_allclose(f_base, expected_f, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(f_base, axis=1), np.linalg.norm(forces, axis=1), rtol=1e-5)


def test_skinning_rebases_a_rotated_and_translated_wrist(layout):
    """Hand in its bind configuration, wrist anywhere in base space: the wrist-frame positions are
    the bind positions. Subtracting only the wrist position would rotate them by R_base_wrist."""
    bus = InProcessBus()
    source, graph = _skinning_graph(layout, bus)
    joint_m = {int(HandJoint.WRIST): T_BASE_WRIST}
    joint_m.update({int(j): T_BASE_WRIST @ layout.seg_m[k] for k, j in enumerate(DISTAL)})
    TactilePublisher(CID, layout.metadata, bus)
    out = graph.execute_pipeline({"hand": {"value": _hand_group(joint_m)}})
    bind = layout.taxel_m[:, :3, 3]
    np.testing.assert_allclose(out["taxel_positions_wrist"][0], bind, atol=1e-5)
    np.testing.assert_allclose(out["taxel_positions_base"][0], bind @ T_BASE_WRIST[:3, :3].T + T_BASE_WRIST[:3, 3],
                               atol=1e-5)
    naive = bind @ T_BASE_WRIST[:3, :3].T  # what position-only subtraction would give in the wrist frame
    assert np.abs(naive - bind).max() > 0.01
    assert out["taxel_forces_base"].is_none, "no force frame published yet"


def test_skinning_absent_inputs_and_invalid_wrist(layout):
    bus = InProcessBus()
    source, graph = _skinning_graph(layout, bus)
    joint_m = {int(HandJoint.WRIST): T_BASE_WRIST}
    out = graph.execute_pipeline({"hand": {"value": _hand_group(joint_m)}})
    assert all(out[k].is_none for k in ("taxel_positions_wrist", "taxel_positions_base", "taxel_forces_base"))
    with TactilePublisher(CID, layout.metadata, bus) as publisher:
        publisher.publish(_frame(layout.num_taxels, 1), sample_time_ns=1)
    out = graph.execute_pipeline({
                                  "hand": {"value": _hand_group(joint_m, valid=False)}})
    assert all(out[k].is_none for k in ("taxel_positions_wrist", "taxel_positions_base", "taxel_forces_base"))


def test_skinning_blended_taxel_positions_blend_and_forces_refuse():
    layout = CurvedPadLayout(per_pad=6, blended_taxel=4)
    bus = InProcessBus()
    source, graph = _skinning_graph(layout, bus)
    bent = _bent(layout)
    joint_m = {int(HandJoint.WRIST): T_BASE_WRIST}
    joint_m.update({int(j): T_BASE_WRIST @ c for j, c in zip(DISTAL, bent, strict=True)})
    TactilePublisher(CID, layout.metadata, bus)
    out = graph.execute_pipeline({"hand": {"value": _hand_group(joint_m)}})
    p = layout.taxel_m[4, :, 3]
    a, b = layout.seg_of[4], (layout.seg_of[4] + 1) % 5
    expected = 0.5 * (bent[a] @ np.linalg.inv(layout.seg_m[a]) @ p) + 0.5 * (bent[b] @ np.linalg.inv(layout.seg_m[b]) @ p)
    np.testing.assert_allclose(out["taxel_positions_wrist"][0][4], expected[:3], atol=1e-5)

    with TactilePublisher(CID, layout.metadata, bus) as publisher:
        publisher.publish(_frame(layout.num_taxels, 2), sample_time_ns=2)
    with pytest.raises(DataLayoutError, match="taxel 4 is blended"):
        graph.execute_pipeline({"hand": {"value": _hand_group(joint_m)}})


def test_skinning_takes_isaac_teleops_own_hand_source(layout):
    """`hand` accepts HandsSource's output (type-checked at connect); an inactive hand (the tracker
    gives None) makes every skinning output absent."""
    from isaacteleop.retargeting_engine.deviceio_source_nodes import HandsSource
    from isaacteleop.retargeting_engine.deviceio_source_nodes.deviceio_tensor_types import DeviceIOHandPoseTracked

    bus = InProcessBus()
    source = TactileSource("tactile", CID, 5, layout.num_taxels, source=bus)
    hands = HandsSource("hands")
    graph = TaxelSkinning("skin", 5, layout.num_taxels).connect({
        "tactile_layout": source.output("tactile_layout"), "hand": hands.output(HandsSource.RIGHT),
        "taxel_forces": source.output("taxel_forces")})
    assert {type(n).__name__ for n in graph.get_leaf_nodes()} == {"TactileSource", "HandsSource"}
    with TactilePublisher(CID, layout.metadata, bus) as publisher:
        publisher.publish(_frame(layout.num_taxels, 1), sample_time_ns=1)
    inactive = {}
    for key in ("deviceio_hand_left", "deviceio_hand_right"):
        inactive[key] = TensorGroup(DeviceIOHandPoseTracked())
        inactive[key][0] = None
    out = graph.execute_pipeline({hands.name: inactive})
    assert all(out[k].is_none for k in ("taxel_positions_wrist", "taxel_positions_base", "taxel_forces_base"))


def test_source_withholds_a_stale_frame_instead_of_repeating_it(layout):
    """A producer that stops (crash, unplugged) must not leave the last touch in the graph."""
    import time

    bus = InProcessBus()
    source = TactileSource("tactile", CID, 5, layout.num_taxels, source=bus, stale_after_s=0.05)
    publisher = TactilePublisher(CID, layout.metadata, bus)
    publisher.publish(_frame(layout.num_taxels, 1), sample_time_ns=1)
    out = source.execute_pipeline({})
    assert not out["taxel_forces"].is_none
    out = source.execute_pipeline({})  # no new frame, but fresh
    np.testing.assert_array_equal(out["taxel_forces"][0], _frame(layout.num_taxels, 1))
    time.sleep(0.1)
    out = source.execute_pipeline({})
    assert out["taxel_forces"].is_none and not out["tactile_layout"].is_none
    publisher.publish(_frame(layout.num_taxels, 2), sample_time_ns=2)
    out = source.execute_pipeline({})
    np.testing.assert_array_equal(out["taxel_forces"][0], _frame(layout.num_taxels, 2))
    with pytest.raises(ValueError, match="stale_after_s must be None or > 0"):
        TactileSource("t", CID, 5, 30, source=bus, stale_after_s=0)
