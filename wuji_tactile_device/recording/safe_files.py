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
  name asked for), so `open_recording` creates it exclusively too — replacing an existing one
  (`overwrite`) unlinks it first, never writing through it — and holds an exclusive `flock` on
  it while recording: a second run onto the same name is refused while the first one writes.
"""
from __future__ import annotations

import errno
import fcntl
import os
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
    without `overwrite`, a special file, and a file another recording is writing."""
    path = Path(path)
    check_target(path, overwrite)
    if overwrite:
        _refuse_if_being_recorded(path)
        try:
            os.unlink(path)  # a link is removed itself; what it points to is never written
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise RecordingError(f"cannot replace {path}: {exc.strerror}") from None
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    except FileExistsError:
        raise RecordingError(f"{path} already exists" + (" (created by another process meanwhile)" if overwrite
                                                         else f" ({_OVERWRITE})")) from None
    except OSError as exc:
        raise RecordingError(f"cannot create {path}: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise RecordingError(f"{path} is being written by another process") from None
    return os.fdopen(fd, "wb")


def _refuse_if_being_recorded(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return  # absent, a link, unreadable: nothing recording into it that this could see
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        raise RecordingError(f"{path} is being recorded by another process; not replaced") from None
    finally:
        os.close(fd)
