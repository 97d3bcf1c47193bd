"""`playback`: joint targets from a file (20 angles per row, firmware order) at a given rate."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ....errors import ProducerError
from ....hands.wuji_hand2 import NUM_ACTUATED_JOINTS, hand_kinematics
from ..hand_sim import HandSimulation
from .base import Check, FRAME_S, Scenario
from .press import PressScenario


# ------------------------------------------------------------------------------------------------
#: Limits of a joint file: rows (30 minutes at 100 Hz: 29 MB of float64) and bytes per text line.
MAX_ROWS = 180_000
MAX_LINE_BYTES = 64 << 10


def load_joint_file(path: str | Path) -> np.ndarray:
    """(T, 20) joint angles [rad] from a CSV/whitespace text file (one row per sample, firmware
    order, '#' comments, optional header row) or a `.npy` array. Read within `MAX_ROWS` rows and
    `MAX_LINE_BYTES` per line (a `.npy`'s shape is checked before its data is read): beyond, a
    `ProducerError` naming the limit."""
    path = Path(path)
    where = f"playback file {str(path)!r}"
    if not path.exists():
        raise ProducerError(f"{where} does not exist")
    if not path.is_file():
        raise ProducerError(f"{where} is not a regular file")
    if path.suffix == ".npy":
        try:
            q = np.load(path, allow_pickle=False, mmap_mode="r")  # the header only, until sliced
        except (ValueError, OSError, EOFError) as exc:  # object arrays, corrupt or cut-off .npy
            raise ProducerError(f"{where} is not a readable numeric .npy array ({exc})") from None
        if not isinstance(q, np.ndarray) or q.dtype.kind not in "fiu":
            raise ProducerError(f"{where}: need a numeric array of joint angles, got "
                                f"{getattr(q, 'dtype', type(q).__name__)}")
        if q.ndim >= 1 and q.shape[0] > MAX_ROWS:
            raise ProducerError(f"{where} has {q.shape[0]} rows, more than {MAX_ROWS} (30 minutes at 100 Hz); "
                                "cut it into pieces")
        q = np.array(q, dtype=np.float64)
    else:
        q = _read_text_rows(path, where)
    if q.ndim != 2 or q.shape[1] != NUM_ACTUATED_JOINTS or q.shape[0] == 0:
        raise ProducerError(f"{where}: need rows of {NUM_ACTUATED_JOINTS} angles, got shape {q.shape}")
    if not np.all(np.isfinite(q)):
        raise ProducerError(f"{where}: non-finite joint angle in row {int(np.argwhere(~np.isfinite(q))[0, 0])}")
    return q


def _read_text_rows(path: Path, where: str) -> np.ndarray:
    """The numeric rows of a text joint file, streamed line by line into blocks of rows."""
    blocks: list[np.ndarray] = []
    out = np.empty((4096, NUM_ACTUATED_JOINTS))
    n = k = 0  # rows in all, rows in the current block
    try:
        with open(path, encoding="utf-8", newline="") as f:
            lineno = 0
            while True:
                raw = f.readline(MAX_LINE_BYTES + 1)
                if not raw:
                    break
                lineno += 1
                if len(raw) > MAX_LINE_BYTES:
                    raise ProducerError(f"{where} line {lineno} is longer than {MAX_LINE_BYTES >> 10} KiB: not a "
                                        f"row of {NUM_ACTUATED_JOINTS} joint angles")
                line = raw.split("#", 1)[0].strip()
                if not line:
                    continue
                parts = line.replace(",", " ").split()
                try:
                    values = [float(p) for p in parts]
                except ValueError:
                    if n:
                        raise ProducerError(f"{where} line {lineno}: not numbers: {line[:60]!r}") from None
                    continue  # header row
                if len(values) != NUM_ACTUATED_JOINTS:
                    raise ProducerError(f"{where} line {lineno}: {len(values)} values, "
                                        f"need {NUM_ACTUATED_JOINTS} joint angles in firmware order")
                if n == MAX_ROWS:
                    raise ProducerError(f"{where} has more than {MAX_ROWS} rows (30 minutes at 100 Hz); cut "
                                        "it into pieces")
                if k == len(out):
                    blocks.append(out)
                    out, k = np.empty_like(out), 0
                out[k] = values
                n += 1
                k += 1
    except (UnicodeDecodeError, OSError) as exc:
        raise ProducerError(f"{where} is not UTF-8 text (CSV) nor .npy ({exc})") from None
    return np.concatenate([*blocks, out[:k]])


class PlaybackScenario(Scenario):
    """Joint targets from a file at `rate_hz` (linear interpolation), with the press object."""

    name = "playback"

    def __init__(self, joints: np.ndarray, rate_hz: float):
        if not (isinstance(rate_hz, (int, float)) and 1e-3 <= rate_hz <= 1e6):  # NaN fails too
            raise ValueError(f"playback rate must be a finite number of rows per second in [0.001, 1e6], got {rate_hz!r}")
        self.joints, self.rate = np.asarray(joints, dtype=np.float64), float(rate_hz)
        self.duration_s = (len(self.joints) - 1) / self.rate + 0.5

    def build(self, side: str, seed: int) -> HandSimulation:
        ranges = hand_kinematics(side).joint_ranges
        out = (self.joints < ranges[:, 0] - 1e-9) | (self.joints > ranges[:, 1] + 1e-9)
        if out.any():
            r, j = np.argwhere(out)[0]
            raise ProducerError(f"playback row {r}: joint {hand_kinematics(side).joint_names[j]} = "
                                f"{self.joints[r, j]:.4f} rad is outside its range {ranges[j].tolist()}")
        press = PressScenario()
        press.contact_model, press.sensor_model = self.contact_model, self.sensor_model
        sim = press.build(side, seed)
        self.frames_with_contact = 0
        self.finite = True
        self.last_t = 0.0
        self.times = np.arange(len(self.joints)) / self.rate
        return sim

    def control(self, sim: HandSimulation, t: float) -> None:
        q = np.array([np.interp(t + FRAME_S, self.times, self.joints[:, j]) for j in range(NUM_ACTUATED_JOINTS)])
        self.q_target = q
        sim.set_joint_targets(q)

    def observe(self, sim: HandSimulation, reading, t: float) -> None:
        self.frames_with_contact += int(reading.num_contacts > 0)
        self.finite &= bool(np.isfinite(reading.taxel_forces).all())
        self.last_t = t

    def checks(self) -> list[Check]:
        played = int(np.sum(self.times <= self.last_t + 1e-9))
        return [Check("file rows reached by the simulation clock", float(played), "==", float(len(self.joints)), "rows"),
                Check("all forces finite", float(self.finite), "==", 1.0),
                Check("frames with pad contact (information)", float(self.frames_with_contact), ">=", 0, "frames")]
