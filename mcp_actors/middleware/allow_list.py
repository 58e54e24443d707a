"""A tool allow-list: only the named tools are listed and may be called."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from ..protocol import errors
from ..protocol import types as t
from ..protocol.errors import McpError
from ..runtime.middleware import Call, CallNext, Middleware


def _names(names: Iterable[str]) -> frozenset[str]:
    return frozenset(names)


@attrs.define(eq=False)
class ToolAllowList(Middleware):
    """Only the tools in ``allowed`` exist for the client: ``tools/list`` leaves the
    others out and ``tools/call`` of one of them is answered as for an unknown tool
    (-32602), before any handler runs. Put it on a gateway to expose part of an
    upstream."""

    allowed: frozenset[str] = attrs.field(converter=_names)

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        if call.direction == "inbound" and call.method == "tools/call":
            name = call.params.name
            if name not in self.allowed:
                raise McpError(errors.INVALID_PARAMS, f"Unknown tool: {name}", {"tool": name})
        result = await call_next(call)
        if call.method == "tools/list" and isinstance(result, t.ListToolsResult):
            result.tools = [tool for tool in result.tools if tool.name in self.allowed]
        return result
