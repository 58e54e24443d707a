"""Registered tools: calling one, and turning what it returns (or raises) into a result.

A failure inside a tool is the tool's result, not the protocol's: bad arguments,
exceptions and a return value JSON cannot carry (an integer past Python's
4,300-digit conversion limit, say the sum of two such arguments) become
``CallToolResult(isError=True)`` with a message naming the problem, so the model
on the other side can read it and try again. Only an unknown tool name, arguments
that are not JSON text at all (invalid UTF-8: -32700), or an :class:`McpError`
the tool raises on purpose, is a JSON-RPC error.

A tool that refuses what the caller asked for (a path outside its directory, a file
that is not there) raises :class:`ToolError`: its text is the ``isError`` result as
written (never masked: it is meant for the caller) and the server logs one DEBUG line,
no traceback — the caller's mistake is not the server's error, and a caller repeating
it cannot flood the log.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import attrs
import msgspec
from msgspec import UNSET, UnsetType

from ..protocol import types as t
from ..protocol.errors import INVALID_PARAMS, McpError
from ..protocol.jsonrpc import UNDECODABLE, invalid_payload
from ..protocol.routing_headers import header_arguments, invalid_x_mcp_header
from ..runtime.groups import describe
from .authorization import scope_set
from .calling import call as call_function
from .calling import is_async
from .signature import ToolSignature
from .tool_error import ToolError

if TYPE_CHECKING:
    from ..runtime.request import InboundRequest
    from .context import Context

__all__ = ["RegisteredTool", "error_result"]

log = logging.getLogger("mcp_actors.tools")


#: What a tool may return as its result itself (a deferred tool: the task it started).
_RESULTS = (t.CallToolResult, t.CreatedTask)

#: What a tool declares about running as a task of the tasks extension (see :mod:`.tasks`).
TaskMode = Literal["never", "optional", "always", "deferred"]
TASK_MODES: tuple[TaskMode, ...] = ("never", "optional", "always", "deferred")

#: What a client is told of an exception when the server masks errors.
MASKED_ERROR = "internal error (details are in the server's log)"
_to_json = msgspec.json.Encoder().encode
_CONTENT = (t.TextContent, t.ImageContent, t.AudioContent, t.ResourceLink, t.EmbeddedResource)


@attrs.define(eq=False)
class RegisteredTool:
    """A tool: its wire definition and the function behind it.

    ``inline`` declares that the function never waits: an ``async def`` that runs
    to its end without suspending (no ``await``, ``async for`` or ``async with`` that
    can block). Its calls are then served by the session's reader itself, without a
    task or a cancel scope of their own — several times cheaper, and nothing is lost:
    a call that is over before the next message is read could not be cancelled
    anyway. A tool declared ``inline`` that waits after all still gets its answer,
    but it holds up everything else of its session meanwhile, and a warning is
    logged. Only an ``async def`` may be declared ``inline`` (a plain function runs
    in a worker thread).
    """

    definition: t.Tool
    function: Callable[..., Any]
    signature: ToolSignature
    inline: bool = False
    #: Whether a call runs as a task (tasks extension; see :mod:`.tasks`): "never",
    #: "optional" (when the request declares the extension), "always", or "deferred"
    #: (the handler asks first, then hands its work to a task with ``start_task``).
    task: TaskMode = attrs.field(default="never", validator=attrs.validators.in_(TASK_MODES))
    #: OAuth scopes a caller's token must carry to use it (see :mod:`.authorization`).
    scopes: frozenset[str] = attrs.field(default=frozenset(), converter=scope_set, kw_only=True)
    #: Whether a task of it may run again after the worker running it died (durable
    #: tasks, see :mod:`.tasks`): at-least-once, the handler given the same task id
    #: (``ctx.task_id``) to recognise a repeat. False: such a task ends ``failed``.
    #: Only a tool whose calls run as tasks ("optional", "always") can declare it.
    rerun_safe: bool = attrs.field(
        default=False, kw_only=True, validator=attrs.validators.instance_of(bool)
    )
    is_async: bool = attrs.field(init=False)
    #: Whether the input schema mirrors arguments into ``Mcp-Param-*`` headers (valid
    #: ``x-mcp-header`` annotations): what a 2026-07-28 HTTP call's headers are checked
    #: against, known once rather than found by walking the schema on every call.
    mirrors_arguments: bool = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self.is_async = is_async(self.function)
        schema = self.definition.input_schema
        self.mirrors_arguments = (
            bool(header_arguments(schema)) and invalid_x_mcp_header(schema) is None
        )
        if self.rerun_safe and self.task not in ("optional", "always"):
            raise ValueError(
                f"tool {self.definition.name!r}: rerun_safe=True needs task='optional' or"
                f" 'always' (a task='{self.task}' call is not re-run from its record)"
            )
        if self.inline and not inspect.iscoroutinefunction(self.function):
            raise TypeError(
                f"tool {self.definition.name!r}: inline=True needs an async def"
                " (a plain function runs in a worker thread)"
            )

    @property
    def name(self) -> str:
        return self.definition.name

    async def call(
        self,
        arguments: msgspec.Raw | UnsetType,
        context: Context | None,
        *,
        mask_errors: bool = False,
    ) -> t.CallToolResult:
        """Validate ``arguments``, run the tool, and convert its outcome into a result.

        ``context`` is what the function is given if it takes a :class:`Context`
        (None only for a function that takes none).

        An exception the tool raises is logged (ERROR, with its traceback) and becomes
        an ``isError`` result carrying its text — or, with ``mask_errors``, only
        :data:`MASKED_ERROR` (the text may hold what the client should not see).
        """
        signature = self.signature
        try:
            decoded = signature.decoder.decode(arguments if arguments is not UNSET else b"{}")
        except UNDECODABLE as error:
            invalid = invalid_payload(error)
            if invalid.code != INVALID_PARAMS:
                raise invalid from None  # not JSON text at all: the request's error, not the tool's
            return error_result(f"Invalid arguments for tool {self.name!r}: {invalid.detail}")
        kwargs = msgspec.structs.asdict(decoded)  # the Struct's fields are the arguments
        for name, validate in signature.validators.items():  # Pydantic models
            try:
                kwargs[name] = validate(kwargs[name])
            except ValueError as invalid:
                message = " ".join(str(invalid).split())
                return error_result(f"Invalid arguments for tool {self.name!r}: {name}: {message}")
        if signature.context_parameter is not None:  # then ``context`` is given
            kwargs[signature.context_parameter] = context
        try:
            if self.is_async:
                value = await self.function(**kwargs)
            else:
                value = await call_function(self.function, kwargs, False)
        except McpError:
            raise
        except ToolError as refused:
            log.debug("tool %r refused a call: %s", self.name, refused)
            return error_result(str(refused))
        except Exception as error:
            log.error("tool %r failed", self.name, exc_info=error)
            if mask_errors:
                return error_result(f"Tool {self.name!r} failed: {MASKED_ERROR}")
            return error_result(f"Tool {self.name!r} failed: {describe(error)}")
        try:
            return self.to_result(value)
        except (TypeError, ValueError, RecursionError) as error:
            # e.g. an int past Python's 4,300-digit str() limit (a sum of two big arguments)
            log.info("tool %s returned a value that cannot be sent: %r", self.name, error)
            detail = describe(error)
            return error_result(f"Tool {self.name!r} returned a value JSON cannot carry: {detail}")

    def to_result(self, value: Any) -> t.CallToolResult:
        """Convert a tool's return value into a ``CallToolResult``."""
        if isinstance(value, _RESULTS):  # a deferred tool's task
            return value  # type: ignore[return-value]
        signature = self.signature
        if signature.output_schema is None:
            return t.CallToolResult(content=to_content(value))
        builtins = msgspec.to_builtins(value)
        structured = {"result": builtins} if signature.wraps_output else builtins
        return t.CallToolResult(content=_builtins_content(builtins), structured_content=structured)


def serves_inline(tools: Mapping[str, RegisteredTool], request: InboundRequest) -> bool:
    """Whether ``request`` is a ``tools/call`` of a tool declared ``inline`` (see above)."""
    if request.method != "tools/call":
        return False
    try:
        name = request.decode_params().name
    except McpError:
        return False  # the request actor answers the error
    tool = tools.get(name)
    return tool is not None and tool.inline


def to_content(value: Any) -> list[t.ContentBlock]:
    """Content blocks for an unstructured return value."""
    if value is None:
        return []
    if isinstance(value, str):
        return [t.TextContent(text=value)]
    if isinstance(value, _CONTENT):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, _CONTENT) for v in value):
        return list(value)
    return [t.TextContent(text=_to_json(msgspec.to_builtins(value)).decode())]


def _builtins_content(value: Any) -> list[t.ContentBlock]:
    """:func:`to_content` of a value already made of JSON builtins (no second conversion)."""
    if value is None or value == []:  # as to_content: an empty list is no content blocks
        return []
    if isinstance(value, str):
        return [t.TextContent(text=value)]
    return [t.TextContent(text=_to_json(value).decode())]


def error_result(message: str) -> t.CallToolResult:
    return t.CallToolResult(content=[t.TextContent(text=message)], is_error=True)
