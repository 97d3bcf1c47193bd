"""End to end: contract forces → emulated device bytes → SDK adapter → hardware producer →
in-process bus → TactileTracker; fault handling (offline, stall, info revision, corrupt frames,
clock jumps) and the normalized firmware mode."""
from __future__ import annotations

import json

import numpy as np
import pytest

from wuji_tactile_device.errors import (CalibrationFileError, DeviceFormatError, FingerOfflineError,
                                        LayoutChangedError, ProducerError)
from wuji_tactile_device.producers.emulated import EmulatedHand2, simulation_layout
from wuji_tactile_device.producers.hardware import (AxisMapping, HardwareConfig, HardwareProducer,
                                                    SdkFingertipDevice, write_full_scale)
from wuji_tactile_device.producers.emulated import DEFAULT_FULL_SCALE
from wuji_tactile_device.producers.sim.taxels import taxel_poses_in_distal
from wuji_tactile_device.hands.wuji_hand2 import FINGERS, lbs_metadata
from wuji_tactile_device.streams.tracker import TactileTracker
from wuji_tactile_device.streams.inproc import InProcessBus

N = 176


from hw_loop import OnLoop  # noqa: E402


class EmitClock:
    """Local arrival time [ns] that advances with the emulated hand's ticks (one period per emit),
    never with the machine's speed: staleness is judged on the same time line under any load."""

    def __init__(self, emu: EmulatedHand2):
        self._emu, self._emit, self.ticks = emu, emu.emit, 0
        emu.emit = self._emitted

    def _emitted(self, *args, **kwargs):
        self.ticks += 1
        return self._emit(*args, **kwargs)

    def __call__(self) -> int:
        return 1_000_000_000 + self.ticks * 10_000_000


def device(emu: EmulatedHand2) -> SdkFingertipDevice:
    """The SDK adapter over `emu`, its arrivals stamped on the emulated ticks (`EmitClock`)."""
    return SdkFingertipDevice(emu, clock_ns=EmitClock(emu))


def rig(side="right", *, emulator=None, **config):
    emu = emulator or EmulatedHand2(side)
    bus = InProcessBus()
    tracker = TactileTracker(f"tactile/{side}", bus)
    producer = OnLoop(HardwareProducer(device(emu), HardwareConfig(side=side, **config)), bus)
    return emu, producer, tracker


def forces(seed=0, scale=0.8):
    return np.random.default_rng(seed).normal(size=(N, 3)) * scale


def tick(emu, producer, tracker, f):
    emu.emit(f)
    n = producer.step()
    tracker.update()
    return n


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("mounting", [True, False])
def test_end_to_end_forces_within_quantisation_and_metadata_equals_simulation(side, mounting):
    emu = EmulatedHand2(side, mounting=mounting, positions=mounting)
    fallback = None if mounting else simulation_layout(side)
    emu, producer, tracker = rig(side, emulator=emu, fallback_layout=fallback)
    assert set(producer.layout_sources.values()) == {"device" if mounting else "simulation layout"}
    for k in range(3):
        f = forces(k)
        assert tick(emu, producer, tracker, f) == 1
        frame = tracker.get_data()
        err = np.abs(frame.forces.astype(np.float64) - f)
        # half an i16 step (0.5 mN) plus float32 rounding of the published value
        assert np.all(err <= emu.quantisation_step() + 1e-6 * np.abs(f) + 1e-9), err.max()
    sim = lbs_metadata(side, taxel_poses_in_distal(side))
    got = tracker.get_metadata()
    assert got.joint_ids == sim.joint_ids
    np.testing.assert_array_equal(got.segment_indices, sim.segment_indices)
    np.testing.assert_array_equal(got.segment_weights, sim.segment_weights)
    np.testing.assert_array_equal(got.segment_bind_poses, sim.segment_bind_poses)
    # taxel poses: the device's own layout (JSON round trip of the simulated one), float32 wire
    np.testing.assert_allclose(got.taxel_bind_poses[:, :3], sim.taxel_bind_poses[:, :3], atol=1e-7)
    dots = np.abs(np.sum(got.taxel_bind_poses[:, 3:] * sim.taxel_bind_poses[:, 3:], axis=1))
    assert np.all(dots > 1 - 1e-6)
    assert frame.timestamp.sample_time_raw_device_clock == emu.device_time_us * 1000


def test_pressing_gives_negative_normal_force_and_device_resultant():
    emu, producer, tracker = rig()
    f = np.zeros((N, 3))
    f[40:74, 2] = -0.25  # press the index pad: force on each taxel along its inward normal
    tick(emu, producer, tracker, f)
    got = tracker.get_data().forces
    assert np.all(got[40:74, 2] < -0.24) and np.all(np.abs(got[:40]) == 0)
    # the device's own resultant (aggregate block) is exposed, not published: 34 × 0.25 N
    r = producer.resultants["index"]
    # device convention (default mapping): the pad pushes back, so the module sees a positive load
    assert np.linalg.norm(r.force_n) == pytest.approx(34 * 0.25 * np.linalg.norm(
        np.mean(emu.pad("index").point_rotations[:, :, 2], axis=0)), abs=0.02)
    assert r.temperature_c == pytest.approx(30.25)
    assert tracker.counters.delivered == 1


def test_custom_axis_mapping_round_trips():
    mapping = AxisMapping(("+y", "-x", "+z"), force_sign=1)
    emu = EmulatedHand2("right", axis_mapping=mapping)
    emu, producer, tracker = rig(emulator=emu, axis_mapping=mapping)
    f = forces(3)
    tick(emu, producer, tracker, f)
    assert np.abs(tracker.get_data().forces - f).max() <= 0.0005 + 1e-5
    sim = lbs_metadata("right", taxel_poses_in_distal("right"))
    dots = np.abs(np.sum(tracker.get_metadata().taxel_bind_poses[:, 3:] * sim.taxel_bind_poses[:, 3:], axis=1))
    assert np.all(dots > 1 - 1e-6)


def test_wrong_axis_mapping_is_visible_as_wrong_sign():
    # emulated device uses the default; producer configured with the opposite force sign
    emu, producer, tracker = rig(axis_mapping=AxisMapping(("+x", "+y", "+z"), force_sign=1))
    f = np.zeros((N, 3))
    f[:, 2] = -0.5
    tick(emu, producer, tracker, f)
    assert np.all(tracker.get_data().forces[:, 2] > 0.49)


def test_finger_offline_stops_publication_and_recovery_reconfirms():
    events = []
    emu = EmulatedHand2("right")
    bus = InProcessBus()
    tracker = TactileTracker("tactile/right", bus)
    producer = OnLoop(HardwareProducer(device(emu), HardwareConfig(side="right", stale_after_s=0.03),
                                       on_event=events.append), bus)
    assert tick(emu, producer, tracker, forces(1)) == 1
    emu.set_online("ring", False)
    for k in range(4):  # the other fingers run 40 ms ahead of ring's last frame (> 30 ms)
        assert tick(emu, producer, tracker, forces(k)) == 0
    assert producer.unavailable_fingers == ("ring",)
    assert tracker.counters.delivered == 1
    unavailable = [e for e in events if e.kind == "unavailable"]
    assert unavailable[0].fingers == ("ring",) and "ring (offline)" in unavailable[0].message
    info_fetches = []
    original = producer.device.fingertip_info
    producer.device.fingertip_info = lambda finger: (info_fetches.append(finger), original(finger))[1]
    emu.set_online("ring", True)
    # frames again: the first poll re-confirms (info fetched) before ring's frames are used
    tick(emu, producer, tracker, forces(5))
    assert "ring" in info_fetches and [e.kind for e in events][-1] == "recovered"
    f = forces(6)
    assert tick(emu, producer, tracker, f) == 1
    assert np.abs(tracker.get_data().forces - f).max() <= 0.0005 + 1e-5
    assert producer.unavailable_fingers == ()


def test_stalled_finger_reported_as_stalled_not_offline():
    events = []
    emu = EmulatedHand2("right")
    producer = OnLoop(HardwareProducer(device(emu), HardwareConfig(side="right", stale_after_s=0.03),
                                       on_event=events.append), InProcessBus())
    emu.emit(forces())
    assert producer.step() == 1
    emu.set_sending("thumb", False)
    for _ in range(4):
        emu.emit(forces())
        assert producer.step() == 0
    assert producer.unavailable_fingers == ("thumb",)
    assert events[-1].fingers == ("thumb",) and "thumb (stalled: no frames)" in events[-1].message


def test_offline_at_start_is_refused():
    emu = EmulatedHand2("right")
    emu.set_online("pinky", False)
    with pytest.raises(FingerOfflineError, match=r"fingertip module\(s\) offline: pinky") as info:
        HardwareProducer(SdkFingertipDevice(emu), HardwareConfig(side="right"))
    assert info.value.fingers == ("pinky",)


def test_info_revision_mid_stream_rebuilds_decoder_when_layout_unchanged():
    emu, producer, tracker = rig()
    tick(emu, producer, tracker, forces(0))
    emu.revise_info("middle", point_type="i32", point_scale=1e-5)
    f = forces(1)
    assert tick(emu, producer, tracker, f) == 1
    assert producer.info_revisions == 1
    mid = slice(74, 108)
    # the finer i32 encoding now decodes middle to 5e-6 N
    assert np.abs(tracker.get_data().forces[mid] - f[mid]).max() <= 5e-6 + 1e-6
    assert tracker.counters.delivered == 2


def test_info_revision_with_layout_change_raises_instead_of_publishing():
    emu, producer, tracker = rig()
    tick(emu, producer, tracker, forces(0))
    emu.revise_info("index", move_taxels_m=0.001)
    emu.emit(forces(1))
    with pytest.raises(LayoutChangedError, match=r"^index: the device revised its sensor info mid-session .* point placement"):
        producer.step()
    tracker.update()
    assert tracker.counters.delivered == 1


def test_frames_with_a_digest_the_info_does_not_confirm_are_dropped_then_refused():
    emu, producer, tracker = rig()
    emu.desync_digest("thumb", 0xDEADBEEF)  # frames name an info revision the device never serves
    for _ in range(2):
        assert tick(emu, producer, tracker, forces()) == 0
    assert producer.counters.digest_mismatch["thumb"] == 2
    emu.emit(forces())
    with pytest.raises(DeviceFormatError, match=r"^thumb: 3 frames carry info_digest .* even after fetching it again"):
        producer.step()


@pytest.mark.parametrize("fault", ["truncated", "oversized"])
def test_corrupt_frame_drops_its_tick_only(fault):
    events = []
    emu = EmulatedHand2("right")
    bus = InProcessBus()
    tracker = TactileTracker("tactile/right", bus)
    producer = OnLoop(HardwareProducer(SdkFingertipDevice(emu), HardwareConfig(side="right"), on_event=events.append),
                      bus)
    emu.inject("ring", fault)
    assert tick(emu, producer, tracker, forces(0)) == 0
    assert tick(emu, producer, tracker, forces(1)) == 1
    c = producer.counters
    assert c.malformed["ring"] == 1
    assert c.dropped == {"thumb": 1, "index": 1, "middle": 1, "ring": 1, "pinky": 1}
    assert events[0].kind == "malformed" and f"ring: {fault} frame seq 0" in events[0].message


def test_duplicate_frame_counted_not_published_twice():
    emu, producer, tracker = rig()
    emu.inject("index", "duplicate")
    assert tick(emu, producer, tracker, forces(0)) == 1
    assert producer.counters.duplicate["index"] == 1


def test_clock_jump_is_counted_and_publication_continues():
    emu, producer, tracker = rig()
    tick(emu, producer, tracker, forces(0))
    emu.jump_clock(-60_000_000)
    f = forces(1)
    assert tick(emu, producer, tracker, f) == 1
    assert producer.counters.clock_jumps == 1
    frame = tracker.get_data()
    assert frame.timestamp.sample_time_raw_device_clock == emu.device_time_us * 1000
    assert np.abs(frame.forces - f).max() <= 0.0005 + 1e-5


# ----- normalized firmware (≥ v2.4.0) -----
def test_normalized_without_calibration_file_refuses_to_start(tmp_path):
    emu = EmulatedHand2("right", firmware="normalized")
    with pytest.raises(CalibrationFileError, match=r"thumb, index, middle, ring, pinky: no full-scale calibration file "
                       r"given \(--full-scale FILE\); the firmware reports point forces in 'normalized' units"):
        HardwareProducer(SdkFingertipDevice(emu), HardwareConfig(side="right"))
    missing = tmp_path / "hand.json"
    with pytest.raises(CalibrationFileError, match=f"full-scale calibration file '{missing}' does not exist"):
        HardwareProducer(SdkFingertipDevice(emu), HardwareConfig(side="right", full_scale_path=missing))


def test_normalized_with_calibration_file_gives_newtons_and_counts_saturation(tmp_path):
    path = tmp_path / "full_scale.json"
    write_full_scale(path, {f: DEFAULT_FULL_SCALE for f in FINGERS}, serial_number="EMUK0001")
    emu = EmulatedHand2("right", firmware="normalized")
    emu, producer, tracker = rig(emulator=emu, full_scale_path=path)
    f = np.zeros((N, 3))
    f[:, 2] = -np.linspace(0.0, 9.0, N)  # normal loads up to 9 N of 10 N full scale
    f[:, 0] = np.linspace(-4.0, 4.0, N)
    tick(emu, producer, tracker, f)
    got = tracker.get_data().forces
    step = emu.quantisation_step()
    assert np.all(np.abs(got - f) <= step + 1e-6 * np.abs(f) + 1e-7)
    assert producer.saturated == {f_: 0 for f_ in FINGERS}
    f[:3, 2] = -12.0  # beyond full scale: the device clamps at 1.0
    tick(emu, producer, tracker, f)
    got = tracker.get_data().forces
    assert np.allclose(got[:3, 2], -10.0) and producer.saturated["thumb"] == 3


def test_calibration_file_for_another_hand_or_wrong_shape_is_refused(tmp_path):
    emu = EmulatedHand2("right", firmware="normalized")
    other = tmp_path / "other.json"
    write_full_scale(other, {f: DEFAULT_FULL_SCALE for f in FINGERS}, serial_number="WUJIK9999")
    with pytest.raises(CalibrationFileError, match="calibrated for hand 'WUJIK9999', but the connected hand is 'EMUK0001'"):
        rig(emulator=emu, full_scale_path=other)
    bad = tmp_path / "bad.json"
    write_full_scale(bad, {**{f: DEFAULT_FULL_SCALE for f in FINGERS}, "ring": [[1, 1, 1]] * 5})
    with pytest.raises(CalibrationFileError, match=r"fingers.ring.full_scale_n must be \[fx, fy, fz\] or 34 such rows"):
        rig(emulator=EmulatedHand2("right", firmware="normalized"), full_scale_path=bad)
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps({"kind": "wuji_tactile_full_scale", "version": 1,
                                   "fingers": {"thumb": {"full_scale_n": [1, 1, 1]}}}))
    with pytest.raises(CalibrationFileError, match="fingers.index.full_scale_n is missing"):
        rig(emulator=EmulatedHand2("right", firmware="normalized"), full_scale_path=partial)


def test_device_without_placement_needs_an_explicit_layout():
    emu = EmulatedHand2("right", mounting=False, positions=True)
    with pytest.raises(ProducerError, match=r"^thumb: the device format declares no point_rpy/base_xyz/base_rpy"):
        rig(emulator=emu)


def test_backward_clock_jump_with_a_finger_missing_that_tick_does_not_stall_the_others():
    emu, producer, tracker = rig(stale_after_s=0.03)
    tick(emu, producer, tracker, forces(0))
    emu.jump_clock(-60_000_000)
    emu.set_sending("ring", False)  # ring's post-jump frame is late: only four fingers in this poll
    assert tick(emu, producer, tracker, forces(1)) == 0
    emu.set_sending("ring", True)
    f = forces(2)
    assert tick(emu, producer, tracker, f) == 1
    assert producer.unavailable_fingers == () and producer.counters.clock_jumps == 1
    assert np.abs(tracker.get_data().forces - f).max() <= 0.0005 + 1e-5


def test_frames_queued_before_an_info_revision_keep_their_own_encoding():
    emu, producer, tracker = rig()

    class Collect:
        frames: list = []

        def on_metadata(self, *_):
            pass

        def on_data(self, _cid, _msg, frame):
            self.frames.append(np.array(frame.forces))

    collect = Collect()
    tracker.add_observer(collect)
    ring_queue = producer.device._subs["ring"]._queue
    f_n, f_next = forces(10), forces(11)
    emu.emit(f_n)
    held = ring_queue.popleft()  # ring's frame for tick N is late
    assert producer.step() == 0  # four fingers of tick N wait for ring
    emu.revise_info("middle", point_type="i32", point_scale=1e-5)
    emu.emit(f_next)
    ring_queue.appendleft(held)
    # tick N (middle decoded as the i16 it was received in) and tick N+1 (middle now i32)
    assert producer.step() == 2 and producer.info_revisions == 1
    tracker.update()
    assert len(collect.frames) == 2
    assert np.abs(collect.frames[0] - f_n).max() <= 0.0005 + 1e-5
    assert np.abs(collect.frames[1] - f_next).max() <= 0.0005 + 1e-5


@pytest.mark.parametrize("config,message", [
    (dict(tolerance_us=10_000), r"sync tolerance 10000 µs must be > 0 and below one period \(10000 µs at 100 Hz\)"),
    (dict(tolerance_us=0), "sync tolerance 0 µs must be > 0"),
    (dict(stale_after_s=0.0), "stale_after_s must be > 0 s"),
])
def test_timing_configuration_is_checked(config, message):
    with pytest.raises(ProducerError, match=message):
        rig(**config)


def test_nan_from_an_f32_firmware_drops_the_frame_instead_of_publishing_it():
    emu, producer, tracker = rig()
    emu.revise_info("pinky", point_type="f32", point_scale=1.0)
    f = forces(20)
    assert tick(emu, producer, tracker, f) == 1  # f32 encoding accepted (layout unchanged)
    f_bad = forces(21)
    f_bad[150, 1] = np.nan  # pinky's taxel 150 − 142 = 8
    assert tick(emu, producer, tracker, f_bad) == 0
    assert producer.counters.malformed["pinky"] == 1
    assert any("pinky: frame seq 1 has a non-finite value at point 8; dropped" in e.message for e in producer.events)
    assert tick(emu, producer, tracker, f) == 1 and np.all(np.isfinite(tracker.get_data().forces))
