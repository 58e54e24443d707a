"""A short fixed-seed fuzz run per transport: nothing a peer sends may hurt the server.

The same fuzzer as ``benchmarks/fuzz.py`` (the long run), a few hundred cases per
transport (stdio, Streamable HTTP on the lean and the hypercorn front end,
WebSocket) against the ``everything`` plugin, in both eras (legacy sessions and
2026-07-28 requests): the process lives, every session answers a ping (modern: a
``server/discover``) after each window of cases, stdout carries only JSON-RPC,
every reply is valid against its revision's schema, and no Python traceback text
reaches the wire. A failure lists each finding with its culprit case.

What the fuzzer found once is replayed on every transport, so it stays fixed.
"""

from __future__ import annotations

import logging
import random

import pytest
import trio

from mcp_actors import ClientHandlers, McpError, types

from conftest import TESTS, connect
from fuzzing.cases import Case
from fuzzing.checks import FAILURES
from fuzzing.modern import MODERN, ModernShaper
from fuzzing.run import fuzz, triage
from fuzzing.targets import TRANSPORTS, make_target

MESSAGES = 300
EVERYTHING = "mcp_actors_everything.server:create"
SEED = 20251125


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_fuzzed_server_survives_and_answers_only_valid_json_rpc(transport: str) -> None:
    target = make_target(transport, "everything", cwd=TESTS)
    report = await fuzz(
        target,
        messages=MESSAGES,
        seed=SEED,
        ping_every=20,
        session_messages=60,
        time_limit=120,
        max_triage=5,
        oversized_bytes=64 * 1024,
    )
    counts = {name: getattr(report, name) for name in FAILURES}
    findings = "\n".join(
        f"{f.kind} [{f.culprit}] {f.sample}\n    {f.detail[:300]!r}" for f in report.findings
    )
    assert report.messages >= MESSAGES, f"only {report.messages} cases sent"
    assert report.modern_sessions > 0 and report.sessions > report.modern_sessions, counts
    assert report.failures == 0, f"{transport}: {counts}\n{findings}"


_MODERN_META = (
    b'"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientCapabilities":{}'
)
#: Modern requests the fuzzer found to end the session (stdio, WebSocket).
FOUND: dict[str, bytes] = {
    "invalid UTF-8 in _meta": (
        b'{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":{"_meta":{%s,"x":"a\xffb"}}}'
        % _MODERN_META
    ),
    "a log level that is a list": (
        b'{"jsonrpc":"2.0","id":2,"method":"resources/list","params":{"_meta":{%s,'
        b'"io.modelcontextprotocol/logLevel":[["debug"]]}}}' % _MODERN_META
    ),
}


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("found", sorted(FOUND))
async def test_what_the_fuzzer_found_is_answered_and_the_session_lives(
    transport: str, found: str
) -> None:
    target = make_target(transport, "everything", cwd=TESTS)
    payload = FOUND[found]
    shaper = ModernShaper(random.Random(0), {})
    case = Case("found", payload, headers=shaper.headers(payload))
    async with trio.open_nursery() as nursery:
        await nursery.start(target.serve)
        culprit = await triage(target, [case], MODERN, SEED, timeout=30)
        nursery.cancel_scope.cancel()
    assert culprit is None, f"{found}: {culprit[1].detail}"


@pytest.mark.needs("server_requests")
async def test_a_question_the_client_fails_is_the_tools_error_not_a_crash(transport: str) -> None:
    """Two questions at once (legacy: concurrent requests); the client fails one: the
    tool's call fails with that error, not with the exception group that held it."""

    def refuse(params: object) -> types.CreateMessageResult:
        raise McpError(-32001, "no model here")

    def answer(params: object) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    handlers = ClientHandlers(sampling=refuse, elicitation=answer)
    async with connect(transport, EVERYTHING, handlers=handlers) as client:
        with pytest.raises(McpError) as raised:
            await client.call_tool("test_input_required_result_capabilities")
    assert (raised.value.code, raised.value.message) == (-32001, "no model here")


@pytest.mark.needs("server_requests")
async def test_content_the_client_got_wrong_is_told_not_logged_as_a_crash(
    transport: str, caplog: pytest.LogCaptureFixture
) -> None:
    """An elicitation accepted with content off its schema is the client's mistake: the
    tool's ``isError`` result says what is wrong, the log has no traceback of it."""

    def answer(params: object) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"name": 5})

    handlers = ClientHandlers(elicitation=answer)
    async with connect(transport, EVERYTHING, handlers=handlers) as client:
        result = await client.call_tool("test_streaming_elicitation")
    assert result.is_error is True
    assert result.content == [
        types.TextContent(
            text="the accepted elicitation content does not match the requested schema:"
            " name: expected a string, got a number"
        )
    ]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and r.exc_info]
