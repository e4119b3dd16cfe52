"""The map of ``docs/ARCHITECTURE.md`` (tools/archmap.py): the page holds exactly what the code
draws, and every box, arrow and step of it is read back and found in the code independently."""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parent.parent


def load(name: str) -> ModuleType:
    """A script of tools/ as a module (tools/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


archmap = load("archmap")
archcheck = sys.modules["archcheck"]
PAGE = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
BLOCK = archmap.render(archmap.build(REPO))
NODE = re.compile(r'^    (\w+)\["<b>[^<]*</b><br/>(.*)"\]$', re.M)
ARROW = re.compile(r"^  (\w+) (-->|-\.->\|\"([^\"]*)\"\|) (\w+)$", re.M)
STEP = re.compile(r"^  (\w+)->>(\w+): ([\w.]+) \(([\w.]+)\): ", re.M)


def test_the_page_holds_the_map_of_the_code() -> None:
    assert BLOCK in PAGE, (
        "docs/ARCHITECTURE.md does not hold the map of the code: run `python tools/archmap.py --write`"
    )
    # It opens the page: the title, one paragraph, the map.
    assert PAGE.index(archmap.BEGIN) < PAGE.index("\n## ")
    assert PAGE.count("```mermaid") == 2


def package_of(unit: str) -> str:
    """The package whose modules a box lists, read from the box's id alone."""
    layer, _, sub = unit.partition("_")
    base = {
        "research": "research",
        "experiments": "ginenv.experiments",
        "agents": "ginenv.agents",
        "core": "ginenv",
    }[layer]
    return base if sub in ("top", "env", "engine", "base") else f"{base}.{sub}"


def boxes() -> dict[str, set[str]]:
    """Box id -> the dotted names of the modules it lists."""
    found = {}
    for unit, label in NODE.findall(BLOCK):
        names = label.replace("<br/>", " · ").split(" · ")
        found[unit] = {f"{package_of(unit)}.{name}" for name in names}
    return found


def test_every_module_is_in_one_box_and_every_box_holds_modules() -> None:
    tree = archcheck.read_tree(REPO, archmap.ROOTS)
    listed = [m for names in boxes().values() for m in names]
    assert len(listed) == len(set(listed))
    modules = {n for n, m in tree.modules.items() if not m.is_package and m.alias_of is None}
    assert set(listed) == modules
    assert {
        "ginenv.kernels.hand",
        "ginenv.agents.arena",
        "ginenv.experiments.eval.harness",
        "research.bc",
    } <= modules


def test_every_arrow_is_an_import_or_an_entry_point() -> None:
    tree = archcheck.read_tree(REPO, archmap.ROOTS)
    imports = archcheck.import_edges(tree)
    entries = archcheck.entry_edges(tree)
    units = boxes()
    layers = {layer for layer, _, _ in archmap.LAYERS}

    def members(node: str) -> set[str]:
        if node in layers:
            return {m for unit, names in units.items() if unit.startswith(node + "_") for m in names}
        return units[node] | {package_of(node)}

    arrows = ARROW.findall(BLOCK)
    assert len(arrows) >= 10
    kinds = set()
    for source, arrow, label, target in arrows:
        assert source != target
        if arrow == "-->":
            kinds.add("import")
            assert any(t in members(target) for s in members(source) for t in imports.get(s, {})), (
                source,
                target,
            )
        else:
            kinds.add("entry point")
            edge = [e for e in entries if e.source in members(source) and e.target in members(target)]
            assert edge, (source, target)
            assert any(
                e.name in label or (e.group in archcheck.FACTORY_GROUPS and "agent factory" in label)
                for e in edge
            )
    assert kinds == {"import", "entry point"}
    # The core's calls upward are all drawn, and the defaults ride on them.
    assert re.search(r'core_env -\.->\|"agent factory: defaults [^"]*normal[^"]*"\| agents_top', BLOCK)
    assert re.search(r'core_kernels -\.->\|"greedy \(a default\)"\| agents_baselines', BLOCK)


def test_every_step_of_the_decision_is_a_function_of_the_module_it_names() -> None:
    steps = STEP.findall(BLOCK)
    assert [(a, b) for a, b, *_ in steps] == [(s.caller, s.callee) for s in archmap.DECISION]
    for _, callee, function, where in steps:
        module = importlib.import_module(where if where.startswith("research") else f"ginenv.{where}")
        assert module.__name__.startswith(archmap.PARTICIPANTS[callee][1])
        obj: object = module
        for part in function.split("."):
            obj = getattr(obj, part)
        assert callable(obj), function


def test_a_step_whose_function_is_gone_stops_the_map(tmp_path: Path) -> None:
    (tmp_path / "ginenv").mkdir()
    (tmp_path / "ginenv" / "__init__.py").write_text("", encoding="utf-8")
    with pytest.raises(
        LookupError, match=r"step 1 of the decision names play_game, .* fix DECISION in tools/archmap.py"
    ):
        archmap.build(tmp_path)


def test_write_replaces_only_what_lies_between_the_markers() -> None:
    page = f"# Title\n\nIntro.\n\n{archmap.BEGIN}\nold map\n{archmap.END}\n\nThe rest.\n"
    assert archmap.replaced(page, "NEW") == "# Title\n\nIntro.\n\nNEW\n\nThe rest.\n"
    with pytest.raises(ValueError, match="put the two markers back"):
        archmap.replaced("# Title\n", "NEW")


def test_the_page_lists_every_rule_of_the_checker() -> None:
    """Each rule the checker's docstring documents has its line in the page's list, and no other."""
    rules = re.findall(r"^``([\w-]+)`` \(:func:`\w+`\)$", archcheck.__doc__, re.M)
    assert "default-strategy" in rules and len(rules) >= 10
    section = PAGE.split("## The checker's rules", 1)[1].split("\n## ", 1)[0]
    assert sorted(re.findall(r"^- `([\w-]+)`: ", section, re.M)) == sorted(rules)
