"""A prompt or a resource that refuses a request for the caller's fault (``ToolError``):
the request's error, -32602 with the handler's message, over every transport; the
server logs no traceback of it (the caller's mistake is not the server's failure)."""

from __future__ import annotations

import logging

import pytest

from mcp_actors import McpError

from conftest import connect

SERVER = "servers.refusals:server"


async def test_a_prompt_s_refusal_is_invalid_params_with_its_message(
    transport: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with connect(transport, SERVER) as client:
        assert (await client.get_prompt("greeting", {"name": "Ada"})).messages
        with pytest.raises(McpError) as refused:
            await client.get_prompt("greeting", {"name": " "})
    assert refused.value.code == -32602
    assert refused.value.message == "Invalid params: prompt 'greeting': name must not be blank"
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


async def test_a_resource_s_refusal_is_invalid_params_with_its_message(
    transport: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with connect(transport, SERVER) as client:
        assert (await client.read_resource("notes://todo")).contents
        with pytest.raises(McpError) as refused:
            await client.read_resource("notes://shopping")
    assert refused.value.code == -32602
    assert refused.value.message == (
        "Invalid params: resource 'notes://shopping': no note called 'shopping'"
    )
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
