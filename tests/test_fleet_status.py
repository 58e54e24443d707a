"""``mcp-actors status REDIS_URL``: two real workers, what each holds, and one killed.

Workers A and B (``mcp-actors run --redis-url``, heartbeat 0.2 s) share a real
``redis-server``. A client holds a legacy session and a running task on A, and a
``subscriptions/listen`` stream and an MRTR continuation (a question it does not
answer yet) on B; ``mcp-actors status`` must show each worker alive with exactly
those, the task among the records by state, and Redis answering. Then B is killed
(SIGKILL: no goodbye) and status shows it dead. Workers report each heartbeat, so
the test reads status until it shows what is expected (bounded by a hang guard).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

import trio

from mcp_actors import ClientHandlers, open_client
from mcp_actors.protocol import types as t

from deployment import SCALE_OUT_SERVER, free_port, mcp_actors_run, redis_server

# A worker is alive while its key lives: three heartbeats. One second each keeps a
# worker starved of CPU by a loaded machine alive, and a killed one is dead in 3 s.
HEARTBEAT = {"MCP_ACTORS_SHARED_HEARTBEAT_SECONDS": "1.0"}
WITH_TASKS = t.ClientCapabilities(extensions={t.TASKS_EXTENSION: {}})


async def status(*arguments: str) -> str:
    command = [sys.executable, "-m", "mcp_actors.cli", "status", *arguments]
    done = await trio.run_process(command, capture_stdout=True, capture_stderr=True)
    return done.stdout.decode()


async def status_until(url: str, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """``status --json`` once it shows what ``wanted`` accepts."""
    with trio.fail_after(60):
        while not wanted(found := json.loads(await status(url, "--json"))):
            await trio.sleep(0.1)
    return found


def by_pid(found: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {worker["pid"]: worker for worker in found["workers"]}


async def test_status_shows_each_worker_with_what_it_holds_and_a_killed_one_dead() -> None:
    asked = trio.Event()

    async def wait_for_ever(params: t.ElicitParams) -> t.ElicitResult:
        asked.set()  # the question is out: B parked the handler that asked it
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    async with redis_server() as url, AsyncExitStack() as stack:
        a, b = [
            await stack.enter_async_context(
                mcp_actors_run(
                    SCALE_OUT_SERVER,
                    "--transport",
                    "http",
                    "--port",
                    "0",
                    "--redis-url",
                    url,
                    env=HEARTBEAT,
                )
            )
            for _ in range(2)
        ]
        await stack.enter_async_context(open_client(a.url, era="legacy"))
        on_a = await stack.enter_async_context(
            open_client(a.url, era="modern", capabilities=WITH_TASKS)
        )
        started = await on_a.start_tool_task("slow", {"seconds": 60})
        on_b = await stack.enter_async_context(
            open_client(b.url, era="modern", handlers=ClientHandlers(elicitation=wait_for_ever))
        )
        listening = await stack.enter_async_context(on_b.listen(tools_list_changed=True))
        await listening.wait_acknowledged()
        nursery = await stack.enter_async_context(trio.open_nursery())  # exits first
        nursery.start_soon(on_b.call_tool, "book", {"room": "blue"})
        with trio.fail_after(30):
            await asked.wait()

        def holding(found: dict[str, Any]) -> bool:
            workers = by_pid(found)
            if set(workers) != {a.process.pid, b.process.pid}:
                return False
            on_a, on_b = workers[a.process.pid], workers[b.process.pid]
            return (
                (on_a["sessions"], on_a["tasks_running"], on_b["listen_streams"])
                == (
                    1,
                    1,
                    1,
                )
                and on_b["continuations_parked"] == 1
                and on_a["alive"]
                and on_b["alive"]
            )

        found = await status_until(url, holding)
        assert all(worker["alive"] for worker in found["workers"])
        assert found["tasks"]["by_state"] == {"working": 1}
        assert found["redis"]["mode"] == "standalone" and found["redis"]["version"]
        worker_a, worker_b = by_pid(found)[a.process.pid], by_pid(found)[b.process.pid]
        assert (worker_a["listen_streams"], worker_a["continuations_parked"]) == (0, 0)
        assert (worker_b["sessions"], worker_b["tasks_running"]) == (0, 0)

        table = await status(url)
        lines = table.splitlines()
        assert lines[0].startswith(f"Redis {url}: answers in ")
        assert lines[1] == "workers: 2 alive, 0 dead"
        header = lines[2].split()
        assert header[:4] == ["worker", "host", "pid", "state"]
        rows = {int(line.split()[2]): line.split() for line in lines[3:5]}
        # worker host pid state sessions parked tasks running listens ...
        assert rows[a.process.pid][3:9] == ["alive", "1", "0", "1", "1", "0"]
        assert rows[b.process.pid][3:9] == ["alive", "0", "1", "0", "0", "1"]
        assert lines[5] == "tasks by state: working 1"
        assert started.task_id is not None

        os.kill(b.process.pid, signal.SIGKILL)
        found = await status_until(url, lambda found: not by_pid(found)[b.process.pid]["alive"])
        assert by_pid(found)[a.process.pid]["alive"]
        assert "workers: 1 alive, 1 dead" in (await status(url)).splitlines()
        nursery.cancel_scope.cancel()


async def test_status_says_what_it_needs_when_it_cannot_read_a_fleet() -> None:
    async def refused(*arguments: str) -> str:
        command = [sys.executable, "-m", "mcp_actors.cli", "status", *arguments]
        done = await trio.run_process(
            command,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env={k: v for k, v in os.environ.items() if not k.startswith("MCP_ACTORS_SHARED_")},
        )
        assert done.returncode == 2, done
        assert b"Traceback" not in done.stderr
        return done.stderr.decode().strip()

    port = free_port()  # nothing listens there
    assert await refused(f"redis://127.0.0.1:{port}/0") == (
        f"mcp-actors: Redis does not answer at redis://127.0.0.1:{port}/0:"
        f" Unable to establish a connection to 127.0.0.1:{port}"
    )
    assert "is a server's URL; status reads the deployment's Redis" in await refused(
        "http://127.0.0.1:8000/mcp"
    )
    assert "status needs the deployment's Redis" in await refused()
