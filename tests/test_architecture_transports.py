"""Transports move messages; they never decode or encode one themselves (they ask ``protocol/``).

What a transport needs to know about a message — is it a request, which ids does a
reply answer, which era and version, the error code of a reply — comes from the one
decode :mod:`mcp_actors.protocol.received` does for it, or with the message the engine
encoded (``transports.abc.Outgoing``). A transport module that builds a msgspec decoder
or a Struct of its own, or parses JSON with the standard library, is decoding messages
behind protocol/'s back.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import mcp_actors

TRANSPORTS = Path(mcp_actors.__file__).parent / "transports"

#: Every transport module, server and client side.
MODULES = sorted(
    str(path.relative_to(TRANSPORTS))
    for path in TRANSPORTS.rglob("*.py")
    if path.name != "__init__.py"
)


#: Structs that are records, not messages: (module, class). ``Outgoing`` holds bytes
#: already encoded by protocol/ and is never decoded nor encoded; it is a Struct only
#: because one is made per message sent, and a Struct's constructor is cheap.
#: ``StoredEvent`` holds such bytes too; a Struct because ``gc=False`` keeps the tens
#: of thousands an event store retains out of the cycle collector's sight.
RECORDS = {("abc.py", "Outgoing"), ("http/event_store.py", "StoredEvent")}


def decoding_in(path: Path) -> list[str]:
    """What in ``path`` decodes or encodes JSON itself: msgspec decoders, encoders and
    Structs (but the :data:`RECORDS`), json.loads/dumps."""
    found = []
    tree = ast.parse(path.read_text())
    module = str(path.relative_to(TRANSPORTS)) if path.is_relative_to(TRANSPORTS) else path.name
    record_bases = {
        id(base)
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and (module, node.name) in RECORDS
        for base in node.bases
    }
    for node in ast.walk(tree):
        if id(node) in record_bases:
            continue
        if isinstance(node, ast.Attribute) and node.attr in {
            "Decoder",
            "Encoder",
            "Struct",
            "decode",
            "encode",
        }:
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id == "msgspec":
                found.append(f"line {node.lineno}: msgspec ... .{node.attr}")
        elif isinstance(node, ast.Attribute) and node.attr in {"loads", "load", "dumps", "dump"}:
            if isinstance(node.value, ast.Name) and node.value.id == "json":
                found.append(f"line {node.lineno}: json.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module in {"msgspec", "msgspec.json"}:
            names = {alias.name for alias in node.names} & {
                "Struct",
                "Decoder",
                "Encoder",
                "decode",
                "encode",
            }
            found.extend(f"line {node.lineno}: from {node.module} import {name}" for name in names)
    return found


def test_every_transport_module_is_checked() -> None:
    assert {"stdio.py", "http/endpoint.py", "http/client_base.py", "websocket.py"} <= set(MODULES)


@pytest.mark.parametrize("module", MODULES)
def test_transports_decode_and_encode_no_message_themselves(module: str) -> None:
    assert decoding_in(TRANSPORTS / module) == []


def test_the_check_sees_a_decoding_struct(tmp_path: Path) -> None:
    """The check above catches what transports used to hold (ad-hoc decoding Structs)."""
    source = (
        "import msgspec\n"
        "class _Kind(msgspec.Struct):\n"
        "    id: int | None = None\n"
        "_kind = msgspec.json.Decoder(_Kind).decode\n"
    )
    sample = tmp_path / "sample.py"
    sample.write_text(source)
    assert len(decoding_in(sample)) == 2
