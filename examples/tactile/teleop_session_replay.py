#!/usr/bin/env python3
"""One MCAP, one Isaac Teleop TeleopSession: the hand and its taxels, replayed together.

A recording made with the Isaac Teleop profile (uncompressed, hand poses on Isaac Teleop's own
`<hands>/left_hand` / `<hands>/right_hand` channels next to the tactile collection) is opened by a
`TeleopSession` in `SessionMode.REPLAY`:

- Isaac Teleop's `HandsSource` replays the hand through its C++ `ReplaySession`;
- `TactileSource` replays the forces and layout (one frame per step, in lockstep);
- `TaxelSkinning` puts the taxels on the moving hand, in the hand tracker's base space;
- `PadForceMagnitude` → Isaac Teleop's `TactileVectorToFingerPower` gives the finger powers.

Without a file argument, a 13 s press is simulated and recorded first (needs the `sim` extra):

    python examples/tactile/teleop_session_replay.py                 # simulate, record, replay
    python examples/tactile/teleop_session_replay.py run.mcap --every 50
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import isaacteleop.deviceio as deviceio
from isaacteleop.retargeters.tactile_retargeters import TactileVectorToFingerPower
from isaacteleop.retargeting_engine.deviceio_source_nodes import HandsSource
from isaacteleop.retargeting_engine.interface import OutputCombiner
from isaacteleop.teleop_session_manager import SessionMode, TeleopSession, TeleopSessionConfig

from wuji_tactile_device.contract.pads import FINGERS
from wuji_tactile_device.errors import TactileError
from wuji_tactile_device.hands.wuji_hand2 import TAXELS_PER_FINGER
from wuji_tactile_device.integrations.isaacteleop import PadForceMagnitude, TactileSource, TaxelSkinning
from wuji_tactile_device.recording import McapReplay

NUM_SEGMENTS, NUM_TAXELS = 5, sum(TAXELS_PER_FINGER)


def build_session(path: Path, collection_id: str, side: str, hands_name: str) -> tuple[TeleopSession, TactileSource]:
    tactile = TactileSource("tactile", collection_id, NUM_SEGMENTS, NUM_TAXELS, source=McapReplay(path))
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
                                 mcap_config=deviceio.McapReplayConfig(str(path), []), verbose=False)
    return TeleopSession(config), tactile


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", type=Path, help="recording (default: simulate a press and record it)")
    parser.add_argument("--collection", default="tactile/right")
    parser.add_argument("--side", choices=("right", "left"), default="right")
    parser.add_argument("--hands", default="hands", help="hand channel prefix (<hands>/right_hand)")
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
            session, tactile = build_session(path, args.collection, args.side, args.hands)
            pad_of = np.repeat(np.arange(NUM_SEGMENTS), TAXELS_PER_FINGER)
            frames = 0
            with session:
                while True:
                    out = session.step()
                    if tactile.finished:
                        break
                    frames += 1
                    if frames % args.every or out["positions"].is_none:
                        continue
                    t = tactile.last_frame.timestamp.sample_time_raw_device_clock / 1e9
                    per_pad = np.zeros((NUM_SEGMENTS, 3))
                    np.add.at(per_pad, pad_of, np.asarray(out["forces"][0], dtype=np.float64))
                    tip = np.asarray(out["positions"][0])[pad_of == 1].mean(axis=0)
                    powers = " ".join(f"{f}={p:.2f}" for f, p in zip(FINGERS, out["powers"][0]))
                    print(f"t={t:6.2f} s  index pad centre (base) {np.round(tip, 4)} m  "
                          f"|F| per pad {np.round(np.linalg.norm(per_pad, axis=1), 3)} N  power {powers}")
            print(f"replayed {frames} frames")
        except TactileError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
