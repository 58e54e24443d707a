"""The real-I/O benchmark (``benchmarks/realio``): our three tools answer as the reference servers.

The reference answers (``benchmarks/realio/reference.json``) were recorded from
upstream's FastMCP server, which its Node server matched, on the same seeded Redis and
the same product API (``python -m benchmarks.realio record-reference``). Here real
processes run: Debian's ``redis-server``, our product API, and our server over
Streamable HTTP, on each front end, with one worker and with two.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.realio import harness, processes, reference, references
from benchmarks.realio.harness import Settings, Stack
from benchmarks.realio.server import Backends, ShopSlot, build_server, serve_worker

from conftest import FRONT_ENDS


@pytest.fixture(scope="module")
def backends() -> Iterator[Stack]:
    with harness.stack() as stack:
        yield stack


def _get(stack: Stack, target: str, body: bytes | None = None) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", stack.api.port, timeout=30)
    try:
        connection.request("POST" if body is not None else "GET", target, body)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("http_front_end", FRONT_ENDS, indirect=True)
def test_each_tool_answers_as_the_reference_servers(
    backends: Stack, http_front_end: str, workers: int
) -> None:
    port = processes.free_port()
    launch = processes.ours(port, backends.redis_url, backends.api.url, workers=workers)
    with processes.started(launch, port):
        harness.seed(backends.redis_url)
        got = reference.answers(port)
    reference.compare(got, reference.recorded(), f"ours ({http_front_end}, {workers} workers)")
    assert got[0]["total_found"] == 2251  # k6's own check, on the recorded answers too


def test_a_wrong_argument_is_a_clear_tool_error(backends: Stack) -> None:
    port = processes.free_port()
    launch = processes.ours(port, backends.redis_url, backends.api.url)
    with processes.started(launch, port), pytest.raises(reference.Mismatch) as refused:
        reference.call_tool(port, "checkout", {"items": [{"product_id": "x", "quantity": 1}]})
    assert "Expected `int`, got `str`" in str(refused.value)
    assert "product_id" in str(refused.value)


def test_the_tools_answer_after_redis_lost_their_functions(backends: Stack) -> None:
    """``get_user_cart`` and ``checkout`` call Redis Functions each worker loads as it
    starts; a Redis that lost them (restarted, ``FUNCTION FLUSH``) gets them again."""
    port = processes.free_port()
    launch = processes.ours(port, backends.redis_url, backends.api.url)
    with processes.started(launch, port):
        harness.seed(backends.redis_url)
        before = reference.call_tool(port, "get_user_cart", {"user_id": "user-00042"})
        flushed = subprocess.run(
            ["redis-cli", "-u", backends.redis_url, "FUNCTION", "FLUSH"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        assert flushed.stdout.strip() == "OK"
        cart = reference.call_tool(port, "get_user_cart", {"user_id": "user-00042"})
        order = reference.call_tool(port, "checkout", {"user_id": "user-00042"})
    assert cart == before and len(cart["recent_history"]) == 5
    assert order["rate_limit_count"] == 1 and order["status"] == "confirmed"


def test_the_api_answers_with_the_bytes_upstream_writes(backends: Stack) -> None:
    status, body = _get(backends, "/products/1")
    assert status == 200
    assert body == (  # Go: a whole float64 without ".0", a float32 in its shortest digits
        b'{"id":1,"sku":"SKU-000001","name":"Alpha Electronics Item 1","category":"Electronics",'
        b'"brand":"Alpha","price":1,"stock":0,"rating":1,"tags":["sale","new"],"weight":0.1,'
        b'"description":"Quality Electronics by Alpha. SKU 000001."}\n'
    )
    status, body = _get(backends, "/products/search?category=Toys&min_price=2000")
    assert (status, json.loads(body)) == (
        200,
        {"category": "Toys", "total_found": 0, "products": None},
    )
    cart = (
        b'{"user_id":"user-00042","items":[{"product_id":42,"quantity":2},'
        b'{"product_id":1337,"quantity":1}]}'
    )
    status, body = _get(backends, "/cart/calculate", cart)
    assert json.loads(body) == {
        "order_id": "ORD-user00042-2", "user_id": "user-00042", "subtotal": 17.18, "tax": 1.46,
        "shipping": 5.99, "discount": 0, "total": 24.63, "items_count": 2,
    }  # fmt: skip
    assert _get(backends, "/products/100001")[0] == 404
    assert _get(backends, "/cart/calculate", b'{"items": [{"product_id": 1.5}]}')[0] == 400


def test_the_one_command_measures_our_server_with_no_error(backends: Stack) -> None:
    lines: list[str] = []
    settings = Settings(sessions=200, rounds=1, warmup=0.2, servers=("ours", "ours-1w"))
    turns = harness.run(settings, report=lines.append)
    assert [turn.server for turn in turns] == ["ours", "ours-1w"]
    for turn in turns:
        assert turn.tally.errors == 0, turn.tally.error_samples
        assert turn.tally.sessions >= 200
        assert turn.server_cpu > 0 and turn.rss_kb > 0
    table = lines[-1]
    assert "| ours |" in table and "| ours-1w |" in table
    assert lines[0].startswith("load average before:")


def test_the_driver_counts_as_k6_against_a_fixed_reply() -> None:
    from benchmarks.realio.fixed_reply import check_driver

    tally = check_driver(sessions=400, vus=10, think=0.0, warmup=0.0)
    assert tally.errors == 0, tally.error_samples
    # per session: initialize + tools/call (k6's mcp_requests) and the notification; the
    # users' sessions in progress at the end add at most one initialize and notification each
    assert 2 * tally.sessions <= tally.requests <= 2 * tally.sessions + 10
    assert 3 * tally.sessions <= tally.http_requests <= 3 * tally.sessions + 20
    tool_sessions = tally.sessions * 3 / 4  # the fourth session of an iteration lists tools
    assert abs(len(tally.call_latencies) - tool_sessions) <= 10


def test_the_measured_window_is_the_counted_sessions_and_nothing_else() -> None:
    """Whatever other processes used is read at the window's edges (``at_edge``): the
    warm-up's sessions before it and the answers drained after it are not in it."""
    from benchmarks.realio.driver import Driver
    from benchmarks.realio.fixed_reply import nginx

    counted_at_edges: list[int] = []
    with tempfile.TemporaryDirectory() as directory:
        port = processes.free_port()
        with processes.started(nginx(port, Path(directory)), port):
            driver = Driver("127.0.0.1", port, vus=10, think=0.0)
            tally = driver.run(
                warmup=0.3,
                sessions=300,
                at_edge=lambda: counted_at_edges.append(driver.tally.sessions),
            )
    assert tally.errors == 0, tally.error_samples
    assert counted_at_edges == [0, tally.sessions]
    assert tally.sessions >= 300


def test_both_python_servers_must_run_on_one_interpreter(tmp_path: Path) -> None:
    """FastMCP's environment made from another CPython build is refused, naming both; one
    made from this interpreter is accepted."""
    other = tmp_path / "other"
    (other / "bin").mkdir(parents=True)
    (other / "bin" / "python").write_text("#!/bin/sh\nprintf '3.11.7 (main)\\n/opt/other\\n'\n")
    (other / "bin" / "python").chmod(0o755)
    with pytest.raises(references.ReferencesMissing, match=r"Python 3\.11\.7 from /opt/other"):
        references.check_same_interpreter(other)
    same = tmp_path / "same"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(same)], check=True)
    references.check_same_interpreter(same)


@pytest.mark.parametrize(
    ("redis_url", "refusal"),
    [
        ("rediss://127.0.0.1:6379/0", "no TLS, no password"),
        ("redis://:secret@127.0.0.1:6379/0", "no TLS, no password"),
        ("redis://127.0.0.1:6379/2", "database 0"),
    ],
)
async def test_a_redis_url_the_tools_client_cannot_honour_is_refused(
    redis_url: str, refusal: str
) -> None:
    """The tools' Redis client speaks plain RESP to database 0: a URL asking for more is
    refused before anything is opened, rather than silently not honoured."""
    slot = ShopSlot()
    backends = Backends(redis_url, "http://127.0.0.1:8100")
    with pytest.raises(ValueError, match=refusal):
        await serve_worker(build_server(slot), slot=slot, backends=backends)
