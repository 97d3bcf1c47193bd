"""Two recorders opening one name at once (docs/reliability.md, R9), every interleaving of their
file-system calls rather than whatever the scheduler happens to do: exactly one wins at the start,
the other is refused there with a line naming the race, the file under the name is the winner's,
and nothing is left beside it.

Each recorder's `open_recording` runs in its own thread; every call `safe_files` makes to the file
system (`os.open`, `lstat`, `link`, `rename`, `unlink`, `close`, `flock`, ...) first waits for its
turn in a schedule `A for i calls, B for j calls, A to the end, B to the end` (and the same with B
first), for every i and j up to the number of calls each makes. `flock` locks belong to an open
file description, so two threads of one process contend for them exactly as two processes do."""
from __future__ import annotations

import errno
import os
import threading
import types

import pytest

from wuji_tactile_device.errors import RecordingError
from wuji_tactile_device.recording import safe_files

_OS_CALLS = ("open", "close", "lstat", "stat", "fstat", "link", "rename", "replace", "unlink")


class Schedule:
    """Lets the threads named in `segments` [[name, calls or None = to the end]] run one at a time,
    each segment's thread for its number of calls."""

    def __init__(self, segments):
        self.segments = [list(s) for s in segments]
        self.popped = 0
        self.interrupted: set[int] = set()  # segments whose thread wanted more calls than it had
        self.done: set[str] = set()
        self.cond = threading.Condition()

    def turn(self) -> None:
        me = threading.current_thread().name
        with self.cond:
            while True:
                while self.segments and (self.segments[0][0] in self.done or self.segments[0][1] == 0):
                    if self.segments[0][0] not in self.done:
                        self.interrupted.add(self.popped)
                    self.segments.pop(0)
                    self.popped += 1
                    self.cond.notify_all()
                if not self.segments or self.segments[0][0] == me:
                    break
                self.cond.wait(timeout=5)
            if self.segments and self.segments[0][1] is not None:
                self.segments[0][1] -= 1

    def finished(self) -> None:
        with self.cond:
            self.done.add(threading.current_thread().name)
            self.cond.notify_all()


def _patched(monkeypatch, schedule: Schedule) -> None:
    def gated(fn):
        def call(*a, **k):
            schedule.turn()
            return fn(*a, **k)
        return call

    fake_os = types.SimpleNamespace(**{n: getattr(os, n) for n in dir(os) if not n.startswith("__")})
    for name in _OS_CALLS:
        setattr(fake_os, name, gated(getattr(os, name)))
    fake_fcntl = types.SimpleNamespace(LOCK_EX=safe_files.fcntl.LOCK_EX, LOCK_NB=safe_files.fcntl.LOCK_NB,
                                       LOCK_UN=safe_files.fcntl.LOCK_UN, flock=gated(safe_files.fcntl.flock))
    monkeypatch.setattr(safe_files, "os", fake_os)
    monkeypatch.setattr(safe_files, "fcntl", fake_fcntl)


def _race(monkeypatch, path, segments, overwrite: bool) -> tuple[dict, Schedule]:
    schedule = Schedule(segments)
    outcome: dict = {}

    def run():
        try:
            outcome[threading.current_thread().name] = safe_files.open_recording(path, overwrite)
        except RecordingError as exc:
            outcome[threading.current_thread().name] = exc
        finally:
            schedule.finished()

    with monkeypatch.context() as m:
        _patched(m, schedule)
        threads = [threading.Thread(target=run, name=n) for n in "AB"]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        assert not any(t.is_alive() for t in threads), segments
    return outcome, schedule


def _every_interleaving(monkeypatch, tmp_path, overwrite: bool, prepare) -> dict:
    """{what went wrong: a schedule showing it} over every schedule; `prepare(path)` makes the
    start. A larger i (j) is tried only while the side ran out of calls before its end."""
    bad: dict = {}
    k = interleaved = 0
    for first, second in ("AB", "BA"):
        for i in range(100):
            for j in range(100):
                k += 1
                (tmp_path / str(k)).mkdir()
                path = tmp_path / str(k) / "same.mcap"
                prepare(path)
                segments = [(first, i), (second, j), (first, None), (second, None)]
                outcome, schedule = _race(monkeypatch, path, segments, overwrite)
                problem = _verdict(path, outcome, overwrite)
                if problem:
                    bad.setdefault(problem, segments)
                interleaved += {0, 1} <= schedule.interrupted
                if 1 not in schedule.interrupted:
                    break
            if 0 not in schedule.interrupted:
                break
    assert interleaved > 10, (k, interleaved)  # schedules where each side was stopped midway
    return bad


def _verdict(path, outcome, overwrite: bool) -> str | None:
    """None if the contract holds, else what went wrong."""
    files = {n: f for n, f in outcome.items() if not isinstance(f, Exception)}
    refused = {n: str(e).replace(str(path), path.name) for n, e in outcome.items() if isinstance(e, Exception)}
    # the loser names the other recording; without overwrite, a file that exists is refused anyway
    races = ("being recorded by another process", "created by another process") if overwrite else ("already exists",)
    try:
        if len(files) != 1:
            return f"{len(files)} opened: {refused or 'both'}"
        (loser, message), = refused.items()
        if not any(r in message for r in races):
            return f"refused imprecisely: {message}"
        (winner, f), = files.items()
        st, now = os.fstat(f.fileno()), os.stat(path)
        if (st.st_dev, st.st_ino) != (now.st_dev, now.st_ino):
            return f"{winner} won but {path.name} is not its file"
        litter = sorted(p.name for p in path.parent.iterdir() if p.name not in (path.name, "elsewhere"))
        if litter:
            return f"left {litter}"
        return None
    finally:
        for f in files.values():
            f.close()


@pytest.mark.parametrize("start", ["absent", "old file", "symlink"])
def test_r9_every_interleaving_of_two_overwriting_recorders_has_one_winner_refused_at_the_start(
        tmp_path, monkeypatch, start):
    def prepare(path):
        if start == "old file":
            path.write_bytes(b"an old recording, not being written")
        elif start == "symlink":
            os.mkdir(path.parent / "elsewhere")
            (path.parent / "elsewhere" / "precious").write_bytes(b"precious")
            path.symlink_to(path.parent / "elsewhere" / "precious")

    bad = _every_interleaving(monkeypatch, tmp_path, True, prepare)
    assert not bad, "\n".join(f"{p}  (e.g. {s})" for p, s in bad.items())
    if start == "symlink":  # what the link pointed to is never written
        assert {p.read_bytes() for p in tmp_path.glob("*/elsewhere/precious")} == {b"precious"}


def test_r9_every_interleaving_of_two_new_recordings_has_one_winner(tmp_path, monkeypatch):
    bad = _every_interleaving(monkeypatch, tmp_path, False, lambda path: None)
    assert not bad, "\n".join(f"{p}  (e.g. {s})" for p, s in bad.items())


def test_a_file_system_without_hard_links_still_gets_the_recording(tmp_path, monkeypatch):
    def no_link(src, dst):
        raise OSError(errno.EPERM, "Operation not permitted")

    path = tmp_path / "new.mcap"
    with monkeypatch.context() as m:
        m.setattr(safe_files, "os", types.SimpleNamespace(**{**vars(os), "link": no_link}))
        with safe_files.open_recording(path, overwrite=False) as f:
            f.write(b"recorded")
        with pytest.raises(RecordingError, match="already exists"):
            safe_files.open_recording(path, overwrite=False)
    assert path.read_bytes() == b"recorded" and [p.name for p in tmp_path.iterdir()] == ["new.mcap"]
