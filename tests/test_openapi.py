"""OpenAPI import: the Petstore 3.0 document (data/openapi/petstore.yaml, vendored) becomes
a server whose tools call a real local HTTP service — a small Petstore served by
hypercorn on loopback — with path, query and body parameters, the client's credentials
passed through, JSON answers as structured output, API errors as ``isError`` results;
served in-process, over HTTP on both front ends and in both eras. Documents that cannot
be served are refused naming why.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from test_modern_client import _serve

from mcp_actors import Client, Server, open_client
from mcp_actors.openapi import OpenApiError, server_from
from mcp_actors.protocol import types as t
from mcp_actors.server.serve_http import serve_http
from mcp_actors.server.transforms import transform
from mcp_actors.testing.wire import WireRecorder, assert_all_valid
from mcp_actors.transports.http.client import open_streamable_http

PETSTORE = Path(__file__).parent / "data" / "openapi" / "petstore.yaml"
API_KEY = "secret-key"


class Petstore:
    """A small Petstore (the document's three operations) as an ASGI app; it records each
    request's method, path, query and ``x-api-key``."""

    def __init__(self) -> None:
        self.pets: dict[int, dict[str, Any]] = {1: {"id": 1, "name": "Rex", "tag": "dog"}}
        self.seen: list[tuple[str, str, str, str | None]] = []
        #: Whether answers leave out their Content-Length (sent chunked).
        self.chunked = False

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                event = (await receive())["type"].rpartition(".")[2]  # startup, shutdown
                await send({"type": f"lifespan.{event}.complete"})
                if event == "shutdown":
                    return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {key.decode(): value.decode() for key, value in scope["headers"]}
        method, path, query = scope["method"], scope["path"], scope["query_string"].decode()
        self.seen.append((method, path, query, headers.get("x-api-key")))
        status, answer = self.answer(method, path, query, body, headers.get("x-api-key"))
        payload = json.dumps(answer).encode() if answer is not None else b""
        kind = [(b"content-type", b"application/json")] if answer is not None else []
        if not self.chunked:
            kind.append((b"content-length", str(len(payload)).encode()))
        await send({"type": "http.response.start", "status": status, "headers": kind})
        await send({"type": "http.response.body", "body": payload})

    def answer(
        self, method: str, path: str, query: str, body: bytes, key: str | None
    ) -> tuple[int, Any]:
        if key != API_KEY:
            return 401, {"code": 401, "message": "bad or missing X-Api-Key"}
        if path == "/v1/pets" and method == "GET":
            limit = int(query.partition("limit=")[2] or 100)
            return 200, list(self.pets.values())[:limit]
        if path == "/v1/pets" and method == "POST":
            pet = json.loads(body)
            if not isinstance(pet.get("id"), int) or not pet.get("name"):
                return 400, {"code": 400, "message": "a pet needs an id and a name"}
            self.pets[pet["id"]] = pet
            return 201, None
        if path.startswith("/v1/pets/") and method == "GET":
            pet_id = path.removeprefix("/v1/pets/")
            if pet_id.isdigit() and int(pet_id) in self.pets:
                return 200, self.pets[int(pet_id)]
            return 404, {"code": 404, "message": f"no pet {pet_id}"}
        return 405, {"code": 405, "message": "not here"}


@asynccontextmanager
async def petstore(
    key: str | None = API_KEY, **options: Any
) -> AsyncIterator[tuple[Server, Petstore]]:
    """The Petstore service on loopback, and the MCP server made from its document."""
    store = Petstore()
    async with trio.open_nursery() as nursery:
        url = await nursery.start(_serve, store)
        headers = {"X-Api-Key": key} if key else {}
        async with httpx.AsyncClient(base_url=f"{url}/v1", headers=headers) as api:
            yield server_from(PETSTORE, client=api, **options), store
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def client_of(server: Server, transport: str, era: str) -> AsyncIterator[Client]:
    """A client of ``server`` in process ("memory") or over HTTP (on each front end: this
    module imports ``serve_http``, see conftest); the wire checked at the end."""
    if transport == "memory":
        async with open_client(server, era=era) as client:  # type: ignore[arg-type]
            yield client
        return
    async with trio.open_nursery() as nursery:  # on the module's http_front_end
        http = await nursery.start(partial(serve_http, server, port=0))
        async with open_streamable_http(http.url, legacy_fallback=False) as stream:
            wire = WireRecorder(stream)
            async with open_client(wire, era=era) as client:  # type: ignore[arg-type]
                yield client
                revision = client.protocol_version
        for recorded in (wire, wire.peer()):
            assert_all_valid(recorded, revision)
        nursery.cancel_scope.cancel()


async def test_the_petstore_operations_become_tools() -> None:
    async with petstore() as (server, _), open_client(server, era="legacy") as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
    assert list(tools) == ["listPets", "createPets", "showPetById"]
    assert tools["listPets"].description == "List all pets"
    assert tools["listPets"].input_schema["properties"]["limit"] == {
        "type": "integer",
        "maximum": 100,
        "format": "int32",
        "description": "How many items to return at one time (max 100)",
    }
    assert tools["listPets"].output_schema["properties"]["result"]["type"] == "array"
    create = tools["createPets"].input_schema
    assert create["properties"].keys() == {"id", "name", "tag"}
    assert create["required"] == ["id", "name"]
    assert tools["showPetById"].input_schema["required"] == ["petId"]
    assert tools["showPetById"].output_schema["required"] == ["id", "name"]


@pytest.mark.parametrize("transport", ["memory", "http"])
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_the_tools_call_the_local_petstore(transport: str, era: str) -> None:
    async with petstore() as (server, store), client_of(server, transport, era) as client:
        created = await client.call_tool("createPets", {"id": 7, "name": "Tom", "tag": "cat"})
        assert created.content == [t.TextContent(text="201 Created")]
        shown = await client.call_tool("showPetById", {"petId": "7"})
        assert shown.structured_content == {"id": 7, "name": "Tom", "tag": "cat"}
        listed = await client.call_tool("listPets", {"limit": 1})
        assert listed.structured_content == {"result": [{"id": 1, "name": "Rex", "tag": "dog"}]}
        missing = await client.call_tool("showPetById", {"petId": "99"})
        assert missing.is_error
        answered = '{"code": 404, "message": "no pet 99"}'
        assert missing.content == [
            t.TextContent(text=f"GET /pets/{{petId}} answered 404 Not Found: {answered}")
        ]
        wrong = await client.call_tool("createPets", {"id": "seven", "name": "Tom"})
        assert wrong.is_error and "Expected `int`, got `str` - at `$.id`" in str(wrong.content)
    assert store.seen == [
        ("POST", "/v1/pets", "", API_KEY),
        ("GET", "/v1/pets/7", "", API_KEY),
        ("GET", "/v1/pets", "limit=1", API_KEY),
        ("GET", "/v1/pets/99", "", API_KEY),
    ]


async def test_the_clients_credentials_are_what_the_api_sees() -> None:
    async with petstore(key=None) as (server, store), open_client(server, era="legacy") as client:
        refused = await client.call_tool("listPets", {})
    assert refused.is_error and "answered 401 Unauthorized" in str(refused.content)
    assert store.seen == [("GET", "/v1/pets", "", None)]


async def test_an_answer_past_the_size_limit_is_an_error_result() -> None:
    async with (
        petstore(max_response_bytes=30) as (server, store),
        open_client(server, era="legacy") as client,
    ):
        declared = await client.call_tool("listPets", {})
        store.pets, store.chunked = {1: {"id": 1, "name": "R"}, 2: {"id": 2, "name": "S"}}, True
        chunked = await client.call_tool("listPets", {"limit": 2})
        small = await client.call_tool("listPets", {"limit": 1})
    for result in (declared, chunked):
        assert result.is_error and "answered more than 30 bytes" in str(result.content)
    assert small.structured_content == {"result": [{"id": 1, "name": "R"}]}


async def test_an_unreachable_api_is_an_error_result() -> None:
    async with (
        httpx.AsyncClient(base_url="http://127.0.0.1:9/v1") as api,
        open_client(server_from(PETSTORE, client=api), era="legacy") as client,
    ):
        result = await client.call_tool("listPets", {})
    assert result.is_error and "GET /pets failed: ConnectError" in str(result.content)


HEADERS_AND_LISTS = {
    "openapi": "3.1.0",
    "info": {"title": "tenants", "version": "2"},
    "servers": [{"url": "http://127.0.0.1:9/api"}],
    "paths": {
        "/items/{kind}": {
            "parameters": [{"name": "kind", "in": "path", "schema": {"type": "string"}}],
            "get": {
                "operationId": "find items",
                "parameters": [
                    {"name": "X-Tenant", "in": "header", "required": True},
                    {"name": "tag", "in": "query", "schema": {"type": "array"}},
                ],
            },
        }
    },
}


async def test_header_and_repeated_query_parameters_and_a_transform_fixing_one() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"ok": True})

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as api:
        server = server_from(HEADERS_AND_LISTS, client=api)
        server.add_middleware(
            transform("find_items", name="items", hide=["X-Tenant"], defaults={"X-Tenant": "acme"})
        )
        async with open_client(server, era="legacy") as client:
            [tool] = await client.list_tools()
            assert tool.name == "items" and tool.input_schema["required"] == ["kind"]
            result = await client.call_tool("items", {"kind": "a b", "tag": ["x", "y"]})
    assert result.content == [t.TextContent(text='{"ok":true}')]
    [request] = seen
    assert str(request.url) == "http://127.0.0.1:9/api/items/a%20b?tag=x&tag=y"
    assert request.headers["x-tenant"] == "acme"


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        (
            {"swagger": "2.0", "paths": {}},
            "only OpenAPI 3.x documents are taken, not version '2.0'",
        ),
        ({"openapi": "3.0.0"}, "the document has no 'paths' object"),
        (
            {
                "openapi": "3.0.0",
                "paths": {"/a": {"get": {"parameters": [{"$ref": "other.yaml#/p"}]}}},
            },
            "only references within the document are followed, not 'other.yaml#/p'",
        ),
        (
            {
                "openapi": "3.0.0",
                "paths": {"/a": {"get": {"operationId": "x"}}, "/b": {"get": {"operationId": "x"}}},
            },
            "two operations are both named 'x'",
        ),
        ("openapi: [3.0\n  bad", "not valid YAML"),
    ],
)
async def test_documents_that_cannot_be_served_are_refused(document: Any, problem: str) -> None:
    async with httpx.AsyncClient() as api:
        with pytest.raises(OpenApiError, match=problem.replace("[", r"\[").replace("(", r"\(")):
            server_from(document, client=api)


async def test_a_json_file_and_yaml_text_load_as_the_document(tmp_path: Path) -> None:
    import yaml

    document = yaml.safe_load(PETSTORE.read_text())
    path = tmp_path / "petstore.json"
    path.write_text(json.dumps(document))
    async with httpx.AsyncClient() as api:
        from_json = server_from(path, client=api)
        from_text = server_from(PETSTORE.read_text(), client=api)
    assert (
        list(from_json.tools) == list(from_text.tools) == ["listPets", "createPets", "showPetById"]
    )
    assert from_json.name == "Swagger Petstore" and from_json.version == "1.0.0"
