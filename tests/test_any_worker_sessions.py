"""Legacy sessions on any worker: two ``mcp-actors run`` processes sharing their sessions
through a real ``redis-server``, behind nginx round robin without affinity
(``deploy/nginx-any-worker.conf``).

Every request of one session may land on either worker; each worker serves it with
its own actor of the session, rebuilt from the record in Redis. The spread is asserted
from the workers' own statistics (``sessionRequests`` of their health endpoints).
"""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import httpx
import pytest
import trio
from mcp import Client as SdkClient
from mcp import types as mcp_types
from test_http_sdk_interop import SDK_CLIENT_LEAKS

from mcp_actors import ClientHandlers, open_client
from mcp_actors.protocol import types as t

from deployment import (
    HEADERS,
    NGINX_ANY_WORKER_CONF,
    SCALE_OUT_SERVER,
    Running,
    mcp_actors_run,
    nginx,
    redis_server,
    request,
)

SHARE_SESSIONS = {"MCP_ACTORS_SHARED_SHARE_SESSIONS": "true"}


@attrs.frozen
class Deployment:
    url: str
    workers: list[Running]

    @property
    def pids(self) -> set[int]:
        return {worker.process.pid for worker in self.workers}

    async def session_requests(self) -> list[int]:
        """Each worker's count of legacy session requests served, from its health endpoint."""
        counts = []
        async with httpx.AsyncClient() as http:
            for worker in self.workers:
                health = await http.get(worker.url.removesuffix("/mcp") + "/healthz")
                counts.append(health.json()["sessionRequests"])
        return counts


@asynccontextmanager
async def any_worker_deployment(tmp_path: Path) -> AsyncIterator[Deployment]:
    async with redis_server() as redis_url, AsyncExitStack() as stack:
        workers = []
        for _ in range(2):
            arguments = ("--transport", "http", "--port", "0", "--redis-url", redis_url)
            running = mcp_actors_run(SCALE_OUT_SERVER, *arguments, env=SHARE_SESSIONS)
            workers.append(await stack.enter_async_context(running))
        ports = [int(worker.url.rsplit(":", 1)[1].split("/")[0]) for worker in workers]
        base = await stack.enter_async_context(nginx(tmp_path, ports, NGINX_ANY_WORKER_CONF))
        yield Deployment(base + "/mcp", workers)


def text(result: t.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, t.TextContent)
    return block.text


async def test_our_client_one_session_on_both_workers(tmp_path: Path) -> None:
    logs: list[str] = []

    async def on_log(params: t.LoggingMessageParams) -> None:
        logs.append(str(params.data))

    async with any_worker_deployment(tmp_path) as deployment:
        handlers = ClientHandlers(on_log=on_log)
        async with open_client(deployment.url, era="legacy", handlers=handlers) as client:
            pids = {int(text(await client.call_tool("whoami"))) for _ in range(6)}
            assert pids == deployment.pids  # one session, served by both
            await client.set_logging_level("warning")  # lands on one worker, applies on both
            chatted = {int(text(await client.call_tool("chatter"))) for _ in range(6)}
            assert chatted == deployment.pids
            with trio.fail_after(10):
                while len(logs) < 6:
                    await trio.sleep(0.01)
        assert {entry.split(" from ")[0] for entry in logs} == {"warning"}, logs
        assert {int(entry.split(" from ")[1]) for entry in logs} == deployment.pids
        assert all(count >= 3 for count in await deployment.session_requests())


@SDK_CLIENT_LEAKS
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_sdk_client_one_session_on_both_workers(tmp_path: Path) -> None:
    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params.data)

    async with any_worker_deployment(tmp_path) as deployment:
        async with SdkClient(deployment.url, mode="legacy", logging_callback=on_log) as client:
            assert client.protocol_version == "2025-11-25"
            pids = set()
            for _ in range(6):
                result = await client.call_tool("whoami", {})
                pids.add(int(result.content[0].text))  # type: ignore[union-attr]
            assert pids == deployment.pids
            await client.set_logging_level("warning")  # deprecated in the modern era only
            for _ in range(6):
                await client.call_tool("chatter", {})
            with trio.fail_after(10):
                while len(logs) < 6:
                    await trio.sleep(0.01)
        assert {entry.split(" from ")[0] for entry in logs} == {"warning"}, logs
        assert {int(entry.split(" from ")[1]) for entry in logs} == deployment.pids
        assert all(count >= 3 for count in await deployment.session_requests())
    gc.collect()  # the SDK's abandoned generators are reported here (SDK_CLIENT_LEAKS)


async def test_delete_on_one_worker_ends_the_session_on_both(tmp_path: Path) -> None:
    async with any_worker_deployment(tmp_path) as deployment, httpx.AsyncClient() as http:
        first, second = (worker.url for worker in deployment.workers)
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        opened = await http.post(first, content=request(1, "initialize", init), headers=HEADERS)
        assert opened.status_code == 200, opened.text
        session = {
            "mcp-session-id": opened.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-11-25",
        }
        headers = {**HEADERS, **session}
        call = request(2, "tools/call", {"name": "whoami", "arguments": {}})
        for url in (second, first):  # the other worker takes the session up, then its maker
            answered = await http.post(url, content=call, headers=headers)
            assert answered.status_code == 200, answered.text
        ended = await http.delete(second, headers=headers)
        assert ended.status_code == 200, ended.text
        for url in (first, second):
            gone = await http.post(url, content=call, headers=headers)
            assert gone.status_code == 404, gone.text


async def wait_until(predicate: Callable[[], bool]) -> None:
    """Return once ``predicate()`` holds (a hang guard, not a timing assertion)."""
    with trio.fail_after(15):
        while not predicate():
            await trio.sleep(0.01)


async def test_our_client_every_legacy_feature_across_workers(tmp_path: Path) -> None:
    """Progress, sampling and elicitation inside tools, a subscription's updates and a
    list change on the GET stream, cancellation: each request may land on either
    worker, and whatever must reach a live actor elsewhere is routed to it."""
    changes: list[str] = []

    async def sample(params: t.CreateMessageParams) -> t.CreateMessageResult:
        return t.CreateMessageResult(
            role="assistant", content=t.TextContent(text="old pond"), model="m"
        )

    async def elicit(params: t.ElicitParams) -> t.ElicitResult:
        return t.ElicitResult(action="accept", content={"ok": True})

    handlers = ClientHandlers(sampling=sample, elicitation=elicit, on_list_changed=changes.append)
    async with any_worker_deployment(tmp_path) as deployment:
        async with open_client(deployment.url, era="legacy", handlers=handlers) as client:
            progress: list[float] = []
            for _ in range(4):
                progress.clear()
                steps = await client.call_tool(
                    "steps", {"count": 3}, on_progress=lambda p, total, m: progress.append(p)
                )
                assert int(text(steps)) in deployment.pids
                assert progress[-1] == 3  # reports may coalesce; the last one arrives
            # A call and the client's answer to its question are two POSTs: a third one
            # after each makes the calls alternate between the workers (round robin).
            asked, booked = set(), set()
            for _ in range(4):
                asked.add(text(await client.call_tool("haiku", {"topic": "frogs"})))
                booked.add(text(await client.call_tool("book", {"room": "A"})))
                await client.call_tool("whoami")
            assert {answer.split(" (asked by ")[0] for answer in asked} == {"old pond"}
            assert {int(a.split(" (asked by ")[1].rstrip(")")) for a in asked} == deployment.pids
            assert {b.split(" by ")[0] for b in booked} == {"A: confirmed=True"}
            assert {int(b.split(" by ")[1]) for b in booked} == deployment.pids

            async with client.subscribe("note://a") as updates:
                touched = set()
                for _ in range(4):  # published from either worker
                    touched.add(int(text(await client.call_tool("touch", {"uri": "note://a"}))))
                    with trio.fail_after(15):
                        update = await updates.receive()
                    assert update.uri == "note://a"
                assert touched == deployment.pids

            grown = int(text(await client.call_tool("grow")))
            await wait_until(lambda: "notifications/tools/list_changed" in changes)
            assert grown in deployment.pids

            for attempt in range(4):
                marker = tmp_path / f"cancelled-{attempt}"
                with trio.move_on_after(1):  # the client cancels the call: notifications/cancelled
                    await client.call_tool("hold", {"marker": str(marker)})
                await wait_until(marker.exists)
        assert all(count >= 10 for count in await deployment.session_requests())


@SDK_CLIENT_LEAKS
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_sdk_client_every_legacy_feature_across_workers(tmp_path: Path) -> None:
    """As above, with the official Python SDK's client pinned to the legacy era."""
    notices: list[Any] = []

    async def sample(context: Any, params: Any) -> Any:
        return mcp_types.CreateMessageResult(
            role="assistant", content=mcp_types.TextContent(type="text", text="old pond"), model="m"
        )

    async def elicit(context: Any, params: Any) -> Any:
        return mcp_types.ElicitResult(action="accept", content={"ok": True})

    async def on_message(message: Any) -> None:
        if not isinstance(message, Exception):
            notices.append(message)

    def notified(method: str) -> int:
        return sum(1 for notice in notices if notice.method == method)

    def sdk_text(result: Any) -> str:
        return str(result.content[0].text)

    async with any_worker_deployment(tmp_path) as deployment:
        async with SdkClient(
            deployment.url,
            mode="legacy",
            sampling_callback=sample,
            elicitation_callback=elicit,
            message_handler=on_message,
        ) as client:
            reported: list[float] = []

            async def on_progress(
                progress: float, total: float | None, message: str | None
            ) -> None:
                reported.append(progress)

            for _ in range(4):
                reported.clear()
                steps = await client.call_tool("steps", {"count": 3}, progress_callback=on_progress)
                assert int(sdk_text(steps)) in deployment.pids
                await wait_until(lambda: bool(reported) and reported[-1] == 3)
            asked, booked = set(), set()
            for _ in range(4):
                asked.add(sdk_text(await client.call_tool("haiku", {"topic": "frogs"})))
                booked.add(sdk_text(await client.call_tool("book", {"room": "A"})))
                await client.call_tool("whoami", {})
            assert {int(a.split(" (asked by ")[1].rstrip(")")) for a in asked} == deployment.pids
            assert {b.split(" by ")[0] for b in booked} == {"A: confirmed=True"}
            assert {int(b.split(" by ")[1]) for b in booked} == deployment.pids

            await client.subscribe_resource("note://a")
            touched = set()
            for count in range(1, 5):
                touched.add(int(sdk_text(await client.call_tool("touch", {"uri": "note://a"}))))
                await wait_until(
                    lambda count=count: notified("notifications/resources/updated") >= count
                )
            assert touched == deployment.pids
            await client.call_tool("grow", {})
            await wait_until(lambda: notified("notifications/tools/list_changed") >= 1)

            for attempt in range(4):
                marker = tmp_path / f"cancelled-{attempt}"
                with trio.move_on_after(1):
                    await client.call_tool("hold", {"marker": str(marker)})
                await wait_until(marker.exists)
        assert all(count >= 10 for count in await deployment.session_requests())
    gc.collect()  # the SDK's abandoned generators are reported here (SDK_CLIENT_LEAKS)
