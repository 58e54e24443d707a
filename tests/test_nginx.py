"""Legacy sessions behind the shipped nginx configuration (``deploy/nginx.conf``).

Two workers on their own ports (session-id prefixes ``w1.`` and ``w2.``), one Redis,
nginx in front: every request of a legacy session reaches the worker that made it;
new sessions spread over both; a session whose worker died gets 404 and our client
starts a new one on the other worker.
"""

from __future__ import annotations

import os
import signal
from contextlib import AsyncExitStack
from pathlib import Path

import trio

from mcp_actors import open_client
from mcp_actors.protocol import types as t

from deployment import SCALE_OUT_SERVER, mcp_actors_run, nginx, redis_server


def text(result: t.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, t.TextContent)
    return block.text


async def test_legacy_sessions_stay_on_their_worker_behind_nginx(tmp_path: Path) -> None:
    async with redis_server() as redis_url, AsyncExitStack() as stack:
        workers = []
        for tag in ("w1.", "w2."):
            arguments = ("--transport", "http", "--port", "0", "--session-prefix", tag)
            running = mcp_actors_run(SCALE_OUT_SERVER, *arguments, "--redis-url", redis_url)
            workers.append(await stack.enter_async_context(running))
        ports = [int(worker.url.rsplit(":", 1)[1].split("/")[0]) for worker in workers]
        base = await stack.enter_async_context(nginx(tmp_path, ports))
        url = base + "/mcp"

        pids_by_session: list[set[int]] = []
        for _ in range(8):
            async with open_client(url, era="legacy") as client:
                pids = {int(text(await client.call_tool("whoami"))) for _ in range(4)}
                pids_by_session.append(pids)
        assert all(len(pids) == 1 for pids in pids_by_session), pids_by_session
        worker_pids = {worker.process.pid for worker in workers}
        assert set().union(*pids_by_session) == worker_pids  # both workers made sessions

        async with open_client(url, era="legacy") as client:
            first = int(text(await client.call_tool("whoami")))
            os.kill(first, signal.SIGKILL)
            with trio.fail_after(10):
                await next(w for w in workers if w.process.pid == first).process.wait()
            again = int(text(await client.call_tool("whoami")))  # 404 → a new session
        assert again != first and again in worker_pids


async def test_the_documented_nginx_command_serves_modern_and_legacy_calls(
    tmp_path: Path,
) -> None:
    """docs/deployment.md's nginx command, run as written on the shipped file (its ports made
    free ones)."""
    async with AsyncExitStack() as stack:
        workers = []
        for tag in ("w1.", "w2."):
            arguments = ("--transport", "http", "--port", "0", "--session-prefix", tag)
            workers.append(
                await stack.enter_async_context(mcp_actors_run(SCALE_OUT_SERVER, *arguments))
            )
        ports = [int(worker.url.rsplit(":", 1)[1].split("/")[0]) for worker in workers]
        url = await stack.enter_async_context(nginx(tmp_path, ports)) + "/mcp"
        worker_pids = {worker.process.pid for worker in workers}
        for era in ("modern", "legacy"):
            async with open_client(url, era=era) as client:  # type: ignore[arg-type]
                assert int(text(await client.call_tool("whoami"))) in worker_pids
                large = await client.call_tool("touch", {"uri": "x" * 200_000})  # > nginx buffers
                assert int(text(large)) in worker_pids
