"""Where a client connects: a target spec becomes an open message stream.

A target is one of:

- a :class:`~mcp_actors.transports.abc.MessageStream` already open;
- a :class:`~mcp_actors.server.app.Server` object, served in-process over the
  in-memory transport (its session runs in the client's own nursery);
- a :class:`StdioTarget`, or the string ``"stdio:COMMAND ARGS..."``: a server process
  to launch;
- the string ``"MODULE:ATTR"``: a Server object to import and run in-process;
- a :class:`UrlTarget`, or a URL string: ``http(s)://...`` is Streamable HTTP (falling
  back to legacy HTTP+SSE for an older server; a path ending in ``/sse`` goes
  straight to legacy SSE), ``ws(s)://...`` is WebSocket. The network transports
  (httpx, trio_websocket) are imported only when such a target is opened.
"""

from __future__ import annotations

import importlib
import shlex
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Literal

import attrs
import trio

from ..server.app import Server
from ..transports.abc import MessageStream
from ..transports.memory import memory_pair
from ..transports.stdio import open_stdio_process


@attrs.frozen
class StdioTarget:
    """A server to launch as a child process and talk to over its stdin/stdout."""

    command: str
    args: Sequence[str] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    #: Where the server's stderr goes (None: inherited).
    stderr: Any = None


@attrs.frozen
class UrlTarget:
    """A server reached over the network."""

    url: str
    #: "auto": Streamable HTTP, falling back to legacy SSE; or one transport exactly.
    transport: Literal["auto", "streamable", "sse", "websocket"] = "auto"
    #: Extra headers on every HTTP request or on the WebSocket handshake.
    headers: Mapping[str, str] | None = None

    @classmethod
    def from_url(cls, url: str) -> UrlTarget:
        if url.startswith(("ws://", "wss://")):
            return cls(url, "websocket")
        path = url.split("?", 1)[0].rstrip("/")
        return cls(url, "sse" if path.endswith("/sse") else "auto")


Target = MessageStream | Server | StdioTarget | UrlTarget | str


class TargetError(ValueError):
    """A target spec that cannot be understood or loaded."""


def parse_target(target: str) -> StdioTarget | UrlTarget | Server:
    """Turn a target string into a :class:`StdioTarget`, a :class:`UrlTarget` or a Server."""
    if target.startswith("stdio:"):
        words = shlex.split(target[len("stdio:") :])
        if not words:
            raise TargetError("stdio: needs a command, e.g. 'stdio:python -m my_server'")
        return StdioTarget(words[0], tuple(words[1:]))
    if target.startswith(("http://", "https://", "ws://", "wss://")):
        return UrlTarget.from_url(target)
    return load_server(target)


def load_server(spec: str) -> Server:
    """Import ``MODULE:ATTR`` and return the Server it names."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise TargetError(f"{spec!r}: expected MODULE:ATTR, stdio:COMMAND or a URL")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise TargetError(f"cannot import {module_name!r}: {error}") from error
    try:
        server = getattr(module, attribute)
    except AttributeError:
        raise TargetError(f"module {module_name!r} has no attribute {attribute!r}") from None
    if callable(server) and not isinstance(server, Server):
        server = server()
    if not isinstance(server, Server):
        raise TargetError(f"{spec} is a {type(server).__name__}, not an mcp_actors Server")
    return server


@asynccontextmanager
async def connect(target: Target, nursery: trio.Nursery) -> AsyncIterator[MessageStream]:
    """Open a message stream to ``target``; in-process servers run in ``nursery``."""
    if isinstance(target, str):
        target = parse_target(target)
    if isinstance(target, MessageStream):
        yield target
    elif isinstance(target, Server):
        client_end, server_end = memory_pair()
        nursery.start_soon(target.serve_session, server_end)
        yield client_end
    elif isinstance(target, UrlTarget):
        async with _open_url(target) as stream:
            yield stream
    else:
        async with open_stdio_process(
            target.command, target.args, env=target.env, cwd=target.cwd, stderr=target.stderr
        ) as stream:
            yield stream


@asynccontextmanager
async def _open_url(target: UrlTarget) -> AsyncIterator[MessageStream]:
    if target.transport == "websocket":
        from ..transports.websocket import open_websocket_client

        async with open_websocket_client(target.url, headers=target.headers) as ws:
            yield ws
    elif target.transport == "sse":
        from ..transports.http_sse_client import open_sse_client

        async with open_sse_client(target.url, headers=target.headers) as sse:
            yield sse
    else:
        from ..transports.streamable_http_client import open_streamable_http

        async with open_streamable_http(
            target.url, headers=target.headers, legacy_fallback=target.transport == "auto"
        ) as http:
            yield http
