"""Per-frame encoding and checking of force records of one taxel count, for the stream hot paths.

Every `TactileDataArrayRecord` of N taxels that the contract's encoder writes has the same bytes
except the 24 timestamp bytes and the N × 12 force bytes:
`head | timestamp | middle | forces | tail`. `ForceRecordCodec(N)` learns where those two spans
lie from the contract's own encoder (encoding frames that differ only in one span), checks the
learned split by re-encoding a probe both ways, and then:
- `encode` joins the constant parts with the packed timestamp and the force bytes (one
  allocation instead of the builder template copy, patching and conversion);
- `decode` accepts a payload whose structural bytes (head, middle, tail) equal those of the
  record the contract's decoder verified at construction: such a buffer is valid, because a
  FlatBuffer's validity depends only on its structural bytes (offsets, vtables, lengths), never on
  the float and int64 values. Anything else returns None: the caller then runs the contract's
  full, bounds-checked decoder, which raises the precise typed error.
When the split cannot be learned (an encoder that does not write this layout), `usable` is False
and callers use the contract's encoder and decoder for every frame.
"""
from __future__ import annotations

import struct

import numpy as np

from ..contract.records import DeviceDataTimestamp, decode_tactile_record, encode_tactile_record

_TIMESTAMP = struct.Struct("<qqq")
_new_tuple = tuple.__new__  # builds a NamedTuple without its Python-level __new__


def _changed_span(a: bytes, b: bytes) -> tuple[int, int] | None:
    """[start, end) of the bytes in which two equally long buffers differ (None if identical)."""
    if len(a) != len(b):
        return None
    diff = np.flatnonzero(np.frombuffer(a, np.uint8) != np.frombuffer(b, np.uint8))
    return (int(diff[0]), int(diff[-1]) + 1) if diff.size else None


class ForceRecordCodec:
    """Encode / check `TactileDataArrayRecord`s of `num_taxels` taxels (see the module doc)."""

    def __init__(self, num_taxels: int):
        self.num_taxels = num_taxels
        self.usable = False
        zeros = np.zeros((num_taxels, 3), np.float32)
        ones = np.full((num_taxels, 3), -1, np.int32).view(np.float32)  # every force byte 0xFF
        template = encode_tactile_record(zeros, DeviceDataTimestamp(0, 0, 0))
        self.size = len(template)
        ts = _changed_span(template, encode_tactile_record(zeros, DeviceDataTimestamp(-1, -1, -1)))
        fs = _changed_span(template, encode_tactile_record(ones, DeviceDataTimestamp(0, 0, 0)))
        if num_taxels < 1 or ts is None or fs is None or ts[1] - ts[0] != 24 or \
                fs[1] - fs[0] != 12 * num_taxels or ts[1] > fs[0]:
            return
        self._ts = ts[0]
        self._forces = fs[0]
        self._head = template[: ts[0]]
        self._middle = template[ts[1] : fs[0]]
        self._tail = template[fs[1] :]
        self._tail_start = fs[1]
        decode_tactile_record(template)  # the structural bytes pass the full verifier
        probe = np.arange(3 * num_taxels, dtype=np.float32).reshape(num_taxels, 3) - 7.5
        stamp = (-(2**63), 2**62 + 12345, 2**63 - 1)
        reference = encode_tactile_record(probe, DeviceDataTimestamp(*stamp))
        joined = self._join(probe, stamp)
        if joined != reference or self.check_bytes(reference) is None:
            return
        self.usable = True
        # Batches view the joined payloads as rows of float32: needs 4-byte aligned rows and forces.
        self._batchable = self.size % 4 == 0 and self._forces % 4 == 0
        self._head_u8 = np.frombuffer(self._head, np.uint8)
        self._middle_u8 = np.frombuffer(self._middle, np.uint8)
        self._tail_u8 = np.frombuffer(self._tail, np.uint8)

    def _join(self, forces: np.ndarray, stamp: tuple[int, int, int]) -> bytes:
        return b"".join((self._head, _TIMESTAMP.pack(*stamp), self._middle, forces.tobytes(), self._tail))

    def encode(self, forces: np.ndarray, available_ns: int, sample_ns: int, device_ns: int) -> bytes:
        """The record of `forces` (C-contiguous `(N, 3)` float32 [N]) and its timestamp [ns];
        equal, byte for byte, to the contract's `encode_tactile_record`. Raises `struct.error` for
        a timestamp that is not an int64 (the caller then lets the contract's encoder judge it)."""
        return b"".join((self._head, _TIMESTAMP.pack(available_ns, sample_ns, device_ns), self._middle,
                         forces.tobytes(), self._tail))

    def check_bytes(self, payload: bytes) -> tuple[np.ndarray, DeviceDataTimestamp] | None:
        """`decode` for a payload known to be `bytes`, of a `usable` codec (the hot path)."""
        ts, fp = self._ts, self._forces
        if (len(payload) != self.size or payload[:ts] != self._head or payload[ts + 24 : fp] != self._middle
                or payload[self._tail_start :] != self._tail):
            return None
        forces = np.frombuffer(payload, np.float32, 3 * self.num_taxels, fp).reshape(self.num_taxels, 3)
        return forces, _new_tuple(DeviceDataTimestamp, _TIMESTAMP.unpack_from(payload, ts))

    def check_batch(self, payloads: list) -> list[tuple[np.ndarray, DeviceDataTimestamp, bool] | None]:
        """`decode` of many payloads at once, plus whether each frame's forces are all finite:
        per payload `(forces, timestamp, finite)` or None (decode that one with the contract's
        verifier). The structural bytes and finiteness of all of them are checked with a few
        numpy operations on the joined payloads; each `forces` is a read-only `(N, 3)` view into
        that joined copy (it keeps the whole batch alive: callers bound the batch size)."""
        size, n = self.size, self.num_taxels
        out: list = [None] * len(payloads)
        if not self.usable:
            return out
        rows = [i for i, p in enumerate(payloads) if type(p) is bytes and len(p) == size]
        if not rows:
            return out
        if not self._batchable:
            for i in rows:
                checked = self.check_bytes(payloads[i])
                out[i] = None if checked is None else (*checked, bool(np.isfinite(checked[0]).all()))
            return out
        joined = b"".join([payloads[i] for i in rows])
        u8 = np.frombuffer(joined, np.uint8).reshape(len(rows), size)
        ts, fp, tail = self._ts, self._forces, self._tail_start
        valid = (u8[:, :ts] == self._head_u8).all(axis=1)
        valid &= (u8[:, ts + 24 : fp] == self._middle_u8).all(axis=1)
        valid &= (u8[:, tail:] == self._tail_u8).all(axis=1)
        first = fp // 4
        forces = np.frombuffer(joined, np.float32).reshape(len(rows), size // 4)[:, first : first + 3 * n]
        forces = forces.reshape(len(rows), n, 3)
        finite = np.isfinite(forces).all(axis=(1, 2)).tolist()
        unpack = _TIMESTAMP.unpack_from
        new = _new_tuple
        for row, (i, ok) in enumerate(zip(rows, valid.tolist())):
            if ok:
                out[i] = (forces[row], new(DeviceDataTimestamp, unpack(joined, row * size + ts)), finite[row])
        return out

    def decode(self, payload: object) -> tuple[np.ndarray, DeviceDataTimestamp] | None:
        """(forces, timestamp) of a `bytes` payload laid out as this codec's records — forces a
        read-only `(N, 3)` float32 view [N] — or None for anything else (other size, other
        structural bytes, not `bytes`): decode that with the contract's verifier."""
        if not self.usable or type(payload) is not bytes:
            return None
        return self.check_bytes(payload)
