"""Our client under the official conformance suite's client mode.

``conformance client --command "python tests/conformance_client.py" --suite core``
starts a mock server per scenario and runs ``<command> <serverUrl>`` with the
scenario's name in ``MCP_CONFORMANCE_SCENARIO``, the protocol version the run is
for in ``MCP_CONFORMANCE_PROTOCOL_VERSION`` (``2026-07-28``: the client is pinned
to the modern era, still retrying after -32022; ``2025-11-25`` or older: pinned
to that legacy version; unset: it probes) and, for some scenarios, data in
``MCP_CONFORMANCE_CONTEXT`` (JSON). This script does what each scenario asks,
through the public client API only:

======================================  ==================================================
scenario                                what the client does
======================================  ==================================================
``initialize``                          connect (discover, or initialize), then close
``tools_call``                          call ``add_numbers`` with ``a=5, b=3``
``elicitation-sep1034-client-defaults`` call ``test_client_elicitation_defaults``; accept
                                        its form with every schema default filled in
``sse-retry``                           call ``test_reconnection``; the transport resumes
                                        the dropped stream after the server's ``retry``
                                        delay, with ``Last-Event-ID``
``http-custom-headers``                 list tools, then make each call of the context's
                                        ``toolCalls`` with its exact arguments
``http-invalid-tool-headers``           list tools (the client drops those with invalid
                                        ``x-mcp-header``), call each one left with ``{}``
``http-standard-headers``               list and call every tool, list and read every
                                        resource, list and get every prompt
``json-schema-ref-no-deref``            list tools (their schemas' network ``$ref`` is
                                        never fetched)
``json-schema-2020-12-preservation``    call ``json_schema_echo`` with the
                                        ``inputSchema`` of ``json_schema_2020_12_tool``
                                        exactly as listed
``sep-2322-client-request-state``       call every tool; the MRTR mock answers
                                        ``input_required`` and checks the retries
``auth/*``                              connect through an ``OAuthClient`` (headless user
                                        agent; the context's ``client_id`` and
                                        ``client_secret`` as a pre-registered client; the
                                        suite's client metadata document URL), list
                                        tools, call the first one
anything else                           connect, list tools (if the server has any), call
                                        the first tool if any
======================================  ==================================================

Exit status 0 when the scenario's steps succeeded, 1 otherwise (with the reason on
stderr).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import trio
from msgspec import UNSET

from mcp_actors import Client, ClientHandlers, McpError, open_client, types
from mcp_actors.auth.client import ClientRegistration, OAuthClient
from mcp_actors.protocol.versions import MODERN, SUPPORTED
from mcp_actors.runtime.groups import describe

TIMEOUT = 25.0  # seconds; the harness gives a client 30 s
#: The client metadata document URL the suite's auth/basic-cimd scenario expects.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


def accept_with_defaults(params: types.ElicitParams) -> types.ElicitResult:
    """Accept a form, answering each property with its schema ``default`` (SEP-1034)."""
    schema: dict[str, Any] = params.requested_schema or {}  # type: ignore[assignment]
    properties: dict[str, Any] = schema.get("properties", {})
    content = {name: prop["default"] for name, prop in properties.items() if "default" in prop}
    print(f"elicitation: {params.message!r} -> accept {content}", file=sys.stderr)
    return types.ElicitResult(action="accept", content=content)


def show(result: types.CallToolResult) -> None:
    texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
    print(f"result (isError={result.is_error is True}): {' | '.join(texts)}", file=sys.stderr)
    if result.is_error is True:
        raise SystemExit(1)


async def attempt(what: str, call: Any) -> None:
    """Run one step whose failure the scenario does not care about; report it."""
    try:
        await call
    except McpError as error:
        print(f"{what}: {error}", file=sys.stderr)


async def exercise_everything(client: Client) -> None:
    """Every tool, resource and prompt once (``http-standard-headers`` checks the headers)."""
    capabilities = client.server_capabilities
    if capabilities.tools is not UNSET:
        for tool in await client.list_tools():
            await attempt(f"call {tool.name}", client.call_tool(tool.name, {}))
    if capabilities.resources is not UNSET:
        for resource in await client.list_resources():
            await attempt(f"read {resource.uri}", client.read_resource(resource.uri))
    if capabilities.prompts is not UNSET:
        for prompt in await client.list_prompts():
            await attempt(f"get {prompt.name}", client.get_prompt(prompt.name, {}))


async def run_scenario(client: Client, scenario: str, context: dict[str, Any]) -> None:
    if scenario == "initialize":
        return
    if scenario == "tools_call":
        show(await client.call_tool("add_numbers", {"a": 5, "b": 3}))
    elif scenario == "elicitation-sep1034-client-defaults":
        show(await client.call_tool("test_client_elicitation_defaults", {}))
    elif scenario == "sse-retry":
        show(await client.call_tool("test_reconnection", {}))
    elif scenario == "http-custom-headers":
        await client.list_tools()  # teaches the transport the x-mcp-header annotations
        for call in context.get("toolCalls", []):
            show(await client.call_tool(call["name"], call.get("arguments", {})))
    elif scenario == "http-invalid-tool-headers":
        for tool in await client.list_tools():
            print(f"calling {tool.name}", file=sys.stderr)
            await attempt(f"call {tool.name}", client.call_tool(tool.name, {}))
    elif scenario == "http-standard-headers":
        await exercise_everything(client)
    elif scenario == "sep-2322-client-request-state":
        for tool in await client.list_tools():
            show(await client.call_tool(tool.name, {}))
    elif scenario == "json-schema-ref-no-deref":
        tools = await client.list_tools()  # (its server has no tools/call)
        print(f"tools: {[tool.name for tool in tools]}", file=sys.stderr)
    elif scenario == "json-schema-2020-12-preservation":
        tools = {tool.name: tool for tool in await client.list_tools()}
        schema = tools["json_schema_2020_12_tool"].input_schema
        show(await client.call_tool("json_schema_echo", {"schema": schema}))
    elif client.server_capabilities.tools is not UNSET:
        tools = await client.list_tools()
        print(f"tools: {[tool.name for tool in tools]}", file=sys.stderr)
        if tools:
            show(await client.call_tool(tools[0].name, {}))


def pinned_version() -> str | None:
    """The version the run is for (``MCP_CONFORMANCE_PROTOCOL_VERSION``), if we speak it."""
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION")
    return version if version in (*MODERN, *SUPPORTED) else None


def oauth_client(scenario: str, context: dict[str, Any]) -> OAuthClient | None:
    """The OAuth client of an ``auth/*`` scenario (None for the others)."""
    if not scenario.startswith("auth/"):
        return None
    registration = ClientRegistration(
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
        metadata_url=CLIENT_METADATA_URL,
        client_name="mcp-actors-conformance",
    )
    return OAuthClient(registration=registration)


async def main(url: str, scenario: str) -> None:
    handlers = ClientHandlers(elicitation=accept_with_defaults)
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    with trio.fail_after(TIMEOUT):
        async with open_client(
            url,
            name="mcp-actors-conformance",
            handlers=handlers,
            protocol_version=pinned_version(),
            auth=oauth_client(scenario, context),
        ) as client:
            server = client.server_info.name if client.server_info is not None else "a server"
            print(
                f"{scenario}: connected to {server} ({client.era} era,"
                f" protocol {client.protocol_version})",
                file=sys.stderr,
            )
            await run_scenario(client, scenario, context)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: conformance_client.py SERVER_URL  (scenario in $MCP_CONFORMANCE_SCENARIO)")
    scenario_name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    try:
        trio.run(main, sys.argv[-1], scenario_name)
    except SystemExit:
        raise
    except BaseException as error:
        print(f"{scenario_name}: failed: {describe(error)}", file=sys.stderr)
        sys.exit(1)
