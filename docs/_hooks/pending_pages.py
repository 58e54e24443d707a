"""MkDocs hook: a nav entry naming a page that does not exist yet is left out of the site.

``mkdocs.yml`` lists a few pages other branches are adding; until one lands, MkDocs
turns its entry into a link to a missing ``.md`` file (and says so at INFO level, as
``validation.nav.not_found: info`` asks). This hook drops such links from the nav, so
the site never shows a dead entry. An entry that is a real external link (``https://``)
is kept; ``tests/test_docs_site.py`` checks that every nav entry not listed as pending
exists.
"""

from __future__ import annotations

from typing import Any

from mkdocs.structure import StructureItem
from mkdocs.structure.nav import Link, Navigation, Section


def pending(item: StructureItem) -> bool:
    """A link MkDocs made of a nav entry whose Markdown file is missing."""
    return isinstance(item, Link) and item.url.endswith(".md") and "://" not in item.url


def pruned(items: list[StructureItem]) -> list[StructureItem]:
    kept = []
    for item in items:
        if isinstance(item, Section):
            item.children = pruned(item.children)
        if not pending(item):
            kept.append(item)
    return kept


def on_nav(nav: Navigation, **_: Any) -> Navigation:
    nav.items = pruned(nav.items)
    return nav
