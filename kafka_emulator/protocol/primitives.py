"""Readers and writers for Kafka's primitive wire types.

A reader takes ``(buf, pos)`` and returns ``(value, new_pos)``; a writer appends encoded bytes to a list
that the caller joins once. Lengths are checked explicitly because slicing past the end of ``bytes``
silently returns less data.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

Reader = Callable[[bytes, int], tuple[Any, int]]
Writer = Callable[[Any, list[bytes]], None]

FIXED_FORMATS: dict[str, str] = {
    "bool": "?",
    "int8": "b",
    "int16": "h",
    "uint16": "H",
    "int32": "i",
    "uint32": "I",
    "int64": "q",
    "float64": "d",
    "uuid": "16s",
}

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_SMALL_UVARINTS = [bytes([n]) for n in range(128)]


class DecodeError(ValueError):
    """The bytes do not form a valid message of the expected schema and version."""


def read_uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        if pos >= len(buf):
            raise DecodeError("truncated varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 28:
            raise DecodeError("varint is longer than 5 bytes")


def encode_uvarint(value: int) -> bytes:
    if 0 <= value < 128:
        return _SMALL_UVARINTS[value]
    if value < 0 or value > 0xFFFFFFFF:
        raise ValueError(f"unsigned varint out of range: {value}")
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_length(buf: bytes, pos: int, flexible: bool, wide: bool) -> tuple[int, int]:
    """Length prefix of a string (int16), bytes or array (int32), or compact (uvarint N+1); -1 is null."""
    if flexible:
        raw, pos = read_uvarint(buf, pos)
        return raw - 1, pos
    fmt = _INT32 if wide else _INT16
    if pos + fmt.size > len(buf):
        raise DecodeError("truncated length prefix")
    (length,) = fmt.unpack_from(buf, pos)
    return int(length), pos + fmt.size


def encode_length(length: int, flexible: bool, wide: bool) -> bytes:
    if flexible:
        return encode_uvarint(length + 1)
    return (_INT32 if wide else _INT16).pack(length)


def _take(buf: bytes, pos: int, length: int, nullable: bool) -> tuple[bytes | None, int]:
    if length < 0:
        if length == -1 and nullable:
            return None, pos
        raise DecodeError(f"invalid length {length}")
    end = pos + length
    if end > len(buf):
        raise DecodeError("truncated value")
    return buf[pos:end], end


def string_reader(flexible: bool, nullable: bool) -> Reader:
    def read(buf: bytes, pos: int) -> tuple[str | None, int]:
        length, pos = read_length(buf, pos, flexible, wide=False)
        raw, pos = _take(buf, pos, length, nullable)
        if raw is None:
            return None, pos
        try:
            return raw.decode("utf-8"), pos
        except UnicodeDecodeError as exc:
            raise DecodeError("string is not valid UTF-8") from exc

    return read


def string_writer(flexible: bool, nullable: bool) -> Writer:
    def write(value: str | None, out: list[bytes]) -> None:
        if value is None:
            if not nullable:
                raise ValueError("null value for a non-nullable string")
            out.append(encode_length(-1, flexible, wide=False))
            return
        raw = value.encode("utf-8")
        out.append(encode_length(len(raw), flexible, wide=False))
        out.append(raw)

    return write


def bytes_reader(flexible: bool, nullable: bool) -> Reader:
    def read(buf: bytes, pos: int) -> tuple[bytes | None, int]:
        length, pos = read_length(buf, pos, flexible, wide=True)
        return _take(buf, pos, length, nullable)

    return read


def bytes_writer(flexible: bool, nullable: bool) -> Writer:
    def write(value: bytes | None, out: list[bytes]) -> None:
        if value is None:
            if not nullable:
                raise ValueError("null value for non-nullable bytes")
            out.append(encode_length(-1, flexible, wide=True))
            return
        out.append(encode_length(len(value), flexible, wide=True))
        out.append(bytes(value))

    return write
