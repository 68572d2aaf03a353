"""Struct arrays handed to the encoder as rows (tuples) instead of one dict per element.

An OffsetFetch of 10,000 partitions for 50 groups answers half a million partition entries; building a
dict for each and writing it field by field cost the emulator about a second per such request. A
handler may instead give ``Rows(names, values)``: the encoder packs the whole array with one ``struct``
call when every string in it is empty (Kafka's usual commit metadata), else it writes row by row.
Everything else still sees a sequence of messages (``rows[i]`` is a dict), so handler tests need not care.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from itertools import chain, repeat
from typing import Any, overload

from kafka_emulator.protocol.api import Message
from kafka_emulator.protocol.primitives import FIXED_FORMATS
from kafka_emulator.protocol.schema import FieldSpec
from kafka_emulator.protocol.values import default_factory

RowsWrite = Callable[["Rows", list[bytes]], None]


class Rows(Sequence[Message]):
    """Array elements as tuples of the fields ``names`` (schema fields not named take their default)."""

    __slots__ = ("names", "values")

    def __init__(self, names: tuple[str, ...], values: list[tuple[Any, ...]]) -> None:
        self.names = names
        self.values = values

    def __len__(self) -> int:
        return len(self.values)

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...

    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        if isinstance(index, slice):
            return [dict(zip(self.names, row, strict=True)) for row in self.values[index]]
        return dict(zip(self.names, self.values[index], strict=True))

    def __iter__(self) -> Iterator[Message]:
        return (dict(zip(self.names, row, strict=True)) for row in self.values)


def rows_writer(
    fields: tuple[FieldSpec, ...],
    version: int,
    flexible: bool,
    element: Callable[[Message, list[bytes]], None],
) -> RowsWrite | None:
    """A writer for ``Rows`` of this struct, or None when the struct is not flat (only fixed-size and
    string fields, no tagged fields at this version): those arrays are always written element by element."""
    present = [f for f in fields if version in f.versions]
    if any(flexible and f.tag is not None and version in f.tagged_versions for f in present):
        return None
    if not all(f.type in FIXED_FORMATS or f.type == "string" for f in present):
        return None
    plans: dict[tuple[str, ...], Callable[[list[tuple[Any, ...]]], bytes | None]] = {}

    def write(rows: Rows, out: list[bytes]) -> None:
        plan = plans.get(rows.names)
        if plan is None:
            plan = plans[rows.names] = _plan(present, version, flexible, rows.names)
        packed = plan(rows.values) if rows.values else b""
        if packed is not None:
            out.append(packed)
            return
        for message in rows:
            element(message, out)

    return write


def _plan(
    present: list[FieldSpec], version: int, flexible: bool, names: tuple[str, ...]
) -> Callable[[list[tuple[Any, ...]]], bytes | None]:
    """Per row: each present field from its column (or its default), strings as the empty string's
    length prefix (compact: 1, classic: 0), then the empty tag buffer of a flexible version."""
    layout = ""
    columns: list[int | None] = []  # index into the row, or None: the constant at the same position
    constants: list[Any] = []
    strings: list[int] = []
    for field in present:
        if field.type == "string":
            layout += "B" if flexible else "h"
            columns.append(None)
            constants.append(1 if flexible else 0)
            if field.name in names:
                strings.append(names.index(field.name))
            continue
        layout += FIXED_FORMATS[field.type]
        position = names.index(field.name) if field.name in names else None
        columns.append(position)
        constants.append(None if position is not None else default_factory(field, version, flexible)())
    if flexible:
        layout += "B"
        columns.append(None)
        constants.append(0)

    def pack(values: list[tuple[Any, ...]]) -> bytes | None:
        count = len(values)
        transposed = list(zip(*values, strict=True))
        if any(transposed[i].count("") != count for i in strings):
            return None  # some string is not empty (or null): element by element
        parts = [
            transposed[column] if column is not None else repeat(constant, count)
            for column, constant in zip(columns, constants, strict=True)
        ]
        return _layout(layout, count).pack(*chain.from_iterable(zip(*parts, strict=True)))

    return pack


@lru_cache(maxsize=256)
def _layout(row: str, count: int) -> struct.Struct:
    return struct.Struct(">" + row * count)
