"""Which Python types a tool's parameters may have, as a client sees them (memory transport).

Each supported kind is decoded from the wire into the annotated type, its JSON
Schema is in ``inputSchema``, and a wrong value is an ``isError`` result naming the
argument; any other type is refused when the tool is registered.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Annotated, Any, Literal, TypedDict

import attrs
import msgspec
import pytest

from mcp_actors import Server, open_client


class Point(msgspec.Struct):
    x: float
    y: float


@dataclasses.dataclass
class Size:
    width: int
    height: int


@attrs.define
class Colour:
    name: str
    alpha: float = 1.0


class Options(TypedDict):
    verbose: bool


class Shape(enum.Enum):
    SQUARE = "square"
    CIRCLE = "circle"


def typed_server() -> Server:
    server = Server("types")

    @server.tool
    async def describe(
        point: Point,
        size: Size,
        colour: Colour,
        options: Options,
        shape: Shape,
        unit: Literal["mm", "in"],
        count: Annotated[int, msgspec.Meta(ge=1, le=10, description="How many")],
    ) -> str:
        assert isinstance(point, Point) and isinstance(size, Size)
        assert isinstance(colour, Colour) and isinstance(shape, Shape)
        return (
            f"{count} {shape.value} {size.width}x{size.height}{unit} {colour.name}"
            f"@{colour.alpha} at ({point.x}, {point.y}) verbose={options['verbose']}"
        )

    return server


GOOD: dict[str, Any] = {
    "point": {"x": 1, "y": 2},
    "size": {"width": 3, "height": 4},
    "colour": {"name": "red"},
    "options": {"verbose": True},
    "shape": "circle",
    "unit": "mm",
    "count": 2,
}


async def test_every_supported_kind_is_decoded_into_its_type() -> None:
    async with open_client(typed_server()) as client:
        result = await client.call_tool("describe", GOOD)
        assert result.is_error is not True
        assert result.content[0].text == (  # type: ignore[union-attr]
            "2 circle 3x4mm red@1.0 at (1.0, 2.0) verbose=True"
        )
        (tool,) = await client.list_tools()
    properties = tool.input_schema["properties"]
    assert properties["shape"] == {"$ref": "#/$defs/Shape"}
    assert tool.input_schema["$defs"]["Shape"]["enum"] == ["circle", "square"]
    assert properties["unit"] == {"enum": ["in", "mm"]}
    assert properties["count"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 10,
        "description": "How many",
    }
    assert set(tool.input_schema["required"]) == set(GOOD)


@pytest.mark.parametrize(
    ("argument", "value", "complaint"),
    [
        ("count", 11, "Expected `int` <= 10 - at `$.count`"),
        ("unit", "cm", "Invalid enum value 'cm' - at `$.unit`"),
        ("shape", "hexagon", "Invalid enum value 'hexagon' - at `$.shape`"),
        ("size", {"width": 1}, "Object missing required field `height` - at `$.size`"),
    ],
)
async def test_a_wrong_value_names_the_argument(argument: str, value: Any, complaint: str) -> None:
    async with open_client(typed_server()) as client:
        result = await client.call_tool("describe", {**GOOD, argument: value})
    assert result.is_error is True
    assert result.content[0].text == (  # type: ignore[union-attr]
        f"Invalid arguments for tool 'describe': {complaint}"
    )


try:  # Pydantic is no dependency of ours; the official SDK (a test dependency) brings it
    import pydantic
except ImportError:  # pragma: no cover
    pydantic = None
else:

    class Address(pydantic.BaseModel):
        street: str
        number: int = pydantic.Field(default=1, ge=1)


@pytest.mark.skipif(pydantic is None, reason="pydantic is not installed")
async def test_pydantic_models_when_pydantic_is_installed() -> None:
    server = Server("pydantic")

    @server.tool
    async def deliver(address: Address, note: str = "") -> str:
        assert isinstance(address, Address)
        return f"{address.number} {address.street} {note}".strip()

    async with open_client(server) as client:
        ok = await client.call_tool("deliver", {"address": {"street": "Main", "number": 3}})
        bad = await client.call_tool("deliver", {"address": {"street": "Main", "number": 0}})
        (tool,) = await client.list_tools()
    assert ok.content[0].text == "3 Main"  # type: ignore[union-attr]
    assert bad.is_error is True
    assert bad.content[0].text.startswith(  # type: ignore[union-attr]
        "Invalid arguments for tool 'deliver': address: 1 validation error for Address"
    )
    schema = tool.input_schema["properties"]["address"]
    assert schema["properties"]["number"]["minimum"] == 1
    assert schema["required"] == ["street"]


class Opaque:
    pass


def test_an_unsupported_type_is_refused_at_registration_naming_tool_and_parameter() -> None:
    server = Server("refusing")
    with pytest.raises(TypeError, match=r"^tool 'take', parameter 'thing': Opaque is not a supp"):

        @server.tool
        async def take(thing: Opaque) -> str:
            return "never"

    with pytest.raises(TypeError, match=r"^prompt 'ask', parameter 'about': Opaque is not a"):

        @server.prompt(name="ask")
        async def prompt(about: Opaque) -> str:
            return "never"

    assert not server.tools


def test_a_duplicate_registration_raises() -> None:
    server = Server("twice")

    @server.tool
    async def add(a: int) -> int:
        return a

    @server.prompt
    async def greet() -> str:
        return "hi"

    @server.resource("data://x")
    async def x() -> str:
        return "x"

    with pytest.raises(ValueError, match=r"^tool 'add' is already registered"):
        server.tool(name="add")(x)
    with pytest.raises(ValueError, match=r"^prompt 'greet' is already registered"):
        server.prompt(name="greet")(x)
    with pytest.raises(ValueError, match=r"^resource 'data://x' is already registered"):
        server.resource("data://x")(x)
    first = server.tools["add"]
    server.add_tool(first, replace=True)  # replacing on purpose is allowed
