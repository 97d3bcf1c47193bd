"""MCAP recording, replay and damaged-file recovery for tactile collections.

`McapRecorder` writes collections from a transport or from trackers; `McapReplay` is a file as a
`TactileTracker` source; `recover` rewrites a damaged file; `inspect_file` reports and checks one.
The file layout is described in `recording.naming`; the bounds on hostile files in docs/reliability.md.
"""
from .inspect import InspectReport, inspect_file
from .recorder import McapRecorder
from .repair import RecoveryReport, recover
from .replay import McapReplay

__all__ = ["McapRecorder", "McapReplay", "recover", "RecoveryReport", "inspect_file", "InspectReport"]
