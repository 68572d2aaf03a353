"""Kafka message JSON schemas: loading (with Kafka's ``//`` comments) and a small typed model."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA_DIR = Path(__file__).parent / "schemas"
_MAX_VERSION = 0x7FFF


class SchemaError(ValueError):
    """A schema uses something the codec does not understand."""


@dataclass(frozen=True)
class VersionRange:
    """Kafka's "0+", "3-5", "none" version ranges."""

    low: int
    high: int

    @classmethod
    def parse(cls, text: str | None) -> VersionRange:
        if text is None or text == "none":
            return cls(1, 0)
        if text.endswith("+"):
            return cls(int(text[:-1]), _MAX_VERSION)
        if "-" in text:
            low, high = text.split("-")
            return cls(int(low), int(high))
        return cls(int(text), int(text))

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.low <= version <= self.high

    @property
    def empty(self) -> bool:
        return self.low > self.high


@dataclass(frozen=True)
class FieldSpec:
    name: str
    type: str
    versions: VersionRange
    nullable_versions: VersionRange
    tagged_versions: VersionRange
    tag: int | None
    flexible_versions: VersionRange | None  # a field-level override, e.g. ClientId in the header
    default: str | None
    fields: tuple[FieldSpec, ...]

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:] if self.is_array else self.type


@dataclass(frozen=True)
class MessageSpec:
    name: str
    kind: str  # request, response, header, data
    api_key: int | None
    valid_versions: VersionRange
    flexible_versions: VersionRange
    fields: tuple[FieldSpec, ...]


def strip_comments(text: str) -> str:
    """Kafka's schema files carry whole-line ``//`` comments, which JSON does not allow."""
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))


def _parse_field(raw: dict[str, Any], common: dict[str, list[dict[str, Any]]]) -> FieldSpec:
    type_name = str(raw["type"])
    children = raw.get("fields")
    element = type_name[2:] if type_name.startswith("[]") else type_name
    if children is None and element in common:
        children = common[element]
    flexible = raw.get("flexibleVersions")
    return FieldSpec(
        name=str(raw["name"]),
        type=type_name,
        versions=VersionRange.parse(raw.get("versions")),
        nullable_versions=VersionRange.parse(raw.get("nullableVersions")),
        tagged_versions=VersionRange.parse(raw.get("taggedVersions")),
        tag=int(raw["tag"]) if "tag" in raw else None,
        flexible_versions=VersionRange.parse(flexible) if flexible is not None else None,
        default=str(raw["default"]) if "default" in raw else None,
        fields=tuple(_parse_field(child, common) for child in children or ()),
    )


def parse_spec(raw: dict[str, Any]) -> MessageSpec:
    common = {str(s["name"]): list(s["fields"]) for s in raw.get("commonStructs", [])}
    return MessageSpec(
        name=str(raw["name"]),
        kind=str(raw["type"]),
        api_key=int(raw["apiKey"]) if "apiKey" in raw else None,
        valid_versions=VersionRange.parse(raw["validVersions"]),
        flexible_versions=VersionRange.parse(raw.get("flexibleVersions")),
        fields=tuple(_parse_field(f, common) for f in raw["fields"]),
    )


def load_spec(path: Path) -> MessageSpec:
    return parse_spec(json.loads(strip_comments(path.read_text(encoding="utf-8"))))


def load_all(directory: Path = SCHEMA_DIR) -> dict[str, MessageSpec]:
    """Every schema in the directory, keyed by message name (``DeleteRecordsRequest``)."""
    specs = (load_spec(path) for path in sorted(directory.glob("*.json")))
    return {spec.name: spec for spec in specs}
