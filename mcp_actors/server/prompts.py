"""Prompts: a function's parameters become the prompt's arguments, its return value the messages.

::

    @server.prompt
    def review(code: str, language: Literal["python", "rust"] = "python") -> str:
        '''Review a piece of code.

        Args:
            code: The code to review.
        '''
        return f"Please review this {language} code:\\n{code}"

lists a prompt ``review`` with a required argument ``code`` (described by the
docstring's ``Args:`` section, or by ``Annotated[str, msgspec.Meta(description=...)]``)
and an optional ``language``. Arguments arrive as strings (the protocol says so)
and are decoded with the parameters' type hints (``"3"`` -> ``3`` for an ``int``);
a missing required argument or a value that does not decode is answered with
-32602 naming it. A ``Literal``/``Enum`` argument is completed automatically.

The return value becomes the messages:

- ``str`` or a content block: one ``user`` message;
- a ``PromptMessage``; or a list mixing all three (see :mod:`.content`'s
  ``user()`` / ``assistant()``);
- a ``GetPromptResult``: as is (its description defaults to the prompt's).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs
import msgspec
from msgspec import UNSET

from ..protocol import errors
from ..protocol import types as t
from .authorization import scope_set
from .calling import call_refusable, is_async
from .signature import ToolSignature

if TYPE_CHECKING:
    from .context import Context

_CONTENT = (t.TextContent, t.ImageContent, t.AudioContent, t.ResourceLink, t.EmbeddedResource)
_GOOGLE_ARG = re.compile(r"^\s*(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_SPHINX_ARG = re.compile(r"^\s*:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")


@attrs.define(eq=False)
class RegisteredPrompt:
    """A prompt: its wire definition and the function that renders it."""

    definition: t.Prompt
    function: Callable[..., Any]
    signature: ToolSignature
    #: OAuth scopes a caller's token must carry to use it (see :mod:`.authorization`).
    scopes: frozenset[str] = attrs.field(default=frozenset(), converter=scope_set, kw_only=True)
    is_async: bool = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self.is_async = is_async(self.function)

    @property
    def name(self) -> str:
        return self.definition.name

    async def render(
        self, arguments: Mapping[str, str] | None, context: Context
    ) -> t.GetPromptResult:
        """Decode ``arguments``, call the function, and convert what it returns."""
        signature = self.signature
        try:
            decoded = msgspec.convert(dict(arguments or {}), signature.arguments, strict=False)
        except msgspec.ValidationError as invalid:
            detail = _argument_error(invalid)
            raise errors.invalid_params(f"prompt {self.name!r}: {detail}") from None
        kwargs: dict[str, Any] = {name: getattr(decoded, name) for name in signature.argument_names}
        if signature.context_parameter is not None:
            kwargs[signature.context_parameter] = context
        value = await call_refusable(f"prompt {self.name!r}", self.function, kwargs, self.is_async)
        result = to_prompt_result(value)
        if result.description is UNSET and self.definition.description is not UNSET:
            result.description = self.definition.description
        return result


def prompt_arguments(
    signature: ToolSignature, function: Callable[..., Any]
) -> list[t.PromptArgument]:
    """The ``PromptArgument`` list for a prompt function, from its hints and docstring."""
    schema = signature.input_schema
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    documented = docstring_arguments(function)
    arguments = []
    for name in signature.argument_names:
        field_schema = properties.get(name, {})
        description = field_schema.get("description") or documented.get(name)
        title = field_schema.get("title")
        arguments.append(
            t.PromptArgument(
                name=name,
                title=title if title is not None else UNSET,
                description=description if description is not None else UNSET,
                required=name in required,
            )
        )
    return arguments


def argument_choices(signature: ToolSignature, name: str) -> list[str] | None:
    """The allowed values of a ``Literal``/``Enum`` argument (for completion), else None."""
    field_schema = signature.input_schema.get("properties", {}).get(name, {})
    schema = field_schema
    ref = field_schema.get("$ref")
    if isinstance(ref, str):
        schema = signature.input_schema.get("$defs", {}).get(ref.rsplit("/", 1)[-1], {})
    choices = schema.get("enum")
    if isinstance(choices, list) and all(isinstance(choice, str) for choice in choices):
        return list(choices)
    return None


def docstring_arguments(function: Callable[..., Any]) -> dict[str, str]:
    """Argument descriptions from a Google-style ``Args:`` section or Sphinx ``:param x:``.

    In an ``Args:`` section, entries are the lines at the first entry's indentation
    (``name: text`` or ``name (type): text``); deeper lines continue the entry.
    """
    found: dict[str, str] = {}
    entry_indent: int | None = None
    current: str | None = None
    for line in (inspect.getdoc(function) or "").splitlines():
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if sphinx := _SPHINX_ARG.match(line):
            current = sphinx.group(1)
            found[current] = sphinx.group(2).strip()
        elif stripped in ("Args:", "Arguments:", "Parameters:"):
            entry_indent, current = -1, None
        elif entry_indent is None or not stripped:
            current = None if not stripped else current
        elif entry_indent == -1 or indent == entry_indent:
            google = _GOOGLE_ARG.match(line)
            if google is None or indent == 0:
                entry_indent = current = None
                continue
            entry_indent, current = indent, google.group(1)
            found[current] = google.group(2).strip()
        elif indent > entry_indent and current is not None:
            found[current] = f"{found[current]} {stripped}".strip()
        else:
            entry_indent = current = None
    return found


def to_prompt_result(value: Any) -> t.GetPromptResult:
    """Convert what a prompt function returned into a ``GetPromptResult``."""
    if isinstance(value, t.GetPromptResult):
        return value
    items = value if isinstance(value, (list, tuple)) else [value]
    return t.GetPromptResult(messages=[_message(item) for item in items])


def _message(item: Any) -> t.PromptMessage:
    if isinstance(item, t.PromptMessage):
        return item
    if isinstance(item, str):
        return t.PromptMessage(role="user", content=t.TextContent(text=item))
    if isinstance(item, _CONTENT):
        return t.PromptMessage(role="user", content=item)
    raise TypeError(
        f"a prompt must return str, a content block, a PromptMessage, a list of those, or a"
        f" GetPromptResult; got {type(item).__name__}"
    )


def _argument_error(invalid: msgspec.ValidationError) -> str:
    text = str(invalid)
    missing = re.match(r"Object missing required field `(\w+)`", text)
    if missing:
        return f"missing required argument {missing.group(1)!r}"
    return f"invalid argument: {text}"
