"""`wuji-tactile sim`: run the simulated Wuji Hand 2 (MuJoCo 4.0) and publish its 176 fingertip
taxels as the tactile contract, optionally recording an MCAP; the scenario's checks print at the end
and a failed check makes the exit status 1.

    wuji-tactile sim --scenario press --hand right --record out.mcap
    wuji-tactile sim --scenario lift --publish zenoh --realtime
    wuji-tactile sim --scenario playback --joints teleop.csv --rate 100
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from ..errors import ProducerError


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "sim", help="simulate the Wuji Hand 2 in MuJoCo and publish/record its fingertip taxels",
        description="Run a scenario on the simulated Wuji Hand 2 (MuJoCo 4.0, 1 ms physics, 100 Hz output) and "
                    "publish its 176 taxel forces (newtons, taxel axes, force ON the taxel: a press gives fz < 0) "
                    "through the tactile contract. Needs no network and no XR runtime by default.")
    p.add_argument("--scenario", choices=("press", "lift", "playback"), default="press",
                   help="press: thumb opposes four fingers on a fixed object (0.05→0.5 N ramp); lift: thumb and "
                        "index lift a 30 g block 80 mm; playback: joint targets from --joints (default press)")
    p.add_argument("--hand", choices=("right", "left"), default="right", help="hand side (default right)")
    p.add_argument("--collection", metavar="ID", help="collection id (default tactile/<hand>)")
    p.add_argument("--record", metavar="FILE.mcap", help="record both streams into this MCAP file")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --record file")
    p.add_argument("--publish", choices=("inproc", "zenoh"), default="inproc",
                   help="transport: inproc (this process only, default) or zenoh (loopback unless configured)")
    p.add_argument("--zenoh", metavar="ENDPOINT", action="append", default=[], help="Zenoh endpoint to connect to")
    p.add_argument("--zenoh-listen", metavar="ENDPOINT", action="append", default=[], help="Zenoh endpoint to listen on")
    p.add_argument("--zenoh-config", metavar="FILE", help="Zenoh JSON5 configuration file")
    p.add_argument("--realtime", action="store_true", help="pace to real time (default: as fast as possible)")
    p.add_argument("--images", metavar="FILE.npz",
                   help="also compute the 48×32 pad force images [N/pixel, pad frame] and save them (compressed)")
    p.add_argument("--seed", type=int, default=0, help="object placement jitter seed (same seed → identical output)")
    p.add_argument("--joints", metavar="FILE", help="playback: 20 joint angles [rad] per row, firmware order (CSV or .npy)")
    p.add_argument("--rate", type=float, default=100.0, help="playback: rows per second (default 100)")
    p.add_argument("--duration", type=float, metavar="S",
                   help="stop after S seconds of simulation time (checks then judge the partial run)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from ..producers.sim.layout_metadata import sim_metadata
    from ..producers.sim.producer import run_scenario
    from ..producers.sim.scenarios import make_scenario
    from ..streams.publisher import TactilePublisher
    from ..streams.inproc import InProcessBus

    if args.scenario == "playback" and not args.joints:
        raise ProducerError("scenario playback needs --joints FILE (20 angles per row, firmware order)")
    scenario = make_scenario(args.scenario, playback_file=args.joints, playback_rate=args.rate)
    if args.duration is not None and not args.duration > 0:
        raise ProducerError(f"--duration must be > 0 s, got {args.duration}")
    frames = scenario.num_frames if args.duration is None else min(scenario.num_frames, int(round(args.duration * 100)))
    cid = args.collection or f"tactile/{args.hand}"
    if args.publish == "zenoh":
        from ..streams.zenoh_transport import ZenohTransport
        transport = ZenohTransport(args.zenoh_config, listen=args.zenoh_listen or None, connect=args.zenoh or None)
    else:
        transport = InProcessBus()
    recorder = None
    images: list[np.ndarray] = []
    try:
        if args.record:
            from ..recording import McapRecorder
            recorder = McapRecorder(args.record, overwrite=args.overwrite,
                                    file_metadata={"producer_kind": "sim", "hand_side": args.hand,
                                                   "scenario": args.scenario, "seed": str(args.seed)})
            recorder.add_collection(transport, cid)
        publisher = TactilePublisher(cid, sim_metadata(args.hand), transport)

        def on_frame(sim, reading) -> None:
            if recorder is not None:
                recorder.poll()
            if args.images:
                images.append(reading.images.astype(np.float32))

        with publisher, tqdm(total=frames, unit="frame", desc=f"sim {args.scenario}",
                             disable=args.quiet, file=sys.stderr) as bar:
            result = run_scenario(scenario, side=args.hand, seed=args.seed, publisher=publisher,
                                  images=bool(args.images), realtime=args.realtime, on_frame=on_frame, progress=bar,
                                  max_frames=frames)
        if recorder is not None:
            recorder.poll()
    finally:
        if recorder is not None:
            recorder.close()
        close = getattr(transport, "close", None)
        if close is not None:
            close()
    if args.images:
        np.savez_compressed(Path(args.images), images=np.stack(images),
                            description=np.array("per frame: 5 pads (thumb..pinky) x 3 axes (pad frame) x 48 x 32 "
                                                 "[N/pixel], 100 Hz of simulation time"))
    print(result.report())
    if args.record:
        print(f"recorded {args.record} ({cid}, {result.frames} frames)")
    return 0 if result.passed else 1
