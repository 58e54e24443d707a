"""What a handler gets to talk back: progress, logging, cancellation, requests to the client.

A :class:`Context` is made for each request whose handler asks for one (by
annotating a parameter with ``Context``). It is bound to that request: progress
goes to the request's ``progressToken``, log messages and server→client requests
are routed with the request (on HTTP, on its response stream).

Asking the client (``elicit``, ``sample``, ``list_roots``, several at once with
``ask``) works in both eras: a request to the client in a legacy session, an
``input_required`` round in the modern era (see :mod:`.mrtr`; ``key=`` names the
question there).

``ctx.session`` is the server's side of the client session, typed as
:class:`SessionView`: what handlers and the modules around them (tasks, mounts,
the gateway) may use of a :class:`~.server_session.ServerSession`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
from typing import Any, Final, Protocol, TypeVar, Unpack, overload

import attrs
import trio
from msgspec import UNSET, UnsetType

from ..protocol import types as t
from ..protocol.jsonrpc import RequestId
from ..runtime.request import InboundRequest
from ..runtime.session import Session
from ..transports.http.auth import Principal
from . import client_requests
from .client_requests import Question, SamplingOptions
from .elicitation import ElicitationResult
from .protocols import Asks, TaskRun

T = TypeVar("T")

LOG_LEVELS: Final[tuple[t.LoggingLevel, ...]] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
LOG_SEVERITY: Final[dict[str, int]] = {level: rank for rank, level in enumerate(LOG_LEVELS)}


class SessionView(Asks, Protocol):
    """The server's side of one client session, as a handler sees it (``ctx.session``) and
    the modules around handlers use it (:mod:`.tasks`, :mod:`.mount`, the gateway): a
    :class:`~.server_session.ServerSession` is one. What it asks the client with (its
    state, capabilities, ``send_request``) is :class:`~.protocols.Asks`.

    Typed against this Protocol rather than the class, those modules need not import
    the dispatcher, which imports them: the imports run one way (``tests/test_import_cycles.py``).
    """

    @property
    def session(self) -> Session:
        """The connection's session actor (runtime)."""
        ...

    @property
    def principal(self) -> Principal | None: ...

    @property
    def client_identity(self) -> Hashable: ...

    @property
    def client_info(self) -> t.Implementation | None: ...

    @property
    def protocol_version(self) -> str: ...

    @property
    def log_level(self) -> t.LoggingLevel | None:
        """The level the client set (None: none set)."""
        ...

    @property
    def log_threshold(self) -> t.LoggingLevel | None:
        """The lowest level the client gets (None: it gets none)."""
        ...

    @property
    def subscriptions(self) -> frozenset[str]: ...

    @property
    def trio_token(self) -> trio.lowlevel.TrioToken | None:
        """How another thread hands work to the server's Trio run (None: not running)."""
        ...

    @property
    def task(self) -> TaskRun | None:
        """The task whose run this view serves (None: a plain call)."""
        ...

    def client_extension(self, identifier: str) -> dict[str, Any] | None: ...

    async def log(
        self,
        level: t.LoggingLevel,
        data: Any,
        *,
        logger: str | None = None,
        related_request: RequestId | None = None,
    ) -> None: ...

    def log_soon(self, level: t.LoggingLevel, data: Any, *, logger: str | None = None) -> None: ...

    def notify_soon(self, method: str, params: Any = None) -> None: ...

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        result_type: Any = None,
        timeout: float | UnsetType | None = UNSET,
        related_request: RequestId | None = None,
    ) -> Any: ...

    async def sample(
        self,
        messages: str | Sequence[str | t.SamplingMessage],
        *,
        max_tokens: int,
        timeout: float | UnsetType | None = UNSET,
        **options: Unpack[SamplingOptions],
    ) -> t.CreateMessageResult: ...

    async def elicit(
        self, message: str, form: Mapping[str, Any] | type, **options: Any
    ) -> ElicitationResult[Any]: ...

    async def list_roots(self, *, timeout: float | UnsetType | None = UNSET) -> list[t.Root]: ...

    async def complete_elicitation(self, elicitation_id: str) -> None: ...

    async def serve_method(self, method: str, params: Any, request: InboundRequest) -> Any:
        """Answer ``method`` with the handler of the server this view answers from."""
        ...

    def context(self, request: InboundRequest) -> Context:
        """A :class:`Context` for a handler serving ``request``."""
        ...

    async def start_task(self, work: Callable[[], Awaitable[Any]]) -> t.CreatedTask:
        """Run ``work()`` as a task of the call this view serves (see :mod:`.tasks`)."""
        ...


@attrs.define(eq=False, slots=True)
class Context:
    """The handler's line back to the client, for the request being served."""

    _request: InboundRequest
    _session: SessionView

    @property
    def request_id(self) -> RequestId:
        return self._request.id

    @property
    def session(self) -> SessionView:
        """The server's view of this client session (client info, capabilities, revision)."""
        return self._session

    def client_extension(self, identifier: str) -> dict[str, Any] | None:
        """The settings the client declared for extension ``identifier``, or None if it
        did not declare it (then fall back to core behaviour; see :mod:`.extensions`)."""
        return self.session.client_extension(identifier)

    @property
    def principal(self) -> Principal | None:
        """Who called, as their access token says: ``subject``, ``scopes``, ``client_id``,
        ``claims`` (None on a transport that authenticates nobody, e.g. stdio)."""
        return self._session.principal

    @property
    def task_id(self) -> str | None:
        """The id of the task this call runs as (None: not a task). A task of a tool
        declared ``rerun_safe`` runs again, with the same id, when the worker running
        it dies (see :mod:`.tasks`): the id is the idempotency key that lets the
        handler recognise work it already did (a payment made, a row written)."""
        task = self._session.task
        return None if task is None else task.task_id

    @property
    def attempt(self) -> int:
        """Which run of the task this is: 1, then 2 after a first takeover... (1 for a
        call that is not a task)."""
        task = self._session.task
        return 1 if task is None else task.attempt

    @property
    def cancel_called(self) -> bool:
        """Whether the client has cancelled this request."""
        return self._request.cancel_called

    @property
    def progress_token(self) -> t.ProgressToken | None:
        stream = self._request.progress
        return None if stream is None else stream.token

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress, if the client asked for it (else a no-op).

        ``progress`` must increase at each call. Never blocks on a slow client: a
        newer report replaces one not yet sent.
        """
        stream = self._request.progress
        if stream is not None:
            stream.report(progress, total, message)
        await trio.lowlevel.checkpoint()

    @property
    def log_level(self) -> t.LoggingLevel | None:
        """The lowest level :meth:`log` sends at for this request (None: it sends nothing)."""
        return self._session.log_threshold

    async def log(self, level: t.LoggingLevel, data: Any, *, logger: str | None = None) -> None:
        """Send ``notifications/message`` if ``level`` is at or above the session's level."""
        await self._session.log(level, data, logger=logger, related_request=self._request.id)

    async def debug(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("debug", data, logger=logger)

    async def info(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("info", data, logger=logger)

    async def warning(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("warning", data, logger=logger)

    async def error(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("error", data, logger=logger)

    # -- asking the client ------------------------------------------------------------

    async def sample(
        self,
        messages: str | Sequence[str | t.SamplingMessage],
        *,
        max_tokens: int,
        timeout: float | UnsetType | None = UNSET,
        key: str | None = None,
        **options: Unpack[SamplingOptions],
    ) -> t.CreateMessageResult:
        """Ask the client's model for a message (``sampling/createMessage``).

        ``messages`` are ``SamplingMessage``s or strings (user text); the ``options``
        are those of :class:`~.client_requests.SamplingOptions` (``system_prompt``,
        ``temperature``, ``stop_sequences``, ``model_preferences``, ``include_context``,
        ``metadata``, ``tools``, ``tool_choice``). ``tools`` and ``tool_choice`` need
        protocol revision 2025-11-25 and the client's ``sampling.tools`` capability;
        without them a :class:`ProtocolViolation` says so and nothing is sent. So does
        a client without ``sampling``. ``key`` names the question in the modern era
        (default ``sampling-N``).
        """
        return await client_requests.create_message(
            self._session,
            messages,
            max_tokens=max_tokens,
            related_request=self._request.id,
            timeout=timeout,
            key=key,
            **options,
        )

    @overload
    async def elicit(
        self,
        message: str,
        form: type[T],
        *,
        timeout: float | UnsetType | None = UNSET,
        key: str | None = None,
    ) -> ElicitationResult[T]: ...

    @overload
    async def elicit(
        self,
        message: str,
        form: Mapping[str, Any],
        *,
        timeout: float | UnsetType | None = UNSET,
        key: str | None = None,
    ) -> ElicitationResult[dict[str, Any]]: ...

    async def elicit(
        self,
        message: str,
        form: Mapping[str, Any] | type[Any],
        *,
        timeout: float | UnsetType | None = UNSET,
        key: str | None = None,
    ) -> ElicitationResult[Any]:
        """Ask the user to fill a form (``elicitation/create``, form mode; 2025-06-18+).

        ``form`` is a restricted JSON Schema (a flat object of primitives) or a type
        (Struct, dataclass, TypedDict) it is derived from. The schema is checked
        before sending (:class:`ProtocolViolation` if the protocol does not allow
        it, the client lacks ``elicitation`` or the revision predates it); accepted
        content is checked against it (``ElicitationContentError``), defaults
        filled in, and decoded into ``form`` when it is a type. ``key`` names the
        question in the modern era (default ``elicitation-N``).
        """
        return await client_requests.elicit(
            self._session,
            message,
            form,
            related_request=self._request.id,
            timeout=timeout,
            key=key,
        )

    async def elicit_url(
        self,
        message: str,
        url: str,
        *,
        elicitation_id: str | None = None,
        timeout: float | UnsetType | None = UNSET,
        key: str | None = None,
    ) -> ElicitationResult[None]:
        """Ask the user to open ``url`` (URL-mode elicitation, 2025-11-25, ``elicitation.url``).

        The result says whether they agreed; ``result.elicitation_id`` names it for
        ``ctx.session.complete_elicitation(...)`` once the out-of-band step is done.
        """
        return await client_requests.elicit_url(
            self._session,
            message,
            url,
            elicitation_id=elicitation_id,
            related_request=self._request.id,
            timeout=timeout,
            key=key,
        )

    async def list_roots(
        self, *, timeout: float | UnsetType | None = UNSET, key: str | None = None
    ) -> list[t.Root]:
        """The client's roots (``roots/list``; needs the client's ``roots`` capability)."""
        return await client_requests.list_roots(
            self._session, related_request=self._request.id, timeout=timeout, key=key
        )

    # -- several questions at once ----------------------------------------------------

    def elicitation(
        self, message: str, form: Mapping[str, Any] | type, *, key: str | None = None
    ) -> Question[ElicitationResult[Any]]:
        """A form elicitation to put with others in :meth:`ask` (checked now)."""
        return client_requests.elicitation(self._session, message, form, key=key)

    def sampling(
        self,
        messages: str | Sequence[str | t.SamplingMessage],
        *,
        max_tokens: int,
        key: str | None = None,
        **options: Unpack[SamplingOptions],
    ) -> Question[t.CreateMessageResult]:
        """A sampling request to put with others in :meth:`ask` (options as :meth:`sample`)."""
        return client_requests.sampling(
            self._session, messages, max_tokens=max_tokens, key=key, **options
        )

    def roots(self, *, key: str | None = None) -> Question[list[t.Root]]:
        """A ``roots/list`` to put with others in :meth:`ask`."""
        return client_requests.roots(self._session, key=key)

    async def ask(
        self, *questions: Question[Any], timeout: float | UnsetType | None = UNSET
    ) -> list[Any]:
        """Put several questions at once; their answers, in order::

            name, reply, roots = await ctx.ask(
                ctx.elicitation("Your name?", {"type": "object", ...}, key="user_name"),
                ctx.sampling("Say hello", max_tokens=50, key="greeting"),
                ctx.roots(key="client_roots"),
            )

        Legacy era: concurrent requests to the client. Modern era: one
        ``input_required`` round carrying every question (a sequence of awaits would
        take one round each). Keys must differ within a round.
        """
        return await client_requests.ask(
            self._session, questions, related_request=self._request.id, timeout=timeout
        )

    async def relay(self, method: str, params: Any, *, key: str | None = None) -> Any:
        """Ask the client ``method`` (``sampling/createMessage``, ``elicitation/create`` or
        ``roots/list``) with ``params`` as they are, and return its answer as it is: how a
        gateway passes on a question its upstream asked. Both eras, like :meth:`ask`."""
        question = Question(method, params, _as_is, key)
        answers = await client_requests.ask(
            self._session, [question], related_request=self._request.id
        )
        return answers[0]

    def follow(self, request: InboundRequest) -> None:
        """Serve ``request`` from now on: an MRTR retry resumed this handler, and its
        progress and log messages belong to the retry."""
        self._request = request

    async def request(
        self, method: str, params: Any = None, *, result_type: Any = None, timeout: Any = UNSET
    ) -> Any:
        """Send a request to the client on behalf of this request and await its result."""
        return await self._session.request(
            method,
            params,
            result_type=result_type,
            timeout=timeout,
            related_request=self._request.id,
        )


def _as_is(answer: T) -> T:
    return answer
