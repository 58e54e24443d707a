"""The ``filesystem`` plugin (plugins/filesystem): the client's roots are honoured, escapes
(``..``, absolute paths, symlinks) are refused, and writing is off unless enabled — also
when the tree is hostile: a symlink swapped while calls run, a FIFO, calls cancelled in
bulk.

Each test builds a small tree in a temporary directory::

    tmp/
      outside.txt               (outside the configured root)
      root/                     (the configured root)
        a/notes.txt  a/data.bin  a/link-out -> ../../outside.txt  a/link-in -> notes.txt
        b/secret.txt
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from mcp_actors import Client, ClientHandlers, McpError, open_client, types
from mcp_actors.protocol import errors
from mcp_actors_filesystem import Settings, create, file_uri_path

from conftest import connect


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    (root / "a" / "notes.txt").write_text("hello notes\nsecond line\n")
    (root / "a" / "data.bin").write_bytes(b"\xff\xfe\x00binary")
    (root / "b" / "secret.txt").write_text("top secret")
    (tmp_path / "outside.txt").write_text("outside the root")
    os.symlink("../../outside.txt", root / "a" / "link-out")
    os.symlink("notes.txt", root / "a" / "link-in")
    return root


@asynccontextmanager
async def filesystem(
    root: Path, *, roots: list[str] | None = None, **settings: Any
) -> AsyncIterator[Client]:
    """A client of a filesystem server on ``root``; ``roots``: the client's roots (None:
    the client does not declare the roots capability)."""
    server = create(Settings(root=str(root), **settings))
    handlers = ClientHandlers(roots=roots)
    with trio.fail_after(30):
        async with open_client(server, handlers=handlers, era="legacy") as client:
            yield client


def wire(value: Any) -> Any:
    return json.loads(msgspec.json.encode(value))


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def assert_refused(result: types.CallToolResult, *fragments: str) -> None:
    assert result.is_error is True, result
    message = text_of(result)
    for fragment in fragments:
        assert fragment in message, message


# -- the configured root -------------------------------------------------------------------


async def test_without_client_roots_the_configured_root_is_the_boundary(tree: Path) -> None:
    async with filesystem(tree) as client:
        allowed = await client.call_tool("list_allowed_directories")
        listing = await client.call_tool("list_directory", {"path": "a"})
        read = await client.call_tool("read_file", {"path": "a/notes.txt"})
        absolute = await client.call_tool("read_file", {"path": str(tree / "b" / "secret.txt")})
        via_link = await client.call_tool("read_file", {"path": "a/link-in"})
    assert allowed.structured_content == {"result": [str(tree.resolve())]}
    assert listing.structured_content == {
        "path": str(tree.resolve() / "a"),
        "entries": [
            {"name": "data.bin", "type": "file", "size": 9},
            {"name": "link-in", "type": "symlink"},
            {"name": "link-out", "type": "symlink"},
            {"name": "notes.txt", "type": "file", "size": 24},
        ],
        "truncated": False,
    }
    assert text_of(read) == "hello notes\nsecond line\n"
    assert text_of(absolute) == "top secret"
    assert text_of(via_link) == "hello notes\nsecond line\n"


async def test_refusals_are_the_callers_fault_one_line_each_root_not_shown(
    tree: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A refused path is logged (DEBUG, one line, no traceback) however often it is
    asked, and its error text names paths relative to the root, never the root itself."""
    os.mkfifo(tree / "a" / "fifo")
    calls = [
        ("read_file", {"path": "/etc/passwd"}, "'/etc/passwd' is outside the allowed roots"),
        ("read_file", {"path": "a/missing.txt"}, "No such file or directory: 'a/missing.txt'"),
        ("read_file", {"path": "a/fifo"}, "'a/fifo' is not a regular file"),
        ("read_file", {"path": "a/data.bin"}, "'a/data.bin' is not UTF-8 text"),
        ("list_directory", {"path": "a/notes.txt"}, "Not a directory: 'a/notes.txt'"),
        ("get_file_info", {"path": "../outside.txt"}, "(the configured root: .)"),
    ]
    caplog.set_level(logging.DEBUG, logger="mcp_actors")
    async with filesystem(tree) as client:
        for _ in range(20):
            for tool, arguments, expected in calls:
                result = await client.call_tool(tool, arguments)
                assert_refused(result, expected)
                assert str(tree) not in text_of(result)
                assert str(tree.resolve()) not in text_of(result)
    async with filesystem(tree, roots=[(tree / "a").as_uri()]) as client:
        secret = str(tree / "b/secret.txt")  # (as the client wrote it)
        narrowed = await client.call_tool("read_file", {"path": secret})
    assert text_of(narrowed) == (
        f"{secret!r} is outside the allowed roots (the client's roots within the root: a)"
    )
    tools = [record for record in caplog.records if record.name == "mcp_actors.tools"]
    assert tools, "refusals are logged at DEBUG"
    for record in tools:
        assert record.levelno == logging.DEBUG, record.getMessage()
        assert record.exc_info is None and "\n" not in record.getMessage()


@pytest.mark.parametrize(
    "path",
    [
        "../outside.txt",
        "a/../../outside.txt",
        "a/link-out",  # a symlink inside the root that points outside
        "/etc/passwd",
        "..",
    ],
)
async def test_escapes_are_refused(tree: Path, path: str) -> None:
    async with filesystem(tree) as client:
        read = await client.call_tool("read_file", {"path": path})
        info = await client.call_tool("get_file_info", {"path": path})
    assert_refused(read, f"{path!r} is outside the allowed roots")
    assert_refused(info, f"{path!r} is outside the allowed roots")
    for refusal in (read, info):  # where a symlink points is not told
        assert str(tree.parent / "outside.txt") not in text_of(refusal)


async def test_a_symlinked_directory_pointing_outside_is_refused(tree: Path) -> None:
    os.symlink(tree.parent, tree / "up")
    async with filesystem(tree) as client:
        listing = await client.call_tool("list_directory", {"path": "up"})
        read = await client.call_tool("read_file", {"path": "up/outside.txt"})
        found = await client.call_tool("search", {"pattern": "*.txt"})
    assert_refused(listing)
    assert_refused(read)
    # search neither follows the symlinked directory nor returns the symlink to outside.txt
    assert found.structured_content is not msgspec.UNSET
    assert sorted(Path(p).name for p in found.structured_content["matches"]) == [
        "notes.txt",
        "secret.txt",
    ]


async def test_symlinks_that_stay_inside_are_followed(tree: Path) -> None:
    os.symlink(tree / "b" / "secret.txt", tree / "a" / "absolute")
    os.symlink("../b", tree / "a" / "to-b")
    os.symlink("to-b/../a/to-b/secret.txt", tree / "a" / "chained")
    os.symlink("loop-2", tree / "a" / "loop-1")
    os.symlink("loop-1", tree / "a" / "loop-2")
    async with filesystem(tree) as client:
        reads = [
            await client.call_tool("read_file", {"path": f"a/{name}"})
            for name in ("absolute", "chained", "to-b/secret.txt", "to-b/../a/notes.txt")
        ]
        listing = await client.call_tool("list_directory", {"path": "a/to-b"})
        info = await client.call_tool("get_file_info", {"path": "a/chained"})
        loop = await client.call_tool("read_file", {"path": "a/loop-1"})
        nul = await client.call_tool("read_file", {"path": "a/\x00"})
    assert [text_of(read) for read in reads] == ["top secret"] * 3 + ["hello notes\nsecond line\n"]
    assert wire(listing)["structuredContent"]["path"] == str(tree.resolve() / "b")
    assert wire(info)["structuredContent"]["path"] == str(tree.resolve() / "b" / "secret.txt")
    assert loop.is_error is True and "Too many levels of symbolic links: 'a/loop-1'" in text_of(
        loop
    )
    assert_refused(nul, "a path cannot contain NUL")
    async with filesystem(tree, roots=[(tree / "a").as_uri()]) as client:
        narrowed = await client.call_tool("read_file", {"path": "chained"})
    assert_refused(narrowed, "'chained' is outside the allowed roots (the client's roots")


async def test_deep_paths_and_trees_are_bounded(tree: Path) -> None:
    """A walk holds two descriptors however deep the path; a search goes 32 directories
    deep at most, and says it left something out."""
    at_32 = tree.joinpath("deep", *["d"] * 32)
    at_33 = at_32 / "d"
    at_33.mkdir(parents=True)
    (at_32 / "at-32.txt").write_text("32")
    (at_33 / "at-33.txt").write_text("33")
    there_and_back = "deep/" + "d/" * 33 + "../" * 33 + "d/" * 32 + "at-32.txt"
    async with filesystem(tree) as client:
        found = await client.call_tool("search", {"pattern": "at-*", "path": "deep"})
        read = await client.call_tool("read_file", {"path": there_and_back})
        too_long = await client.call_tool("read_file", {"path": "a/" * 2049})
    assert found.structured_content == {
        "matches": [str(at_32.resolve() / "at-32.txt")],
        "scanned": 1,
        "truncated": True,
    }
    assert text_of(read) == "32"
    assert_refused(too_long, "a path cannot be longer than 4096 characters")


async def test_absolute_paths_may_use_the_configured_and_the_clients_spellings(
    tree: Path,
) -> None:
    alias = tree.parent / "alias"
    os.symlink(tree, alias)
    async with filesystem(alias) as client:
        as_configured = await client.call_tool("read_file", {"path": str(alias / "a/notes.txt")})
        as_real = await client.call_tool("read_file", {"path": str(tree / "b/secret.txt")})
        out = await client.call_tool("read_file", {"path": str(alias / "../outside.txt")})
    assert text_of(as_configured) == "hello notes\nsecond line\n"
    assert text_of(as_real) == "top secret"
    assert_refused(out, "is outside the allowed roots")
    async with filesystem(tree, roots=[(alias / "a").as_uri()]) as client:
        inside = await client.call_tool("read_file", {"path": str(alias / "a/notes.txt")})
        sibling = await client.call_tool("read_file", {"path": str(alias / "a/../b/secret.txt")})
    assert text_of(inside) == "hello notes\nsecond line\n"
    assert_refused(sibling, "is outside the allowed roots (the client's roots")


# -- the client's roots --------------------------------------------------------------------


async def test_client_roots_narrow_the_root(tree: Path) -> None:
    roots = [(tree / "a").as_uri()]
    async with filesystem(tree, roots=roots) as client:
        allowed = await client.call_tool("list_allowed_directories")
        inside = await client.call_tool("read_file", {"path": "notes.txt"})  # relative to a/
        outside_roots = await client.call_tool("read_file", {"path": str(tree / "b/secret.txt")})
        sibling = await client.call_tool("read_file", {"path": "../b/secret.txt"})
        found = await client.call_tool("search", {"pattern": "*", "path": str(tree)})
    assert allowed.structured_content == {"result": [str(tree.resolve() / "a")]}
    assert text_of(inside) == "hello notes\nsecond line\n"
    assert_refused(outside_roots, "the client's roots")
    assert_refused(sibling)
    assert_refused(found)


async def test_root_changes_apply_to_the_next_call(tree: Path) -> None:
    async with filesystem(tree, roots=[(tree / "a").as_uri()]) as client:
        before = await client.call_tool("read_file", {"path": str(tree / "b/secret.txt")})
        await client.set_roots([(tree / "b").as_uri(), "https://example.com/not-a-file"])
        after = await client.call_tool("read_file", {"path": str(tree / "b/secret.txt")})
        notes = await client.call_tool("read_file", {"path": str(tree / "a/notes.txt")})
    assert_refused(before)
    assert text_of(after) == "top secret"
    assert_refused(notes)


async def test_client_roots_cannot_widen_the_configured_root(tree: Path) -> None:
    roots = [tree.parent.as_uri(), Path("/").as_uri()]  # both contain the configured root
    async with filesystem(tree / "a", roots=roots) as client:
        allowed = await client.call_tool("list_allowed_directories")
        escape = await client.call_tool("read_file", {"path": str(tree / "b/secret.txt")})
    assert allowed.structured_content == {"result": [str(tree.resolve() / "a")]}
    assert_refused(escape)


async def test_a_client_with_no_roots_gets_nothing(tree: Path) -> None:
    async with filesystem(tree, roots=[]) as client:
        read = await client.call_tool("read_file", {"path": "a/notes.txt"})
        unrelated = await client.call_tool("list_allowed_directories")
    assert_refused(read, "no directory is allowed")
    assert unrelated.structured_content == {"result": []}


async def test_client_roots_can_be_ignored_by_setting(tree: Path) -> None:
    async with filesystem(tree, roots=[(tree / "a").as_uri()], use_client_roots=False) as client:
        read = await client.call_tool("read_file", {"path": "b/secret.txt"})
    assert text_of(read) == "top secret"


def test_file_uris() -> None:
    assert file_uri_path("file:///tmp/a%20b") == Path("/tmp/a b")
    assert file_uri_path("file://localhost/tmp") == Path("/tmp")
    assert file_uri_path("file://other-host/tmp") is None
    assert file_uri_path("https://example.com/") is None


# -- writing -------------------------------------------------------------------------------


async def test_writing_is_off_by_default(tree: Path) -> None:
    async with filesystem(tree) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        with pytest.raises(McpError) as unknown:
            await client.call_tool("write_file", {"path": "a/new.txt", "content": "x"})
    assert "write_file" not in tools and "create_directory" not in tools
    assert all(tool.annotations.read_only_hint is True for tool in tools.values())  # type: ignore[union-attr]
    assert unknown.value.code == errors.INVALID_PARAMS
    assert not (tree / "a" / "new.txt").exists()


async def test_writing_when_allowed_stays_inside(tree: Path) -> None:
    async with filesystem(tree, allow_write=True, roots=[(tree / "a").as_uri()]) as client:
        created = await client.call_tool("create_directory", {"path": "new/deeper"})
        deep = await client.call_tool("create_directory", {"path": "/".join(["d"] * 60)})
        written = await client.call_tool("write_file", {"path": "new/deeper/x.txt", "content": "é"})
        replaced = await client.call_tool("write_file", {"path": "notes.txt", "content": "v2"})
        outside = await client.call_tool(
            "write_file", {"path": str(tree / "b" / "x.txt"), "content": "no"}
        )
        through_link = await client.call_tool("write_file", {"path": "link-out", "content": "no"})
        onto_root = await client.call_tool("write_file", {"path": ".", "content": "no"})
    assert created.is_error is not True and written.is_error is not True, (created, written)
    assert text_of(written) == f"wrote 2 bytes to {tree.resolve() / 'a/new/deeper/x.txt'}"
    assert (tree / "a/new/deeper/x.txt").read_text() == "é"
    assert deep.is_error is not True and (tree / "a").joinpath(*["d"] * 60).is_dir()
    assert replaced.is_error is not True and (tree / "a/notes.txt").read_text() == "v2"
    assert_refused(outside)
    assert_refused(through_link)
    assert onto_root.is_error is True and "Is a directory" in text_of(onto_root)
    assert not (tree / "b" / "x.txt").exists()
    assert (tree.parent / "outside.txt").read_text() == "outside the root"
    assert sorted(p.name for p in (tree / "a").iterdir() if p.name.startswith(".")) == []


# -- reading details -----------------------------------------------------------------------


async def test_read_file_slices_and_refuses_binary(tree: Path) -> None:
    (tree / "a" / "utf8.txt").write_text("aé" * 3)  # 9 bytes; é is 2 bytes
    async with filesystem(tree, max_read_bytes=4) as client:
        first = await client.call_tool("read_file", {"path": "a/utf8.txt"})
        cut = await client.call_tool("read_file", {"path": "a/utf8.txt", "offset": 1})
        binary = await client.call_tool("read_file", {"path": "a/data.bin"})
        directory = await client.call_tool("read_file", {"path": "a"})
    assert [wire(block)["text"] for block in first.content] == [
        "aéa",
        "[5 more bytes: continue with offset=4]",
    ]
    # bytes 1-4 end inside the second "é": it is left for the next call
    assert [wire(block)["text"] for block in cut.content] == [
        "éa",
        "[5 more bytes: continue with offset=4]",
    ]
    assert binary.is_error is True and "not UTF-8 text" in text_of(binary)
    assert directory.is_error is True and "not a regular file" in text_of(directory)


async def test_search_by_name_and_content(tree: Path) -> None:
    async with filesystem(tree, max_results=1) as client:
        by_name = await client.call_tool("search", {"pattern": "*.TXT", "contains": "secret"})
        capped = await client.call_tool("search", {"pattern": "*.txt"})
    assert by_name.structured_content == {
        "matches": [str(tree.resolve() / "b" / "secret.txt")],
        "scanned": 5,
        "truncated": False,
    }
    assert capped.structured_content is not msgspec.UNSET
    assert len(capped.structured_content["matches"]) == 1
    assert capped.structured_content["truncated"] is True


async def test_files_as_resources(tree: Path) -> None:
    async with filesystem(tree, roots=[(tree / "a").as_uri()]) as client:
        templates = await client.list_resource_templates()
        notes = await client.read_resource((tree / "a" / "notes.txt").as_uri())
        binary = await client.read_resource((tree / "a" / "data.bin").as_uri())
        with pytest.raises(McpError) as denied:
            await client.read_resource((tree / "b" / "secret.txt").as_uri())
        with pytest.raises(McpError) as missing:
            await client.read_resource((tree / "a" / "nope.txt").as_uri())
    assert [t.uri_template for t in templates] == ["file:///{+path}"]
    assert wire(notes)["contents"] == [
        {
            "uri": (tree / "a" / "notes.txt").as_uri(),
            "mimeType": "text/plain",
            "text": "hello notes\nsecond line\n",
        }
    ]
    assert wire(binary)["contents"][0]["blob"] == "//4AYmluYXJ5"
    assert denied.value.code == errors.INVALID_PARAMS
    assert missing.value.code == errors.RESOURCE_NOT_FOUND


# -- as a user runs it ---------------------------------------------------------------------


async def test_run_filesystem_over_stdio_with_settings_from_the_environment(tree: Path) -> None:
    """``mcp-actors run filesystem`` with ``MCP_ACTORS_FILESYSTEM_ROOT`` and the client's roots."""
    env = {"MCP_ACTORS_FILESYSTEM_ROOT": str(tree)}
    handlers = ClientHandlers(roots=[(tree / "b").as_uri()])
    async with connect("stdio", "filesystem", env=env, handlers=handlers) as client:
        allowed = await client.call_tool("list_allowed_directories")
        secret = await client.call_tool("read_file", {"path": "secret.txt"})
        notes = await client.call_tool("read_file", {"path": str(tree / "a" / "notes.txt")})
        tools = {tool.name for tool in await client.list_tools()}
    assert allowed.structured_content == {"result": [str(tree.resolve() / "b")]}
    assert text_of(secret) == "top secret"
    assert_refused(notes)
    assert "write_file" not in tools


@pytest.mark.parametrize("off", ["False", "no", "OFF", "0"])
async def test_writing_stays_off_when_the_environment_says_so(tree: Path, off: str) -> None:
    """``MCP_ACTORS_FILESYSTEM_ALLOW_WRITE=False`` must not read as the true string "False"."""
    env = {"MCP_ACTORS_FILESYSTEM_ROOT": str(tree), "MCP_ACTORS_FILESYSTEM_ALLOW_WRITE": off}
    async with connect("stdio", "filesystem", env=env) as client:
        tools = {tool.name for tool in await client.list_tools()}
        with pytest.raises(McpError):
            await client.call_tool("write_file", {"path": "a/new.txt", "content": "x"})
    assert "write_file" not in tools and "create_directory" not in tools
    assert not (tree / "a" / "new.txt").exists()


async def test_a_quoted_bool_in_the_config_file_is_refused(tree: Path) -> None:
    config = tree.parent / "settings.toml"
    config.write_text(f'[plugins.filesystem]\nroot = "{tree}"\nallow_write = "false"\n')
    with trio.fail_after(60):
        result = await trio.run_process(
            [sys.executable, "-m", "mcp_actors.cli", "run", "filesystem", "--config", str(config)],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert result.returncode == 2
    assert (
        "allow_write: expected a bool (true or false, unquoted), got the string 'false'"
        f" (from {config} [plugins.filesystem] allow_write)"
    ) in result.stderr.decode()


async def test_a_bad_root_is_reported(tmp_path: Path) -> None:
    with trio.fail_after(60):
        result = await trio.run_process(
            [sys.executable, "-m", "mcp_actors.cli", "run", "filesystem"],
            env={**os.environ, "MCP_ACTORS_FILESYSTEM_ROOT": str(tmp_path / "missing")},
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert result.returncode == 2
    assert b"failed to build its server: ValueError: root" in result.stderr


# -- races and hostile files ---------------------------------------------------------------


class Swapper:
    """A thread that flips names inside the root between inside and outside, as fast as
    it can, until stopped (at most ``limit`` flips):

    - ``target``: a regular file (``inside``) <-> a symlink to ``tmp/secret.txt``;
    - ``sub``: a real directory <-> a symlink to the directory ``tmp/outside``.
    """

    def __init__(self, root: Path, outside: Path, secret: Path, *, limit: int = 1_000_000) -> None:
        self.root, self.outside, self.secret = root, outside, secret
        self.limit = limit
        self.flips = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        root = self.root
        while not self.stop.is_set() and self.flips < self.limit:
            os.symlink(self.secret, root / ".link")
            os.replace(root / ".link", root / "target")
            os.rename(root / "sub", root / ".sub-parked")
            os.symlink(self.outside, root / "sub")
            time.sleep(0)
            os.link(root / "inside.txt", root / ".file")
            os.replace(root / ".file", root / "target")
            os.unlink(root / "sub")
            os.rename(root / ".sub-parked", root / "sub")
            self.flips += 1
            time.sleep(0)

    def __enter__(self) -> Swapper:
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop.set()
        self.thread.join(timeout=30)


async def test_a_symlink_swapped_during_reads_and_writes_never_escapes(tmp_path: Path) -> None:
    """Check-then-open is a race: a name checked as inside the root can be a symlink to
    outside by the time it is opened. 1,500 rounds of two reads (a swapped file, a file
    below a swapped directory), and every third round a write to each and a listing of
    the directory, every tenth a content search, while a thread flips them."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("OUTSIDE")
    (outside / "inner.txt").write_text("OUTSIDE")
    (outside / "only-outside.txt").write_text("OUTSIDE")
    (root / "inside.txt").write_text("inside")
    (root / "sub" / "inner.txt").write_text("inside")
    os.link(root / "inside.txt", root / "target")
    outside_before = sorted(os.listdir(outside))
    rounds, reads, escapes, inside_reads, other_escapes = 1500, 0, 0, 0, []
    async with filesystem(root, allow_write=True) as client:
        with Swapper(root, outside, secret) as swapper:
            for round in range(rounds):
                for path in ("target", "sub/inner.txt"):
                    result = await client.call_tool("read_file", {"path": path})
                    reads += 1
                    if not result.is_error:
                        escapes += "OUTSIDE" in text_of(result)
                        inside_reads += text_of(result) == "inside"
                if round % 3 == 0:
                    await client.call_tool("write_file", {"path": "sub/new.txt", "content": "w"})
                    await client.call_tool("write_file", {"path": "target", "content": "w"})
                    listing = await client.call_tool("list_directory", {"path": "sub"})
                    if "only-outside.txt" in json.dumps(wire(listing)):
                        other_escapes.append(f"round {round}: listed the outside directory")
                if round % 10 == 0:
                    found = await client.call_tool(
                        "search", {"pattern": "*", "contains": "OUTSIDE"}
                    )
                    if found.structured_content and found.structured_content["matches"]:
                        other_escapes.append(f"round {round}: searched outside")
        flips = swapper.flips
    written_outside = sorted(set(os.listdir(outside)) - set(outside_before))
    assert (escapes, written_outside, other_escapes) == (0, [], []), (
        f"{escapes} of {reads} reads returned the outside file; written outside:"
        f" {written_outside}; {other_escapes[:5]} ({len(other_escapes)} in all); {flips} flips"
    )
    assert secret.read_text() == "OUTSIDE" and (outside / "inner.txt").read_text() == "OUTSIDE"
    assert inside_reads > 0 and flips > 0, (inside_reads, flips)


async def test_a_fifo_under_the_root_is_skipped_not_waited_for(tree: Path) -> None:
    """Opening a FIFO for reading blocks until someone writes to it: never open one."""
    os.mkfifo(tree / "a" / "pipe.txt")
    async with filesystem(tree) as client:
        with trio.fail_after(10):  # a hang guard, not a timing assertion
            found = await client.call_tool("search", {"pattern": "*.txt", "contains": "notes"})
            by_name = await client.call_tool("search", {"pattern": "pipe*"})
            read = await client.call_tool("read_file", {"path": "a/pipe.txt"})
            with pytest.raises(McpError) as resource:
                await client.read_resource((tree / "a" / "pipe.txt").as_uri())
    assert found.structured_content is not msgspec.UNSET
    assert found.structured_content["matches"] == [str(tree.resolve() / "a" / "notes.txt")]
    assert by_name.structured_content == {"matches": [], "scanned": 6, "truncated": False}
    assert read.is_error is True and "not a regular file" in text_of(read)
    assert resource.value.code == errors.RESOURCE_NOT_FOUND


async def test_cancelled_calls_do_not_starve_the_file_tools(tree: Path) -> None:
    """60 searches are cancelled while they run (some would block on a FIFO, some scan a
    large tree); afterwards a read is still served — the cancelled calls do not keep the
    worker threads."""
    os.mkfifo(tree / "a" / "pipe.txt")
    for index in range(300):
        (tree / "b" / f"file{index:03}.txt").write_text("x" * 1000)
    async with filesystem(tree, max_read_bytes=10_000_000) as client:
        async with trio.open_nursery() as nursery:
            for _ in range(60):
                nursery.start_soon(
                    partial(client.call_tool, "search", {"pattern": "*", "contains": "absent"})
                )
            await trio.sleep(0.5)
            nursery.cancel_scope.cancel()
        with trio.fail_after(10):  # a hang guard, not a timing assertion
            read = await client.call_tool("read_file", {"path": "a/notes.txt"})
    assert text_of(read) == "hello notes\nsecond line\n"


def make_sparse(path: Path, size: int) -> None:
    """A file of ``size`` zero bytes that takes no disk space."""
    with path.open("wb") as file:
        file.truncate(size)


async def test_a_cancelled_call_gives_its_worker_thread_back(tree: Path) -> None:
    """With one worker thread, a search that would read 20 GB (sparse files) is cancelled
    after half a second; the next call gets the thread at once, not after the search —
    the work stops at its next chunk instead of running on abandoned."""
    big = tree / "big"
    big.mkdir()
    for index in range(1000):
        make_sparse(big / f"{index:04}.bin", 20_000_000)
    async with filesystem(tree, max_threads=1, max_read_bytes=20_000_000) as client:
        with trio.move_on_after(0.5):
            await client.call_tool("search", {"pattern": "*", "path": "big", "contains": "x"})
        with trio.fail_after(10):  # a hang guard: the whole search takes minutes
            read = await client.call_tool("read_file", {"path": "a/notes.txt"})
    assert text_of(read) == "hello notes\nsecond line\n"
