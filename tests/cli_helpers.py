"""Running `wuji-tactile` in-process from a test."""
from __future__ import annotations

from wuji_tactile_device.cli import main


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    """Run `wuji-tactile argv...` in-process: (exit code, stdout, stderr)."""
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse: --help (0) and usage errors (2)
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err
