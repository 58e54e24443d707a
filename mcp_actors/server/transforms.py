"""Tool transforms: the same tool under another name, description or set of arguments.

A tool written for one audience often needs adjusting for another: a clearer name, a
description that says when to use it, an argument the model should never set (an API
key, a tenant) fixed to a value, a default for another. :func:`transform` does that
without touching the tool::

    server.add_middleware(
        transform("weather_forecast", name="forecast", description="Tomorrow's weather.",
                  hide=["api_key"], defaults={"api_key": KEY, "units": "metric"})
    )

A transform is middleware (see :mod:`mcp_actors.runtime.middleware`) acting on the tool
as the server lists it, so the tool may be the server's own, one of a mounted server's
or one of a gateway's upstream's (``"weather_forecast"``: prefix and name):

- ``tools/list`` shows the transformed definition in the original's place: its new
  ``name`` and ``description``; its input schema without the ``hide`` arguments, and
  with each of ``defaults`` as that property's ``default`` (no longer required);
- ``tools/call`` of the new name becomes a call of the original, its arguments those
  given over ``defaults`` (a hidden argument always its default). The call is passed
  on as part of the same request: the original's progress, logs, questions, task and
  cancellation — across a gateway's hop too — are the transformed tool's;
- the original name, once renamed, is unknown to clients (-32602, as for any unknown
  tool): one tool, one name. A caller giving a hidden argument gets an ``isError``
  result naming it.

Several transforms may be added (each its own middleware); a tool search in front
(:mod:`.tool_search`) searches the transformed tools.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs
import msgspec
from msgspec import UNSET

from ..protocol import errors
from ..protocol import types as t
from ..protocol.errors import McpError
from ..protocol.jsonrpc import UNDECODABLE, invalid_payload
from ..runtime.middleware import Call, CallNext, Middleware
from .tools import RegisteredTool, error_result

__all__ = ["ToolTransform", "transform"]

_Arguments = dict[str, msgspec.Raw]


def _encoded(defaults: Mapping[str, Any]) -> dict[str, msgspec.Raw]:
    """``defaults`` as JSON, each value checked to be one (TypeError naming it)."""
    encoded = {}
    for key, value in defaults.items():
        if not isinstance(key, str):
            raise TypeError(f"defaults: argument names are strings, not {key!r}")
        try:
            encoded[key] = msgspec.Raw(msgspec.json.encode(value))
        except (TypeError, ValueError) as error:
            raise TypeError(f"defaults: {key!r} is not a JSON value: {error}") from None
    return encoded


@attrs.define(eq=False)
class ToolTransform(Middleware):
    """One tool shown and called differently (see the module docstring); made by
    :func:`transform`."""

    #: The tool as the server lists it.
    original: str
    name: str
    description: str | None
    hide: frozenset[str]
    defaults: dict[str, Any]
    _encoded_defaults: dict[str, msgspec.Raw] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._encoded_defaults = _encoded(self.defaults)

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        if call.direction != "inbound":
            return await call_next(call)
        if call.method == "tools/list":
            result = await call_next(call)
            tools = [
                self.definition(tool) if tool.name == self.original else tool
                for tool in result.tools
            ]
            return msgspec.structs.replace(result, tools=tools)
        if call.method != "tools/call":
            return await call_next(call)
        name = call.params.name
        if name == self.name:
            inner = self._original_call(call.params)
            if isinstance(inner, t.CallToolResult):
                return inner
            return await call_next(attrs.evolve(call, params=inner))
        if name == self.original:  # renamed: the old name is gone
            raise McpError(errors.INVALID_PARAMS, f"Unknown tool: {name}", {"tool": name})
        return await call_next(call)

    def definition(self, tool: t.Tool) -> t.Tool:
        """``tool``'s definition, transformed."""
        schema = dict(tool.input_schema)
        properties = dict(schema.get("properties") or {})
        for hidden in self.hide:
            properties.pop(hidden, None)
        for key, value in self.defaults.items():
            if key in properties and isinstance(properties[key], dict):
                properties[key] = {**properties[key], "default": value}
        schema["properties"] = properties
        if "required" in schema:
            schema["required"] = [
                key for key in schema["required"] if key in properties and key not in self.defaults
            ]
        description = self.description if self.description is not None else tool.description
        return msgspec.structs.replace(
            tool, name=self.name, description=description, input_schema=schema
        )

    def _original_call(self, params: t.CallToolParams) -> t.CallToolParams | t.CallToolResult:
        """The call of the original tool that a call of the transformed one stands for,
        or the error result saying why there is none."""
        raw = params.arguments if params.arguments is not UNSET else b"{}"
        try:
            given = msgspec.json.decode(raw, type=_Arguments)
        except UNDECODABLE as error:
            detail = invalid_payload(error).detail
            return error_result(f"Invalid arguments for tool {self.name!r}: {detail}")
        hidden = sorted(self.hide & given.keys())
        if hidden:
            return error_result(
                f"Invalid arguments for tool {self.name!r}: it has no argument {hidden[0]!r}"
            )
        arguments = {**self._encoded_defaults, **given}
        return msgspec.structs.replace(
            params, name=self.original, arguments=msgspec.Raw(msgspec.json.encode(arguments))
        )


def transform(
    tool: str | RegisteredTool,
    *,
    name: str | None = None,
    description: str | None = None,
    hide: Iterable[str] = (),
    defaults: Mapping[str, Any] | None = None,
) -> ToolTransform:
    """``tool`` (its name as the server lists it: its own, a mount's, an upstream's; or
    a registered tool) renamed ``name``, re-described, without the ``hide`` arguments
    and with ``defaults``; add it with ``server.add_middleware`` (see the module
    docstring). ValueError for a hidden argument without a default (the tool could not
    be given it), TypeError for a default that is not a JSON value."""
    original = tool if isinstance(tool, str) else tool.name
    if not original:
        raise ValueError("transform: the tool's name is empty")
    hidden = frozenset([hide] if isinstance(hide, str) else hide)
    given = dict(defaults or {})
    lacking = sorted(hidden - given.keys())
    if lacking:
        raise ValueError(
            f"transform of {original!r}: hidden argument {lacking[0]!r} needs a value in defaults"
        )
    new_name = name if name is not None else original
    if not new_name or len(new_name) > 128:
        raise ValueError(f"transform of {original!r}: name must be 1 to 128 characters")
    return ToolTransform(original, new_name, description, hidden, given)
