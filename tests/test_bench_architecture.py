"""The bench's modules import one way, and only each other's public names.

``bench.http`` builds on ``bench.wire``, so ``bench.wire`` must not reach back for
the HTTP wire (``bench.targets`` picks a wire for a target); and no module imports
an underscored name from another, bench or not.
"""

from __future__ import annotations

from test_architecture import PACKAGE

from import_graph import import_cycles, private_imports

BENCH = PACKAGE / "bench"


def test_the_bench_modules_import_no_private_names() -> None:
    found = {
        path.name: [f"{module}.{name}" for _, module, name in private_imports(path)]
        for path in BENCH.glob("*.py")
    }
    assert {name: names for name, names in found.items() if names} == {}


def test_the_bench_modules_import_each_other_without_a_cycle() -> None:
    assert import_cycles(BENCH) == []
