"""The official-SDK peer server works, driven by the official SDK client, under trio.

This proves the interop fixture itself (``tests/peers/sdk_server.py``) before any of
our own code is pointed at it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio
from mcp import Client, StdioServerParameters

PEERS = Path(__file__).parent / "peers"


def sdk_peer(script: str, events: Path | None = None) -> StdioServerParameters:
    env = {"SDK_PEER_EVENTS": str(events)} if events is not None else None
    return StdioServerParameters(command=sys.executable, args=[str(PEERS / script)], env=env)


async def wait_for_line(path: Path, line: str) -> None:
    """Poll a file another process appends to until it holds ``line``."""
    tpath = trio.Path(path)
    while not (await tpath.exists() and line in (await tpath.read_text()).splitlines()):
        await trio.sleep(0.02)


# "legacy" = the initialize handshake (negotiates 2025-11-25); "auto" = the SDK default,
# which probes server/discover first and lands on 2026-07-28 against an SDK server.
@pytest.mark.parametrize(
    ("mode", "expected_version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")]
)
async def test_sdk_peer_add_progress_and_cancel(
    mode: str, expected_version: str, tmp_path: Path
) -> None:
    events = tmp_path / "events"
    with trio.fail_after(60):
        async with Client(sdk_peer("sdk_server.py", events), mode=mode) as client:
            assert client.protocol_version == expected_version
            tools = await client.list_tools()
            assert {t.name for t in tools.tools} >= {"add", "echo", "slow"}

            result = await client.call_tool("add", {"a": 2, "b": 3})
            assert not result.is_error
            assert result.content[0].type == "text" and result.content[0].text == "5"

            echoed = await client.call_tool("echo", {"text": "héllo"})
            assert echoed.content[0].type == "text" and echoed.content[0].text == "héllo"

            progress: list[tuple[float, float | None, str | None]] = []
            three_reports = trio.Event()

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                progress.append((value, total, message))
                if len(progress) == 3:
                    three_reports.set()

            done = await client.call_tool(
                "slow", {"steps": 3, "delay": 0.01}, progress_callback=on_progress
            )
            assert not done.is_error
            # Progress callbacks are spawned as tasks: give the last one a moment.
            with trio.fail_after(5):
                await three_reports.wait()
            assert sorted(progress) == [
                (1.0, 3.0, "step 1/3"),
                (2.0, 3.0, "step 2/3"),
                (3.0, 3.0, "step 3/3"),
            ]

            # Cancelling the awaiting task makes the SDK client send notifications/cancelled,
            # which cancels the handler on the server side.
            first_progress = trio.Event()

            async def on_first(value: float, total: float | None, message: str | None) -> None:
                first_progress.set()

            async with trio.open_nursery() as nursery:

                async def call_slow() -> None:
                    await client.call_tool(
                        "slow", {"steps": 1000, "delay": 0.02}, progress_callback=on_first
                    )

                nursery.start_soon(call_slow)
                await first_progress.wait()
                nursery.cancel_scope.cancel()
            with trio.fail_after(10):
                await wait_for_line(events, "cancelled")

            # The connection is still healthy afterwards.
            again = await client.call_tool("add", {"a": 40, "b": 2})
            assert again.content[0].type == "text" and again.content[0].text == "42"


async def test_sdk_lowlevel_peer_add() -> None:
    with trio.fail_after(60):
        async with Client(sdk_peer("sdk_lowlevel_server.py"), mode="legacy") as client:
            assert client.protocol_version == "2025-11-25"
            assert [t.name for t in (await client.list_tools()).tools] == ["add"]
            result = await client.call_tool("add", {"a": 2, "b": 3})
            assert result.content[0].type == "text" and result.content[0].text == "5"
