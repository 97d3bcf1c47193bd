"""The SDK adapter: accessor names checked against the installed `wuji_sdk` classes, both info
access forms, the SDK's real NodeOfflineError / FrameHeader / status enums, zero calibration.

`FingertipSensorInfo`, `FingertipSensorData` and `FingertipSensorStatus` cannot be constructed
without a device ("cannot create 'builtins.FingertipSensorInfo' instances"), and `WujiHand2`
needs a connected `WujiDevice`; those parts run against the emulator's look-alikes, with the
SDK's own `FrameHeader` and exceptions where the SDK allows building them."""
from __future__ import annotations

import numpy as np
import pytest

from wuji_tactile_device.errors import FingerOfflineError, ProducerError
from wuji_tactile_device.producers.emulated import EmulatedHand2
from wuji_tactile_device.producers.hardware import SdkFingertipDevice, sdk_module
from wuji_tactile_device.producers.hardware.device import (MODEL_STANDARD, MODEL_THUMB, STATE_CALIBRATING,
                                                           STATE_READY, EmulatedNodeOfflineError, connect_sdk_hand)
from wuji_tactile_device.producers.hardware.zero_calibration import calibrate_zero
from wuji_tactile_device.hands.wuji_hand2 import FINGERS

sdk = sdk_module()
needs_sdk = pytest.mark.skipif(sdk is None, reason="vendor SDK wuji_sdk (extra 'hardware') not installed")


@needs_sdk
def test_adapter_uses_only_accessors_the_sdk_hand_has():
    hand = sdk.WujiHand2
    for f in FINGERS:
        for kind in ("info", "data", "status"):
            assert callable(getattr(hand, f"fingertip_{f}_{kind}")), f"fingertip_{f}_{kind}"
    for name in ("fingertip_online", "calibrate_fingertip", "serial_number"):
        assert hasattr(hand, name), name
    for f in ("thumb", "index", "middle", "ring", "pinky"):
        resource = getattr(sdk, f"Fingertip{f.capitalize()}DataResource")
        assert {"subscribe", "subscribe_with_callback"} <= set(dir(resource))
    assert {"recv", "close", "set_rate"} <= set(dir(sdk.Subscription))
    assert "get" in dir(sdk.FingertipInfoResource) and "get" in dir(sdk.FingertipStatusResource)
    # the fields the adapter copies out
    assert {"digest", "model", "device_type", "rate_hz", "format", "header"} <= set(dir(sdk.FingertipSensorInfo))
    assert {"header", "info_digest", "data"} <= set(dir(sdk.FingertipSensorData))
    assert {"seq", "timestamp_us", "frame_id"} <= set(dir(sdk.FrameHeader))
    # this wheel lacks the per-index form some examples use; the adapter supports both
    assert not hasattr(hand, "get_fingertip_info")


@needs_sdk
def test_status_constants_equal_the_sdk_enums():
    assert sdk.FingertipSensorModel.Standard == MODEL_STANDARD
    assert sdk.FingertipSensorModel.Thumb == MODEL_THUMB
    assert sdk.FingertipSensorState.Ready == STATE_READY
    assert sdk.FingertipSensorState.Calibrating == STATE_CALIBRATING
    assert int(sdk.FingertipSensorModel.Thumb) == 1


@needs_sdk
def test_emulator_raises_the_sdks_own_node_offline_error_and_adapter_translates_it():
    emu = EmulatedHand2("right")
    emu.set_online("ring", False)
    with pytest.raises(sdk.NodeOfflineError):
        emu.fingertip_ring_info().get()
    dev = SdkFingertipDevice(emu)
    with pytest.raises(FingerOfflineError, match=r"^ring: fingertip module does not answer \(info\)") as info:
        dev.fingertip_info("ring")
    assert info.value.fingers == ("ring",)
    assert isinstance(info.value.__cause__, sdk.NodeOfflineError)
    with pytest.raises(FingerOfflineError, match=r"^ring: fingertip module does not answer \(status\)"):
        dev.fingertip_status("ring")
    assert dev.fingertip_online() == [True, True, True, False, True]


@needs_sdk
def test_frames_with_the_sdks_real_frame_header():
    """Replace the emulator's header with the SDK's own FrameHeader (constructible) and check
    the adapter reads seq / timestamp_us from it."""
    emu = EmulatedHand2("right")
    dev = SdkFingertipDevice(emu)
    dev.open_streams()
    emu.emit(np.zeros((176, 3)))
    sub = dev._subs["index"]
    msg = sub._queue.popleft()
    sub._queue.append(msg._replace(header=sdk.FrameHeader(41, 123_456_789, "right_index_tip_sensor_frame")))
    frames = {f.finger: f for f in dev.poll()}
    assert frames["index"].seq == 41 and frames["index"].timestamp_us == 123_456_789
    assert frames["index"].info_digest == emu.pad("index").digest
    assert isinstance(frames["index"].data, bytes) and len(frames["index"].data) == 34 * 6 + 8


def test_payload_given_as_list_of_ints_is_accepted():
    # the SDK stubs declare FingertipSensorData.data as list[int]; the vendor contract (docs/device-contract.md) says bytes-like
    emu = EmulatedHand2("right")
    dev = SdkFingertipDevice(emu)
    dev.open_streams()
    emu.emit(np.zeros((176, 3)))
    sub = dev._subs["thumb"]
    msg = sub._queue.popleft()
    sub._queue.append(msg._replace(data=list(msg.data)))
    frames = {f.finger: f for f in dev.poll()}
    assert frames["thumb"].data == msg.data


@pytest.mark.parametrize("accessors", ["named", "indexed", "both"])
def test_both_info_access_forms_return_the_same_info(accessors):
    emu = EmulatedHand2("right", accessors=accessors)
    dev = SdkFingertipDevice(emu)
    for f in FINGERS:
        info = dev.fingertip_info(f)
        assert info.finger == f and info.digest == emu.pad(f).digest and info.rate_hz == 100.0
        assert f'"point_count":{40 if f == "thumb" else 34}' in info.format
    assert hasattr(emu, "get_fingertip_info") == (accessors != "named")
    assert hasattr(emu, "fingertip_thumb_info") == (accessors != "indexed")


def test_object_without_fingertip_accessors_is_refused():
    class NotAHand:
        serial_number = "X"

    with pytest.raises(ProducerError, match="NotAHand has neither fingertip_<finger>_info"):
        SdkFingertipDevice(NotAHand())


def test_status_and_unknown_finger():
    dev = SdkFingertipDevice(EmulatedHand2("left"))
    assert dev.fingertip_status("thumb") == (MODEL_THUMB, STATE_READY)
    assert dev.fingertip_status("pinky").model == MODEL_STANDARD
    with pytest.raises(ProducerError, match="unknown finger 'little'"):
        dev.fingertip_status("little")


def test_connect_needs_a_target_before_touching_the_network():
    if sdk is None:
        with pytest.raises(ProducerError, match="vendor SDK is not installed"):
            connect_sdk_hand()
        return
    with pytest.raises(ProducerError, match="give a serial number, an address, or a hand side"):
        connect_sdk_hand()
    # the selectors the adapter passes exist on the SDK (Handedness.Right/Left, ConnectOptions)
    assert str(sdk.Handedness.Right) == "right" and str(sdk.Handedness.Left) == "left"
    assert sdk.ConnectOptions(timeout_ms=250).timeout_ms == 250


def test_zero_calibration_waits_for_ready_and_zeroes_the_baseline():
    emu = EmulatedHand2("right", calibration_ticks=3)
    dev = SdkFingertipDevice(emu)
    resting = np.zeros((176, 3))
    resting[:, 2] = -0.2  # a load baked into the zero: the reason for the warning
    polled = []
    done = calibrate_zero(dev, poll_s=0.0, fallback_after_s=5.0, on_poll=polled.append,
                          sleep=lambda _s: emu.emit(resting))
    assert set(done) == set(FINGERS)
    assert {c.outcome for c in done.fingers.values()} == {"observed"} and done.fallback == ()
    assert polled[0] == {f: STATE_CALIBRATING for f in FINGERS}
    assert polled[-1] == {f: STATE_READY for f in FINGERS}
    # after calibration the resting load reads as zero
    dev.open_streams()
    emu.emit(resting)
    frames = dev.poll()
    assert all(f.data[:-8] == bytes(len(f.data) - 8) for f in frames)


def test_zero_calibration_refused_when_a_finger_is_offline():
    emu = EmulatedHand2("right")
    emu.set_online("middle", False)
    with pytest.raises(FingerOfflineError, match=r"zero calibration not started: fingertip module\(s\) offline: middle"):
        calibrate_zero(SdkFingertipDevice(emu))
    # and the SDK-level call itself fails fast on the offline finger
    with pytest.raises((EmulatedNodeOfflineError,) + ((sdk.NodeOfflineError,) if sdk else ())):
        emu.calibrate_fingertip()


@needs_sdk
def test_sdk_stream_failure_becomes_a_producer_error_naming_the_finger():
    emu = EmulatedHand2("right")
    dev = SdkFingertipDevice(emu)
    dev.open_streams()

    def broken_recv():
        raise sdk.WujiException("Disconnected: device disconnected")

    dev._subs["middle"].recv = broken_recv
    with pytest.raises(ProducerError, match=r"^middle: fingertip data stream failed \(device disconnected\?\): Disconnected") as info:
        dev.poll()
    assert isinstance(info.value.__cause__, sdk.WujiException)


def test_per_index_form_returning_an_accessor_is_unwrapped():
    emu = EmulatedHand2("right", accessors="indexed")
    direct = emu.get_fingertip_info
    emu.get_fingertip_info = lambda i: type("Accessor", (), {"get": lambda self: direct(i)})()
    info = SdkFingertipDevice(emu).fingertip_info("ring")
    assert info.digest == emu.pad("ring").digest and '"point_count":34' in info.format


def test_everything_but_connecting_works_without_the_vendor_sdk(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "wuji_sdk", None)  # import wuji_sdk → ImportError
    assert sdk_module() is None
    with pytest.raises(ProducerError, match=r"vendor SDK is not installed: pip install 'wuji-tactile-device\[hardware\]'"):
        connect_sdk_hand(side="right")
    emu = EmulatedHand2("right")
    emu.set_online("thumb", False)
    with pytest.raises(EmulatedNodeOfflineError):
        emu.fingertip_thumb_status().get()
    with pytest.raises(FingerOfflineError, match=r"^thumb: fingertip module does not answer \(status\)"):
        SdkFingertipDevice(emu).fingertip_status("thumb")


def test_callback_subscription_like_the_sdks():
    emu = EmulatedHand2("right")
    got, errors = [], []
    sub = emu.fingertip_pinky_data().subscribe_with_callback(got.append, on_error=errors.append)
    emu.emit(np.zeros((176, 3)))
    bad = emu.fingertip_index_data().subscribe_with_callback(lambda m: 1 / 0, on_error=errors.append)
    emu.emit(np.zeros((176, 3)))
    assert [m.header.seq for m in got] == [0, 1] and sub.received_count == 2
    assert bad.error_count == 1 and errors == ["ZeroDivisionError: division by zero"]
    with sub:
        pass
    emu.emit(np.zeros((176, 3)))
    assert len(got) == 2 and not sub.is_active


def test_close_disconnects_only_a_connection_the_adapter_owns():
    class Hand(EmulatedHand2):
        disconnects = 0

        def disconnect(self):
            Hand.disconnects += 1

    borrowed = SdkFingertipDevice(Hand("right"))
    borrowed.open_streams()
    borrowed.close()
    assert Hand.disconnects == 0 and all(not s for s in borrowed.hand._subs.values())
    owned = SdkFingertipDevice(Hand("right"), owns_connection=True)
    owned.close()
    owned.close()
    assert Hand.disconnects == 1


# ----- zero calibration follows the status state machine it observes -----

class FakeClock:
    """Time advanced by the calibration's own sleeps; each sleep is one emulated tick."""

    def __init__(self, emu):
        self.t, self.emu = 0.0, emu

    def sleep(self, s):
        self.t += s
        self.emu.emit(np.zeros((176, 3)))

    def __call__(self):
        return self.t


def test_zero_calibration_waits_for_a_calibrating_state_that_shows_late():
    emu = EmulatedHand2("right", calibration_ticks=3, calibration_delay_ticks=4)
    clock = FakeClock(emu)
    report = calibrate_zero(SdkFingertipDevice(emu), poll_s=0.1, clock=clock, sleep=clock.sleep)
    # Ready for the first 0.4 s (the command not yet running) is not taken as done
    assert {c.outcome for c in report.fingers.values()} == {"observed"}
    assert all(c.calibrating_after_s == pytest.approx(0.4) for c in report.fingers.values())
    assert all(t == pytest.approx(0.7) for t in report.values())


def test_zero_calibration_fallback_is_reported_per_finger_when_calibrating_is_never_seen():
    emu = EmulatedHand2("right", calibration_ticks=0)  # firmware done before the first status read
    clock = FakeClock(emu)
    report = calibrate_zero(SdkFingertipDevice(emu), poll_s=0.1, fallback_after_s=2.0, clock=clock, sleep=clock.sleep)
    assert report.fallback == FINGERS
    assert report.fingers["ring"].outcome == "fallback: Calibrating never observed"
    assert report.fingers["ring"].calibrating_after_s is None
    assert report["ring"] == pytest.approx(2.0) and report.fingers["ring"].polls == 21
    assert "ring: Ready at 2.00 s (fallback: Calibrating never observed)" in report.describe()
    clock = FakeClock(emu)
    with pytest.raises(ProducerError, match="thumb reported Ready for 2.0 s without ever reporting Calibrating"):
        calibrate_zero(SdkFingertipDevice(emu), poll_s=0.1, require_observed=True, clock=clock, sleep=clock.sleep)


def test_zero_calibration_status_timeouts_are_retried():
    from wuji_tactile_device.producers.hardware.recovery import RetryPolicy

    emu = EmulatedHand2("right", calibration_ticks=3)
    emu.fail_next("status:index", "timeout", count=2)
    clock = FakeClock(emu)
    report = calibrate_zero(SdkFingertipDevice(emu), poll_s=0.1, clock=clock, sleep=clock.sleep,
                            policy=RetryPolicy(timeout_s=0.5, backoff_s=0.01))
    assert report.fallback == () and emu.faults.fired == [("status:index", "timeout")] * 2


def test_zero_calibration_timeout_names_each_finger_and_its_state():
    emu = EmulatedHand2("right", calibration_ticks=1000)
    clock = FakeClock(emu)
    with pytest.raises(ProducerError, match=r"not done after 1.0 s: thumb \(calibrating\), index \(calibrating\)"):
        calibrate_zero(SdkFingertipDevice(emu), poll_s=0.1, timeout_s=1.0, fallback_after_s=0.5, clock=clock,
                       sleep=clock.sleep)
