"""Writing output files safely: what every command that creates a file (a recording, a recovered
file, exported arrays, plots, images, a view's scratch file) follows.

- A temporary file is created exclusively with a random name beside its target
  (`temporary_beside`: `O_CREAT | O_EXCL`, which never follows a planted symbolic link), then
  moved into place complete (`publish`).
- An existing target is refused unless `overwrite`; without it the move is an exclusive link
  (two runs racing for a new name: one wins, the other is refused), with it an atomic rename.
  A symbolic link as the target is replaced itself (what it points to is never written); a
  FIFO, device or directory is refused (`check_target`).
- A recording is written in place (a killed recorder must leave a recoverable file under the
  name asked for), and an exclusive `flock` on it is held while recording: a second run onto the
  same name is refused while the first one writes. `open_recording` creates it under a temporary
  name, locks it, and only then gives it the name — exclusively (a hard link) when the name is
  free; replacing an existing file (`overwrite`) renames over it while holding that file's lock
  (refused if a recording holds it), a symbolic link is removed itself — so the name never shows
  an unlocked new recording, and of two runs onto one name the loser is refused at its start.
"""
from __future__ import annotations

import errno
import fcntl
import os
import secrets
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO

from ..errors import RecordingError

_OVERWRITE = "pass overwrite=True / --overwrite to replace it"  # the CLI shows: use --overwrite


def check_target(target: str | os.PathLike, overwrite: bool) -> None:
    """Raise RecordingError unless `target` may be created: its directory exists, and it is absent,
    a symbolic link (replaced itself), or a regular file with `overwrite`."""
    target = Path(target)
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        if not target.parent.is_dir():
            raise RecordingError(f"cannot write {target}: directory {target.parent} does not exist") from None
        return
    except OSError as exc:
        raise RecordingError(f"cannot write {target}: {exc.strerror}") from None
    if stat.S_ISLNK(st.st_mode) or stat.S_ISREG(st.st_mode):
        if not overwrite:
            raise RecordingError(f"{target} already exists ({_OVERWRITE})")
        return
    kind = ("a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode)
            else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "not a regular file")
    raise RecordingError(f"{target} is {kind}; only a new or regular file is written")


def temporary_beside(target: str | os.PathLike) -> Path:
    """A new empty file with a random name in `target`'s directory (created exclusively, mode of a
    new file under the umask), for `publish`."""
    target = Path(target)
    try:
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
    except OSError as exc:
        raise RecordingError(f"cannot write {target}: {exc.strerror} (in {target.parent})") from None
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # mkstemp makes it private; the target gets a new file's mode
    finally:
        os.close(fd)
    return Path(name)


def publish(partial: str | os.PathLike, target: str | os.PathLike, overwrite: bool) -> None:
    """Move the complete file `partial` to `target` (see the module doc); `partial` is gone after,
    whatever happens."""
    partial, target = Path(partial), Path(target)
    try:
        check_target(target, overwrite)
        if overwrite:
            os.replace(partial, target)
            return
        try:
            os.link(partial, target)  # exclusive: fails if the name appeared meanwhile
        except FileExistsError:
            raise RecordingError(f"{target} was created by another process meanwhile; not replaced "
                                 f"({_OVERWRITE})") from None
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EXDEV, errno.EOPNOTSUPP):  # not a file system without hard links
                raise RecordingError(f"cannot write {target}: {exc.strerror or exc}") from None
            check_target(target, overwrite)
            os.replace(partial, target)
    except OSError as exc:
        raise RecordingError(f"cannot write {target}: {exc.strerror or exc}") from None
    finally:
        partial.unlink(missing_ok=True)


def open_recording(path: str | os.PathLike, overwrite: bool) -> BinaryIO:
    """`path` created exclusively for writing and locked (module doc). Refuses an existing file
    without `overwrite`, a special file, and a file another recording is writing.

    The new file is made under a temporary name and locked *before* it takes `path`, and a
    recording being replaced is locked by the one replacing it until the new one is in place, so
    of two runs onto one name the loser is always refused here, at its start: its file system
    calls can interleave with the winner's any way (tests/test_recording_race.py)."""
    path = Path(path)
    check_target(path, overwrite)
    fd, partial = _create_beside(path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a name nobody else knows: never contended
        except OSError as exc:
            raise RecordingError(f"cannot lock {path} (in {path.parent}): {exc.strerror}") from None
        for _ in range(_PLACE_ATTEMPTS):
            if _place(partial, path, overwrite):
                return os.fdopen(fd, "wb")
        raise RecordingError(f"cannot create {path}: it was replaced by other processes {_PLACE_ATTEMPTS} times "
                             "while this recording tried to take its place")
    except BaseException:
        os.close(fd)
        raise
    finally:
        _unlink_quietly(partial)  # gone after a rename; after a link, the second name of the recording


#: How often `open_recording` looks again when the name changed between its look and its move.
_PLACE_ATTEMPTS = 100
_NO_HARD_LINKS = (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV)


def _create_beside(target: Path) -> tuple[int, Path]:
    """A new empty file with a random name beside `target`, open for writing (the mode of a new
    file under the umask), and its name."""
    for _ in range(100):
        name = target.parent / f".{target.name}.{secrets.token_hex(6)}.partial"
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
                         0o666)
        except FileExistsError:
            continue
        except OSError as exc:
            raise RecordingError(f"cannot create {target}: {exc.strerror} (in {target.parent})") from None
        return fd, name
    raise RecordingError(f"cannot create {target}: no free temporary name in {target.parent}")


def _unlink_quietly(name: Path) -> None:
    try:
        os.unlink(name)
    except OSError:
        pass


def _place(partial: Path, path: Path, overwrite: bool) -> bool:
    """Give the locked new file `partial` the name `path`: True once done, False if `path` changed
    meanwhile (look again); raises RecordingError if it may not be replaced."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        try:
            os.link(partial, path)  # exclusive: fails if the name appeared meanwhile
            return True
        except FileExistsError:
            if not overwrite:
                raise RecordingError(f"{path} already exists (created by another process meanwhile; "
                                     f"{_OVERWRITE})") from None
            return False  # look at what appeared: a recording being written is refused then
        except OSError as exc:
            if exc.errno not in _NO_HARD_LINKS:
                raise RecordingError(f"cannot create {path}: {exc.strerror}") from None
            return _place_without_hard_links(partial, path)
    except OSError as exc:
        raise RecordingError(f"cannot write {path}: {exc.strerror}") from None
    if not overwrite:
        raise RecordingError(f"{path} already exists (created by another process meanwhile; {_OVERWRITE})")
    if stat.S_ISLNK(st.st_mode):
        _remove_link(path)  # the link itself; what it points to is never written
        return False
    if not stat.S_ISREG(st.st_mode):
        check_target(path, overwrite)  # raises: a directory, FIFO, device appeared meanwhile
        return False
    try:
        old = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except PermissionError:
        old = None  # unreadable: nothing recording into it that this could see
    except OSError:
        return False  # removed or replaced since the look
    try:
        if old is not None:
            try:
                fcntl.flock(old, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                    raise RecordingError(f"{path} is being recorded by another process; not replaced") from None
                raise RecordingError(f"cannot lock {path}: {exc.strerror}") from None
            # held until the new file is in place: another run trying to replace this file meanwhile
            # is refused (its lock fails); one that looks after the rename finds the new, locked file
            now, held = os.lstat(path), os.fstat(old)
            if (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino):
                return False  # replaced between the open and the lock
        os.rename(partial, path)
        return True
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise RecordingError(f"cannot replace {path}: {exc.strerror}") from None
    finally:
        if old is not None:
            os.close(old)


def _remove_link(path: Path) -> None:
    """Remove the symbolic link `path` — unless another run's recording took the name since the
    look: what is there is moved aside first (an atomic rename), and anything but a link put back
    (the same file under the same name: its recorder never knows), for `_place` to look again."""
    aside = path.parent / f".{path.name}.{secrets.token_hex(6)}.aside"
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise RecordingError(f"cannot replace {path}: {exc.strerror}") from None
    try:
        moved = os.lstat(aside)
    except OSError:
        return
    if stat.S_ISLNK(moved.st_mode):
        _unlink_quietly(aside)
        return
    try:
        os.link(aside, path)  # exclusive: nothing else may have taken the name meanwhile
    except OSError as exc:
        raise RecordingError(f"cannot replace {path}: another process's file took its name meanwhile and could not "
                             f"be put back ({exc.strerror}); it is {aside}") from None
    _unlink_quietly(aside)


def _place_without_hard_links(partial: Path, path: Path) -> bool:
    """`_place` of a new name where the file system has no hard links: the new file is renamed into
    place, not exclusively — a run that created the name in the instant since the look is
    replaced, and learns it when it finishes (the recorder's close checks its file is the name's)."""
    os.rename(partial, path)
    return True
