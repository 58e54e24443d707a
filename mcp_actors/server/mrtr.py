"""Multi round-trip requests (MRTR, 2026-07-28): a handler that asks the client, in the modern era.

The same handler code serves both eras: ``await ctx.elicit(...)``, ``ctx.sample(...)``,
``ctx.list_roots()`` (or several at once, ``ctx.ask(...)``). In a legacy session they
are requests to the client. In the modern era the server may not send the client
requests; it answers the call itself with ``resultType: "input_required"``, the
questions (``inputRequests``, by key) and a sealed ``requestState``; the client
retries the call with ``inputResponses``, and the handler goes on from where it
waited. Only ``tools/call``, ``prompts/get`` and ``resources/read`` may do this.

How a handler goes on — **continuation first, replay second**:

- *Continuation.* A modern call of those methods runs its handler as an actor of its
  own (a :class:`Run`), hosted by the server's supervisor rather than by the request:
  when the handler asks, the request is answered ``input_required`` and the actor
  stays parked in the server's :class:`Continuations`, waiting. The retry (a new
  JSON-RPC id, maybe on another connection) finds it by the id sealed in its
  ``requestState`` and hands it the answers; the handler's next answer (a result, an
  error, or more questions) answers the retry. Side effects before the question
  happen once.
- *Replay.* When the continuation is gone — expired (``continuation_ttl``), evicted
  by a bound (see :class:`Continuations`), the process restarted, or
  another worker got the retry — the handler runs again from the start, and its
  questions are answered from the responses the ``requestState`` carries plus the
  new ``inputResponses``, by key, until one is missing (then it is asked for again).
  A call carrying ``inputResponses`` and no ``requestState`` is answered the same way.
  A handler is *safe under replay* when what it does before its last question may be
  done twice: ask first, act after (or make the side effect idempotent).

Keys are what match answers to questions: give one (``key="user_name"``) or get
``elicitation-1``, ``sampling-1``, ``roots-1``... counted per handler run, so the same
code asks with the same keys every time. Every response is checked against the
shape of what it answers (an ``ElicitResult`` needs an ``action``...): a bad one is
-32602, whatever the handler does with the error. Responses nobody asked for are
ignored. A question for a capability the request's ``_meta`` does not declare is
refused with -32021 before anything is asked.
"""

from __future__ import annotations

import math
import secrets
import time
from collections.abc import Awaitable, Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar

import attrs
import msgspec
import trio
from msgspec import UNSET

from ..protocol import types as t
from ..protocol.errors import INVALID_PARAMS, McpError
from ..protocol.request_state import (
    RequestState,
    StateKeys,
    arguments_digest,
    check_binding,
    make_keys,
)
from ..runtime.actors import ActorHost
from ..runtime.request import InboundRequest
from .authorization import caller_key
from .protocols import Resumable

if TYPE_CHECKING:
    from .client_requests import Question
    from .context import Context

#: The methods whose result may be ``input_required`` (``basic/patterns/mrtr.mdx``).
MRTR_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})
#: What a response to each kind of question must decode as.
RESULT_TYPES: Final[dict[str, type[msgspec.Struct]]] = {
    "elicitation/create": t.ElicitResult,
    "sampling/createMessage": t.CreateMessageResult,
    "roots/list": t.ListRootsResult,
}
#: Scheduler turns a round waits for questions that sibling tasks ask at the same moment.
_GATHER_CHECKPOINTS: Final = 3
_KEY_PREFIX: Final = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}


def _positive(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{attribute.name} must be a number, not {value!r}")
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{attribute.name} must be positive and finite, not {value!r}")


def _count(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{attribute.name} must be an integer >= 0, not {value!r}")


def _state_keys(value: Any) -> StateKeys:
    if isinstance(value, StateKeys):
        return value
    if value is None:
        return make_keys(None)
    if isinstance(value, bytes):
        raise TypeError("state_keys: give a sequence of keys, e.g. (key,)")
    return make_keys(tuple(value))


@attrs.frozen
class MrtrSettings:
    """How a server asks for input in the modern era (see the module docstring).

    ``state_keys``: the 32-byte keys ``requestState`` is sealed with, the first seals
    and all open (rotation); default a random per-process key. Every worker behind
    one endpoint needs the same keys. ``state_lifetime``: seconds a ``requestState``
    is accepted. ``continuation_ttl``: seconds a parked handler waits for the retry
    before it is cancelled (the retry then replays). ``max_continuations``: parked
    handlers at most; ``max_continuations_per_caller``: parked handlers of one caller
    at most (either 0: never park, always replay; callers told apart by
    :func:`~.authorization.client_identity`: the authenticated caller, else the peer's
    address, else the connection). What goes when one is full: see :class:`Continuations`.
    """

    state_keys: StateKeys = attrs.field(factory=StateKeys.random, converter=_state_keys)
    state_lifetime: float = attrs.field(default=600.0, validator=_positive)
    continuation_ttl: float = attrs.field(default=60.0, validator=_positive)
    max_continuations: int = attrs.field(default=256, validator=_count)
    max_continuations_per_caller: int = attrs.field(default=64, validator=_count)


@attrs.frozen
class ContinuationStatistics:
    """Parked handlers now, and what became of them so far."""

    parked: int
    #: Handler runs started fresh, and those that started with answers (a replay).
    started: int
    replayed: int
    #: Retries that found their handler parked and resumed it.
    resumed: int
    #: Parked handlers cancelled: their TTL ran out, or the bound evicted them.
    expired: int
    evicted: int


# -- what a handler run tells the request serving it ------------------------------------


@attrs.frozen
class _Asked:
    requests: dict[str, t.InputRequest]


@attrs.frozen
class _Finished:
    result: Any


@attrs.frozen
class _Failed:
    error: Exception


_Outcome = _Asked | _Finished | _Failed


@attrs.define(eq=False)
class Run:
    """One run of a handler in the modern era: an actor that asks by returning questions.

    ``book`` holds every response known (by key); ``used`` those the handler took,
    which the next ``requestState`` carries. The request serving the run waits for
    its next outcome; the handler, when a question has no answer yet, posts the
    questions and waits for the answers (parked, between two requests).
    """

    book: dict[str, Any]
    #: Its id in the registry, given when it is first parked (what ``requestState`` names).
    id: str = ""
    #: Who it runs for (:func:`~.authorization.client_identity`), set when it is parked.
    caller: Hashable = ""
    scope: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    used: dict[str, Any] = attrs.field(factory=dict)
    #: A response that did not fit its question: the request's error, whatever the handler did.
    invalid: McpError | None = None
    finished: bool = False
    contexts: list[Context] = attrs.field(factory=list)
    view: Resumable | None = None
    _counters: dict[str, int] = attrs.field(factory=dict)
    _outcomes: tuple[trio.MemorySendChannel[_Outcome], trio.MemoryReceiveChannel[_Outcome]] = (
        attrs.field(factory=lambda: trio.open_memory_channel[_Outcome](1))
    )
    #: Questions of the round being gathered, and whether a round is posted or gathering.
    _pending: dict[str, t.InputRequest] = attrs.field(factory=dict)
    _round_open: bool = False
    #: Set when the round's answers arrive (a new event per round).
    _answered: trio.Event = attrs.field(factory=trio.Event)

    # -- the handler's side --

    async def ask(self, questions: Sequence[Question[Any]]) -> list[Any]:
        """The decoded responses to ``questions``, once the client has given them all.

        Questions asked at the same moment by concurrent tasks of the handler share a
        round (the first waits :data:`_GATHER_CHECKPOINTS` scheduler turns for the
        others); one asked later, while a round waits for its answers, goes in the next.
        """
        keys = [q.key or self._next_key(q.method) for q in questions]
        if len(set(keys)) != len(keys):
            raise ValueError(f"two questions of one round have the same key: {keys}")
        while True:
            missing = {
                key: t.InputRequest(method=q.method, params=q.params)
                for key, q in zip(keys, questions, strict=True)
                if key not in self.book
            }
            if not missing:
                break
            self._pending.update(missing)
            answered = self._answered
            if not self._round_open:
                self._round_open = True
                for _ in range(_GATHER_CHECKPOINTS):
                    await trio.lowlevel.checkpoint()
                self._outcomes[0].send_nowait(_Asked(dict(self._pending)))
                self._pending.clear()
            await answered.wait()
        return [self._take(key, q.method) for key, q in zip(keys, questions, strict=True)]

    def _next_key(self, method: str) -> str:
        prefix = _KEY_PREFIX.get(method, method)
        self._counters[prefix] = number = self._counters.get(prefix, 0) + 1
        return f"{prefix}-{number}"

    def _take(self, key: str, method: str) -> Any:
        raw = self.book[key]
        try:
            value = msgspec.convert(raw, RESULT_TYPES[method])
        except msgspec.ValidationError as error:
            self.invalid = McpError(
                INVALID_PARAMS,
                f"Invalid params: inputResponses[{key!r}] is not a valid answer to {method}:"
                f" {error}",
                {"key": key},
            )
            raise self.invalid from None
        self.used[key] = raw
        return value

    async def main(self, call: Callable[[], Awaitable[Any]], registry: Continuations) -> None:
        """The actor: run the handler, post how it ended; cancelled when its TTL runs out."""
        try:
            with self.scope:
                outcome: _Outcome
                try:
                    outcome = _Finished(await call())
                except Exception as error:
                    outcome = _Failed(error)
                self._outcomes[0].send_nowait(outcome)
        finally:
            self.finished = True
            registry.ended(self)

    # -- the request's side --

    def resume(self, responses: dict[str, Any], request: InboundRequest) -> None:
        """A retry brought ``responses``: the waiting handler goes on, serving ``request``."""
        self.book.update(responses)
        for context in self.contexts:
            context.follow(request)
        if self.view is not None:
            self.view.follow(request)
        self._round_open = False
        answered, self._answered = self._answered, trio.Event()
        answered.set()

    async def outcome(self) -> _Outcome:
        return await self._outcomes[1].receive()


@attrs.define(eq=False)
class Continuations:
    """The parked handler runs of one server, by id: bounded per caller and in all, each
    with a TTL.

    When one more is parked, room is made first under the caller's own bound
    (``max_continuations_per_caller``: that caller's oldest parked run goes), then
    under the server's (``max_continuations``: the oldest run of the caller with the
    most parked goes). So a caller can only ever push out its own runs while it holds
    more than anyone else: one client parking calls by the hundred cannot make another's
    retry re-run its handler. A run that goes is cancelled; its retry replays. A parked
    run is also cancelled when ``continuation_ttl`` seconds pass without its retry (a
    trio deadline on its own cancel scope: no sweeper). Runs live in the server's
    supervisor (see :meth:`host_of`).
    """

    settings: MrtrSettings
    _parked: dict[str, Run] = attrs.field(init=False, factory=dict)
    #: The same runs by caller, each caller's oldest first.
    _by_caller: dict[Hashable, dict[str, Run]] = attrs.field(init=False, factory=dict)
    _started: int = attrs.field(init=False, default=0)
    _replayed: int = attrs.field(init=False, default=0)
    _resumed: int = attrs.field(init=False, default=0)
    _expired: int = attrs.field(init=False, default=0)
    _evicted: int = attrs.field(init=False, default=0)

    def issued(self, request_state: object) -> bool:
        """Whether ``request_state`` is one this server sealed (and it is intact)."""
        try:
            self.settings.state_keys.open(request_state)
        except McpError:
            return False
        return True

    def start(
        self, host: ActorHost, book: dict[str, Any], call: Callable[[Run], Awaitable[Any]]
    ) -> Run:
        """Start a handler run (a replay when ``book`` holds answers) in ``host``."""
        run = Run(book)
        self._started += 1
        if book:
            self._replayed += 1
        host.start_actor(lambda: run.main(lambda: call(run), self))
        return run

    def take(self, run_id: str) -> Run | None:
        """The parked run ``run_id``, unparked (None: gone — expired, evicted, elsewhere)."""
        run = self._unpark(run_id)
        if run is None or run.finished or run.scope.cancel_called:
            return None
        run.scope.deadline = math.inf
        self._resumed += 1
        return run

    def park(self, run: Run, caller: Hashable) -> None:
        """Keep ``run`` waiting for the retry of ``caller``, for ``continuation_ttl``
        seconds at most, making room first (class docstring)."""
        settings = self.settings
        if min(settings.max_continuations, settings.max_continuations_per_caller) == 0:
            run.scope.cancel()
            return
        own = self._by_caller.get(caller, {})
        while len(own) >= settings.max_continuations_per_caller:
            self._evict(next(iter(own)))
        while len(self._parked) >= settings.max_continuations:
            busiest = max(self._by_caller.values(), key=len)
            self._evict(next(iter(busiest)))
        run.scope.deadline = trio.current_time() + settings.continuation_ttl
        if not run.id:
            run.id = secrets.token_urlsafe(16)
        run.caller = caller
        self._parked[run.id] = run
        self._by_caller.setdefault(caller, {})[run.id] = run

    def _evict(self, run_id: str) -> None:
        run = self._unpark(run_id)
        assert run is not None
        run.scope.cancel()
        self._evicted += 1

    def _unpark(self, run_id: str) -> Run | None:
        run = self._parked.pop(run_id, None)
        if run is not None:
            own = self._by_caller[run.caller]
            del own[run_id]
            if not own:
                del self._by_caller[run.caller]
        return run

    def ended(self, run: Run) -> None:
        if run.id and self._unpark(run.id) is not None:
            self._expired += 1

    def statistics(self) -> ContinuationStatistics:
        return ContinuationStatistics(
            parked=len(self._parked),
            started=self._started,
            replayed=self._replayed,
            resumed=self._resumed,
            expired=self._expired,
            evicted=self._evicted,
        )


# -- serving a modern request that may ask ----------------------------------------------

_raw_decode: Final = msgspec.json.Decoder()


def binding(method: str, params: Any) -> tuple[str, str]:
    """What a ``requestState`` is bound to: the target and a digest of the arguments."""
    if method == "resources/read":
        return params.uri, arguments_digest(None)
    arguments = params.arguments
    if isinstance(arguments, msgspec.Raw):
        try:
            arguments = _raw_decode.decode(arguments)
        except msgspec.DecodeError:
            arguments = None
    return params.name, arguments_digest(None if arguments is UNSET else arguments)


A = TypeVar("A", bound=Resumable)


async def serve(
    view: A,
    registry: Continuations,
    request: InboundRequest,
    params: Any,
    call: Callable[[A], Awaitable[Any]],
) -> Any:
    """Serve a modern ``tools/call``/``prompts/get``/``resources/read`` whose handler may ask.

    ``view`` is the request's own server session; ``call(view)`` runs the handler.
    Returns its result, or an ``InputRequiredResult``; raises its error, or -32602
    for a bad ``requestState`` or a response of the wrong shape.
    """
    settings = registry.settings
    keys = settings.state_keys
    responses = params.input_responses if params.input_responses is not UNSET else {}
    carried: dict[str, Any] = {}
    run: Run | None = None
    if params.request_state is not UNSET:
        state = keys.open(params.request_state)
        target, digest = binding(request.method, params)
        check_binding(
            state,
            method=request.method,
            target=target,
            digest=digest,
            now=time.time(),
            caller=caller_key(view.principal),
        )
        carried = state.answers
        if state.continuation:
            run = registry.take(state.continuation)
    if run is not None:
        run.resume(responses, request)
    else:

        async def run_handler(run: Run) -> Any:
            view.input_exchange = run
            run.view = view
            return await call(view)

        run = registry.start(host_of(request), {**carried, **responses}, run_handler)
    request.linked = run.scope  # a cancellation of the request reaches the handler at once
    try:
        outcome = await run.outcome()
    except BaseException:
        run.scope.cancel()  # the request was cancelled: nobody will retry this round
        raise
    if run.invalid is not None:
        run.scope.cancel()
        raise run.invalid
    if isinstance(outcome, _Finished):
        return outcome.result
    if isinstance(outcome, _Failed):
        raise outcome.error
    target, digest = binding(request.method, params)
    caller = caller_key(view.principal)
    registry.park(run, view.client_identity)
    sealed = keys.seal(
        RequestState(
            method=request.method,
            target=target,
            digest=digest,
            expires=time.time() + settings.state_lifetime,
            continuation=run.id,
            answers=run.used,
            caller=caller,
        )
    )
    return t.InputRequiredResult(
        result_type="input_required", input_requests=outcome.requests, request_state=sealed
    )


def host_of(request: InboundRequest) -> ActorHost:
    """Where a handler run of ``request`` lives: the supervisor of its session, if any,
    else the session itself (then the run ends with the session)."""
    return request.session.host or request.session
