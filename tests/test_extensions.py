"""Extensions: negotiation in both eras, the Skills extension, MCP Apps, a custom extension.

Served by ``servers.extensions`` (the everything plugin's skills fixtures, a ``ui://``
view, and ``com.example/echo`` with a method of its own) and checked with our client
over every transport, in the legacy era (``initialize``) and the modern one
(``server/discover`` and per-request ``_meta``). The expected manifests are computed
here from the files on disk, independently of the server's code.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from mcp import Client as SdkClient
from mcp import StdioServerParameters
from mcp.client.extension import ClientExtension
from msgspec import UNSET

from mcp_actors import McpError, MessageStream, Outgoing, Server, memory_pair, open_client
from mcp_actors.client.skills import SkillVerificationError, verify_skill_file
from mcp_actors.protocol import errors
from mcp_actors.protocol import skills as s
from mcp_actors.protocol import types as t
from mcp_actors.protocol.errors import ProtocolViolation
from mcp_actors.protocol.frontmatter import FrontmatterError, parse_frontmatter
from mcp_actors.protocol.methods import METHODS, MethodSpec, register_method
from mcp_actors.server.apps import APP_MIME_TYPE, UI_EXTENSION, add_ui_resource, ui_tool_meta
from mcp_actors.server.extensions import Extension
from mcp_actors.server.skills import (
    MAX_FILES_PER_SKILL,
    SkillError,
    read_library,
    serve_skills,
)
from mcp_actors_everything.server import SKILLS_DIRECTORY

from conftest import CONNECTORS, HYPERCORN, TESTS, connect
from servers.extensions import DASHBOARD, ECHO_EXTENSION

SERVER = "servers.extensions:server"
ERAS = ["legacy", "modern"]
#: Every transport in both eras, but legacy SSE, which has only the legacy one.
TRANSPORT_ERAS = [
    (transport, era)
    for transport in sorted(CONNECTORS)
    for era in ERAS
    if not (transport.removesuffix(HYPERCORN) == "sse" and era == "modern")
]


def expected_manifest(skill_path: str) -> list[s.SkillResource]:
    """Every file under the skill's directory, with digest and size, from the disk."""
    directory = SKILLS_DIRECTORY / skill_path
    return [
        s.SkillResource(
            uri=f"skill://{path.relative_to(SKILLS_DIRECTORY).as_posix()}",
            digest="sha256:" + hashlib.sha256(path.read_bytes()).hexdigest(),
            size=len(path.read_bytes()),
        )
        for path in sorted(directory.rglob("*"), key=lambda path: path.as_posix())
        if path.is_file()
    ]


@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERAS)
async def test_skills_are_listed_got_and_read_verified(transport: str, era: str) -> None:
    async with connect(transport, SERVER, era=era) as client:
        assert client.server_extension(s.SKILLS_EXTENSION) == {"directoryRead": True}
        skills = await client.list_skills()
        assert [skill.uri for skill in skills] == [
            "skill://acme/billing/refunds/SKILL.md",
            "skill://git-workflow/SKILL.md",
            "skill://pdf-processing/SKILL.md",
        ]
        pdf = skills[2]
        assert pdf.frontmatter == {
            "name": "pdf-processing",
            "description": "Extract, fill, and assemble PDF documents",
            "license": "Apache-2.0",
            "metadata": {"version": "2.1.0"},
        }
        assert isinstance(pdf.resources, list)
        by_uri = sorted(pdf.resources, key=lambda resource: resource.uri)
        assert by_uri == expected_manifest("pdf-processing")
        assert await client.get_skill(pdf.uri) == pdf
        if era == "modern":  # cacheable results: the server's hints (default: 0, private)
            assert (skills.ttl_ms, skills.cache_scope) == (0, "private")
        data = await client.read_skill_file(pdf, "skill://pdf-processing/references/FORMS.md")
        assert data == (SKILLS_DIRECTORY / "pdf-processing/references/FORMS.md").read_bytes()
        skill_md = await client.read_skill_file(pdf, pdf.uri)
        assert skill_md.startswith(b"---\nname: pdf-processing\n")
        listed = {resource.uri: resource for resource in await client.list_resources()}
        assert listed[pdf.uri].name == "pdf-processing"
        assert listed[pdf.uri].description == "Extract, fill, and assemble PDF documents"
        assert listed[pdf.uri].mime_type == "text/markdown"


@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERAS)
async def test_directories_list_their_direct_children(transport: str, era: str) -> None:
    async with connect(transport, SERVER, era=era) as client:
        root = await client.read_directory("skill://pdf-processing")
        assert {(child.uri, child.mime_type) for child in root} == {
            ("skill://pdf-processing/SKILL.md", "text/markdown"),
            ("skill://pdf-processing/references", s.DIRECTORY_MIME_TYPE),
            ("skill://pdf-processing/scripts", s.DIRECTORY_MIME_TYPE),
            ("skill://pdf-processing/templates", s.DIRECTORY_MIME_TYPE),
        }
        templates = await client.read_directory("skill://pdf-processing/templates")
        assert [child.name for child in templates] == [
            "invoice.md",
            "purchase-order.md",
            "regional",
        ]
        prefix = await client.read_directory("skill://acme")
        assert [(child.uri, child.mime_type) for child in prefix] == [
            ("skill://acme/billing", s.DIRECTORY_MIME_TYPE)
        ]


@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERAS)
async def test_unknown_skills_and_non_directories_are_invalid_params(
    transport: str, era: str
) -> None:
    async with connect(transport, SERVER, era=era) as client:
        with pytest.raises(McpError) as unknown:
            await client.get_skill("skill://no-such-skill/SKILL.md")
        assert unknown.value.code == errors.INVALID_PARAMS
        assert "No skill is served at skill://no-such-skill/SKILL.md" in unknown.value.message
        with pytest.raises(McpError) as file:
            await client.read_directory("skill://pdf-processing/SKILL.md")
        assert file.value.code == errors.INVALID_PARAMS
        assert "is not a directory resource" in file.value.message
        with pytest.raises(McpError) as nothing:
            await client.read_directory("skill://elsewhere")
        assert nothing.value.code == errors.INVALID_PARAMS


async def test_listing_pages_never_split_an_entry() -> None:
    server = Server("paged", page_size=1)
    serve_skills(server, SKILLS_DIRECTORY)
    async with open_client(server) as client:
        skills = await client.list_skills()
        assert [skill.frontmatter["name"] for skill in skills] == [
            "refunds",
            "git-workflow",
            "pdf-processing",
        ]
        assert len(await client.read_directory("skill://pdf-processing/templates")) == 3


@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERAS)
async def test_each_side_sees_what_the_other_declared(transport: str, era: str) -> None:
    capabilities = t.ClientCapabilities(
        extensions={ECHO_EXTENSION: {"volume": 11}, UI_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}}
    )
    async with connect(transport, SERVER, era=era, capabilities=capabilities) as client:
        assert client.server_extension(ECHO_EXTENSION) == {"loud": True}
        assert client.server_extension(UI_EXTENSION) == {}
        assert client.server_extension("com.example/absent") is None
        result = await client.call_tool("client_extensions")
        if transport.removesuffix(HYPERCORN) == "http-stateless" and era == "legacy":
            # each POST is a session of its own that never saw the initialize: the
            # server cannot know what the client declared (the modern era says per request)
            assert result.structured_content == {"echo": None, "ui": None}
        else:
            assert result.structured_content == {
                "echo": {"volume": 11},
                "ui": {"mimeTypes": [APP_MIME_TYPE]},
            }
            rendered = await client.call_tool("get_weather", {"city": "Oslo"})
            assert rendered.content == [t.TextContent(text="Oslo: sunny (dashboard)")]
        shouted = await client.request("echo/shout", {"text": "hello"})
        assert shouted.text == "HELLO"
    async with connect(transport, SERVER, era=era) as client:  # declares no extension
        result = await client.call_tool("client_extensions")
        assert result.structured_content == {"echo": None, "ui": None}
        plain = await client.call_tool("get_weather", {"city": "Oslo"})
        assert plain.content == [t.TextContent(text="Oslo: sunny (text)")]


@pytest.mark.parametrize("era", ERAS)
async def test_a_server_without_the_extension_gets_no_extension_request(era: str) -> None:
    async with connect("memory", "servers.sample:server", era=era) as client:
        assert client.server_extension(s.SKILLS_EXTENSION) is None
        with pytest.raises(ProtocolViolation, match=r"extensions\.io\.modelcontextprotocol/skills"):
            await client.list_skills()


@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERAS)
async def test_an_app_view_is_linked_from_its_tool(transport: str, era: str) -> None:
    async with connect(transport, SERVER, era=era) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert tools["get_weather"].meta == {
            "ui": {"resourceUri": DASHBOARD, "visibility": ["model", "app"]}
        }
        listed = {resource.uri: resource for resource in await client.list_resources()}
        assert listed[DASHBOARD].mime_type == APP_MIME_TYPE
        read = await client.read_resource(DASHBOARD)
        (view,) = read.contents
        assert view.mime_type == APP_MIME_TYPE
        assert isinstance(view.text, str) and view.text.startswith("<!DOCTYPE html>")
        assert view.meta == {
            "ui": {"csp": {"connectDomains": ["https://api.example.com"]}, "prefersBorder": True}
        }


# -- the pieces, without a connection --------------------------------------------------


def write_skill(
    root: Path, path: str, frontmatter: str, files: dict[str, bytes] | None = None
) -> None:
    directory = root / path
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "SKILL.md").write_text(f"---\n{frontmatter}---\n\nInstructions.\n")
    for name, data in (files or {}).items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_bytes(data)


@pytest.mark.parametrize(
    ("path", "frontmatter", "message"),
    [
        ("tools", "name: other\ndescription: d\n", "must equal its directory 'tools'"),
        ("Bad--Name", "name: Bad--Name\ndescription: d\n", "lowercase letters"),
        ("quiet", "name: quiet\n", "non-empty description"),
        ("anchor", "name: anchor\ndescription: &a d\n", "anchors, aliases, tags"),
        ("flow", "name: flow\ndescription: [a, b]\n", "flow collections"),
    ],
)
def test_a_malformed_skill_is_refused_with_its_reason(
    tmp_path: Path, path: str, frontmatter: str, message: str
) -> None:
    write_skill(tmp_path, path, frontmatter)
    server = Server("refusing")
    with pytest.raises(SkillError, match=message):
        serve_skills(server, tmp_path)
    assert server.extensions == {}
    assert server.capabilities().resources is UNSET


def test_a_skill_over_the_file_limit_is_refused(tmp_path: Path) -> None:
    files = {f"f/{index}.txt": b"x" for index in range(MAX_FILES_PER_SKILL)}
    write_skill(tmp_path, "big", "name: big\ndescription: d\n", files)
    with pytest.raises(SkillError, match="513 files, over the limit of 512"):
        read_library(tmp_path)


def test_hidden_files_and_links_are_not_served(tmp_path: Path) -> None:
    write_skill(tmp_path, "tidy", "name: tidy\ndescription: d\n", {".git/HEAD": b"ref"})
    (tmp_path / "tidy" / "link.md").symlink_to(tmp_path / "tidy" / "SKILL.md")
    library = read_library(tmp_path)
    assert list(library.files) == ["skill://tidy/SKILL.md"]


async def test_reload_serves_what_the_directory_holds_now(tmp_path: Path) -> None:
    write_skill(tmp_path, "notes", "name: notes\ndescription: d\n", {"a.md": b"one"})
    server = Server("reloading")
    library = serve_skills(server, tmp_path)
    (tmp_path / "notes" / "a.md").unlink()
    (tmp_path / "notes" / "b.md").write_bytes(b"two")
    library.reload()
    async with open_client(server) as client:
        assert [resource.uri for resource in await client.list_resources()] == [
            "skill://notes/SKILL.md",
            "skill://notes/b.md",
        ]
    (entry,) = [skill.entry for skill in library.skills]
    assert [resource.uri for resource in entry.resources] == [  # type: ignore[union-attr]
        "skill://notes/SKILL.md",
        "skill://notes/b.md",
    ]
    (tmp_path / "notes" / "SKILL.md").write_text("no frontmatter")
    with pytest.raises(SkillError, match="must begin with a '---' line"):
        library.reload()
    assert [skill.name for skill in library.skills] == ["notes"]  # the previous one stays


def test_verification_refuses_content_that_differs() -> None:
    data = b"---\nname: x\ndescription: d\n---\n"
    skill = s.Skill(
        uri="skill://x/SKILL.md",
        frontmatter={"name": "x", "description": "d"},
        resources=[
            s.SkillResource(
                uri="skill://x/SKILL.md",
                digest="sha256:" + hashlib.sha256(data).hexdigest(),
                size=len(data),
            )
        ],
    )
    verify_skill_file(skill, skill.uri, data)
    with pytest.raises(SkillVerificationError, match="bytes read, the entry says"):
        verify_skill_file(skill, skill.uri, data + b"\n")
    with pytest.raises(SkillVerificationError, match="digest"):
        verify_skill_file(skill, skill.uri, data.replace(b"x", b"y"))
    with pytest.raises(SkillVerificationError, match="not listed"):
        verify_skill_file(skill, "skill://x/extra.md", b"")
    other = s.Skill(
        uri=skill.uri, frontmatter={"name": "x", "description": "e"}, resources="dynamic"
    )
    with pytest.raises(SkillVerificationError, match="frontmatter differs"):
        verify_skill_file(other, skill.uri, data)


def test_extensions_are_checked_when_added() -> None:
    server = Server("checked")

    async def handler(*args: object) -> None:
        return None

    with pytest.raises(ValueError, match="with a dotted vendor prefix"):
        Extension("no-prefix")
    server.add_extension(Extension("com.example/one", handlers={"one/do": handler}))
    with pytest.raises(ValueError, match="already offered"):
        server.add_extension(Extension("com.example/one"))
    with pytest.raises(ValueError, match=r"already handled by com\.example/one"):
        server.add_extension(Extension("com.example/two", handlers={"one/do": handler}))
    with pytest.raises(ValueError, match="the core protocol"):
        server.add_extension(Extension("com.example/three", handlers={"tools/call": handler}))
    with pytest.raises(ValueError, match="declared by the server itself"):
        server.add_extension(Extension(t.TASKS_EXTENSION))
    server.add_extension(Extension("com.example/one", {"v": 2}), replace=True)
    assert server.extensions == {"com.example/one": {"v": 2}}
    assert server.extension_handler("one/do") is None
    server.remove_extension("com.example/one")
    assert server.capabilities().extensions is UNSET


@pytest.mark.parametrize("era", ERAS)
async def test_a_server_answers_an_undeclared_extension_method_with_method_not_found(
    era: str,
) -> None:
    """A peer that sends ``skills/list`` anyway (our client refuses to) gets -32601 from a
    server without the extension, and ``resources/directory/read`` from one that has the
    extension without ``directoryRead``; the session goes on."""
    bare, no_directories = Server("bare"), Server("no-directories")
    bare.resource("note://a")(lambda: "a")
    serve_skills(no_directories, SKILLS_DIRECTORY, directory_read=False)
    meta = (
        {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        if era == "modern"
        else None
    )
    for server, method, params in [
        (bare, "skills/list", {}),
        (no_directories, "resources/directory/read", {"uri": "skill://pdf-processing"}),
    ]:
        client_end, server_end = memory_pair()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.serve_session, server_end)
            if meta is None:
                initialize = {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                }
                await exchange(client_end, 0, "initialize", initialize)
                await client_end.send_all(
                    [Outgoing(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')]
                )
            if meta is not None:
                params = {**params, "_meta": meta}
            answer = await exchange(client_end, 1, method, params)
            assert answer["error"]["code"] == errors.METHOD_NOT_FOUND, answer
            if method == "resources/directory/read":  # the rest of the extension is served
                params = {"uri": "skill://git-workflow/SKILL.md"}
                if meta is not None:
                    params["_meta"] = meta
                answer = await exchange(client_end, 2, "skills/get", params)
                assert answer["result"]["skill"]["frontmatter"]["name"] == "git-workflow"
            nursery.cancel_scope.cancel()


async def exchange(stream: MessageStream, request_id: int, method: str, params: object) -> Any:
    """Send one raw request and return the decoded answer to it."""
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    await stream.send_all([Outgoing(json.dumps(message).encode())])
    with trio.fail_after(10):
        while True:
            answer = json.loads(await stream.receive())
            if answer.get("id") == request_id:
                return answer


class SdkAppsExtension(ClientExtension):
    """The official SDK's client declaring the Apps extension (it renders HTML views)."""

    identifier = UI_EXTENSION

    def settings(self) -> dict[str, Any]:
        return {"mimeTypes": [APP_MIME_TYPE]}


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
async def test_the_sdk_client_negotiates_extensions_and_reads_skill_files(
    mode: str, version: str
) -> None:
    """The official Python SDK as the peer: it sees what our server declares, our tools see
    what it declares, and the skill files it reads are the bytes the manifest describes."""
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_actors.cli", "run", SERVER], cwd=str(TESTS)
    )
    async with SdkClient(parameters, mode=mode, extensions=[SdkAppsExtension()]) as client:  # type: ignore[arg-type]
        assert client.protocol_version == version
        declared = client.server_capabilities.extensions
        assert declared is not None
        assert declared[s.SKILLS_EXTENSION] == {"directoryRead": True}
        seen = await client.call_tool("client_extensions", {})
        assert seen.structured_content == {"echo": None, "ui": {"mimeTypes": [APP_MIME_TYPE]}}
        manifest = {entry.uri: entry for entry in expected_manifest("pdf-processing")}
        for uri in ("skill://pdf-processing/SKILL.md", "skill://pdf-processing/scripts/extract.sh"):
            read = await client.read_resource(uri)
            text = read.contents[0].text  # type: ignore[union-attr]
            data = text.encode()
            assert "sha256:" + hashlib.sha256(data).hexdigest() == manifest[uri].digest
            assert len(data) == manifest[uri].size


def test_a_method_has_one_row_whoever_registers_it() -> None:
    row = METHODS["skills/list"]
    register_method(row)  # the same row again: nothing changes
    assert METHODS["skills/list"] is row
    other = MethodSpec("skills/list", "client", t.PaginatedParams, t.EmptyResult)
    with pytest.raises(ValueError, match="already defined differently"):
        register_method(other)
    assert METHODS["skills/list"] is row


def test_app_links_are_checked() -> None:
    assert ui_tool_meta("ui://a/b", visibility=["app"]) == {
        "ui": {"resourceUri": "ui://a/b", "visibility": ["app"]}
    }
    with pytest.raises(ValueError, match="ui:// scheme"):
        ui_tool_meta("https://example.com/view")
    with pytest.raises(ValueError, match="subset of model, app"):
        ui_tool_meta("ui://a/b", visibility=[])
    with pytest.raises(ValueError, match="ui:// scheme"):
        add_ui_resource(Server("apps"), "file:///view.html", "<html></html>", name="view")


#: Frontmatter blocks and what a YAML 1.2 parser makes of them (checked against the
#: `yaml` npm package the conformance suite compares with).
FRONTMATTER_CASES = [
    (
        "name: a\ndescription: 'it''s # not a comment'\nlicense: Apache-2.0  # comment\n"
        'metadata:\n  version: "2.1.0"\n  n: 3\n  f: 1.5\n  b: true\n  z: ~\n',
        {
            "name": "a",
            "description": "it's # not a comment",
            "license": "Apache-2.0",
            "metadata": {"version": "2.1.0", "n": 3, "f": 1.5, "b": True, "z": None},
        },
    ),
    (
        "name: b\ndescription: |\n  line one\n  line two\n\n  para\nother: x\n",
        {"name": "b", "description": "line one\nline two\n\npara\n", "other": "x"},
    ),
    (
        "name: c\ndescription: >-\n  folded one\n  folded two\n\n  next para\n    indented\n"
        "  back\ntags:\n- a\n- 'b c'\n- 3\nk2:\n  - x\n  - y\n",
        {
            "name": "c",
            "description": "folded one folded two\nnext para\n  indented\nback",
            "tags": ["a", "b c", 3],
            "k2": ["x", "y"],
        },
    ),
    (
        'name: d\ndescription: "esc \\"q\\" \\u00e9 \\n nl"\nurl: http://example.com/a#b\nempty:\n',
        {
            "name": "d",
            "description": 'esc "q" \u00e9 \n nl',
            "url": "http://example.com/a#b",
            "empty": None,
        },
    ),
]


@pytest.mark.parametrize(("block", "expected"), FRONTMATTER_CASES)
def test_frontmatter_reads_as_yaml_does(block: str, expected: dict[str, Any]) -> None:
    assert parse_frontmatter(f"---\n{block}---\n\n# Body\n") == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: x\n", "must begin with a '---' line"),
        ("---\nname: x\n", "no closing '---' line"),
        ("---\nname: x\nname: y\n---\n", "line 3: duplicate key 'name'"),
        ("---\nname: x\n  indented: y\n---\n", "line 3: unexpected indentation"),
        ("---\nname: *alias\n---\n", "line 2: '*alias': anchors"),
        ("---\nname: a: b\n---\n", "cannot contain ': '"),
    ],
)
def test_frontmatter_outside_the_subset_is_refused_with_its_line(text: str, message: str) -> None:
    with pytest.raises(FrontmatterError, match=re.escape(message)):
        parse_frontmatter(text)
