"""One simulated press, recorded two ways, for the time-pairing tests: a 100 Hz tactile recording
by this package's recorder, and the same run's hand as Isaac Teleop's own recorder would write it
(`write_isaac_hands`: its channel names, its exact compiled-in schema bytes, header profile
`teleop`, uncompressed, its own rate and timestamps). Ground truth is the simulator's state per
tactile frame. Not a fixture module: imported explicitly.

    python tests/isaac_hands_helpers.py        # the pairing-error table for hands at 60/90/100/120 Hz
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from mcap.writer import CompressionType, Writer

from wuji_tactile_device.contract.hand_pose import HAND_POSE_RECORD_SCHEMA_NAME, encode_hand_pose_record
from wuji_tactile_device.contract.records import DeviceDataTimestamp
from wuji_tactile_device.hands.openxr_pose import openxr_joint_poses
from wuji_tactile_device.run.simulation import record_simulation
from wuji_tactile_device.producers.sim.hand_pose import wrist_body_in_world
from wuji_tactile_device.producers.sim.scenarios import make_scenario
from wuji_tactile_device.recording.profiles import isaac_hand_schema

TACTILE_PERIOD_NS = 10_000_000  # the simulator's 100 Hz


def simulate(path: Path, frames: int, *, compression: str = "zstd") -> dict:
    """Record `frames` frames of the press to `path` (tactile + this package's hand channels);
    return the truth per tactile frame: sample time t [ns], joint angles q, wrist body pose
    (4×4, world), taxel positions in the world [m]."""
    truth = {"t": [], "q": [], "wrist": [], "taxels": []}

    def keep(sim, reading, ts):
        T_world_xr = np.linalg.inv(sim._T_openxr_world())  # MuJoCo's own wrist frame
        p = sim.taxel_positions_in_wrist()
        truth["taxels"].append(p @ T_world_xr[:3, :3].T + T_world_xr[:3, 3])
        truth["q"].append(sim.joint_angles())
        truth["wrist"].append(wrist_body_in_world(sim))
        truth["t"].append(int(ts[1]))

    record_simulation(path, make_scenario("press"), max_frames=frames, on_frame=keep, compression=compression)
    return {k: np.array(v) for k, v in truth.items()}


def hand_times(truth: dict, rate_hz: float, *, phase_ns: int = 3_700_000) -> np.ndarray:
    """Isaac Teleop's own sample times: `rate_hz` from the first tactile frame + `phase_ns`, inside
    the tactile span."""
    t0, t1 = truth["t"][0] + phase_ns, truth["t"][-1]
    return np.arange(t0, t1, 1e9 / rate_hz).astype(np.int64)


def _rotation_between(r0: np.ndarray, r1: np.ndarray, alpha: float) -> np.ndarray:
    """r0 · exp(alpha · log(r0ᵀ r1)) (Rodrigues; the rotation moves by a fraction of its angle)."""
    d = r0.T @ r1
    angle = np.arccos(np.clip((np.trace(d) - 1) / 2, -1.0, 1.0))
    if angle < 1e-12:
        return r0
    axis = np.array([d[2, 1] - d[1, 2], d[0, 2] - d[2, 0], d[1, 0] - d[0, 1]]) / (2 * np.sin(angle))
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    a = alpha * angle
    return r0 @ (np.eye(3) + np.sin(a) * k + (1 - np.cos(a)) * k @ k)


def hand_poses_at(truth: dict, side: str, t_ns: np.ndarray) -> np.ndarray:
    """(H, 26, 7) joint poses in the world at `t_ns`: the simulated joint angles and wrist pose
    interpolated between simulator frames (linear; rotation along its axis), through the hand's
    forward kinematics."""
    t = truth["t"]
    out = []
    for tk in t_ns:
        k = int(np.clip(np.searchsorted(t, tk, side="right") - 1, 0, len(t) - 2))
        alpha = (tk - t[k]) / (t[k + 1] - t[k])
        q = (1 - alpha) * truth["q"][k] + alpha * truth["q"][k + 1]
        w0, w1 = truth["wrist"][k], truth["wrist"][k + 1]
        wrist = np.eye(4)
        wrist[:3, :3] = _rotation_between(w0[:3, :3], w1[:3, :3], alpha)
        wrist[:3, 3] = (1 - alpha) * w0[:3, 3] + alpha * w1[:3, 3]
        out.append(openxr_joint_poses(side, q, wrist))
    return np.stack(out)


def write_isaac_hands(path: Path, t_ns: np.ndarray, poses: np.ndarray, *, base_name: str = "hands",
                      latency_ns: int = 2_000_000) -> None:
    """Hands as Isaac Teleop's recorder writes them: both hand channels every frame (the left one
    untracked), its exact schema bytes, header profile `teleop`, uncompressed, log time =
    available time = sample time + `latency_ns`."""
    schema = isaac_hand_schema()
    assert schema.verified_in_installed, "the installed Isaac Teleop must contain the bytes written"
    with open(path, "wb") as f:
        w = Writer(f, compression=CompressionType.NONE)
        w.start(profile="teleop", library="isaac-style test writer")
        sid = w.register_schema(HAND_POSE_RECORD_SCHEMA_NAME, "flatbuffer", schema.data)
        left = w.register_channel(f"{base_name}/left_hand", "flatbuffer", sid)
        right = w.register_channel(f"{base_name}/right_hand", "flatbuffer", sid)
        for k, (t, p) in enumerate(zip(t_ns, poses, strict=True)):
            ts = DeviceDataTimestamp(int(t) + latency_ns, int(t), int(t) + 123_456_789)
            for ch, pose in ((left, None), (right, p)):
                w.add_message(ch, int(t) + latency_ns, encode_hand_pose_record(pose, ts, radius=0.008),
                              int(t) + latency_ns, k)
        w.finish()


def run_session(tactile_path: Path, hands_path: Path, *, paired: bool = True, pairing: str = "interpolate"):
    """The example graph (`examples/tactile/teleop_session_replay.py`) in a replay TeleopSession:
    hands from `hands_path` (Isaac Teleop's ReplaySession), tactile from `tactile_path`. Returns
    (per step: the sample time the emitted tactile output refers to or None — the hand time when
    interpolated —, the skinned taxel positions in the world or None), the TactileSource."""
    import importlib.util

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("teleop_session_replay", root / "examples/tactile/teleop_session_replay.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    session, tactile = example.build_session(tactile_path, "tactile/right", "right", "hands", hands_path=hands_path,
                                             paired=paired, pairing=pairing)
    steps = []
    with session:
        while not tactile.finished:
            out = session.step()
            frame = tactile.last_frame
            steps.append((None if frame is None else frame.timestamp.sample_time_local_common_clock,
                          None if out["positions"].is_none else np.asarray(out["positions"][0], dtype=np.float64)))
    return steps, tactile


def pairing_errors(steps, truth: dict) -> np.ndarray:
    """Per paired step: max over taxels of |skinned taxel − the simulator's taxel at the paired
    tactile frame's time| [m]."""
    index = {int(t): k for k, t in enumerate(truth["t"])}
    return np.array([np.abs(p - truth["taxels"][index[int(t)]]).max() for t, p in steps if t is not None and p is not None])


def _truth_at(truth: dict, th: int) -> np.ndarray:
    """The simulator's taxels at `th` [ns], linear between its two frames around it (exact at a frame)."""
    t = truth["t"]
    k = int(np.clip(np.searchsorted(t, th, side="right") - 1, 0, len(t) - 2))
    a = (th - t[k]) / (t[k + 1] - t[k])
    return (1 - a) * truth["taxels"][k] + a * truth["taxels"][k + 1]


def errors_at_output_time(steps, truth: dict) -> np.ndarray:
    """Per step with a tactile output and positions: max over taxels of |skinned taxel − the
    simulator's taxel at the time the output refers to| [m] — what a consumer reading forces and
    positions together sees."""
    return np.array([np.abs(p - _truth_at(truth, int(t))).max() for t, p in steps if t is not None and p is not None])


def errors_at_hand_time(steps, truth: dict, t_hand: np.ndarray) -> np.ndarray:
    """Per step with positions: max over taxels of |skinned taxel − the simulator's taxel at that
    step's hand sample time| [m] (the simulator's taxels interpolated linearly between its two
    frames around that time): what the skinning alone adds, pairing aside."""
    t = truth["t"]
    out = []
    for (_, p), th in zip(steps, t_hand, strict=True):
        if p is None:
            continue
        k = int(np.clip(np.searchsorted(t, th, side="right") - 1, 0, len(t) - 2))
        a = (th - t[k]) / (t[k + 1] - t[k])
        out.append(np.abs(p - ((1 - a) * truth["taxels"][k] + a * truth["taxels"][k + 1])).max())
    return np.array(out)


def main() -> None:
    import tempfile
    import time

    with tempfile.TemporaryDirectory() as tmp:
        tactile = Path(tmp) / "tactile.mcap"
        truth = simulate(tactile, 1300)
        print("| hands [Hz] | pairing | steps | paired | interpolated | nearest | missing | reused | "
              "tactile frames not used | max \\|output time − hand time\\| [ms] | max taxel error vs the simulator at the "
              "output's time [mm] | p99 [mm] | max vs the simulator at the hand's time [mm] | by count (before) [mm] |")
        print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for rate in (60, 90, 100, 120):
            hands = Path(tmp) / f"hands_{rate}.mcap"
            t = hand_times(truth, rate)
            write_isaac_hands(hands, t, hand_poses_at(truth, "right", t))
            before, _ = run_session(tactile, hands, paired=False)
            err_before = pairing_errors(before, truth)
            for mode in ("interpolate", "nearest"):
                t0 = time.perf_counter()
                steps, source = run_session(tactile, hands, pairing=mode)
                c = source.pairing
                err = errors_at_output_time(steps, truth)
                at_hand = errors_at_hand_time(steps, truth, t)
                print(f"| {rate} | {mode} | {c.steps} | {c.paired} | {c.interpolated} | {c.nearest} | {c.missing} | "
                      f"{c.reused} | {c.skipped} | {c.max_abs_dt_ns / 1e6:.2f} | {err.max() * 1e3:.3f} | "
                      f"{np.percentile(err, 99) * 1e3:.3f} | {at_hand.max() * 1e3:.3f} | {err_before.max() * 1e3:.1f} |"
                      f"  <!-- {time.perf_counter() - t0:.1f} s -->", flush=True)


if __name__ == "__main__":
    main()
