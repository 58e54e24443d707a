"""``mcp-actors run TARGET`` over stdio from a terminal says, in one stderr line, that it is
serving (a person would otherwise think it hung); launched by a client (stdin a pipe), it
says nothing."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from functools import partial

import trio

from conftest import TESTS

NOTES = str(TESTS / "servers" / "notes.py")
COMMAND = [sys.executable, "-m", "mcp_actors.cli", "run", NOTES]
HINT = (
    "mcp-actors: serving 'notes' over stdio: an MCP client talks to it on stdin/stdout"
    f" (Ctrl-D or Ctrl-C stops it); to try it, run mcp-actors dev {NOTES}, or --transport http\n"
)


async def test_a_terminal_gets_one_line_saying_it_serves() -> None:
    controller, terminal = pty.openpty()
    try:
        with trio.fail_after(60):  # a hang guard only
            async with trio.open_nursery() as nursery:
                process: trio.Process = await nursery.start(
                    partial(trio.run_process, COMMAND, stdin=terminal, stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, check=False)
                )  # fmt: skip
                assert process.stderr is not None
                said = b""
                while not said.endswith(b"\n"):
                    chunk = await process.stderr.receive_some(4096)
                    assert chunk, f"it ended without a word: {said!r}"
                    said += chunk
                assert said.decode() == HINT  # the hint comes before any serving
                os.write(controller, b"\x04")  # Ctrl-D: end of input, as a person stops it
                assert await process.wait() == 0
                assert await process.stderr.receive_some(4096) == b""
    finally:
        os.close(terminal)
        os.close(controller)


def test_a_client_launching_it_sees_nothing_on_stderr() -> None:
    done = subprocess.run(
        COMMAND, stdin=subprocess.DEVNULL, capture_output=True, timeout=30, check=False
    )
    assert (done.returncode, done.stderr) == (0, b"")
