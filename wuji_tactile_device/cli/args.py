"""Argument types for the commands: each refuses an absurd value at parse time, as argparse's own
one-line usage error (exit 2), naming the rule — never a traceback later (`--duration inf`,
`--rate nan`, `--count -1`, `--seed -1`, a directory where a file is expected)."""
from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from ..producers.emulated.fault_schedule import ScheduledFault


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


#: Longest duration or time an option takes [s] (~31 years): beyond is a typo, and its nanoseconds
#: would overflow the int64 clocks.
MAX_SECONDS = 1e9
#: Rates and speeds [Hz or × real time] in [MIN_RATE, MAX_RATE]: slower is a wait of hours per
#: step (or a division blowing up to infinity), faster not a rate but a typo.
MIN_RATE, MAX_RATE = 1e-3, 1e6


def positive_seconds(text: str) -> float:
    """A finite duration in (0, MAX_SECONDS] [s]."""
    value = _float(text)
    if not (math.isfinite(value) and 0 < value <= MAX_SECONDS):
        raise argparse.ArgumentTypeError(f"{text!r}: must be a finite number of seconds > 0 (at most {MAX_SECONDS:g})")
    return value


def nonnegative_seconds(text: str) -> float:
    """A finite time in [0, MAX_SECONDS] [s] (e.g. a window start)."""
    value = _float(text)
    if not (math.isfinite(value) and 0 <= value <= MAX_SECONDS):
        raise argparse.ArgumentTypeError(f"{text!r}: must be a finite number of seconds >= 0 "
                                         f"(at most {MAX_SECONDS:g})")
    return value


def positive_rate(text: str) -> float:
    """A finite rate or speed in [MIN_RATE, MAX_RATE] [Hz or × real time]."""
    value = _float(text)
    if not (math.isfinite(value) and MIN_RATE <= value <= MAX_RATE):
        raise argparse.ArgumentTypeError(f"{text!r}: must be a finite number in [0.001, 1e6]")
    return value


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: must be an integer >= 1")
    return value


def positive_float(unit: str) -> Callable[[str], float]:
    """A type for a finite quantity > 0 in `unit` (e.g. "newtons", "mm per newton")."""
    def parse(text: str) -> float:
        value = _float(text)
        if not (math.isfinite(value) and value > 0):
            raise argparse.ArgumentTypeError(f"{text!r}: must be a finite number of {unit} > 0")
        return value
    parse.__name__ = f"positive {unit}"
    return parse


#: A force range [N] (colour and size scales of the views and plots).
positive_newtons = positive_float("newtons")


def int_in(lo: int, hi: int) -> Callable[[str], int]:
    """A type for an integer in [lo, hi]."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{text!r}: must be an integer in [{lo}, {hi}]")
        return value
    parse.__name__ = f"integer in [{lo}, {hi}]"
    return parse


def tcp_port(text: str) -> int:
    """A TCP port, 0…65535 (0: any free port)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a TCP port") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: a TCP port is 0..65535 (0: any free port)")
    return value


def seed(text: str) -> int:
    """A random seed: an integer in 0 … 2³² − 1 (what numpy and MuJoCo accept)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"{text!r}: a seed is an integer in 0..4294967295")
    return value


def existing_file(text: str) -> str:
    """The path of an existing regular file (not a directory)."""
    if not os.path.exists(text):
        raise argparse.ArgumentTypeError(f"{text!r} does not exist")
    if not os.path.isfile(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a regular file")
    return text


def sensor_model_file(text: str) -> str:
    """A sensor-model JSON file that exists, or `example` (the package's shipped example)."""
    return text if text == "example" else existing_file(text)


def output_file(text: str) -> str:
    """A path a command may create: its directory exists and is writable, and it is not a directory
    (checked before any work is done, so a long run does not fail at its end)."""
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a directory, not a file name")
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"{text!r}: directory {folder!r} does not exist")
    if not os.access(folder, os.W_OK):
        raise argparse.ArgumentTypeError(f"{text!r}: directory {folder!r} is not writable")
    return text


def fault(text: str) -> ScheduledFault:
    """An emulated hand's fault, `KIND:FINGER@T0[-T1]` (`producers.emulated.fault_schedule`)."""
    from ..producers.emulated.fault_schedule import parse_fault

    try:
        return parse_fault(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix(f"fault {text!r}: ") + f" (got {text!r})") from None


def base_pose(text: str) -> np.ndarray:
    """A fixed pose `X,Y,Z,QX,QY,QZ,QW` [m, unit quaternion] → (7,) (`producers.hardware.hand_pose`)."""
    from ..producers.hardware.hand_pose import parse_base_pose

    try:
        return parse_base_pose(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


class OneLineParser(argparse.ArgumentParser):
    """argparse with usage errors as one line: `wuji-tactile COMMAND: error: MESSAGE (see
    wuji-tactile COMMAND --help)`, exit 2 — not a usage block of 20 lines burying the message."""

    def error(self, message: str):
        prog = self.prog.split()
        where = " ".join(prog[:2]) if len(prog) > 1 else prog[0]
        self.exit(2, f"{where}: error: {message} (see {self.prog} --help)\n")
