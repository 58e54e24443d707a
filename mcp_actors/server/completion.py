"""Argument completion (``completion/complete``) for prompt arguments and template variables.

A *completer* suggests values for one argument of one prompt or resource template.
It is either a fixed list of choices, filtered by what the user typed so far
(case-insensitive prefix), or a function::

    @server.completion(prompt="review", argument="language")
    def languages(value: str) -> list[str]:
        return [name for name in KNOWN if name.startswith(value)]

    @server.completion(resource="repos://{owner}/{repo}", argument="repo")
    async def repos(value: str, arguments: Mapping[str, str]) -> list[str]:
        # ``arguments``: the values the client already resolved (2025-06-18+ ``context``)
        return await list_repos(arguments.get("owner", ""), prefix=value)

or, in one go, ``@server.prompt(complete={"language": ["python", "rust"]})`` /
``@server.resource(..., complete={"repo": repos})``. A function takes the partial
``value``, optionally the resolved ``arguments``, and may ask for the ``Context``
by annotation; it may be sync or async. Prompt arguments typed ``Literal[...]``
or with an ``Enum`` are completed from their choices without any code.

A completer returns an iterable of strings or a ``Completion``. The protocol
allows at most 100 values per answer: longer lists are cut to 100 with
``total`` set to the full count and ``hasMore`` true.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, Literal, TypeAlias, get_type_hints

import attrs
from msgspec import UNSET

from ..protocol import types as t
from .calling import call, is_async
from .context import Context

#: Most values a ``completion/complete`` answer may carry.
MAX_VALUES: Final = 100

#: A completion function, or a fixed list of choices.
CompleterLike: TypeAlias = Callable[..., Any] | Sequence[str]
#: ``("prompt", name, argument)`` or ``("resource", uri_template, argument)``.
CompletionKey: TypeAlias = tuple[Literal["prompt", "resource"], str, str]


@attrs.define(eq=False)
class Completer:
    """One argument's completer: a fixed list of choices, or a function."""

    choices: tuple[str, ...] | None = None
    function: Callable[..., Any] | None = None
    _value_parameter: str | None = attrs.field(init=False, default=None)
    _arguments_parameter: str | None = attrs.field(init=False, default=None)
    _context_parameter: str | None = attrs.field(init=False, default=None)
    _is_async: bool = attrs.field(init=False, default=False)

    def __attrs_post_init__(self) -> None:
        function = self.function
        if function is None:
            return
        self._is_async = is_async(function)
        try:
            hints = get_type_hints(function)
        except Exception:  # unresolvable annotations: fall back to positions
            hints = {}
        positional: list[str] = []
        for name, parameter in inspect.signature(function).parameters.items():
            hint = hints.get(name)
            if isinstance(hint, type) and issubclass(hint, Context):
                self._context_parameter = name
            elif parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                continue
            else:
                positional.append(name)
        if not positional or len(positional) > 2:
            raise TypeError(
                f"completer {function.__qualname__} must take (value) or (value, arguments),"
                f" plus an optional Context; it takes {positional}"
            )
        self._value_parameter = positional[0]
        if len(positional) == 2:
            self._arguments_parameter = positional[1]

    @classmethod
    def of(cls, completer: CompleterLike | Completer) -> Completer:
        """A :class:`Completer` from a function, a list of choices, or a Completer."""
        if isinstance(completer, Completer):
            return completer
        if callable(completer):
            return cls(function=completer)
        if isinstance(completer, str):
            raise TypeError("a completer is a function or a list of strings, not one string")
        return cls(choices=tuple(completer))

    async def complete(
        self, value: str, arguments: Mapping[str, str], context: Context
    ) -> t.Completion:
        """Suggestions for ``value``, at most :data:`MAX_VALUES` of them."""
        if self.function is None:
            prefix = value.casefold()
            choices = self.choices or ()
            return completion([c for c in choices if c.casefold().startswith(prefix)])
        kwargs: dict[str, Any] = {}
        if self._value_parameter is not None:
            kwargs[self._value_parameter] = value
        if self._arguments_parameter is not None:
            kwargs[self._arguments_parameter] = dict(arguments)
        if self._context_parameter is not None:
            kwargs[self._context_parameter] = context
        result = await call(self.function, kwargs, self._is_async)
        return completion(result)


def completion(values: t.Completion | Iterable[str] | None) -> t.Completion:
    """A protocol-sized ``Completion``: at most 100 values, ``total``/``hasMore`` when cut."""
    if values is None:
        return t.Completion(values=[])
    if isinstance(values, t.Completion):
        if len(values.values) <= MAX_VALUES:
            return values
        total = values.total if values.total is not UNSET else len(values.values)
        return t.Completion(values=values.values[:MAX_VALUES], total=total, has_more=True)
    if isinstance(values, str):
        raise TypeError("a completer must return an iterable of strings, not one string")
    listed = [str(value) for value in values]
    if len(listed) <= MAX_VALUES:
        return t.Completion(values=listed, total=len(listed), has_more=False)
    return t.Completion(values=listed[:MAX_VALUES], total=len(listed), has_more=True)


@attrs.define(eq=False)
class CompletionRegistry:
    """Completers keyed by what they complete: (kind, prompt name or template, argument)."""

    _completers: dict[CompletionKey, Completer] = attrs.field(factory=dict)

    def add(self, key: CompletionKey, completer: CompleterLike | Completer) -> None:
        self._completers[key] = Completer.of(completer)

    def get(self, key: CompletionKey) -> Completer | None:
        return self._completers.get(key)

    def discard_target(self, kind: Literal["prompt", "resource"], name: str) -> None:
        """Forget every completer of one prompt or template (it was removed)."""
        for key in [key for key in self._completers if key[0] == kind and key[1] == name]:
            del self._completers[key]

    def __len__(self) -> int:
        return len(self._completers)
