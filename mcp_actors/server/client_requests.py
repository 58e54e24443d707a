"""What a server asks its client for: sampling, elicitation and roots.

These are outbound requests, each an outbound-call actor of the session (with its
timeout and cancellation). Use them through the handler's ``Context``
(``await ctx.sample(...)``, ``ctx.elicit``, ``ctx.elicit_url``, ``ctx.list_roots``),
which also ties them to the request being served (on HTTP they travel on that
request's response stream), or through a ``ServerSession`` outside any request.

Each one first checks that it may be sent, and raises
:class:`~mcp_actors.protocol.errors.ProtocolViolation` with the reason if not —
nothing is sent:

- the client did not declare the capability (``sampling``, ``elicitation``,
  ``roots``; ``sampling.tools`` for tool use; ``elicitation.url`` for URL mode);
- the negotiated revision lacks the feature (elicitation before 2025-06-18; URL
  mode, tools in sampling, content lists, richer enum forms before 2025-11-25;
  audio before 2025-03-26);
- the elicitation form is not the restricted flat schema (see :mod:`.elicitation`).

In the modern era (2026-07-28) a server sends the client no requests at all: inside
a ``tools/call``, ``prompts/get`` or ``resources/read`` handler the same calls ask
inside the result instead (``input_required``, MRTR: see :mod:`.mrtr`), and the
handler goes on when the client retries with the answers. A question the client
lacks the capability for is refused with -32021 (``data.requiredCapabilities``
names it) and nothing is asked; anywhere else in the modern era (``completion/complete``,
outside a request) a question is a :class:`ProtocolViolation` (-32600).

Each function builds a :class:`Question` (checks, params, how to read the answer)
and :func:`ask` puts one or several to the client: concurrent requests in a legacy
session, one round of ``inputRequests`` in the modern era.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypedDict, TypeVar, Unpack

import attrs
import trio
from msgspec import UNSET, UnsetType

from ..protocol import types as t
from ..protocol.errors import INVALID_REQUEST, ProtocolViolation, missing_client_capability
from ..protocol.jsonrpc import RequestId
from ..protocol.methods import has_capability
from .content import unset
from .elicitation import (
    ElicitationResult,
    check_content,
    check_form_schema,
    decode_content,
    form_schema,
)

if TYPE_CHECKING:
    from .protocols import Asks

R = TypeVar("R")

#: What ``messages`` may hold: a ``str`` is a user text message.
MessageLike = str | t.SamplingMessage
Timeout = float | UnsetType | None


@attrs.frozen
class Question(Generic[R]):
    """One thing to ask the client: its method and params, and how its answer is read.

    ``key`` names it in an MRTR round (modern era); None: the run's next default key.
    Built (and checked) by :func:`sampling`, :func:`elicitation`, :func:`url_elicitation`,
    :func:`roots`; put to the client by :func:`ask`.
    """

    method: str
    params: Any
    finish: Callable[[Any], R]
    key: str | None = None


async def ask(
    server_session: Asks,
    questions: Sequence[Question[Any]],
    *,
    related_request: RequestId | None = None,
    timeout: Timeout = UNSET,
) -> list[Any]:
    """The answers to ``questions``, in order: concurrent requests (legacy session), or
    one ``input_required`` round (modern era, see :mod:`.mrtr`; ``timeout`` does not
    apply there: the handler waits for the retry, up to the continuation's TTL).

    In a legacy session the first question to fail (an error the client answered, a
    timeout) ends the round: the others are withdrawn and that error is raised as it
    is, never inside an exception group (a tool would report the group as its crash).
    """
    exchange = server_session.input_exchange
    if exchange is not None:
        raw = await exchange.ask(questions)
    else:
        for question in questions:
            may_ask(server_session, question.method, _CAPABILITY[question.method])
        raw = [None] * len(questions)
        failed: list[Exception] = []

        async def one(index: int, question: Question[Any], scope: trio.CancelScope) -> None:
            try:
                raw[index] = await server_session.send_request(
                    question.method,
                    question.params,
                    related_request=related_request,
                    timeout=timeout,
                )
            except Exception as error:  # the first failure is the round's: the rest stop
                failed.append(error)
                scope.cancel()

        async with trio.open_nursery() as nursery:
            for index, question in enumerate(questions):
                nursery.start_soon(one, index, question, nursery.cancel_scope)
        if failed:  # raised as it is (an McpError the client answered...), not in a group
            raise failed[0]
    return [question.finish(answer) for question, answer in zip(questions, raw, strict=True)]


_CAPABILITY = {
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
    "roots/list": "roots",
}


class SamplingOptions(TypedDict, total=False):
    """The optional fields of a ``sampling/createMessage``, as every way of asking for one
    takes them as keywords (``Context.sample``, ``Context.sampling``,
    ``ServerSession.sample``, :func:`sampling`): written here once. None (or leaving
    one out) sends nothing for it. Any other keyword is a :class:`TypeError`."""

    #: The system prompt the server would like used.
    system_prompt: str | None
    temperature: float | None
    stop_sequences: Sequence[str] | None
    #: Which model the server would prefer (hints, cost/speed/intelligence priorities).
    model_preferences: t.ModelPreferences | None
    #: Which servers' context to include (soft-deprecated by the spec).
    include_context: t.IncludeContext | None
    #: Passed to the model's provider as it is.
    metadata: Mapping[str, Any] | None
    #: Tools the model may use (2025-11-25, the client's ``sampling.tools``).
    tools: Sequence[t.Tool] | None
    #: ``"auto"``, ``"required"``, ``"none"`` or a :class:`~mcp_actors.protocol.types.ToolChoice`.
    tool_choice: t.ToolChoice | str | None


def sampling(
    server_session: Asks,
    messages: str | Sequence[MessageLike],
    *,
    max_tokens: int,
    key: str | None = None,
    **options: Unpack[SamplingOptions],
) -> Question[t.CreateMessageResult]:
    """``sampling/createMessage``: the client's (model's) answer, as it is."""
    _check_sampling_options(options)
    tools, tool_choice = options.get("tools"), options.get("tool_choice")
    stop_sequences, metadata = options.get("stop_sequences"), options.get("metadata")
    may_ask(server_session, "sampling/createMessage", "sampling")
    _check_outbound(server_session, "sampling/createMessage")
    revision = server_session.state.revision
    listed = [messages] if isinstance(messages, str) else list(messages)
    sampling_messages = [
        m if isinstance(m, t.SamplingMessage) else t.SamplingMessage(role="user", content=_text(m))
        for m in listed
    ]
    if tools is not None or tool_choice is not None:
        if not revision.sampling_tools:
            raise ProtocolViolation(
                INVALID_REQUEST,
                "tools/tool_choice in sampling/createMessage need protocol revision 2025-11-25;"
                f" this session speaks {revision.name}",
            )
        if not _declared(server_session, "sampling", "tools"):
            raise ProtocolViolation(
                INVALID_REQUEST,
                "tools in sampling/createMessage need the client capability 'sampling.tools',"
                " which the client did not declare",
            )
    _check_sampling_content(sampling_messages, server_session)
    if isinstance(tool_choice, str):
        tool_choice = t.ToolChoice(mode=tool_choice)  # type: ignore[arg-type]
    params = t.CreateMessageParams(
        messages=sampling_messages,
        max_tokens=max_tokens,
        system_prompt=unset(options.get("system_prompt")),
        temperature=unset(options.get("temperature")),
        stop_sequences=list(stop_sequences) if stop_sequences is not None else UNSET,
        model_preferences=unset(options.get("model_preferences")),
        include_context=unset(options.get("include_context")),
        metadata=dict(metadata) if metadata is not None else UNSET,
        tools=list(tools) if tools is not None else UNSET,
        tool_choice=unset(tool_choice),
    )
    return Question("sampling/createMessage", params, _same, key)


def _check_sampling_options(options: Mapping[str, Any]) -> None:
    """A :class:`TypeError` naming any keyword that is not one of :class:`SamplingOptions`
    (a caller without a type checker misspelt one)."""
    unknown = options.keys() - SamplingOptions.__optional_keys__
    if unknown:
        raise TypeError(
            f"sampling/createMessage has no option {', '.join(sorted(unknown))}; it takes"
            f" {', '.join(sorted(SamplingOptions.__optional_keys__))}"
        )


async def create_message(
    server_session: Asks,
    messages: str | Sequence[MessageLike],
    *,
    max_tokens: int,
    related_request: RequestId | None = None,
    timeout: Timeout = UNSET,
    key: str | None = None,
    **options: Unpack[SamplingOptions],
) -> t.CreateMessageResult:
    """Send ``sampling/createMessage`` and return the client's (model's) answer."""
    question = sampling(server_session, messages, max_tokens=max_tokens, key=key, **options)
    (result,) = await ask(
        server_session, [question], related_request=related_request, timeout=timeout
    )
    return result  # type: ignore[no-any-return]


def _same(result: R) -> R:
    return result


def _text(value: str) -> t.TextContent:
    return t.TextContent(text=value)


def _check_sampling_content(messages: Sequence[t.SamplingMessage], server_session: Asks) -> None:
    revision = server_session.state.revision
    for message in messages:
        blocks = message.content if isinstance(message.content, list) else [message.content]
        if isinstance(message.content, list) and not revision.sampling_tools:
            raise ProtocolViolation(
                INVALID_REQUEST,
                "a list of contents in one sampling message needs protocol revision 2025-11-25;"
                f" this session speaks {revision.name}",
            )
        for block in blocks:
            if isinstance(block, (t.ToolUseContent, t.ToolResultContent)) and (
                not revision.sampling_tools
            ):
                raise ProtocolViolation(
                    INVALID_REQUEST,
                    f"{type(block).__name__} in sampling needs protocol revision 2025-11-25;"
                    f" this session speaks {revision.name}",
                )
            if isinstance(block, t.AudioContent) and not revision.audio_content:
                raise ProtocolViolation(
                    INVALID_REQUEST,
                    f"audio content needs protocol revision 2025-03-26; this session speaks"
                    f" {revision.name}",
                )


def elicitation(
    server_session: Asks,
    message: str,
    form: Mapping[str, Any] | type,
    *,
    key: str | None = None,
) -> Question[ElicitationResult[Any]]:
    """Form-mode ``elicitation/create``: the user's answer, checked against ``form``."""
    may_ask(server_session, "elicitation/create", "elicitation")
    _check_outbound(server_session, "elicitation/create")
    state = server_session.state
    if state.revision.url_elicitation and not _elicitation_mode(server_session, "form"):
        raise ProtocolViolation(
            INVALID_REQUEST,
            "form-mode elicitation needs the client capability 'elicitation.form'; the client"
            " declared only URL mode",
        )
    schema = form_schema(form)
    check_form_schema(schema, state.revision)
    params = t.ElicitParams(
        message=message,
        requested_schema=schema,
        mode="form" if state.revision.result_type else UNSET,
    )

    def finish(result: t.ElicitResult) -> ElicitationResult[Any]:
        if result.action != "accept":
            return ElicitationResult(result.action)
        content = check_content(schema, {} if result.content is UNSET else result.content)
        return ElicitationResult("accept", decode_content(content, form))

    return Question("elicitation/create", params, finish, key)


async def elicit(
    server_session: Asks,
    message: str,
    form: Mapping[str, Any] | type,
    *,
    related_request: RequestId | None = None,
    timeout: Timeout = UNSET,
    key: str | None = None,
) -> ElicitationResult[Any]:
    """Ask the user to fill ``form`` (a restricted schema, or a type); check what comes back."""
    question = elicitation(server_session, message, form, key=key)
    (result,) = await ask(
        server_session, [question], related_request=related_request, timeout=timeout
    )
    return result  # type: ignore[no-any-return]


def url_elicitation(
    server_session: Asks,
    message: str,
    url: str,
    *,
    elicitation_id: str | None = None,
    key: str | None = None,
) -> Question[ElicitationResult[None]]:
    """URL-mode ``elicitation/create`` (2025-11-25 on): the user's consent only."""
    may_ask(server_session, "elicitation/create", "elicitation")
    _check_outbound(server_session, "elicitation/create")
    state = server_session.state
    if not state.revision.url_elicitation:
        raise ProtocolViolation(
            INVALID_REQUEST,
            "URL-mode elicitation needs protocol revision 2025-11-25; this session speaks"
            f" {state.revision.name}",
        )
    if not _elicitation_mode(server_session, "url"):
        raise ProtocolViolation(
            INVALID_REQUEST,
            "URL-mode elicitation needs the client capability 'elicitation.url', which the"
            " client did not declare",
        )
    chosen = elicitation_id or uuid.uuid4().hex
    params = t.ElicitParams(message=message, mode="url", url=url, elicitation_id=chosen)

    def finish(result: t.ElicitResult) -> ElicitationResult[None]:
        return ElicitationResult(result.action, None, chosen)

    return Question("elicitation/create", params, finish, key)


async def elicit_url(
    server_session: Asks,
    message: str,
    url: str,
    *,
    elicitation_id: str | None = None,
    related_request: RequestId | None = None,
    timeout: Timeout = UNSET,
    key: str | None = None,
) -> ElicitationResult[None]:
    """Ask the user to visit ``url`` (URL mode, 2025-11-25); returns their consent only.

    What happens at the URL stays out of band; when it is done, tell the client
    with ``ServerSession.complete_elicitation(result.elicitation_id)``.
    """
    question = url_elicitation(server_session, message, url, elicitation_id=elicitation_id, key=key)
    (result,) = await ask(
        server_session, [question], related_request=related_request, timeout=timeout
    )
    return result  # type: ignore[no-any-return]


def roots(server_session: Asks, *, key: str | None = None) -> Question[list[t.Root]]:
    """``roots/list``: the client's roots."""
    may_ask(server_session, "roots/list", "roots")
    return Question("roots/list", t.EmptyParams(), _roots_of, key)


def _roots_of(result: t.ListRootsResult) -> list[t.Root]:
    return result.roots


async def list_roots(
    server_session: Asks,
    *,
    related_request: RequestId | None = None,
    timeout: Timeout = UNSET,
    key: str | None = None,
) -> list[t.Root]:
    """The client's roots (``roots/list``)."""
    (result,) = await ask(
        server_session,
        [roots(server_session, key=key)],
        related_request=related_request,
        timeout=timeout,
    )
    return result  # type: ignore[no-any-return]


def may_ask(server_session: Asks, method: str, capability: str) -> None:
    """Refuse ``method`` where the session cannot ask it (nothing is sent or asked).

    -32021 naming ``capability`` when a modern request did not declare it; a
    :class:`ProtocolViolation` where the modern era cannot ask at all (no MRTR
    exchange: outside ``tools/call``, ``prompts/get``, ``resources/read``).
    """
    revision = server_session.state.revision
    if revision.server_requests:
        return
    if not _declared(server_session, capability):
        raise missing_client_capability(
            {capability: {}}, f"{method} needs it, and this request did not declare it"
        )
    if server_session.input_exchange is None:
        raise ProtocolViolation(
            INVALID_REQUEST,
            f"{method} cannot be sent in protocol revision {revision.name}: there the server"
            " asks for client input inside the result of tools/call, prompts/get or"
            " resources/read (input_required) only",
        )


def _check_outbound(server_session: Asks, method: str) -> None:
    """The legacy lifecycle's check (the modern era asks inside results instead)."""
    if server_session.input_exchange is None:
        server_session.state.check_outbound(method)


def _declared(server_session: Asks, *path: str) -> bool:
    capabilities = server_session.client_capabilities
    return capabilities is not None and has_capability(capabilities, path)


def _elicitation_mode(server_session: Asks, mode: str) -> bool:
    """2025-11-25: ``elicitation: {}`` means form only; ``{url: {}}`` URL only."""
    capabilities = server_session.client_capabilities
    declared = capabilities.elicitation if capabilities is not None else UNSET
    if not isinstance(declared, dict):
        return False
    if mode == "form":
        return "form" in declared or "url" not in declared
    return mode in declared
