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

In the modern era (2026-07-28) a server sends the client no requests at all: it asks
for input inside its result (``input_required``, MRTR), which this runtime does not
do yet. There, a request the client lacks the capability for is refused with
-32021 (``data.requiredCapabilities`` names it), as the revision prescribes; one it
has the capability for with a :class:`ProtocolViolation` (-32600) saying so. Either
error ends the handler and becomes the request's error response.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from msgspec import UNSET, UnsetType

from ..protocol import types as t
from ..protocol.errors import INVALID_REQUEST, ProtocolViolation, missing_client_capability
from ..protocol.jsonrpc import RequestId
from ..protocol.methods import has_capability
from .elicitation import (
    ElicitationResult,
    check_content,
    check_form_schema,
    decode_content,
    form_schema,
)

if TYPE_CHECKING:
    from .app import ServerSession

#: What ``messages`` may hold: a ``str`` is a user text message.
MessageLike = str | t.SamplingMessage
Timeout = float | UnsetType | None


def _unset(value: Any) -> Any:
    return UNSET if value is None else value


async def create_message(
    server_session: ServerSession,
    messages: str | Sequence[MessageLike],
    *,
    max_tokens: int,
    system_prompt: str | None = None,
    temperature: float | None = None,
    stop_sequences: Sequence[str] | None = None,
    model_preferences: t.ModelPreferences | None = None,
    include_context: t.IncludeContext | None = None,
    metadata: Mapping[str, Any] | None = None,
    tools: Sequence[t.Tool] | None = None,
    tool_choice: t.ToolChoice | str | None = None,
    related_request: RequestId | None = None,
    timeout: Timeout = UNSET,
) -> t.CreateMessageResult:
    """Send ``sampling/createMessage`` and return the client's (model's) answer."""
    may_ask(server_session, "sampling/createMessage", "sampling")
    state = server_session.state
    state.check_outbound("sampling/createMessage")
    revision = state.revision
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
        system_prompt=_unset(system_prompt),
        temperature=_unset(temperature),
        stop_sequences=list(stop_sequences) if stop_sequences is not None else UNSET,
        model_preferences=_unset(model_preferences),
        include_context=_unset(include_context),
        metadata=dict(metadata) if metadata is not None else UNSET,
        tools=list(tools) if tools is not None else UNSET,
        tool_choice=_unset(tool_choice),
    )
    result: t.CreateMessageResult = await server_session.session.request(
        "sampling/createMessage", params, related_request=related_request, timeout=timeout
    )
    return result


def _text(value: str) -> t.TextContent:
    return t.TextContent(text=value)


def _check_sampling_content(
    messages: Sequence[t.SamplingMessage], server_session: ServerSession
) -> None:
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


async def elicit(
    server_session: ServerSession,
    message: str,
    form: Mapping[str, Any] | type,
    *,
    related_request: RequestId | None = None,
    timeout: Timeout = UNSET,
) -> ElicitationResult[Any]:
    """Ask the user to fill ``form`` (a restricted schema, or a type); check what comes back."""
    may_ask(server_session, "elicitation/create", "elicitation")
    state = server_session.state
    state.check_outbound("elicitation/create")
    if state.revision.url_elicitation and not _elicitation_mode(server_session, "form"):
        raise ProtocolViolation(
            INVALID_REQUEST,
            "form-mode elicitation needs the client capability 'elicitation.form'; the client"
            " declared only URL mode",
        )
    schema = form_schema(form)
    check_form_schema(schema, state.revision)
    params = t.ElicitParams(message=message, requested_schema=schema)
    result: t.ElicitResult = await server_session.session.request(
        "elicitation/create", params, related_request=related_request, timeout=timeout
    )
    if result.action != "accept":
        return ElicitationResult(result.action)
    content = check_content(schema, {} if result.content is UNSET else result.content)
    return ElicitationResult("accept", decode_content(content, form))


async def elicit_url(
    server_session: ServerSession,
    message: str,
    url: str,
    *,
    elicitation_id: str | None = None,
    related_request: RequestId | None = None,
    timeout: Timeout = UNSET,
) -> ElicitationResult[None]:
    """Ask the user to visit ``url`` (URL mode, 2025-11-25); returns their consent only.

    What happens at the URL stays out of band; when it is done, tell the client
    with ``ServerSession.complete_elicitation(result.elicitation_id)``.
    """
    may_ask(server_session, "elicitation/create", "elicitation")
    state = server_session.state
    state.check_outbound("elicitation/create")
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
    elicitation_id = elicitation_id or uuid.uuid4().hex
    params = t.ElicitParams(message=message, mode="url", url=url, elicitation_id=elicitation_id)
    result: t.ElicitResult = await server_session.session.request(
        "elicitation/create", params, related_request=related_request, timeout=timeout
    )
    return ElicitationResult(result.action, None, elicitation_id)


async def list_roots(
    server_session: ServerSession,
    *,
    related_request: RequestId | None = None,
    timeout: Timeout = UNSET,
) -> list[t.Root]:
    """The client's roots (``roots/list``)."""
    may_ask(server_session, "roots/list", "roots")
    result: t.ListRootsResult = await server_session.session.request(
        "roots/list", related_request=related_request, timeout=timeout
    )
    return result.roots


def may_ask(server_session: ServerSession, method: str, capability: str) -> None:
    """Refuse ``method`` where the session's revision has no server-to-client requests.

    -32021 naming ``capability`` when the client did not declare it, else a
    :class:`ProtocolViolation` (see the module docstring). Nothing is sent.
    """
    revision = server_session.state.revision
    if revision.server_requests:
        return
    if not _declared(server_session, capability):
        raise missing_client_capability(
            {capability: {}}, f"{method} needs it, and this request did not declare it"
        )
    raise ProtocolViolation(
        INVALID_REQUEST,
        f"{method} cannot be sent in protocol revision {revision.name}: there the server asks"
        " for client input inside its result (input_required), which mcp_actors does not"
        " support yet",
    )


def _declared(server_session: ServerSession, *path: str) -> bool:
    capabilities = server_session.client_capabilities
    return capabilities is not None and has_capability(capabilities, path)


def _elicitation_mode(server_session: ServerSession, mode: str) -> bool:
    """2025-11-25: ``elicitation: {}`` means form only; ``{url: {}}`` URL only."""
    capabilities = server_session.client_capabilities
    declared = capabilities.elicitation if capabilities is not None else UNSET
    if not isinstance(declared, dict):
        return False
    if mode == "form":
        return "form" in declared or "url" not in declared
    return mode in declared
