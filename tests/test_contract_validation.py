"""Every validation rule: one failing case (naming rule and culprit) and the passing case."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import DISTAL_JOINTS, make_metadata

from wuji_tactile_device import HandJoint, MetadataValidationError, TactileMetadata
from wuji_tactile_device.contract.validation import QUATERNION_NORM_TOLERANCE, WEIGHT_SUM_TOLERANCE


def variant(md: TactileMetadata, **changes) -> TactileMetadata:
    fields = dict(joint_ids=md.joint_ids, segment_bind_poses=md.segment_bind_poses.copy(),
                  taxel_bind_poses=md.taxel_bind_poses.copy(), segment_indices=md.segment_indices.copy(),
                  segment_weights=md.segment_weights.copy())
    fields.update(changes)
    return TactileMetadata(**fields)


def fails(md: TactileMetadata, rule: str, detail_regex: str) -> None:
    with pytest.raises(MetadataValidationError, match=detail_regex) as info:
        md.validate()
    assert info.value.rule == rule


def test_valid_metadata_passes():
    md = make_metadata(30)
    assert md.validate() is md


def test_counts_must_agree():
    md = make_metadata(10)
    fails(variant(md, joint_ids=md.joint_ids[:4]), "segment count", "4 joint ids but 5 segment bind poses")
    fails(variant(md, segment_weights=md.segment_weights[:9]), "taxel count", "10 taxel bind poses but 9 rows of segment_weights")
    fails(variant(md, segment_indices=md.segment_indices[:8]), "taxel count", "8 rows of segment_indices")
    empty = np.zeros((0, 7))
    fails(variant(md, taxel_bind_poses=empty, segment_indices=np.zeros((0, 4)), segment_weights=np.zeros((0, 4))),
          "taxel count", "at least one taxel")
    fails(variant(md, joint_ids=(), segment_bind_poses=empty), "segment count", "at least one segment")


def test_joint_ids_must_be_real_joints():
    md = make_metadata(10)
    ids = list(md.joint_ids)
    ids[2] = HandJoint.NUM_JOINTS
    fails(variant(md, joint_ids=ids), "joint id", r"joint_ids\[2\] = <HandJoint.NUM_JOINTS: 26> is not a usable HandJoint")
    ids[2] = 40
    fails(variant(md, joint_ids=ids), "joint id", r"joint_ids\[2\] = 40 is not a usable HandJoint")
    ids[2] = -1
    fails(variant(md, joint_ids=ids), "joint id", r"joint_ids\[2\] = -1")


def test_joint_ids_must_be_unique():
    md = make_metadata(10)
    ids = list(md.joint_ids)
    ids[3] = ids[1]
    fails(variant(md, joint_ids=ids), "unique joint ids", r"joint_ids\[3\] = INDEX_DISTAL repeats joint_ids\[1\]")


def test_quaternions_must_be_unit_within_the_stated_tolerance():
    md = make_metadata(10)
    tax = md.taxel_bind_poses.astype(np.float64)
    tax[6, 3:] *= 1 + 5 * QUATERNION_NORM_TOLERANCE
    fails(variant(md, taxel_bind_poses=tax), "unit quaternion", r"taxel 6: \|q\| = 1.0000(49|50)")
    seg = md.segment_bind_poses.astype(np.float64)
    seg[1, 3:] = 0
    fails(variant(md, segment_bind_poses=seg), "unit quaternion", r"segment 1: \|q\| = 0")
    tax = md.taxel_bind_poses.astype(np.float64)
    tax[6, 3:] *= 1 + 0.2 * QUATERNION_NORM_TOLERANCE
    variant(md, taxel_bind_poses=tax).validate()  # inside the tolerance


def test_poses_must_be_finite():
    md = make_metadata(10)
    tax = md.taxel_bind_poses.copy()
    tax[4, 1] = np.nan
    tax[7, 0] = np.inf
    fails(variant(md, taxel_bind_poses=tax), "finite poses", r"taxel 4: component 1 is nan \(and 1 more\)")


def test_wrist_segment_bind_pose_must_be_identity():
    joints = (HandJoint.WRIST, *DISTAL_JOINTS)
    md = make_metadata(12, joint_ids=joints)
    fails(md, "wrist bind pose identity", "segment 0 is WRIST")
    seg = md.segment_bind_poses.copy()
    seg[0] = [0, 0, 0, 0, 0, 0, 1]
    variant(md, segment_bind_poses=seg).validate()
    seg[0] = [0, 0, 0, 0, 0, 0, -1]  # -identity is the same rotation
    variant(md, segment_bind_poses=seg).validate()


def test_every_slot_index_must_be_valid_even_with_zero_weight():
    md = make_metadata(10)
    idx = md.segment_indices.copy()
    idx[8, 3] = 5  # weight of slot 3 is 0, still must address a segment
    fails(variant(md, segment_indices=idx), "segment index range", r"taxel 8 slot 3: index 5 is not in 0..4")
    idx[8, 3] = -1
    fails(variant(md, segment_indices=idx), "segment index range", r"taxel 8 slot 3: index -1")


def test_weights_finite_nonnegative_and_summing_to_one():
    md = make_metadata(10)
    w = md.segment_weights.copy()
    w[2] = [0.5, np.nan, 0.5, 0]
    fails(variant(md, segment_weights=w), "finite weights", r"taxel 2 slot 1: weight nan")
    w[2] = [1.2, -0.2, 0, 0]
    fails(variant(md, segment_weights=w), "non-negative weights", r"taxel 2 slot 1: weight -0.2")
    w[2] = [0.5, 0.3, 0.1, 0.0]
    fails(variant(md, segment_weights=w), "weights sum to 1", r"taxel 2: weights sum to 0.9000000")
    w[2] = [0.5, 0.25, 0.25, 0.0]
    w[3] = [1.0 - WEIGHT_SUM_TOLERANCE / 4, 0, 0, 0]
    variant(md, segment_weights=w).validate()


def test_shapes_are_checked_at_construction():
    md = make_metadata(4)
    with pytest.raises(MetadataValidationError, match=r"taxel_bind_poses must have shape \(count, 7\), got \(4, 6\)"):
        variant(md, taxel_bind_poses=np.zeros((4, 6)))
    with pytest.raises(MetadataValidationError, match="segment_indices must hold integers"):
        variant(md, segment_indices=np.full((4, 4), 0.5))


def test_decoded_invalid_metadata_is_reported_by_validate_not_decode():
    md = make_metadata(6)
    w = md.segment_weights.copy()
    w[5] = [0.2, 0.2, 0.2, 0.2]
    bad = variant(md, segment_weights=w)
    back = TactileMetadata.decode(bad.encode())
    fails(back, "weights sum to 1", "taxel 5")
