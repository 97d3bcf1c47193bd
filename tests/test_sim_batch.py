"""Batched scenes: each scene is the single-scene simulation, bit for bit (stepping many together on
threads changes nothing), scenes are independent, and arguments are checked."""
from __future__ import annotations

import mujoco
import numpy as np
import pytest

from wuji_tactile_device.producers.sim.batch import BatchedScenes
from wuji_tactile_device.producers.sim.contact_model import NATIVE_AVAILABLE, DistributedContact
from wuji_tactile_device.producers.sim.producer import SimProducer
from wuji_tactile_device.producers.sim.scenarios import PressScenario, make_scenario


@pytest.fixture(scope="module")
def pressing():
    """The press scenario 3 s in: pads in contact (forces rising)."""
    producer = SimProducer(PressScenario(), max_frames=300)
    while not producer.finished:
        producer.next_frame()
    return producer.sim


def test_each_scene_is_the_single_scene_simulation_bit_for_bit(pressing):
    sim = pressing
    with BatchedScenes(sim, 3, threads=2) as batch:
        start = batch.read()
        assert np.abs(start).sum() > 0.1  # real contacts to distribute
        reference = []
        for _ in range(20):
            sim.step_frame()
            reference.append(sim.read().taxel_forces.copy())
            batch.step_frame()
            forces = batch.read()
            assert forces.shape == (3, 176, 3) and forces.dtype == np.float32
            for scene in range(3):
                np.testing.assert_array_equal(forces[scene], reference[-1])
        np.testing.assert_array_equal(batch.qpos()[2], sim.data.qpos)
        assert batch.frames == 20
        assert not np.array_equal(reference[0], reference[-1])  # the frames moved


def test_threads_change_nothing_and_scenes_are_independent(pressing):
    sim = pressing
    ctrl = np.tile(sim.data.ctrl, (4, 1))
    ctrl[1, sim.actuators] += 0.3  # scene 1 closes its fingers further
    results = []
    for threads in (1, 2, 4):
        with BatchedScenes(sim, 4, threads=threads, ctrl=ctrl) as batch:
            for _ in range(15):
                batch.step_frame()
            results.append(batch.read())
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], results[2])
    forces = results[0]
    np.testing.assert_array_equal(forces[0], forces[2])  # same controls, same frames
    np.testing.assert_array_equal(forces[0], forces[3])
    assert np.abs(forces[1]).sum() > np.abs(forces[0]).sum()  # the further-closed hand presses harder


def test_arguments_are_checked(pressing):
    with pytest.raises(ValueError, match="scenes must be an integer >= 1, got 0"):
        BatchedScenes(pressing, 0)
    with pytest.raises(ValueError, match="threads must be an integer >= 1, got 0"):
        BatchedScenes(pressing, 2, threads=0)
    with BatchedScenes(pressing, 2, threads=1) as batch:
        with pytest.raises(ValueError, match=r"ctrl must have shape \(2, \d+\), got \(3,\)"):
            batch.set_ctrl(np.zeros(3))


@pytest.mark.parametrize("first_k", [None, 4, 10_000])
def test_one_pass_read_equals_each_scenes_own_read(pressing, first_k):
    """`read_many` solves all scenes' pairs in one pass; each scene equals its own `read` bit for
    bit — scenes pressing harder or opened (no contact), and with a first support size that holds
    every footprint (10 000: the whole grid), or none (4: every scene is re-read alone)."""
    sim = pressing
    contacts = sim.contacts
    native = contacts.distributed       # the one-pass read is the numpy backend's (native: one call per scene)
    contacts.distributed = DistributedContact(sim.model, contacts.pads, contacts.distal_bodies,
                                              contacts._object_geoms, backend="numpy")
    grid = contacts.distributed.coarse
    if first_k is not None:
        contacts.distributed.coarse = grid._replace(first_k=first_k)
    try:
        ctrl = np.tile(sim.data.ctrl, (4, 1))
        ctrl[1, sim.actuators] += 0.3        # presses harder
        ctrl[2, sim.actuators] -= 1.0        # opens: its pads leave the objects
        with BatchedScenes(sim, 4, threads=1, ctrl=ctrl) as batch:
            for _ in range(30):
                batch.step_frame()
            alone: list[int] = []
            own_read = contacts.read
            contacts.read = lambda d, *a, **k: alone.append(1) or own_read(d, *a, **k)  # type: ignore[method-assign]
            try:
                got = contacts.read_many(batch.datas)
            finally:
                del contacts.read
            each = np.stack([contacts.read(d).taxel_forces for d in batch.datas])
    finally:
        contacts.distributed.coarse = grid
        used, contacts.distributed = contacts.distributed, native
    assert used.backend == "numpy"
    # The one-pass path ran (the layer compliance's explicit pairs once sent every scene to its own
    # read): no scene read alone unless the first support holds no footprint.
    assert contacts.efc_first_three and sim.model.npair > 0
    # With the whole grid as first support nothing needs re-reading; with 4 points every scene
    # with a pair does (the opened one has none); by default only the hardest press may.
    if first_k == 10_000:
        assert alone == []
    elif first_k == 4:
        assert len(alone) == 3
    else:
        assert len(alone) <= 1
    np.testing.assert_array_equal(got, each)
    loads = np.abs(each).sum(axis=(1, 2))
    assert loads[1] > loads[0] > 0.1 and loads[2] < loads[0]


@pytest.mark.parametrize("name,frames", [("grasp-box", 450), ("slip", 250)])
def test_one_pass_read_of_contact_rich_states(name, frames):
    """States with several contacts on one pad (a box's face and edges) and sliding pairs: the
    one-pass read equals each state's own read bit for bit (such states are read alone)."""
    producer = SimProducer(make_scenario(name), max_frames=frames)
    states = []
    while not producer.finished:
        producer.next_frame()
        if producer.sim.frames % 50 == 0:
            d = mujoco.MjData(producer.sim.model)
            mujoco.mj_copyData(d, producer.sim.model, producer.sim.data)
            states.append(d)
    contacts = producer.sim.contacts
    got = contacts.read_many(states)
    each = np.stack([contacts.read(d).taxel_forces for d in states])
    np.testing.assert_array_equal(got, each)
    assert np.abs(each).sum() > 0.1


@pytest.mark.skipif(not NATIVE_AVAILABLE, reason="the compiled read was not built in this install")
def test_native_batch_read_equals_the_numpy_one_pass_read(pressing):
    """With the compiled read (the default when built) `read_many` reads each scene in one call;
    it gives the numpy one-pass read's taxels to float32 rounding."""
    contacts = pressing.contacts
    assert contacts.distributed.backend == "native"
    ctrl = np.tile(pressing.data.ctrl, (3, 1))
    ctrl[1, pressing.actuators] += 0.3
    ctrl[2, pressing.actuators] -= 1.0
    with BatchedScenes(pressing, 3, threads=1, ctrl=ctrl) as batch:
        for _ in range(30):
            batch.step_frame()
        got = contacts.read_many(batch.datas)
        native = contacts.distributed
        contacts.distributed = DistributedContact(pressing.model, contacts.pads, contacts.distal_bodies,
                                                  contacts._object_geoms, backend="numpy")
        try:
            ref = contacts.read_many(batch.datas)
        finally:
            contacts.distributed = native
    assert np.abs(ref).sum() > 0.1
    np.testing.assert_allclose(got, ref, rtol=2.0 ** -22, atol=1e-12 * float(np.abs(ref).max()))
