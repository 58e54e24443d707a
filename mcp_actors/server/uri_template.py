"""URI templates (RFC 6570) for resource templates: parse once, match URIs, expand values.

A resource template such as ``users://{id}/profile`` names a family of resources.
The server needs the inverse of expansion: given a URI a client asks for, does it
belong to the family, and with which variable values? :class:`UriTemplate`
answers with a regular expression built once from the template.

Supported expressions:

- ``{var}`` — RFC 6570 level 1, simple string expansion. An expanded value has
  every reserved character percent-encoded, so it never contains ``/``, ``?`` or
  ``#``; matching takes one non-empty path segment and percent-decodes it.
- ``{+var}`` — level 2 reserved expansion, for values that may contain ``/``
  (``file:///{+path}``); matching takes one or more characters of any kind.

Anything else (``{#x}``, ``{/x}``, ``{?x,y}``, ``{x,y}``, ``{x:3}``, ``{x*}``) is
rejected when the template is registered, not when a client first trips on it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final
from urllib.parse import quote, unquote

import attrs

_EXPRESSION: Final = re.compile(r"\{([^{}]*)\}")
_VARNAME: Final = re.compile(r"[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*")


class InvalidUriTemplate(ValueError):
    """A template this module cannot match (malformed, or beyond levels 1 and ``{+var}``)."""


@attrs.frozen
class UriTemplate:
    """A parsed URI template; see the module docstring for what it accepts."""

    template: str
    #: Variable names in order of appearance.
    variables: tuple[str, ...]
    _pattern: re.Pattern[str] = attrs.field(repr=False, eq=False)
    _reserved: frozenset[str] = attrs.field(repr=False, eq=False)

    @classmethod
    def parse(cls, template: str) -> UriTemplate:
        """Parse ``template``; raises :class:`InvalidUriTemplate` with the reason."""
        parts: list[str] = []
        names: list[str] = []
        reserved: set[str] = set()
        position = 0
        for match in _EXPRESSION.finditer(template):
            literal = template[position : match.start()]
            if "{" in literal or "}" in literal:
                raise InvalidUriTemplate(f"{template!r}: unbalanced brace before {match.group()}")
            parts.append(re.escape(literal))
            body = match.group(1)
            operator = body[:1] if body[:1] == "+" else ""
            name = body[len(operator) :]
            if not _VARNAME.fullmatch(name):
                raise InvalidUriTemplate(
                    f"{template!r}: {match.group()} is not supported (only {{name}} and"
                    " {+name}: RFC 6570 level 1 and reserved expansion)"
                )
            if name in names:
                raise InvalidUriTemplate(f"{template!r}: variable {name!r} appears twice")
            names.append(name)
            group = name.replace(".", "__dot__")
            if operator == "+":
                reserved.add(name)
                parts.append(f"(?P<{group}>.+)")
            else:
                parts.append(f"(?P<{group}>[^/?#]+)")
            position = match.end()
        tail = template[position:]
        if "{" in tail or "}" in tail:
            raise InvalidUriTemplate(f"{template!r}: unbalanced brace")
        parts.append(re.escape(tail))
        return cls(template, tuple(names), re.compile("".join(parts)), frozenset(reserved))

    @property
    def is_template(self) -> bool:
        """Whether the template has any variable (else it names exactly one URI)."""
        return bool(self.variables)

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables' (percent-decoded) values if ``uri`` belongs to the template, else None."""
        found = self._pattern.fullmatch(uri)
        if found is None:
            return None
        return {name: unquote(found.group(name.replace(".", "__dot__"))) for name in self.variables}

    def expand(self, values: Mapping[str, object]) -> str:
        """The URI for ``values`` (each ``str()``-ed and percent-encoded as its operator says)."""

        def replace(match: re.Match[str]) -> str:
            body = match.group(1)
            name = body.removeprefix("+")
            value = str(values[name])
            return quote(value, safe=":/?#[]@!$&'()*+,;=" if name in self._reserved else "")

        return _EXPRESSION.sub(replace, self.template)
