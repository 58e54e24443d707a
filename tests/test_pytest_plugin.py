"""The pytest plugin (``mcp_actors.testing``), used as a user would: only its fixtures.

The first tests below are such a user's tests, run by this suite; the last ones run
a user's project of their own (its conftest, its pytest configuration) in a pytest
subprocess, where the plugin loads through its ``pytest11`` entry point.
"""

from __future__ import annotations

import pytest

from mcp_actors import Client

from conftest import TESTS

SAMPLE_FILE = str(TESTS / "servers" / "sample.py")


@pytest.fixture
def mcp_server() -> str:
    return SAMPLE_FILE


@pytest.mark.parametrize("mcp_transport", ["memory", "stdio", "http"])
async def test_a_users_test_with_only_the_plugins_fixtures(mcp_client: Client) -> None:
    result = await mcp_client.call_tool("add", {"a": 1, "b": 2})
    assert result.structured_content == {"result": 3}


@pytest.mark.parametrize("mcp_era", ["legacy"])
async def test_the_wire_fixture_shows_what_went_over(mcp_client: Client, mcp_wire: object) -> None:
    await mcp_client.ping()
    sent = mcp_wire.sent_messages()  # type: ignore[attr-defined]
    assert [message.get("method") for message in sent] == [
        "initialize",
        "notifications/initialized",
        "ping",
    ]


async def test_by_default_the_client_probes_and_speaks_the_modern_era(
    mcp_client: Client, mcp_wire: object
) -> None:
    await mcp_client.list_tools()
    sent = mcp_wire.sent_messages()  # type: ignore[attr-defined]
    assert [message.get("method") for message in sent] == ["server/discover", "tools/list"]
    assert mcp_client.era == "modern"


USER_CONFTEST = """
import pytest
from mcp_actors import Server, types

server = Server("users-server")


@server.tool
async def add(a: int, b: int) -> int:
    return a + b


@server.tool
async def broken() -> types.CallToolResult:
    # isError must be a boolean: the wire check catches it
    return types.CallToolResult(content=[], is_error="yes")


@pytest.fixture
def mcp_server():
    return server
"""

USER_TESTS = """
async def test_add(mcp_client):
    result = await mcp_client.call_tool("add", {"a": 2, "b": 3})
    assert result.structured_content == {"result": 5}


async def test_broken(mcp_client):
    await mcp_client.call_tool("broken")
"""


def test_a_users_project_runs_the_plugin_from_its_entry_point(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(USER_CONFTEST)
    pytester.makepyfile(test_users_server=USER_TESTS)
    pytester.makeini("[pytest]\ntrio_mode = true\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)  # test_broken fails in the fixture's teardown
    result.stdout.fnmatch_lines(
        [
            "*result for 'tools/call' does not match CallToolResult:*",
            "*at $.result.isError: 'yes' is not of type 'boolean'*",
            "FAILED test_users_server.py::test_broken*",
        ]
    )


def test_without_a_server_fixture_the_plugin_says_what_to_define(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile("async def test_it(mcp_client):\n    pass\n")
    pytester.makeini("[pytest]\ntrio_mode = true\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*define a fixture named mcp_server returning your Server*"])


TWO_TESTS = """
async def test_add(mcp_client):
    result = await mcp_client.call_tool("add", {"a": 2, "b": 3})
    assert result.structured_content == {"result": 5}


async def test_wire(mcp_wire):
    pass
"""
HIDE = "import sys\nsys.modules['pytest_trio'] = None\nsys.modules['jsonschema'] = None\n"


@pytest.mark.parametrize(
    ("ini", "options", "hide", "line"),
    [
        (
            "[pytest]\n",
            (),
            "",
            "ERROR: mcp_actors.testing: test_users_server.py::test_add uses mcp_client, which"
            " runs under pytest-trio's trio mode: add 'trio_mode = true' to your pytest"
            " configuration ([pytest] in pytest.ini, [tool.pytest.ini_options] in"
            " pyproject.toml), or mark each such test @pytest.mark.trio",
        ),
        (
            "[pytest]\ntrio_mode = true\n",
            ("-p", "no:trio"),
            HIDE,
            "ERROR: mcp_actors.testing: test_users_server.py::test_add uses mcp_client, which"
            " needs pytest-trio, jsonschema, not installed: pip install 'mcp-actors[testing]'",
        ),
        (
            "[pytest]\ntrio_mode = true\n",
            ("-p", "no:trio"),
            "",
            "ERROR: mcp_actors.testing: test_users_server.py::test_add uses mcp_client, which"
            " runs under pytest-trio, installed but not loaded (disabled with -p no:trio?)",
        ),
    ],
    ids=["no trio_mode", "no testing extra", "pytest-trio disabled"],
)
def test_what_the_fixtures_need_is_named_in_one_usage_error(
    pytester: pytest.Pytester, ini: str, options: tuple[str, ...], hide: str, line: str
) -> None:
    pytester.makeconftest(hide + USER_CONFTEST)
    pytester.makepyfile(test_users_server=TWO_TESTS)
    pytester.makeini(ini)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *options)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.errlines == [line, ""]
    assert "AssertionError" not in result.stdout.str()


def test_a_project_not_using_the_fixtures_is_left_alone(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    pass\n")
    pytester.makeini("[pytest]\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:trio")
    result.assert_outcomes(passed=1)


def test_a_sync_test_using_the_client_is_told_to_be_async(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(USER_CONFTEST)
    pytester.makepyfile(test_users_server="def test_sync(mcp_client):\n    pass\n")
    pytester.makeini("[pytest]\ntrio_mode = true\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.errlines == [
        "ERROR: mcp_actors.testing: test_users_server.py::test_sync uses mcp_client, a Trio"
        " fixture: the test must be 'async def' (and run by pytest-trio)",
        "",
    ]
