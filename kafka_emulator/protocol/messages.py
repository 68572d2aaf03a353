"""The vendored Kafka APIs: names, versions, headers, and compiled body codecs per (API, version)."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import cache

from kafka_emulator.protocol.api import Message
from kafka_emulator.protocol.codec import StructCodec, compile_struct
from kafka_emulator.protocol.primitives import DecodeError
from kafka_emulator.protocol.schema import MessageSpec, load_all

API_VERSIONS_KEY = 18
_HEADER_PREFIX = struct.Struct(">hhi")
_CORRELATION = struct.Struct(">i")


@dataclass(frozen=True)
class ApiSchema:
    key: int
    name: str  # Kafka's API name without the Request/Response suffix, e.g. "DeleteRecords"
    request: MessageSpec
    response: MessageSpec


@dataclass(frozen=True)
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None


@cache
def _specs() -> dict[str, MessageSpec]:
    return load_all()


@cache
def apis() -> dict[int, ApiSchema]:
    specs = _specs()
    found: dict[int, ApiSchema] = {}
    for spec in specs.values():
        if spec.kind != "request" or spec.api_key is None:
            continue
        name = spec.name.removesuffix("Request")
        found[spec.api_key] = ApiSchema(spec.api_key, name, spec, specs[name + "Response"])
    return found


def message_spec(name: str) -> MessageSpec:
    """Any vendored schema by name, e.g. ``ConsumerProtocolSubscription``."""
    return _specs()[name]


def api_key(api: str | int) -> int:
    """Accepts a key or Kafka's API name ("DeleteRecords"), returns the key."""
    if isinstance(api, int):
        if api not in apis():
            raise KeyError(f"unknown API key {api}")
        return api
    for schema in apis().values():
        if schema.name == api:
            return schema.key
    raise KeyError(f"unknown API {api!r}")


def api_name(key: int) -> str:
    return apis()[key].name


def supported_versions(key: int) -> tuple[int, int]:
    """The (min, max) request versions the vendored schema defines."""
    valid = apis()[key].request.valid_versions
    return valid.low, valid.high


def is_flexible(key: int, version: int) -> bool:
    return version in apis()[key].request.flexible_versions


@cache
def request_codec(key: int, version: int) -> StructCodec:
    spec = apis()[key].request
    return compile_struct(spec.fields, version, version in spec.flexible_versions)


@cache
def response_codec(key: int, version: int) -> StructCodec:
    spec = apis()[key].response
    return compile_struct(spec.fields, version, version in spec.flexible_versions)


@cache
def _request_header_codec(header_version: int) -> StructCodec:
    spec = _specs()["RequestHeader"]
    return compile_struct(spec.fields, header_version, header_version in spec.flexible_versions)


def request_header_version(key: int, version: int) -> int:
    return 2 if is_flexible(key, version) else 1


def response_header_version(key: int, version: int) -> int:
    # ApiVersions answers with header v0 at every version, so that a client which does not yet
    # know the broker's versions can always read the header.
    if key == API_VERSIONS_KEY:
        return 0
    return 1 if is_flexible(key, version) else 0


def peek_api(frame: bytes) -> tuple[int, int]:
    """API key and version of a request frame, without decoding anything else."""
    if len(frame) < 4:
        raise DecodeError("frame shorter than a request header")
    key, version = struct.unpack_from(">hh", frame, 0)
    return int(key), int(version)


def decode_request_header(frame: bytes) -> tuple[RequestHeader, int]:
    """Header of a request for a known API key; returns the header and the offset of the body."""
    key, version = peek_api(frame)
    codec = _request_header_codec(request_header_version(key, version))
    try:
        header, pos = codec.read(frame, 0)
    except struct.error as exc:
        raise DecodeError("truncated request header") from exc
    return RequestHeader(key, version, header["CorrelationId"], header["ClientId"]), pos


def decode_request(frame: bytes) -> tuple[RequestHeader, Message]:
    header, pos = decode_request_header(frame)
    try:
        body, _ = request_codec(header.api_key, header.api_version).read(frame, pos)
    except (struct.error, IndexError) as exc:
        raise DecodeError(f"truncated {api_name(header.api_key)} request") from exc
    return header, body


def encode_request(header: RequestHeader, body: Message) -> bytes:
    """A request frame without its size prefix (used by tests and tools)."""
    out: list[bytes] = []
    fields = {
        "RequestApiKey": header.api_key,
        "RequestApiVersion": header.api_version,
        "CorrelationId": header.correlation_id,
        "ClientId": header.client_id,
    }
    _request_header_codec(request_header_version(header.api_key, header.api_version)).write(fields, out)
    request_codec(header.api_key, header.api_version).write(body, out)
    return b"".join(out)


def encode_response(key: int, version: int, correlation_id: int, body: Message) -> bytes:
    """A response frame without its size prefix."""
    out = [_CORRELATION.pack(correlation_id)]
    if response_header_version(key, version) == 1:
        out.append(b"\x00")
    response_codec(key, version).write(body, out)
    return b"".join(out)


def decode_response(key: int, version: int, frame: bytes) -> tuple[int, Message]:
    """Correlation id and body of a response frame (used by tests and tools)."""
    (correlation_id,) = _CORRELATION.unpack_from(frame, 0)
    pos = 4
    if response_header_version(key, version) == 1:
        pos = _skip_header_tags(frame, pos)
    body, _ = response_codec(key, version).read(frame, pos)
    return int(correlation_id), body


@cache
def _header_tags_codec() -> StructCodec:
    return compile_struct((), 1, True)


def _skip_header_tags(frame: bytes, pos: int) -> int:
    _, pos = _header_tags_codec().read(frame, pos)
    return pos


def precompile() -> None:
    """Compile every request and response codec now, so the first request does not pay for it."""
    for schema in apis().values():
        for version in range(schema.request.valid_versions.low, schema.request.valid_versions.high + 1):
            request_codec(schema.key, version)
            response_codec(schema.key, version)
