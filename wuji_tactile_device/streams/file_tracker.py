"""FileTracker: the `TactileTracker` the file readers (replay, export, `load_recording`) use, for
which one bad record costs that record, never the whole file.

A recording holds what the wire carried, including a peer's faulty records on the same collection
(a NaN force, a record of another layout, metadata of another layout from a second producer
session). Live, the tracker refuses each with a typed error and goes on; a reader of the file must
do the same: a faulty data frame is dropped and counted (`error_policy="drop"`), a metadata record
that is refused (invalid, or differing from the adopted layout) is counted, and that session's data
stays withheld as the tracker rules say (counted in `counters.dropped_before_confirmation`).
`summary()` says what was skipped, for the reader's one-line warning; `inspect`/`validate` list
the same records as problems."""
from __future__ import annotations

from typing import Any

from ..errors import MessageTooLargeError, MetadataMismatchError, MetadataValidationError, InvalidMessageError
from .tracker import TactileTracker

#: What a refused metadata record raises from `update()` (the tracker always raises these).
_METADATA_FAULTS = (MetadataMismatchError, MetadataValidationError, MessageTooLargeError, InvalidMessageError)


class FileTracker(TactileTracker):
    """A tracker over a recording (`McapReplay`): faulty records are skipped and counted."""

    def __init__(self, collection_id: str, source: Any, **kwargs: Any) -> None:
        super().__init__(collection_id, source, error_policy="drop", **kwargs)
        self.refused_metadata = 0
        self.first_metadata_fault = ""
        self.first_data_fault = ""
        self._withheld_before = 0  # frames dropped before confirmation while no metadata was refused

    def update(self, timeout_s: float = 0.0) -> int:
        """As `TactileTracker.update`, but a refused metadata record is counted, not raised."""
        before = self.counters.delivered
        rejected = self.counters.rejected
        while True:
            try:
                super().update(timeout_s)
                break
            except _METADATA_FAULTS as exc:
                self.refused_metadata += 1
                rejected += 1  # this one is not a data frame
                if not self.first_metadata_fault:
                    self.first_metadata_fault = str(exc)
                timeout_s = 0.0
        if self.counters.rejected > rejected and not self.first_data_fault:
            self.first_data_fault = self.counters.last_error
        if not self.refused_metadata:
            self._withheld_before = self.counters.dropped_before_confirmation
        return self.counters.delivered - before

    @property
    def faulty_frames(self) -> int:
        """Data frames refused for their own content (malformed, wrong taxel count, non-finite)."""
        return self.counters.rejected - self.refused_metadata

    def summary(self) -> str:
        """'' when nothing was skipped, else one sentence naming the counts and the first fault."""
        parts = []
        if self.faulty_frames:
            parts.append(f"{self.faulty_frames} faulty data frame{'s' * (self.faulty_frames != 1)} "
                         f"(first: {self.first_data_fault})")
        if self.refused_metadata:
            withheld = self.counters.dropped_before_confirmation - self._withheld_before
            parts.append(f"{self.refused_metadata} metadata record{'s' * (self.refused_metadata != 1)} and the "
                         f"{withheld} data frames of the sessions they announced (first: {self.first_metadata_fault})")
        if not parts:
            return ""
        return (f"{self.collection_id}: skipped " + "; ".join(parts)
                + f"; the other {self.counters.delivered} frames were read (`wuji-tactile validate` lists each)")
