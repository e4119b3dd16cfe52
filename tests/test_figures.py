"""Every headline figure of the README and the guides comes from ``docs/figures.json``.

The benchmarks write that file (``--record``: value, date, machine, load average, command); the docs
build reads it (``docs/_hooks/figures.py`` replaces ``{{ fig:NAME }}``), and the README carries
each value with a ``<!-- fig:NAME -->`` marker. These tests fail when a placeholder or marker names
no figure, when the README's value differs from the file's, and when a page quotes a speed, a ratio
to OpenSpiel or a wall time by hand. Sections whose heading carries a date (``(2026-12-01)``) are
dated records and keep their numbers, as the reports under ``docs/reports/`` do.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: The pages whose figures must come from the file: the README and the guides that quote speed.
CHECKED = (
    "README.md",
    "docs/index.md",
    "docs/getting-started.md",
    "docs/speed.md",
    "docs/training.md",
    "docs/benchmarking.md",
    "docs/ARCHITECTURE.md",
)

#: Figures written by hand: a speed (``1.25 M decisions a second``, ``6.2 k env steps/s``), a ratio
#: to an anchor (``28.7x OpenSpiel``) or a wall time (``1 min 50 s``, ``about 2 minutes``).
BY_HAND = (
    re.compile(
        r"\d[\d.,]*(?:-\d[\d.,]*)?\s?[kMG]?\s+(?:[\w-]+\s+){0,2}?"
        r"(?:decisions|hands|steps|values)\s*(?:/s|a second|per second)"
    ),
    re.compile(r"\d[\d.,]*\s?[kMG]?\s*(?:decisions|hands|steps|deals)/s"),
    re.compile(r"\d[\d.]*x\s+(?:OpenSpiel|faster|slower)"),
    re.compile(r"\b\d+(?:\.\d+)?\s?(?:min|minutes|h)\b"),
)
#: A table cell that is a measured rate or ratio: ``1.25 M``, ``97-101 k``, ``193 M/s``, ``28.7x``.
CELL = re.compile(r"^\**\d[\d.,]*(?:-\d[\d.,]*)?\s?(?:[kMG](?:/s)?|x)\**(?:\s.*)?$")
DATED_HEADING = re.compile(r"^#+ .*\d{4}-\d{2}-\d{2}")
HEADING = re.compile(r"^#+ ")


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ginenv_doc_figures", DOCS / "_hooks" / "figures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


figures_hook = _module()


@pytest.fixture(scope="module")
def figures() -> dict[str, dict[str, Any]]:
    return figures_hook.load()


def _unsourced(text: str, figures: dict[str, dict[str, Any]]) -> list[str]:
    """The lines of a page that quote a headline figure by hand (outside dated sections)."""
    text = figures_hook.PLACEHOLDER.sub("", text)
    text = figures_hook.README_MARK.sub("", text)
    found = []
    dated = fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and HEADING.match(line):
            dated = bool(DATED_HEADING.match(line))
            continue
        if dated:
            continue
        hits = [m.group(0) for pattern in BY_HAND for m in pattern.finditer(line)]
        if line.lstrip().startswith("|"):
            hits += [cell.strip() for cell in line.strip().strip("|").split("|") if CELL.match(cell.strip())]
        if hits:
            found.append(f"{number}: {hits}: {line.strip()[:100]}")
    return found


def test_every_figure_is_complete(figures: dict[str, dict[str, Any]]) -> None:
    """Each entry says its value, kind, date, machine (CPU, cores, load) and command."""
    assert figures, "docs/figures.json is missing or empty"
    for name, figure in figures.items():
        assert figure["kind"] in figures_hook.KINDS, name
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", figure["date"]), name
        assert {"cpu", "cores", "load_1min"} <= set(figure["machine"]), name
        assert figure["command"].strip(), name
        figures_hook.show(figure)


def test_every_placeholder_names_a_figure(figures: dict[str, dict[str, Any]]) -> None:
    missing = [
        f"{page.relative_to(ROOT)}: {m.group(0)}"
        for page in sorted(DOCS.rglob("*.md"))
        for m in figures_hook.PLACEHOLDER.finditer(page.read_text(encoding="utf-8"))
        if m.group(1) not in figures
    ]
    assert not missing, missing


def test_readme_figures_equal_the_file(figures: dict[str, dict[str, Any]]) -> None:
    """A marked README value that differs from the file: ``python docs/_hooks/figures.py readme``."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    marks = figures_hook.README_MARK.findall(text)
    assert marks, "the README marks no figure"
    wrong = [
        f"{name}: README says {value!r}, the file {figures_hook.part(figures[name], which or None)!r}"
        if name in figures
        else f"{name}: no such figure"
        for value, name, which in marks
        if name not in figures or value != figures_hook.part(figures[name], which or None)
    ]
    assert not wrong, wrong


@pytest.mark.parametrize("page", CHECKED)
def test_no_headline_figure_by_hand(page: str, figures: dict[str, dict[str, Any]]) -> None:
    found = _unsourced((ROOT / page).read_text(encoding="utf-8"), figures)
    assert not found, "figures with no source (use {{ fig:NAME }} or a dated section):\n" + "\n".join(found)


def test_the_scan_catches_the_old_figures(figures: dict[str, dict[str, Any]]) -> None:
    """The patterns find the drifted figures of issue 54, and leave placeholders and dated sections."""
    for line in (
        "a batched engine (1.25 M decisions a second on one core, 28.7x OpenSpiel);",
        "21 pairings, 8400 games, 1 min 50 s on a 2-core machine",
        "ginenv ladder    # every level, about 2 minutes on 2 cores",
        "the training took 8 min 15 s (6.2 k env steps/s; 72% of it the PPO update)",
        "| whole hands/s of random play | 97-101 k | 524 | 185x |",
    ):
        assert _unsourced(line, figures), line
    assert not _unsourced("{{ fig:vector.decisions_per_s }} decisions a second", figures)
    assert not _unsourced("## Before (2026-12-05)\n\n| decisions/s | 1.20 M |", figures)


def test_the_hook_substitutes(figures: dict[str, dict[str, Any]]) -> None:
    name = next(iter(figures))
    page = f"{{{{ fig:{name} }}}} ({{{{ fig:{name}:source }}}})"
    out = figures_hook.substitute(page, figures)
    assert figures_hook.show(figures[name]) in out and figures[name]["date"] in out
    with pytest.raises(KeyError):
        figures_hook.substitute("{{ fig:no.such_figure }}", figures)
