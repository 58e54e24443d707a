"""Multi round-trip requests (MRTR, 2026-07-28): handlers that ask the client, in both eras.

The same handler code (``ctx.elicit``, ``ctx.sample``, ``ctx.list_roots``) sends a request
in a legacy session and answers ``input_required`` in the modern era; our client answers
it with the same handlers and retries. Raw peers check the server's side of the wire:
continuation (the handler resumes, its side effect once), replay (after a restart, an
expiry, without a state), and every way a ``requestState`` is refused (-32602). Every
message is validated against its revision's schema.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial
from typing import Any

import httpx
import pytest
import trio
from mcp import Client as SdkClient
from mcp import StdioServerParameters
from mcp import types as sdk_types

from mcp_actors import (
    ClientHandlers,
    Context,
    MessageStream,
    MrtrSettings,
    Outgoing,
    Server,
    memory_pair,
    types,
)
from mcp_actors.auth.server import InvalidToken, Principal, ResourceServer
from mcp_actors.protocol.request_state import StateKeys
from mcp_actors.testing.wire import validate_message
from mcp_actors.transports.http.client import open_streamable_http
from mcp_actors.transports.http.config import HttpConfig
from mcp_actors.transports.stdio import open_stdio_process
from mcp_actors.transports.websocket import open_websocket_client
from mcp_actors_everything.server import create as create_everything

from conftest import TESTS, connect

SPEC = "servers.mrtr:server"
MODERN = "2026-07-28"
ALL_CAPABILITIES = {"elicitation": {}, "sampling": {}, "roots": {}}
CONFIRM_YES = {"confirm": {"action": "accept", "content": {"ok": True}}}


def client_handlers() -> ClientHandlers:
    async def elicit(params: types.ElicitParams) -> types.ElicitResult:
        """Accept any form: "Ada" for a string, true for a boolean."""
        schema: dict[str, Any] = params.requested_schema or {}  # type: ignore[assignment]
        properties: dict[str, Any] = schema.get("properties", {})
        content = {
            name: "Ada" if prop.get("type") == "string" else True
            for name, prop in properties.items()
        }
        return types.ElicitResult(action="accept", content=content)

    async def sample(params: types.CreateMessageParams) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text="hi"), model="m"
        )

    return ClientHandlers(elicitation=elicit, sampling=sample, roots=["file:///work"])


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


# -- our client and server, every transport -------------------------------------------


@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
async def test_an_elicitation_in_a_tool_completes_in_both_eras(transport: str, era: str) -> None:
    room = f"room-{transport}-{era}"
    async with connect(transport, SPEC, era=era, handlers=client_handlers()) as client:
        assert client.era == era
        result = await client.call_tool("book", {"room": room})
    # held once: in the modern era the parked handler resumed (a continuation), not re-run
    assert text_of(result) == f"{room}: confirmed=True, held 1 time(s)"


@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
async def test_several_rounds_with_default_keys_complete(transport: str) -> None:
    async with connect(transport, SPEC, era="modern", handlers=client_handlers()) as client:
        result = await client.call_tool("survey", {})
    assert text_of(result) == "Ada / hi / 1 root(s)"


@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
async def test_the_everything_fixtures_complete_through_our_client(transport: str) -> None:
    async with connect(
        transport, "mcp_actors_everything.server:create", era="modern", handlers=client_handlers()
    ) as client:
        several = await client.call_tool("test_input_required_result_multiple_inputs", {})
        prompt = await client.get_prompt("test_input_required_result_prompt", {})
    assert text_of(several).startswith("name=")
    assert "roots=file:///work" in text_of(several)
    message = prompt.messages[0].content
    assert isinstance(message, types.TextContent)
    assert message.text.startswith("Please help me with:")


@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
async def test_a_resumed_handler_logs_and_reports_progress_to_the_retry(transport: str) -> None:
    logs: list[Any] = []
    progress: list[float] = []
    handlers = client_handlers()
    handlers.on_log = logs.append

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with connect(transport, SPEC, era="modern", handlers=handlers) as client:
        await client.set_logging_level("info")
        result = await client.call_tool("progress_after_question", {}, on_progress=on_progress)
        with trio.fail_after(5):
            while not logs:
                await trio.sleep(0.01)
    assert text_of(result) == "done"
    assert [entry.data for entry in logs] == ["resumed"]
    assert progress == [1]


# -- a raw modern peer ------------------------------------------------------------------


class RawPeer:
    """Sends modern JSON-RPC requests by hand; validates every message it gets back."""

    def __init__(self, stream: MessageStream) -> None:
        self.stream = stream
        self._ids = itertools.count(1)

    async def call(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        capabilities: dict[str, Any] | None = None,
        method: str = "tools/call",
        **extra: Any,
    ) -> dict[str, Any]:
        request_id = next(self._ids)
        caps = ALL_CAPABILITIES if capabilities is None else capabilities
        params: dict[str, Any] = {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": caps,
            },
            **extra,
        }
        if method == "resources/read":
            params["uri"] = name
        else:
            params["name"] = name
            params["arguments"] = arguments or {}
        request = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        await self.stream.send_all([Outgoing(json.dumps(request).encode())])
        with trio.fail_after(10):
            while True:
                message = json.loads(await self.stream.receive())
                validate_message(MODERN, message, in_reply_to=request)
                if message.get("id") == request_id:
                    return message  # type: ignore[no-any-return]


@asynccontextmanager
async def raw(server: Server) -> AsyncIterator[RawPeer]:
    client_end, server_end = memory_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve_session, server_end)
        yield RawPeer(client_end)
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def raw_everything(transport: str) -> AsyncIterator[RawPeer]:
    if transport == "stdio":
        command = (sys.executable, "-m", "mcp_actors.cli", "run", "everything")
        async with open_stdio_process(command[0], command[1:], cwd=str(TESTS)) as stream:
            yield RawPeer(stream)
    else:
        async with raw(create_everything()) as peer:
            yield peer


CONFIRM_FORM: dict[str, Any] = {"type": "object", "properties": {"ok": {"type": "boolean"}}}


def booking_server(settings: MrtrSettings | None = None) -> tuple[Server, list[str]]:
    """A server with ``book(room)``: records its side effect, then asks ``confirm``."""
    server = Server("booking", mrtr=settings or MrtrSettings())
    effects: list[str] = []

    @server.tool
    async def book(ctx: Context, room: str) -> str:
        effects.append(room)
        answer = await ctx.elicit("Book?", CONFIRM_FORM, key="confirm")
        return f"{room}: {answer.action}"

    @server.tool
    async def cancel(ctx: Context, room: str) -> str:
        await ctx.elicit("Cancel?", CONFIRM_FORM, key="confirm")
        return f"cancelled {room}"

    return server, effects


def asked(response: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = response["result"]
    assert result["resultType"] == "input_required", response
    return result


def completed(response: dict[str, Any]) -> str:
    result = response["result"]
    assert result["resultType"] == "complete", response
    return str(result["content"][0]["text"])


def error_code(response: dict[str, Any]) -> int:
    assert "error" in response, response
    return int(response["error"]["code"])


async def test_a_continuation_resumes_and_its_side_effect_happens_once() -> None:
    server, effects = booking_server()
    async with raw(server) as peer:
        first = asked(await peer.call("book", {"room": "a"}))
        assert first["inputRequests"]["confirm"]["method"] == "elicitation/create"
        assert server.continuation_statistics().parked == 1
        done = await peer.call(
            "book",
            {"room": "a"},
            inputResponses=CONFIRM_YES,
            requestState=first["requestState"],
        )
    assert completed(done) == "a: accept"
    assert effects == ["a"]
    statistics = server.continuation_statistics()
    assert (statistics.parked, statistics.resumed, statistics.replayed) == (0, 1, 0)


@pytest.mark.parametrize("transport", ["memory", "stdio"])
async def test_a_forged_or_misbound_request_state_is_32602(transport: str) -> None:
    async with raw_everything(transport) as peer:
        tool = "test_input_required_result_tampered_state"
        state = asked(await peer.call(tool))["requestState"]
        forged = await peer.call(tool, inputResponses=CONFIRM_YES, requestState=state + "x")
        elsewhere = await peer.call(
            "test_input_required_result_request_state",
            inputResponses=CONFIRM_YES,
            requestState=state,
        )
        garbage = await peer.call(tool, inputResponses=CONFIRM_YES, requestState="not-a-state")
        honest = await peer.call(tool, inputResponses=CONFIRM_YES, requestState=state)
    assert error_code(forged) == -32602
    assert error_code(elsewhere) == -32602  # bound to another tool
    assert error_code(garbage) == -32602
    assert completed(honest) == "confirmed: True"  # the refusals broke nothing


async def test_a_request_state_for_other_arguments_or_expired_is_32602() -> None:
    server, _ = booking_server(MrtrSettings(state_lifetime=0.2))
    async with raw(server) as peer:
        state = asked(await peer.call("book", {"room": "a"}))["requestState"]
        other_room = await peer.call(
            "book", {"room": "b"}, inputResponses=CONFIRM_YES, requestState=state
        )
        other_tool = await peer.call(
            "cancel", {"room": "a"}, inputResponses=CONFIRM_YES, requestState=state
        )
        await trio.sleep(0.3)
        expired = await peer.call(
            "book", {"room": "a"}, inputResponses=CONFIRM_YES, requestState=state
        )
    assert error_code(other_room) == -32602
    assert error_code(other_tool) == -32602
    assert error_code(expired) == -32602
    assert "expired" in expired["error"]["message"]


async def test_a_restart_between_rounds_completes_by_replay() -> None:
    key = os.urandom(32)
    before, _ = booking_server(MrtrSettings(state_keys=(key,)))
    async with raw(before) as peer:
        state = asked(await peer.call("book", {"room": "a"}))["requestState"]
    # a new process (a new Server object): same key, none of the old continuations
    after, effects = booking_server(MrtrSettings(state_keys=(os.urandom(32), key)))
    stranger, _ = booking_server()  # another key: cannot open the state
    async with raw(after) as peer:
        done = await peer.call(
            "book", {"room": "a"}, inputResponses=CONFIRM_YES, requestState=state
        )
    async with raw(stranger) as peer:
        refused = await peer.call(
            "book", {"room": "a"}, inputResponses=CONFIRM_YES, requestState=state
        )
    assert completed(done) == "a: accept"
    assert effects == ["a"]  # re-run from the start on the new server
    assert after.continuation_statistics().replayed == 1
    assert error_code(refused) == -32602


async def test_an_expired_continuation_is_replayed() -> None:
    server, effects = booking_server(MrtrSettings(continuation_ttl=0.05))
    async with raw(server) as peer:
        state = asked(await peer.call("book", {"room": "a"}))["requestState"]
        await trio.sleep(0.2)
        assert server.continuation_statistics().expired == 1
        done = await peer.call(
            "book", {"room": "a"}, inputResponses=CONFIRM_YES, requestState=state
        )
    assert completed(done) == "a: accept"
    assert effects == ["a", "a"]  # the side effect before the question, twice: a replay


async def test_the_bound_evicts_the_oldest_continuation() -> None:
    server, _ = booking_server(MrtrSettings(max_continuations=1))
    async with raw(server) as peer:
        oldest = asked(await peer.call("book", {"room": "a"}))["requestState"]
        asked(await peer.call("book", {"room": "b"}))
        assert server.continuation_statistics().evicted == 1
        done = await peer.call(
            "book", {"room": "a"}, inputResponses=CONFIRM_YES, requestState=oldest
        )
    assert completed(done) == "a: accept"  # replayed
    assert server.continuation_statistics().parked == 0


# -- one caller cannot evict another's parked handlers --------------------------------------


class NamedCallers:
    """A verifier for which each token is the name of the caller it stands for."""

    async def verify(self, token: str, resource: str) -> Principal:
        if not token.isalpha():
            raise InvalidToken("unknown caller")
        return Principal(token, frozenset())


class Callers:
    """Raw modern peers of one server, one per caller (token), each on a connection of its
    own: Streamable HTTP, or a WebSocket (the token at the upgrade)."""

    def __init__(self, url: str, stack: AsyncExitStack) -> None:
        self.url, self.stack = url, stack
        self.peers: dict[str, RawPeer] = {}

    async def __call__(self, caller: str) -> RawPeer:
        if caller not in self.peers:
            headers = {"authorization": f"Bearer {caller}"}
            opener = (
                open_websocket_client(self.url, headers=headers)
                if self.url.startswith("ws")
                else open_streamable_http(self.url, headers=headers, legacy_fallback=False)
            )
            self.peers[caller] = RawPeer(await self.stack.enter_async_context(opener))
        return self.peers[caller]


#: Where callers are told apart: the transports that authenticate (HTTP on each front end,
#: WebSocket).
AUTHENTICATED = ["http", "http-hypercorn", "ws"]


@asynccontextmanager
async def callers_of(server: Server, transport: str) -> AsyncIterator[Callers]:
    """``server`` over ``transport`` behind a :class:`NamedCallers` resource server."""
    from mcp_actors.server.serve_http import serve_http
    from mcp_actors.server.serve_websocket import serve_websocket

    auth = ResourceServer(verifier=NamedCallers(), authorization_servers=["https://as.test"])
    async with trio.open_nursery() as nursery, AsyncExitStack() as stack:
        if transport == "ws":
            ws = await nursery.start(partial(serve_websocket, server, port=0, auth=auth))
            url = ws.url
        else:
            front_end = "hypercorn" if transport == "http-hypercorn" else None
            config = HttpConfig(front_end=front_end)
            http = await nursery.start(
                partial(serve_http, server, port=0, auth=auth, config=config)
            )
            url = http.url
        yield Callers(url, stack)
        await stack.aclose()
        nursery.cancel_scope.cancel()


def per_caller_booking_server(settings: MrtrSettings) -> tuple[Server, dict[str, int]]:
    """``book(room)`` counts its side effect by caller and room, then asks ``confirm``."""
    server = Server("booking", mrtr=settings)
    effects: dict[str, int] = {}

    @server.tool
    async def book(ctx: Context, room: str) -> str:
        assert ctx.principal is not None
        held = f"{ctx.principal.subject}/{room}"
        effects[held] = effects.get(held, 0) + 1
        answer = await ctx.elicit("Book?", CONFIRM_FORM, key="confirm")
        return f"{held}: {answer.action}"

    return server, effects


@pytest.mark.parametrize("transport", AUTHENTICATED)
async def test_a_caller_parking_past_the_bound_evicts_only_its_own(transport: str) -> None:
    """Bob parks more calls than the whole bound: Alice's parked call still resumes (its
    side effect once); the calls of Bob's that went are Bob's oldest."""
    server, effects = per_caller_booking_server(MrtrSettings(max_continuations=8))
    async with callers_of(server, transport) as callers:
        alice, bob = await callers("alice"), await callers("bob")
        state = asked(await alice.call("book", {"room": "a"}))["requestState"]
        bobs = [asked(await bob.call("book", {"room": f"b{n}"}))["requestState"] for n in range(12)]
        done = await alice.call(
            "book", {"room": "a"}, inputResponses=CONFIRM_YES, requestState=state
        )
        bob_first = await bob.call(
            "book", {"room": "b0"}, inputResponses=CONFIRM_YES, requestState=bobs[0]
        )
    assert completed(done) == "alice/a: accept"
    assert completed(bob_first) == "bob/b0: accept"
    assert effects["alice/a"] == 1  # resumed, not re-run
    assert effects["bob/b0"] == 2  # Bob's own oldest went: replayed
    assert server.continuation_statistics().evicted == 5


@pytest.mark.parametrize("front_end", ["lean", "hypercorn"])
async def test_without_auth_callers_are_told_apart_by_their_address(front_end: str) -> None:
    """No token to tell callers apart: the peer's address does. Bob, from 127.0.0.2,
    parks more calls than the whole bound; Alice's parked call (from 127.0.0.1) still
    resumes, its side effect once."""
    from mcp_actors.server.serve_http import serve_http

    server = Server("booking", mrtr=MrtrSettings(max_continuations=8))
    effects: dict[str, int] = {}

    @server.tool
    async def book(ctx: Context, room: str) -> str:
        effects[room] = effects.get(room, 0) + 1
        answer = await ctx.elicit("Book?", CONFIRM_FORM, key="confirm")
        return f"{room}: {answer.action}"

    async with trio.open_nursery() as nursery, AsyncExitStack() as stack:
        config = HttpConfig(front_end=front_end)
        http = await nursery.start(partial(serve_http, server, port=0, config=config))

        async def peer_from(address: str) -> RawPeer:
            transport = httpx.AsyncHTTPTransport(local_address=address)
            client = await stack.enter_async_context(
                httpx.AsyncClient(transport=transport, timeout=30)
            )
            stream = open_streamable_http(http.url, http_client=client, legacy_fallback=False)
            return RawPeer(await stack.enter_async_context(stream))

        alice, bob = await peer_from("127.0.0.1"), await peer_from("127.0.0.2")
        state = asked(await alice.call("book", {"room": "a"}))["requestState"]
        for n in range(12):
            asked(await bob.call("book", {"room": f"b{n}"}))
        done = await alice.call(
            "book", {"room": "a"}, inputResponses=CONFIRM_YES, requestState=state
        )
        await stack.aclose()
        nursery.cancel_scope.cancel()
    assert completed(done) == "a: accept"
    assert effects["a"] == 1  # resumed, not re-run


@pytest.mark.parametrize("transport", AUTHENTICATED)
async def test_a_caller_at_its_own_cap_evicts_its_oldest_and_a_full_server_the_busiest(
    transport: str,
) -> None:
    settings = MrtrSettings(max_continuations=4, max_continuations_per_caller=2)
    server, effects = per_caller_booking_server(settings)
    async with callers_of(server, transport) as callers:
        states: dict[str, str] = {}
        for caller, room in [("alice", "a"), ("bob", "b1"), ("bob", "b2"), ("bob", "b3")]:
            states[room] = asked(await (await callers(caller)).call("book", {"room": room}))[
                "requestState"
            ]
        assert server.continuation_statistics().evicted == 1  # bob's b1: bob was at his cap
        for room in ("c1", "c2"):  # the server is full at c2: bob has the most, b2 goes
            states[room] = asked(await (await callers("carol")).call("book", {"room": room}))[
                "requestState"
            ]
        assert server.continuation_statistics().evicted == 2
        for caller, room in [("alice", "a"), ("bob", "b1"), ("bob", "b2"), ("bob", "b3")]:
            peer = await callers(caller)
            done = await peer.call(
                "book", {"room": room}, inputResponses=CONFIRM_YES, requestState=states[room]
            )
            assert completed(done) == f"{caller}/{room}: accept"
    assert effects == {
        "alice/a": 1,
        "bob/b1": 2,  # evicted by bob's own third call: replayed
        "bob/b2": 2,  # evicted when carol filled the server: replayed
        "bob/b3": 1,
        "carol/c1": 1,
        "carol/c2": 1,
    }


@pytest.mark.parametrize("transport", ["memory", "stdio"])
async def test_responses_without_state_are_used_checked_and_extra_ones_ignored(
    transport: str,
) -> None:
    tool = "test_input_required_result_elicitation"
    name = {"user_name": {"action": "accept", "content": {"name": "Alice"}}}
    async with raw_everything(transport) as peer:
        fresh = await peer.call(tool, inputResponses={**name, "unknown": {"x": 1}})
        wrong_key = await peer.call(tool, inputResponses={"wrong_key": name["user_name"]})
        bad_shape = await peer.call(tool, inputResponses={"user_name": 12345})
        null = await peer.call(tool, inputResponses=None)
    assert completed(fresh) == "Hello, Alice!"
    assert list(asked(wrong_key)["inputRequests"]) == ["user_name"]  # asked again
    assert error_code(bad_shape) == -32602
    assert error_code(null) == -32602


async def test_undeclared_capabilities_are_never_asked() -> None:
    async with raw(create_everything()) as peer:
        sampling_only = await peer.call(
            "test_input_required_result_capabilities", capabilities={"sampling": {}}
        )
        nothing = await peer.call("test_input_required_result_elicitation", capabilities={})
    methods = [r["method"] for r in asked(sampling_only)["inputRequests"].values()]
    assert methods == ["sampling/createMessage"]
    assert error_code(nothing) == -32021
    assert nothing["error"]["data"] == {"requiredCapabilities": {"elicitation": {}}}


async def test_a_resource_read_may_ask_too() -> None:
    server = Server("reader")

    @server.resource("test://greeting")
    async def greeting(ctx: Context) -> str:
        roots = await ctx.list_roots(key="roots")
        return f"{len(roots)} root(s)"

    async with raw(server) as peer:
        first = asked(await peer.call("test://greeting", method="resources/read"))
        done = await peer.call(
            "test://greeting",
            method="resources/read",
            inputResponses={"roots": {"roots": [{"uri": "file:///a"}]}},
            requestState=first["requestState"],
        )
    assert done["result"]["contents"][0]["text"] == "1 root(s)"


def test_settings_are_parsed_strictly() -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        MrtrSettings(state_keys=(b"short",))
    with pytest.raises(TypeError, match="sequence"):
        MrtrSettings(state_keys=os.urandom(32))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="positive"):
        MrtrSettings(state_lifetime=0)
    with pytest.raises(ValueError, match="integer"):
        MrtrSettings(max_continuations=-1)
    with pytest.raises(ValueError, match="integer"):
        MrtrSettings(max_continuations_per_caller=1.5)  # type: ignore[arg-type]
    assert isinstance(MrtrSettings().state_keys, StateKeys)


# -- the official SDK 2.3 client -------------------------------------------------------


async def test_the_sdk_client_completes_an_elicitation_round_trip_in_the_modern_era() -> None:
    asked_messages: list[str] = []

    async def on_elicit(context: Any, params: Any) -> sdk_types.ElicitResult:
        asked_messages.append(params.message)
        return sdk_types.ElicitResult(action="accept", content={"name": "Grace"})

    everything = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_actors.cli", "run", "everything"], cwd=str(TESTS)
    )
    async with SdkClient(everything, elicitation_callback=on_elicit) as client:
        assert client.protocol_version == MODERN
        result = await client.call_tool("test_input_required_result_elicitation", {})
    assert result.content[0].text == "Hello, Grace!"  # type: ignore[union-attr]
    assert asked_messages == ["What is your name?"]


async def test_an_inline_tool_is_still_served_inline_in_the_modern_era(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with raw(create_everything()) as peer:
        answer = await peer.call("add", {"a": 1, "b": 2})
    assert completed(answer) == "3"
    # an inline tool never asks: it is not run as an actor that could park
    assert not [r for r in caplog.records if "declared inline" in r.getMessage()]


async def test_questions_asked_concurrently_share_one_round() -> None:
    server = Server("concurrent")

    @server.tool
    async def pair(ctx: Context) -> str:
        answers: dict[str, str] = {}

        async def ask(key: str) -> None:
            answer = await ctx.elicit(f"{key}?", CONFIRM_FORM, key=key)
            answers[key] = answer.action

        async with trio.open_nursery() as nursery:
            nursery.start_soon(ask, "first")
            nursery.start_soon(ask, "second")
        return ",".join(f"{key}={answers[key]}" for key in sorted(answers))

    yes = {"action": "accept", "content": {"ok": True}}
    async with raw(server) as peer:
        round_one = asked(await peer.call("pair"))
        assert sorted(round_one["inputRequests"]) == ["first", "second"]
        partial = asked(
            await peer.call(
                "pair", inputResponses={"first": yes}, requestState=round_one["requestState"]
            )
        )
        assert list(partial["inputRequests"]) == ["second"]  # only what is still missing
        done = await peer.call(
            "pair", inputResponses={"second": yes}, requestState=partial["requestState"]
        )
    assert completed(done) == "first=accept,second=accept"


async def test_handlers_that_cannot_ask_run_in_the_request_not_as_a_parkable_actor() -> None:
    server = Server("plain-and-asking")

    @server.tool
    async def echo(text: str) -> str:  # no Context: it has no way to ask
        return text

    @server.tool
    async def quiet(ctx: Context, text: str) -> str:  # could ask, does not
        return text

    @server.prompt
    async def greet(name: str) -> str:
        return f"Hello, {name}"

    @server.resource("note://{name}")
    async def note(name: str) -> str:
        return f"note {name}"

    async with raw(server) as peer:
        echoed = await peer.call("echo", {"text": "a"})
        prompt = await peer.call("greet", {"name": "Ada"}, method="prompts/get")
        resource = await peer.call("note://x", method="resources/read")
        assert server.continuation_statistics().started == 0
        quiet_answer = await peer.call("quiet", {"text": "b"})
        assert server.continuation_statistics().started == 1
        # a retry carrying a requestState takes the MRTR path, which refuses a forged one
        forged = await peer.call("echo", {"text": "a"}, requestState="forged")
    assert completed(echoed) == "a"
    assert completed(quiet_answer) == "b"
    assert prompt["result"]["messages"][0]["content"]["text"] == "Hello, Ada"
    assert resource["result"]["contents"][0]["text"] == "note x"
    assert error_code(forged) == -32602
