"""A stdio client may write its requests, close stdin, and read the answers.

Closing stdin is how a stdio client says it has nothing more to ask, not that it
stopped reading: ``printf '...requests...' | mcp-actors run my:server`` expects every
answer on stdout. So at the end of input the server lets the requests in flight
finish (``SessionConfig.eof_grace`` seconds at most), writes their answers, and only
then exits; what is still running after the grace is cancelled.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import partial
from typing import Any

import trio
import trio.testing

from mcp_actors import Context, Server, SessionConfig
from mcp_actors.testing.wire import validate_message
from mcp_actors.transports.stdio import StdioStream

from conftest import SAMPLE, TESTS

REVISION = "2025-11-25"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": REVISION,
        "capabilities": {},
        "clientInfo": {"name": "pipe", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(request_id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def lines(*messages: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(message).encode() + b"\n" for message in messages)


async def test_requests_piped_before_the_end_of_input_are_all_answered() -> None:
    piped = lines(
        INITIALIZE,
        INITIALIZED,
        call(1, "slow", {"steps": 3, "delay": 0.1}),
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        call(3, "add", {"a": 2, "b": 3}),
    )
    command = [sys.executable, "-m", "mcp_actors.cli", "run", SAMPLE]
    with trio.fail_after(30):
        done = await trio.run_process(
            command, stdin=piped, capture_stdout=True, stderr=subprocess.DEVNULL, cwd=str(TESTS)
        )
    answers = {}
    for line in done.stdout.splitlines():
        validate_message(REVISION, line)
        message = json.loads(line)
        if "id" in message:
            answers[message["id"]] = message
    assert done.returncode == 0
    assert sorted(answers) == [0, 1, 2, 3]
    assert answers[1]["result"]["content"][0]["text"] == "done after 3 steps"
    assert "slow" in {tool["name"] for tool in answers[2]["result"]["tools"]}
    assert answers[3]["result"]["structuredContent"] == {"result": 5}


async def test_a_request_still_running_after_the_grace_is_cancelled() -> None:
    server = Server("eof", config=SessionConfig(eof_grace=0.3))
    cancelled = trio.Event()

    @server.tool
    async def quick(ctx: Context) -> str:
        await trio.sleep(0.05)
        return "quick"

    @server.tool
    async def forever(ctx: Context) -> str:
        try:
            await trio.sleep_forever()
        finally:
            cancelled.set()
        return "never"

    to_server_send, to_server_receive = trio.testing.memory_stream_one_way_pair()
    from_server_send, from_server_receive = trio.testing.memory_stream_one_way_pair()
    stream = StdioStream(to_server_receive, from_server_send)
    output = bytearray()

    async def read_all() -> None:
        while data := await from_server_receive.receive_some():
            output.extend(data)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(read_all)
        await nursery.start(partial(server.serve_session, stream))
        await to_server_send.send_all(
            lines(INITIALIZE, INITIALIZED, call(1, "forever", {}), call(2, "quick", {}))
        )
        await to_server_send.aclose()  # the end of input
        started = trio.current_time()
        with trio.fail_after(5):
            await cancelled.wait()
        waited = trio.current_time() - started
        await from_server_send.aclose()
    answered = [json.loads(line) for line in output.splitlines()]
    ids = [message.get("id") for message in answered]
    assert ids == [0, 2]  # initialize and quick; forever was cancelled, unanswered
    assert answered[1]["result"]["content"][0]["text"] == "quick"
    assert 0.3 <= waited < 3
