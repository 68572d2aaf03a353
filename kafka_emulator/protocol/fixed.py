"""Fixed-size fields (ints, bool, float64, uuid) packed with one ``struct`` call per run of them.

Runs of consecutive fixed-size fields share one ``struct.Struct`` so that, for example, a DeleteRecords
partition (int32 + int64 + empty tag buffer) costs one call; that keeps 10,000-partition requests cheap.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from kafka_emulator.protocol.api import Message
from kafka_emulator.protocol.primitives import FIXED_FORMATS
from kafka_emulator.protocol.schema import FieldSpec
from kafka_emulator.protocol.values import default_factory

DecodeStep = Callable[[bytes, int, Message], int]
EncodeStep = Callable[[Message, list[bytes]], None]
StructRead = Callable[[bytes, int], tuple[Message, int]]
StructWrite = Callable[[Message, list[bytes]], None]


def is_fixed(field: FieldSpec) -> bool:
    return field.type in FIXED_FORMATS


def fixed_run_reader(run: list[FieldSpec]) -> DecodeStep:
    layout = struct.Struct(">" + "".join(FIXED_FORMATS[f.type] for f in run))
    names = tuple(f.name for f in run)
    size = layout.size
    unpack = layout.unpack_from

    def read(buf: bytes, pos: int, msg: Message) -> int:
        msg.update(zip(names, unpack(buf, pos), strict=True))
        return pos + size

    return read


def fixed_run_writer(run: list[FieldSpec], version: int, flexible: bool) -> EncodeStep:
    pack = struct.Struct(">" + "".join(FIXED_FORMATS[f.type] for f in run)).pack
    pairs = tuple((f.name, default_factory(f, version, flexible)()) for f in run)

    def write(msg: Message, out: list[bytes]) -> None:
        get = msg.get
        out.append(pack(*[get(name, default) for name, default in pairs]))

    return write


def fixed_struct(
    fields: list[FieldSpec],
    version: int,
    flexible: bool,
    general_read: Callable[[bytes, int], tuple[Message, int]],
) -> tuple[Callable[[bytes, int], tuple[Message, int]], Callable[[Message, list[bytes]], None]]:
    """The hot path (partition entries): one struct call per entry, the empty tag buffer included."""
    layout = ">" + "".join(FIXED_FORMATS[f.type] for f in fields)
    unpack = struct.Struct(layout).unpack_from
    size = struct.calcsize(layout)
    pack = struct.Struct(layout + ("B" if flexible else "")).pack
    names = tuple(f.name for f in fields)
    pairs = tuple((f.name, default_factory(f, version, flexible)()) for f in fields)
    tail = (0,) if flexible else ()

    def read(buf: bytes, pos: int) -> tuple[Message, int]:
        end = pos + size
        if not flexible:
            return dict(zip(names, unpack(buf, pos), strict=True)), end
        if end < len(buf) and buf[end] == 0:
            return dict(zip(names, unpack(buf, pos), strict=True)), end + 1
        return general_read(buf, pos)  # tagged fields present (or truncated): the general path

    def write(msg: Message, out: list[bytes]) -> None:
        get = msg.get
        out.append(pack(*[get(name, default) for name, default in pairs], *tail))

    return read, write
