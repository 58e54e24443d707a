"""From a target string to a connector: which wire reaches which server.

- ``stdio:COMMAND ARGS...``: the bench launches the server (:class:`~.stdio.StdioWire`);
- ``http://`` URLs: the lean raw HTTP/1.1 wire (:mod:`mcp_actors.bench.http`), unless
  the caller asks for the project's own client transport, or the URL is the legacy
  HTTP+SSE ``/sse`` endpoint;
- any other URL (``ws://`` ...): the project's own transports (:class:`~.wire.StreamWire`).

An in-process ``MODULE:ATTR`` target is refused: it would share the client's CPU.
"""

from __future__ import annotations

import shlex

from .stdio import stdio_connector
from .wire import BenchError, Connector, stream_connector


def connector_for(
    target: str,
    *,
    server_pid: int | None = None,
    quiet: bool = True,
    lean_http: bool = True,
    protocol_version: str = "2025-11-25",
    bearer: str | None = None,
    headers: dict[str, str] | None = None,
) -> Connector:
    """A connector for ``stdio:COMMAND ARGS...`` or a URL (``http://``, ``ws://`` ...);
    ``bearer``: the access token every HTTP request carries, ``headers``: headers it
    carries besides (``--bearer``/``--header``; lean HTTP wire only)."""
    if (bearer is not None or headers) and not target.startswith("http://"):
        raise BenchError(
            "a bearer token or extra headers go to http:// targets only (the lean HTTP wire)"
        )
    if target.startswith("stdio:"):
        return stdio_connector(shlex.split(target[len("stdio:") :]), quiet=quiet)
    if target.startswith("http://") and lean_http and not target.split("?")[0].endswith("/sse"):
        # imported here: the lean wire needs httptools, of the ``http`` extra
        from .http import http_connector

        sent = dict(headers or {})
        if bearer is not None:
            sent["Authorization"] = f"Bearer {bearer}"
        return http_connector(
            target, pid=server_pid, protocol_version=protocol_version, headers=sent
        )
    if "://" in target:
        return stream_connector(target, pid=server_pid)
    raise BenchError(
        f"{target!r}: the benchmark needs a server of its own: stdio:COMMAND ARGS or a URL"
        " (an in-process MODULE:ATTR would share the client's CPU)"
    )
