"""Compiles a schema struct at one version into a decoder and an encoder.

Compilation happens once per (message, version); fixed-size fields are handled in ``fixed``.
Values: ints, bool, float, str, ``bytes`` (bytes, records, and uuid as 16 raw bytes), lists and dicts.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafka_emulator.protocol.api import Message
from kafka_emulator.protocol.fixed import (
    DecodeStep,
    EncodeStep,
    fixed_run_reader,
    fixed_run_writer,
    fixed_struct,
    is_fixed,
)
from kafka_emulator.protocol.primitives import (
    FIXED_FORMATS,
    DecodeError,
    Reader,
    Writer,
    bytes_reader,
    bytes_writer,
    encode_length,
    encode_uvarint,
    read_length,
    read_uvarint,
    string_reader,
    string_writer,
)
from kafka_emulator.protocol.rows import Rows, rows_writer
from kafka_emulator.protocol.schema import FieldSpec, SchemaError
from kafka_emulator.protocol.values import default_factory


@dataclass(frozen=True)
class StructCodec:
    read: Callable[[bytes, int], tuple[Message, int]]
    write: Callable[[Message, list[bytes]], None]
    defaults: Callable[[], Message]


@dataclass(frozen=True)
class _Tagged:
    tag: int
    name: str
    reader: Reader
    writer: Writer
    default: Callable[[], Any]


def compile_struct(fields: tuple[FieldSpec, ...], version: int, flexible: bool) -> StructCodec:
    present = [f for f in fields if version in f.versions]
    tagged = [f for f in present if flexible and f.tag is not None and version in f.tagged_versions]
    regular = [f for f in present if f not in tagged]
    decode_steps, encode_steps = _regular_steps(regular, version, flexible)
    tags = sorted((_compile_tagged(f, version) for f in tagged), key=lambda t: t.tag)
    factories = [(f.name, default_factory(f, version, flexible)) for f in present]

    def defaults() -> Message:
        return {name: make() for name, make in factories}

    read = _struct_reader(decode_steps, tags, flexible)
    write = _struct_writer(encode_steps, tags, flexible)
    if regular and not tags and all(is_fixed(f) for f in regular):
        read, write = fixed_struct(regular, version, flexible, read)
    return StructCodec(read=read, write=write, defaults=defaults)


def _regular_steps(
    fields: list[FieldSpec], version: int, flexible: bool
) -> tuple[list[DecodeStep], list[EncodeStep]]:
    decode_steps: list[DecodeStep] = []
    encode_steps: list[EncodeStep] = []
    run: list[FieldSpec] = []
    for field in [*fields, None]:
        if field is not None and is_fixed(field):
            run.append(field)
            continue
        if run:
            decode_steps.append(fixed_run_reader(run))
            encode_steps.append(fixed_run_writer(run, version, flexible))
            run = []
        if field is not None:
            decode_steps.append(_field_reader(field.name, field_reader(field, version, flexible)))
            encode_steps.append(_field_writer(field, version, flexible))
    return decode_steps, encode_steps


def _field_reader(name: str, reader: Reader) -> DecodeStep:
    def read(buf: bytes, pos: int, msg: Message) -> int:
        msg[name], pos = reader(buf, pos)
        return pos

    return read


def _field_writer(field: FieldSpec, version: int, flexible: bool) -> EncodeStep:
    writer = field_writer(field, version, flexible)
    make_default = default_factory(field, version, flexible)
    name = field.name

    def write(msg: Message, out: list[bytes]) -> None:
        value = msg[name] if name in msg else make_default()
        writer(value, out)

    return write


def _compile_tagged(field: FieldSpec, version: int) -> _Tagged:
    assert field.tag is not None
    return _Tagged(
        tag=field.tag,
        name=field.name,
        reader=field_reader(field, version, True),
        writer=field_writer(field, version, True),
        default=default_factory(field, version, True),
    )


def _struct_reader(
    steps: list[DecodeStep], tags: list[_Tagged], flexible: bool
) -> Callable[[bytes, int], tuple[Message, int]]:
    by_tag = {t.tag: t for t in tags}

    def read_tags(buf: bytes, pos: int, msg: Message) -> int:
        for t in tags:
            msg[t.name] = t.default()
        count, pos = read_uvarint(buf, pos)
        for _ in range(count):
            tag, pos = read_uvarint(buf, pos)
            size, pos = read_uvarint(buf, pos)
            end = pos + size
            if end > len(buf):
                raise DecodeError("truncated tagged field")
            known = by_tag.get(tag)
            if known is not None:
                msg[known.name], value_end = known.reader(buf, pos)
                if value_end > end:
                    raise DecodeError(f"tagged field {known.name} overruns its size")
            pos = end
        return pos

    def read(buf: bytes, pos: int) -> tuple[Message, int]:
        msg: Message = {}
        for step in steps:
            pos = step(buf, pos, msg)
        if flexible:
            if not tags and pos < len(buf) and buf[pos] == 0:
                return msg, pos + 1
            pos = read_tags(buf, pos, msg)
        return msg, pos

    return read


def _struct_writer(
    steps: list[EncodeStep], tags: list[_Tagged], flexible: bool
) -> Callable[[Message, list[bytes]], None]:
    defaults = [(t, t.default()) for t in tags]

    def write_tags(msg: Message, out: list[bytes]) -> None:
        chunks: list[bytes] = []
        for t, default in defaults:
            value = msg.get(t.name, default)
            if value == default:
                continue  # Kafka writes a tagged field only when it differs from its default
            body: list[bytes] = []
            t.writer(value, body)
            data = b"".join(body)
            chunks.append(encode_uvarint(t.tag) + encode_uvarint(len(data)) + data)
        out.append(encode_uvarint(len(chunks)))
        out.extend(chunks)

    def write(msg: Message, out: list[bytes]) -> None:
        for step in steps:
            step(msg, out)
        if flexible:
            if tags:
                write_tags(msg, out)
            else:
                out.append(b"\x00")

    return write


def _field_flexible(field: FieldSpec, version: int, flexible: bool) -> bool:
    if field.flexible_versions is None:
        return flexible
    return flexible and version in field.flexible_versions


def field_reader(field: FieldSpec, version: int, flexible: bool) -> Reader:
    nullable = version in field.nullable_versions
    flex = _field_flexible(field, version, flexible)
    if field.is_array:
        return _array_reader(field, version, flex, nullable)
    return _scalar_reader(field, version, flex, nullable)


def field_writer(field: FieldSpec, version: int, flexible: bool) -> Writer:
    nullable = version in field.nullable_versions
    flex = _field_flexible(field, version, flexible)
    if field.is_array:
        return _array_writer(field, version, flex, nullable)
    return _scalar_writer(field, version, flex, nullable)


def _scalar_reader(field: FieldSpec, version: int, flexible: bool, nullable: bool) -> Reader:
    kind = field.element_type
    if kind in FIXED_FORMATS:
        layout = struct.Struct(">" + FIXED_FORMATS[kind])

        def read_fixed(buf: bytes, pos: int) -> tuple[Any, int]:
            return layout.unpack_from(buf, pos)[0], pos + layout.size

        return read_fixed
    if kind == "string":
        return string_reader(flexible, nullable)
    if kind in ("bytes", "records"):
        return bytes_reader(flexible, nullable)
    if nullable:
        raise SchemaError(f"nullable struct {field.name} is not supported")
    return compile_struct(field.fields, version, flexible).read


def _scalar_writer(field: FieldSpec, version: int, flexible: bool, nullable: bool) -> Writer:
    kind = field.element_type
    if kind in FIXED_FORMATS:
        pack = struct.Struct(">" + FIXED_FORMATS[kind]).pack

        def write_fixed(value: Any, out: list[bytes]) -> None:
            out.append(pack(value))

        return write_fixed
    if kind == "string":
        return string_writer(flexible, nullable)
    if kind in ("bytes", "records"):
        return bytes_writer(flexible, nullable)
    if nullable:
        raise SchemaError(f"nullable struct {field.name} is not supported")
    return compile_struct(field.fields, version, flexible).write


def _array_reader(field: FieldSpec, version: int, flexible: bool, nullable: bool) -> Reader:
    kind = field.element_type
    fixed = FIXED_FORMATS.get(kind)
    element = None if fixed else _scalar_reader(field, version, flexible, nullable=False)

    def read(buf: bytes, pos: int) -> tuple[list[Any] | None, int]:
        count, pos = read_length(buf, pos, flexible, wide=True)
        if count < 0:
            if count == -1 and nullable:
                return None, pos
            raise DecodeError(f"invalid array length {count}")
        if count > len(buf) - pos:
            raise DecodeError("array longer than the frame")
        if fixed is not None:
            layout = struct.Struct(_repeat(fixed, count))
            return list(layout.unpack_from(buf, pos)), pos + layout.size
        assert element is not None
        items: list[Any] = []
        append = items.append
        for _ in range(count):
            item, pos = element(buf, pos)
            append(item)
        return items, pos

    return read


def _array_writer(field: FieldSpec, version: int, flexible: bool, nullable: bool) -> Writer:
    kind = field.element_type
    fixed = FIXED_FORMATS.get(kind)
    element = None if fixed else _scalar_writer(field, version, flexible, nullable=False)
    rows = None
    if element is not None and field.fields:
        rows = rows_writer(field.fields, version, flexible, element)

    def write(value: list[Any] | Rows | None, out: list[bytes]) -> None:
        if value is None:
            if not nullable:
                raise ValueError(f"null for non-nullable array {field.name}")
            out.append(encode_length(-1, flexible, wide=True))
            return
        out.append(encode_length(len(value), flexible, wide=True))
        if type(value) is Rows:
            if rows is not None:
                rows(value, out)
                return
        elif fixed is not None:
            out.append(struct.pack(_repeat(fixed, len(value)), *value))
            return
        assert element is not None
        for item in value:
            element(item, out)

    return write


def _repeat(fixed: str, count: int) -> str:
    """A struct format for ``count`` values; "16s" (uuid) is one value, so it is written out per value."""
    return f">{count}{fixed}" if len(fixed) == 1 else ">" + fixed * count
