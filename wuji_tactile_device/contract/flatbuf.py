"""Bounds checks for FlatBuffers read from outside (Python FlatBuffers has no verifier).

Every decode path walks the buffer with these primitives before any accessor or numpy view
touches it: file identifier, root and vtable offsets, every field against its table, every
vector's offset and length against the buffer, alignment of tables, vectors and structs. A
failure raises `InvalidMessageError` naming the message, the field and what was wrong — never
`struct.error`, `IndexError` or an allocation driven by a forged length.
"""
from __future__ import annotations

import mmap
import struct
from typing import NamedTuple

from ..errors import InvalidMessageError, MessageTooLargeError

_U32 = struct.Struct("<I").unpack_from
_I32 = struct.Struct("<i").unpack_from
_U16X2 = struct.Struct("<HH").unpack_from
_VTABLE_FIELDS = [struct.Struct(f"<{k}H").unpack_from for k in range(32)]


class Table(NamedTuple):
    """A verified table: its position, its vtable's field offsets and its inline size."""

    pos: int
    fields: tuple[int, ...]
    size: int
    name: str


_BUFFER_TYPES = (bytes, bytearray, memoryview, mmap.mmap)


def check_size(buf: object, max_size: int | None, what: str) -> int:
    """Length of `buf`; `InvalidMessageError` unless it is bytes, bytearray, memoryview or mmap
    (a str or a numpy array is not a message: `bytes(array)` is); `MessageTooLargeError` when it
    exceeds `max_size`."""
    if not isinstance(buf, _BUFFER_TYPES):
        raise InvalidMessageError(f"{what}: expected a bytes-like buffer, got {type(buf).__name__} (bytes, bytearray, "
                                  "memoryview or mmap" + ("; convert an array with bytes(array))"
                                                          if hasattr(buf, "__array__") else ")"))
    if isinstance(buf, memoryview) and (buf.itemsize != 1 or buf.ndim != 1 or not buf.c_contiguous):
        raise InvalidMessageError(f"{what}: expected a flat byte buffer, got a memoryview of format {buf.format!r} "
                                  f"and shape {buf.shape}")
    n = len(buf)
    if max_size is not None and n > max_size:
        raise MessageTooLargeError(f"{what}: {n} bytes exceeds the limit of {max_size} bytes (max_flatbuffer_size)")
    return n


def root(buf, n: int, identifier: bytes, what: str) -> Table:
    """Verify the root offset and file identifier; return the root table."""
    if n < 12:
        raise InvalidMessageError(f"{what}: {n} bytes is too short for a FlatBuffer with a root table")
    if buf[4:8] != identifier:
        raise InvalidMessageError(f"{what}: file identifier {bytes(buf[4:8])!r} is not {identifier!r}")
    return table(buf, n, _U32(buf, 0)[0], what)


def table(buf, n: int, pos: int, what: str) -> Table:
    """Verify the table at `pos` and its vtable."""
    if pos & 3 or pos > n - 4:
        raise InvalidMessageError(f"{what}: table offset {pos} is misaligned or outside the {n}-byte buffer")
    vt = pos - _I32(buf, pos)[0]
    if vt & 1 or vt < 0 or vt > n - 4:
        raise InvalidMessageError(f"{what}: vtable offset {vt} is misaligned or outside the {n}-byte buffer")
    vt_size, size = _U16X2(buf, vt)
    if vt_size & 1 or vt_size < 4 or vt + vt_size > n:
        raise InvalidMessageError(f"{what}: vtable of {vt_size} bytes at {vt} does not fit the {n}-byte buffer")
    if size < 4 or pos + size > n:
        raise InvalidMessageError(f"{what}: table of {size} bytes at {pos} does not fit the {n}-byte buffer")
    k = (vt_size - 4) >> 1
    fields = _VTABLE_FIELDS[k](buf, vt + 4) if k < 32 else struct.unpack_from(f"<{k}H", buf, vt + 4)
    return Table(pos, fields, size, what)


def field(t: Table, index: int, size: int, align: int, name: str) -> int:
    """Absolute position of an inline field (scalar, struct or offset), 0 when absent."""
    if index >= len(t.fields):
        return 0
    off = t.fields[index]
    if off == 0:
        return 0
    if off < 4 or off + size > t.size:
        raise InvalidMessageError(f"{t.name}.{name}: field at offset {off} ({size} bytes) lies outside its {t.size}-byte table")
    pos = t.pos + off
    if pos % align:
        raise InvalidMessageError(f"{t.name}.{name}: field at {pos} is not {align}-byte aligned")
    return pos


def _target(buf, n: int, pos: int, what: str) -> int:
    target = pos + _U32(buf, pos)[0]
    if target > n - 4:
        raise InvalidMessageError(f"{what}: offset points to {target}, outside the {n}-byte buffer")
    return target


def subtable(buf, n: int, t: Table, index: int, name: str) -> Table | None:
    """The verified sub-table in field `index`, or None when absent."""
    pos = field(t, index, 4, 4, name)
    if not pos:
        return None
    what = f"{t.name}.{name}"
    return table(buf, n, _target(buf, n, pos, what), what)


def vector(buf, n: int, t: Table, index: int, elem_size: int, name: str) -> tuple[int, int] | None:
    """(start, count) of the verified vector in field `index`, or None when absent. Elements are
    at most 4-byte aligned in this schema, so the 4-aligned length word makes them aligned."""
    pos = field(t, index, 4, 4, name)
    if not pos:
        return None
    what = f"{t.name}.{name}"
    target = _target(buf, n, pos, what)
    if target & 3:
        raise InvalidMessageError(f"{what}: vector at {target} is not 4-byte aligned")
    count = _U32(buf, target)[0]
    start = target + 4
    if count * elem_size > n - start:
        raise InvalidMessageError(
            f"{what}: vector claims {count} elements of {elem_size} bytes but only {n - start} bytes remain")
    return start, count
