"""The 2026-07-28 ("modern") era in the fuzzer: what a modern request carries besides its body.

A modern request has no handshake before it: it names its protocol version and
the client's capabilities (and maybe its info and a log level) in
``params._meta``, and over Streamable HTTP it mirrors routing fields into
headers — ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` and the
``Mcp-Param-*`` of a tool's ``x-mcp-header`` arguments, non-ASCII values (and,
sometimes, plain ones) as ``=?base64?…?=``. A :class:`ModernShaper` does that
to the messages a :class:`~.cases.CaseGenerator` draws, mostly right and
sometimes wrong (a ``_meta`` key missing or mistyped, an unknown version or log
level; a header missing, different, duplicated, malformed, not ASCII):

- :meth:`ModernShaper.stamp` puts a ``_meta`` on a message;
- :meth:`ModernShaper.headers` and :meth:`ModernShaper.bad_headers` give the
  HTTP headers of a payload;
- the era's own exchanges are aimed at what the server really answered
  (:meth:`ModernShaper.observe`): a retry of an ``input_required`` result with
  ``inputResponses`` and its ``requestState`` (or a tampered one), and the
  tasks extension's ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` of
  task ids the server handed out.

Headers are built with the client's own encoder
(:mod:`mcp_actors.protocol.routing_headers`): the fuzzer aims at the server's
checks, it does not re-implement them.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
from collections import deque
from collections.abc import Mapping
from functools import cache
from typing import Any, Final

from mcp_actors.protocol.routing_headers import (
    NAME_PARAMS,
    ToolHeaders,
    encode_header_value,
)
from mcp_actors.testing.wire import SCHEMA_DIR, TASKS_SCHEMA

from .schema_values import SchemaValues, safe_text

MODERN: Final = "2026-07-28"
TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY: Final = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY: Final = "io.modelcontextprotocol/logLevel"
TASK_METHODS: Final = ("tasks/get", "tasks/update", "tasks/cancel")
#: The result an input request of each method is answered with (``inputResponses``).
_INPUT_RESULTS: Final = {
    "sampling/createMessage": "CreateMessageResult",
    "elicitation/create": "ElicitResult",
    "roots/list": "ListRootsResult",
}
_LOG_LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "emergency")
_OTHER_VERSIONS: Final = ("2025-11-25", "2024-11-05", "2099-01-01", "v999.0.0", "", "2026-07-28 x")
#: Header values no well-behaved encoder produces (each must be refused or ignored).
_MALFORMED: Final = (
    b"=?base64?!!!?=",
    b"=?base64?YR==?=",  # not canonical ("a" is "YQ==")
    b"=?base64?YQ?=",  # no padding
    b"=?BASE64?YQ==?=",  # the markers are lower-case
    b"=?base64?",
    b"\xc3\xa9t\xc3\xa9",  # raw UTF-8
    b"\xff",
    b"",
)

Headers = tuple[tuple[str, bytes], ...]
#: What a header value cannot carry as it is (see :func:`_ascii`).
_UNSENDABLE: Final = re.compile(r"[^\x20-\x7e]")


@cache
def tasks_schema() -> dict[str, Any]:
    """The tasks extension's schema (its requests and results)."""
    loaded: dict[str, Any] = json.loads((SCHEMA_DIR / TASKS_SCHEMA / "schema.json").read_text())
    return loaded


class ModernShaper:
    """Modern-era ``_meta``, headers and follow-ups for the messages of one generator."""

    def __init__(self, rng: random.Random, tools: Mapping[str, Mapping[str, Any]]) -> None:
        self.rng = rng
        self.tool_headers = ToolHeaders()
        self.tool_headers.learn(tools.items())
        self._tasks = SchemaValues(tasks_schema(), rng)
        #: (tools/call params sent, its input_required result), newest last.
        self.input_required: deque[tuple[dict[str, Any], dict[str, Any]]] = deque(maxlen=16)
        self.task_ids: deque[str] = deque(maxlen=16)

    # ------------------------------------------------------------------ _meta

    def capabilities(self) -> dict[str, Any]:
        """Client capabilities, each declared half the time (the tasks extension too)."""
        rng = self.rng
        capabilities: dict[str, Any] = {}
        if rng.random() < 0.5:
            capabilities["sampling"] = {}
        if rng.random() < 0.5:
            capabilities["elicitation"] = rng.choice([{}, {"form": {}}, {"form": {}, "url": {}}])
        if rng.random() < 0.5:
            capabilities["roots"] = {}
        if rng.random() < 0.5:
            capabilities["extensions"] = {TASKS_EXTENSION: {}}
        return capabilities

    def valid_meta(self) -> dict[str, Any]:
        """A right ``_meta``: the version and capabilities."""
        return {VERSION_KEY: MODERN, CAPABILITIES_KEY: self.capabilities()}

    def meta(self) -> dict[str, Any]:
        """A request's ``_meta``: right nine times in ten, else one thing wrong with it."""
        rng = self.rng
        meta = self.valid_meta()
        if rng.random() < 0.7:
            meta[CLIENT_INFO_KEY] = {"name": "fuzz", "version": "0"}
        if rng.random() < 0.3:
            meta[LOG_LEVEL_KEY] = rng.choice(_LOG_LEVELS)
        if rng.random() < 0.3:
            meta["progressToken"] = rng.choice([safe_text(rng, 1, 6), rng.randint(0, 99)])
        roll = rng.random()
        if roll < 0.02:
            del meta[VERSION_KEY]
        elif roll < 0.04:
            del meta[CAPABILITIES_KEY]
        elif roll < 0.06:
            meta[VERSION_KEY] = rng.choice([*_OTHER_VERSIONS, 20260728, None, ["2026-07-28"]])
        elif roll < 0.07:
            meta[CAPABILITIES_KEY] = rng.choice([None, [], "all", 1])
        elif roll < 0.08:
            meta[LOG_LEVEL_KEY] = rng.choice(["verbose", "", 3, None, "DEBUG", ["debug"], {}])
        elif roll < 0.09:
            meta[CLIENT_INFO_KEY] = rng.choice([{}, {"name": 1}, "fuzz", None])
        return meta

    def stamp(self, message: dict[str, Any]) -> None:
        """Give a request its ``_meta`` (the schema's random one stays, now and then)."""
        params = message.get("params")
        if not isinstance(params, dict):
            return
        if self.rng.random() < 0.97:
            params["_meta"] = self.meta()

    # ------------------------------------------------------------------ follow-ups

    def observe(self, request: Any, result: Any) -> None:
        """Remember what a reply offers to follow up: an ``input_required`` result of a
        ``tools/call`` (its params and the result), a task id."""
        if not isinstance(request, dict) or not isinstance(result, dict):
            return
        task_id = result.get("taskId")
        if isinstance(task_id, str):
            self.task_ids.append(task_id)
        params = request.get("params")
        if (
            result.get("resultType") == "input_required"
            and request.get("method") == "tools/call"
            and isinstance(params, dict)
        ):
            self.input_required.append((params, result))

    def retry(self, values: SchemaValues) -> dict[str, Any] | None:
        """A ``tools/call`` answering a remembered ``input_required`` result (its
        ``requestState`` echoed, tampered with, or left out), or None if none is known."""
        rng = self.rng
        if not self.input_required:
            return None
        params, result = rng.choice(self.input_required)
        retried = {key: value for key, value in params.items() if key != "_meta"}
        retried["_meta"] = self.meta()
        requests = result.get("inputRequests")
        if isinstance(requests, dict) and rng.random() < 0.9:
            retried["inputResponses"] = {
                key: self.answer(values, request) for key, request in requests.items()
            }
        state = result.get("requestState")
        roll = rng.random()
        if isinstance(state, str) and roll < 0.7:
            retried["requestState"] = state
        elif isinstance(state, str) and roll < 0.85:
            retried["requestState"] = _tampered(rng, state)
        elif roll < 0.9:
            retried["requestState"] = safe_text(rng)
        return {"jsonrpc": "2.0", "method": "tools/call", "params": retried}

    def answer(self, values: SchemaValues, request: Any) -> Any:
        """The client's result for one input request (now and then the wrong one)."""
        rng = self.rng
        method = request.get("method") if isinstance(request, dict) else None
        name = _INPUT_RESULTS.get(method) if isinstance(method, str) else None
        if name is None or rng.random() < 0.1:
            name = rng.choice(list(_INPUT_RESULTS.values()))
        if rng.random() < 0.05:
            return values.scalar()
        return values.value({"$ref": f"#/$defs/{name}"})

    def task_request(self) -> dict[str, Any]:
        """A ``tasks/get``, ``tasks/update`` or ``tasks/cancel``, mostly of a task id the
        server handed out."""
        rng = self.rng
        method = rng.choice(TASK_METHODS)
        name = {"tasks/get": "GetTaskRequest", "tasks/update": "UpdateTaskRequest"}.get(
            method, "CancelTaskRequest"
        )
        message: dict[str, Any] = self._tasks.value({"$ref": f"#/$defs/{name}"})
        message["jsonrpc"], message["method"] = "2.0", method
        params = message.setdefault("params", {})
        if isinstance(params, dict):
            if self.task_ids and rng.random() < 0.85:
                params["taskId"] = rng.choice(self.task_ids)
            params["_meta"] = self.meta()
        return message

    # ------------------------------------------------------------------ HTTP headers

    def headers(self, payload: bytes) -> Headers:
        """The routing headers an HTTP client sends with ``payload``: its version, and
        for a message it can read, the method, ``Mcp-Name`` and ``Mcp-Param-*``."""
        rng = self.rng
        message = readable(payload)
        if not isinstance(message, dict):
            return (("MCP-Protocol-Version", MODERN.encode()),)
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        meta = params.get("_meta")
        version = meta.get(VERSION_KEY) if isinstance(meta, dict) else None
        headers = [("MCP-Protocol-Version", version if isinstance(version, str) else MODERN)]
        method = message.get("method")
        if isinstance(method, str):
            headers.append(("Mcp-Method", method))
        field = NAME_PARAMS.get(method) if isinstance(method, str) else None
        name = params.get(field) if field is not None else None
        if isinstance(name, str):
            arguments = params.get("arguments")
            try:  # (a lone surrogate has no UTF-8: such a header cannot be sent at all)
                headers.append(("Mcp-Name", self._encoded(name)))
                if method == "tools/call" and isinstance(arguments, dict):
                    encoded = json.dumps(arguments).encode()
                    for header, value in self.tool_headers.for_call(name, encoded).items():
                        headers.append((header, value if rng.random() < 0.8 else _wrapped(value)))
            except UnicodeEncodeError:
                pass
        return tuple((header, _ascii(value)) for header, value in headers)

    def _encoded(self, value: str) -> str:
        """``value`` as a header: encoded when it must be, wrapped now and then anyway."""
        encoded = encode_header_value(value)
        return _wrapped(encoded) if encoded == value and self.rng.random() < 0.15 else encoded

    def bad_headers(self, headers: Headers) -> Headers:
        """``headers`` with one thing wrong (or merely unusual: a name in another case,
        a blank inside a value, an unknown ``Mcp-Param-*``)."""
        rng = self.rng
        out = list(headers)
        roll = rng.random()
        index = rng.randrange(len(out))
        name, value = out[index]
        if roll < 0.2:
            del out[index]
        elif roll < 0.4:
            out[index] = (name, rng.choice(_MALFORMED))
        elif roll < 0.55:
            other = rng.choice([*_OTHER_VERSIONS, "tools/list", "x", safe_text(rng, 1, 8)])
            out[index] = (name, _ascii(other))
        elif roll < 0.65:
            out.append((name, rng.choice([value, value + b"x"])))
        elif roll < 0.75:
            out[index] = (rng.choice([name.lower(), name.upper()]), value)
        elif roll < 0.85:
            inside = value[:1] + b" \t" + value[1:] if len(value) > 1 else b"a \tb"
            out[index] = (name, inside)  # (at an edge h11 would not send it)
        else:
            unknown = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(1, 6)))
            out.append((f"Mcp-Param-{unknown}", b"1"))
        return tuple(out)


#: The largest payload whose routing fields are read (an oversized one goes with its
#: version header only: it is refused for its size anyway).
_READ_AT_MOST: Final = 1024 * 1024


def readable(payload: bytes) -> Any:
    """``payload`` decoded (bytes that are not UTF-8 replaced), or None if it is not
    JSON a client could have meant (too big, too deep, not JSON at all)."""
    if len(payload) > _READ_AT_MOST:
        return None
    try:
        return json.loads(payload.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None


def routed_revision(headers: Headers, legacy: tuple[str, ...]) -> str | None:
    """The revision whose rules answer a POST sent with ``headers``: a legacy revision
    its ``MCP-Protocol-Version`` names (legacy routing: no session, so an error), any
    revision (None) when it has none (then the body decides), else the modern era."""
    versions = [value for name, value in headers if name.lower() == "mcp-protocol-version"]
    if not versions:
        return None
    named = versions[0].decode("ascii", "replace")
    return named if named in legacy else MODERN


def _wrapped(value: str) -> str:
    """``value`` in the ``=?base64?…?=`` wrapper (allowed for any value)."""
    if value.startswith("=?base64?"):
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode('ascii')}?="


def _ascii(value: str) -> bytes:
    """``value`` as an HTTP client can send it: visible ASCII, no edge blanks (h11
    refuses control characters and those), anything else as ``?``."""
    return _UNSENDABLE.sub("?", value.strip()).encode("ascii")


def _tampered(rng: random.Random, state: str) -> str:
    """``state`` with one character changed (or cut short)."""
    if not state or rng.random() < 0.3:
        return state[: len(state) // 2]
    at = rng.randrange(len(state))
    replacement = "A" if state[at] != "A" else "B"
    return state[:at] + replacement + state[at + 1 :]
