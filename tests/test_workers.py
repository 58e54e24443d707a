"""``mcp-actors run --transport http --workers N``: N processes on one port, stopped gracefully."""

from __future__ import annotations

import os
import signal
import sys

import trio

from mcp_actors import open_client

from deployment import SCALE_OUT_SERVER, mcp_actors_run

WORKERS = ("--transport", "http", "--port", "0", "--workers", "2")


async def answering_pid(url: str) -> int:
    """The pid of the worker that answers a fresh connection."""
    async with open_client(url, era="modern") as client:
        result = await client.call_tool("whoami")
        return int(result.content[0].text)  # type: ignore[union-attr]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def pids_seen(url: str, wanted: int, attempts: int = 60) -> set[int]:
    seen: set[int] = set()
    for _ in range(attempts):
        seen.add(await answering_pid(url))
        if len(seen) >= wanted:
            break
    return seen


async def test_two_workers_share_one_port_and_both_answer() -> None:
    async with mcp_actors_run(SCALE_OUT_SERVER, *WORKERS) as running:
        pids = await pids_seen(running.url, 2)
        assert len(pids) == 2, pids
        assert running.process.pid not in pids  # the supervising process serves nothing


async def test_sigterm_lets_requests_in_progress_finish_then_every_worker_exits() -> None:
    async with mcp_actors_run(SCALE_OUT_SERVER, *WORKERS) as running:
        pids = await pids_seen(running.url, 2)
        results: list[str] = []

        async def slow_call() -> None:
            async with open_client(running.url, era="modern") as client:
                result = await client.call_tool("slow", {"seconds": 1.0})
                results.append(result.content[0].text)  # type: ignore[union-attr]

        async with trio.open_nursery() as nursery:
            nursery.start_soon(slow_call)
            await trio.sleep(0.4)  # the call is in progress on one worker
            running.process.send_signal(signal.SIGTERM)
        with trio.fail_after(15):
            code = await running.process.wait()
        assert results and results[0].startswith("slept 1s in ")
        assert code == 0
        assert not any(alive(pid) for pid in pids)


async def test_a_killed_worker_is_replaced() -> None:
    async with mcp_actors_run(SCALE_OUT_SERVER, *WORKERS) as running:
        first = await pids_seen(running.url, 2)
        victim = min(first)
        os.kill(victim, signal.SIGKILL)
        with trio.fail_after(20):
            while True:
                now = await pids_seen(running.url, 2, attempts=20)
                if len(now) == 2 and victim not in now:
                    break
                await trio.sleep(0.2)
        assert running.process.returncode is None


async def test_bad_shared_settings_and_an_unreachable_redis_are_one_line_each() -> None:
    command = [sys.executable, "-m", "mcp_actors.cli", "run", SCALE_OUT_SERVER, *WORKERS]
    bad_keys = {**os.environ, "MCP_ACTORS_SHARED_STATE_KEYS": '["ab"]'}
    refused = await trio.run_process(command, capture_stderr=True, check=False, env=bad_keys)
    assert refused.returncode == 2
    assert refused.stderr.decode().strip() == (
        "mcp-actors: bad settings for plugin 'shared': state_keys: each key is 64 hex digits"
        " (32 bytes)"
    )
    no_redis = [*command[:-2], "--redis-url", "redis://127.0.0.1:1/0"]  # one worker
    gone = await trio.run_process(no_redis, capture_stderr=True, check=False)
    assert gone.returncode == 2
    assert (
        gone.stderr.decode().strip() == "mcp-actors: Redis does not answer at redis://127.0.0.1:1/0"
    )


async def test_a_second_deployment_on_a_served_port_is_refused_like_a_single_worker() -> None:
    async with mcp_actors_run(SCALE_OUT_SERVER, *WORKERS) as running:
        port = running.url.split(":")[2].split("/")[0]
        refused_line = (
            f"mcp-actors: cannot listen on 127.0.0.1:{port}: address already in use"
            " (choose another --port, or --port 0 for any free one)"
        )
        for workers in ("2", "1"):
            command = [sys.executable, "-m", "mcp_actors.cli", "run", SCALE_OUT_SERVER]
            command += ["--transport", "http", "--port", port, "--workers", workers]
            with trio.fail_after(60):
                second = await trio.run_process(command, capture_stderr=True, check=False)
            assert (second.returncode, second.stderr.decode().strip()) == (4, refused_line)
        first = await pids_seen(running.url, 2)
        assert len(first) == 2 and running.process.returncode is None
