"""The feature modules on their own: URI templates, elicitation schemas, completion,
prompt signatures, the subscription hub, the logging bridge, capabilities."""

from __future__ import annotations

import logging
from typing import Annotated, Any, Literal

import msgspec
import pytest
import trio
import trio.testing

from mcp_actors import ProtocolViolation, Server, memory_pair, open_client, types
from mcp_actors.protocol.versions import REVISIONS
from mcp_actors.runtime.subscription import SubscriptionHub
from mcp_actors.server.completion import Completer, completion
from mcp_actors.server.elicitation import (
    ElicitationContentError,
    check_content,
    check_form_schema,
    form_schema,
)
from mcp_actors.server.extensions import Extension
from mcp_actors.server.log_bridge import McpLogHandler, mcp_level
from mcp_actors.server.prompts import docstring_arguments, to_prompt_result
from mcp_actors.server.resources import to_contents
from mcp_actors.server.uri_template import InvalidUriTemplate, UriTemplate

# -- URI templates -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        ("users://{id}/profile", "users://42/profile", {"id": "42"}),
        ("users://{id}/profile", "users://4%2F2/profile", {"id": "4/2"}),
        ("users://{id}/profile", "users://4/2/profile", None),
        ("users://{id}/profile", "users:///profile", None),
        ("files://{+path}", "files://a/b/c.txt", {"path": "a/b/c.txt"}),
        ("repo://{owner}/{name}", "repo://me/x", {"owner": "me", "name": "x"}),
        ("config://app", "config://app", {}),
        ("config://app", "config://apps", None),
        ("q://{a}.json", "q://x.json", {"a": "x"}),
    ],
)
def test_uri_template_matching(template: str, uri: str, expected: dict[str, str] | None) -> None:
    assert UriTemplate.parse(template).match(uri) == expected


def test_uri_template_expansion_round_trips() -> None:
    template = UriTemplate.parse("users://{id}/files/{+path}")
    uri = template.expand({"id": "a b/c", "path": "x/y z"})
    assert uri == "users://a%20b%2Fc/files/x/y%20z"
    assert template.match(uri) == {"id": "a b/c", "path": "x/y z"}


@pytest.mark.parametrize(
    "template", ["x://{a,b}", "x://{?q}", "x://{a*}", "x://{#f}", "x://{a", "x://a}", "x://{a}/{a}"]
)
def test_unsupported_templates_are_refused_at_registration(template: str) -> None:
    with pytest.raises(InvalidUriTemplate):
        UriTemplate.parse(template)


def test_template_functions_must_take_the_template_variables() -> None:
    server = Server("t")
    with pytest.raises(TypeError, match="must be the same"):

        @server.resource("users://{id}")
        def wrong(name: str) -> str:
            return name

    with pytest.raises(TypeError, match="may take only a Context"):

        @server.resource("config://app")
        def takes_args(name: str) -> str:
            return name


# -- resource contents ---------------------------------------------------------------------


def test_resource_return_values_become_contents() -> None:
    assert to_contents("hi", "a://x") == [
        types.ResourceContents(uri="a://x", mime_type="text/plain", text="hi")
    ]
    assert to_contents(b"\x00\x01", "a://x", "application/x") == [
        types.ResourceContents(uri="a://x", mime_type="application/x", blob="AAE=")
    ]
    assert to_contents({"a": 1}, "a://x")[0].text == '{"a":1}'
    assert to_contents(["one", b"2"], "a://x")[1].blob == "Mg=="


# -- elicitation schemas -------------------------------------------------------------------

LATEST = REVISIONS["2025-11-25"]
JUNE = REVISIONS["2025-06-18"]


@pytest.mark.parametrize(
    ("prop", "problem"),
    [
        ({"type": "object"}, "only string, number, integer, boolean and enum"),
        ({"type": "string", "format": "phone"}, "format 'phone'"),
        ({"type": "string", "pattern": "^a"}, "unsupported keys ['pattern']"),
        ({"type": "string", "enum": []}, "enum must be a non-empty list"),
        ({"type": "string", "enum": ["a"], "enumNames": ["A", "B"]}, "one per enum value"),
        ({"type": "string", "oneOf": [{"const": "a"}]}, "oneOf must be"),
        ({"type": "array", "items": {"type": "integer"}}, "items must be"),
        ({"type": "number", "minimum": "0"}, "minimum must be a number"),
        ({"type": "integer", "default": "x"}, "default 'x' does not match"),
    ],
)
def test_forbidden_form_properties(prop: dict[str, Any], problem: str) -> None:
    schema = {"type": "object", "properties": {"p": prop}}
    with pytest.raises(ProtocolViolation, match=problem.replace("[", r"\[").replace("]", r"\]")):
        check_form_schema(schema, LATEST)


def test_form_top_level_rules() -> None:
    with pytest.raises(ProtocolViolation, match="top level"):
        check_form_schema({"type": "array", "properties": {}}, LATEST)
    with pytest.raises(ProtocolViolation, match="required property 'x'"):
        check_form_schema({"type": "object", "properties": {}, "required": ["x"]}, LATEST)


@pytest.mark.parametrize(
    "prop",
    [
        {"type": "string", "default": "x"},
        {"type": "string", "oneOf": [{"const": "a", "title": "A"}]},
        {"type": "array", "items": {"type": "string", "enum": ["a"]}},
    ],
)
def test_2025_11_25_form_features_are_refused_under_2025_06_18(prop: dict[str, Any]) -> None:
    schema = {"type": "object", "properties": {"p": prop}}
    check_form_schema(schema, LATEST)
    with pytest.raises(ProtocolViolation, match="need protocol revision 2025-11-25"):
        check_form_schema(schema, JUNE)


def test_2025_06_18_allows_legacy_enums_and_boolean_defaults() -> None:
    schema = {
        "type": "object",
        "properties": {
            "e": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]},
            "b": {"type": "boolean", "default": True},
            "d": {"type": "string", "format": "date"},
        },
    }
    check_form_schema(schema, JUNE)


@pytest.mark.parametrize(
    ("prop", "value", "ok"),
    [
        ({"type": "string", "format": "date"}, "2025-01-31", True),
        ({"type": "string", "format": "date"}, "31/01/2025", False),
        ({"type": "string", "format": "date-time"}, "2025-01-31T10:00:00Z", True),
        ({"type": "string", "format": "date-time"}, "2025-01-31", False),
        ({"type": "string", "format": "uri"}, "https://example.com/x", True),
        ({"type": "string", "format": "uri"}, "not a uri", False),
        ({"type": "integer"}, 3, True),
        ({"type": "integer"}, 3.5, False),
        ({"type": "integer"}, True, False),
        ({"type": "number", "maximum": 1}, 0.5, True),
        ({"type": "number", "maximum": 1}, 2, False),
        ({"type": "boolean"}, "yes", False),
        ({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}, ["a", "a"], False),
        ({"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}}, ["a"], True),
    ],
)
def test_content_checks(prop: dict[str, Any], value: Any, ok: bool) -> None:
    schema = {"type": "object", "properties": {"p": prop}}
    if ok:
        assert check_content(schema, {"p": value}) == {"p": value}
    else:
        with pytest.raises(ElicitationContentError):
            check_content(schema, {"p": value})


def form_problems(schema: dict[str, Any], revision: Any = LATEST) -> str:
    """What check_form_schema says is wrong with ``schema``, after the common prefix."""
    with pytest.raises(ProtocolViolation) as refused:
        check_form_schema(schema, revision)
    prefix = (
        f"requestedSchema is not a valid elicitation form for protocol revision {revision.name}: "
    )
    assert refused.value.message.startswith(prefix)
    return refused.value.message.removeprefix(prefix)


MULTI = {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}}


OPTIONS_RULE = 'oneOf must be a non-empty list of {"const": str, "title": str}'
ITEMS_RULE = (
    'items must be {"type": "string", "enum": [...]} or'
    ' {"anyOf": [{"const": str, "title": str}, ...]}'
)


@pytest.mark.parametrize(
    ("prop", "problem"),
    [
        ("text", "a property schema must be an object"),
        (
            {"title": "no type"},
            "only string, number, integer, boolean and enum properties"
            " are allowed (no nesting), got type None",
        ),
        (
            {"type": ["string", "null"]},
            "only string, number, integer, boolean and enum"
            " properties are allowed (no nesting), got type ['string', 'null']",
        ),
        ({"type": "string", "minLength": 1.5}, "minLength must be an integer"),
        ({"type": "string", "maxLength": True}, "maxLength must be an integer"),
        (
            {"type": "string", "format": None},
            "format None is not one of ['date', 'date-time', 'email', 'uri']",
        ),
        ({"type": "integer", "maximum": False}, "maximum must be a number"),
        (
            {"type": "number", "minimum": 1, "maximum": 2.5, "default": 3},
            "default 3 does not match the property",
        ),
        ({"type": "boolean", "default": "yes"}, "default 'yes' does not match the property"),
        ({"type": "boolean", "enum": [True]}, "unsupported keys ['enum'] for a boolean"),
        ({"type": "string", "enum": ["a", 1]}, "enum must be a non-empty list of strings"),
        (
            {"type": "string", "enum": ["a"], "enumNames": [1]},
            "enumNames must be strings, one per enum value",
        ),
        (
            {"type": "string", "enum": ["a"], "default": "b"},
            "default 'b' does not match the property",
        ),
        (
            {"type": "string", "enum": ["a"], "oneOf": []},
            f"unsupported keys ['enum'] for a titled enum; p: {OPTIONS_RULE}",
        ),
        ({"type": "string", "oneOf": [{"title": "A"}]}, OPTIONS_RULE),
        (
            {"type": "string", "oneOf": [{"const": "a", "title": "A"}], "default": "b"},
            "default 'b' does not match the property",
        ),
        ({"type": "array"}, ITEMS_RULE),
        ({"type": "array", "items": {"type": "string", "enum": ["a"], "minLength": 1}}, ITEMS_RULE),
        ({"type": "array", "items": {"anyOf": [{"const": "a"}]}}, ITEMS_RULE),
        (
            {"type": "array", "items": {"type": "string", "enum": ["a"]}, "uniqueItems": True},
            "unsupported keys ['uniqueItems'] for a multi enum",
        ),
        (
            {
                "type": "array",
                "items": {"type": "string", "enum": ["a", "b"]},
                "maxItems": 1,
                "default": ["a", "b"],
            },
            "default ['a', 'b'] does not match the property",
        ),
    ],
)
def test_each_schema_rule_names_its_keyword(prop: Any, problem: str) -> None:
    assert form_problems({"type": "object", "properties": {"p": prop}}) == f"p: {problem}"


@pytest.mark.parametrize(
    ("prop", "problem"),
    [
        ({"type": "string", "minLength": "1", "default": "x"}, "minLength must be an integer"),
        ({"type": "string", "maxLength": None, "default": "x"}, "maxLength must be an integer"),
        ({"type": "number", "minimum": "0", "default": 1}, "minimum must be a number"),
        (
            {"type": "string", "format": ["email"]},
            "format ['email'] is not one of ['date', 'date-time', 'email', 'uri']",
        ),
        ({"type": "string", "enum": 5, "default": "a"}, "enum must be a non-empty list of strings"),
        ({"type": "string", "oneOf": [{"title": "A"}], "default": "a"}, OPTIONS_RULE),
        ({"type": "array", "default": ["a"]}, ITEMS_RULE),
        ({"type": "array", "items": {"type": "integer"}, "default": ["a"]}, ITEMS_RULE),
        ({**MULTI, "minItems": "1", "default": ["a"]}, "minItems must be an integer"),
    ],
)
def test_a_broken_property_with_a_default_is_refused_for_the_break_alone(
    prop: dict[str, Any], problem: str
) -> None:
    """The default is checked against the property once the property itself is valid:
    a bound of the wrong type is the problem, not the default it cannot be compared with."""
    assert form_problems({"type": "object", "properties": {"p": prop}}) == f"p: {problem}"


@pytest.mark.parametrize(
    ("prop", "problem"),
    [
        ({**MULTI, "minItems": "2"}, "minItems must be an integer"),
        ({**MULTI, "maxItems": 1.5}, "maxItems must be an integer"),
        ({**MULTI, "maxItems": False}, "maxItems must be an integer"),
        ({"type": "string", "title": 5}, "title must be a string"),
        ({"type": "boolean", "description": ["a"]}, "description must be a string"),
    ],
)
def test_selection_bounds_and_labels_must_have_their_types(
    prop: dict[str, Any], problem: str
) -> None:
    """Else the form breaks the official schema on the wire, or (a bound) the answer's check."""
    assert form_problems({"type": "object", "properties": {"p": prop}}) == f"p: {problem}"


def test_every_schema_problem_is_reported_in_order() -> None:
    schema = {
        "type": "object",
        "$defs": {},
        "properties": {
            "a": {"type": "string", "format": "phone", "minLength": "1", "pattern": "x"},
            "b": {"type": "number", "minimum": "0", "maximum": "9"},
            "c": {"type": "string", "oneOf": [{"const": "x", "title": "X"}], "default": "x"},
        },
        "required": ["a", "d"],
    }
    assert form_problems(schema, JUNE) == (
        "unsupported top-level keys ['$defs']; required property 'd' is not in properties;"
        " a: unsupported keys ['pattern'] for a string;"
        " a: format 'phone' is not one of ['date', 'date-time', 'email', 'uri'];"
        " a: minLength must be an integer;"
        " b: minimum must be a number; b: maximum must be a number;"
        " c: titled enum properties need protocol revision 2025-11-25;"
        " c: defaults on non-boolean properties need protocol revision 2025-11-25"
    )


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"type": "object"}, '"properties" must be an object'),
        ({"type": "object", "properties": []}, '"properties" must be an object'),
        (
            {"type": "object", "properties": {}, "required": "x"},
            '"required" must be a list of property names',
        ),
        (
            {"type": "object", "properties": {}, "required": [1]},
            '"required" must be a list of property names',
        ),
        (
            {"properties": {}, "additionalProperties": False},
            'the top level must be {"type": "object", ...};'
            " unsupported top-level keys ['additionalProperties']",
        ),
    ],
)
def test_form_top_level_problems(schema: dict[str, Any], problem: str) -> None:
    assert form_problems(schema) == problem


def test_a_form_may_carry_a_title_description_and_dialect() -> None:
    check_form_schema(
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "title": "Contact",
            "description": "How to reach you",
            "properties": {"n": {"type": "integer", "title": "N", "description": "a number"}},
        },
        JUNE,
    )


def content_problems(prop: dict[str, Any], value: Any) -> str:
    """What check_content says is wrong with ``value`` as the answer to ``prop``."""
    schema = {"type": "object", "properties": {"p": prop}}
    check_form_schema(schema, LATEST)
    with pytest.raises(ElicitationContentError) as refused:
        check_content(schema, {"p": value})
    prefix = "the accepted elicitation content does not match the requested schema: p: "
    assert str(refused.value).startswith(prefix)
    return str(refused.value).removeprefix(prefix)


@pytest.mark.parametrize(
    ("prop", "value", "problem"),
    [
        ({"type": "string"}, 3, "expected a string, got a number"),
        ({"type": "string"}, None, "expected a string, got null"),
        ({"type": "string", "minLength": 2, "maxLength": 1}, "abc", "longer than 1 characters"),
        (
            {"type": "string", "minLength": 2, "format": "email"},
            "a",
            "shorter than 2 characters; p: 'a' is not a valid email",
        ),
        ({"type": "string", "format": "date"}, "2025-02-30", "'2025-02-30' is not a valid date"),
        ({"type": "number"}, "1", "expected a number, got a string"),
        ({"type": "integer"}, [], "expected an integer, got an array"),
        ({"type": "integer", "minimum": 0}, -1, "-1 is less than the minimum 0"),
        ({"type": "number", "maximum": 1.5}, 2, "2 is more than the maximum 1.5"),
        ({"type": "boolean"}, 0, "expected a boolean, got a number"),
        ({"type": "string", "enum": ["a", "b"]}, "c", "'c' is not one of ['a', 'b']"),
        ({"type": "string", "enum": ["a"]}, {}, "expected a string, got an object"),
        (
            {"type": "string", "oneOf": [{"const": "a", "title": "A"}]},
            "A",
            "'A' is not one of ['a']",
        ),
        (MULTI, "a", "expected a list of strings, got a string"),
        (MULTI, ["a", 1], "expected a list of strings, got an array"),
        (
            MULTI,
            ["a", "x", "y"],
            "'x' is not one of ['a', 'b', 'c']; p: 'y' is not one of ['a', 'b', 'c']",
        ),
        (MULTI, ["b", "b"], "a value is selected twice"),
        ({**MULTI, "minItems": 2}, ["a"], "fewer than 2 selected"),
        ({**MULTI, "maxItems": 1}, ["a", "c"], "more than 1 selected"),
        (
            {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}},
            ["A"],
            "'A' is not one of ['a']",
        ),
    ],
)
def test_each_answer_rule_says_what_is_wrong(
    prop: dict[str, Any], value: Any, problem: str
) -> None:
    assert content_problems(prop, value) == problem


@pytest.mark.parametrize(
    ("prop", "value"),
    [
        ({"type": "integer", "minimum": 3, "maximum": 3}, 3.0),
        ({"type": "number", "minimum": 0}, 0),
        ({"type": "string", "minLength": 0, "maxLength": 0}, ""),
        ({"type": "string", "format": "email"}, "ada@example.com"),
        ({"type": "string", "format": "date-time"}, "2025-01-31t10:00:00+01:00"),
        ({"type": "string", "enum": ["a"], "enumNames": ["A"]}, "a"),
        ({**MULTI, "minItems": 0, "maxItems": 3}, []),
        ({**MULTI, "minItems": 3, "maxItems": 3}, ["c", "a", "b"]),
    ],
)
def test_answers_at_the_bounds_are_accepted(prop: dict[str, Any], value: Any) -> None:
    schema = {"type": "object", "properties": {"p": prop}}
    check_form_schema(schema, LATEST)
    assert check_content(schema, {"p": value}) == {"p": value}


def test_content_problems_are_all_listed_and_defaults_filled() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "mail": {"type": "string", "format": "email"},
            "tags": {**MULTI, "default": ["a"]},
            "color": {"type": "string", "enum": ["red"], "default": "red"},
            "note": {"type": "string"},
        },
        "required": ["name", "mail"],
    }
    with pytest.raises(ElicitationContentError) as refused:
        check_content(schema, {"extra": 1, "tags": "a"})
    assert str(refused.value) == (
        "the accepted elicitation content does not match the requested schema:"
        " extra: not a property of the requested schema;"
        " tags: expected a list of strings, got a string;"
        " name: required but missing; mail: required but missing"
    )
    filled = check_content(schema, {"mail": "a@b.co", "name": "Ada"})
    assert filled == {"mail": "a@b.co", "name": "Ada", "tags": ["a"], "color": "red"}
    assert list(filled) == ["mail", "name", "tags", "color"]
    with pytest.raises(ElicitationContentError, match=r"^accepted elicitation content must be"):
        check_content(schema, ["Ada"])


def test_form_schema_from_a_type() -> None:
    class Form(msgspec.Struct):
        name: Annotated[str, msgspec.Meta(title="Name", min_length=2)]
        level: Literal["low", "high"] = "low"

    assert form_schema(Form) == {
        "type": "object",
        "properties": {
            "name": {"title": "Name", "type": "string", "minLength": 2},
            "level": {"type": "string", "enum": ["high", "low"], "default": "low"},
        },
        "required": ["name"],
    }


# -- completion ----------------------------------------------------------------------------


async def test_completers_from_lists_and_functions() -> None:
    context: Any = None
    choices = Completer.of(["Alpha", "beta", "alphabet"])
    assert (await choices.complete("al", {}, context)).values == ["Alpha", "alphabet"]

    def with_arguments(value: str, arguments: dict[str, str]) -> list[str]:
        return [f"{arguments.get('x', '?')}-{value}"]

    assert (await Completer.of(with_arguments).complete("v", {"x": "1"}, context)).values == ["1-v"]
    with pytest.raises(TypeError, match="must take"):
        Completer.of(lambda a, b, c: [])


def test_completion_sizes() -> None:
    assert completion(None) == types.Completion(values=[])
    capped = completion(types.Completion(values=[str(i) for i in range(150)]))
    assert (len(capped.values), capped.total, capped.has_more) == (100, 150, True)


# -- prompts -------------------------------------------------------------------------------


def test_docstring_arguments() -> None:
    def google(a: str, b: str) -> None:
        """Do.

        Args:
            a: The a,
                continued.
            b (str): The b.

        Returns:
            c: not an argument.
        """

    def sphinx(a: str) -> None:
        """Do.

        :param a: The a.
        :param str b: The b.
        """

    assert docstring_arguments(google) == {"a": "The a, continued.", "b": "The b."}
    assert docstring_arguments(sphinx) == {"a": "The a.", "b": "The b."}


def test_prompt_return_values() -> None:
    result = to_prompt_result(["hi", types.ImageContent(data="AA==", mime_type="image/png")])
    assert [(m.role, type(m.content).__name__) for m in result.messages] == [
        ("user", "TextContent"),
        ("user", "ImageContent"),
    ]
    with pytest.raises(TypeError, match="a prompt must return"):
        to_prompt_result(42)


# -- capabilities --------------------------------------------------------------------------


def test_an_empty_server_declares_logging_only() -> None:
    assert Server("empty").capabilities() == types.ServerCapabilities(logging={})


def test_the_capabilities_follow_every_change_of_the_registry() -> None:
    """What the registry offers is kept between requests; every change is seen at once."""
    server = Server("changing")
    empty = server.capabilities()

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    assert server.capabilities().tools is not msgspec.UNSET
    server.remove_tool("add")
    assert server.capabilities() == empty

    @server.prompt
    def greet(name: str) -> str:
        return f"hello {name}"

    assert server.capabilities().prompts is not msgspec.UNSET
    assert server.capabilities().completions is msgspec.UNSET
    server.add_completion(["ada", "alan"], argument="name", prompt="greet")
    assert server.capabilities().completions is not msgspec.UNSET
    server.remove_prompt("greet")
    assert server.capabilities() == empty

    @server.resource("note://one")
    def note() -> str:
        return "one"

    assert server.capabilities().resources is not msgspec.UNSET
    server.remove_resource("note://one")
    assert server.capabilities() == empty

    server.add_extension(Extension("com.example/feature", {"on": True}))
    assert server.capabilities().extensions == {"com.example/feature": {"on": True}}
    server.remove_extension("com.example/feature")
    assert server.capabilities() == empty


# -- the subscription hub ------------------------------------------------------------------


async def test_hub_coalesces_and_cleans_up() -> None:
    hub: SubscriptionHub[int] = SubscriptionHub()
    seen: list[int] = []
    gate = trio.Event()

    async def deliver(value: int) -> None:
        seen.append(value)
        await gate.wait()

    async with trio.open_nursery() as nursery:

        def start(actor: Any) -> None:
            nursery.start_soon(actor)

        subscription = hub.subscribe("t", deliver, start)
        await trio.testing.wait_all_tasks_blocked()
        hub.publish("t", 1)
        await trio.testing.wait_all_tasks_blocked()  # the actor is delivering 1...
        for value in range(2, 6):
            hub.publish("t", value)  # ...so 2..5 coalesce into 5
        await trio.testing.wait_all_tasks_blocked()
        gate.set()
        await trio.testing.wait_all_tasks_blocked()
        assert seen == [1, 5]
        assert (subscription.delivered, subscription.coalesced) == (2, 3)
        subscription.cancel()
    stats = hub.statistics()
    assert (stats.topics, stats.subscriptions, stats.published) == (0, 0, 5)
    assert (stats.delivered, stats.coalesced) == (2, 3)  # still counted once it has gone
    assert hub.publish("t", 6) == 0


async def test_closing_a_session_ends_its_subscriptions() -> None:
    server = Server("s")

    @server.resource("a://x")
    def x() -> str:
        return "x"

    async with trio.open_nursery() as nursery:
        client_end, server_end = memory_pair()
        nursery.start_soon(server.serve_session, server_end)
        async with open_client(client_end, era="legacy") as client:
            # A raw subscribe: no context manager to unsubscribe on the way out.
            await client.request("resources/subscribe", types.SubscribeParams(uri="a://x"))
            await client.request("resources/subscribe", types.SubscribeParams(uri="a://x"))
            assert server.subscription_statistics().subscriptions == 1  # idempotent
        with trio.fail_after(5):
            while server.subscription_statistics().subscriptions:
                await trio.sleep(0.01)
    assert server.sessions == []


# -- the logging bridge --------------------------------------------------------------------


def test_python_levels_map_to_mcp_levels() -> None:
    assert [mcp_level(n) for n in (5, 10, 20, 25, 30, 40, 50, 60, 70)] == [
        "debug",
        "debug",
        "info",
        "notice",
        "warning",
        "error",
        "critical",
        "alert",
        "emergency",
    ]


def test_the_bridge_outside_trio_and_without_sessions_does_nothing() -> None:
    handler = McpLogHandler(Server("quiet"))
    logger = logging.getLogger("mcp_actors.tests.quiet")
    logger.addHandler(handler)
    try:
        logger.warning("nobody listens")  # no Trio run, no token: dropped silently
    finally:
        logger.removeHandler(handler)


async def test_the_bridge_on_the_root_logger_does_not_recurse() -> None:
    server = Server("root-logged")
    received: list[types.LoggingMessageParams] = []

    @server.tool
    async def shout() -> str:
        logging.getLogger("anywhere").error("boom")
        return "ok"

    from mcp_actors import ClientHandlers

    handler = server.logging_handler(logging.INFO)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        async with trio.open_nursery() as nursery:
            client_end, server_end = memory_pair()
            nursery.start_soon(server.serve_session, server_end)
            handlers = ClientHandlers(on_log=received.append)
            async with open_client(client_end, handlers=handlers, era="legacy") as client:
                await client.call_tool("shout")
                with trio.fail_after(5):
                    while not received:
                        await trio.sleep(0.01)
    finally:
        root.removeHandler(handler)
    assert [(m.level, m.data, m.logger) for m in received] == [("error", "boom", "anywhere")]
