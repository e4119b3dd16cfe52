"""Griffe extension: Sphinx cross-reference roles in docstrings read as inline code on the site.

The docstrings write ``:func:`decode` `` and ``:class:`ginenv.rules.Rules` `` as Sphinx would; the
Markdown renderer of mkdocstrings would print the role's name before the code. This extension keeps
only the target, as inline code (``mkdocs.yml`` loads it in the Python handler's ``extensions``).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

#: A Sphinx role as the docstrings use them: ``:func:`name` ``, ``:py:class:`~pkg.Name` ``.
ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|exc|obj|const|term):`~?([^`]+)`")


def strip_roles(text: str) -> str:
    """``text`` with every Sphinx role replaced by its target as inline code."""
    return ROLE.sub(r"`\1`", text)


class SphinxRoles(griffe.Extension):
    """Rewrite each docstring's roles when griffe loads the object."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Called once per loaded object, before its docstring is parsed."""
        if obj.docstring is not None:
            obj.docstring.value = strip_roles(obj.docstring.value)
