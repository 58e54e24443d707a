"""The reference servers' answers, recorded, and any server's answers compared with them.

:data:`CASES` is a fixed sequence of tool calls (k6's three, then other arguments: an
unknown category, a user without history, a user without a cart, checkouts that
count up a rate limiter). :func:`answers` plays it against a server from a freshly
seeded Redis and returns each tool's JSON text, parsed, without ``server_type`` (each
server names itself there). ``reference.json`` holds the answers of upstream's
FastMCP server, recorded by ``python -m benchmarks.realio record-reference``, which
also checks that upstream's Node server gives the same; the tests check ours against
it, and the harness checks every server against it before measuring it.

Numbers compare as JSON values (``24.63`` and ``24.63`` equal, ``0`` and ``0.0`` too):
the servers' JSON differs in spacing (Python's ``json.dumps`` puts spaces after ``,``
and ``:``) but must not differ in value.
"""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any, Final

import msgspec

from .driver import INITIALIZE, INITIALIZED, json_rpc_of, tool_call

REFERENCE: Final = Path(__file__).resolve().parent / "reference.json"
ITEMS: Final = [{"product_id": 42, "quantity": 2}, {"product_id": 1337, "quantity": 1}]
CASES: Final[list[tuple[str, dict[str, Any]]]] = [
    ("search_products", {"category": "Electronics", "min_price": 50.0, "max_price": 500.0,
                         "limit": 10}),
    ("get_user_cart", {"user_id": "user-00007"}),
    ("checkout", {"user_id": "user-00007", "items": ITEMS}),
    ("search_products", {"category": "Books", "min_price": 10, "max_price": 20.5, "limit": 5}),
    ("search_products", {"category": "Nope"}),
    ("search_products", {"category": "Toys", "min_price": 990, "max_price": 1000, "limit": 1000}),
    ("search_products", {}),
    ("get_user_cart", {"user_id": "user-05000"}),
    ("get_user_cart", {"user_id": "user-99999"}),
    ("get_user_cart", {}),
    ("checkout", {"user_id": "user-00123", "items": [{"product_id": 500, "quantity": 3}]}),
    ("checkout", {"user_id": "user-00007", "items": [{"product_id": 99999, "quantity": 40}]}),
    ("checkout", {"user_id": "user-00007", "items": ITEMS}),
    ("checkout", {"user_id": "user-00500", "items": [{"product_id": 5000, "quantity": 3}]}),
    ("get_user_cart", {"user_id": "user-00007"}),
]  # fmt: skip


class Mismatch(Exception):
    """A server's answer differs from the reference."""


def _post(connection: http.client.HTTPConnection, body: bytes, path: str) -> bytes:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    connection.request("POST", path, body, headers)
    response = connection.getresponse()
    data = response.read()
    if not 200 <= response.status < 300:
        raise Mismatch(f"HTTP {response.status}: {data[:300]!r}")
    return data


def call_tool(port: int, name: str, arguments: dict[str, Any], path: str = "/mcp") -> Any:
    """One stateless session calling ``name``: the tool's JSON text, parsed, without
    ``server_type``."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        _post(connection, INITIALIZE, path)
        _post(connection, INITIALIZED, path)
        message = json_rpc_of(_post(connection, tool_call(name, arguments), path))
    finally:
        connection.close()
    if "error" in message or message["result"].get("isError"):
        raise Mismatch(f"{name}({arguments}) failed: {message}")
    answer = msgspec.json.decode(message["result"]["content"][0]["text"])
    answer.pop("server_type", None)
    return answer


def answers(port: int) -> list[Any]:
    """Every case's answer from the server on ``port`` (Redis freshly seeded by the caller)."""
    return [call_tool(port, name, arguments) for name, arguments in CASES]


def recorded() -> list[Any]:
    """The reference answers (``reference.json``)."""
    data: dict[str, Any] = json.loads(REFERENCE.read_text())
    cases: list[Any] = data["answers"]
    return cases


def compare(got: list[Any], expected: list[Any], who: str) -> None:
    """Raise :class:`Mismatch` naming the first case where ``got`` differs."""
    for (name, arguments), mine, theirs in zip(CASES, got, expected, strict=True):
        if mine != theirs:
            raise Mismatch(
                f"{who}: {name}({json.dumps(arguments)}) answered\n  {json.dumps(mine)}\n"
                f"the reference answered\n  {json.dumps(theirs)}"
            )


def save(answers_: list[Any], note: str) -> None:
    """Write ``reference.json``."""
    cases = [{"tool": name, "arguments": arguments} for name, arguments in CASES]
    document = {"note": note, "cases": cases, "answers": answers_}
    REFERENCE.write_text(json.dumps(document, indent=1) + "\n")
