"""docs/openapi.md as written: each ```python block runs as a program (the OpenAPI one
against the local Petstore of test_openapi.py) and prints the ```text block after it."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import trio
from test_modern_client import _serve
from test_openapi import API_KEY, PETSTORE, Petstore
from test_tool_search_docs import examples, run_program

DOC = Path(__file__).parent.parent / "docs" / "openapi.md"


async def test_every_example_prints_what_the_page_says() -> None:
    async with trio.open_nursery() as nursery:
        url = await nursery.start(partial(_serve, Petstore()))
        env = {"PETSTORE_URL": f"{url}/v1", "PETSTORE_KEY": API_KEY}
        for source, printed in examples(DOC):
            assert await run_program(source, PETSTORE.parent, env) == printed
        nursery.cancel_scope.cancel()
