"""One run of a task: its cancel scope, and the questions its handler asks the client.

A :class:`RunningTask` is what :class:`~.tasks.TaskManager` starts for each task it
runs (and again, as the next attempt, for a task it took over from a dead worker:
see :mod:`.tasks`). It is the handler's input exchange, as an MRTR run is a modern
request's (:class:`~.protocols.InputExchange`), and the run the handler learns of as
``ctx.task_id`` / ``ctx.attempt`` (:class:`~.protocols.TaskRun`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import attrs
import msgspec
import trio

from ..protocol import errors
from ..protocol import types as t
from ..protocol.errors import McpError
from .mrtr import RESULT_TYPES

if TYPE_CHECKING:
    from .client_requests import Question
    from .context import Context


class Publishes(Protocol):
    """Where a run records the questions it waits on (a :class:`~.tasks.TaskManager`)."""

    async def publish_input(
        self, running: RunningTask, outstanding: Mapping[str, Any] | None
    ) -> None: ...


@attrs.define(eq=False)
class RunningTask:
    """The actor side of one task: its cancel scope, and its questions to the client.

    It is the input exchange of the task's handler (as an MRTR run is a modern
    request's): ``ctx.elicit``, ``ctx.sample``, ``ctx.list_roots`` and ``ctx.ask``
    in a task post their questions here; the task is ``input_required``, with them
    as ``inputRequests``, until ``tasks/update`` has answered every one.
    """

    task_id: str
    _manager: Publishes
    #: Whose task it is (see :attr:`TaskRecord.requestor`).
    requestor: str = ""
    #: Which run of the task this is (:attr:`TaskRecord.attempt`): its writes are fenced by it.
    attempt: int = 1
    #: Whether its tool declared a re-run safe (then a stopping worker leaves it to another).
    rerun_safe: bool = False
    scope: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    #: The handler's contexts (the exchange protocol of :mod:`.client_requests`).
    contexts: list[Context] = attrs.field(init=False, factory=list)
    _outstanding: dict[str, t.InputRequest] = attrs.field(init=False, factory=dict)
    #: Responses not yet taken by the ``ask`` that waits for them.
    _answers: dict[str, Any] = attrs.field(init=False, factory=dict)
    #: Set (and replaced) whenever responses arrive.
    _arrived: trio.Event = attrs.field(init=False, factory=trio.Event)
    _counters: dict[str, int] = attrs.field(init=False, factory=dict)
    _keys_used: set[str] = attrs.field(init=False, factory=set)
    #: Answers came through another worker: the record still shows them outstanding.
    _record_stale: bool = attrs.field(init=False, default=False)
    #: Set when the actor has ended (whatever its status).
    ended: trio.Event = attrs.field(init=False, factory=trio.Event)

    async def ask(self, questions: Sequence[Question[Any]]) -> list[Any]:
        """The client's responses to ``questions`` (decoded), once ``tasks/update`` has
        given them all. Keys are the questions' own or ``elicitation-1``, ``sampling-1``...
        and unique over the task's life (a key asked twice is a ValueError). Questions
        that concurrent tasks of the handler ask are outstanding together."""
        keys = [question.key or self._next_key(question.method) for question in questions]
        reused = self._keys_used.intersection(keys)
        if reused or len(set(keys)) != len(keys):
            raise ValueError(f"input request keys are used once per task: {sorted(keys)}")
        self._keys_used.update(keys)
        for key, question in zip(keys, questions, strict=True):
            self._outstanding[key] = t.InputRequest(method=question.method, params=question.params)
        await self._manager.publish_input(self, self._outstanding)
        while not all(key in self._answers for key in keys):
            await self._arrived.wait()
        if self._record_stale:  # answered on another worker: record what is left here
            self._record_stale = False
            await self._manager.publish_input(self, self._outstanding or None)
        return [
            _decode_answer(key, question.method, self._answers.pop(key))
            for key, question in zip(keys, questions, strict=True)
        ]

    async def answer(self, responses: Mapping[str, Any]) -> None:
        """Take the responses to outstanding keys (others are ignored) and wake the
        askers; the task is ``working`` again once none is outstanding."""
        if self.take(responses):
            await self._manager.publish_input(self, self._outstanding or None)

    def take(self, responses: Mapping[str, Any]) -> bool:
        """:meth:`answer` without recording the task's new state (never blocks): for
        answers another worker received; the woken asker records it. Whether any
        response was to an outstanding key."""
        taken = {key: value for key, value in responses.items() if key in self._outstanding}
        if not taken:
            return False
        for key, response in taken.items():
            del self._outstanding[key]
            self._answers[key] = response
        self._arrived.set()
        self._arrived = trio.Event()
        return True

    def take_from_elsewhere(self, responses: Mapping[str, Any]) -> bool:
        """:meth:`take`, for answers another worker received (the record is then
        updated here, by the asker it wakes)."""
        taken = self.take(responses)
        self._record_stale = self._record_stale or taken
        return taken

    def _next_key(self, method: str) -> str:
        prefix = method.split("/")[0]
        self._counters[prefix] = number = self._counters.get(prefix, 0) + 1
        return f"{prefix}-{number}"


def _decode_answer(key: str, method: str, raw: Any) -> Any:
    """A response as its question's result type; -32602 (the task fails) if it is not one."""
    try:
        return msgspec.convert(raw, RESULT_TYPES[method])
    except msgspec.ValidationError as error:
        raise McpError(
            errors.INVALID_PARAMS,
            f"Invalid params: inputResponses[{key!r}] is not a valid answer to {method}: {error}",
            {"key": key},
        ) from None
