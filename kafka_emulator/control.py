"""HTTP control API of an `EmulatedCluster`, on loopback.

GET  /state                                          full state (replicas, groups, ACLs, faults)
POST /topics                                         {"name", "partitions", "replication_factor", "configs"}
POST /brokers/{id}/stop | /kill | /start | /drop-connections
POST /brokers/{id}/delete-records-max-version        {"version": 2}
POST /topics/{topic}/partitions/{p}/followers/{broker}/pause   (and /resume)
POST /topics/{topic}/partitions/{p}/leader           {"broker": id, "high_watermark", "catch_up_ms"}
POST /faults                                         {"broker", "api", "error", "count", "delay_ms"}
GET  /requests?api=&client_id=&after=&limit=         recorded requests, oldest first, paginated by seq
DELETE /requests                                     empties the request log
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from kafka_emulator.httpjson import HttpError, HttpRequest, JsonHttpServer
from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.state import TopicError

if TYPE_CHECKING:
    from kafka_emulator.cluster import EmulatedCluster

DEFAULT_PAGE_REQUESTS = 100
PAGE_PARTITIONS = 20_000
Route = Callable[[dict[str, str], dict[str, Any]], Awaitable[Any]]
_SEGMENT = "([^/]+)"


def _field(
    body: dict[str, Any], name: str, kind: type | tuple[type, ...], default: Any = ..., optional: bool = False
) -> Any:
    if name not in body or (optional and body[name] is None):
        if default is ...:
            raise HttpError(400, f"missing field {name!r}")
        return default
    value = body[name]
    if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
        raise HttpError(400, f"field {name!r} has the wrong type")
    return value


def _query_int(query: dict[str, Any], name: str, default: int) -> int:
    text = query.get(name)
    if text is None:
        return default
    try:
        return int(text)
    except ValueError:
        raise HttpError(400, f"{name} must be an integer") from None


def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise HttpError(404, f"{what} must be an integer") from None


class ControlServer:
    def __init__(self, cluster: EmulatedCluster, host: str = "127.0.0.1") -> None:
        self._cluster = cluster
        self._http = JsonHttpServer(self._dispatch, host)
        self._routes: list[tuple[str, re.Pattern[str], Route]] = [
            ("GET", re.compile(r"/state"), self._state),
            ("POST", re.compile(r"/topics"), self._create_topic),
            (
                "POST",
                re.compile(rf"/brokers/{_SEGMENT}/(stop|kill|start|drop-connections)"),
                self._broker_action,
            ),
            ("POST", re.compile(rf"/brokers/{_SEGMENT}/delete-records-max-version"), self._max_version),
            (
                "POST",
                re.compile(rf"/topics/{_SEGMENT}/partitions/{_SEGMENT}/followers/{_SEGMENT}/(pause|resume)"),
                self._follower,
            ),
            ("POST", re.compile(rf"/topics/{_SEGMENT}/partitions/{_SEGMENT}/leader"), self._leader),
            ("POST", re.compile(r"/faults"), self._fault),
            ("GET", re.compile(r"/requests"), self._requests),
            ("DELETE", re.compile(r"/requests"), self._clear_requests),
        ]

    @property
    def url(self) -> str:
        return self._http.url

    async def start(self, port: int = 0) -> None:
        await self._http.start(port)

    async def stop(self) -> None:
        await self._http.stop()

    async def _dispatch(self, request: HttpRequest) -> tuple[int, Any]:
        allowed: list[str] = []
        for method, pattern, route in self._routes:
            match = pattern.fullmatch(request.path)
            if match is None:
                continue
            if method != request.method:
                allowed.append(method)
                continue
            params = [unquote(group) for group in match.groups()]
            return 200, await self._call(route, params, request)
        if allowed:
            raise HttpError(405, f"method {request.method} not allowed; use {', '.join(allowed)}")
        raise HttpError(404, f"no route for {request.path}")

    async def _call(self, route: Route, params: list[str], request: HttpRequest) -> Any:
        # GET and DELETE take their parameters from the query string, in the same shape as a body.
        body = request.json() if request.method == "POST" else dict(request.query)
        try:
            return await route({str(i): p for i, p in enumerate(params)}, body)
        except TopicError as exc:
            status = 404 if exc.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION else 400
            raise HttpError(status, f"{ErrorCode(exc.error_code).name}: {exc}") from None
        except KeyError as exc:
            raise HttpError(404, str(exc.args[0]) if exc.args else "not found") from None
        except ValueError as exc:
            raise HttpError(400, str(exc)) from None

    async def _state(self, params: dict[str, str], body: dict[str, Any]) -> Any:
        return self._cluster.state()

    async def _create_topic(self, params: dict[str, str], body: dict[str, Any]) -> Any:
        name = _field(body, "name", str)
        partitions = _field(body, "partitions", int, 1)
        replication_factor = _field(body, "replication_factor", int, None, optional=True)
        configs = _field(body, "configs", dict, {}, optional=True)
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in configs.items()):
            raise HttpError(400, "configs must map strings to strings")
        self._cluster.create_topic(name, partitions, replication_factor, configs)
        return {"created": name}

    def _broker(self, params: dict[str, str]) -> int:
        broker = _int(params["0"], "broker id")
        if broker not in self._cluster.brokers:
            raise HttpError(404, f"unknown broker {broker}")
        return broker

    async def _broker_action(self, params: dict[str, str], body: dict[str, Any]) -> Any:
        broker = self._broker(params)
        action = params["1"]
        if action == "stop":
            await self._cluster.stop_broker(broker)
        elif action == "kill":
            await self._cluster.kill_broker(broker)
        elif action == "start":
            await self._cluster.start_broker(broker)
        else:
            await self._cluster.drop_connections(broker)
        return {"broker": broker, "action": action}

    async def _max_version(self, params: dict[str, str], body: dict[str, Any]) -> Any:
        broker = self._broker(params)
        version = _field(body, "version", int)
        self._cluster.set_delete_records_max_version(broker, version)
        return {"broker": broker, "delete_records_max_version": version}

    async def _follower(self, params: dict[str, str], body: dict[str, Any]) -> Any:
        topic, partition = params["0"], _int(params["1"], "partition")
        broker, action = _int(params["2"], "broker id"), params["3"]
        if action == "pause":
            self._cluster.pause_follower(topic, partition, broker)
        else:
            self._cluster.resume_follower(topic, partition, broker)
        return {"topic": topic, "partition": partition, "broker": broker, "action": action}

    async def _leader(self, params: dict[str, str], body: dict[str, Any]) -> Any:
        topic, partition = params["0"], _int(params["1"], "partition")
        broker = _field(body, "broker", int)
        high_watermark = _field(body, "high_watermark", int, None, optional=True)
        catch_up_ms = _field(body, "catch_up_ms", (int, float), 0)
        if catch_up_ms < 0:
            raise HttpError(400, "catch_up_ms must not be negative")
        self._cluster.move_leader(topic, partition, broker, high_watermark, catch_up_ms)
        return {"topic": topic, "partition": partition, "leader": broker}

    async def _fault(self, params: dict[str, str], body: dict[str, Any]) -> Any:
        broker = _field(body, "broker", int)
        api = body.get("api")
        if not isinstance(api, (str, int)) or isinstance(api, bool):
            raise HttpError(400, "field 'api' must be an API name or key")
        error = body.get("error")
        if error is not None and (not isinstance(error, (str, int)) or isinstance(error, bool)):
            raise HttpError(400, "field 'error' must be an error name or code")
        count = _field(body, "count", int, 1)
        delay_ms = _field(body, "delay_ms", (int, float), 0)
        if broker not in self._cluster.brokers:
            raise HttpError(404, f"unknown broker {broker}")
        self._cluster.inject_fault(broker, api, error, count, delay_ms)
        return {"pending": self._cluster.faults.pending()}

    async def _requests(self, params: dict[str, str], query: dict[str, Any]) -> Any:
        api = query.get("api", "DeleteRecords")
        after = _query_int(query, "after", 0)
        limit = _query_int(query, "limit", DEFAULT_PAGE_REQUESTS)
        if limit < 1:
            raise HttpError(400, "limit must be at least 1")
        log = self._cluster.requests
        page: list[dict[str, Any]] = []
        partitions = 0
        entries = log.entries(None if api == "*" else api, query.get("client_id"), after)
        for entry in entries:
            # A page ends after `limit` requests or once it holds PAGE_PARTITIONS partitions.
            if len(page) == limit or partitions >= PAGE_PARTITIONS:
                break
            page.append(entry.to_json())
            partitions += len(page[-1]["partitions"])
        else:
            return {"requests": page, "next_after": None, "dropped": log.dropped}
        return {"requests": page, "next_after": page[-1]["seq"], "dropped": log.dropped}

    async def _clear_requests(self, params: dict[str, str], query: dict[str, Any]) -> Any:
        self._cluster.clear_request_log()
        return {"cleared": True}
