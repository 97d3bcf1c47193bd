"""tools/check_sdk.py: every SDK attribute the hardware producer uses, checked against the
installed wuji-sdk — and it does catch a missing or changed one."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
import types
from pathlib import Path

import pytest

from wuji_tactile_device.producers.hardware.device import SDK_SURFACE, sdk_module

TOOL = Path(__file__).resolve().parent.parent / "tools" / "check_sdk.py"
sdk = sdk_module()
needs_sdk = pytest.mark.skipif(sdk is None, reason="checks the installed vendor SDK")


def load_tool():
    spec = importlib.util.spec_from_file_location("check_sdk", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@needs_sdk
def test_installed_sdk_has_everything_the_producer_uses():
    assert load_tool().check(sdk) == []
    r = subprocess.run([sys.executable, str(TOOL)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and f"{len(SDK_SURFACE)} attributes + 12 behaviours checked, 0 problem(s)" in r.stdout


@needs_sdk
def test_a_missing_or_changed_attribute_is_named():
    fake = types.ModuleType("wuji_sdk")
    fake.__dict__.update({k: getattr(sdk, k) for k in dir(sdk) if not k.startswith("__")})
    fake.__version__ = "2026.11.1"
    fake.WujiHand2 = type("WujiHand2", (), {k: getattr(sdk.WujiHand2, k) for k in dir(sdk.WujiHand2)
                                            if not k.startswith("__") and k != "fingertip_ring_info"})
    fake.FingertipSensorState = types.SimpleNamespace(Ready=1, Calibrating=2)  # renumbered
    problems = load_tool().check(fake)
    assert problems == ["WujiHand2.fingertip_ring_info: WujiHand2 has no attribute 'fingertip_ring_info'",
                        "FingertipSensorState.Ready == 0: false", "FingertipSensorState.Calibrating == 1: false"]


def test_the_surface_covers_every_accessor_the_adapter_calls():
    names = set(SDK_SURFACE)
    for f in ("thumb", "index", "middle", "ring", "pinky"):
        assert {f"WujiHand2.fingertip_{f}_info", f"WujiHand2.fingertip_{f}_data", f"WujiHand2.fingertip_{f}_status"} <= names
    assert {"SdkManager.scan", "SdkManager.connect", "WujiHand2.handedness", "WujiHand2.hw_version",
            "WujiHand2.joint_diagnostics", "DeviceInfo.firmware_version"} <= names


def test_the_hardware_extra_has_an_upper_bound_on_wuji_sdk():
    import tomllib

    pyproject = tomllib.loads((TOOL.parent.parent / "pyproject.toml").read_text(encoding="utf-8"))
    (spec,) = [d for d in pyproject["project"]["optional-dependencies"]["hardware"] if d.startswith("wuji-sdk")]
    assert spec == "wuji-sdk>=2026.10.26,<2026.11"
    if sdk is not None:  # the installed SDK is inside the verified range
        from packaging.version import Version

        assert Version("2026.10.26") <= Version(sdk.__version__) < Version("2026.11")
