"""Fuzz cases: what a hostile or broken MCP client writes, one labelled wire message at a time.

A :class:`Case` is the bytes of one message (one stdio line, one POST body, one
WebSocket frame) with its category, and the ids of the requests in it whose
answers we can check (id -> method). :class:`CaseGenerator` draws them from a
seeded :class:`random.Random`, so a run is reproduced by its seed:

- **shaped by the official schema**: a request or notification of every client
  method the revision defines (:mod:`.schema_values`), aimed at what the server
  really offers (its tools with arguments from their input schemas, its prompts,
  resources and templates: a :class:`Catalog`), then sometimes mutated (a field
  dropped, retyped or added, ``params`` of the wrong type, an unknown method);
- **envelope abuse**: odd ids (null, bool, float, object, huge), notifications
  with ids, responses to nothing, batches (empty, mixed, nested), a repeated
  ``initialize``;
- **the modern era** (2026-07-28, :mod:`.modern`): every request with its
  ``_meta`` (version, capabilities...) and its HTTP routing headers, sometimes
  wrong (``bad-headers``); retries of ``input_required`` results and the tasks
  extension's requests aimed at what the server answered (``modern-followup``);
- **byte-level abuse** planted inside an otherwise valid message: invalid UTF-8,
  lone surrogate escapes, deep nesting, numbers of thousands of digits,
  ``NaN``-like tokens, duplicate keys; and truncated JSON, junk, random bytes,
  oversized lines.

No payload contains a newline (stdio frames on it) or upper-case text of our own
(see :data:`.schema_values.SAFE_TEXT`).
"""

from __future__ import annotations

import json
import random
from collections import deque
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any, Final

from mcp_actors.testing.wire import SCHEMA_DIR

from .modern import MODERN, Headers, ModernShaper
from .schema_values import SchemaValues, safe_text

#: Marks the place in an encoded message where a byte-level mutation goes.
_HOLE: Final = "@@hole@@"
_HOLE_TOKEN: Final = json.dumps(_HOLE).encode()


@dataclass(frozen=True)
class Case:
    """One message to send: its bytes, what kind of abuse it is, the replies it may earn."""

    category: str
    payload: bytes
    #: (id, method) of each request inside whose reply can be matched to it.
    requests: tuple[tuple[int | str, str], ...] = ()
    #: The HTTP headers it is sent with (modern era: routing headers; else none).
    headers: Headers = ()

    def describe(self, limit: int = 200) -> str:
        shown = self.payload[:limit]
        more = f"...(+{len(self.payload) - limit} bytes)" if len(self.payload) > limit else ""
        return f"[{self.category}] {shown!r}{more}"


@dataclass
class Catalog:
    """What the server under test offers (filled from its list results)."""

    tools: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    prompts: dict[str, list[str]] = field(default_factory=dict)
    resources: list[str] = field(default_factory=list)
    templates: list[str] = field(default_factory=list)


@cache
def schema_document(revision: str) -> dict[str, Any]:
    """The official schema of ``revision`` (as vendored under ``tests/schemas``)."""
    loaded: dict[str, Any] = json.loads((SCHEMA_DIR / revision / "schema.json").read_text())
    return loaded


def _definitions(revision: str) -> dict[str, Any]:
    root = schema_document(revision)
    defs: dict[str, Any] = root.get("$defs") or root["definitions"]
    return defs


def _union_members(revision: str, union: str) -> list[tuple[str, str]]:
    """(definition name, method) of each member of ``ClientRequest`` and the like."""
    defs = _definitions(revision)
    out = []
    # (2026-07-28's ClientNotification is its one member itself, not a union)
    members = defs[union].get("anyOf", [{"$ref": f"#/$defs/{union}"}])
    for member in members:
        name = member["$ref"].rsplit("/", 1)[1]
        method = defs[name].get("properties", {}).get("method", {}).get("const")
        if isinstance(method, str):
            out.append((name, method))
    return out


def encode(message: Any) -> bytes:
    """Compact JSON, non-ASCII kept as UTF-8 (so byte mutations land in real UTF-8)."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()


#: Categories and their weights in the mix (see :meth:`CaseGenerator.next_case`).
WEIGHTS: Final[dict[str, float]] = {
    "valid-request": 28,
    "valid-notification": 6,
    "mutated": 14,
    "odd-id": 5,
    "notification-with-id": 2,
    "response-to-nothing": 4,
    "batch": 5,
    "initialize-again": 2,
    "bad-headers": 5,
    "modern-followup": 6,
    "invalid-utf8": 4,
    "lone-surrogate": 4,
    "deep-nesting": 3,
    "huge-number": 4,
    "nan-token": 3,
    "duplicate-keys": 3,
    "truncated": 4,
    "junk": 3,
    "random-bytes": 2,
    "oversized": 0.05,
}

#: Categories of one era only (the other's sessions never draw them).
MODERN_ONLY: Final = frozenset({"bad-headers", "modern-followup"})
LEGACY_ONLY: Final = frozenset({"initialize-again"})

_ODD_IDS: Final[list[Any]] = [
    None,
    True,
    False,
    1.5,
    1.0,
    -1,
    0,
    2**53 + 1,
    2**63,
    2**64 + 7,
    -(2**63) - 1,
    {},
    {"a": 1},
    [],
    [1],
    "",
    "x" * 1000,
]
_INVALID_UTF8: Final[list[bytes]] = [
    b"\xff",
    b"\xfe\xff",
    b"\xc3\x28",
    b"\xa0\xa1",
    b"\xe2\x28\xa1",
    b"\xf0\x28\x8c\xbc",
    b"\xc0\xaf",  # overlong "/"
    b"\xed\xa0\x80",  # an encoded surrogate
    b"\xf8\x88\x80\x80\x80",
    b"ok\x80",
]
_SURROGATES: Final[list[bytes]] = [
    b"\\ud800",
    b"\\udfff",
    b"a\\ud800b",
    b"\\udc00\\ud800",
    b"\\ud83d",  # half of an emoji
    b"\\ud800\\u0000",
]
_NAN_TOKENS: Final[list[bytes]] = [
    b"NaN",
    b"-NaN",
    b"Infinity",
    b"-Infinity",
    b"inf",
    b"1.0e",
    b".5",
    b"01",
    b"-",
    b"+1",
    b"0x10",
    b"1e400",
    b"-1e400",
    b"1E-400",
    b"-0",
    b"-0.0",
    b"undefined",
    b"True",
]
_JUNK: Final[list[bytes]] = [
    b"42",
    b'"a string"',
    b"null",
    b"true",
    b"{}",
    b"[{}]",
    b"[1,2,3]",
    b"[[]]",
    b"[[[]]]",
    b'{"jsonrpc":"2.0"}',
    b'{"jsonrpc":"1.0","id":1,"method":"ping"}',
    b'{"jsonrpc":2.0,"id":1,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":1,"method":1}',
    b'{"jsonrpc":"2.0","id":1,"method":null}',
    b'{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}',
    b'{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}',
    b'{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}',
    b'{"jsonrpc":"2.0","id":1}',
    b'{"jsonrpc":"2.0","method":"ping"}{"jsonrpc":"2.0","method":"ping"}',
    b'{"jsonrpc":"2.0","id":1,"method":"ping"} trailing',
    b"\xef\xbb\xbf" + b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
    '{"jsonrpc":"2.0","id":1,"method":"ping"}'.encode("utf-16"),
    b"\x00",
    b" ",
    b"\t\r",
    b"{",
    b"]",
    b'{"a":}',
    b"[,]",
    b"{'jsonrpc':'2.0'}",
]


class CaseGenerator:
    """Deterministic fuzz cases for one server, one session (revision) at a time."""

    def __init__(
        self,
        rng: random.Random,
        catalog: Catalog,
        *,
        oversized_bytes: int = 4 * 1024 * 1024 + 1024,
        weights: Mapping[str, float] = WEIGHTS,
        first_id: int = 1000,
    ) -> None:
        self.rng = rng
        self.catalog = catalog
        self.oversized_bytes = oversized_bytes
        self.revision = "2025-11-25"
        self._values = SchemaValues(schema_document(self.revision), rng)
        #: Set while the session is of the modern era.
        self.modern: ModernShaper | None = None
        self._next_id = first_id
        self._next_ping = 0
        self._recent_ids: deque[int | str] = deque(maxlen=32)
        self._categories = list(weights)
        self._weights = [weights[c] for c in self._categories]
        self._makers: dict[str, Callable[[], Case]] = {
            "valid-request": self._valid_request,
            "valid-notification": self._valid_notification,
            "mutated": self._mutated,
            "odd-id": self._odd_id,
            "notification-with-id": self._notification_with_id,
            "response-to-nothing": self._response_to_nothing,
            "batch": self._batch,
            "initialize-again": self._initialize_again,
            "bad-headers": self._bad_headers,
            "modern-followup": self._modern_followup,
            "invalid-utf8": lambda: self._in_string("invalid-utf8", _INVALID_UTF8),
            "lone-surrogate": lambda: self._in_string("lone-surrogate", _SURROGATES),
            "deep-nesting": self._deep_nesting,
            "huge-number": self._huge_number,
            "nan-token": lambda: self._as_token("nan-token", self.rng.choice(_NAN_TOKENS)),
            "duplicate-keys": self._duplicate_keys,
            "truncated": self._truncated,
            "junk": lambda: Case("junk", self.rng.choice(_JUNK)),
            "random-bytes": self._random_bytes,
            "oversized": self._oversized,
        }

    # ------------------------------------------------------------------ sessions

    def start_session(self, revision: str) -> None:
        """Draw later messages from ``revision``'s schema."""
        self.revision = revision
        self._values = SchemaValues(schema_document(revision), self.rng)
        self._recent_ids.clear()
        self.modern = ModernShaper(self.rng, self.catalog.tools) if revision == MODERN else None

    def initialize(self) -> Case:
        """A proper ``initialize`` request for the current revision."""
        capabilities: dict[str, Any] = {}
        for name in ("roots", "sampling", "elicitation"):
            if self.rng.random() < 0.5:
                capabilities[name] = {"listChanged": True} if name == "roots" else {}
        params = {
            "protocolVersion": self.revision,
            "capabilities": capabilities,
            "clientInfo": {"name": "fuzz", "version": "0"},
        }
        return self.request("initialize", params, "initialize")

    def initialized(self) -> Case:
        return Case(
            "initialized", encode({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )

    def ping(self) -> tuple[str, Case]:
        """A ``ping`` with an id of its own, and that id."""
        self._next_ping += 1
        ping_id = f"ping-{self._next_ping}"
        message = {"jsonrpc": "2.0", "id": ping_id, "method": "ping"}
        return ping_id, Case("ping", encode(message), ((ping_id, "ping"),))

    def discover(self) -> tuple[str, Case]:
        """A proper ``server/discover`` (the modern era's proof of life), and its id."""
        assert self.modern is not None
        self._next_ping += 1
        discover_id = f"discover-{self._next_ping}"
        params = {"_meta": self.modern.valid_meta()}
        message = {"jsonrpc": "2.0", "id": discover_id, "method": "server/discover"}
        case = Case(
            "discover", encode({**message, "params": params}), ((discover_id, message["method"]),)
        )
        return discover_id, self._routed(case)

    def next_case(self, exclude: Collection[str] = ()) -> Case:
        """The next case, of a category drawn by the weights (none of ``exclude``, none
        of the other era's), with the HTTP headers of the session's era."""
        other_era = LEGACY_ONLY if self.modern is not None else MODERN_ONLY
        while (category := self.rng.choices(self._categories, self._weights)[0]) in exclude or (
            category in other_era
        ):
            pass
        return self._routed(self._makers[category]())

    def _routed(self, case: Case) -> Case:
        """``case`` with its routing headers, in the modern era (``bad-headers``: wrong)."""
        if self.modern is None:
            return case
        headers = self.modern.headers(case.payload)
        if case.category == "bad-headers":
            headers = self.modern.bad_headers(headers)
        return replace(case, headers=headers)

    def observe(self, request: Any, reply: Any) -> None:
        """Note the server's ``reply`` to ``request`` (the modern era follows some up)."""
        if self.modern is not None and isinstance(reply, dict) and "result" in reply:
            self.modern.observe(request, reply["result"])

    def answer(self, request: Mapping[str, Any]) -> Case | None:
        """What we write back to a request the server sent us (or None: no answer)."""
        rng = self.rng
        roll = rng.random()
        request_id = request.get("id")
        if roll < 0.15:
            return None
        if roll < 0.3:
            error = {"code": rng.choice([-32601, -32603, -1, 0]), "message": safe_text(rng)}
            return Case("answer", encode({"jsonrpc": "2.0", "id": request_id, "error": error}))
        if roll < 0.4:
            return Case("answer", encode({"jsonrpc": "2.0", "id": request_id, "result": 7}))
        result = self._values.value({"$ref": self._result_ref(str(request.get("method")))})
        return Case("answer", encode({"jsonrpc": "2.0", "id": request_id, "result": result}))

    # ------------------------------------------------------------------ helpers

    def _ref(self, name: str) -> str:
        root = schema_document(self.revision)
        return f"#/{'$defs' if '$defs' in root else 'definitions'}/{name}"

    def _result_ref(self, method: str) -> str:
        defs = _definitions(self.revision)
        for name, member_method in _union_members(self.revision, "ServerRequest"):
            stem = name.removesuffix("Request")
            if member_method == method and f"{stem}Result" in defs:
                return self._ref(f"{stem}Result")
        return self._ref("Result")

    def _new_id(self) -> int:
        request_id = self._next_id
        self._next_id += 1
        self._recent_ids.append(request_id)
        return request_id

    def request(self, method: str, params: Any, category: str) -> Case:
        """A request of ``method`` with ``params`` (None: none) and a new id."""
        request_id = self._new_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        return Case(category, encode(message), ((request_id, method),))

    def _request_message(self) -> dict[str, Any]:
        """A schema-shaped request of a random client method (ids not yet assigned)."""
        members = [
            m for m in _union_members(self.revision, "ClientRequest") if m[1] != "initialize"
        ]
        if self.modern is not None and self.rng.random() < 0.1:
            return self.modern.task_request()
        name, method = self.rng.choice(members)
        message: dict[str, Any] = self._values.value({"$ref": self._ref(name)})
        message["jsonrpc"] = "2.0"
        message["method"] = method
        self._aim(message)
        if self.modern is not None:
            self.modern.stamp(message)
        return message

    def _aim(self, message: dict[str, Any]) -> None:
        """Point a request at things the server really has (most of the time)."""
        rng, catalog = self.rng, self.catalog
        params = message.get("params")
        if not isinstance(params, dict) or rng.random() < 0.15:
            return
        method = message["method"]
        if method == "tools/call" and catalog.tools:
            name = rng.choice(sorted(catalog.tools))
            params["name"] = name
            arguments = self._values.value(catalog.tools[name])
            params["arguments"] = arguments if isinstance(arguments, dict) else {}
            params.pop("task", None) if rng.random() < 0.8 else None
        elif method == "prompts/get" and catalog.prompts:
            name = rng.choice(sorted(catalog.prompts))
            params["name"] = name
            params["arguments"] = {a: safe_text(rng) for a in catalog.prompts[name]}
        elif method in ("resources/read", "resources/subscribe", "resources/unsubscribe"):
            uris = catalog.resources + [
                t.replace("{id}", safe_text(rng, 1, 4)) for t in catalog.templates
            ]
            if uris:
                params["uri"] = rng.choice(uris)
        elif method == "completion/complete":
            if catalog.prompts and rng.random() < 0.5:
                name = rng.choice(sorted(catalog.prompts))
                params["ref"] = {"type": "ref/prompt", "name": name}
                arg = rng.choice(catalog.prompts[name] or ["x"])
            elif catalog.templates:
                params["ref"] = {"type": "ref/resource", "uri": rng.choice(catalog.templates)}
                arg = "id"
            else:
                return
            params["argument"] = {"name": arg, "value": safe_text(rng, 0, 3)}
        elif method == "notifications/cancelled" and self._recent_ids:
            params["requestId"] = rng.choice(self._recent_ids)
        if self.modern is None and rng.random() < 0.3:
            meta = params.setdefault("_meta", {})
            if isinstance(meta, dict):
                meta["progressToken"] = rng.choice([safe_text(rng, 1, 6), rng.randint(0, 99)])

    def _numbered(self, message: dict[str, Any], category: str) -> Case:
        request_id = self._new_id()
        message["id"] = request_id
        return Case(category, encode(message), ((request_id, message["method"]),))

    def _notification_message(self) -> dict[str, Any]:
        name, method = self.rng.choice(_union_members(self.revision, "ClientNotification"))
        message: dict[str, Any] = self._values.value({"$ref": self._ref(name)})
        message["jsonrpc"] = "2.0"
        message["method"] = method
        self._aim(message)
        return message

    def _some_message(self) -> tuple[dict[str, Any], tuple[tuple[int | str, str], ...]]:
        """A valid request (numbered) or notification, as a dict, with what it expects."""
        if self.rng.random() < 0.8:
            message = self._request_message()
            message["id"] = self._new_id()
            return message, ((message["id"], message["method"]),)
        return self._notification_message(), ()

    # ------------------------------------------------------------------ categories

    def _valid_request(self) -> Case:
        return self._numbered(self._request_message(), "valid-request")

    def _valid_notification(self) -> Case:
        return Case("valid-notification", encode(self._notification_message()))

    def _mutated(self) -> Case:
        rng = self.rng
        message, expects = self._some_message()
        params = message.get("params")
        roll = rng.random()
        if roll < 0.25 and isinstance(params, dict) and params:
            del params[rng.choice(sorted(params))]
        elif roll < 0.5:
            _set_random_leaf(message, rng, self._values.scalar())
        elif roll < 0.6:
            message["params"] = rng.choice([[], [1, 2], "params", 3, None, True])
        elif roll < 0.7:
            message["method"] = rng.choice(
                ["", "tools/nothing", "Tools/List", "rpc.discover", safe_text(rng)]
            )
        elif roll < 0.8:
            del message[rng.choice(["jsonrpc", "method"])]
        elif roll < 0.9:
            message["jsonrpc"] = rng.choice(["1.0", "2", 2.0, None, ""])
        else:
            target = params if isinstance(params, dict) else message
            target[safe_text(rng, 1, 8)] = self._values.scalar()
        return Case("mutated", encode(message), expects)

    def _bad_headers(self) -> Case:
        """A valid request; :meth:`_routed` gets its headers wrong."""
        return self._numbered(self._request_message(), "bad-headers")

    def _modern_followup(self) -> Case:
        """A retry of an ``input_required`` result the server gave, or a tasks request."""
        assert self.modern is not None
        message = self.modern.retry(self._values) if self.rng.random() < 0.6 else None
        return self._numbered(message or self.modern.task_request(), "modern-followup")

    def _odd_id(self) -> Case:
        message = self._request_message()
        message["id"] = self.rng.choice(_ODD_IDS)
        return Case("odd-id", encode(message))

    def _notification_with_id(self) -> Case:
        return self._numbered(self._notification_message(), "notification-with-id")

    def _response_to_nothing(self) -> Case:
        rng = self.rng
        response_id = rng.choice([10**9 + rng.randint(0, 999), "nobody", 0, -5])
        if rng.random() < 0.5:
            body: dict[str, Any] = {"result": self._values.scalar()}
        else:
            body = {"error": {"code": rng.randint(-33000, 0), "message": safe_text(rng)}}
        return Case("response-to-nothing", encode({"jsonrpc": "2.0", "id": response_id, **body}))

    def _batch(self) -> Case:
        rng = self.rng
        if rng.random() < 0.15:
            return Case("batch", b"[]")
        items: list[Any] = []
        expects: list[tuple[int | str, str]] = []
        for _ in range(rng.randint(1, 5)):
            roll = rng.random()
            if roll < 0.6:
                message, expected = self._some_message()
                items.append(message)
                expects.extend(expected)
            elif roll < 0.75:
                items.append(rng.choice([1, "x", None, [], {}]))
            elif roll < 0.85:
                items.append([{"jsonrpc": "2.0", "method": "ping", "id": self._new_id()}])
            else:
                items.append({"jsonrpc": "2.0", "id": rng.randint(10**6, 10**7), "result": {}})
        return Case("batch", encode(items), tuple(expects))

    def _initialize_again(self) -> Case:
        rng = self.rng
        params = self._values.value({"$ref": self._ref("InitializeRequest")}).get("params", {})
        if rng.random() < 0.5:
            params["protocolVersion"] = rng.choice(
                ["2024-11-05", "2025-06-18", "2025-11-25", "1999-01-01", "", safe_text(rng)]
            )
        return self.request("initialize", params, "initialize-again")

    def _with_hole(self, *, keys: bool = False) -> tuple[bytes, tuple[tuple[int | str, str], ...]]:
        """A valid message encoded with :data:`_HOLE` (a JSON string) somewhere inside."""
        rng = self.rng
        message, expects = self._some_message()
        roll = rng.random()
        if roll < 0.1:
            message["method"] = _HOLE
        elif roll < 0.2 and "id" in message:
            message["id"] = _HOLE
            expects = ()
        elif keys and roll < 0.35:
            target = message.get("params")
            (target if isinstance(target, dict) else message)[_HOLE] = 1
        else:
            _set_random_leaf(message, rng, _HOLE)
        return encode(message), expects

    def _in_string(self, category: str, insertions: list[bytes]) -> Case:
        """Bad bytes (or escapes) inside a JSON string of a valid message."""
        encoded, expects = self._with_hole(keys=True)
        bad = self.rng.choice(insertions)
        return Case(category, encoded.replace(_HOLE.encode(), bad, 1), expects)

    def _as_token(self, category: str, token: bytes) -> Case:
        """A raw JSON token (or a not-quite-JSON one) in place of a value of a valid message."""
        encoded, expects = self._with_hole()
        if _HOLE_TOKEN not in encoded:  # the hole went into a key: use the value instead
            encoded = encoded.replace(_HOLE.encode(), b"k", 1)
            return Case(category, encoded, expects)
        return Case(category, encoded.replace(_HOLE_TOKEN, token, 1), expects)

    def _deep_nesting(self) -> Case:
        rng = self.rng
        depth = rng.choice([100, 500, 980, 1000, 2000, 5000, 20000])
        if rng.random() < 0.5:
            token = b"[" * depth + b"]" * depth
        else:
            token = b'{"a":' * depth + b"0" + b"}" * depth
        if rng.random() < 0.15:  # the whole message
            return Case("deep-nesting", token)
        return self._as_token("deep-nesting", token)

    def _huge_number(self) -> Case:
        rng = self.rng
        digits = rng.choice([400, 4300, 4301, 5000, 20000])
        token = rng.choice(
            [
                b"1" * digits,
                b"-" + b"9" * digits,
                b"1" + b"0" * digits + b".5",
                b"0." + b"0" * digits + b"1",
                b"1e" + b"9" * min(digits, 50),
            ]
        )
        if rng.random() < 0.3 and self.catalog.tools.get("add") is not None:
            request_id = self._new_id()
            raw = (
                b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add",'
                b'"arguments":{"a":%s,"b":1}}}' % (request_id, token)
            )
            return Case("huge-number", raw, ((request_id, "tools/call"),))
        return self._as_token("huge-number", token)

    def _duplicate_keys(self) -> Case:
        rng = self.rng
        message, expects = self._some_message()
        encoded = encode(message)
        key = rng.choice(["id", "method", "jsonrpc", "params", "result"])
        value = encode(rng.choice([self._values.scalar(), "ping", "2.0", {}, 999]))
        duplicate = b'"%s":%s,' % (key.encode(), value)
        params_at = encoded.find(b'"params":{')
        at = params_at + len(b'"params":{') if params_at >= 0 and rng.random() < 0.5 else 1
        return Case("duplicate-keys", encoded[:at] + duplicate + encoded[at:], expects)

    def _truncated(self) -> Case:
        message, _ = self._some_message()
        encoded = encode(message)
        return Case("truncated", encoded[: self.rng.randint(1, max(1, len(encoded) - 1))])

    def _random_bytes(self) -> Case:
        raw = self.rng.randbytes(self.rng.randint(1, 256)).replace(b"\n", b" ")
        return Case("random-bytes", raw)

    def _oversized(self) -> Case:
        size = self.oversized_bytes
        request_id = self._new_id()
        head = (
            b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo",' % request_id
        )
        body = head + b'"arguments":{"text":"' + b"a" * size + b'"}}}'
        return Case("oversized", body, ((request_id, "tools/call"),))


def _set_random_leaf(message: dict[str, Any], rng: random.Random, value: Any) -> None:
    """Replace one value somewhere in ``params`` (or add one) with ``value``."""
    params = message.get("params")
    if not isinstance(params, dict):
        message["params"] = {"x": value}
        return
    containers: list[dict[str, Any] | list[Any]] = []

    def collect(node: Any, depth: int) -> None:
        if depth > 6:
            return
        if isinstance(node, dict) and node:
            containers.append(node)
            for child in node.values():
                collect(child, depth + 1)
        elif isinstance(node, list) and node:
            containers.append(node)
            for child in node:
                collect(child, depth + 1)

    collect(params, 0)
    container = rng.choice(containers) if containers else params
    if isinstance(container, dict):
        key = rng.choice(sorted(container)) if container and rng.random() < 0.8 else "x"
        container[key] = value
    else:
        container[rng.randrange(len(container))] = value
