"""Kafka's primitive wire types, read from a response buffer by the adapter's hand-written decoders.

Non-flexible versions use int16-length strings and int32-length arrays; flexible versions (KIP-482)
use unsigned varints holding length + 1 (0 = null) and end each struct with tagged fields. Reading past
the end raises ``struct.error``, ``IndexError`` or ``ValueError``; each decoder turns those into one
"response truncated" error.
"""

from __future__ import annotations

import struct

INT16 = struct.Struct(">h")
INT32 = struct.Struct(">i")


def uvarint(value: int) -> bytes:
    """``value`` as an unsigned varint (the lengths of flexible versions), for the hand-written encoders."""
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


class WireReader:
    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes, pos: int = 0) -> None:
        self.buf = buf
        self.pos = pos

    def int16(self) -> int:
        (value,) = INT16.unpack_from(self.buf, self.pos)
        self.pos += 2
        return int(value)

    def int32(self) -> int:
        (value,) = INT32.unpack_from(self.buf, self.pos)
        self.pos += 4
        return int(value)

    def uvarint(self) -> int:
        value = shift = 0
        while True:
            byte = self.buf[self.pos]
            self.pos += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7

    def count(self, flexible: bool = False) -> int:
        """An array length (a null array counts as empty)."""
        return max(self.uvarint() - 1, 0) if flexible else max(self.int32(), 0)

    def nullable_string(self, flexible: bool = False) -> str | None:
        length = self.uvarint() - 1 if flexible else self.int16()
        if length < 0:
            return None
        start, self.pos = self.pos, self.pos + length
        if self.pos > len(self.buf):
            raise ValueError("a string runs past the end of the response")
        return self.buf[start : self.pos].decode()

    def string(self, flexible: bool = False) -> str:
        """A string, with null read as ""."""
        return self.nullable_string(flexible) or ""

    def skip_tags(self) -> None:
        if self.buf[self.pos] == 0:  # no tagged fields: the usual case, one byte
            self.pos += 1
            return
        for _ in range(self.uvarint()):
            self.uvarint()  # tag
            size = self.uvarint()  # read before advancing: ``pos += uvarint()`` would lose the size byte
            self.pos += size
