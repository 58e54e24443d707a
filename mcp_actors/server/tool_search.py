"""Tool search: two tools in place of hundreds, so that a model finds what it needs.

A server (or a gateway in front of many upstreams) with hundreds of tools makes every
client read every schema before its first call. With :class:`ToolSearch` as its
outermost middleware, ``tools/list`` answers two tools instead:

- ``search_tools(query, limit?)``: the tools matching ``query`` in words, best first
  (BM25 over names, descriptions and schemas, see :mod:`.tool_index`), each with its
  ``name``, ``description`` and ``inputSchema`` — in ``structuredContent`` (``{"tools":
  [...]}``) and, as JSON, in the text content;
- ``call_tool(name, arguments?)``: calls the tool ``name`` with ``arguments``. The call
  is passed on as if the client had made it itself: the middleware inside, the scope
  checks, tasks, progress, questions to the client and cancellation are the named
  tool's (it is served as part of the same request).

Every tool stays callable by its own name too. What a caller finds is what it may call:
the catalog searched is this server's ``tools/list`` as the middleware inside this one
answers it (an allow-list such as :class:`~mcp_actors.middleware.ToolAllowList` leaves
out what it refuses, a transform renames), less the tools whose ``scopes=`` the caller's
token lacks. (A mounted server checks its own scopes when its tool is called.) An
allow-list in front of the search must allow the two search tools' names (the gateway
config's ``tool_search`` does so).

Bounds: a query longer than ``max_query_chars`` is refused (an ``isError`` result saying
so), at most ``max_results`` tools are returned, and one index — of the latest catalog,
held in memory, proportional to the tools' text — is kept; a changed catalog (a tool
added, an upstream's list changed) builds a new one at the next search. Works in both
eras: the search tools are ordinary tools to the client.

Give it first among the server's middleware::

    server = Server("big", middleware=[ToolSearch(max_results=5)])
"""

from __future__ import annotations

from typing import Any

import attrs
import msgspec
from msgspec import UNSET

from ..protocol import types as t
from ..protocol.fit import LACKING_REVISIONS, fit
from ..protocol.jsonrpc import UNDECODABLE, InvalidPayload, invalid_payload
from ..runtime.middleware import Call, CallNext, Middleware
from .modern import finish_result
from .server_session import ServerSession
from .tool_index import ToolIndex, catalog_key
from .tools import error_result

__all__ = ["ToolSearch"]

_TOOL_NAME = attrs.validators.and_(
    attrs.validators.instance_of(str), attrs.validators.min_len(1), attrs.validators.max_len(128)
)


def _positive(limit: int) -> Any:
    return attrs.validators.and_(
        attrs.validators.instance_of(int), attrs.validators.ge(1), attrs.validators.le(limit)
    )


class _Query(msgspec.Struct, forbid_unknown_fields=True):
    query: str
    limit: int | None = None


class _CallByName(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    arguments: dict[str, msgspec.Raw] | None = None


@attrs.define(eq=False)
class ToolSearch(Middleware):
    """Replace a server's tool list with a search tool and a call-by-name tool (see the
    module docstring)."""

    #: The search tool's name.
    search_name: str = attrs.field(default="search_tools", validator=_TOOL_NAME)
    #: The call-by-name tool's name.
    call_name: str = attrs.field(default="call_tool", validator=_TOOL_NAME)
    #: At most this many tools per search (a caller's ``limit`` may ask fewer).
    max_results: int = attrs.field(default=5, validator=_positive(100))
    #: A longer query is refused.
    max_query_chars: int = attrs.field(default=1000, validator=_positive(100_000))
    _index: ToolIndex | None = attrs.field(init=False, default=None)
    _indexed: bytes = attrs.field(init=False, default=b"")

    def __attrs_post_init__(self) -> None:
        if self.search_name == self.call_name:
            raise ValueError(f"search_name and call_name are both {self.call_name!r}")

    @property
    def names(self) -> tuple[str, str]:
        """The two tools' names: what an allow-list in front of the search must allow."""
        return (self.search_name, self.call_name)

    def definitions(self) -> list[t.Tool]:
        """The two tools, as ``tools/list`` answers them."""
        return [
            t.Tool(
                name=self.search_name,
                description=(
                    "Find the tools for a task: describe it in words; the best matches"
                    " come back with their input schemas. Call one with"
                    f" {self.call_name}."
                ),
                input_schema={
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "What the tool should do."},
                        "limit": {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": self.max_results,
                            "description": "At most this many tools.",
                        },
                    },
                    "required": ["query"],
                },
                output_schema={
                    "type": "object",
                    "properties": {"tools": {"type": "array", "items": {"type": "object"}}},
                    "required": ["tools"],
                },
            ),
            t.Tool(
                name=self.call_name,
                description=f"Call a tool that {self.search_name} found, by its name.",
                input_schema={
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "The tool's name."},
                        "arguments": {
                            "type": "object",
                            "description": "Its arguments, as its inputSchema says.",
                        },
                    },
                    "required": ["name"],
                },
            ),
        ]

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        if call.direction != "inbound":
            return await call_next(call)
        if call.method == "tools/list":
            result = await call_next(call)
            return msgspec.structs.replace(result, tools=self.definitions(), next_cursor=UNSET)
        if call.method != "tools/call":
            return await call_next(call)
        name = call.params.name
        if name == self.call_name:
            inner = self._unwrapped(call.params)
            if isinstance(inner, t.CallToolResult):
                return self._finished(call, inner)
            return await call_next(attrs.evolve(call, params=inner))
        if name == self.search_name:
            return self._finished(call, await self._search(call, call_next))
        return await call_next(call)

    def _unwrapped(self, params: t.CallToolParams) -> t.CallToolParams | t.CallToolResult:
        """The call ``call_tool``'s arguments name, or the error result saying why not."""
        try:
            wanted = _decode(params.arguments, _CallByName)
        except InvalidPayload as invalid:
            return error_result(f"Invalid arguments for tool {self.call_name!r}: {invalid.detail}")
        if wanted.name in self.names:
            return error_result(f"{self.call_name} calls tools, not {wanted.name!r}")
        arguments = msgspec.json.encode(wanted.arguments or {})
        return msgspec.structs.replace(params, name=wanted.name, arguments=msgspec.Raw(arguments))

    async def _search(self, call: Call, call_next: CallNext) -> t.CallToolResult:
        try:
            query = _decode(call.params.arguments, _Query)
        except InvalidPayload as invalid:
            detail = invalid.detail
            return error_result(f"Invalid arguments for tool {self.search_name!r}: {detail}")
        if len(query.query) > self.max_query_chars:
            return error_result(
                f"the query is {len(query.query)} characters long; at most"
                f" {self.max_query_chars} are searched"
            )
        limit = self.max_results if query.limit is None else query.limit
        if not 1 <= limit <= self.max_results:
            return error_result(f"limit must be between 1 and {self.max_results}, not {limit}")
        index = self._index_of(await _catalog(call, call_next))
        permitted = _permitted(call)
        found = [_found(tool) for tool in index.search(query.query, limit, permitted)]
        return t.CallToolResult(
            content=[t.TextContent(text=msgspec.json.encode(found).decode())],
            structured_content={"tools": found},
        )

    def _index_of(self, catalog: list[t.Tool]) -> ToolIndex:
        """The index of ``catalog``: the one kept if the catalog is the same."""
        key = catalog_key(catalog)
        if self._index is None or key != self._indexed:
            self._index, self._indexed = ToolIndex(catalog), key
        return self._index

    def _finished(self, call: Call, result: t.CallToolResult) -> Any:
        """``result`` as the caller's revision carries it (the handler's path does the
        same for results it makes)."""
        view = call.session
        if not isinstance(view, ServerSession):
            return result
        revision = view.state.revision
        if revision.result_type:
            return finish_result(result, server_info=view.server.info, cache_hint=None)
        return fit(result, revision) if revision.name in LACKING_REVISIONS else result


async def _catalog(call: Call, call_next: CallNext) -> list[t.Tool]:
    """Every tool of the server's ``tools/list``, as the middleware inside answers it."""
    tools: list[t.Tool] = []
    cursor: str | msgspec.UnsetType = UNSET
    while True:
        listing = t.PaginatedParams(cursor=cursor)
        page = await call_next(attrs.evolve(call, method="tools/list", params=listing))
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


def _permitted(call: Call) -> Any:
    """Whether the caller may call a tool: its token holds the scopes the tool needs."""
    view = call.session
    principal = view.principal if isinstance(view, ServerSession) else None
    if principal is None or not isinstance(view, ServerSession):
        return lambda tool: True
    server = view.server

    def permitted(tool: t.Tool) -> bool:
        registered = server.find_tool(tool.name)
        return registered is None or principal.has_scopes(registered.scopes)

    return permitted


def _found(tool: t.Tool) -> dict[str, Any]:
    """What a search tells of one tool."""
    found: dict[str, Any] = {"name": tool.name}
    if tool.description is not UNSET:
        found["description"] = tool.description
    found["inputSchema"] = tool.input_schema
    return found


def _decode(arguments: msgspec.Raw | msgspec.UnsetType, into: type[Any]) -> Any:
    """``arguments`` as ``into``; :class:`InvalidPayload` naming what is wrong."""
    try:
        return msgspec.json.decode(arguments if arguments is not UNSET else b"{}", type=into)
    except UNDECODABLE as error:
        raise invalid_payload(error) from None
