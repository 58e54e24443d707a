"""Development auth end to end: a key pair and a token from the CLI, a server protecting
itself with them (``run --dev-auth``), and a client calling it with ``--bearer`` (and
``open_client(bearer=...)``); refused tokens say why; a public bind refuses to start."""

from __future__ import annotations

import json
import time
from functools import partial
from pathlib import Path

import httpx
import pytest
import trio
from test_cli import mcp_actors

from mcp_actors import open_client
from mcp_actors.auth.server import DevelopmentOnly, DevKeyError, dev_resource_server
from mcp_actors.auth.server.dev_key import mint_token
from mcp_actors.client.headers import HeaderError
from mcp_actors.server.serve_http import serve_http as serve_over_http
from mcp_actors.server.serve_websocket import serve_websocket

from conftest import FRONT_ENDS, TESTS, served_by_cli
from servers.notes import server as notes

NOTES = str(TESTS / "servers" / "notes.py")


async def keygen(directory: Path) -> None:
    result = await mcp_actors("auth", "keygen", str(directory))
    assert result.returncode == 0, result.stderr
    assert b"development only" in result.stderr


async def cli_token(key: Path, audience: str, *scopes: str) -> str:
    scope_options = [word for scope in scopes for word in ("--scope", scope)]
    result = await mcp_actors(
        "auth", "token", "--key", str(key), "--sub", "alice", "--audience", audience,
        *scope_options,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout.decode().strip()


@pytest.mark.parametrize("http_front_end", FRONT_ENDS, indirect=True)
async def test_a_cli_minted_token_calls_a_protected_server(
    tmp_path: Path, http_front_end: str
) -> None:
    key, other = tmp_path / "key", tmp_path / "other"
    await keygen(key)
    await keygen(other)
    assert (key / "private.jwk").stat().st_mode & 0o077 == 0
    async with served_by_cli("--transport", "http", "--port", "0", "--dev-auth", str(key),
                             spec=NOTES) as url:  # fmt: skip
        good = await cli_token(key, url, "notes:read")
        called = await mcp_actors("call", url, "read_note", "id=7", "--bearer", good)
        assert called.returncode == 0, called.stderr
        assert b"note 7 for alice" in called.stdout

        refusals = {
            "HTTP 401 invalid_token: the token is signed with an unknown key": await cli_token(
                other, url, "notes:read"
            ),
            "HTTP 403 insufficient_scope: the token lacks scopes this request needs"
            " (scope needed: notes:read)": await cli_token(key, url),
            "HTTP 401 invalid_token: the token has expired": mint_token(
                key, subject="alice", scopes=["notes:read"], audience=url, ttl=60,
                clock=lambda: time.time() - 3600,
            ),
            "HTTP 401 invalid_token: the token is not meant for this resource": await cli_token(
                key, "http://127.0.0.1:1/mcp", "notes:read"
            ),
        }  # fmt: skip
        for reason, token in refusals.items():
            refused = await mcp_actors("call", url, "read_note", '{"id": 7}', "--bearer", token)
            assert refused.returncode == 5
            assert f"the server refused the request: {reason}" in refused.stderr.decode()
        anonymous = await mcp_actors("call", url, "read_note", '{"id": 7}', "--no-auth")
        assert "HTTP 401: an access token is needed" in anonymous.stderr.decode()


async def test_dev_auth_on_a_public_address_refuses_to_start(tmp_path: Path) -> None:
    await keygen(tmp_path)
    result = await mcp_actors(
        "run", NOTES, "--transport", "http", "--host", "0.0.0.0", "--allowed-host", "*",
        "--dev-auth", str(tmp_path),
    )  # fmt: skip
    assert result.returncode == 2
    assert b"--dev-auth: a development key protects loopback addresses only, not 0.0.0.0" in (
        result.stderr
    )
    with pytest.raises(DevelopmentOnly):
        dev_resource_server(tmp_path, host="192.0.2.1")
    auth = dev_resource_server(tmp_path)  # the host learnt once bound: checked then
    with pytest.raises(DevelopmentOnly):
        auth.protect(notes.scopes_needed, "http://0.0.0.0:8000/mcp")


async def test_key_files_are_checked(tmp_path: Path) -> None:
    await keygen(tmp_path)
    again = await mcp_actors("auth", "keygen", str(tmp_path))
    assert again.returncode == 2
    assert b"private.jwk exists already" in again.stderr
    missing = await mcp_actors("auth", "token", "--key", str(tmp_path / "nope"), "--sub", "a")
    assert missing.returncode == 2
    assert b"no key at" in missing.stderr and b"mcp-actors auth keygen" in missing.stderr
    with pytest.raises(DevKeyError, match="holds no private key"):
        (tmp_path / "copy").mkdir()
        (tmp_path / "copy" / "private.jwk").write_bytes((tmp_path / "public.jwk").read_bytes())
        mint_token(tmp_path / "copy", subject="a")
    run = await mcp_actors("run", NOTES, "--transport", "http", "--dev-auth", str(tmp_path / "x"))
    assert run.returncode == 2 and b"--dev-auth: no key at" in run.stderr


@pytest.mark.parametrize(
    ("transport", "http_front_end"),
    [("http", "lean"), ("http", "hypercorn"), ("ws", None)],
    indirect=["http_front_end"],
)
async def test_open_client_with_a_bearer_token(
    tmp_path: Path, transport: str, http_front_end: str | None
) -> None:
    from mcp_actors.auth.server.dev_key import generate_key_pair

    generate_key_pair(tmp_path)
    serve = serve_over_http if transport == "http" else serve_websocket
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(
            lambda task_status: serve(
                notes, host="127.0.0.1", port=0, auth=dev_resource_server(tmp_path),
                task_status=task_status,
            )
        )  # fmt: skip
        url = handle.url
        token = mint_token(tmp_path, subject="bob", scopes=["notes:read"], audience=url)
        async with open_client(url, bearer=token) as client:
            result = await client.call_tool("read_note", {"id": 1})
        assert result.content[0].text == "note 1 for bob"  # type: ignore[union-attr]
        async with open_client(url, headers={"Authorization": f"Bearer {token}"}) as client:
            assert (await client.call_tool("read_note", {"id": 2})).is_error is not True
        nursery.cancel_scope.cancel()


async def test_headers_are_checked_before_anything_is_sent() -> None:
    url = "http://127.0.0.1:1/mcp"
    refusals = {
        "is set by the transport itself": {"Accept": "x"},
        "is not a header name": {"X Key": "x"},
        "may hold only visible ASCII": {"X-Key": "a\r\nX-Evil: 1"},
    }
    for reason, headers in refusals.items():
        with pytest.raises(HeaderError, match=reason):
            async with open_client(url, headers=headers):
                pass
    with pytest.raises(HeaderError, match="not both"):
        async with open_client(url, headers={"authorization": "x"}, bearer="t"):
            pass
    with pytest.raises(ValueError, match="either a bearer token"):
        async with open_client(url, bearer="t", auth=httpx.Auth()):
            pass
    with pytest.raises(HeaderError, match="not a valid access token"):
        async with open_client(url, bearer="two words"):
            pass
    with pytest.raises(ValueError, match="need a server URL"):
        async with open_client(notes, bearer="t"):
            pass


async def test_header_options_are_parsed_strictly() -> None:
    for option, reason in [
        ("X-Key", b"expected NAME=VALUE"),
        ("Mcp-Session-Id=1", b"is set by the transport itself"),
        ("X-Key=a\tb\x01", b"may hold only visible ASCII"),
    ]:
        result = await mcp_actors("inspect", "http://127.0.0.1:1/mcp", "--header", option)
        assert result.returncode == 2
        assert reason in result.stderr, result.stderr
    twice = await mcp_actors(
        "inspect", "http://127.0.0.1:1/mcp", "--header", "X-A=1", "--header", "x-a=2"
    )
    assert twice.returncode == 2 and b"header 'x-a' is given twice" in twice.stderr


async def test_the_sync_client_takes_a_bearer_token(tmp_path: Path) -> None:
    from mcp_actors import sync
    from mcp_actors.auth.server.dev_key import generate_key_pair

    generate_key_pair(tmp_path)
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(
            partial(serve_over_http, notes, port=0, auth=dev_resource_server(tmp_path))
        )
        token = mint_token(tmp_path, subject="carol", scopes=["notes:read"], audience=handle.url)

        def call() -> str:
            with sync.open_client(handle.url, bearer=token) as client:
                text: str = client.call_tool("read_note", {"id": 3}).content[0].text  # type: ignore[union-attr]
                return text

        assert await trio.to_thread.run_sync(call) == "note 3 for carol"
        nursery.cancel_scope.cancel()


async def test_the_environment_bearer_goes_to_url_targets_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from test_cli import SERVE_SAMPLE

    monkeypatch.setenv("MCP_ACTORS_BEARER", "for-http-servers")
    over_stdio = await mcp_actors("call", SERVE_SAMPLE, "add", "a=1", "b=2")
    assert (over_stdio.returncode, over_stdio.stdout) == (0, b"3\n"), over_stdio.stderr
    given = await mcp_actors("call", SERVE_SAMPLE, "add", "a=1", "b=2", "--bearer", "abc")
    assert given.returncode == 2
    assert b"headers= and bearer= need a server URL" in given.stderr


async def test_bench_sends_the_bearer_token_and_headers(tmp_path: Path) -> None:
    await keygen(tmp_path)
    async with served_by_cli("--transport", "http", "--port", "0", "--dev-auth", str(tmp_path),
                             spec=NOTES) as url:  # fmt: skip
        token = await cli_token(tmp_path, url, "notes:read")
        bench = ("bench", url, "--tool", "read_note", "--args", '{"id": 1}', "-w", "sequential",
                 "-d", "0.3", "--warmup", "0", "--json", "--quiet")  # fmt: skip
        measured = await mcp_actors(*bench, "--bearer", token, "--header", "X-Team=blue")
        assert measured.returncode == 0, measured.stderr
        (row,) = json.loads(measured.stdout)["workloads"]
        assert row["calls"] > 0 and row["errors"] == 0, row
        refused = await mcp_actors(*bench, "--header", "X-Team=blue")
        assert refused.returncode != 0
        assert b"401" in refused.stderr
        bad = await mcp_actors(*bench, "--header", "no-equals-sign")
        assert bad.returncode == 2
