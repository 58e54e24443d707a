"""``mcp-actors call TARGET TOOL a=1 b=two``: arguments typed by the tool's schema, the
result shown as content (``--raw``: as JSON), over every kind of target; and
``pathlib.Path`` parameters, from the CLI and from a client."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from mcp_actors import open_client

from conftest import FRONT_ENDS, TESTS, served_by_cli
from servers.shell_friendly import server as shell_friendly

SERVER = str(TESTS / "servers" / "shell_friendly.py")


async def call(target: str, *words: str) -> subprocess.CompletedProcess[bytes]:
    with trio.fail_after(60):
        return await trio.run_process(
            [sys.executable, "-m", "mcp_actors.cli", "call", target, *words],
            cwd=str(TESTS),
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )


DESCRIBE = ("describe", "name=42", "count=3", "ratio=0.5", "loud=true", 'tags=["a", "b"]',
            "where=/tmp/x y")  # fmt: skip
DESCRIBED = b"str:42 int:3 float:0.5 bool:True list:['a', 'b'] PosixPath:/tmp/x y NoneType:None\n"


async def check_target(target: str) -> None:
    typed = await call(target, *DESCRIBE)
    assert (typed.returncode, typed.stdout) == (0, DESCRIBED), typed.stderr
    as_json = await call(target, "describe", json.dumps(
        {"name": "42", "count": 3, "ratio": 0.5, "loud": True, "tags": ["a", "b"],
         "where": "/tmp/x y"}
    ))  # fmt: skip
    assert as_json.stdout == DESCRIBED
    shown = await call(target, "gallery")
    assert shown.stdout.decode().splitlines() == [
        "a picture:",
        "[image image/png, 2.0 kB]",
        "[resource_link file:///notes/a.txt]",
        "embedded text",
    ]
    raw = await call(target, "gallery", "--raw", "--era", "modern")
    printed = json.loads(raw.stdout)
    assert printed["resultType"] == "complete" and printed["content"][0]["text"] == "a picture:"


async def test_call_in_process_and_over_stdio() -> None:
    await check_target(SERVER)
    await check_target(f"stdio:{sys.executable} -m mcp_actors.cli run {SERVER}")


@pytest.mark.parametrize("http_front_end", FRONT_ENDS, indirect=True)
async def test_call_over_http(http_front_end: str) -> None:
    async with served_by_cli("--transport", "http", "--port", "0", spec=SERVER) as url:
        await check_target(url)


@pytest.mark.parametrize(
    ("words", "line"),
    [
        (("count=three",), "argument 'count' must be integer, not 'three'"),
        (("loud=yes",), "argument 'loud' must be boolean, not 'yes'"),
        (("tags=a",), "argument 'tags' must be array, not 'a'"),
        (("colour=red",), "tool 'describe' has no parameter 'colour' (it has: count, loud,"
                          " name, note, ratio, tags, where)"),
        (("count",), "expected NAME=VALUE (or one JSON object), got 'count'"),
        (("count=1", "count=2"), "argument 'count' is given twice"),
        (("{oops",), "arguments are not valid JSON"),
        (("[1]",), "expected NAME=VALUE (or one JSON object), got '[1]'"),
    ],
)  # fmt: skip
async def test_bad_arguments_are_named_before_the_call(words: tuple[str, ...], line: str) -> None:
    result = await call(SERVER, "describe", *words)
    assert result.returncode == 2
    assert f"mcp-actors: {line}" in result.stderr.decode()
    assert result.stdout == b""


async def test_an_unknown_tool_names_those_there_are() -> None:
    result = await call(SERVER, "nope", "a=1")
    assert result.returncode == 2
    assert b"the server has no tool 'nope' (it has: describe, gallery, read_text)" in result.stderr


async def test_path_parameters_from_a_client(tmp_path: Path) -> None:
    note = tmp_path / "note.txt"
    note.write_text("hello")
    async with open_client(shell_friendly) as client:
        (tool,) = [tool for tool in await client.list_tools() if tool.name == "read_text"]
        assert tool.input_schema["properties"]["path"] == {"type": "string", "minLength": 1}
        read = await client.call_tool("read_text", {"path": str(note)})
        assert read.content[0].text == "hello"  # type: ignore[union-attr]
        empty = await client.call_tool("read_text", {"path": ""})
        assert empty.is_error is True
        assert "at `$.path`" in empty.content[0].text  # type: ignore[union-attr]
    result = await call(SERVER, "read_text", f"path={note}")
    assert result.stdout == b"hello\n"
