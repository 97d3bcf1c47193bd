"""Argument types for the commands: each refuses an absurd value at parse time, as argparse's own
one-line usage error (exit 2), naming the rule — never a traceback later (`--duration inf`,
`--rate nan`, `--count -1`, `--seed -1`, a directory where a file is expected)."""
from __future__ import annotations

import argparse
import math
import os


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


class OneLineParser(argparse.ArgumentParser):
    """argparse with usage errors as one line: `wuji-tactile COMMAND: error: MESSAGE (see
    wuji-tactile COMMAND --help)`, exit 2 — not a usage block of 20 lines burying the message."""

    def error(self, message: str):  # type: ignore[override]
        prog = self.prog.split()
        where = " ".join(prog[:2]) if len(prog) > 1 else prog[0]
        self.exit(2, f"{where}: error: {message} (see {self.prog} --help)\n")
