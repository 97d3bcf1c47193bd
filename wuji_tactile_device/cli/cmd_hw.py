"""`wuji-tactile hw`: publish a Wuji Hand 2's fingertip tactile data (real hand through the vendor
SDK, or the emulated hand driven by the simulation), optionally recording an MCAP; or run the
pads' zero calibration.

    wuji-tactile hw --hand right [--address A | --sn S] [--record out.mcap] [--publish zenoh]
    wuji-tactile hw --emulate --scenario press [--firmware normalized --full-scale FILE] [--fault ...]
    wuji-tactile hw --calibrate-zero --hand right [--sn S] [--yes]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from ..errors import ProducerError
from ..producers.emulated.fault_schedule import FAULT_KINDS, FaultSchedule
from .args import base_pose, existing_file, fault, positive_int, positive_rate, positive_seconds, seed, sensor_model_file
from .common import (add_foxglove_arguments, add_publish_arguments, add_recording_arguments, add_view_recording_argument, exit_code, run_producer,
                     wants_zenoh)

def register(subparsers) -> None:
    p = subparsers.add_parser(
        "hw", help="publish a Wuji Hand 2's fingertip tactile data (real or emulated)",
        description="Connect to a Wuji Hand 2 (vendor SDK, extra 'hardware') or emulate one driven by "
                    "the MuJoCo simulation, and publish its 176 fingertip taxels as the tactile contract. "
                    "Forces in newtons, taxel axes (+Z outward normal), force ON the taxel (a press gives fz < 0).")
    src = p.add_argument_group("device")
    src.add_argument("--hand", choices=("right", "left"),
                     help="hand side: connects to that hand, or checks the one given by --sn/--address "
                          "(default: the side the hand reports; --emulate: right)")
    src.add_argument("--list", action="store_true", help="list the Wuji Hand 2 devices found and exit")
    who = src.add_mutually_exclusive_group()
    who.add_argument("--address", metavar="A", help="connect by address (IP:port) instead of handedness")
    who.add_argument("--sn", metavar="S", help="connect by serial number instead of handedness")
    who.add_argument("--emulate", action="store_true", help="no hardware: the emulated hand, fed by the simulation")
    src.add_argument("--timeout-ms", type=positive_int, default=1000, help="SDK reply timeout (default 1000). A hand that is not "
                     "there fails after one search, not retried: ~1 s by --hand/--address; by --sn, USB and the network, then "
                     "other SDK instances over the SDK's bridge for at most 3 x this timeout (at least 3 s)")
    emu = p.add_argument_group("emulation (--emulate)")
    emu.add_argument("--scenario", default="press", metavar="NAME",
                     help="simulation scenario feeding the emulated pads (default press; see `wuji-tactile sim --help`)")
    emu.add_argument("--firmware", choices=("newton", "normalized"), default="newton",
                     help="emulated firmware: point forces in N (< v2.4.0) or normalized (≥ v2.4.0)")
    emu.add_argument("--no-placement", action="store_true",
                     help="emulate older firmware whose format has no positions / mounting pose keys")
    emu.add_argument("--fast", action="store_true", help="run as fast as possible instead of real time")
    emu.add_argument("--seed", type=seed, default=0, help="simulation seed (same as `wuji-tactile sim --seed`)")
    emu.add_argument("--joints", metavar="FILE", type=existing_file, help="playback scenario: joint angle file (see `wuji-tactile sim`)")
    emu.add_argument("--rate", type=positive_rate, default=100.0, help="playback scenario: rows per second (default 100)")
    emu.add_argument("--contact-model", choices=("distributed", "gaussian"), default="distributed",
                     help="simulation contact model feeding the emulated pads (see `wuji-tactile sim --help`)")
    emu.add_argument("--sensor-model", metavar="FILE.json", type=sensor_model_file,
                     help="sensor model applied to the simulated forces before the emulated device encodes "
                          "them (see `wuji-tactile sim --help`; 'example': the shipped one), seeded by --seed")
    emu.add_argument("--fault", action="append", default=[], metavar="KIND:FINGER@T0[-T1]", type=fault,
                     help=f"inject a fault at scenario time T0 [s] (until T1 for offline/stall); KIND in "
                          f"{', '.join(FAULT_KINDS)}; e.g. offline:ring@1.0-1.5, truncated:index@0.3, "
                          "revise:middle@2 (new encoding), jump@2.0 (device clock +10 s); repeatable")
    conv = p.add_argument_group("conversion")
    conv.add_argument("--axes", default="+x,+y,+z", metavar="X,Y,Z",
                      help="contract taxel X,Y,Z as signed device point axes (default +x,+y,+z)")
    conv.add_argument("--force-sign", type=int, choices=(-1, 1), default=-1,
                      help="-1: the device reports the force the pad exerts (a press reads +fz; default); "
                           "+1: the force on the pad")
    conv.add_argument("--full-scale", metavar="FILE", type=existing_file, help="full-scale calibration file (normalized firmware)")
    conv.add_argument("--layout", choices=("device", "sim"), default="device",
                      help="taxel placement: the device's own (default); 'sim' uses the simulation's pad "
                           "layout for fingers whose format declares none")
    conv.add_argument("--assume-point-unit", choices=("N", "normalized"),
                      help="point unit for formats that declare none (otherwise refused)")
    conv.add_argument("--sync-tolerance-ms", type=positive_seconds,
                      help="max device-time spread in one tick (default one tick period: fingers are paired "
                           "by nearest sample within a period)")
    conv.add_argument("--stale-ms", type=positive_seconds, help="silence after which a finger is unavailable (default 5 periods)")
    out = p.add_argument_group("output")
    out.add_argument("--collection", metavar="ID", help="collection id (default tactile/<hand>)")
    add_recording_arguments(out, ", with the device's own per-finger resultants and temperatures on topic "
                                 "<collection>/device_resultants")
    out.add_argument("--base-pose", metavar="X,Y,Z,QX,QY,QZ,QW", type=base_pose,
                     help="fixed pose [m, unit quaternion] of the hand's OpenXR wrist frame in your base frame, for "
                          "the recorded hand poses (default: the wrist frame is the base; the hand does not measure "
                          "where its wrist is)")
    out.add_argument("--no-hand-poses", action="store_true",
                     help="do not record the hand's joint poses (Isaac Teleop hand channels hands/<side>_hand)")
    add_view_recording_argument(out)
    out.add_argument("--duration", type=positive_seconds, metavar="S", help="stop after S seconds (default: Ctrl-C; emulation: scenario length)")
    add_publish_arguments(p)
    add_foxglove_arguments(p)  # the run loop serves the view (cli.common.run_producers)
    cal = p.add_argument_group("zero calibration")
    cal.add_argument("--calibrate-zero", action="store_true",
                     help="re-zero all five pads (they must be unloaded) and exit")
    cal.add_argument("--yes", action="store_true", help="do not ask for confirmation that the pads are unloaded")
    p.set_defaults(run=run)


def _config(args, side: str):
    from ..producers.hardware import AxisMapping, HardwareConfig

    from ..producers.emulated import simulation_layout

    fallback = simulation_layout(side) if args.layout == "sim" else None
    return HardwareConfig(
        side=side, collection_id=args.collection, axis_mapping=AxisMapping.parse(args.axes, args.force_sign),
        full_scale_path=args.full_scale, fallback_layout=fallback, assume_point_unit=args.assume_point_unit,
        tolerance_us=None if args.sync_tolerance_ms is None else int(args.sync_tolerance_ms * 1000),
        stale_after_s=None if args.stale_ms is None else args.stale_ms / 1000,
        hand_poses=not args.no_hand_poses, base_pose=args.base_pose)


def _open_device(args):
    """(device, emulator or None, side). The side is checked against what the hand reports (a
    mismatch is refused) or, without --hand, taken from it."""
    # The vendor SDK prints a telemetry notice unless told not to: silenced here, for this
    # command, unless the user set the variable (library users choose for themselves).
    os.environ.setdefault("WUJI_TELEMETRY_DISABLE", "1")
    from ..producers.emulated import EmulatedHand2, EmulatedSdkManager
    from ..producers.hardware import connect_sdk_hand, resolve_side

    emu, manager = None, None
    if args.emulate:
        from ..producers.hardware import AxisMapping
        emu = EmulatedHand2(args.hand or "right", firmware=args.firmware, mounting=not args.no_placement,
                            positions=not args.no_placement, axis_mapping=AxisMapping.parse(args.axes, args.force_sign))
        manager = EmulatedSdkManager([emu])  # the same connect / reconnect path as a real hand
        device = connect_sdk_hand(sn=emu.serial_number, side=args.hand, manager=manager, timeout_ms=args.timeout_ms)
    else:
        if not (args.sn or args.address or args.hand):
            raise ProducerError("name the hand: --hand right|left, --sn SERIAL or --address IP:PORT "
                                "(`wuji-tactile hw --list` shows the hands found)")
        device = connect_sdk_hand(side=args.hand, sn=args.sn, address=args.address, timeout_ms=args.timeout_ms)
    identity = getattr(device, "identity", None)
    try:
        side = resolve_side(args.hand, identity.side if identity is not None else None,
                            serial_number=device.serial_number,
                            source=(identity.side_source if identity is not None else "") or "handedness()")
    except BaseException:
        device.close()
        raise
    return device, emu, side


def run(args: argparse.Namespace) -> int:
    if args.list:
        return _list_hands()
    if args.calibrate_zero:
        return _calibrate(args)
    if not args.record and not wants_zenoh(args) and not getattr(args, "foxglove", False):
        print("wuji-tactile hw: note: nothing leaves this process (no --record, --publish inproc)", file=sys.stderr)
    faults = list(args.fault)  # parsed by args.fault
    if faults and not args.emulate:
        raise ProducerError("--fault needs --emulate (faults are injected into the emulated hand)")
    device, emu, side = _open_device(args)
    return _publish(args, device, emu, side, faults)


def _list_hands() -> int:
    os.environ.setdefault("WUJI_TELEMETRY_DISABLE", "1")
    from ..producers.hardware import scan_hands

    hands = scan_hands()
    if not hands:
        print("wuji-tactile hw: no Wuji Hand 2 found (USB or network)", file=sys.stderr)
        return 0
    for hand in hands:
        print(hand.describe())
    return 0


def _publish(args, device, emu, side: str, faults) -> int:
    from ..producers.emulated.simulation import EmulatedHandProducer, simulation_ticks
    from ..producers.base import Producer
    from ..producers.hardware import HardwareProducer

    try:
        config = _config(args, side)
        hw = HardwareProducer(device, config)
    except BaseException:
        device.close()
        raise
    producer: Producer = hw
    duration, speed = args.duration, None
    if emu is not None:
        sensor_model = None
        if args.sensor_model:
            from ..producers.sim.sensor_model import SensorModel

            sensor_model = SensorModel.from_file(args.sensor_model, side, seed=args.seed)
        source = simulation_ticks(side, args.scenario, seed=args.seed, duration_s=args.duration,
                                   playback_file=args.joints, playback_rate=args.rate,
                                   contact_model=args.contact_model, sensor_model=sensor_model)
        producer = EmulatedHandProducer(emu, hw, source, before_tick=FaultSchedule(faults))
        duration, speed = None, None if args.fast else 1.0  # the scenario's length (cut by --duration) ends it
    source_name = "the emulated hand" if emu else f"hand {device.serial_number}"
    layout = ", ".join(f"{k}: {v}" for k, v in hw.layout_sources.items())
    announce = (f"hw: publishing {config.collection}: {hw.num_taxels} taxels at {hw.rate_hz:g} Hz from {source_name}; "
                f"layout {layout}; axes: {config.axis_mapping.describe()}")
    run = run_producer(producer, args, desc="hw", duration_s=duration, speed=speed, announce=announce,
                       log_name="wuji_tactile_device.producers.hardware", metadata_period_s=config.metadata_period_s)
    c = hw.counters
    lost = {k: sum(getattr(c, k).values()) for k in ("dropped", "lost", "late", "duplicate", "malformed",
                                                     "digest_mismatch")}
    print(f"hw: published {run.published} frames; " + ", ".join(f"{k} {v}" for k, v in lost.items())
          + f"; superseded {sum(c.superseded.values())}; incomplete ticks {c.incomplete_ticks}"
          + f"; clock jumps {c.clock_jumps}; info revisions {c.info_revisions}; saturated "
          f"{sum(c.saturated.values())}; recoveries {c.recovery.recovered}, reconnects "
          f"{c.link.reconnects}" + (f"; wrote {args.record}" if args.record else ""), file=sys.stderr)
    return exit_code(run)


def _calibrate(args) -> int:
    from ..producers.hardware.zero_calibration import UNLOADED_WARNING, calibrate_zero

    print(f"wuji-tactile hw: {UNLOADED_WARNING}", file=sys.stderr)
    if not args.yes:
        if not sys.stdin.isatty():
            raise ProducerError("zero calibration needs confirmation that the pads are unloaded: pass --yes")
        if input("Are all five pads unloaded? [y/N] ").strip().lower() not in ("y", "yes"):
            print("wuji-tactile hw: zero calibration cancelled", file=sys.stderr)
            return 1
    device, emu, _side = _open_device(args)
    sleep = time.sleep
    if emu is not None:
        import numpy as np
        sleep = lambda s: emu.emit(np.zeros((emu.num_taxels, 3)))  # noqa: E731 - the emulator advances per tick
    try:
        done = calibrate_zero(device, on_poll=lambda st: None, sleep=sleep)
    finally:
        device.close()
    print(f"wuji-tactile hw: zero calibration done: {done.describe()}", file=sys.stderr)
    if done.fallback:
        print(f"wuji-tactile hw: warning: {', '.join(done.fallback)} never showed the Calibrating state; "
              "accepted by the fallback rule (Ready after the fallback time) — check those pads' zero",
              file=sys.stderr)
    return 0

