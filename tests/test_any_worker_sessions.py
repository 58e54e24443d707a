"""Legacy sessions on any worker: one session's requests spread over two workers that
share their sessions through a real ``redis-server``.

Two deployments: two ``mcp-actors run`` processes on their own ports behind nginx
round robin without affinity (``deploy/nginx-any-worker.conf``), and ``mcp-actors run
--workers 2`` on one port (its clients open a fresh connection per request, which the
kernel hands to either worker). Our client and the official Python SDK's each complete
every legacy feature — progress, sampling and elicitation inside a tool, a resource
subscription's updates and a list change on the GET stream, cancellation,
``logging/setLevel`` — in one session whose requests land on both workers: asserted
from the workers' own statistics (``sessionRequests`` of their health endpoints) where
each has a port of its own, and from the pid each worker puts in its answers.
"""

from __future__ import annotations

import gc
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Generator
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from functools import partial
from pathlib import Path
from typing import Any

import attrs
import httpx
import httpx2
import pytest
import trio
from mcp import Client as SdkClient
from mcp import types as mcp_types
from mcp.client.streamable_http import streamable_http_client
from test_http_sdk_interop import SDK_CLIENT_LEAKS

from mcp_actors import ClientHandlers, open_client
from mcp_actors.config import SettingsError
from mcp_actors.protocol import types as t
from mcp_actors.shared.settings import load_shared_settings
from mcp_actors.transports.http.client import open_streamable_http
from mcp_actors.transports.http.client_base import ResponseChunks
from mcp_actors.transports.http.sse import SSEDecoder

from deployment import (
    HEADERS,
    NGINX_ANY_WORKER_CONF,
    SCALE_OUT_SERVER,
    Running,
    events_of,
    mcp_actors_run,
    nginx,
    open_legacy_session,
    redis_server,
    request,
)

SHARE_SESSIONS = {"MCP_ACTORS_SHARED_SHARE_SESSIONS": "true"}
#: Calls made at most to see both workers answer (each lands on either).
ATTEMPTS = 40


@attrs.frozen
class Deployment:
    url: str
    #: The worker processes with ports of their own (empty for ``--workers 2``).
    workers: list[Running] = attrs.field(factory=list)
    #: The supervising process of ``--workers 2`` (None: separate workers).
    supervisor: Running | None = None

    def spread(self, pids: set[int]) -> bool:
        """Whether ``pids`` (of the workers that answered) are both workers."""
        if self.supervisor is None:
            return pids == {worker.process.pid for worker in self.workers}
        return len(pids) == 2 and self.supervisor.process.pid not in pids

    async def session_requests(self) -> list[int]:
        """Each worker's count of legacy session requests served, from its health endpoint
        (separate workers only: on one port a health check reaches either)."""
        counts = []
        async with httpx.AsyncClient() as http:
            for worker in self.workers:
                health = await http.get(worker.url.removesuffix("/mcp") + "/healthz")
                counts.append(health.json()["sessionRequests"])
        return counts


@asynccontextmanager
async def behind_nginx(tmp_path: Path) -> AsyncIterator[Deployment]:
    """Two workers on their own ports, nginx round robin (no affinity) in front."""
    async with redis_server() as redis_url, AsyncExitStack() as stack:
        workers = []
        for _ in range(2):
            arguments = ("--transport", "http", "--port", "0", "--redis-url", redis_url)
            running = mcp_actors_run(SCALE_OUT_SERVER, *arguments, env=SHARE_SESSIONS)
            workers.append(await stack.enter_async_context(running))
        ports = [int(worker.url.rsplit(":", 1)[1].split("/")[0]) for worker in workers]
        base = await stack.enter_async_context(nginx(tmp_path, ports, NGINX_ANY_WORKER_CONF))
        yield Deployment(base + "/mcp", workers=workers)


@asynccontextmanager
async def on_one_port(tmp_path: Path) -> AsyncIterator[Deployment]:
    """``mcp-actors run --workers 2``: two workers accepting on one port."""
    async with redis_server() as redis_url:
        arguments = ("--transport", "http", "--port", "0", "--workers", "2")
        running = mcp_actors_run(
            SCALE_OUT_SERVER, *arguments, "--redis-url", redis_url, env=SHARE_SESSIONS
        )
        async with running as supervisor:
            yield Deployment(supervisor.url, supervisor=supervisor)


DEPLOYMENTS = {"nginx": behind_nginx, "workers": on_one_port}


class FreshConnections(httpx.Auth):
    """Asks for every request's connection to close after it: on one port, each request
    is then accepted by either worker (keep-alive would pin them to one)."""

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["connection"] = "close"
        yield request


async def until_spread(deployment: Deployment, call: Callable[[], Awaitable[int]]) -> set[int]:
    """Make ``call`` (which returns the pid that answered) until both workers answered."""
    pids: set[int] = set()
    health = deployment.url.replace("/mcp", "/healthz")
    async with httpx.AsyncClient(timeout=30) as http:
        for attempt in range(ATTEMPTS):
            pids.add(await call())
            if deployment.spread(pids):
                break
            if attempt % 2:
                # A call may be an even number of requests (a POST and its resumption, a
                # POST and the answer to its sampling request): behind round robin its POST
                # would then land on the same worker every time. One more request shifts it.
                await http.get(health)
    assert deployment.spread(pids), pids
    return pids


async def wait_until(predicate: Callable[[], bool]) -> None:
    """Return once ``predicate()`` holds (a hang guard, not a timing assertion)."""
    with trio.fail_after(15):
        while not predicate():
            await trio.sleep(0.01)


def text(result: t.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, t.TextContent)
    return block.text


def sampled(params: Any) -> t.CreateMessageResult:
    return t.CreateMessageResult(
        role="assistant", content=t.TextContent(text="old pond"), model="m"
    )


def pid_after(answer: str, marker: str) -> int:
    return int(answer.rsplit(marker, 1)[1].rstrip(")"))


@pytest.mark.parametrize("kind", sorted(DEPLOYMENTS))
async def test_our_client_every_legacy_feature_across_workers(tmp_path: Path, kind: str) -> None:
    logs: list[str] = []
    changes: list[str] = []

    async def on_log(params: t.LoggingMessageParams) -> None:
        logs.append(str(params.data))

    async def elicit(params: t.ElicitParams) -> t.ElicitResult:
        return t.ElicitResult(action="accept", content={"ok": True})

    handlers = ClientHandlers(
        sampling=sampled, elicitation=elicit, on_log=on_log, on_list_changed=changes.append
    )
    auth = FreshConnections() if kind == "workers" else None
    async with DEPLOYMENTS[kind](tmp_path) as deployment:
        async with open_client(
            deployment.url, era="legacy", handlers=handlers, auth=auth
        ) as client:

            async def whoami() -> int:
                return int(text(await client.call_tool("whoami")))

            await until_spread(deployment, whoami)
            await client.set_logging_level("warning")  # lands on one worker, applies on both

            async def chatter() -> int:
                return int(text(await client.call_tool("chatter")))

            await until_spread(deployment, chatter)
            await wait_until(lambda: len({entry.split(" from ")[1] for entry in logs}) == 2)
            assert {entry.split(" from ")[0] for entry in logs} == {"warning"}, logs
            logs.clear()

            async def shout() -> int:  # a log message unrelated to the call: the GET stream's
                return int(text(await client.call_tool("shout", {"text": "hey"})))

            await until_spread(deployment, shout)
            await wait_until(lambda: len({entry.split(" from ")[1] for entry in logs}) == 2)
            assert {entry.split(" from ")[0] for entry in logs} == {"hey"}, logs

            reported: list[float] = []

            async def steps() -> int:
                reported.clear()
                answer = await client.call_tool(
                    "steps", {"count": 3}, on_progress=lambda p, total, m: reported.append(p)
                )
                assert reported[-1] == 3  # reports may coalesce; the last one arrives
                return int(text(answer))

            await until_spread(deployment, steps)

            # A call and the client's answer to its question are two POSTs: a third one
            # after each makes the calls alternate between workers behind round robin.
            async def haiku() -> int:
                answer = text(await client.call_tool("haiku", {"topic": "frogs"}))
                assert answer.startswith("old pond (asked by ")
                await whoami()
                return pid_after(answer, "(asked by ")

            async def book() -> int:
                answer = text(await client.call_tool("book", {"room": "A"}))
                assert answer.startswith("A: confirmed=True by ")
                await whoami()
                return pid_after(answer, " by ")

            await until_spread(deployment, haiku)
            await until_spread(deployment, book)

            async with client.subscribe("note://a") as updates:

                async def touch() -> int:
                    pid = int(text(await client.call_tool("touch", {"uri": "note://a"})))
                    with trio.fail_after(15):
                        assert (await updates.receive()).uri == "note://a"
                    return pid

                await until_spread(deployment, touch)

            await client.call_tool("grow")
            await wait_until(lambda: "notifications/tools/list_changed" in changes)

            for attempt in range(4):
                marker = tmp_path / f"cancelled-{attempt}"
                with trio.move_on_after(1):  # the client cancels: notifications/cancelled
                    await client.call_tool("hold", {"marker": str(marker)})
                await wait_until(marker.exists)
        if deployment.workers:
            assert all(count >= 5 for count in await deployment.session_requests())


@SDK_CLIENT_LEAKS
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
@pytest.mark.parametrize("kind", sorted(DEPLOYMENTS))
async def test_sdk_client_every_legacy_feature_across_workers(tmp_path: Path, kind: str) -> None:
    """As above, with the official Python SDK's client pinned to the legacy era."""
    notices: list[Any] = []
    logs: list[str] = []

    async def sample(context: Any, params: Any) -> Any:
        return mcp_types.CreateMessageResult(
            role="assistant", content=mcp_types.TextContent(type="text", text="old pond"), model="m"
        )

    async def elicit(context: Any, params: Any) -> Any:
        return mcp_types.ElicitResult(action="accept", content={"ok": True})

    async def on_message(message: Any) -> None:
        if not isinstance(message, Exception):
            notices.append(message)

    async def on_log(params: Any) -> None:
        logs.append(str(params.data))

    def notified(method: str) -> int:
        return sum(1 for notice in notices if notice.method == method)

    def sdk_text(result: Any) -> str:
        return str(result.content[0].text)

    headers = {"connection": "close"} if kind == "workers" else None
    async with (
        DEPLOYMENTS[kind](tmp_path) as deployment,
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=None)) as http,
    ):
        async with SdkClient(
            streamable_http_client(deployment.url, http_client=http),
            mode="legacy",
            sampling_callback=sample,
            elicitation_callback=elicit,
            message_handler=on_message,
            logging_callback=on_log,
        ) as client:
            assert client.protocol_version == "2025-11-25"

            async def whoami() -> int:
                return int(sdk_text(await client.call_tool("whoami", {})))

            await until_spread(deployment, whoami)
            await client.set_logging_level("warning")  # deprecated in the modern era only

            async def chatter() -> int:
                return int(sdk_text(await client.call_tool("chatter", {})))

            await until_spread(deployment, chatter)
            await wait_until(lambda: len({entry.split(" from ")[1] for entry in logs}) == 2)
            assert {entry.split(" from ")[0] for entry in logs} == {"warning"}, logs
            logs.clear()

            async def shout() -> int:  # a log message unrelated to the call: the GET stream's
                return int(sdk_text(await client.call_tool("shout", {"text": "hey"})))

            await until_spread(deployment, shout)
            await wait_until(lambda: len({entry.split(" from ")[1] for entry in logs}) == 2)
            assert {entry.split(" from ")[0] for entry in logs} == {"hey"}, logs

            reported: list[float] = []

            async def on_progress(
                progress: float, total: float | None, message: str | None
            ) -> None:
                reported.append(progress)

            async def steps() -> int:
                reported.clear()
                answer = await client.call_tool(
                    "steps", {"count": 3}, progress_callback=on_progress
                )
                await wait_until(lambda: bool(reported) and reported[-1] == 3)
                return int(sdk_text(answer))

            await until_spread(deployment, steps)

            async def haiku() -> int:
                answer = sdk_text(await client.call_tool("haiku", {"topic": "frogs"}))
                assert answer.startswith("old pond (asked by ")
                await whoami()
                return pid_after(answer, "(asked by ")

            async def book() -> int:
                answer = sdk_text(await client.call_tool("book", {"room": "A"}))
                assert answer.startswith("A: confirmed=True by ")
                await whoami()
                return pid_after(answer, " by ")

            await until_spread(deployment, haiku)
            await until_spread(deployment, book)

            await client.subscribe_resource("note://a")

            async def touch() -> int:
                seen = notified("notifications/resources/updated")
                pid = int(sdk_text(await client.call_tool("touch", {"uri": "note://a"})))
                await wait_until(lambda: notified("notifications/resources/updated") > seen)
                return pid

            await until_spread(deployment, touch)
            await client.call_tool("grow", {})
            await wait_until(lambda: notified("notifications/tools/list_changed") >= 1)

            for attempt in range(4):
                marker = tmp_path / f"cancelled-{attempt}"
                with trio.move_on_after(1):
                    await client.call_tool("hold", {"marker": str(marker)})
                await wait_until(marker.exists)
        if deployment.workers:
            assert all(count >= 5 for count in await deployment.session_requests())
    gc.collect()  # the SDK's abandoned generators are reported here (SDK_CLIENT_LEAKS)


async def test_delete_on_one_worker_ends_the_session_on_both(tmp_path: Path) -> None:
    """A DELETE on one worker cancels what the session runs on the other, and both
    answer 404 for it from then on."""
    marker = tmp_path / "cancelled"
    async with behind_nginx(tmp_path) as deployment, httpx.AsyncClient(timeout=30) as http:
        first, second = (worker.url for worker in deployment.workers)
        session = await open_legacy_session(http, first, HEADERS)
        headers = {**HEADERS, **session}
        call = request(2, "tools/call", {"name": "whoami", "arguments": {}})
        for url in (second, first):  # the other worker takes the session up, then its maker
            answered = await http.post(url, content=call, headers=headers)
            assert answered.status_code == 200, answered.text
        hold = request(3, "tools/call", {"name": "hold", "arguments": {"marker": str(marker)}})
        async with trio.open_nursery() as nursery:
            # The call runs on the first worker until cancelled.
            nursery.start_soon(partial(http.post, first, content=hold, headers=headers))
            await wait_until(tmp_path.joinpath("cancelled.started").exists)
            ended = await http.delete(second, headers=headers)
            assert ended.status_code == 200, ended.text
            await wait_until(marker.exists)
        assert int(marker.read_text()) == deployment.workers[0].process.pid
        for url in (first, second):
            gone = await http.post(url, content=call, headers=headers)
            assert gone.status_code == 404, gone.text


async def test_a_dropped_stream_resumes_on_the_other_worker(tmp_path: Path) -> None:
    """A POST's event stream on one worker breaks before its answer; the client resumes
    it with ``Last-Event-ID`` on the other worker, which carries the rest from the
    shared events as the first worker's actor writes them."""
    async with behind_nginx(tmp_path) as deployment, httpx.AsyncClient(timeout=30) as http:
        first, second = (worker.url for worker in deployment.workers)
        session = await open_legacy_session(http, first, HEADERS)
        headers = {**HEADERS, **session}
        call = request(2, "tools/call", {"name": "slow", "arguments": {"seconds": 1}})
        decoder = SSEDecoder()
        async with http.stream("POST", first, content=call, headers=headers) as response:
            assert response.status_code == 200
            chunks, primed = ResponseChunks(response), []
            try:
                while not primed:
                    chunk = await chunks.next()
                    assert chunk is not None
                    primed = [event for event in decoder.feed(chunk) if event.id]
            finally:
                await chunks.aclose()  # the connection drops with an event id in hand
        assert primed[0].data == b""  # the priming event: the answer is still to come
        resume = {**headers, "accept": "text/event-stream", "last-event-id": primed[-1].id}
        async with http.stream("GET", second, headers=resume) as resumed:
            assert resumed.status_code == 200
            events = await events_of(resumed)
        answer = json.loads(events[-1].data)
        assert answer["id"] == 2
        pid = deployment.workers[0].process.pid
        assert answer["result"]["content"][0]["text"] == f"slept 1s in {pid}"


async def test_a_dropped_get_stream_resumes_on_the_other_worker(tmp_path: Path) -> None:
    """The GET stream breaks on one worker and is resumed on the other: a list change
    and a resource update made on either worker after that reach the client on it."""
    async with behind_nginx(tmp_path) as deployment, httpx.AsyncClient(timeout=30) as http:
        first, second = (worker.url for worker in deployment.workers)
        session = await open_legacy_session(http, first, HEADERS)
        headers = {**HEADERS, **session}
        get_headers = {**headers, "accept": "text/event-stream"}
        async with http.stream("GET", first, headers=get_headers) as response:
            chunks, primed = ResponseChunks(response), []
            try:
                while not primed:
                    chunk = await chunks.next()
                    assert chunk is not None
                    primed = [event for event in SSEDecoder().feed(chunk) if event.id]
            finally:
                await chunks.aclose()  # the GET stream's connection drops
        subscribe = request(2, "resources/subscribe", {"uri": "note://b"})
        assert (await http.post(second, content=subscribe, headers=headers)).status_code == 200
        resume = {**get_headers, "last-event-id": primed[-1].id}
        async with http.stream("GET", second, headers=resume) as resumed:
            assert resumed.status_code == 200
            chunks, decoder, methods = ResponseChunks(resumed), SSEDecoder(), []
            try:
                made = [(first, "grow"), (second, "touch"), (first, "touch"), (second, "grow")]
                for number, (url, name) in enumerate(made, start=3):  # each grows once
                    arguments = {} if name == "grow" else {"uri": "note://b"}
                    call = request(number, "tools/call", {"name": name, "arguments": arguments})
                    assert (await http.post(url, content=call, headers=headers)).is_success
                    wanted = "list_changed" if name == "grow" else "resources/updated"
                    with trio.fail_after(15):
                        while not any(wanted in method for method in methods):
                            chunk = await chunks.next()
                            assert chunk is not None
                            events = decoder.feed(chunk)
                            methods += [json.loads(e.data)["method"] for e in events if e.data]
                    methods.clear()
            finally:
                await chunks.aclose()


@attrs.define
class Drops:
    """How many event streams a :func:`dropping` transport broke."""

    count: int = 0


def dropping(http: Any, tool: str, drops: Drops, *, fresh: bool) -> Any:
    """An ``http.AsyncBaseTransport`` (``http``: httpx, or the SDK's httpx2) that breaks
    the event stream of every POST calling ``tool`` after its first event, as a dropped
    connection would (the client then resumes it with ``Last-Event-ID``); ``fresh``: a
    connection per request."""
    marker = b'"name":"%s"' % tool.encode()

    class Breaking(http.AsyncByteStream):  # type: ignore[misc,name-defined]
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        async def __aiter__(self) -> AsyncIterator[bytes]:
            chunks = self._inner.__aiter__()
            async for chunk in chunks:
                yield chunk
                if b"\n\n" in chunk:
                    break
            # Close the connection, then step the client's chain of generators to its end
            # (as ResponseChunks.aclose does): the read error finishes every one of them.
            await self._inner.aclose()
            with trio.move_on_after(1), suppress(Exception):
                async for _ in chunks:
                    pass
            raise http.ReadError("the test dropped the connection")

        async def aclose(self) -> None:
            await self._inner.aclose()

    class Dropping(http.AsyncBaseTransport):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            self._inner = http.AsyncHTTPTransport()

        async def handle_async_request(self, request: Any) -> Any:
            if fresh:
                request.headers["connection"] = "close"
            body = await request.aread()
            response = await self._inner.handle_async_request(request)
            if request.method != "POST" or marker not in body:
                return response
            drops.count += 1
            broken = Breaking(response.stream)
            return http.Response(response.status_code, headers=response.headers, stream=broken)

        async def aclose(self) -> None:
            await self._inner.aclose()

    return Dropping()


@pytest.mark.parametrize("kind", sorted(DEPLOYMENTS))
async def test_our_client_resumes_dropped_streams_on_any_worker(tmp_path: Path, kind: str) -> None:
    drops = Drops()
    transport = dropping(httpx, "slow", drops, fresh=kind == "workers")
    timeout = httpx.Timeout(30, read=None)
    async with (
        DEPLOYMENTS[kind](tmp_path) as deployment,
        httpx.AsyncClient(transport=transport, timeout=timeout) as http,
        open_streamable_http(deployment.url, http_client=http) as stream,
        open_client(stream, era="legacy") as client,
    ):
        calls = 0

        async def slow() -> int:
            nonlocal calls
            calls += 1
            answer = text(await client.call_tool("slow", {"seconds": 0.5}))
            assert answer.startswith("slept 0.5s in ")
            # A call and the GET resuming it are two requests: behind round robin, every
            # POST would land on one worker; a request after every other call alternates.
            if calls % 2:
                await client.call_tool("whoami")
            return pid_after(answer, " in ")

        await until_spread(deployment, slow)
        assert stream.reconnects >= drops.count >= 2


@SDK_CLIENT_LEAKS
@pytest.mark.parametrize("kind", sorted(DEPLOYMENTS))
async def test_sdk_client_resumes_dropped_streams_on_any_worker(tmp_path: Path, kind: str) -> None:
    drops = Drops()
    transport = dropping(httpx2, "slow", drops, fresh=kind == "workers")
    timeout = httpx2.Timeout(30, read=None)
    async with (
        DEPLOYMENTS[kind](tmp_path) as deployment,
        httpx2.AsyncClient(transport=transport, timeout=timeout) as http,
    ):
        transport_streams = streamable_http_client(deployment.url, http_client=http)
        async with SdkClient(transport_streams, mode="legacy") as client:
            calls = 0

            async def slow() -> int:
                nonlocal calls
                calls += 1
                result = await client.call_tool("slow", {"seconds": 0.5})
                answer = str(result.content[0].text)  # type: ignore[union-attr]
                assert answer.startswith("slept 0.5s in ")
                if calls % 2:  # alternates the POSTs' workers (as above)
                    await client.call_tool("whoami", {})
                return pid_after(answer, " in ")

            await until_spread(deployment, slow)
        assert drops.count >= 2
    gc.collect()  # the SDK's abandoned generators are reported here (SDK_CLIENT_LEAKS)


async def test_a_full_directory_refuses_new_sessions_until_one_ends(tmp_path: Path) -> None:
    """``max_shared_sessions`` bounds the deployment's records: an ``initialize`` beyond
    is answered 503 with ``Retry-After``, and a DELETE makes room again."""
    env = {**SHARE_SESSIONS, "MCP_ACTORS_SHARED_MAX_SHARED_SESSIONS": "1"}
    async with redis_server() as redis_url, httpx.AsyncClient(timeout=30) as http:
        arguments = ("--transport", "http", "--port", "0", "--redis-url", redis_url)
        async with mcp_actors_run(SCALE_OUT_SERVER, *arguments, env=env) as worker:
            first = await open_legacy_session(http, worker.url, HEADERS)
            init = {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            }
            body = request(1, "initialize", init)
            refused = await http.post(worker.url, content=body, headers=HEADERS)
            assert refused.status_code == 503
            assert refused.headers["retry-after"] == "5"
            assert "mcp-session-id" not in refused.headers
            ended = await http.delete(worker.url, headers={**HEADERS, **first})
            assert ended.status_code == 200
            again = await http.post(worker.url, content=body, headers=HEADERS)
            assert again.status_code == 200, again.text


@pytest.mark.parametrize(
    ("name", "value"),
    [("SHARE_SESSIONS", "maybe"), ("MAX_SHARED_SESSIONS", "0"), ("SESSION_TTL_SECONDS", "-1")],
)
def test_shared_session_settings_are_parsed_strictly(name: str, value: str) -> None:
    given = {
        "MCP_ACTORS_SHARED_SHARE_SESSIONS": "true",
        "MCP_ACTORS_SHARED_MAX_SHARED_SESSIONS": "10",
        "MCP_ACTORS_SHARED_SESSION_TTL_SECONDS": "60",
    }
    settings = load_shared_settings(environ=given)
    assert (settings.share_sessions, settings.max_shared_sessions) == (True, 10)
    assert settings.session_ttl_seconds == 60.0
    with pytest.raises(SettingsError, match=name.lower()):
        load_shared_settings(environ={**given, f"MCP_ACTORS_SHARED_{name}": value})
