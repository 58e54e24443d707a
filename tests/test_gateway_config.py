"""``gateway.toml``: strict parsing, and ``mcp-actors run gateway.toml`` serving upstreams."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcp_actors import StdioTarget, open_client, types
from mcp_actors.gateway.config import GatewayConfigError, load_gateway, parse_gateway

TESTS = Path(__file__).parent

GATEWAY = f"""
name = "edge"
timing = true
allowed_tools = ["up_add", "up_count", "local_add"]

[rate_limit]
rate = 100.0
burst = 100

[upstreams.up]
command = {sys.executable!r}
args = ["-m", "mcp_actors.cli", "run", "servers.upstream:server"]
cwd = "."

[upstreams.local]
server = "servers.upstream:server"
"""


def test_every_problem_is_listed_at_once() -> None:
    text = """
name = 3
colour = "blue"
[rate_limit]
rate = -1
burst = 0
[upstreams.a]
command = "x"
url = "http://127.0.0.1:1/mcp"
[upstreams.b]
args = ["y"]
era = "ancient"
connect_timeout = "x"
[upstreams.c]
url = "http://127.0.0.1:1/mcp"
connect_timeout = inf
"""
    with pytest.raises(GatewayConfigError) as raised:
        parse_gateway(text, "bad.toml")
    assert raised.value.problems == [
        "name: expected a string, got int 3",
        "top level: extra fields found (colour)",
        "rate_limit: rate must be positive and finite",
        "rate_limit: burst must be at least 1",
        "upstreams.a: give exactly one of command, url or server (got command, url)",
        "upstreams.b.era: expected one of 'auto', 'modern', 'legacy', got the string 'ancient'",
        "upstreams.b.connect_timeout: expected a number, got the string 'x'",
        "upstreams.c: connect_timeout must be positive and finite",
    ]
    assert str(raised.value).startswith("bad gateway config bad.toml: name: expected a string")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[rate_limit]\nrate = nan\n", "rate_limit: rate must be positive and finite"),
        ('rate_limit = "fast"\n', "rate_limit: expected a table, got the string 'fast'"),
        ("[rate_limit]\nburst = 3\n", "rate_limit.rate: required field missing"),
        ('upstreams = "x"\n', "upstreams: expected a table, got the string 'x'"),
        ("upstreams = { a = 1 }\n", "upstreams.a: expected a table, got int 1"),
    ],
)
def test_a_bad_section_is_named(text: str, problem: str) -> None:
    upstream = '\n[upstreams.ok]\nurl = "http://127.0.0.1:1/mcp"\n'
    with pytest.raises(GatewayConfigError) as raised:
        parse_gateway(text if "upstreams" in text else text + upstream)
    assert raised.value.problems == [problem]


def test_upstream_tables_are_checked() -> None:
    text = """
[upstreams.a]
command = "x"
url = "http://127.0.0.1:1/mcp"
[upstreams.b]
args = ["y"]
[upstreams.c]
url = "http://127.0.0.1:1/mcp"
connect_timeout = 0.0
"""
    with pytest.raises(GatewayConfigError) as raised:
        parse_gateway(text)
    assert raised.value.problems == [
        "upstreams.a: give exactly one of command, url or server (got command, url)",
        "upstreams.b: give exactly one of command, url or server",
        "upstreams.b: args applies to command only",
        "upstreams.c: connect_timeout must be positive and finite",
    ]


def test_no_upstream_and_bad_toml_are_refused() -> None:
    with pytest.raises(GatewayConfigError, match="at least one"):
        parse_gateway('name = "x"\nupstreams = {}\n')
    with pytest.raises(GatewayConfigError, match="not valid TOML"):
        parse_gateway("name = ")


async def test_a_loaded_gateway_serves_its_upstreams(tmp_path: Path) -> None:
    path = tmp_path / "gateway.toml"
    path.write_text(GATEWAY.replace('cwd = "."', f"cwd = {str(TESTS)!r}"))
    sys.path.insert(0, str(TESTS))
    try:
        server = load_gateway(path)
    finally:
        sys.path.remove(str(TESTS))
    assert server.name == "edge"
    async with open_client(server) as client:
        names = {tool.name for tool in await client.list_tools()}
        assert names == {"up_add", "up_count", "local_add"}
        result = await client.call_tool("up_add", {"a": 1, "b": 2})
        assert result.structured_content == {"result": 3}


async def test_mcp_actors_run_serves_a_gateway_file(tmp_path: Path) -> None:
    path = tmp_path / "gateway.toml"
    path.write_text(GATEWAY.replace('cwd = "."', f"cwd = {str(TESTS)!r}"))
    command = StdioTarget(
        sys.executable, ("-m", "mcp_actors.cli", "run", str(path)), cwd=str(TESTS)
    )
    async with open_client(command) as client:
        seen: list[float] = []
        result = await client.call_tool(
            "up_count", {"steps": 2}, on_progress=lambda p, *_: seen.append(p)
        )
        assert result.content == [types.TextContent(text="counted 2")]
        assert seen[-1] == 2.0
        local = await client.call_tool("local_add", {"a": 2, "b": 2})
        assert local.structured_content == {"result": 4}
