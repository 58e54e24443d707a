"""An OpenAPI document served as MCP tools: each operation a tool calling the API over HTTP.

::

    import httpx
    from mcp_actors.openapi import server_from

    client = httpx.AsyncClient(base_url="https://petstore.example/v1",
                               headers={"X-Api-Key": KEY}, timeout=10)
    server = server_from("petstore.yaml", client=client)
    server.run()

How operations become tools is :mod:`.operations`'. A call builds the request from its
arguments — path parameters into the path (URL-quoted), query parameters into the query
string (a list repeats the parameter), header parameters into headers, body fields into
a JSON body — and sends it with ``client``, an ``httpx.AsyncClient`` you configure:

- **where**: the request's URL is the operation's path joined to the client's
  ``base_url``; a client without one gets the document's first ``servers`` URL;
- **auth**: whatever the client carries (``headers=``, ``auth=``, cookies, TLS
  settings) goes with every call — the API's credentials stay on the server, never in
  the tools' arguments. To fix an argument instead (a tenant, a header parameter) hide
  it with :func:`~mcp_actors.server.transforms.transform`;
- **time**: the client's ``timeout``; and the call is cancelled with the MCP request
  (the HTTP request is abandoned when the caller cancels);
- **size**: at most ``max_response_bytes`` of an answer are kept (beyond: an
  ``isError`` result saying so). An answer whose ``Content-Length`` says it is longer
  is refused unread; one that does not say is read to its end (within the client's
  timeouts) but not kept past the limit.

What the API answers: a 2xx JSON body is the result (``structuredContent`` when the
tool has an output schema, else JSON text), any other 2xx body its text, an empty one
the status line; a status of 400 or more is an ``isError`` result with the status and
the start of the body, so the model can read what was wrong. The client is not closed
by the server: its owner closes it.
"""

from __future__ import annotations

from http import HTTPStatus
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import msgspec

from ..server.app import Server
from ..server.schema_tools import schema_tool
from ..server.tool_error import ToolError
from .document import load
from .operations import Operation, operations

if TYPE_CHECKING:
    import httpx

    from ..server.context import Context

__all__ = ["server_from"]

#: How much of an error answer's body an ``isError`` result quotes.
_QUOTED = 500


def server_from(
    spec: dict[str, Any] | str | Path,
    *,
    client: httpx.AsyncClient,
    name: str | None = None,
    version: str | None = None,
    max_response_bytes: int = 1 << 20,
    **options: Any,
) -> Server:
    """A Server whose tools are ``spec``'s operations, calling the API with ``client``
    (see the module docstring). ``spec``: the document as a dict, YAML or JSON text, or
    a path. ``name`` and ``version`` default to the document's ``info``; ``options``
    are the Server's. :class:`~.document.OpenApiError` for a document that cannot be
    served, naming the problem."""
    if max_response_bytes < 1:
        raise ValueError(f"max_response_bytes must be at least 1, not {max_response_bytes}")
    document = load(spec)
    info = document.get("info") or {}
    server = Server(
        name or str(info.get("title") or "openapi"),
        version or str(info.get("version") or "0"),
        **options,
    )
    base = "" if str(client.base_url) else _first_server(document)
    for operation in operations(document):
        caller = _Caller(operation, client, base, max_response_bytes)
        server.add_tool(
            schema_tool(
                operation.name,
                operation.input_schema,
                caller.call,
                description=operation.description,
                output_schema=operation.output_schema,
            )
        )
    return server


def _first_server(document: dict[str, Any]) -> str:
    servers = document.get("servers") or []
    url = servers[0].get("url") if servers and isinstance(servers[0], dict) else None
    return str(url).rstrip("/") if url else ""


class _Caller:
    """One operation's calls: the request built from the arguments, the answer read."""

    def __init__(
        self, operation: Operation, client: httpx.AsyncClient, base: str, limit: int
    ) -> None:
        self.operation, self.client, self.base, self.limit = operation, client, base, limit

    async def call(self, arguments: dict[str, Any], ctx: Context) -> Any:
        operation = self.operation
        path = operation.path
        query: dict[str, Any] = {}
        headers: dict[str, str] = {}
        body: dict[str, Any] = {}
        whole: Any = None
        for key, value in arguments.items():
            location = operation.locations[key]
            if location == "path":
                path = path.replace("{" + key + "}", quote(_text(value), safe=""))
            elif location == "query":
                query[key] = [_text(v) for v in value] if isinstance(value, list) else _text(value)
            elif location == "header":
                headers[key] = _text(value)
            elif location == "body":
                body[key] = value
            else:
                whole = value
        url = self.base + path if self.base else path.lstrip("/")
        content = msgspec.json.encode(whole if whole is not None else body)
        sends_body = whole is not None or bool(body) or "body" in operation.locations.values()
        if sends_body:
            headers["content-type"] = "application/json"
        request = self.client.build_request(
            operation.method,
            url,
            params=query,
            headers=headers,
            content=content if sends_body else None,
        )
        import httpx  # the extra "openapi"; only a server made with a client gets here

        try:
            response = await self.client.send(request, stream=True)
            try:
                data = await self._read(response)
            finally:
                await response.aclose()
        except httpx.HTTPError as error:  # unreachable, timed out, broken off
            raise ToolError(f"{self._what()} failed: {type(error).__name__}: {error}") from None
        return self._result(response, data)

    async def _read(self, response: httpx.Response) -> bytes:
        declared = response.headers.get("content-length", "")
        too_long = ToolError(
            f"{self._what()} answered more than {self.limit} bytes; the answer was dropped"
        )
        if declared.isdigit() and int(declared) > self.limit:
            raise too_long  # refused unread
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():  # to its end: see the module docstring
            size += len(chunk)
            if size <= self.limit:
                chunks.append(chunk)
        if size > self.limit:
            raise too_long
        return b"".join(chunks)

    def _result(self, response: httpx.Response, data: bytes) -> Any:
        status = response.status_code
        line = f"{status} {response.reason_phrase or HTTPStatus(status).phrase}"
        text = data.decode("utf-8", errors="replace")
        if status >= 400:
            raise ToolError(f"{self._what()} answered {line}: {text[:_QUOTED]}")
        if not data:
            return line
        if response.headers.get("content-type", "").split(";")[0].strip().endswith("json"):
            try:
                value = msgspec.json.decode(data)
            except msgspec.DecodeError:
                return text
            if self.operation.wraps_output:
                return {"result": value}
            if self.operation.output_schema is not None and isinstance(value, dict):
                return value
            return msgspec.json.encode(value).decode()
        return text

    def _what(self) -> str:
        return f"{self.operation.method} {self.operation.path}"


def _text(value: Any) -> str:
    """An argument as it goes in a path, query or header: JSON for all but strings."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return msgspec.json.encode(value).decode()
