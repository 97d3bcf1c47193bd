#!/usr/bin/env python3
"""Check an installed wuji-sdk against every SDK attribute the hardware producer uses.

    python tools/check_sdk.py            # the installed `wuji_sdk`
    python tools/check_sdk.py --json     # machine-readable

The list is `wuji_tactile_device.producers.hardware.device.SDK_SURFACE` ("Name" = a module-level
name, "Class.attr" = a method, property or field descriptor of that class). On top of presence it
checks the few values the producer relies on: the status enums compare equal to 0/1, the
handedness enum maps Left/Right to 0/1, `SdkManager.connect` takes the keywords sn, address,
handedness, device_name, options, `FrameHeader(seq, timestamp_us, frame_id)` and
`ConnectOptions(timeout_ms=…)` construct, `NodeOfflineError` derives from `WujiException`, and
`WujiHand2.nid_to_joint_index` maps the joint state stream's node ids to the firmware joint order
exactly as the producer's own table does (bus·5 + node → bus·4 + node − 1).
Exit status 0 when everything is there, 1 otherwise (each missing item named), 2 when no SDK is
installed. See docs/hardware.md ("Verifying a new wuji-sdk release").
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _resolve(module: Any, dotted: str) -> tuple[bool, str]:
    obj = module
    for part in dotted.split("."):
        if not hasattr(obj, part):
            return False, f"{dotted}: {getattr(obj, '__name__', type(obj).__name__)} has no attribute {part!r}"
        obj = getattr(obj, part)
    return True, ""


def behaviours() -> list[tuple[str, Any]]:
    """The values the producer relies on: (what, test(module) → bool)."""
    return [
        ("FingertipSensorState.Ready == 0", lambda m: m.FingertipSensorState.Ready == 0),
        ("FingertipSensorState.Calibrating == 1", lambda m: m.FingertipSensorState.Calibrating == 1),
        ("FingertipSensorModel.Standard == 0", lambda m: m.FingertipSensorModel.Standard == 0),
        ("FingertipSensorModel.Thumb == 1", lambda m: m.FingertipSensorModel.Thumb == 1),
        ("int(Handedness.Left) == 0", lambda m: int(m.Handedness.Left) == 0),
        ("int(Handedness.Right) == 1", lambda m: int(m.Handedness.Right) == 1),
        ("NodeOfflineError is a WujiException", lambda m: issubclass(m.NodeOfflineError, m.WujiException)),
        ("FrameHeader(seq, timestamp_us, frame_id) constructs",
         lambda m: m.FrameHeader(1, 2, "x").timestamp_us == 2),
        ("ConnectOptions(timeout_ms=...) constructs", lambda m: m.ConnectOptions(timeout_ms=250).timeout_ms == 250),
        ("HwVersion(major, minor, patch) constructs", lambda m: m.HwVersion(1, 2, 3).patch == 3),
        ("SdkManager.connect takes sn, address, handedness, device_name, options", _connect_keywords),
        ("WujiHand2.nid_to_joint_index agrees with the producer's nid table", _nid_table),
    ]


def check(module: Any) -> list[str]:
    """Problems found in `module` (an imported wuji_sdk, or a stand-in); [] when it fits."""
    from wuji_tactile_device.producers.hardware.device import SDK_SURFACE

    problems = [msg for ok, msg in (_resolve(module, name) for name in SDK_SURFACE) if not ok]
    for what, test in behaviours():
        try:
            ok = bool(test(module))
        except Exception as exc:  # noqa: BLE001 - any failure is a finding, reported with its cause
            problems.append(f"{what}: {type(exc).__name__}: {exc}")
            continue
        if not ok:
            problems.append(f"{what}: false")
    return problems


def _connect_keywords(m: Any) -> bool:
    params = inspect.signature(m.SdkManager.connect).parameters  # raises when not introspectable
    return all(k in params for k in ("sn", "address", "handedness", "device_name", "options"))


def _nid_table(m: Any) -> bool:
    from wuji_tactile_device.producers.hardware.joint_states import NID_TO_JOINT

    joints = [n for n in range(NID_TO_JOINT.size) if NID_TO_JOINT[n] >= 0]
    return len(joints) == 20 and all(int(m.WujiHand2.nid_to_joint_index(n)) == NID_TO_JOINT[n] for n in joints)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print a JSON report")
    args = ap.parse_args(argv)
    os.environ.setdefault("WUJI_TELEMETRY_DISABLE", "1")
    try:
        import wuji_sdk
    except ImportError:
        print("check_sdk: wuji_sdk is not installed (pip install 'wuji-tactile-device[hardware]')", file=sys.stderr)
        return 2
    from wuji_tactile_device.producers.hardware.device import SDK_SURFACE

    problems = check(wuji_sdk)
    version = getattr(wuji_sdk, "__version__", "?")
    if args.json:
        print(json.dumps({"wuji_sdk": version, "checked": len(SDK_SURFACE) + len(behaviours()), "problems": problems},
                         indent=1))
    else:
        print(f"wuji_sdk {version}: {len(SDK_SURFACE)} attributes + {len(behaviours())} behaviours checked, "
              f"{len(problems)} problem(s)")
        for p in problems:
            print(f"  MISSING/CHANGED  {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
