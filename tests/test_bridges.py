"""The asyncio and sync fronts, used as asyncio and synchronous programs use them.

These tests are plain functions (no Trio run of their own): each runs a real
``asyncio.run`` program or plain blocking code. The server is the suite's sample
server as a child process over stdio, so "the server observed the cancel" is read
from the events file its handler writes — across a real process boundary.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import trio
from mcp import Client as SdkClient

from mcp_actors import ClientHandlers, StdioTarget, aio, open_client, sync, types
from mcp_actors.client.targets import load_server

from conftest import SAMPLE, TESTS

SDK_CLIENT_LEAKS = pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <async_generator object"
    " (EventSource.__aiter__|PoolByteStream.__aiter__|Response.aiter_(text|bytes|raw))"
    ":pytest.PytestUnraisableExceptionWarning"
)


def sample_process() -> StdioTarget:
    return StdioTarget(sys.executable, ("-m", "mcp_actors.cli", "run", SAMPLE), cwd=str(TESTS))


def seen(events_file: Path, line: str) -> bool:
    return line in events_file.read_text().splitlines()


def wait_for_line(events_file: Path, line: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not seen(events_file, line):
        assert time.monotonic() < deadline, f"{line!r} never appeared"
        time.sleep(0.01)


Progress = tuple[float, float | None, str | None]


def check_progress(reports: list[Progress]) -> None:
    """Progress arrived, in order, ending with the last step (reports may coalesce)."""
    assert reports, "no progress reported"
    assert [p for p, _, _ in reports] == sorted(p for p, _, _ in reports)
    assert reports[-1] == (3, 3, "step 3")


# -- asyncio ---------------------------------------------------------------------------


def test_an_asyncio_program_calls_with_progress_and_cancels_a_slow_call(
    events_file: Path,
) -> None:
    async def program() -> tuple[Any, list[Progress], list[Progress]]:
        sync_reports: list[Progress] = []
        async_reports: list[Progress] = []

        async def on_progress_async(p: float, total: float | None, message: str | None) -> None:
            await asyncio.sleep(0)
            async_reports.append((p, total, message))

        async with aio.open_client(sample_process(), era="legacy") as client:
            assert client.server_info.name == "sample"
            result = await client.call_tool(
                "slow",
                {"steps": 3},
                on_progress=lambda *report: sync_reports.append(report),
                timeout=10,
            )
            await client.call_tool("slow", {"steps": 3}, on_progress=on_progress_async)

            slow = asyncio.create_task(
                client.call_tool("wait_forever", {"tag": "aio"}, timeout=None)
            )
            while not seen(events_file, "started aio"):
                await asyncio.sleep(0.01)
            slow.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(slow, 10)
            # the handler saw its cancel scope fire while the session goes on
            await asyncio.to_thread(wait_for_line, events_file, "cancelled aio")
            await asyncio.wait_for(client.ping(), 10)
            return result, sync_reports, async_reports

    result, sync_reports, async_reports = asyncio.run(program())
    assert result.content[0].text == "done after 3 steps"
    check_progress(sync_reports)
    check_progress(async_reports)


def test_asyncio_timeouts_and_lists_mirror_the_trio_client(events_file: Path) -> None:
    async def program() -> tuple[list[str], Any]:
        async with aio.open_client(
            load_server(SAMPLE), era="legacy"
        ) as client:  # in-process, in the thread
            names = [tool.name for tool in await client.list_tools()]
            with pytest.raises(TimeoutError):
                # 2 s: the handler has started (a cancel that beats it leaves nothing to see)
                await client.call_tool("wait_forever", {"tag": "timeout"}, timeout=2.0)
            await asyncio.to_thread(wait_for_line, events_file, "cancelled timeout")
            return names, await client.call_tool("add", {"a": 2, "b": 3})

    names, added = asyncio.run(program())
    assert {"add", "slow", "wait_forever"} <= set(names)
    assert added.structured_content == {"result": 5}


def test_asyncio_task_cancelled_by_wait_for_cancels_the_call(events_file: Path) -> None:
    async def program() -> None:
        async with aio.open_client(sample_process(), era="legacy") as client:
            with pytest.raises(TimeoutError):
                call = client.call_tool("wait_forever", {"tag": "wf"}, timeout=None)
                await asyncio.wait_for(call, 2.0)  # time for the handler to start
            await asyncio.to_thread(wait_for_line, events_file, "cancelled wf")

    asyncio.run(program())


# -- sync ------------------------------------------------------------------------------


def test_a_sync_program_calls_with_progress_and_cancels_a_slow_call(events_file: Path) -> None:
    reports: list[Progress] = []
    with sync.open_client(sample_process(), era="legacy") as client:
        assert client.server_info.name == "sample"
        result = client.call_tool(
            "slow", {"steps": 3}, on_progress=lambda *report: reports.append(report)
        )
        assert result.content[0].text == "done after 3 steps"

        pending = client.start_call_tool("wait_forever", {"tag": "sync"}, timeout=None)
        wait_for_line(events_file, "started sync")
        assert not pending.done()
        pending.cancel()  # returns once the server was sent notifications/cancelled
        assert pending.cancelled()
        wait_for_line(events_file, "cancelled sync")

        with pytest.raises(TimeoutError):
            # 2 s: the handler has started (a cancel that beats it leaves nothing to see)
            client.call_tool("wait_forever", {"tag": "sync-timeout"}, timeout=2.0)
        wait_for_line(events_file, "cancelled sync-timeout")
        client.ping()
    check_progress(reports)


def test_a_sync_client_serves_several_threads_at_once() -> None:
    with sync.open_client(load_server(SAMPLE), era="legacy") as client:
        sums: list[int] = []

        def work(a: int) -> None:
            result = client.call_tool("add", {"a": a, "b": 1})
            assert isinstance(result.structured_content, dict)
            sums.append(result.structured_content["result"])

        threads = [threading.Thread(target=work, args=(a,)) for a in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    assert sorted(sums) == list(range(1, 9))


def test_a_failed_connection_raises_from_open_client() -> None:
    dying = StdioTarget(sys.executable, ("-c", "import sys; sys.exit(3)"))
    with (
        pytest.raises(Exception, match="connection closed before initialize"),
        sync.open_client(dying, era="legacy"),
    ):
        pass


# -- hosting a server from asyncio -----------------------------------------------------


@SDK_CLIENT_LEAKS
def test_an_asyncio_program_hosts_a_server_for_the_sdk_and_the_trio_client() -> None:
    async def with_trio_client(url: str) -> int:
        async with open_client(url, era="legacy") as client:
            result = await client.call_tool("add", {"a": 20, "b": 22})
            assert isinstance(result.structured_content, dict)
            value: int = result.structured_content["result"]
            return value

    async def program() -> tuple[Any, int]:
        async with aio.serve(load_server(SAMPLE), "http", port=0) as endpoint:
            assert endpoint.url is not None and endpoint.url.startswith("http://127.0.0.1:")
            async with SdkClient(endpoint.url, mode="legacy") as sdk:
                sdk_result = await sdk.call_tool("add", {"a": 1, "b": 2})
            trio_value = await asyncio.to_thread(trio.run, with_trio_client, endpoint.url)
            return sdk_result, trio_value

    sdk_result, trio_value = asyncio.run(program())
    assert sdk_result.structured_content == {"result": 3}
    assert trio_value == 42


def test_a_sync_program_hosts_a_websocket_server() -> None:
    with sync.serve(load_server(SAMPLE), "ws", port=0) as endpoint:
        assert endpoint.url is not None and endpoint.url.startswith("ws://")
        with sync.open_client(endpoint.url, era="legacy") as client:
            assert client.call_tool("add", {"a": 1, "b": 1}).structured_content == {"result": 2}


# -- subscriptions, callbacks --------------------------------------------------------------

FEATURES = "servers.features:server"


def test_asyncio_subscriptions_are_async_iterators() -> None:
    async def program() -> list[Any]:
        async with aio.open_client(load_server(FEATURES), era="legacy") as client:
            seen: list[Any] = []
            async with client.subscribe("counter://value") as updates:
                await client.call_tool("bump")
                async for update in updates:
                    seen.append(update.meta)
                    if len(seen) == 1:
                        await client.call_tool("bump")
                    else:
                        break
            return seen

    seen = asyncio.run(program())
    assert len(seen) == 2 and seen[0]["seq"] < seen[1]["seq"]


def test_sync_subscriptions_are_iterators() -> None:
    with sync.open_client(load_server(FEATURES), era="legacy") as client:
        with client.subscribe("counter://value") as updates:
            client.call_tool("bump")
            update = next(iter(updates))
        assert update.uri == "counter://value"
        # the block exited: the server was sent resources/unsubscribe, the session goes on
        client.ping()


def test_an_asyncio_progress_callback_that_raises_fails_the_call() -> None:
    def explode(progress: float, total: float | None, message: str | None) -> None:
        raise ValueError("no progress wanted")

    async def program() -> None:
        async with aio.open_client(load_server(SAMPLE), era="legacy") as client:
            with pytest.raises(ValueError, match="no progress wanted"):
                await client.call_tool("slow", {"steps": 2}, on_progress=explode)
            await client.ping()

    asyncio.run(program())


def test_a_sync_progress_callback_may_cancel_its_own_call(events_file: Path) -> None:
    with sync.open_client(load_server(SAMPLE), era="legacy") as client:
        calls: list[Any] = []
        started = threading.Event()

        def cancel_on_first_report(*report: Any) -> None:
            assert started.wait(10)
            calls[0].cancel()  # from the worker thread the callback runs in

        pending = client.start_call_tool(
            "slow", {"steps": 50, "delay": 0.05}, on_progress=cancel_on_first_report
        )
        calls.append(pending)
        started.set()
        with pytest.raises(Exception) as raised:
            pending.result(timeout=30)
        assert type(raised.value).__name__ == "CancelledError"
        client.ping()


def echo_sample(params: types.CreateMessageParams) -> types.CreateMessageResult:
    question = params.messages[0].content
    assert isinstance(question, types.TextContent)
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(text=question.text), model="echo"
    )


def test_asyncio_handlers_run_on_the_loop() -> None:
    async def program() -> tuple[str, bool, list[str]]:
        loop = asyncio.get_running_loop()
        on_loop: list[bool] = []
        logs: list[str] = []

        async def sampling(params: types.CreateMessageParams) -> types.CreateMessageResult:
            on_loop.append(asyncio.get_running_loop() is loop)
            await asyncio.sleep(0)
            return echo_sample(params)

        handlers = ClientHandlers(sampling=sampling, on_log=lambda p: logs.append(p.level))
        async with aio.open_client(
            load_server(FEATURES), handlers=handlers, era="legacy"
        ) as client:
            result = await client.call_tool("ask_model", {"question": "Why?"})
            await client.call_tool("python_logging_in_thread", {"message": "hello"})
            async with asyncio.timeout(10):  # the log notification comes on its own
                while not logs:
                    await asyncio.sleep(0.01)
        return result.content[0].text, all(on_loop), logs  # type: ignore[union-attr]

    text, ran_on_loop, logs = asyncio.run(program())
    assert text == "echo: Why?"
    assert ran_on_loop
    assert logs == ["warning"]


def test_sync_handlers_run_in_worker_threads() -> None:
    threads: list[str] = []

    def sampling(params: types.CreateMessageParams) -> types.CreateMessageResult:
        threads.append(threading.current_thread().name)
        return echo_sample(params)

    handlers = ClientHandlers(sampling=sampling)
    with sync.open_client(load_server(FEATURES), handlers=handlers, era="legacy") as client:
        result = client.call_tool("ask_model", {"question": "Why?"})
    assert result.content[0].text == "echo: Why?"  # type: ignore[union-attr]
    assert threads and threads[0] != threading.main_thread().name


async def survey(client: Any) -> list[Any]:
    """The same calls through a Trio Client or an AsyncClient (their methods mirror)."""
    reference = types.PromptReference(name="review")
    return [
        len(await client.list_resources()),
        len(await client.list_resource_templates()),
        (await client.read_resource("counter://value")).contents[0].uri,
        [prompt.name for prompt in await client.list_prompts()],
        len((await client.get_prompt("greet", {"name": "Ada"})).messages),
        (await client.complete(reference, "language", "r")).values,
    ]


def test_every_list_read_prompt_and_completion_method_mirrors_trio() -> None:
    async def with_trio() -> list[Any]:
        async with open_client(load_server(FEATURES), era="legacy") as client:
            return await survey(client)

    async def with_asyncio() -> list[Any]:
        async with aio.open_client(load_server(FEATURES), era="legacy") as client:
            return await survey(client)

    with sync.open_client(load_server(FEATURES), era="legacy") as client:
        reference = types.PromptReference(name="review")
        from_sync = [
            len(client.list_resources()),
            len(client.list_resource_templates()),
            client.read_resource("counter://value").contents[0].uri,
            [prompt.name for prompt in client.list_prompts()],
            len(client.get_prompt("greet", {"name": "Ada"}).messages),
            client.complete(reference, "language", "r").values,
        ]
    from_trio = trio.run(with_trio)
    assert from_trio[2] == "counter://value" and from_trio[5] == ["rust"]
    assert asyncio.run(with_asyncio()) == from_trio == from_sync


CTRL_C_PROGRAM = """
import os, signal, sys, threading, time
from mcp_actors import StdioTarget, sync

def server_saw_the_cancel():
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with open(os.environ["MCP_TEST_EVENTS"]) as events:
            if "cancelled ctrl-c" in events.read().splitlines():
                return True
        time.sleep(0.01)
    return False

target = StdioTarget(sys.executable, ("-m", "mcp_actors.cli", "run", "servers.sample"))
with sync.open_client(target, era="legacy") as client:
    threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT)).start()
    try:
        client.call_tool("wait_forever", {"tag": "ctrl-c"}, timeout=None)
    except KeyboardInterrupt:
        print("interrupted")
    client.ping()
    print("still connected", server_saw_the_cancel())
"""


def test_ctrl_c_in_a_sync_program_cancels_the_call(events_file: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", CTRL_C_PROGRAM],
        cwd=str(TESTS),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    # the server's handler saw the cancel while the session went on (not at its close)
    assert result.stdout.split() == ["interrupted", "still", "connected", "True"]
