"""Durable tasks, as a tool author and a deployer meet them (no Redis needed).

A task's handler learns its task id (the idempotency key of a re-run) and attempt
from its Context, over every transport and in both eras; ``rerun_safe`` is declared
on the tool and checked; the ``[shared]`` lease and attempts settings are strict; a
store's failing look for orphans is logged and the takeover loop goes on.
"""

from __future__ import annotations

import attrs
import pytest
import trio
import trio.testing

from mcp_actors import Context, Server
from mcp_actors.config import SettingsError
from mcp_actors.protocol import types as t
from mcp_actors.runtime.supervisor import open_supervisor
from mcp_actors.runtime.task_store import MemoryTaskStore, TaskRecord
from mcp_actors.shared.settings import load_shared_settings

from conftest import CONNECTORS, connect

SERVER = "servers.durable_tasks:server"
WITH_TASKS = t.ClientCapabilities(extensions={t.TASKS_EXTENSION: {}})
#: Every transport that speaks the 2026-07-28 era (legacy HTTP+SSE does not).
MODERN_TRANSPORTS = sorted(kind for kind in CONNECTORS if not kind.startswith("sse"))


def text(result: t.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, t.TextContent)
    return block.text


@pytest.mark.parametrize("transport", MODERN_TRANSPORTS)
async def test_a_task_knows_its_id_and_attempt_in_the_modern_era(transport: str) -> None:
    async with connect(transport, SERVER, era="modern", capabilities=WITH_TASKS) as client:
        handle = await client.start_tool_task("identify")
        assert handle.task_id is not None
        result = await handle.result()
        assert text(result) == f"{handle.task_id} 1"
    async with connect(transport, SERVER, era="modern") as plain:  # no extension: no task
        assert text(await plain.call_tool("identify")) == "None 1"


@pytest.mark.needs("sessions")  # a legacy task is its session's
async def test_a_task_knows_its_id_and_attempt_in_a_legacy_session(transport: str) -> None:
    async with connect(transport, SERVER) as client:
        assert client.protocol_version == "2025-11-25"
        created = await client.request(
            "tools/call", {"name": "identify", "task": {}}, result_type=t.CreateTaskResult
        )
        task_id = created.task.task_id
        result = await client.request(
            "tasks/result", {"taskId": task_id}, result_type=t.CallToolResult
        )
        assert text(result) == f"{task_id} 1"
        assert text(await client.call_tool("identify")) == "None 1"


def test_rerun_safe_is_declared_only_where_a_call_runs_as_a_task() -> None:
    server = Server("declarations")

    async def work(ctx: Context) -> str:
        return "done"

    server.tool(name="safe", task="always", rerun_safe=True)(work)
    assert server.find_tool("safe").rerun_safe is True  # type: ignore[union-attr]
    for task in ("never", "deferred"):
        with pytest.raises(
            ValueError, match=f"rerun_safe=True needs task='optional' or 'always'.*'{task}'"
        ):
            server.tool(name=f"bad_{task}", task=task, rerun_safe=True)(work)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="rerun_safe"):
        server.tool(name="not_a_bool", task="optional", rerun_safe="yes")(work)  # type: ignore[call-overload]


@pytest.mark.parametrize(
    ("environ", "problem"),
    [
        ({"MCP_ACTORS_SHARED_TASK_LEASE_SECONDS": "1.0"}, "must be longer than heartbeat_seconds"),
        (
            {
                "MCP_ACTORS_SHARED_HEARTBEAT_SECONDS": "2",
                "MCP_ACTORS_SHARED_TASK_LEASE_SECONDS": "1.5",
            },
            "task_lease_seconds (1.5) must be longer than heartbeat_seconds (2.0)",
        ),
        ({"MCP_ACTORS_SHARED_TASK_LEASE_SECONDS": "-3"}, "task_lease_seconds must be positive"),
        ({"MCP_ACTORS_SHARED_TASK_MAX_ATTEMPTS": "0"}, "task_max_attempts"),
        ({"MCP_ACTORS_SHARED_TASK_MAX_ATTEMPTS": "two"}, "task_max_attempts"),
    ],
)
def test_the_lease_and_attempts_settings_are_strict(environ: dict[str, str], problem: str) -> None:
    with pytest.raises(SettingsError) as refused:
        load_shared_settings(environ=environ)
    assert problem in str(refused.value)


def test_the_lease_and_attempts_settings_have_defaults_and_can_be_set() -> None:
    default = load_shared_settings(environ={})
    assert (default.task_lease_seconds, default.task_max_attempts) == (3.0, 3)
    environ = {
        "MCP_ACTORS_SHARED_HEARTBEAT_SECONDS": "0.5",
        "MCP_ACTORS_SHARED_TASK_LEASE_SECONDS": "1.5",
        "MCP_ACTORS_SHARED_TASK_MAX_ATTEMPTS": "5",
    }
    chosen = load_shared_settings(environ=environ)
    assert (chosen.task_lease_seconds, chosen.task_max_attempts) == (1.5, 5)


@attrs.define(eq=False)
class FailingOnceStore(MemoryTaskStore):
    """A store that takes tasks over, whose backend fails the first look."""

    looks: int = 0
    second_look: trio.Event = attrs.field(factory=trio.Event)

    @property
    def takeover_interval(self) -> float:  # type: ignore[override]
        return 1.0

    async def take_over(self) -> list[TaskRecord]:
        self.looks += 1
        if self.looks == 1:
            raise ConnectionError("the backend is down")
        self.second_look.set()
        return []


async def test_a_failing_look_for_orphans_is_logged_and_the_next_one_comes(
    mock_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    mock_clock.autojump_threshold = 0
    server = Server("takeover")
    store = FailingOnceStore()
    server.share_state(task_store=store)
    async with open_supervisor() as supervisor, trio.open_nursery() as nursery:
        await nursery.start(server.take_over_tasks, supervisor)
        with trio.fail_after(10):
            await store.second_look.wait()
        nursery.cancel_scope.cancel()
    assert "task takeover failed; trying again in 1.0s" in caplog.text
    assert "the backend is down" in caplog.text
