"""Each inbound message is decoded exactly once, and no answer of ours is decoded again.

The engine is the only decoder (issue 24): a transport routes on the facts that one
decode gives, and on the facts the engine returns with what it encoded, never on a
decode of its own. This test holds it on every transport that carries one
``tools/call`` of each era: stdio, Streamable HTTP on both front ends (the legacy era
in a session, the 2026-07-28 era per request; a stateless server too), legacy HTTP+SSE,
WebSocket and the in-memory pair.

It counts by wrapping every module-level msgspec decoder of ``mcp_actors`` (and every
bound ``decode`` of one): a decode of the request's exact bytes is a decode of the
message; a decode of anything holding the answer's marker is a decode of our
answer. The client side is raw (httpx, pipes, a bare WebSocket stream), so that
every counted decode is the server's.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import httpx
import msgspec
import pytest
import trio
import trio.testing

from mcp_actors.server.app import Server
from mcp_actors.server.serve_http import serve_http
from mcp_actors.server.serve_websocket import serve_websocket
from mcp_actors.transports.abc import Outgoing
from mcp_actors.transports.http.client_base import ResponseChunks, read_events
from mcp_actors.transports.http.config import HttpConfig
from mcp_actors.transports.http.sse import SSEDecoder
from mcp_actors.transports.memory import memory_pair
from mcp_actors.transports.stdio import StdioStream
from mcp_actors.transports.websocket import open_websocket_client

LEGACY = "2025-06-18"
SSE_LEGACY = "2024-11-05"
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
}
ASKED = "probe-asked-q7"
#: What the tool answers: the marker of the answer, found in no request.
ANSWERED = ASKED[::-1]
ACCEPT_BOTH = "application/json, text/event-stream"


class _Counting:
    """A stand-in for a msgspec decoder (or its bound ``decode``) that records its inputs."""

    def __init__(self, decode: Callable[[Any], Any], seen: list[bytes]) -> None:
        self._decode = decode
        self._seen = seen

    def decode(self, data: Any) -> Any:
        self._seen.append(bytes(data))
        return self._decode(data)

    __call__ = decode


def count_decodes(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Wrap every module-level decoder of ``mcp_actors``; the inputs it decodes, in order."""
    seen: list[bytes] = []
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "mcp_actors" or name.startswith("mcp_actors.")):
            continue
        for attribute, value in list(vars(module).items()):
            if isinstance(value, msgspec.json.Decoder):
                monkeypatch.setattr(module, attribute, _Counting(value.decode, seen))
            elif isinstance(getattr(value, "__self__", None), msgspec.json.Decoder):
                monkeypatch.setattr(module, attribute, _Counting(value, seen))
    return seen


def make_server() -> Server:
    server = Server("decode-once", version="1.0.0")

    @server.tool
    async def probe(text: str) -> str:
        return text[::-1]

    return server


def message(request_id: int | None, method: str, params: Any) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if request_id is not None:
        body["id"] = request_id
    return json.dumps(body).encode()


def initialize(version: str) -> bytes:
    return message(
        1,
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    )


INITIALIZED = message(None, "notifications/initialized", {})


def tools_call(era: str) -> bytes:
    params: dict[str, Any] = {"name": "probe", "arguments": {"text": ASKED}}
    if era == "modern":
        params["_meta"] = META
    return message(7, "tools/call", params)


# -- the raw clients: each sends the handshake (legacy era), then the call ------------------

Exchange = Callable[[str, Callable[[], None]], Awaitable[dict[str, Any]]]


async def over_stdio(era: str, start_counting: Callable[[], None]) -> dict[str, Any]:
    to_server, server_reads = trio.testing.memory_stream_one_way_pair()
    server_writes, from_server = trio.testing.memory_stream_one_way_pair()
    buffer = bytearray()

    async def read_message() -> dict[str, Any]:
        while b"\n" not in buffer:
            buffer.extend(await from_server.receive_some())
        line, _, rest = bytes(buffer).partition(b"\n")
        buffer[:] = rest
        return json.loads(line)  # type: ignore[no-any-return]

    async with trio.open_nursery() as nursery:
        nursery.start_soon(make_server().serve_session, StdioStream(server_reads, server_writes))
        if era == "legacy":
            await to_server.send_all(initialize(LEGACY) + b"\n")
            await read_message()
            await to_server.send_all(INITIALIZED + b"\n")
        start_counting()
        await to_server.send_all(tools_call(era) + b"\n")
        answer = await read_message()
        nursery.cancel_scope.cancel()
    return answer


def _events(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(event.data) for event in SSEDecoder().feed(body) if event.data]


def _answer_of(reply: httpx.Response) -> dict[str, Any]:
    if reply.headers.get("content-type", "").startswith("text/event-stream"):
        [answer] = _events(reply.content)
        return answer
    return reply.json()  # type: ignore[no-any-return]


async def over_memory(era: str, start_counting: Callable[[], None]) -> dict[str, Any]:
    client_end, server_end = memory_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(make_server().serve_session, server_end)
        if era == "legacy":
            await client_end.send(Outgoing(initialize(LEGACY)))
            await client_end.receive()
            await client_end.send(Outgoing(INITIALIZED))
        start_counting()
        await client_end.send(Outgoing(tools_call(era)))
        answer = json.loads(await client_end.receive())
        nursery.cancel_scope.cancel()
    return answer  # type: ignore[no-any-return]


def over_streamable_http(front_end: str, *, stateless: bool = False) -> Exchange:
    async def exchange(era: str, start_counting: Callable[[], None]) -> dict[str, Any]:
        config = HttpConfig(front_end="hypercorn" if front_end == "hypercorn" else None)
        serve = partial(serve_http, make_server(), port=0, config=config, stateless=stateless)
        async with trio.open_nursery() as nursery:
            handle = await nursery.start(serve)
            async with httpx.AsyncClient(timeout=10) as http:
                headers = {"accept": ACCEPT_BOTH, "content-type": "application/json"}
                if era == "legacy" and stateless:
                    headers["mcp-protocol-version"] = LEGACY
                elif era == "legacy":
                    opened = await http.post(
                        handle.url, content=initialize(LEGACY), headers=headers
                    )
                    headers["mcp-session-id"] = opened.headers["mcp-session-id"]
                    headers["mcp-protocol-version"] = LEGACY
                    await http.post(handle.url, content=INITIALIZED, headers=headers)
                else:
                    headers.update(
                        {"mcp-protocol-version": MODERN, "mcp-method": "tools/call"},
                        **{"mcp-name": "probe"},
                    )
                start_counting()
                reply = await http.post(handle.url, content=tools_call(era), headers=headers)
            nursery.cancel_scope.cancel()
        return _answer_of(reply)

    return exchange


async def over_legacy_sse(era: str, start_counting: Callable[[], None]) -> dict[str, Any]:
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(partial(serve_http, make_server(), port=0))
        async with (
            httpx.AsyncClient(timeout=httpx.Timeout(10, read=None)) as http,
            http.stream("GET", handle.sse_url or "") as stream,
        ):
            chunks, decoder = ResponseChunks(stream), SSEDecoder()
            found: list[dict[str, Any]] = []

            async def next_message() -> dict[str, Any]:
                while not found:
                    events = await read_events(chunks, decoder)
                    assert events is not None, "the stream ended"
                    found.extend(json.loads(e.data) for e in events if e.data)
                return found.pop(0)

            with trio.fail_after(10):
                events = await read_events(chunks, decoder)
                assert events is not None and events[0].event == "endpoint"
                endpoint = handle.base_url + events[0].data.decode()
                headers = {"content-type": "application/json"}
                await http.post(endpoint, content=initialize(SSE_LEGACY), headers=headers)
                await next_message()
                await http.post(endpoint, content=INITIALIZED, headers=headers)
                start_counting()
                await http.post(endpoint, content=tools_call(era), headers=headers)
                answer = await next_message()
            await chunks.aclose()
        nursery.cancel_scope.cancel()
    return answer


async def over_websocket(era: str, start_counting: Callable[[], None]) -> dict[str, Any]:
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(partial(serve_websocket, make_server(), port=0))
        async with open_websocket_client(handle.url) as stream:
            if era == "legacy":
                await stream.send(Outgoing(initialize(LEGACY)))
                await stream.receive()
                await stream.send(Outgoing(INITIALIZED))
            start_counting()
            await stream.send(Outgoing(tools_call(era)))
            answer = json.loads(await stream.receive())
        nursery.cancel_scope.cancel()
    return answer  # type: ignore[no-any-return]


TRANSPORTS: dict[str, Exchange] = {
    "stdio": over_stdio,
    "http-lean": over_streamable_http("lean"),
    "http-hypercorn": over_streamable_http("hypercorn"),
    "http-stateless": over_streamable_http("lean", stateless=True),
    "memory": over_memory,
    "sse": over_legacy_sse,
    "ws": over_websocket,
}


#: Each transport with each era it carries (legacy HTTP+SSE has only the legacy one).
CASES = [
    (transport, era)
    for transport in sorted(TRANSPORTS)
    for era in ("legacy", "modern")
    if not (transport == "sse" and era == "modern")
]


@pytest.mark.parametrize(("transport", "era"), CASES)
async def test_a_tool_call_is_decoded_once_and_its_answer_never(
    transport: str, era: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    counting: list[list[bytes]] = []

    def start_counting() -> None:  # once the handshake is over and the server is up
        counting.append(count_decodes(monkeypatch))

    with trio.fail_after(30):
        answer = await TRANSPORTS[transport](era, start_counting)
    assert answer["id"] == 7 and answer["result"]["content"][0]["text"] == ANSWERED, answer
    [seen] = counting
    request = tools_call(era)
    assert sum(data == request for data in seen) == 1, "the request was not decoded exactly once"
    answers = [data for data in seen if ANSWERED.encode() in data]
    assert answers == [], "an answer of ours was decoded again"
