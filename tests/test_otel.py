"""OpenTelemetry: spans on both sides, parent/child links across a proxy hop via ``_meta``."""

from __future__ import annotations

import itertools

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from mcp_actors import McpError, Server, open_client, types
from mcp_actors.gateway import Upstream
from mcp_actors.otel import OpenTelemetry


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def telemetry(exporter: InMemorySpanExporter) -> OpenTelemetry:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return OpenTelemetry(tracer_provider=provider)


def _upstream(telemetry: OpenTelemetry) -> Server:
    upstream = Server("upstream", middleware=[telemetry])

    @upstream.tool
    async def weather(city: str) -> str:
        return f"sunny in {city}"

    @upstream.tool
    async def broken() -> str:
        raise RuntimeError("no")

    return upstream


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_spans_link_parent_to_child_across_a_proxy_hop(
    era: str, telemetry: OpenTelemetry, exporter: InMemorySpanExporter
) -> None:
    gateway = Server("gateway", middleware=[telemetry])
    gateway.mount(Upstream(_upstream(telemetry), middleware=[telemetry]), prefix="up")
    async with open_client(gateway, era=era, middleware=[telemetry]) as client:  # type: ignore[arg-type]
        exporter.clear()
        result = await client.call_tool("up_weather", {"city": "Oslo"})
    assert result.content == [types.TextContent(text="sunny in Oslo")]
    spans = list(exporter.get_finished_spans())
    calls = [span for span in spans if span.name.startswith("tools/call")]
    by_kind = {(span.kind, span.name): span for span in calls}
    caller = by_kind[(SpanKind.CLIENT, "tools/call up_weather")]
    at_gateway = by_kind[(SpanKind.SERVER, "tools/call up_weather")]
    gateway_out = by_kind[(SpanKind.CLIENT, "tools/call weather")]
    at_upstream = by_kind[(SpanKind.SERVER, "tools/call weather")]
    assert len(calls) == 4
    chain = [caller, at_gateway, gateway_out, at_upstream]
    assert len({span.context.trace_id for span in chain}) == 1  # type: ignore[union-attr]
    for parent, child in itertools.pairwise(chain):
        assert child.parent is not None
        assert child.parent.span_id == parent.context.span_id  # type: ignore[union-attr]
    assert caller.parent is None
    attributes = at_upstream.attributes or {}
    assert attributes["mcp.method.name"] == "tools/call"
    assert attributes["gen_ai.tool.name"] == "weather"
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["mcp.protocol.version"] == "2026-07-28"  # the upstream hop: modern
    gateway_attributes = at_gateway.attributes or {}
    assert gateway_attributes["mcp.protocol.version"] == client.protocol_version


async def test_errors_are_marked_on_the_span(
    telemetry: OpenTelemetry, exporter: InMemorySpanExporter
) -> None:
    server = _upstream(telemetry)
    async with open_client(server, middleware=[telemetry]) as client:
        exporter.clear()
        result = await client.call_tool("broken")
        assert result.is_error
        with pytest.raises(McpError):
            await client.call_tool("missing")
    spans = {(s.kind, s.name): s for s in exporter.get_finished_spans()}
    broken = spans[(SpanKind.SERVER, "tools/call broken")]
    assert broken.status.status_code is StatusCode.ERROR
    assert (broken.attributes or {})["error.type"] == "tool_error"
    missing = spans[(SpanKind.CLIENT, "tools/call missing")]
    assert (missing.attributes or {})["error.type"] == "-32602"
    assert (missing.attributes or {})["rpc.response.status_code"] == "-32602"


async def test_a_request_without_trace_context_starts_a_trace(
    telemetry: OpenTelemetry, exporter: InMemorySpanExporter
) -> None:
    async with open_client(_upstream(telemetry)) as client:  # no client middleware
        exporter.clear()
        await client.call_tool("weather", {"city": "Rome"})
    (span,) = exporter.get_finished_spans()
    assert span.kind is SpanKind.SERVER and span.parent is None
