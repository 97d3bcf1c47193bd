"""Which hand is this: the side check (refuse a mismatch, or take the side from the device), a
unique connection name per producer, the identity recorded in the file metadata, scanning for
hands, and the hardware package's independence from the simulation."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from hw_loop import OnLoop
from wuji_tactile_device.errors import ProducerError
from wuji_tactile_device.producers.emulated import EmulatedHand2
from wuji_tactile_device.producers.emulated import EmulatedSdkManager
from wuji_tactile_device.producers.hardware import (HandednessMismatchError, HardwareConfig, HardwareProducer,
                                                    SdkFingertipDevice, connect_sdk_hand, connection_name,
                                                    resolve_side, scan_hands)
from wuji_tactile_device.producers.hardware.device import sdk_module
from wuji_tactile_device.producers.hardware.identity import normalise_side, side_from_serial
from wuji_tactile_device.streams.inproc import InProcessBus

sdk = sdk_module()


def test_resolve_side():
    assert resolve_side(None, "left") == "left"  # --hand not given: the device says
    assert resolve_side("right", "right") == "right"
    assert resolve_side("left", None) == "left"  # a hand that cannot say: the request stands
    with pytest.raises(HandednessMismatchError, match=r"^--hand right was asked for, but hand EMUJ0001 reports it is a "
                                                      r"left hand \(handedness\(\)\); refusing to publish right-hand "
                                                      r"geometry for a left hand\. Pass --hand left, or omit --hand"):
        resolve_side("right", "left", serial_number="EMUJ0001")
    with pytest.raises(ProducerError, match="does not report its side .*: give --hand left or --hand right"):
        resolve_side(None, None)
    with pytest.raises(ValueError, match="side must be one of right, left or None, got 'up'"):
        resolve_side("up", "left")


@pytest.mark.parametrize("value,side", [("left", "left"), ("Right", "right"), (0, "left"), (1, "right"),
                                        ("Unknown", None), (None, None), (2, None), ("Handedness.Left", "left")])
def test_handedness_values_the_sdk_may_return(value, side):
    assert normalise_side(value) == side


@pytest.mark.skipif(sdk is None, reason="checks the vendor SDK's own Handedness enum")
def test_sdk_handedness_enum_normalises():
    assert normalise_side(sdk.Handedness.Left) == "left" and normalise_side(sdk.Handedness.Right) == "right"
    assert normalise_side(int(sdk.Handedness.Left)) == "left" and normalise_side(int(sdk.Handedness.Right)) == "right"


def test_serial_number_convention():
    assert side_from_serial("WUJK0001") == "right" and side_from_serial("WUJJ0001") == "left"
    assert side_from_serial("WUJX0001") is None and side_from_serial("") is None


def test_producer_refuses_a_hand_that_reports_the_other_side():
    emu = EmulatedHand2("right", reported_side="left")  # e.g. --hand right, connected by serial to a left hand
    with pytest.raises(HandednessMismatchError, match="--hand right was asked for, but hand EMUK0001 reports it is a left hand"):
        OnLoop(HardwareProducer(SdkFingertipDevice(emu), HardwareConfig(side="right")), InProcessBus())


def test_connect_checks_the_side_against_what_the_hand_reports():
    right, left = EmulatedHand2("right"), EmulatedHand2("left")
    manager = EmulatedSdkManager([right, left])
    with pytest.raises(HandednessMismatchError, match="reports it is a left hand"):
        connect_sdk_hand(side="right", sn=left.serial_number, manager=manager)
    dev = connect_sdk_hand(side="left", manager=manager)  # by side: the SDK's own selection
    assert dev.serial_number == "EMUJ0001" and dev.identity.side == "left"


def test_two_producers_in_one_process_get_distinct_connection_names():
    names = {connection_name("right") for _ in range(3)} | {connection_name(None)}
    assert len(names) == 4 and not any("/" in n or "." in n for n in names)
    right, left = EmulatedHand2("right"), EmulatedHand2("left")
    manager = EmulatedSdkManager([right, left])
    a = connect_sdk_hand(sn=right.serial_number, manager=manager)
    b = connect_sdk_hand(sn=left.serial_number, manager=manager)
    assert right.device_name != left.device_name and a.hand.is_connected and b.hand.is_connected
    # the name matters: the SDK routes by it, a second connection under the same name is refused
    with pytest.raises(Exception, match="already in use"):
        manager.connect(sn=left.serial_number, device_name=right.device_name)


def test_identity_and_unknown_format_keys_reach_the_file_metadata():
    emu = EmulatedHand2("right", firmware_version="v2.4.1", hw_version=(2, 1, 0),
                        format_extras={"calibrated_at": "2026-11-02"}, temperature_unit="celsius")
    producer = OnLoop(HardwareProducer(SdkFingertipDevice(emu), HardwareConfig(side="right")), InProcessBus())
    meta = producer.device_metadata()
    assert meta["device_serial_number"] == "EMUK0001" and meta["device_side"] == "right"
    assert meta["device_side_source"] == "handedness()"
    assert meta["device_firmware_version"] == "v2.4.1" and meta["device_hardware_version"] == "2.1.0"
    if sdk is not None:
        assert meta["wuji_sdk_version"] == sdk.__version__
    assert meta["format_unknown_thumb"] == "top-level key 'calibrated_at' = \"2026-11-02\""
    emu.emit(np.zeros((176, 3)))
    assert producer.step() == 1  # and it publishes


def test_scan_lists_hands_with_their_side_and_skips_unreachable_ones():
    right, left = EmulatedHand2("right", serial_number="WUJK0042"), EmulatedHand2("left", serial_number="WUJJ0007")
    manager = EmulatedSdkManager([right, left])
    hands = scan_hands(manager)
    assert [(h.serial_number, h.side, h.device_type) for h in hands] == [("WUJJ0007", "left", "WujiHand2"),
                                                                         ("WUJK0042", "right", "WujiHand2")]
    assert hands[0].describe() == "WUJJ0007  192.168.1.51:8000  left  WujiHand2  firmware v2.3.1"
    left.lose_link()
    assert [h.serial_number for h in scan_hands(manager)] == ["WUJK0042"]
    manager.fail_next("scan", "timeout")
    with pytest.raises(ProducerError, match="scanning for Wuji devices failed: OperationTimeout"):
        scan_hands(manager)


def test_importing_the_hardware_package_does_not_import_the_simulation():
    code = ("import sys; import wuji_tactile_device.producers.hardware as h; "
            "bad = sorted(m for m in sys.modules if m == 'mujoco' or m.startswith('mujoco.') "
            "or m.startswith('wuji_tactile_device.producers.sim')); print(bad); sys.exit(1 if bad else 0)")
    import os
    from pathlib import Path

    import wuji_tactile_device

    root = str(Path(wuji_tactile_device.__file__).resolve().parent.parent)  # this checkout, not another install
    env = {**os.environ, "PYTHONPATH": root, "WUJI_TELEMETRY_DISABLE": "1"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env, cwd=root)
    assert r.returncode == 0, r.stdout + r.stderr
