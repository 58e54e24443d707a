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
import importlib.util
import inspect
import os
import shlex
import sys
import traceback
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

import attrs
import trio

from ..server.app import Server
from ..transports.abc import MessageStream
from ..transports.memory import memory_pair
from ..transports.stdio import open_stdio_process

if TYPE_CHECKING:
    import httpx


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
    #: Runs on every HTTP request, or on the WebSocket handshake (e.g.
    #: :class:`mcp_actors.auth.client.OAuthClient`).
    auth: httpx.Auth | None = None

    @classmethod
    def from_url(cls, url: str) -> UrlTarget:
        if url.startswith(("ws://", "wss://")):
            return cls(url, "websocket")
        path = url.split("?", 1)[0].rstrip("/")
        return cls(url, "sse" if path.endswith("/sse") else "auto")


Target = MessageStream | Server | StdioTarget | UrlTarget | str


class TargetError(ValueError):
    """A target spec that cannot be understood or loaded."""


def with_auth(target: Target, auth: httpx.Auth) -> UrlTarget:
    """``target`` (a URL) with ``auth`` run on its every HTTP request."""
    if isinstance(target, str) and target.startswith(("http://", "https://", "ws://", "wss://")):
        target = UrlTarget.from_url(target)
    if not isinstance(target, UrlTarget):
        raise TargetError("auth= needs a server URL (http:// or https://) as the target")
    return attrs.evolve(target, auth=auth)


def with_headers(
    target: Target, headers: Mapping[str, str], auth: httpx.Auth | None = None
) -> UrlTarget:
    """``target`` (a URL) sending ``headers`` too (checked already: see
    :func:`~.headers.request_headers`), after any it had; an ``authorization`` header
    excludes ``auth`` (which would replace it)."""
    if "authorization" in headers and auth is not None:
        raise TargetError("give either a bearer token (an Authorization header) or auth=")
    if isinstance(target, str) and target.startswith(("http://", "https://", "ws://", "wss://")):
        target = UrlTarget.from_url(target)
    if not isinstance(target, UrlTarget):
        raise TargetError("headers= and bearer= need a server URL (http(s):// or ws(s)://)")
    return attrs.evolve(target, headers={**(target.headers or {}), **headers})


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


#: Attributes looked up, in order, when a target names a module or file but no attribute.
DEFAULT_ATTRIBUTES = ("server", "mcp", "app")


def load_server(spec: str) -> Server:
    """Import the Server that ``MODULE[:ATTR]`` or ``path/to/file.py[:ATTR]`` names.

    Without ``:ATTR`` the module's ``server``, ``mcp`` or ``app`` is taken. The
    attribute may be a Server or a function returning one. A file is imported as a
    script would run (its folder first on ``sys.path``). Whatever goes wrong —
    no such module, an exception while importing it (a tool with an unsupported
    parameter type, say), no Server there — is a :class:`TargetError` with a
    one-line reason.
    """
    source, attribute = _split_spec(spec)
    if not source:
        raise TargetError(
            f"{spec!r}: expected MODULE[:ATTR], FILE.py[:ATTR], stdio:COMMAND or a URL"
        )
    module = _import_file(source) if _is_file(source) else _import_module(source)
    attribute = attribute or _default_attribute(module, source)
    try:
        found = getattr(module, attribute)
    except AttributeError:
        raise TargetError(f"{source} has no attribute {attribute!r}") from None
    server = _made(found, f"{source}:{attribute}")
    if not isinstance(server, Server):
        raise TargetError(
            f"{source}:{attribute} is a {type(server).__name__}, not an mcp_actors Server"
        )
    return server


def _default_attribute(module: Any, source: str) -> str:
    """The first of the module's ``server``, ``mcp`` and ``app``."""
    found = [name for name in DEFAULT_ATTRIBUTES if hasattr(module, name)]
    if not found:
        raise TargetError(
            f"{source} has none of {', '.join(DEFAULT_ATTRIBUTES)}; name the server as"
            f" {source}:ATTR"
        )
    return found[0]


def _made(found: Any, where: str) -> Any:
    """``found`` itself, or what it returns when it is a function (a server factory)."""
    if not callable(found) or isinstance(found, Server):
        return found
    if inspect.iscoroutinefunction(found):
        raise TargetError(
            f"{where} is an async function, not a Server (nor a function returning one)"
        )
    try:
        return found()
    except Exception as error:
        raise TargetError(
            f"{where} is not a Server, and calling it to make one failed: {_one_line(error)}"
        ) from error


def _split_spec(spec: str) -> tuple[str, str]:
    source, colon, attribute = spec.rpartition(":")
    if not colon or "/" in attribute or "\\" in attribute or attribute.endswith(".py"):
        return spec, ""  # no attribute (or the colon belongs to a path)
    return source, attribute


def _is_file(source: str) -> bool:
    return source.endswith(".py") or os.sep in source or "/" in source


def _import_module(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name is not None and name.startswith(error.name):
            raise TargetError(f"cannot import {name!r}: no module named {error.name!r}") from error
        raise TargetError(f"cannot import {name!r}: {_one_line(error)}") from error
    except Exception as error:
        raise TargetError(f"cannot import {name!r}: {_one_line(error)}") from error


def _import_file(source: str) -> ModuleType:
    path = Path(source).resolve()
    if not path.is_file():
        raise TargetError(f"no such file: {source}")
    name = path.stem
    specification = importlib.util.spec_from_file_location(name, path)
    if specification is None or specification.loader is None:
        raise TargetError(f"cannot import {source}: not a Python file")
    module = importlib.util.module_from_spec(specification)
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # as `python FILE` does: its neighbours import
    sys.modules[name] = module  # type hints resolve through the module's entry
    try:
        specification.loader.exec_module(module)
    except Exception as error:
        del sys.modules[name]
        raise TargetError(f"cannot import {source}: {_one_line(error)}") from error
    return module


def _one_line(error: BaseException) -> str:
    """An exception as one line, with the place in the user's code it came from."""
    text = " ".join(str(error).split())
    description = f"{type(error).__name__}: {text}" if text else type(error).__name__
    if isinstance(error, SyntaxError) and error.filename:
        return f"{description} ({error.filename}:{error.lineno})"
    frames = traceback.extract_tb(error.__traceback__)
    ours = Path(__file__).resolve().parents[1]
    theirs = [frame for frame in frames if not frame.filename.startswith((str(ours), "<frozen"))]
    if theirs:
        return f"{description} ({theirs[-1].filename}:{theirs[-1].lineno})"
    return description


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

        async with open_websocket_client(
            target.url, headers=target.headers, auth=target.auth
        ) as ws:
            yield ws
    elif target.transport == "sse":
        from ..transports.http.sse_client import open_sse_client

        async with open_sse_client(target.url, headers=target.headers, auth=target.auth) as sse:
            yield sse
    else:
        from ..transports.http.client import open_streamable_http

        async with open_streamable_http(
            target.url,
            headers=target.headers,
            auth=target.auth,
            legacy_fallback=target.transport == "auto",
        ) as http:
            yield http
