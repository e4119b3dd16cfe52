"""Griffe extension: the Sphinx habits of the docstrings, read as the site's Markdown expects.

- Cross-reference roles (``:func:`decode` ``, ``:class:`~ginenv.rules.Rules` ``): the Markdown
  renderer of mkdocstrings would print the role's name before the code; only the target is kept,
  as inline code.
- A paragraph ending in ``::`` introduces a literal block (the indented block after it, which
  Markdown also reads as code): ``text::`` reads ``text:``, as Sphinx prints it.
- ``#:`` comments above a module or class attribute are its documentation (as Sphinx autodoc reads
  them); griffe reads only string docstrings, so those comments become the attribute's docstring.

``mkdocs.yml`` loads this file in the Python handler's ``extensions``.
"""

from __future__ import annotations

import ast
import re
from typing import Any

import griffe

#: A Sphinx role as the docstrings use them: ``:func:`name` ``, ``:py:class:`~pkg.Name` ``.
ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|exc|obj|const|term):`~?([^`]+)`")


#: A reST literal-block marker at the end of a line: ``text::`` (kept as ``text:``) or a lone ``::``.
LITERAL = re.compile(r"(\S)::$|[ \t]*(?<!\S)::$", re.MULTILINE)


def strip_roles(text: str) -> str:
    """``text`` with every Sphinx role replaced by its target as inline code, and every literal-block
    marker ``::`` read as Sphinx prints it."""
    text = ROLE.sub(r"`\1`", text)
    return LITERAL.sub(lambda m: f"{m.group(1)}:" if m.group(1) else "", text)


def comment_doc(lines: list[str], lineno: int) -> str | None:
    """The ``#:`` comment lines right above line ``lineno`` (1-based) of ``lines``, joined; or None."""
    found: list[str] = []
    index = lineno - 2
    while index >= 0 and lines[index].strip().startswith("#:"):
        found.insert(0, lines[index].strip()[2:].strip())
        index -= 1
    return "\n".join(found) if found else None


class SphinxDocstrings(griffe.Extension):
    """Rewrite roles in every docstring, and give ``#:``-documented attributes their docstring."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Called once per loaded object, before its docstring is parsed."""
        if obj.docstring is not None:
            obj.docstring.value = strip_roles(obj.docstring.value)

    def on_attribute_instance(
        self, *, node: ast.AST | griffe.ObjectNode, attr: griffe.Attribute, **kwargs: Any
    ) -> None:
        """An attribute without a string docstring takes the ``#:`` comment above it, if any."""
        if attr.docstring is not None or attr.lineno is None:
            return
        try:
            lines = attr.module.lines
        except (AttributeError, OSError, ValueError):  # no source (an inspected or builtin module)
            return
        text = comment_doc(lines, attr.lineno)
        if text:
            attr.docstring = griffe.Docstring(strip_roles(text), lineno=attr.lineno, parent=attr)
