"""Check what WE put on the wire against the official JSON Schema of a protocol revision.

The schemas are packaged under ``mcp_actors/testing/schemas/<revision>/schema.json`` as
published (2024-11-05 .. 2025-06-18 are draft-07 with ``definitions``; 2025-11-25 and
later are 2020-12 with ``$defs``); each file's own ``$schema`` picks the dialect.

* :func:`validate_message` checks one encoded JSON-RPC message (or batch): the
  envelope (``JSONRPCMessage`` plus the envelope kind it claims to be), the specific
  definition of a request/notification whose method the revision defines
  (``tools/call`` -> ``CallToolRequest``), and, when told which request a response
  answers, the specific result (``CallToolResult``, ``CallToolResultResponse``, ...).
  It also enforces the JSON-RPC 2.0 rules the schemas leave out (``result`` and
  ``error`` are exclusive, a notification carries no ``id``, a batch is non-empty).
* :class:`WireRecorder` wraps a :class:`~mcp_actors.transports.abc.MessageStream`
  and records every payload sent (and received, to correlate responses);
  :func:`assert_all_valid` validates everything it recorded and checks id hygiene
  (unique outgoing request ids, at most one response per inbound request).

The tasks extension (``io.modelcontextprotocol/tasks``) has a schema of its own,
packaged under ``schemas/extensions/tasks/schema.json``: from 2026-07-28 on, its
methods (``tasks/get``, ``tasks/update``, ``tasks/cancel``, ``notifications/tasks``)
and a ``tools/call`` answered with ``resultType: "task"`` (``CreateTaskResult``) are
checked against it.

Validators are built once per (revision, definition) and cached.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import jsonschema
import jsonschema.exceptions
import jsonschema.validators

from mcp_actors.protocol.jsonrpc import encode_received
from mcp_actors.transports.abc import Inbound, MessageStream, Outgoing, RequestId

__all__ = [
    "REVISIONS",
    "SCHEMA_DIR",
    "PeerView",
    "Recorded",
    "WireRecorder",
    "assert_all_valid",
    "definition_for_method",
    "is_valid",
    "methods",
    "validate_message",
]

SCHEMA_DIR = Path(__file__).parent / "schemas"
REVISIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")

# Union definitions that happen to carry a ``method`` const in some revisions
# (2026-07-28's ``ClientNotification`` is a single-member union): never "the"
# definition of a method.
_UNION_NAMES = frozenset(
    {
        "ClientRequest",
        "ServerRequest",
        "ClientNotification",
        "ServerNotification",
        "Request",
        "Notification",
    }
)
_MAX_ERRORS_SHOWN = 5
_MAX_MESSAGE_SHOWN = 1500


# --------------------------------------------------------------------------- schemas


class _Revision:
    """One revision's schema document and lazily built, cached validators."""

    def __init__(self, revision: str) -> None:
        path = SCHEMA_DIR / revision / "schema.json"
        if not path.is_file():
            raise AssertionError(f"no schema for revision {revision!r} at {path}")
        self.revision = revision
        self.root: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        self.defs_key = "$defs" if "$defs" in self.root else "definitions"
        self.defs: dict[str, Any] = self.root[self.defs_key]
        self.cls = jsonschema.validators.validator_for(self.root)
        self.cls.check_schema(self.root)
        by_method: dict[str, list[str]] = {}
        for name, definition in self.defs.items():
            const = _method_const(definition)
            if (
                isinstance(const, str)
                and name not in _UNION_NAMES
                and not name.startswith("JSONRPC")
            ):
                by_method.setdefault(const, []).append(name)
        self.by_method = {m: tuple(sorted(names)) for m, names in by_method.items()}
        self._validators: dict[str, Any] = {}

    def has(self, name: str) -> bool:
        return name in self.defs

    def first(self, *names: str) -> str:
        for name in names:
            if name in self.defs:
                return name
        raise AssertionError(f"[{self.revision}] schema defines none of {names}")

    def validator(self, name: str) -> Any:
        validator = self._validators.get(name)
        if validator is None:
            if name not in self.defs:
                raise AssertionError(f"[{self.revision}] schema has no definition {name!r}")
            # The root document carries only ``$schema`` and the definitions, so adding a
            # ``$ref`` makes it "validate as <name>" in both draft-07 and 2020-12, with all
            # local references resolving against the same document.
            schema = {**self.root, "$ref": f"#/{self.defs_key}/{name}"}
            validator = self._validators[name] = self.cls(schema)
        return validator


def _method_const(definition: Mapping[str, Any]) -> Any:
    """The ``method`` a definition fixes: in its properties, or (the tasks extension's
    style) in one of its ``allOf`` parts."""
    parts = [definition, *definition.get("allOf", ())]
    for part in parts:
        const = part.get("properties", {}).get("method", {}).get("const")
        if const is not None:
            return const
    return None


@functools.cache
def _schemas(revision: str) -> _Revision:
    return _Revision(revision)


#: Where the tasks extension's schema is (relative to :data:`SCHEMA_DIR`), and from which
#: revision on it applies.
TASKS_SCHEMA = "extensions/tasks"
_TASKS_SINCE = "2026-07-28"


def _tasks_extension(rev: _Revision) -> _Revision | None:
    """The tasks extension's schema, for a revision that has the extension."""
    return _schemas(TASKS_SCHEMA) if rev.revision >= _TASKS_SINCE else None


def methods(revision: str) -> frozenset[str]:
    """Every method name the revision defines a request or notification for."""
    return frozenset(_schemas(revision).by_method)


def definition_for_method(revision: str, method: str) -> tuple[str, ...]:
    """Definition name(s) whose ``properties.method.const`` is ``method`` (empty if unknown)."""
    return _schemas(revision).by_method.get(method, ())


# --------------------------------------------------------------------------- validation


def _path(error: jsonschema.exceptions.ValidationError, prefix: str = "$") -> str:
    out = prefix
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _show(message: Any) -> str:
    text = json.dumps(message, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _MAX_MESSAGE_SHOWN else text[:_MAX_MESSAGE_SHOWN] + "...(truncated)"


def _schema_errors(rev: _Revision, name: str, instance: Any, prefix: str = "$") -> list[str]:
    """Readable errors (best match first) of ``instance`` against definition ``name``.

    ``prefix`` is the JSON path of ``instance`` inside the message, for the report.
    """
    errors = list(rev.validator(name).iter_errors(instance))
    if not errors:
        return []
    best = jsonschema.exceptions.best_match(errors)
    ordered = [best, *(e for e in errors if e is not best)]
    lines: list[str] = []
    for err in ordered[:_MAX_ERRORS_SHOWN]:
        lines.append(f"at {_path(err, prefix)}: {err.message}")
        if err.context:  # an anyOf/oneOf failure: say why the closest alternative failed
            closest = jsonschema.exceptions.best_match(err.context)
            lines.append(
                f"  closest alternative fails at {_path(closest, prefix)}: {closest.message}"
            )
    if len(ordered) > _MAX_ERRORS_SHOWN:
        lines.append(f"... and {len(ordered) - _MAX_ERRORS_SHOWN} more error(s)")
    return lines


def _decode(message: bytes | bytearray | memoryview | str | Mapping[str, Any] | list[Any]) -> Any:
    if isinstance(message, bytes | bytearray | memoryview | str):
        raw = bytes(message) if not isinstance(message, str) else message
        try:
            return json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise AssertionError(f"payload is not valid JSON ({exc}): {raw[:200]!r}") from None
    if isinstance(message, Mapping):
        return dict(message)
    return message


def _with_null_ids_named(rev: _Revision, decoded: Any) -> Any:
    """JSON-RPC 2.0's ``"id": null`` on an error that answers no identifiable request.

    Before 2025-11-25 the MCP schemas require a string or integer ``id`` on every
    error, so they cannot express the error JSON-RPC 2.0 mandates for a message
    whose id could not be read (a parse error, say). Such an error is checked
    with a placeholder id; everything else about it is still validated. From
    2025-11-25 on, ``id`` is optional and a null one is reported as the mistake it is.
    """
    error_def = rev.defs.get(rev.first("JSONRPCErrorResponse", "JSONRPCError"), {})
    if "id" not in error_def.get("required", ()):
        return decoded

    def named(item: Any) -> Any:
        if isinstance(item, dict) and "error" in item and item.get("id", 0) is None:
            return {**item, "id": "<unidentifiable request>"}
        return item

    return [named(i) for i in decoded] if isinstance(decoded, list) else named(decoded)


def _kind(message: Mapping[str, Any]) -> str:
    if "method" in message:
        return "request" if "id" in message else "notification"
    if "error" in message:
        return "error"
    return "result"


def _result_candidates(rev: _Revision, request: Mapping[str, Any] | str, result: Any) -> list[str]:
    """Result definitions a success response to ``request`` may match (any one)."""
    method = request if isinstance(request, str) else request.get("method")
    if not isinstance(method, str):
        return []
    if rev.revision == TASKS_SCHEMA:  # the tasks extension: its own results
        if method == "tools/call":
            return ["CreateTaskResult"]
        return [f"{name[: -len('Request')]}Result" for name in rev.by_method.get(method, ())]
    input_required = isinstance(result, Mapping) and result.get("resultType") == "input_required"
    out: list[str] = []
    for request_def in rev.by_method.get(method, ()):
        if not request_def.endswith("Request"):
            continue
        stem = request_def[: -len("Request")]
        # 2026-07-28+: ``<Stem>ResultResponse`` says whether the method may answer with an
        # InputRequiredResult; its anyOf is too loose to check directly (a bare
        # ``{"resultType": "complete"}`` satisfies InputRequiredResult), so dispatch on
        # ``resultType`` instead.
        response = json.dumps(rev.defs.get(f"{stem}ResultResponse", {}))
        if input_required and "InputRequiredResult" in response:
            out.append("InputRequiredResult")
        elif rev.has(f"{stem}Result"):
            out.append(f"{stem}Result")
        elif rev.has("EmptyResult"):  # ping, logging/setLevel, resources/subscribe, ...
            out.append("EmptyResult")
    # 2025-11-25 task-augmented requests answer with CreateTaskResult instead.
    params = request.get("params") if isinstance(request, Mapping) else None
    if isinstance(params, Mapping) and "task" in params and rev.has("CreateTaskResult"):
        out.append("CreateTaskResult")
    return out


def _problems(
    rev: _Revision,
    message: Any,
    in_reply_to: Mapping[str, Any] | str | None,
    allow_unknown_methods: bool,
) -> list[str]:
    """Everything wrong with one (non-batch) message; empty if it is valid."""
    if not isinstance(message, Mapping):
        return [f"a JSON-RPC message must be an object, got {type(message).__name__}"]
    kind = _kind(message)
    problems: list[str] = []

    # JSON-RPC 2.0 rules the MCP schemas do not spell out.
    if "result" in message and "error" in message:
        problems.append("a response must not carry both 'result' and 'error'")
    if kind in ("request", "notification") and ("result" in message or "error" in message):
        problems.append(f"a {kind} must not carry 'result'/'error'")
    if kind == "request" and message.get("id") is None:
        problems.append("a request id must not be null")

    envelope = {
        "request": rev.first("JSONRPCRequest"),
        "notification": rev.first("JSONRPCNotification"),
        "result": rev.first("JSONRPCResultResponse", "JSONRPCResponse"),
        "error": rev.first("JSONRPCErrorResponse", "JSONRPCError"),
    }[kind]
    if errors := _schema_errors(rev, envelope, message):
        problems.append(f"not a valid {envelope}:")
        problems.extend("  " + e for e in errors)
    elif errors := _schema_errors(rev, "JSONRPCMessage", message):
        problems.append("not a valid JSONRPCMessage:")
        problems.extend("  " + e for e in errors)

    if kind in ("request", "notification"):
        method = message.get("method")
        names = rev.by_method.get(method, ()) if isinstance(method, str) else ()
        extension = _tasks_extension(rev)
        if not names and extension is not None and isinstance(method, str):
            names = extension.by_method.get(method, ())
            rev = extension if names else rev
        if not names:
            if not allow_unknown_methods:
                problems.append(f"method {method!r} is not defined in revision {rev.revision}")
        else:
            wanted = "Request" if kind == "request" else "Notification"
            if not any(n.endswith(wanted) for n in names):
                other = "notification" if kind == "request" else "request"
                defined_as = ", ".join(names)
                problems.append(
                    f"{method!r} is a {other} in {rev.revision} ({defined_as})"
                    f" but was sent as a {kind}"
                )
            else:
                fitting = [n for n in names if n.endswith(wanted)]
                failures = [(n, _schema_errors(rev, n, message)) for n in fitting]
                if all(errs for _, errs in failures):
                    for name, errs in failures:
                        problems.append(f"{method!r} {kind} does not match {name}:")
                        problems.extend("  " + e for e in errs)
    elif kind == "result" and in_reply_to is not None:
        result = message.get("result")
        replied = in_reply_to if isinstance(in_reply_to, str) else in_reply_to.get("method")
        extension = _tasks_extension(rev)
        if extension is not None and (
            (isinstance(result, Mapping) and result.get("resultType") == "task")
            or (isinstance(replied, str) and replied.startswith("tasks/"))
        ):
            rev = extension
        failures = [
            (name, _schema_errors(rev, name, result, "$.result"))
            for name in _result_candidates(rev, in_reply_to, result)
        ]
        method = in_reply_to if isinstance(in_reply_to, str) else in_reply_to.get("method")
        if failures and all(errs for _, errs in failures):
            for name, errs in failures:
                problems.append(f"result for {method!r} does not match {name}:")
                problems.extend("  " + e for e in errs)
        elif [name for name, _ in failures] == ["InputRequiredResult"] and not (
            isinstance(result, Mapping) and ("inputRequests" in result or "requestState" in result)
        ):
            problems.append(
                "an InputRequiredResult needs at least one of 'inputRequests' or 'requestState'"
            )
    return problems


def validate_message(
    revision: str,
    message: bytes | bytearray | memoryview | str | Mapping[str, Any] | list[Any],
    *,
    in_reply_to: Mapping[str, Any] | str | None = None,
    allow_unknown_methods: bool = True,
) -> None:
    """Assert that ``message`` (encoded bytes/str, or decoded) is valid at ``revision``.

    ``in_reply_to`` (the request message, or just its method) additionally checks a
    success response's result against that method's result definition. Unknown
    methods (vendor extensions) pass unless ``allow_unknown_methods`` is false.
    Raises AssertionError explaining every problem found.
    """
    rev = _schemas(revision)
    try:
        decoded = _with_null_ids_named(rev, _decode(message))
    except AssertionError as exc:
        raise AssertionError(f"[{revision}] invalid message: {exc}") from None
    if isinstance(decoded, list):
        if not decoded:
            problems = ["an empty batch is not a valid JSON-RPC message"]
        else:
            problems = [f"batch: {e}" for e in _schema_errors(rev, "JSONRPCMessage", decoded)]
            if problems:
                problems.insert(
                    0, f"batches are not valid JSON-RPC messages in revision {revision}:"
                )
            for index, item in enumerate(decoded):
                problems.extend(
                    f"[{index}] {p}"
                    for p in _problems(rev, item, in_reply_to, allow_unknown_methods)
                )
    else:
        problems = _problems(rev, decoded, in_reply_to, allow_unknown_methods)
    if problems:
        body = "\n  ".join(problems)
        raise AssertionError(f"[{revision}] invalid message:\n  {body}\nmessage: {_show(decoded)}")


def is_valid(revision: str, message: Any, **kwargs: Any) -> bool:
    """``validate_message`` as a predicate."""
    try:
        validate_message(revision, message, **kwargs)
    except AssertionError:
        return False
    return True


# --------------------------------------------------------------------------- recording


class WireRecorder(MessageStream):
    """A MessageStream that records every payload going out (and coming in) through ``inner``.

    ``sent`` holds each outgoing :class:`Outgoing` in order (recorded before it is
    handed to ``inner``, so a message that a failing transport never delivered is
    still checked); ``received`` holds inbound payloads, used to tell which request
    an outgoing response answers.
    """

    def __init__(self, inner: MessageStream) -> None:
        self.inner = inner
        self.tool_headers = inner.tool_headers  # the client teaches the transport's own
        self.legacy_only = inner.legacy_only
        self.relates_messages = inner.relates_messages
        self.sent: list[Outgoing] = []
        self.received: list[bytes] = []

    @property
    def sent_payloads(self) -> list[bytes]:
        return [m.payload for m in self.sent]

    def sent_messages(self) -> list[Any]:
        """Decoded outgoing messages (batches stay lists)."""
        return [json.loads(p) for p in self.sent_payloads]

    async def receive(self) -> Inbound:
        data = await self.inner.receive()
        self.received.append(encode_received(data))
        return data

    async def receive_related(self) -> tuple[Inbound, RequestId | None]:
        data, related = await self.inner.receive_related()
        self.received.append(encode_received(data))
        return data, related

    async def send_all(self, messages: Sequence[Outgoing]) -> None:
        self.sent.extend(messages)
        await self.inner.send_all(messages)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def peer(self) -> PeerView:
        """What the peer sent (what this side received), to validate the messages of a
        peer we cannot wrap (a server process, a remote server)."""
        return PeerView(self)


class Recorded(Protocol):
    """What :func:`assert_all_valid` reads: the messages one side sent, and received."""

    @property
    def sent(self) -> Sequence[Outgoing]: ...

    @property
    def received(self) -> Sequence[bytes]: ...


class PeerView:
    """The other side of a :class:`WireRecorder`, live: its ``sent`` is what the recorder
    received, and the other way round."""

    def __init__(self, recorder: WireRecorder) -> None:
        self._recorder = recorder

    @property
    def sent(self) -> list[Outgoing]:
        return [Outgoing(payload) for payload in self._recorder.received]

    @property
    def received(self) -> list[bytes]:
        return self._recorder.sent_payloads


def _flatten(decoded: Any) -> list[Any]:
    return list(decoded) if isinstance(decoded, list) else [decoded]


def _id_key(value: Any) -> tuple[str, Any]:
    return (type(value).__name__, value)


def assert_all_valid(
    recorder: Recorded,
    revision: str,
    *,
    allow_unknown_methods: bool = True,
    check_ids: bool = True,
) -> None:
    """Validate every payload ``recorder`` sent at ``revision``.

    Raises one AssertionError listing every failure.

    Responses are checked against the result definition of the inbound request they
    answer. With ``check_ids``: outgoing request ids are never reused, and no inbound
    request is answered twice or a response sent for an id never received.
    """
    inbound_requests: dict[tuple[str, Any], Mapping[str, Any]] = {}
    for raw in recorder.received:
        try:
            decoded = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            continue  # garbage a test fed us on purpose
        for item in _flatten(decoded):
            if (
                isinstance(item, Mapping)
                and "method" in item
                and "id" in item
                and item["id"] is not None
            ):
                inbound_requests[_id_key(item["id"])] = item

    failures: list[str] = []
    request_ids: set[tuple[str, Any]] = set()
    answered: set[tuple[str, Any]] = set()
    for index, out in enumerate(recorder.sent):
        try:
            decoded = _decode(out.payload)
        except AssertionError as exc:  # not JSON at all
            failures.append(f"#{index}: {exc}")
            continue
        items = _flatten(decoded)
        reply_to = None
        if len(items) == 1 and isinstance(items[0], Mapping) and "method" not in items[0]:
            reply_to = inbound_requests.get(_id_key(items[0].get("id")))
        try:
            validate_message(
                revision, decoded, in_reply_to=reply_to, allow_unknown_methods=allow_unknown_methods
            )
        except AssertionError as exc:
            failures.append(f"#{index}: {exc}")
        if not check_ids:
            continue
        for item in items:
            if not isinstance(item, Mapping) or item.get("id") is None:
                continue
            key = _id_key(item["id"])
            if "method" in item:
                if key in request_ids:
                    failures.append(f"#{index}: request id {item['id']!r} reused")
                request_ids.add(key)
            else:
                if key in answered:
                    failures.append(f"#{index}: second response for request id {item['id']!r}")
                answered.add(key)
                if recorder.received and key not in inbound_requests:
                    failures.append(
                        f"#{index}: response for id {item['id']!r}, which no inbound request had"
                    )
    if failures:
        raise AssertionError(
            f"{len(failures)} invalid outgoing message(s) of {len(recorder.sent)} at {revision}:\n"
            + "\n".join(failures)
        )
