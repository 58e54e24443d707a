"""What a server offers, by name: its tools, resources, prompts, completers and extensions.

:class:`Registry` is the half of :class:`~.app.Server` that registration and lookup
need: the decorators (``@server.tool``, ``@server.resource``, ``@server.prompt``,
``@server.completion``) and ``add_*``/``remove_*`` that fill it, and the public
``find_*``, ``resolve_resource``, ``definitions`` and ``completer`` that every
handler answers from (see :mod:`.handlers`). Each change of a list calls
:meth:`Registry._list_changed`, which the server turns into
``notifications/*/list_changed`` for connected clients.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping
from typing import Any, Literal, TypedDict, TypeVar, Unpack, overload

import attrs
from msgspec import UNSET

from ..protocol import errors
from ..protocol import types as t
from ..protocol.errors import McpError
from ..runtime.request import InboundRequest
from .caching import CacheHint
from .capabilities import Offer
from .completion import Completer, CompleterLike, CompletionKey, CompletionRegistry
from .content import unset
from .context import Context
from .extensions import Extension, ExtensionHandler, ExtensionRegistry
from .handlers import HANDLERS, Handler
from .prompts import RegisteredPrompt, argument_choices, prompt_arguments
from .resources import RegisteredResource, ResourceRegistry
from .signature import ToolSignature, describe, inspect_tool
from .tools import RegisteredTool, TaskMode, serves_inline
from .uri_template import UriTemplate

F = TypeVar("F", bound=Callable[..., Any])


@attrs.define(eq=False)
class Registry:
    """Tools, resources and templates, prompts, completers and extensions, by name."""

    _tools: dict[str, RegisteredTool] = attrs.field(init=False, factory=dict)
    _resources: ResourceRegistry = attrs.field(init=False, factory=ResourceRegistry)
    _prompts: dict[str, RegisteredPrompt] = attrs.field(init=False, factory=dict)
    _completions: CompletionRegistry = attrs.field(init=False, factory=CompletionRegistry)
    _extensions: ExtensionRegistry = attrs.field(init=False, factory=ExtensionRegistry)
    #: Tools that may run as tasks (kept as tools come and go: the capabilities say so).
    _task_tools: int = attrs.field(init=False, default=0)
    #: What :meth:`offer` returns, kept until the registry changes (None: to be made).
    _offered: Offer | None = attrs.field(init=False, default=None)

    def _list_changed(self, method: str) -> None:
        """A list changed (``method`` is its ``notifications/*/list_changed``): the
        server tells its clients (see :meth:`.app.Server._list_changed`)."""
        raise NotImplementedError

    # -- tools -----------------------------------------------------------------------

    @overload
    def tool(self, function: F) -> F: ...

    @overload
    def tool(self, **options: Unpack[ToolOptions]) -> Callable[[F], F]: ...

    def tool(
        self, function: F | None = None, **options: Unpack[ToolOptions]
    ) -> F | Callable[[F], F]:
        """Register a function as a tool; usable bare (``@server.tool``) or with options
        (:class:`ToolOptions`).

        The input schema comes from the parameters' type hints, the description
        from the docstring's first paragraph. A sync function runs in a worker
        thread so it never blocks the event loop. ``inline=True`` declares an
        ``async def`` that never waits (no ``await`` that can block): its calls are
        served without a task of their own, several times cheaper (see
        :class:`~.tools.RegisteredTool`). ``task`` says whether a call may run as a
        task of the tasks extension: ``"never"``, ``"optional"`` (when the request
        declares the extension), ``"always"`` or ``"deferred"`` (see :mod:`.tasks`).
        ``scopes`` are the OAuth scopes a caller's token must carry to call it, on a
        server protected by a resource server (see :mod:`.authorization`).
        ``rerun_safe=True`` (with ``task="optional"`` or ``"always"``) lets a task of
        it run again on another worker when the one running it dies (see :mod:`.tasks`).
        """
        _check_options("tool", options, ToolOptions)

        def register(function: F) -> F:
            self.add_tool(_tool_of(function, options))
            return function

        return register(function) if function is not None else register

    def add_tool(self, tool: RegisteredTool, *, replace: bool = False) -> None:
        """Add a tool; connected clients are told the list changed.

        A second tool of the same name raises ValueError, unless ``replace``.
        """
        _check_unique("tool", tool.name, self._tools, replace)
        previous = self._tools.get(tool.name)
        self._tools[tool.name] = tool
        self._task_tools += _may_run_as_task(tool) - _may_run_as_task(previous)
        self._offered = None
        self._list_changed("notifications/tools/list_changed")

    def remove_tool(self, name: str) -> None:
        """Remove a tool; connected clients are told the list changed."""
        self._task_tools -= _may_run_as_task(self._tools.pop(name))
        self._offered = None
        self._list_changed("notifications/tools/list_changed")

    @property
    def tools(self) -> dict[str, RegisteredTool]:
        return dict(self._tools)

    def find_tool(self, name: str) -> RegisteredTool | None:
        """The tool named ``name`` (None: none). Unlike :attr:`tools`, copies nothing."""
        return self._tools.get(name)

    # -- resources -------------------------------------------------------------------

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: t.Annotations | None = None,
        icons: list[t.Icon] | None = None,
        meta: dict[str, Any] | None = None,
        complete: Mapping[str, CompleterLike] | None = None,
        cache: CacheHint | None = None,
        scopes: Iterable[str] = (),
    ) -> Callable[[F], F]:
        """Register a function as a resource (fixed ``uri``) or a template (``uri`` has ``{vars}``).

        A template's function takes the template's variables as parameters,
        decoded with their type hints (see :mod:`.resources` for what it may
        return). ``complete`` maps variable names to completers (a list of
        choices or a function; see :mod:`.completion`). ``size`` applies to a
        fixed resource only. ``cache`` is the caching hint of its ``resources/read``
        results in the modern era (default: the server's, see :meth:`set_cache_hint`).
        ``scopes``: the OAuth scopes needed to read (or subscribe to) it (see
        :mod:`.authorization`).
        """
        template = UriTemplate.parse(uri)
        if size is not None and template.is_template:
            raise TypeError(f"resource template {uri!r}: size applies to fixed resources only")

        def register(function: F) -> F:
            signature = inspect_tool(function, Context, kind="resource", name=uri)
            common: dict[str, Any] = {
                "name": name or function.__name__,
                "title": unset(title),
                "description": description or describe(function) or UNSET,
                "mime_type": unset(mime_type),
                "annotations": unset(annotations),
                "icons": unset(icons),
                "meta": unset(meta),
            }
            definition: t.Resource | t.ResourceTemplate
            if template.is_template:
                definition = t.ResourceTemplate(uri_template=uri, **common)
            else:
                definition = t.Resource(uri=uri, size=unset(size), **common)
            registered = RegisteredResource(
                definition, template, function, signature, cache, scopes=scopes
            )
            self._add_completers(
                ("resource", uri),
                template.variables,
                signature,
                complete,
                f"{uri!r} has no variable",
            )
            self.add_resource(registered)
            return function

        return register

    def add_resource(self, resource: RegisteredResource, *, replace: bool = False) -> None:
        """Add a resource or template; clients are told the list changed.

        A second one with the same URI (or URI template) raises ValueError, unless ``replace``.
        """
        _check_unique("resource", resource.key, self._resources, replace)
        self._resources.add(resource)
        self._offered = None
        self._list_changed("notifications/resources/list_changed")

    def remove_resource(self, uri: str) -> None:
        """Remove the resource with this URI (or the template with this template string)."""
        self._resources.remove(uri)
        self._offered = None
        self._completions.discard_target("resource", uri)
        self._list_changed("notifications/resources/list_changed")

    def resource_scopes(self, uri: str) -> frozenset[str]:
        """The scopes reading ``uri`` needs (empty for a URI no resource serves)."""
        try:
            resource, _ = self._resources.resolve(uri)
        except McpError:
            return frozenset()
        return resource.scopes

    # -- prompts ---------------------------------------------------------------------

    @overload
    def prompt(self, function: F) -> F: ...

    @overload
    def prompt(self, **options: Unpack[PromptOptions]) -> Callable[[F], F]: ...

    def prompt(
        self, function: F | None = None, **options: Unpack[PromptOptions]
    ) -> F | Callable[[F], F]:
        """Register a function as a prompt; usable bare (``@server.prompt``) or with
        options (:class:`PromptOptions`).

        Its parameters are the prompt's arguments (see :mod:`.prompts`);
        ``complete`` maps argument names to completers; ``scopes``: the OAuth scopes
        needed to get it (see :mod:`.authorization`).
        """
        _check_options("prompt", options, PromptOptions)

        def register(function: F) -> F:
            prompt = _prompt_of(function, options)
            self._add_completers(
                ("prompt", prompt.name),
                prompt.signature.argument_names,
                prompt.signature,
                options.get("complete"),
                f"prompt {prompt.name!r} has no argument",
            )
            self.add_prompt(prompt)
            return function

        return register(function) if function is not None else register

    def add_prompt(self, prompt: RegisteredPrompt, *, replace: bool = False) -> None:
        """Add a prompt; connected clients are told the list changed.

        A second prompt of the same name raises ValueError, unless ``replace``.
        """
        _check_unique("prompt", prompt.name, self._prompts, replace)
        self._prompts[prompt.name] = prompt
        self._offered = None
        self._list_changed("notifications/prompts/list_changed")

    @property
    def prompts(self) -> dict[str, RegisteredPrompt]:
        return dict(self._prompts)

    def find_prompt(self, name: str) -> RegisteredPrompt | None:
        """The prompt named ``name`` (None: none). Unlike :attr:`prompts`, copies nothing."""
        return self._prompts.get(name)

    def remove_prompt(self, name: str) -> None:
        """Remove a prompt; connected clients are told the list changed."""
        del self._prompts[name]
        self._offered = None
        self._completions.discard_target("prompt", name)
        self._list_changed("notifications/prompts/list_changed")

    # -- completion ------------------------------------------------------------------

    def _add_completer(self, key: CompletionKey, completer: CompleterLike | Completer) -> None:
        self._completions.add(key, completer)
        self._offered = None

    def _add_completers(
        self,
        target: tuple[Literal["prompt", "resource"], str],
        names: tuple[str, ...],
        signature: ToolSignature,
        complete: Mapping[str, CompleterLike] | None,
        lacking: str,
    ) -> None:
        """Completers of a prompt's arguments or a template's variables (``names``):
        the choices of each ``Literal``/``Enum`` one, then those ``complete`` gives
        (TypeError, "complete: <lacking> <name>", for a name ``target`` does not have)."""
        kind, key = target
        for name in names:
            if (choices := argument_choices(signature, name)) is not None:
                self._add_completer((kind, key, name), choices)
        for name, completer in (complete or {}).items():
            if name not in names:
                raise TypeError(f"complete: {lacking} {name!r}")
            self._add_completer((kind, key, name), completer)

    def completion(
        self, *, argument: str, prompt: str | None = None, resource: str | None = None
    ) -> Callable[[F], F]:
        """Register a function completing ``argument`` of a ``prompt`` or ``resource`` template.

        Give exactly one of ``prompt`` (its name) or ``resource`` (the URI template
        as registered). See :mod:`.completion` for the function's shape.
        """
        key = _completion_key(argument, prompt, resource)

        def register(function: F) -> F:
            self._add_completer(key, function)
            return function

        return register

    def add_completion(
        self,
        completer: CompleterLike,
        *,
        argument: str,
        prompt: str | None = None,
        resource: str | None = None,
    ) -> None:
        """Like :meth:`completion`, for a function or a list of choices you already have."""
        self._add_completer(_completion_key(argument, prompt, resource), completer)

    # -- extensions ------------------------------------------------------------------

    def add_extension(self, extension: Extension, *, replace: bool = False) -> None:
        """Offer ``extension``: declared under ``capabilities.extensions`` (both eras),
        its methods answered by its handlers (see :mod:`.extensions`).

        ValueError if it is offered already (unless ``replace``) or handles a method
        the core protocol or another extension handles. Sessions already open keep the
        capabilities they negotiated.
        """
        if extension.identifier == t.TASKS_EXTENSION:
            raise ValueError(
                f"{t.TASKS_EXTENSION} is declared by the server itself when a tool can run"
                " as a task (@server.tool(task=...))"
            )
        self._extensions.add(extension, replace=replace, core=HANDLERS)
        self._offered = None

    def remove_extension(self, identifier: str) -> None:
        """Stop offering the extension ``identifier`` (KeyError if not offered)."""
        self._extensions.remove(identifier)
        self._offered = None

    @property
    def extensions(self) -> dict[str, dict[str, Any]]:
        """The extensions offered, with their settings (what ``capabilities.extensions``
        declares, the tasks extension aside)."""
        return self._extensions.declared()

    def handler(self, method: str) -> Handler | None:
        """What answers ``method``: a core handler (:data:`.handlers.HANDLERS`) or an
        offered extension's (None: neither, -32601)."""
        return HANDLERS.get(method) or self._extensions.handler(method)

    def extension_handler(self, method: str) -> ExtensionHandler | None:
        """The handler an offered extension gives ``method`` (None: none)."""
        return self._extensions.handler(method)

    # -- lookups the handlers answer from --------------------------------------------

    def resolve_resource(self, uri: str) -> tuple[RegisteredResource, dict[str, str]]:
        """The resource serving ``uri`` and its template variables (-32002 if none)."""
        return self._resources.resolve(uri)

    def knows_resource(self, uri: str) -> bool:
        """Whether a resource or template of this registry serves ``uri``."""
        return self._resources.knows(uri)

    def definitions(self, method: str) -> list[Any]:
        """What this registry lists for ``method`` (``tools/list``, ``prompts/list``,
        ``resources/list``, ``resources/templates/list``), in registration order."""
        if method == "tools/list":
            return [tool.definition for tool in self._tools.values()]
        if method == "prompts/list":
            return [prompt.definition for prompt in self._prompts.values()]
        if method == "resources/list":
            return self._resources.definitions()
        if method == "resources/templates/list":
            return self._resources.template_definitions()
        raise ValueError(f"{method!r} lists nothing a registry holds")

    def completer(self, ref: t.Reference, argument: str) -> Completer | None:
        """The completer of ``argument`` of the prompt or resource ``ref`` names (None:
        none registered); -32602 if ``ref`` or its ``argument`` does not exist."""
        if isinstance(ref, t.PromptReference):
            prompt = self._prompts.get(ref.name)
            if prompt is None:
                raise errors.invalid_params(f"unknown prompt {ref.name!r}")
            if argument not in prompt.signature.argument_names:
                raise errors.invalid_params(f"prompt {ref.name!r} has no argument {argument!r}")
            return self._completions.get(("prompt", ref.name, argument))
        registry = self._resources
        resource = registry.templates.get(ref.uri) or registry.fixed.get(ref.uri)
        if resource is None:
            raise errors.invalid_params(f"no resource or resource template {ref.uri!r}")
        if argument not in resource.template.variables:
            raise errors.invalid_params(
                f"resource template {ref.uri!r} has no variable {argument!r}"
            )
        return self._completions.get(("resource", ref.uri, argument))

    def offer(self) -> Offer:
        """What this registry holds, as the capabilities depend on it: the same object
        until the registry changes (every 2026-07-28 request asks)."""
        offered = self._offered
        if offered is None:
            offered = self._offered = Offer(  # (positional: the fastest way to make a tuple)
                bool(self._tools),
                bool(self._resources),
                bool(self._prompts),
                bool(self._completions),
                self._task_tools > 0,
                self._extensions.changes,
            )
        return offered

    def extensions_declared(self) -> dict[str, dict[str, Any]]:
        """A fresh copy of :attr:`extensions` (the caller may add to it)."""
        return self._extensions.declared()

    def serves_inline(self, request: InboundRequest) -> bool:
        """Whether ``request`` calls a tool of this registry declared ``inline``."""
        return serves_inline(self._tools, request)


class ToolOptions(TypedDict, total=False):
    """The options of :meth:`Registry.tool`, each optional (see its docstring)."""

    name: str | None
    title: str | None
    description: str | None
    annotations: t.ToolAnnotations | None
    icons: list[t.Icon] | None
    meta: dict[str, Any] | None
    inline: bool
    task: TaskMode
    scopes: Iterable[str]
    rerun_safe: bool


class PromptOptions(TypedDict, total=False):
    """The options of :meth:`Registry.prompt`, each optional (see its docstring)."""

    name: str | None
    title: str | None
    description: str | None
    icons: list[t.Icon] | None
    meta: dict[str, Any] | None
    complete: Mapping[str, CompleterLike] | None
    scopes: Iterable[str]


def _check_options(decorator: str, given: Mapping[str, Any], options: type) -> None:
    """TypeError naming every keyword ``given`` that ``options`` (a TypedDict) lacks."""
    unknown = sorted(set(given) - set(options.__annotations__))
    if unknown:
        raise TypeError(f"{decorator}() got unexpected keyword argument(s): {', '.join(unknown)}")


def _tool_of(function: Callable[..., Any], options: ToolOptions) -> RegisteredTool:
    """``function`` as a tool: its definition from its signature, docstring and ``options``."""
    name = options.get("name")
    signature = inspect_tool(function, Context, name=name)
    task = options.get("task", "never")
    definition = t.Tool(
        name=name or function.__name__,
        title=unset(options.get("title")),
        description=options.get("description") or describe(function) or UNSET,
        input_schema=signature.input_schema,
        output_schema=signature.output_schema or UNSET,
        annotations=unset(options.get("annotations")),
        icons=unset(options.get("icons")),
        execution={"taskSupport": _TASK_SUPPORT[task]} if task in _TASK_SUPPORT else UNSET,
        meta=unset(options.get("meta")),
    )
    inline = options.get("inline", False)
    scopes = options.get("scopes", ())
    rerun_safe = options.get("rerun_safe", False)
    return RegisteredTool(
        definition, function, signature, inline, task, scopes=scopes, rerun_safe=rerun_safe
    )


def _prompt_of(function: Callable[..., Any], options: PromptOptions) -> RegisteredPrompt:
    """``function`` as a prompt: its arguments from its parameters, and ``options``."""
    name = options.get("name")
    signature = inspect_tool(function, Context, kind="prompt", name=name)
    definition = t.Prompt(
        name=name or function.__name__,
        title=unset(options.get("title")),
        description=options.get("description") or describe(function) or UNSET,
        arguments=prompt_arguments(signature, function) or UNSET,
        icons=unset(options.get("icons")),
        meta=unset(options.get("meta")),
    )
    return RegisteredPrompt(definition, function, signature, scopes=options.get("scopes", ()))


def _may_run_as_task(tool: RegisteredTool | None) -> int:
    return int(tool is not None and tool.task != "never")


_TASK_SUPPORT = {"optional": "optional", "always": "required"}


def _check_unique(kind: str, key: str, registered: Container[str], replace: bool) -> None:
    if key in registered and not replace:
        raise ValueError(
            f"{kind} {key!r} is already registered (remove it first, or add it with replace=True)"
        )


def _completion_key(argument: str, prompt: str | None, resource: str | None) -> CompletionKey:
    if (prompt is None) == (resource is None):
        raise TypeError("give exactly one of prompt= or resource=")
    if prompt is not None:
        return ("prompt", prompt, argument)
    assert resource is not None
    return ("resource", resource, argument)
