"""A host's side of the Skills extension: check what it reads against the skill's entry.

A ``skills/list`` or ``skills/get`` entry (:class:`~mcp_actors.protocol.skills.Skill`)
is a manifest: every file of the skill with its ``sha256:`` digest and size. Before
a host uses a file it read with ``resources/read`` it must check it against the
entry it holds — an unlisted file, a size or digest that differs, or a ``SKILL.md``
whose frontmatter is not the entry's are all verification failures, and the
content must not be used (the entry may be stale: ``skills/get`` refreshes it).
:meth:`Client.read_skill_file <mcp_actors.client.client.Client.read_skill_file>`
reads and checks in one step; :func:`verify_skill_file` checks bytes you already have.

A skill whose ``resources`` is ``"dynamic"`` publishes no digests: its files can
only be checked for membership of the skill's directory, and its ``SKILL.md`` for
its frontmatter.
"""

from __future__ import annotations

import base64
import binascii
import hashlib

from ..protocol import skills as s
from ..protocol import types as t
from ..protocol.frontmatter import FrontmatterError, parse_frontmatter


class SkillVerificationError(Exception):
    """Content read for a skill is not what its entry describes: do not use it."""


def content_bytes(contents: t.ResourceContents) -> bytes:
    """The raw bytes of one ``resources/read`` item (text as UTF-8, blob decoded)."""
    if isinstance(contents.text, str):
        return contents.text.encode("utf-8")
    if isinstance(contents.blob, str):
        try:
            return base64.b64decode(contents.blob, validate=True)
        except binascii.Error:
            raise SkillVerificationError(f"{contents.uri}: blob is not valid base64") from None
    raise SkillVerificationError(f"{contents.uri}: the contents carry neither text nor blob")


def verify_skill_file(skill: s.Skill, uri: str, data: bytes) -> None:
    """Raise :class:`SkillVerificationError` unless ``data`` is the file ``uri`` of ``skill``."""
    directory = skill.uri.rsplit("/", 1)[0]
    if skill.resources == "dynamic":
        if uri != skill.uri and not uri.startswith(directory + "/"):
            raise SkillVerificationError(f"{uri} is outside the skill {skill.uri}")
    else:
        listed = next((entry for entry in skill.resources if entry.uri == uri), None)
        if listed is None:
            raise SkillVerificationError(f"{uri} is not listed in the entry of {skill.uri}")
        if len(data) != listed.size:
            raise SkillVerificationError(
                f"{uri}: {len(data)} bytes read, the entry says {listed.size}"
            )
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        if digest != listed.digest:
            raise SkillVerificationError(f"{uri}: digest {digest}, the entry says {listed.digest}")
    if uri == skill.uri:
        try:
            frontmatter = parse_frontmatter(data.decode("utf-8"))
        except (UnicodeDecodeError, FrontmatterError) as error:
            raise SkillVerificationError(f"{uri}: unreadable frontmatter: {error}") from None
        if frontmatter != skill.frontmatter:
            raise SkillVerificationError(f"{uri}: its frontmatter differs from the entry's")
