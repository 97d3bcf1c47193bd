"""The console conventions every `wuji-tactile` command shares (set up once in `cli.main`).

- Results go to stdout; everything else (progress, notices, warnings, errors) to stderr, each
  message one line prefixed `wuji-tactile <command>: `.
- Python warnings (e.g. `RecordingWarning` for a truncated file) and the package loggers'
  WARNING+ records print as `wuji-tactile <command>: warning: <message>`, each distinct message
  once, without source lines.
- Progress bars only when stderr is a terminal, unless `--progress` asks for them; never with
  `--quiet`. `--quiet` also drops notices (`note`); results, warnings and errors still print.
- Exit status (`EXIT_*`): 0 ok, 1 a user or data error (one line, no traceback), 2 a usage error
  (argparse), 128 + signal number when stopped by a signal (Ctrl-C 130, SIGTERM 143), 141 when
  the reader of stdout went away (`| head`).
- Messages speak in CLI flags: `cli_words` rewrites the library's Python-keyword hints
  ("pass overwrite=True / --overwrite") into the flag alone.
"""
from __future__ import annotations

import contextlib
import logging
import re
import signal
import sys
import threading
import warnings
from typing import TextIO
from collections.abc import Iterator

from ..errors import printable

PROG = "wuji-tactile"

EXIT_OK = 0
EXIT_ERROR = 1  # a user or data error: one line on stderr
EXIT_USAGE = 2  # argparse
EXIT_SIGINT = 128 + signal.SIGINT  # 130
EXIT_SIGTERM = 128 + signal.SIGTERM  # 143
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE  # 141

#: Optional imports → the extra that provides them (a missing one is named with its `pip install`).
EXTRAS = {"matplotlib": "plot", "foxglove": "view", "isaacteleop": "isaacteleop", "wuji_sdk": "hardware"}


def pip_install(extra: str) -> str:
    return f"pip install 'wuji-tactile-device[{extra}]'"


class Terminated(BaseException):
    """SIGTERM arrived in a command that does not handle it itself: unwinds like Ctrl-C (files are
    finished by the `finally` blocks on the way out), and `main` exits 143."""


class Console:
    """Where one command run prints its non-result output, and how (see module doc)."""

    def __init__(self, command: str, *, quiet: bool = False, progress: bool | None = None,
                 stream: TextIO | None = None) -> None:
        self.command = command
        self.quiet = quiet
        self._stream = stream
        self._progress = progress
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    @property
    def stream(self) -> TextIO:
        return self._stream if self._stream is not None else sys.stderr  # looked up late: tests swap it

    @property
    def progress(self) -> bool:
        """Show progress bars: never with --quiet; with --progress always; else only on a terminal."""
        if self.quiet:
            return False
        if self._progress is not None:
            return self._progress
        return bool(getattr(self.stream, "isatty", lambda: False)())

    def line(self, kind: str, message: str) -> None:
        # one line, whatever the message holds; other control characters (from names in a file) escaped
        text = printable(" ".join(str(message).split("\n")))
        print(f"{PROG} {self.command}: {kind + ': ' if kind else ''}{text}", file=self.stream, flush=True)

    def error(self, message: str) -> None:
        self.line("error", cli_words(message))

    def warning(self, message: str) -> None:
        """One line per distinct message, however often or from wherever it is raised."""
        text = cli_words(str(message))
        with self._lock:
            if text in self._seen:
                return
            self._seen.add(text)
        self.line("warning", text)

    def note(self, message: str) -> None:
        """Something worth knowing that is neither a result nor a fault; dropped by --quiet."""
        if not self.quiet:
            self.line("", message)

    def bar(self, **kwargs):
        """A tqdm progress bar on stderr, disabled unless `progress` (see above)."""
        from tqdm import tqdm

        kwargs.setdefault("mininterval", 0.5)
        return tqdm(file=self.stream, disable=not self.progress, **kwargs)

    @contextlib.contextmanager
    def installed(self) -> Iterator[Console]:
        """For the duration of a command: warnings and the package's WARNING+ log records as one
        line each on stderr; SIGTERM (when this is the main thread) raises `Terminated`. Everything
        is restored afterwards, so `main` can run many times in one process."""
        logger = logging.getLogger("wuji_tactile_device")
        handler = _LogLines(self)
        saved_level = logger.level
        with warnings.catch_warnings():
            warnings.showwarning = self._show_warning
            logger.addHandler(handler)
            if logger.level == logging.NOTSET or logger.level > logging.WARNING:
                logger.setLevel(logging.WARNING)
            previous_term = None
            if threading.current_thread() is threading.main_thread():
                previous_term = signal.signal(signal.SIGTERM, _terminate)
            try:
                yield self
            finally:
                if previous_term is not None:
                    signal.signal(signal.SIGTERM, previous_term)
                logger.removeHandler(handler)
                logger.setLevel(saved_level)

    def _show_warning(self, message, category, filename, lineno, file=None, line=None) -> None:
        self.warning(str(message))


class _LogLines(logging.Handler):
    def __init__(self, console: Console) -> None:
        super().__init__(logging.WARNING)
        self.console = console

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except Exception:  # a malformed log call must not kill the command  # noqa: BLE001
            self.handleError(record)
            return
        if record.levelno >= logging.ERROR:
            self.console.line("error", cli_words(text))
        else:
            self.console.warning(text)


def _terminate(signum, frame) -> None:
    raise Terminated


_PYTHON_HINT = re.compile(r"\b(?:pass )?[a-z_]+=(?:True|False|None)\s*/\s*(--[a-z0-9-]+)")


def cli_words(message: str) -> str:
    """A library message in CLI words: "(pass overwrite=True / --overwrite to replace it)" →
    "(use --overwrite to replace it)". Messages without such a hint are returned unchanged."""
    return _PYTHON_HINT.sub(lambda m: f"use {m.group(1)}", message)


def missing_extra(exc: ModuleNotFoundError) -> str | None:
    """The one-line message for an optional dependency that is not installed, or None when the
    missing module is not one an extra provides (a real bug: let it raise)."""
    top = (exc.name or "").split(".")[0]
    extra = EXTRAS.get(top)
    if extra is None:
        return None
    return f"this needs the '{extra}' extra ({top} is not installed): {pip_install(extra)}"


def require_extra(module: str, extra: str) -> None:
    """Raise `TactileError` naming the `pip install` when the optional `module` is missing."""
    import importlib

    from ..errors import TactileError

    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise TactileError(missing_extra(exc) or f"{module} is not installed: {pip_install(extra)}") from exc
