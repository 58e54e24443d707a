"""Where a client connects: a target spec becomes an open message stream.

A target is one of:

- a :class:`~mcp_actors.transports.abc.MessageStream` already open;
- a :class:`~mcp_actors.server.app.Server` object, served in-process over the
  in-memory transport (its session runs in the client's own nursery);
- a :class:`StdioTarget`, or the string ``"stdio:COMMAND ARGS..."``: a server process
  to launch;
- the string ``"MODULE:ATTR"``: a Server object to import and run in-process.
"""

from __future__ import annotations

import importlib
import shlex
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

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


Target = MessageStream | Server | StdioTarget | str


class TargetError(ValueError):
    """A target spec that cannot be understood or loaded."""


def parse_target(target: str) -> StdioTarget | Server:
    """Turn a command-line target string into a :class:`StdioTarget` or a loaded Server."""
    if target.startswith("stdio:"):
        words = shlex.split(target[len("stdio:") :])
        if not words:
            raise TargetError("stdio: needs a command, e.g. 'stdio:python -m my_server'")
        return StdioTarget(words[0], tuple(words[1:]))
    if target.startswith(("http://", "https://", "ws://", "wss://")):
        raise TargetError(f"{target}: network transports are not available in this build yet")
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
    else:
        async with open_stdio_process(
            target.command, target.args, env=target.env, cwd=target.cwd, stderr=target.stderr
        ) as stream:
            yield stream
