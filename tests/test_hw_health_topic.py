"""The hand's health (joint diagnostics + per-finger tactile link status) on its own JSON topic of
the recording: values as the emulated hand reported them, conforming to the channel's schema,
one message per period, and a finger going offline visible in it."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from mcap.reader import make_reader

from hw_loop import OnLoop
from wuji_tactile_device.hands.wuji_hand2 import FINGERS
from wuji_tactile_device.producers.emulated import EmulatedHand2
from wuji_tactile_device.producers.hardware import HardwareConfig, HardwareProducer, SdkFingertipDevice
from wuji_tactile_device.producers.hardware.device import sdk_module
from wuji_tactile_device.producers.hardware.health_topic import (HEALTH_SCHEMA, JOINT_NAMES, HealthRecorder,
                                                                  joint_name)
from wuji_tactile_device.recording import McapRecorder, inspect_file
from wuji_tactile_device.recording.json_channel import violations
from wuji_tactile_device.streams.inproc import InProcessBus

TOPIC = "tactile/right/health"


def record(path: Path, ticks: int = 120, *, ring_offline=(60, 90), joint_error=None):
    emu = EmulatedHand2("right", diagnostics_every=5)
    if joint_error:
        emu.set_joint_error(*joint_error)
    bus = InProcessBus()
    producer = OnLoop(HardwareProducer(SdkFingertipDevice(emu), HardwareConfig(side="right")), bus)
    now = [0]
    with McapRecorder(path) as rec:
        rec.add_collection(bus, "tactile/right")
        health = HealthRecorder(rec, "tactile/right", producer, period_s=0.1, clock=lambda: now[0])
        for k in range(ticks):
            if k == ring_offline[0]:
                emu.set_online("ring", False)
            if k == ring_offline[1]:
                emu.set_online("ring", True)
            emu.emit(np.zeros((176, 3)))
            producer.step()
            rec.poll()
            health.poll()
            now[0] += 10_000_000  # 10 ms per tick
        producer.close()
    return emu, producer, health


def messages(path: Path) -> list[dict]:
    with open(path, "rb") as f:
        return [json.loads(m.data) for _s, c, m in make_reader(f).iter_messages() if c.topic == TOPIC]


def test_health_messages_conform_and_carry_what_the_hand_reported(tmp_path):
    path = tmp_path / "h.mcap"
    emu, producer, health = record(path, joint_error=(6, 0x1001))
    msgs = messages(path)
    assert len(msgs) == health.written == 12  # 1.2 s at one per 0.1 s
    for m in msgs:
        assert violations(m, HEALTH_SCHEMA) == []
    last = msgs[-1]
    frame = emu.joint_diagnostics_frame()
    # every joint, by name, with the emulated hand's own values (nid → joint as the SDK maps it)
    assert set(last["joints"]) == set(JOINT_NAMES)
    for e in frame.joints:
        j = last["joints"][joint_name(e.nid)]
        assert j["temperature_c"] == e.mcu_temp_c_fb and j["bus_voltage_v"] == e.vbus_v_fb
    assert last["joints"]["index_pip"]["error_code"] == 0x1001  # flat joint 6
    if sdk_module() is not None:  # the SDK's fault catalogue names the code
        assert last["joints"]["index_pip"]["error"] == "TestDeferredAuto"
    assert all(v["error_code"] == 0 for k, v in last["joints"].items() if k != "index_pip")
    published = [m["published"] for m in msgs]
    assert published == sorted(published) and producer.published - 10 <= published[-1] <= producer.published
    assert last["fingers"]["ring"]["available"]
    assert inspect_file(path).ok


def test_a_finger_offline_shows_in_the_link_status_and_availability(tmp_path):
    path = tmp_path / "h.mcap"
    record(path)
    msgs = messages(path)
    during = msgs[7]  # 0.7 s: ring has been offline since 0.6 s
    assert during["fingers"]["ring"]["online"] is False and during["fingers"]["ring"]["link_response_rate_pct"] == 0
    assert during["fingers"]["ring"]["available"] is False
    assert all(during["fingers"][f]["online"] for f in FINGERS if f != "ring")
    after = msgs[-1]
    assert after["fingers"]["ring"]["online"] is True and after["fingers"]["ring"]["available"] is True
    assert after["fingers"]["ring"]["frames_dropped"] > 0


@pytest.mark.skipif(sdk_module() is None, reason="compares with the vendor SDK's own nid mapping")
def test_joint_names_follow_the_sdks_nid_mapping():
    sdk = sdk_module()
    for nid in range(25):
        name = joint_name(nid)
        if nid % 5 == 0:
            assert name is None  # ROOT / tactile slots
            continue
        assert name == JOINT_NAMES[sdk.WujiHand2.nid_to_joint_index(nid)]


def test_without_diagnostics_only_the_producers_own_view_is_written(tmp_path):
    emu = EmulatedHand2("right", diagnostics_every=0)
    bus = InProcessBus()
    producer = OnLoop(HardwareProducer(SdkFingertipDevice(emu), HardwareConfig(side="right")), bus)
    with McapRecorder(tmp_path / "n.mcap") as rec:
        health = HealthRecorder(rec, "tactile/right", producer, period_s=0.1, clock=lambda: 0)
        emu.emit(np.zeros((176, 3)))
        producer.step()
        assert health.poll() and not health.poll()  # once per period
    (m,) = messages(tmp_path / "n.mcap")
    assert "joints" not in m and violations(m, HEALTH_SCHEMA) == [] and m["published"] == 1
