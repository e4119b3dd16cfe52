"""MkDocs hook: the installed layout of the package, as links, for mkdocstrings' static analysis.

The repository keeps ``agents/`` and ``experiments/`` at the top level and setuptools installs them as
``ginenv.agents`` and ``ginenv.experiments``. Griffe (mkdocstrings' loader) reads sources without
running import hooks, so it would not find those two subpackages under ``ginenv/``. Before the build
this hook writes ``build/docs-layout/ginenv``: links to ``ginenv/``'s modules and subpackages, plus
``agents`` and ``experiments``; ``mkdocs.yml`` points the handler's ``paths`` there.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
#: Where the mirror is written (``build/`` is ignored by git); ``mkdocs.yml``'s handler paths name it.
LAYOUT = ROOT / "build" / "docs-layout"


def write_layout() -> Path:
    """Write the mirror of the installed ``ginenv`` package and return the folder that holds it."""
    if LAYOUT.exists():
        shutil.rmtree(LAYOUT)
    package = LAYOUT / "ginenv"
    package.mkdir(parents=True)
    for source in (ROOT / "ginenv").iterdir():
        if source.suffix == ".py" or (source / "__init__.py").is_file():
            (package / source.name).symlink_to(source, target_is_directory=source.is_dir())
    for sub in ("agents", "experiments"):
        (package / sub).symlink_to(ROOT / sub, target_is_directory=True)
    return LAYOUT


def on_startup(**kwargs: Any) -> None:
    """Write the mirror once per ``mkdocs build`` or ``serve``, before any plugin loads a module."""
    write_layout()
