"""`wuji-tactile sim`: run the simulated Wuji Hand 2 (MuJoCo 4.0) and publish its 176 fingertip
taxels as the tactile contract, optionally recording an MCAP; the scenario's checks print at the end
and a failed check makes the exit status 1.

    wuji-tactile sim --scenario press --hand right --record out.mcap
    wuji-tactile sim --scenario lift --publish zenoh --realtime
    wuji-tactile sim --scenario playback --joints teleop.csv --rate 100
    wuji-tactile sim --scenario press --foxglove          # live 3-D view in Foxglove, real time

A recording holds the tactile collection and the simulated hand's 26 OpenXR joint poses (Isaac
Teleop's `hands/left_hand`, `hands/right_hand` channels), logged on the simulated clock (a 13 s
press is 13 s long however fast it ran; `--log-clock wall` logs the real publication times).
"""
from __future__ import annotations

import argparse

import numpy as np

from ..errors import ProducerError
from .args import existing_file, output_file, positive_rate, positive_seconds, seed, sensor_model_file
from .common import add_foxglove_arguments, add_publish_arguments, add_recording_arguments, add_view_recording_argument, exit_code, run_producer


#: `producers.sim.scenarios.SCENARIOS`, spelled out so that `--help` does not load MuJoCo (a test
#: keeps the two equal).
SCENARIOS = ("press", "lift", "playback", "nail-contact", "grasp-sphere", "grasp-cylinder", "grasp-box",
             "release", "slip", "roll")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "sim", help="simulate the Wuji Hand 2 in MuJoCo and publish/record its fingertip taxels",
        description="Run a scenario on the simulated Wuji Hand 2 (MuJoCo 4.0, 1 ms physics, 100 Hz output) and "
                    "publish its 176 taxel forces (newtons, taxel axes, force ON the taxel: a press gives fz < 0) "
                    "through the tactile contract. Needs no network and no XR runtime by default.")
    p.add_argument("--scenario", choices=SCENARIOS, default="press",
                   help="press: thumb opposes four fingers on a fixed object (0.05→0.5 N ramp); lift: thumb and "
                        "index lift a 30 g block 80 mm; grasp-sphere/-cylinder/-box: a free object grasped from "
                        "a table and lifted; release: let go under load; slip: a pad dragged across a surface "
                        "at constant normal load; roll: a cylinder rolled between thumb and index; "
                        "nail-contact: the sensing mask refuses a nail-side contact; playback: joint targets "
                        "from --joints (required for playback). docs/sim.md lists each scenario's checks")
    p.add_argument("--contact-model", choices=("distributed", "gaussian"), default="distributed",
                   help="how a pad's contact force spreads over its taxels: distributed (default; a compliant "
                        "layer indented by the object's geometry) or gaussian (a fixed blob per contact point)")
    p.add_argument("--sensor-model", metavar="FILE.json", type=sensor_model_file,
                   help="apply a sensor model (noise, drift, hysteresis, lag, latency, crosstalk, "
                        "quantisation, saturation, dead taxels; docs/sim.md) seeded by --seed; 'example': the "
                        "shipped example (`wuji-tactile sensor-model` prints it to copy and edit); default: ideal")
    p.add_argument("--hand", choices=("right", "left"), default="right", help="hand side (default right)")
    p.add_argument("--collection", metavar="ID", help="collection id (default tactile/<hand>)")
    add_recording_arguments(p, help_extra=", with the hand's joint poses on Isaac Teleop's hand channels")
    p.add_argument("--log-clock", choices=("simulated", "wall"), default="simulated",
                   help="log time of --record: simulated (start + simulated time, 10 ms per frame however fast "
                        "the run; default) or wall (when each frame was published)")
    add_view_recording_argument(p)
    p.add_argument("--hands-name", default="hands", metavar="NAME",
                   help="hand channel prefix of --record, the Isaac Teleop HandsSource name (default hands)")
    p.add_argument("--realtime", action="store_true",
                   help="pace to real time (default: as fast as possible; --foxglove implies it)")
    p.add_argument("--images", metavar="FILE.npz", type=output_file,
                   help="also compute the 48×32 pad force images [N/pixel, pad frame] and save them (compressed; "
                        "an existing file only with --overwrite); with --foxglove they are shown too")
    p.add_argument("--seed", type=seed, default=0, help="object placement jitter seed (same seed → identical output)")
    p.add_argument("--joints", metavar="FILE", type=existing_file, help="playback: 20 joint angles [rad] per row, firmware order (CSV or .npy)")
    p.add_argument("--rate", type=positive_rate, default=100.0, help="playback: rows per second (default 100)")
    p.add_argument("--duration", type=positive_seconds, metavar="S",
                   help="stop after S seconds of simulation time (checks then judge the partial run)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_publish_arguments(p)
    add_foxglove_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..producers.base import EXTRA_FORCE_IMAGES, FrameSink
    from ..producers.sim.producer import SimProducer
    from ..producers.sim.scenarios import make_scenario

    from ..recording.safe_files import check_target
    from .output import require_extra

    # Everything that can refuse the run is checked before any file is created or replaced.
    if args.foxglove:  # the recorded view is written by the package itself; the live server needs the SDK
        require_extra("foxglove", "view")
    if args.images:
        check_target(args.images, args.overwrite)  # the same rule as the recording
    if args.record:
        check_target(args.record, args.overwrite)
    if args.scenario == "playback" and not args.joints:
        raise ProducerError("scenario playback needs --joints FILE (20 angles per row, firmware order)")
    scenario = make_scenario(args.scenario, playback_file=args.joints, playback_rate=args.rate)
    scenario.contact_model = args.contact_model
    if args.sensor_model:
        from ..producers.sim.sensor_model import SensorModel

        scenario.sensor_model = SensorModel.from_file(args.sensor_model, args.hand, seed=args.seed)
    frames = None if args.duration is None else int(round(args.duration * 100))
    producer = SimProducer(scenario, side=args.hand, seed=args.seed, collection_id=args.collection,
                           images=bool(args.images), max_frames=frames, log_clock=args.log_clock,
                           hands_name=args.hands_name)
    images: list[np.ndarray] = []

    class KeepImages(FrameSink):
        def on_frame(self, frame, sequence, timestamp) -> None:
            images.append(frame.extras[EXTRA_FORCE_IMAGES].astype(np.float32))

    realtime = args.realtime or args.foxglove  # a view of a 13 s press run in 1.5 s shows nothing
    counters = run_producer(producer, args, speed=1.0 if realtime else None, total=producer.num_frames,
                            desc=f"sim {args.scenario}", sinks=[KeepImages()] if args.images else [],
                            quiet=args.quiet)
    if args.images and images:
        from ..recording.safe_files import publish, temporary_beside

        partial = temporary_beside(args.images)
        try:
            with open(partial, "wb") as f:
                np.savez_compressed(f, images=np.stack(images),
                                    description=np.array("per frame: 5 pads (thumb..pinky) x 3 axes (pad frame) x "
                                                         "48 x 32 [N/pixel], 100 Hz of simulation time"))
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        publish(partial, args.images, args.overwrite)
    result = producer.result()
    if counters.exit_signal is not None:  # Ctrl-C / SIGTERM: a partial run is not judged
        args.console.line("", f"interrupted at t = {producer.frames * producer.period_s:.2f} s of simulated time "
                              f"({counters.stop_reason}, {producer.frames} frames); checks not run")
        if args.record:
            print(f"recorded {args.record} ({producer.collection_id}, {result.frames} frames, finished and valid)")
        return exit_code(counters, False)
    print(result.report())
    if args.record:
        print(f"recorded {args.record} ({result.frames} frames, log clock {args.log_clock}): "
              f"{', '.join(_recorded_topics(args.record))}")
    return exit_code(counters, result.passed)


def _recorded_topics(path: str) -> list[str]:
    """The topics the finished file's summary lists (what was recorded, not what was meant to be)."""
    from ..recording.scan import FileView, scan

    view = FileView(path)
    try:
        return sorted({c.topic for c in scan(view).channels.values()})
    finally:
        view.close()
