"""``mcp-actors run TARGET`` over stdio from a terminal says, in one stderr line, that it is
serving (a person would otherwise think it hung); launched by a client (stdin a pipe), it
says nothing."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from conftest import TESTS

NOTES = str(TESTS / "servers" / "notes.py")
COMMAND = [sys.executable, "-m", "mcp_actors.cli", "run", NOTES]


def test_a_terminal_gets_one_line_saying_it_serves() -> None:
    controller, terminal = pty.openpty()
    with subprocess.Popen(
        COMMAND, stdin=terminal, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL
    ) as process:
        os.close(terminal)
        try:
            assert process.stderr is not None
            line = process.stderr.readline().decode()  # the hint comes before any serving
            assert line == (
                "mcp-actors: serving 'notes' over stdio: an MCP client talks to it on"
                f" stdin/stdout (Ctrl-D or Ctrl-C stops it); to try it, run mcp-actors dev {NOTES},"
                " or --transport http\n"
            )
            os.write(controller, b"\x04")  # Ctrl-D: end of input, as a person would stop it
            assert process.wait(timeout=30) == 0
            assert process.stderr.read() == b""
        finally:
            process.kill()
            os.close(controller)


def test_a_client_launching_it_sees_nothing_on_stderr() -> None:
    done = subprocess.run(
        COMMAND, stdin=subprocess.DEVNULL, capture_output=True, timeout=30, check=False
    )
    assert (done.returncode, done.stderr) == (0, b"")
