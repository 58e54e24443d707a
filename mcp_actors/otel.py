"""OpenTelemetry: a span per request on both sides, trace context carried in ``_meta``.

:class:`OpenTelemetry` is a middleware (see :mod:`~mcp_actors.runtime.middleware`);
give it to a server, a client, or both sides of a gateway's upstream::

    from mcp_actors.otel import OpenTelemetry

    server = Server("demo", middleware=[OpenTelemetry()])
    async with open_client(target, middleware=[OpenTelemetry()]) as client: ...

- A **client** call gets a ``CLIENT`` span, and the current trace context is written
  into the request's ``params._meta`` as ``traceparent``, ``tracestate`` and
  ``baggage`` (W3C Trace Context and Baggage), the keys the 2026-07-28 specification
  reserves for this (``basic/index``: "OpenTelemetry trace context"); they are plain
  ``_meta`` entries, so every era and transport carries them.
- A **server** request gets a ``SERVER`` span whose parent is the context read from
  its ``_meta`` (none: a new trace). The handler runs with that span current, so the
  calls it makes — a proxy's upstream call — are its children: a trace crosses every
  hop of a gateway.

Span names and attributes follow the OpenTelemetry semantic conventions for MCP
(``gen-ai/mcp``): the name is ``"{mcp.method.name} {target}"`` (the tool or prompt
name) or the method alone; attributes ``mcp.method.name``, ``jsonrpc.request.id``,
``mcp.protocol.version``, ``gen_ai.tool.name`` with ``gen_ai.operation.name =
"execute_tool"``, ``gen_ai.prompt.name``, ``mcp.resource.uri``; an error sets
``error.type`` (the JSON-RPC code, ``tool_error`` for an ``isError`` result, else the
exception's type) and ``rpc.response.status_code``, and the span's status to ERROR.

This module needs ``opentelemetry-api`` (extra ``otel``); nothing else of mcp_actors
imports it, so it costs nothing where it is not used. Which propagators are used is
OpenTelemetry's global setting (default: W3C Trace Context and Baggage).
"""

from __future__ import annotations

from typing import Any

import attrs
import msgspec
import trio
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from .protocol import types as t
from .protocol.errors import McpError
from .runtime.middleware import Call, CallNext, Middleware

#: The ``_meta`` keys of trace context (2026-07-28, ``basic/index``).
TRACE_KEYS = ("traceparent", "tracestate", "baggage")
_TRACER_NAME = "mcp_actors"


@attrs.define(eq=False)
class OpenTelemetry(Middleware):
    """Spans for requests and ``_meta`` trace propagation (see the module docstring).

    ``tracer_provider``: where spans go (default: OpenTelemetry's global provider).
    """

    tracer_provider: trace.TracerProvider | None = None
    _tracer: trace.Tracer = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        from ._version import __version__

        self._tracer = trace.get_tracer(
            _TRACER_NAME, __version__, tracer_provider=self.tracer_provider
        )

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        outbound = call.direction == "outbound"
        parent = None if outbound else propagate.extract(_meta_of(call.params))
        kind = SpanKind.CLIENT if outbound else SpanKind.SERVER
        with self._tracer.start_as_current_span(
            _span_name(call),
            context=parent,
            kind=kind,
            attributes=_attributes(call),
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            if outbound:
                carrier: dict[str, str] = {}
                propagate.inject(carrier)
                call = attrs.evolve(call, params=_with_meta(call.params, carrier))
            try:
                result = await call_next(call)
            except McpError as error:
                _failed(span, str(error.code), error.message, code=error.code)
                raise
            except trio.Cancelled:
                span.set_attribute("error.type", "cancelled")
                raise
            except Exception as error:
                _failed(span, type(error).__qualname__, str(error))
                span.record_exception(error)
                raise
            if isinstance(result, t.CallToolResult) and result.is_error is True:
                _failed(span, "tool_error", "the tool reported an error")
            return result


def _failed(span: trace.Span, error_type: str, message: str, *, code: int | None = None) -> None:
    span.set_attribute("error.type", error_type)
    if code is not None:
        span.set_attribute("rpc.response.status_code", str(code))
    span.set_status(Status(StatusCode.ERROR, message))


def _target(call: Call) -> str | None:
    """The tool's or prompt's name, for the span name and attributes."""
    if call.method in ("tools/call", "prompts/get"):
        name = getattr(call.params, "name", None)
        if name is None and isinstance(call.params, dict):
            name = call.params.get("name")
        return name if isinstance(name, str) else None
    return None


def _span_name(call: Call) -> str:
    target = _target(call)
    return call.method if target is None else f"{call.method} {target}"


def _attributes(call: Call) -> dict[str, Any]:
    attributes: dict[str, Any] = {"mcp.method.name": call.method}
    if call.request_id is not None:
        attributes["jsonrpc.request.id"] = str(call.request_id)
    version = getattr(call.session, "protocol_version", None)
    if isinstance(version, str):
        attributes["mcp.protocol.version"] = version
    target = _target(call)
    if call.method == "tools/call" and target is not None:
        attributes["gen_ai.tool.name"] = target
        attributes["gen_ai.operation.name"] = "execute_tool"
    elif call.method == "prompts/get" and target is not None:
        attributes["gen_ai.prompt.name"] = target
    uri = getattr(call.params, "uri", None)
    if isinstance(uri, str):
        attributes["mcp.resource.uri"] = uri
    return attributes


def _meta_of(params: Any) -> dict[str, str]:
    """The trace-context entries of ``params._meta`` (strings only: what a peer sent)."""
    meta = params.get("_meta") if isinstance(params, dict) else getattr(params, "meta", None)
    if not isinstance(meta, dict):
        return {}
    return {key: meta[key] for key in TRACE_KEYS if isinstance(meta.get(key), str)}


def _with_meta(params: Any, carrier: dict[str, str]) -> Any:
    """``params`` with ``carrier``'s entries in its ``_meta`` (a copy; None → a dict)."""
    if not carrier:
        return params
    if params is None:
        return {"_meta": dict(carrier)}
    if isinstance(params, dict):
        given = params.get("_meta")
        return {**params, "_meta": {**(given if isinstance(given, dict) else {}), **carrier}}
    if isinstance(params, msgspec.Struct) and hasattr(params, "meta"):
        own = params.meta
        return msgspec.structs.replace(
            params, meta={**(own if isinstance(own, dict) else {}), **carrier}
        )
    return params  # params without a _meta field: nothing to carry it in
