#!/usr/bin/env python3
"""One MCAP, one Isaac Teleop TeleopSession: the hand and its taxels, replayed together.

A recording made with the Isaac Teleop profile (uncompressed, hand poses on Isaac Teleop's own
`<hands>/left_hand` / `<hands>/right_hand` channels next to the tactile collection) is opened by a
`TeleopSession` in `SessionMode.REPLAY`:

- Isaac Teleop's `HandsSource` replays the hand through its C++ `ReplaySession` (one hand record
  per step) — from FILE, or from Isaac Teleop's own recording given as `--hands-file`;
- `TactileSource` replays the forces and layout, and gives each step the tactile forces at that
  step's hand record's time: the two frames around it blended linearly (`--pairing nearest`: the
  nearest frame within half a tactile period; docs/retargeting.md);
- `TaxelSkinning` puts the taxels on the moving hand, in the hand tracker's base space;
- `PadForceMagnitude` → Isaac Teleop's `TactileVectorToFingerPower` gives the finger powers.

Without a file argument, a 13 s press is simulated and recorded first (needs the `sim` extra):

    python examples/tactile/teleop_session_replay.py                 # simulate, record, replay
    python examples/tactile/teleop_session_replay.py run.mcap --every 50
    python examples/tactile/teleop_session_replay.py tactile.mcap --hands-file isaac_recording.mcap
"""
from __future__ import annotations

import argparse
import sys
import warnings
import tempfile
from pathlib import Path

import numpy as np

from wuji_tactile_device.contract.pads import FINGERS
from wuji_tactile_device.errors import TactileError
from wuji_tactile_device.hands.wuji_hand2 import TAXELS_PER_FINGER
from wuji_tactile_device.recording import McapReplay
from wuji_tactile_device.recording.hand_channels import check_isaac_replayable

try:  # the optional extra: without it, one line naming the install, not a traceback
    import isaacteleop.deviceio as deviceio
    from isaacteleop.retargeters.tactile_retargeters import TactileVectorToFingerPower
    from isaacteleop.retargeting_engine.deviceio_source_nodes import HandsSource
    from isaacteleop.retargeting_engine.interface import OutputCombiner
    from isaacteleop.teleop_session_manager import SessionMode, TeleopSession, TeleopSessionConfig

    from wuji_tactile_device.integrations.isaacteleop import (PadForceMagnitude, RecordedHandClock, TactileSource,
                                                              TaxelSkinning)
except ImportError as exc:
    message = str(exc) if "pip install" in str(exc) else f"{exc}: pip install 'wuji-tactile-device[isaacteleop]'"
    sys.exit(f"teleop_session_replay.py: error: {message}")


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning (e.g. a truncated recording replayed up to its last complete record) as one line."""
    print(f"teleop_session_replay.py: warning: {message}", file=sys.stderr)


warnings.showwarning = _one_line_warning

NUM_SEGMENTS, NUM_TAXELS = 5, sum(TAXELS_PER_FINGER)


def build_session(path: Path, collection_id: str, side: str, hands_name: str, *, hands_path: Path | None = None,
                  paired: bool = True, pairing: str = "interpolate") -> tuple[TeleopSession, TactileSource]:
    """The session and its tactile source. Hands from `hands_path` (default: `path`); `paired`:
    each step's tactile frame chosen by time against that step's hand record (else one frame
    per step, by count); `pairing`: "interpolate" (forces blended to the hand sample's time) or
    "nearest" (the nearest measured frame). Raises TactileError (one line) for a file Isaac Teleop cannot replay."""
    hands_path = path if hands_path is None else hands_path
    check_isaac_replayable(hands_path, hands_name)
    clock = RecordedHandClock(hands_path, hands_name, side) if paired else None
    tactile = TactileSource("tactile", collection_id, NUM_SEGMENTS, NUM_TAXELS,
                            source=McapReplay(path, collections=[collection_id]), hand_clock=clock,
                            pairing=pairing)
    hands = HandsSource(hands_name)  # its name is the recording's hand channel prefix
    hand = hands.output(HandsSource.RIGHT if side == "right" else HandsSource.LEFT)
    skin = TaxelSkinning("skin", NUM_SEGMENTS, NUM_TAXELS).connect({
        "tactile_layout": tactile.output("tactile_layout"), "hand": hand, "taxel_forces": tactile.output("taxel_forces")})
    magnitude = PadForceMagnitude("pad_force", NUM_SEGMENTS, NUM_TAXELS).connect({
        "taxel_forces": tactile.output("taxel_forces"), "tactile_layout": tactile.output("tactile_layout")})
    power = TactileVectorToFingerPower("finger_power", num_taxels=NUM_SEGMENTS, gain=0.5, deadband=0.05).connect(
        {"tactile": magnitude.output("finger_force")})
    pipeline = OutputCombiner({"positions": skin.output("taxel_positions_base"), "forces": skin.output("taxel_forces_base"),
                               "powers": power.output("powers")})
    config = TeleopSessionConfig(app_name="wuji-tactile-replay", pipeline=pipeline, mode=SessionMode.REPLAY,
                                 mcap_config=deviceio.McapReplayConfig(str(hands_path), []), verbose=False)
    return TeleopSession(config), tactile


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", type=Path, help="recording (default: simulate a press and record it)")
    parser.add_argument("--collection", default="tactile/right")
    parser.add_argument("--side", choices=("right", "left"), default="right")
    parser.add_argument("--hands", default="hands", help="hand channel prefix (<hands>/right_hand)")
    parser.add_argument("--hands-file", type=Path, help="replay the hands from this file (e.g. Isaac Teleop's own "
                        "recording) instead of FILE")
    parser.add_argument("--pairing", choices=("interpolate", "nearest"), default="interpolate",
                        help="tactile forces blended to each hand sample's time (default) or the nearest measured frame")
    parser.add_argument("--every", type=int, default=100, help="print every Nth frame")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.file
        if path is None:
            from wuji_tactile_device.run.simulation import record_simulation
            from wuji_tactile_device.producers.sim.scenarios import make_scenario

            path = Path(tmp) / "press.mcap"
            n = record_simulation(path, make_scenario("press"), side=args.side, collection_id=args.collection,
                                  hands_name=args.hands)
            print(f"simulated and recorded {n} frames of the press scenario to {path}")
        try:
            session, tactile = build_session(path, args.collection, args.side, args.hands, hands_path=args.hands_file,
                                             pairing=args.pairing)
            pad_of = np.repeat(np.arange(NUM_SEGMENTS), TAXELS_PER_FINGER)
            steps = 0
            with session:
                while not tactile.finished:  # one step per recorded hand sample, then stop
                    out = session.step()
                    steps += 1
                    if steps % args.every or out["positions"].is_none or out["forces"].is_none:
                        continue
                    t = tactile.last_frame.timestamp.sample_time_raw_device_clock / 1e9
                    per_pad = np.zeros((NUM_SEGMENTS, 3))
                    np.add.at(per_pad, pad_of, np.asarray(out["forces"][0], dtype=np.float64))
                    tip = np.asarray(out["positions"][0])[pad_of == 1].mean(axis=0)
                    powers = " ".join(f"{f}={p:.2f}" for f, p in zip(FINGERS, out["powers"][0], strict=True))
                    print(f"t={t:6.2f} s  index pad centre (base) {np.round(tip, 4)} m  "
                          f"|F| per pad {np.round(np.linalg.norm(per_pad, axis=1), 3)} N  power {powers}")
            print(f"replayed {steps} hand steps; {tactile.pairing_report()}")
            if tactile.pairing is not None and steps and tactile.pairing.paired == 0:
                clock = tactile.hand_clock
                print(f"teleop_session_replay.py: error: no tactile frame lies within half a tactile period of any "
                      f"hand sample (hand sample times {clock.times[0]} .. {clock.times[-1]} ns): the two recordings "
                      "do not share a clock or a time span", file=sys.stderr)
                return 1
        except TactileError as exc:
            print(f"teleop_session_replay.py: error: {exc}", file=sys.stderr)
            return 1
        except RuntimeError as exc:  # Isaac Teleop's own replay refused the file
            print(f"teleop_session_replay.py: error: Isaac Teleop cannot replay {args.hands_file or path}: {exc}",
                  file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
