"""``mcp-actors run TARGET --transport http --reload``: an edit of the server's file restarts
it with the new code; stopping the watcher stops the server; stdio is refused."""

from __future__ import annotations

import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
import trio

from mcp_actors import open_client

SOURCE = """from mcp_actors import Server

server = Server("reloading")


@server.tool
def version() -> str:
    return "{version}"
"""


async def next_line(stream: trio.abc.ReceiveStream, buffer: bytearray) -> str:
    while b"\n" not in buffer:
        chunk = await stream.receive_some(4096)
        assert chunk, f"the command ended: {bytes(buffer)!r}"
        buffer += chunk
    line, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    return line.decode()


async def announced_url(stream: trio.abc.ReceiveStream, buffer: bytearray) -> str:
    while " at http://" not in (line := await next_line(stream, buffer)):
        pass
    return line.rsplit(" at ", 1)[1]


async def version_at(url: str) -> str:
    async with open_client(url) as client:
        result = await client.call_tool("version", {})
    text: str = result.content[0].text  # type: ignore[union-attr]
    return text


async def test_an_edit_restarts_the_server_with_the_new_code(tmp_path: Path) -> None:
    server = tmp_path / "server.py"
    server.write_text(SOURCE.format(version="v1"))
    command = [sys.executable, "-m", "mcp_actors.cli", "run", str(server), "--transport", "http",
               "--port", "0", "--reload"]  # fmt: skip
    with trio.fail_after(90):  # a hang guard only: each step waits for what it needs
        async with trio.open_nursery() as nursery:
            process: trio.Process = await nursery.start(
                partial(trio.run_process, command, stderr=subprocess.PIPE, check=False)
            )
            assert process.stderr is not None
            buffer = bytearray()
            watching = await next_line(process.stderr, buffer)
            assert watching == f"mcp-actors: watching {tmp_path} for changes (--reload)"
            first = await announced_url(process.stderr, buffer)
            assert await version_at(first) == "v1"

            server.write_text(SOURCE.format(version="v2"))
            assert await next_line(process.stderr, buffer) == (
                "mcp-actors: server.py changed: restarting"
            )
            second = await announced_url(process.stderr, buffer)
            assert await version_at(second) == "v2"

            process.terminate()  # the watcher stops the server, then itself
            assert await process.wait() == 0
    host, port = second.removeprefix("http://").split("/")[0].split(":")
    with pytest.raises(OSError):
        await trio.open_tcp_stream(host, int(port))


def test_stdio_is_refused(tmp_path: Path) -> None:
    server = tmp_path / "server.py"
    server.write_text(SOURCE.format(version="v1"))
    done = subprocess.run(
        [sys.executable, "-m", "mcp_actors.cli", "run", str(server), "--reload"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--reload serves over the network only" in done.stderr
