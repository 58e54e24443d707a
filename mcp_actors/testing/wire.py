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

The schemas themselves are loaded and indexed by :mod:`.revision_schemas`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import jsonschema
import jsonschema.exceptions
import jsonschema.validators

from mcp_actors.transports.abc import Inbound, MessageStream, Outgoing, RequestId, encode_inbound

from .revision_schemas import (
    REVISIONS,
    SCHEMA_DIR,
    TASKS_SCHEMA,
    RevisionSchema,
    definition_for_method,
    methods,
    schema_of,
    tasks_extension,
)

__all__ = [
    "REVISIONS",
    "SCHEMA_DIR",
    "TASKS_SCHEMA",
    "PeerView",
    "Recorded",
    "WireRecorder",
    "assert_all_valid",
    "definition_for_method",
    "is_valid",
    "methods",
    "validate_message",
]

_MAX_ERRORS_SHOWN = 5
_MAX_MESSAGE_SHOWN = 1500


# --------------------------------------------------------------------------- validation


def _path(error: jsonschema.exceptions.ValidationError, prefix: str = "$") -> str:
    out = prefix
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _show(message: Any) -> str:
    text = json.dumps(message, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _MAX_MESSAGE_SHOWN else text[:_MAX_MESSAGE_SHOWN] + "...(truncated)"


def _schema_errors(rev: RevisionSchema, name: str, instance: Any, prefix: str = "$") -> list[str]:
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


def _with_null_ids_named(rev: RevisionSchema, decoded: Any) -> Any:
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


def _result_type(result: Any) -> Any:
    """A result's ``resultType`` (2026-07-28+), ``None`` when it has none."""
    return result.get("resultType") if isinstance(result, Mapping) else None


def _result_candidates(
    rev: RevisionSchema, request: Mapping[str, Any] | str, result: Any
) -> list[str]:
    """Result definitions a success response to ``request`` may match (any one)."""
    method = request if isinstance(request, str) else request.get("method")
    if not isinstance(method, str):
        return []
    definitions = rev.by_method.get(method, ())
    if rev.revision == TASKS_SCHEMA:
        return _extension_results(method, definitions)
    input_required = _result_type(result) == "input_required"
    stems = [_stem(d) for d in definitions if d.endswith("Request")]
    out = [name for stem in stems if (name := _result_definition(rev, stem, input_required))]
    if _task_augmented(request) and rev.has("CreateTaskResult"):
        out.append("CreateTaskResult")  # 2025-11-25: such a request answers with a task
    return out


def _extension_results(method: str, definitions: Sequence[str]) -> list[str]:
    """The tasks extension's own results: a task for ``tools/call``, else ``<Stem>Result``."""
    if method == "tools/call":
        return ["CreateTaskResult"]
    return [_stem(d) + "Result" for d in definitions]


def _stem(request_definition: str) -> str:
    """``CallToolRequest`` -> ``CallTool``."""
    return request_definition.removesuffix("Request")


def _task_augmented(request: Mapping[str, Any] | str) -> bool:
    """Whether a request asked to run as a task (``params.task``, 2025-11-25)."""
    params = request.get("params") if isinstance(request, Mapping) else None
    return isinstance(params, Mapping) and "task" in params


def _result_definition(rev: RevisionSchema, stem: str, input_required: bool) -> str | None:
    """The result definition of request ``<stem>Request``, ``None`` if the revision has none.

    2026-07-28+: ``<Stem>ResultResponse`` says whether the method may answer with an
    InputRequiredResult; its anyOf is too loose to check directly (a bare
    ``{"resultType": "complete"}`` satisfies InputRequiredResult), so the choice follows
    the result's ``resultType`` instead.
    """
    response = json.dumps(rev.defs.get(f"{stem}ResultResponse", {}))
    if input_required and "InputRequiredResult" in response:
        return "InputRequiredResult"
    if rev.has(f"{stem}Result"):
        return f"{stem}Result"
    if rev.has("EmptyResult"):  # ping, logging/setLevel, resources/subscribe, ...
        return "EmptyResult"
    return None


#: The envelope definition each kind of message must match (the first name the revision has).
_ENVELOPES: Mapping[str, tuple[str, ...]] = {
    "request": ("JSONRPCRequest",),
    "notification": ("JSONRPCNotification",),
    "result": ("JSONRPCResultResponse", "JSONRPCResponse"),
    "error": ("JSONRPCErrorResponse", "JSONRPCError"),
}
_SENT = ("request", "notification")  # the kinds that carry a method


def _jsonrpc_problems(message: Mapping[str, Any], kind: str) -> list[str]:
    """The JSON-RPC 2.0 rules the MCP schemas do not spell out, as (broken, says) rows."""
    answers = "result" in message or "error" in message
    rules = (
        (
            "result" in message and "error" in message,
            "a response must not carry both 'result' and 'error'",
        ),
        (kind in _SENT and answers, f"a {kind} must not carry 'result'/'error'"),
        (kind == "request" and message.get("id") is None, "a request id must not be null"),
    )
    return [says for broken, says in rules if broken]


def _headed(header: str, errors: list[str]) -> list[str]:
    """``errors`` indented under ``header``; nothing when there are none."""
    return [header, *("  " + e for e in errors)] if errors else []


def _envelope_problems(rev: RevisionSchema, message: Mapping[str, Any], kind: str) -> list[str]:
    """The message against its kind's envelope, then (if that fits) ``JSONRPCMessage``."""
    envelope = rev.first(*_ENVELOPES[kind])
    if errors := _schema_errors(rev, envelope, message):
        return _headed(f"not a valid {envelope}:", errors)
    return _headed("not a valid JSONRPCMessage:", _schema_errors(rev, "JSONRPCMessage", message))


def _none_fits(what: str, failures: list[tuple[str, list[str]]]) -> list[str]:
    """Each candidate definition's errors when every one of them fails; else nothing."""
    if not failures or not all(errors for _, errors in failures):
        return []
    return [
        line
        for name, errors in failures
        for line in _headed(f"{what} does not match {name}:", errors)
    ]


def _definitions(rev: RevisionSchema, method: Any) -> tuple[RevisionSchema, tuple[str, ...]]:
    """The schema that defines ``method`` (the revision's, else its tasks extension's) and
    the definitions there; the revision and none when neither defines it."""
    names = rev.by_method.get(method, ()) if isinstance(method, str) else ()
    extension = tasks_extension(rev)
    if names or extension is None or not isinstance(method, str):
        return rev, names
    in_extension = extension.by_method.get(method, ())
    return (extension, in_extension) if in_extension else (rev, ())


def _method_problems(
    rev: RevisionSchema, message: Mapping[str, Any], kind: str, allow_unknown_methods: bool
) -> list[str]:
    """A request or notification against its method's own definition(s)."""
    method = message.get("method")
    rev, names = _definitions(rev, method)
    if not names:
        if allow_unknown_methods:
            return []
        return [f"method {method!r} is not defined in revision {rev.revision}"]
    wanted = "Request" if kind == "request" else "Notification"
    fitting = [n for n in names if n.endswith(wanted)]
    if not fitting:
        other = "notification" if kind == "request" else "request"
        return [
            f"{method!r} is a {other} in {rev.revision} ({', '.join(names)})"
            f" but was sent as a {kind}"
        ]
    return _none_fits(f"{method!r} {kind}", [(n, _schema_errors(rev, n, message)) for n in fitting])


def _result_schema(rev: RevisionSchema, result: Any, method: Any) -> RevisionSchema:
    """Where a result's definition is: the tasks extension for a task or a ``tasks/*``
    answer (in a revision that has the extension), else the revision itself."""
    extension = tasks_extension(rev)
    replied_tasks = isinstance(method, str) and method.startswith("tasks/")
    if extension is not None and (_result_type(result) == "task" or replied_tasks):
        return extension
    return rev


def _result_problems(
    rev: RevisionSchema, message: Mapping[str, Any], in_reply_to: Mapping[str, Any] | str
) -> list[str]:
    """A success response's result against the result definition(s) of what it answers."""
    result = message.get("result")
    method = in_reply_to if isinstance(in_reply_to, str) else in_reply_to.get("method")
    rev = _result_schema(rev, result, method)
    failures = [
        (name, _schema_errors(rev, name, result, "$.result"))
        for name in _result_candidates(rev, in_reply_to, result)
    ]
    if problems := _none_fits(f"result for {method!r}", failures):
        return problems
    asks = isinstance(result, Mapping) and ("inputRequests" in result or "requestState" in result)
    if [name for name, _ in failures] == ["InputRequiredResult"] and not asks:
        return ["an InputRequiredResult needs at least one of 'inputRequests' or 'requestState'"]
    return []


def _problems(
    rev: RevisionSchema,
    message: Any,
    in_reply_to: Mapping[str, Any] | str | None,
    allow_unknown_methods: bool,
) -> list[str]:
    """Everything wrong with one (non-batch) message; empty if it is valid."""
    if not isinstance(message, Mapping):
        return [f"a JSON-RPC message must be an object, got {type(message).__name__}"]
    kind = _kind(message)
    problems = _jsonrpc_problems(message, kind) + _envelope_problems(rev, message, kind)
    if kind in _SENT:
        problems += _method_problems(rev, message, kind, allow_unknown_methods)
    elif kind == "result" and in_reply_to is not None:
        problems += _result_problems(rev, message, in_reply_to)
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
    rev = schema_of(revision)
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
        self.received.append(encode_inbound(data))
        return data

    async def receive_related(self) -> tuple[Inbound, RequestId | None]:
        data, related = await self.inner.receive_related()
        self.received.append(encode_inbound(data))
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


def _inbound_requests(received: Sequence[bytes]) -> dict[tuple[str, Any], Mapping[str, Any]]:
    """The requests among the received payloads, by id (garbage a test fed on purpose skipped)."""
    requests: dict[tuple[str, Any], Mapping[str, Any]] = {}
    for raw in received:
        try:
            decoded = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            continue
        for item in _flatten(decoded):
            if isinstance(item, Mapping) and "method" in item and item.get("id") is not None:
                requests[_id_key(item["id"])] = item
    return requests


def _reply_to(
    items: list[Any], inbound: Mapping[tuple[str, Any], Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """The inbound request a lone outgoing response answers, if known."""
    if len(items) == 1 and isinstance(items[0], Mapping) and "method" not in items[0]:
        return inbound.get(_id_key(items[0].get("id")))
    return None


class _IdLedger:
    """Id hygiene across everything one side sent: outgoing request ids are never reused,
    and each response answers a distinct inbound request that was received."""

    def __init__(
        self, inbound: Mapping[tuple[str, Any], Mapping[str, Any]], received_any: bool
    ) -> None:
        self._inbound = inbound
        self._received_any = received_any  # with nothing received, any response id goes
        self._request_ids: set[tuple[str, Any]] = set()
        self._answered: set[tuple[str, Any]] = set()

    def problems(self, item: Any) -> list[str]:
        """What is wrong with one sent message's id (and note the id)."""
        if not isinstance(item, Mapping) or item.get("id") is None:
            return []
        key, shown = _id_key(item["id"]), item["id"]
        if "method" in item:
            reused = key in self._request_ids
            self._request_ids.add(key)
            return [f"request id {shown!r} reused"] if reused else []
        rules = (
            (key in self._answered, f"second response for request id {shown!r}"),
            (
                self._received_any and key not in self._inbound,
                f"response for id {shown!r}, which no inbound request had",
            ),
        )
        self._answered.add(key)
        return [says for broken, says in rules if broken]


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
    inbound = _inbound_requests(recorder.received)
    ledger = _IdLedger(inbound, bool(recorder.received))
    failures: list[str] = []
    for index, out in enumerate(recorder.sent):
        try:
            decoded = _decode(out.payload)
        except AssertionError as exc:  # not JSON at all
            failures.append(f"#{index}: {exc}")
            continue
        items = _flatten(decoded)
        try:
            validate_message(
                revision,
                decoded,
                in_reply_to=_reply_to(items, inbound),
                allow_unknown_methods=allow_unknown_methods,
            )
        except AssertionError as exc:
            failures.append(f"#{index}: {exc}")
        if check_ids:
            failures.extend(f"#{index}: {p}" for item in items for p in ledger.problems(item))
    if failures:
        raise AssertionError(
            f"{len(failures)} invalid outgoing message(s) of {len(recorder.sent)} at {revision}:\n"
            + "\n".join(failures)
        )
