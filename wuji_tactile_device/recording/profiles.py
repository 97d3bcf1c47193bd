"""Recording profiles: what a recording file is laid out for.

- `default`: this package's layout (zstd chunks unless told otherwise, empty MCAP header profile).
- `isaac`: what Isaac Teleop's own recorder writes, so its `ReplaySession` reads the file as its
  own: uncompressed chunks (Isaac Teleop 1.5 reads no other), MCAP header profile `teleop`, the
  hand channels `<base>/left_hand`, `<base>/right_hand` with Isaac Teleop's exact compiled-in
  `core.HandPoseRecord` schema bytes (its replay compares the recorded schema with its own byte
  for byte and prints a two-line "MCAP schema mismatch" notice for any difference).

The schema bytes differ by Isaac Teleop release (they are compiled into its
`deviceio_session` extension). `isaac_hand_schema()` keys them by version: the bytes of each
known release ship with this package (`recording/isaac_schemas/hand_pose_<version>.bfbs`) and are
checked against the installed package when it is present; a release this package does not know
gets one warning line and the newest known bytes.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import logging
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import NamedTuple

log = logging.getLogger(__name__)

PROFILES = ("default", "isaac")
DEFAULT_PROFILE = "default"
#: MCAP header profile of Isaac Teleop's own recordings.
ISAAC_HEADER_PROFILE = "teleop"
#: Chunk compression of the isaac profile (Isaac Teleop 1.5's replay reads only uncompressed chunks).
ISAAC_COMPRESSION = "none"
#: Isaac Teleop releases whose hand schema bytes ship with this package: version → sha256 of the bytes.
KNOWN_HAND_SCHEMAS = {"1.5.175": "03a7eddd4fd7f5c633fa3385256acaa5bea46d8e0c6e376a49886f6a0119a12d"}
_NEWEST_KNOWN = "1.5.175"


class IsaacHandSchema(NamedTuple):
    """The hand schema bytes a file of the isaac profile carries, and where they come from."""

    data: bytes
    version: str  # the Isaac Teleop release the bytes belong to
    installed: str | None  # the installed isaacteleop version, None when not installed

    @property
    def verified_in_installed(self) -> bool:
        """The same bytes are inside the installed package's compiled extension (reads it: ≈ 2 MB)."""
        return in_installed_package(self.data)


def check_profile(profile: str) -> str:
    if profile not in PROFILES:
        raise ValueError(f"recording profile must be one of {', '.join(PROFILES)}, got {profile!r}")
    return profile


def shipped_hand_schema(version: str) -> bytes:
    """The `core.HandPoseRecord` .bfbs bytes of Isaac Teleop `version` shipped with this package."""
    if version not in KNOWN_HAND_SCHEMAS:
        raise ValueError(f"no shipped hand schema for Isaac Teleop {version!r} (known: {', '.join(KNOWN_HAND_SCHEMAS)})")
    data = resources.files(__package__).joinpath("isaac_schemas", f"hand_pose_{version}.bfbs").read_bytes()
    if hashlib.sha256(data).hexdigest() != KNOWN_HAND_SCHEMAS[version]:
        raise RuntimeError(f"the shipped hand schema of Isaac Teleop {version} is damaged (sha256 differs)")
    return data


def _installed_isaacteleop() -> tuple[str | None, list[Path]]:
    """(version, its compiled extension files) of the installed isaacteleop, or (None, [])."""
    try:
        version = importlib.metadata.version("isaacteleop")
    except importlib.metadata.PackageNotFoundError:
        return None, []
    spec = importlib.util.find_spec("isaacteleop")
    roots = list(spec.submodule_search_locations or []) if spec is not None else []
    return version, sorted(p for r in roots for p in Path(r).glob("deviceio_session/_deviceio_session*.so"))


def in_installed_package(data: bytes) -> bool:
    """True if `data` occurs in the installed isaacteleop's compiled `deviceio_session` extension."""
    for lib in _installed_isaacteleop()[1]:
        try:
            if data in lib.read_bytes():
                return True
        except OSError:
            pass
    return False


@lru_cache(maxsize=1)
def isaac_hand_schema() -> IsaacHandSchema:
    """The hand schema bytes for the installed Isaac Teleop (see the module doc): the shipped bytes
    of the installed release when this package knows it (no file is scanned), else the newest
    known release's, with one warning line."""
    installed, _ = _installed_isaacteleop()
    version = installed if installed in KNOWN_HAND_SCHEMAS else _NEWEST_KNOWN
    data = shipped_hand_schema(version)
    if installed is not None and installed not in KNOWN_HAND_SCHEMAS:
        found = in_installed_package(data)
        log.warning("isaacteleop %s is not a release whose hand schema this package knows (known: %s); the isaac "
                    "profile writes %s's bytes, %s", installed, ", ".join(KNOWN_HAND_SCHEMAS), version,
                    "which the installed package also contains" if found else
                    "which the installed package does not contain: its replay may print a schema notice")
    return IsaacHandSchema(data, version, installed)
