"""A client that vanishes mid-call does not leave its handlers running.

When the peer is gone nobody will read the answers of its requests, so the
server cancels them: over stdio when its stdin reaches end of file (after
``SessionConfig.eof_grace``, 1 s, in which they may still finish: a client may
close stdin and read on, see ``test_stdio_eof.py``), and at once over
any message stream when the other end closes, over Streamable HTTP when the
connection of a POST closes before its reply — unless the client can still
resume that reply (see ``HttpConfig.resume_window``).

Each test starts a handler that waits forever and records the moment it is
cancelled, makes the client vanish, and asserts the cancellation came (bounded
by a hang guard well below the old 5 s grace).
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import attrs
import httpx
import pytest
import trio
import trio.testing

from mcp_actors import Outgoing, Server, memory_pair
from mcp_actors.server.serve_http import serve_http
from mcp_actors.transports.http.config import HttpConfig

from conftest import SAMPLE, TESTS, wait_for_event

#: Generous for a cancellation that should be immediate; under the old 5 s grace.
HANG_GUARD = 3.0


@attrs.define
class Probe:
    """What the ``hold`` tool saw: that it started, and when it was cancelled."""

    started: trio.Event = attrs.field(factory=trio.Event)
    cancelled: trio.Event = attrs.field(factory=trio.Event)
    cancelled_at: float | None = None


PROBES: dict[str, Probe] = {}
probe_server = Server("probe", "1.0")


@probe_server.tool
async def hold(tag: str) -> str:
    """Wait until cancelled; record when."""
    probe = PROBES[tag]
    probe.started.set()
    try:
        await trio.sleep_forever()
    except trio.Cancelled:
        probe.cancelled_at = trio.current_time()
        probe.cancelled.set()
        raise
    return "unreachable"


def _message(request_id: int | None, method: str, params: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if request_id is not None:
        message["id"] = request_id
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def _initialize(version: str) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "vanishing", "version": "0"},
    }


def _hold(tag: str) -> dict[str, Any]:
    return {"name": "hold", "arguments": {"tag": tag}}


def _hold_sample(tag: str) -> dict[str, Any]:
    """The sample server's equivalent of ``hold``, for a server in a child process."""
    return {"name": "wait_forever", "arguments": {"tag": tag}}


# -- message streams -------------------------------------------------------------------


async def test_closing_the_stream_cancels_the_running_handler_at_once(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """On trio's autojump clock any grace period would show as elapsed virtual time."""
    probe = PROBES["memory"] = Probe()
    client_end, server_end = memory_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(probe_server.serve_session, server_end)
        await client_end.send(Outgoing(_message(0, "initialize", _initialize("2025-11-25"))))
        await client_end.receive()
        await client_end.send(Outgoing(_message(None, "notifications/initialized")))
        await client_end.send(Outgoing(_message(1, "tools/call", _hold("memory"))))
        await probe.started.wait()
        closed_at = trio.current_time()
        await client_end.aclose()
        await probe.cancelled.wait()
    assert probe.cancelled_at == closed_at, "the handler ran on after the peer had gone"


async def test_stdin_eof_cancels_a_handler_still_running_after_the_grace(events_file: Path) -> None:
    command = [sys.executable, "-m", "mcp_actors.cli", "run", SAMPLE]
    process = await trio.lowlevel.open_process(command, stdin=-1, stdout=-1, cwd=str(TESTS))
    assert process.stdin is not None
    try:
        for line in (
            _message(0, "initialize", _initialize("2025-11-25")),
            _message(None, "notifications/initialized"),
            _message(1, "tools/call", _hold_sample("eof")),
        ):
            await process.stdin.send_all(line + b"\n")
        await wait_for_event(events_file, "started eof")
        await process.stdin.aclose()
        await wait_for_event(events_file, "cancelled eof", timeout=HANG_GUARD)
    finally:
        with trio.CancelScope(shield=True):
            process.kill()
            await process.wait()


# -- Streamable HTTP ------------------------------------------------------------------


@attrs.define
class HttpPeer:
    """A hand-driven Streamable HTTP client: it can drop a POST's connection at will."""

    http: httpx.AsyncClient
    url: str
    version: str
    session_id: str | None = None

    def headers(self, accept: str) -> dict[str, str]:
        headers = {"accept": accept, "content-type": "application/json"}
        headers["mcp-protocol-version"] = self.version
        if self.session_id is not None:
            headers["mcp-session-id"] = self.session_id
        return headers

    async def initialize(self) -> None:
        response = await self.http.post(
            self.url,
            content=_message(0, "initialize", _initialize(self.version)),
            headers=self.headers("application/json"),
        )
        assert response.status_code == 200, response.text
        self.session_id = response.headers["mcp-session-id"]
        response = await self.http.post(
            self.url,
            content=_message(None, "notifications/initialized"),
            headers=self.headers("application/json"),
        )
        assert response.status_code == 202, response.text

    async def post_and_drop(self, body: bytes, accept: str, probe: Probe) -> None:
        """POST ``body``; once the handler has started, close the connection unanswered."""
        async with trio.open_nursery() as nursery:

            async def post() -> None:
                async with self.http.stream(
                    "POST", self.url, content=body, headers=self.headers(accept)
                ) as response:
                    async for _ in response.aiter_raw():
                        pass

            nursery.start_soon(post)
            await probe.started.wait()
            nursery.cancel_scope.cancel()  # httpx closes a connection it did not read out


@asynccontextmanager
async def http_peer(
    version: str = "2025-11-25", **options: Any
) -> AsyncIterator[tuple[HttpPeer, HttpConfig]]:
    config = HttpConfig(**options)
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(partial(serve_http, probe_server, port=0, config=config))
        async with httpx.AsyncClient(timeout=10) as http:
            yield HttpPeer(http, handle.url, version), config
        nursery.cancel_scope.cancel()


SSE_OR_JSON = "application/json, text/event-stream"


@pytest.mark.parametrize(
    ("accept", "options"),
    [
        pytest.param("application/json", {}, id="json-reply"),
        pytest.param(SSE_OR_JSON, {"json_response": True}, id="json-reply-by-config"),
        pytest.param(SSE_OR_JSON, {"stateless": True}, id="stateless-sse"),
        pytest.param("application/json", {"stateless": True}, id="stateless-json"),
    ],
)
async def test_a_dropped_post_that_cannot_be_resumed_cancels_its_request(
    accept: str, options: dict[str, Any]
) -> None:
    tag = f"drop-{accept}-{options}"
    probe = PROBES[tag] = Probe()
    async with http_peer(**options) as (peer, config):
        if not config.stateless:
            await peer.initialize()
        await peer.post_and_drop(_message(1, "tools/call", _hold(tag)), accept, probe)
        with trio.fail_after(HANG_GUARD):
            await probe.cancelled.wait()


async def test_a_dropped_event_stream_without_an_event_id_cancels_its_request() -> None:
    """2025-06-18 streams are not primed: before its first event the client holds no
    id to resume from, so the dropped stream is gone for good."""
    probe = PROBES["unprimed"] = Probe()
    async with http_peer("2025-06-18") as (peer, _):
        await peer.initialize()
        await peer.post_and_drop(_message(1, "tools/call", _hold("unprimed")), SSE_OR_JSON, probe)
        with trio.fail_after(HANG_GUARD):
            await probe.cancelled.wait()


async def test_a_resumable_stream_not_resumed_within_the_window_cancels_its_request() -> None:
    """A primed (2025-11-25) stream may be resumed with Last-Event-ID; left alone
    longer than ``resume_window`` its request is cancelled."""
    probe = PROBES["primed"] = Probe()
    async with http_peer("2025-11-25", resume_window=0.5) as (peer, _):
        await peer.initialize()
        dropped_at = trio.current_time()
        await peer.post_and_drop(_message(1, "tools/call", _hold("primed")), SSE_OR_JSON, probe)
        with trio.fail_after(HANG_GUARD):
            await probe.cancelled.wait()
    assert probe.cancelled_at is not None
    assert probe.cancelled_at - dropped_at >= 0.5, "cancelled before the client could resume"
