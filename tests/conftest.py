"""Shared fixtures. `make_metadata` builds a valid rigid layout: taxels spread over the five distal
segments, each taxel's frame turned a little so orientation errors cannot hide."""
from __future__ import annotations

import numpy as np
import pytest

from wuji_tactile_device import HandJoint, TactileMetadata
from wuji_tactile_device.contract.geometry import matrix_to_quat, rpy_to_matrix

DISTAL_JOINTS = (HandJoint.THUMB_DISTAL, HandJoint.INDEX_DISTAL, HandJoint.MIDDLE_DISTAL,
                 HandJoint.RING_DISTAL, HandJoint.LITTLE_DISTAL)


def make_metadata(num_taxels: int = 20, joint_ids=DISTAL_JOINTS, seed: int = 0) -> TactileMetadata:
    rng = np.random.default_rng(seed)
    J = len(joint_ids)
    seg = np.zeros((J, 7))
    seg[:, :3] = rng.uniform(-0.08, 0.08, (J, 3))
    seg[:, 3:] = matrix_to_quat(rpy_to_matrix(rng.uniform(-1, 1, (J, 3))))
    tax = np.zeros((num_taxels, 7))
    tax[:, :3] = rng.uniform(-0.1, 0.1, (num_taxels, 3))
    tax[:, 3:] = matrix_to_quat(rpy_to_matrix(rng.uniform(-1, 1, (num_taxels, 3))))
    return TactileMetadata.rigid(joint_ids, seg, tax, np.arange(num_taxels) % J)


@pytest.fixture
def metadata() -> TactileMetadata:
    return make_metadata()
