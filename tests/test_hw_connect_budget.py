"""N1: `hw --sn SERIAL` with no hand fails within its stated budget.

The vendor SDK's search by serial number asks other SDK instances over its bridge after USB and
the network: ~15 s for a hand no one has, holding the GIL (no thread can give up on it). So the
connection searches USB and the network with the bridge off, and only then the bridge in a
child process killed at its budget (`producers.hardware.bridge_probe`). The tests run the real
probe script against fake `wuji_sdk` modules (one that blocks for a minute, one that does not know
the hand, one that has it) and the connection against the emulated SDK manager."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

from wuji_tactile_device.errors import ProducerError
from wuji_tactile_device.producers.emulated import EmulatedHand2
from wuji_tactile_device.producers.emulated import EmulatedSdkManager
from wuji_tactile_device.producers.hardware.bridge_probe import bridge_budget_s, probe_command, search_bridge
from wuji_tactile_device.producers.hardware.device import connect_sdk_hand
from wuji_tactile_device.producers.hardware.recovery import RetryPolicy

FAKE_SDK = """
import time

class ConnectOptions:
    def __init__(self, timeout_ms=1000, retry_count=3, enable_bridge=True, auto_time_sync_interval_ms=30000):
        self.timeout_ms, self.enable_bridge = timeout_ms, enable_bridge

class SdkManager:
    @staticmethod
    def instance():
        return SdkManager()

    def connect(self, *, sn=None, device_name, options=None):
        assert options.enable_bridge, "the probe must search the bridge"
        {body}
"""


def _fake_sdk(tmp_path, body: str):
    d = tmp_path / "fake_sdk"
    (d / "wuji_sdk").mkdir(parents=True)
    (d / "wuji_sdk" / "__init__.py").write_text(textwrap.dedent(FAKE_SDK).replace("{body}", body))
    return d


def _probe_env(monkeypatch, sdk_dir):
    monkeypatch.setenv("PYTHONPATH", str(sdk_dir))  # the child sees the fake SDK only


def test_n1_a_bridge_search_that_blocks_is_abandoned_at_its_budget(tmp_path, monkeypatch):
    _probe_env(monkeypatch, _fake_sdk(tmp_path, "time.sleep(60)  # the SDK's bridge search, never answering"))
    start = time.monotonic()
    reason = search_bridge("WUJK0001", 1.5, timeout_ms=500)
    took = time.monotonic() - start
    assert reason is not None
    assert "WUJK0001" in reason and "within the 1.5 s budget" in reason and "abandoned" in reason, reason
    assert 1.5 <= took < 1.5 + 8, f"{took:.1f} s for a 1.5 s budget (the fake blocks 60 s)"


def test_n1_the_probe_reports_a_hand_the_bridge_does_not_know(tmp_path, monkeypatch):
    _probe_env(monkeypatch, _fake_sdk(tmp_path, "raise RuntimeError('Device not found')"))
    reason = search_bridge("WUJK0001", 20.0)
    assert reason is not None and reason.startswith("no other SDK instance has WUJK0001 either (bridge search, ")
    assert reason.endswith("of its 20 s budget: Device not found)"), reason


def test_n1_the_probe_finds_a_hand_another_sdk_instance_has(tmp_path, monkeypatch):
    _probe_env(monkeypatch, _fake_sdk(tmp_path, "return object()"))
    assert search_bridge("WUJK0001", 20.0) is None


def test_n1_probe_command_runs_this_file_as_a_script_with_the_timeout():
    cmd = probe_command("WUJK0001", 1000)
    assert cmd[0] == sys.executable and cmd[1].endswith("bridge_probe.py") and cmd[2:] == ["WUJK0001", "1000"]
    # the script imports nothing of the package (it must start fast): the vendor SDK only
    src = open(cmd[1]).read()
    assert "from .." not in src and "import wuji_tactile_device" not in src


def test_n1_budget_follows_the_timeout():
    assert bridge_budget_s(1000) == 3.0 and bridge_budget_s(100) == 3.0 and bridge_budget_s(2500) == 7.5


class _Manager(EmulatedSdkManager):
    """The emulated SDK manager, recording each connect's bridge option; with `bridged`, the
    hands it holds answer only over the bridge (another SDK instance has them)."""

    def __init__(self, hands, bridged: bool = False):
        super().__init__(hands)
        self.bridged, self.calls = bridged, []

    def connect(self, **kwargs):
        bridge = getattr(kwargs.get("options"), "enable_bridge", True)
        self.calls.append(bridge)
        if self.bridged and not bridge:
            from wuji_tactile_device.producers.hardware.sdk import EmulatedSdkError

            raise EmulatedSdkError("Device not found")
        return super().connect(**kwargs)

    def scan(self):
        return [] if self.bridged else super().scan()


POLICY = RetryPolicy(timeout_s=0.5, attempts=5, backoff_s=0.01, max_backoff_s=0.02)


def test_n1_an_absent_serial_number_fails_with_the_bridge_budget_named():
    pytest.importorskip("wuji_sdk", reason="the bridge option is the vendor SDK's ConnectOptions")
    asked = []

    def bridge(sn, budget):
        asked.append((sn, budget))
        return f"no other SDK instance reported {sn} over the bridge within the {budget:g} s budget"

    manager = _Manager([EmulatedHand2("left")])  # another hand is there, not this one
    with pytest.raises(ProducerError) as err:
        connect_sdk_hand(sn="WUJK0001", manager=manager, policy=POLICY, bridge_search=bridge)
    msg = str(err.value)
    assert manager.calls == [False], "one search, with the SDK's bridge off"
    assert asked == [("WUJK0001", 3.0)]
    assert "WUJK0001 is not on USB or the network (a fresh scan lists " in msg and "not retried" in msg, msg
    assert "no other SDK instance reported WUJK0001 over the bridge within the 3 s budget" in msg, msg


def test_n1_a_hand_another_sdk_instance_holds_is_connected_over_the_bridge():
    pytest.importorskip("wuji_sdk", reason="the bridge option is the vendor SDK's ConnectOptions")
    hand = EmulatedHand2("right")
    manager = _Manager([hand], bridged=True)
    device = connect_sdk_hand(sn=hand.serial_number, manager=manager, policy=POLICY,
                              bridge_search=lambda sn, budget: None)
    try:
        assert device.serial_number == hand.serial_number
        assert manager.calls == [False, True]  # USB and network first, then the bridge
        device._connector()  # a reconnection (after a lost link) goes where the hand was found
        assert manager.calls[-1] is True
    finally:
        device.close()


def test_n1_a_hand_found_locally_never_searches_the_bridge():
    pytest.importorskip("wuji_sdk", reason="the bridge option is the vendor SDK's ConnectOptions")
    hand = EmulatedHand2("right")
    manager = _Manager([hand])

    def bridge(sn, budget):
        raise AssertionError("the bridge must not be searched for a hand on the network")

    device = connect_sdk_hand(sn=hand.serial_number, manager=manager, policy=POLICY, bridge_search=bridge)
    try:
        assert manager.calls == [False]
        device._connector()  # a reconnection stays off the bridge (no 15 s GIL-held search per try)
        assert manager.calls == [False, False]
    finally:
        device.close()


def test_n1_the_script_prints_found_or_absent(tmp_path):
    """The probe script itself, against the fake SDK (exit 0 `found` / exit 3 `absent: ...`)."""
    import os

    env = {**os.environ, "PYTHONPATH": str(_fake_sdk(tmp_path, "raise RuntimeError('Device not found')"))}
    done = subprocess.run(probe_command("WUJK0001", 1000), capture_output=True, text=True, env=env, timeout=60)
    assert (done.returncode, done.stdout) == (3, "absent: Device not found\n"), done.stderr


def test_n1_the_probe_answer_wins_over_the_sdks_log_lines(tmp_path, monkeypatch):
    """The SDK logs INFO lines on stderr (the real one: "not found via scan, trying Zenoh"); the
    reason quoted is the probe's own answer."""
    body = ("import sys; print('[INFO wuji_sdk] trying Zenoh', file=sys.stderr, flush=True); "
            "raise RuntimeError('Device not found')")
    _probe_env(monkeypatch, _fake_sdk(tmp_path, body))
    reason = search_bridge("WUJK0001", 20.0)
    assert reason is not None and reason.endswith("budget: Device not found)"), reason
