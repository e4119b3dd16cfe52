#!/usr/bin/env python3
"""The project's architecture check: the mechanical rules of ``docs/ARCHITECTURE.md``, read from the code.

    python3 tools/archcheck.py [ROOT]     # ROOT: the repository (by default, the one holding this file)

It reads the production code statically (nothing is imported): the three package roots of the
repository as they install, ``ginenv/`` (``ginenv``), ``agents/`` (``ginenv.agents``) and
``experiments/`` (``ginenv.experiments``); the scripts (benchmarks, docs, research, tools) only where
a rule says so, and the tests not at all.
The rules, each a function of a :class:`Tree` returning :class:`Finding` s:

``private-import`` (:func:`private_imports`)
    No module imports another module's private name (one leading underscore): ``from m import _x``
    and ``import m._x``. A private submodule belongs to its package: modules inside that package may
    import it, no other.
``import-circle`` (:func:`import_circles`)
    No two modules import each other, directly or around a circle. Every import counts, lazy ones
    (inside a function) and ``importlib.import_module("literal")`` included, and so do package
    ``__init__`` edges: importing ``a.b.c`` runs ``a/__init__.py`` and ``a/b/__init__.py`` first, so
    it is an edge to each of them. Running a module's own enclosing package is left out (that
    package is already being initialised when the module runs), but taking a name the package
    defines (``from package import NAME``, NAME no submodule) is an edge to it: the package must
    have defined NAME before the module runs, so a package that imports the module back, lazily
    or not, closes a circle. So ``sibling -> package -> sibling`` is a circle, and ``package ->
    submodule -> package`` is one only where the submodule takes a name from the package.
``long-file`` (:func:`long_files`)
    No source file, Python or JavaScript (the play page's ``experiments/play/static/*.js``), over
    :data:`MAX_LINES` lines.
``long-function`` (:func:`long_functions`)
    No function over :data:`MAX_FUNCTION_LINES` lines in the trainer, the evaluation and the play
    server (:data:`SHORT_FUNCTION_PACKAGES`: code a reader follows step by step) unless a comment
    ``# long: why`` on the line just above it (or its decorators), or at the top of its body
    (before its first statement past the docstring), says why it must be.
``core-imports-above`` (:func:`core_imports_above`)
    The core (``ginenv`` itself, not ``ginenv.agents`` or ``ginenv.experiments``) imports nothing of
    the layers above it, lazily or not.
``guessable-random`` (:func:`guessable_random`)
    Where secrecy matters (the play server, ``ginenv.experiments.play``, and the dealer of secret
    deals, ``ginenv.secret_deals``) nothing comes from a generator whose output can be computed
    from its seed: no import of ``random`` or ``numpy.random``, no ``np.random...`` call, no
    ``deal_seed``. Cards there come from a :class:`DealKey`, tokens from ``secrets``.
``self-import`` (:func:`self_imports`)
    No script (the ``.py`` files of :data:`SCRIPT_FOLDERS`: the recipes, benchmarks, research and
    tools, run as ``python FOLDER/NAME.py``) is named after a top-level module it imports. Python
    puts a script's own folder first on the import path, so ``torchrl.py`` doing ``import torchrl``
    imports itself, not the library.
``unreached-module`` (:func:`unreached_modules`)
    The wheel holds no module that no command, agent or documented API uses: every module of
    ``ginenv.agents`` and ``ginenv.experiments`` is reached by imports (lazy ones and
    ``import_module("literal")`` included) from the entries: the modules named by the entry points
    and scripts of ``pyproject.toml`` (the ``ginenv`` command, the agent factory), the agents
    package (:data:`ENTRY_MODULES`: every built-in agent), the API reference (the ``::: name``
    directives of ``docs/``) and the ``python -m name`` commands of the README and the manual (the
    reports are left out: they record what was run then). Reaching a module runs its enclosing
    packages, and a reached package's ``__main__`` is its ``python -m`` command. A deprecated
    alias (a module that sets ``__deprecated_alias__``, :mod:`ginenv.deprecation`) is left out:
    it is kept for the code of users, which imports it by its old path.
``shared-module-name`` (:func:`shared_module_names`)
    No two modules or packages of the package share a name (the last part of their dotted names;
    ``__main__`` left out, and so are deprecated aliases): a reader who meets ``config``,
    ``melds`` or ``play`` must know which one is meant. Name each module after what it holds.
``unsandboxed-process`` (:func:`unsandboxed_processes`)
    No module of the package starts a program but the sandbox (:data:`PROCESS_STARTERS`:
    ``ginenv.agents.sandbox`` and its launcher): no call of ``subprocess.Popen``, ``run``, ``call``,
    ``check_call``, ``check_output``, ``os.system``, ``os.exec*``, ``os.spawn*``,
    ``os.posix_spawn*`` or ``os.fork`` elsewhere. Every ``exec:`` agent then runs in a sandbox,
    whoever starts it. (``multiprocessing`` workers run ginenv's own code and are not programs.)
``record-columns`` (:func:`record_columns`)
    No module but :data:`RECORD_MODULE` (the rest of the core, and the layers above it:
    ``ginenv.agents``, ``ginenv.experiments``) and no script (:data:`SCRIPT_FOLDERS`: research
    included) names a column of the hand record: an upper-case name that :data:`RECORD_MODULE`
    defines and does not export in its ``__all__`` (the record's columns, the entries of its rule
    array), imported from it or read as an attribute of it under any name it is bound to. Every
    other module reads and writes a record through that module's functions (``phase_of``,
    ``hand_of``, ``stock_cards``, ``may_take_top``, ``set_position``, ...), so its layout is one
    module's to change.
``default-strategy`` (:func:`default_strategies`)
    Every strategy the core names by default (a string given to a parameter, keyword or dict key
    named in :data:`STRATEGY_WORDS`, or to an upper-case name ending in one: ``opponent="greedy"``,
    ``DEFAULT_OPPONENT = "normal"``) resolves: through each entry-point group whose core reader (the
    module spelling the group's name, :func:`group_readers`) the naming module reaches, to an entry of
    that group, a name its reader owns (``RANDOM = "random"``), or, for a factory group
    (:data:`FACTORY_GROUPS`), a name the layers above register. These are the core's calls upward,
    which the import graph cannot show: :func:`entry_edges` gives them as edges (``tools/archmap.py``
    draws them).

It prints one line per finding (``RULE: PATH:LINE: what``) and a last summary line, and exits 1
when anything is found. It judges only the mechanical part: the design is for a person to read.
``tests/test_architecture.py`` runs it on the repository and on small trees that break each rule.
"""

from __future__ import annotations

import ast
import itertools
import re
import sys
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: Repository folder -> the package it installs as.
ROOTS = {"ginenv": "ginenv", "agents": "ginenv.agents", "experiments": "ginenv.experiments"}
#: The core package, and the layers above it that it must not import.
CORE = "ginenv"
ABOVE_CORE = ("ginenv.agents", "ginenv.experiments")
#: The most lines a source file may have.
MAX_LINES = 800
#: The most lines a function of :data:`SHORT_FUNCTION_PACKAGES` may have without a ``# long:`` reason.
MAX_FUNCTION_LINES = 80
#: Where functions are kept short (see ``long-function``).
SHORT_FUNCTION_PACKAGES = ("ginenv.experiments.train", "ginenv.experiments.eval", "ginenv.experiments.play")
#: A comment that says why a function is long.
LONG_REASON = re.compile(r"^\s*#\s*long:\s*\S")
#: The suffixes of the source files whose length is checked.
SOURCE_SUFFIXES = (".py", ".js", ".mjs")
#: Folders never read (caches, installed JavaScript dependencies).
SKIPPED_FOLDERS = frozenset({"__pycache__", "node_modules"})
#: Where secrecy matters, and what may not be used there (see ``guessable-random``).
SECRET_MODULES = ("ginenv.experiments.play", "ginenv.secret_deals")
GUESSABLE_MODULES = ("random", "numpy.random")
GUESSABLE_NAMES = frozenset({"deal_seed"})
#: Folders of scripts run as ``python FOLDER/NAME.py`` (see ``self-import``), read recursively.
SCRIPT_FOLDERS = ("benchmarks", "docs", "research", "tools")
#: Calls that import the module named by their first argument (when it is a string literal).
IMPORT_CALLS = frozenset({"importlib.import_module", "import_module", "__import__"})
#: Where every module must be reached from an entry (see ``unreached-module``), and the entries
#: beside pyproject.toml's and the manual's: the agents package registers every built-in agent.
REACHED_LAYERS = ABOVE_CORE
ENTRY_MODULES = ("ginenv.agents",)
#: The only modules that may start a program (see ``unsandboxed-process``), and the calls that do.
PROCESS_STARTERS = ("ginenv.agents.sandbox", "ginenv.agents.sandbox_launch")
STARTING_CALLS = re.compile(
    r"(subprocess\.(Popen|run|call|check_call|check_output)|os\.(system|fork|exec\w*|spawn\w*|posix_spawn\w*))$"
)
#: The module that owns the hand record's layout (see ``record-columns``).
RECORD_MODULE = "ginenv.kernels.hand"
#: pyproject.toml's tables whose values are ``module:object`` entries (a ``[section]`` header prefix).
ENTRY_TABLES = ("project.scripts", "project.gui-scripts", "project.entry-points")
#: The manual's pages whose ``python -m`` commands are not entries (records of past runs).
RECORD_FOLDERS = ("docs/reports",)
#: The words under which the core names a strategy of the layers above (see ``default-strategy``).
STRATEGY_WORDS = ("opponent", "policy")
#: Entry-point groups whose entry is a factory that builds from a name -> the group of names it also
#: reads (installed agents); the names the layers above register are its too (see ``default-strategy``).
FACTORY_GROUPS = {"ginenv.agent_factory": "ginenv.agents"}
#: The calls by which the layers above register a name the factory builds.
REGISTERING_CALLS = frozenset({"register", "register_builtin"})


@dataclass(frozen=True)
class Finding:
    """One broken rule: which (``rule``), where (``path:line``) and what."""

    rule: str
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.where}: {self.message}"


@dataclass(frozen=True)
class Import:
    """What one import statement (or ``import_module`` call) of a module takes from another.

    ``module``: the dotted name of the module it runs (for ``from m import x``: ``m.x`` when that is a
    module, else ``m``); ``name``: the name taken from ``module``, or None when the module itself is
    imported.
    """

    line: int
    module: str
    name: str | None = None


@dataclass(frozen=True)
class Module:
    """One Python module of the tree: its dotted name, its file and its imports."""

    name: str
    path: Path
    is_package: bool
    imports: tuple[Import, ...]
    #: The module a deprecated alias stands for (its ``__deprecated_alias__``), or None.
    alias_of: str | None = None

    def inside(self, package: str) -> bool:
        """Whether this module is ``package`` or lies below it."""
        return self.name == package or self.name.startswith(package + ".")


@dataclass(frozen=True)
class Tree:
    """The production code of a repository: its modules by dotted name, and its source files."""

    root: Path
    modules: dict[str, Module]
    sources: tuple[Path, ...]
    unreadable: tuple[Finding, ...] = ()

    def where(self, module: str, line: int) -> str:
        """``path:line`` of a line of a module, the path relative to the root."""
        return f"{self.modules[module].path.relative_to(self.root)}:{line}"


def is_private(name: str) -> bool:
    """A name with one leading underscore (``_x``; not a dunder such as ``__version__``)."""
    return name.startswith("_") and not name.startswith("__")


def source_files(root: Path, roots: dict[str, str] = ROOTS) -> Iterator[tuple[Path, Path, str]]:
    """Every source file under the package roots: ``(file, root folder, the package it installs as)``.

    A folder of one root that another root installs (``ginenv/agents`` when ``agents/`` is the root of
    ``ginenv.agents``) is left to that root.
    """
    claimed = set(roots.values())
    for folder, package in roots.items():
        base = root / folder
        for path in sorted(base.rglob("*")):
            rel = path.relative_to(base)
            if not path.is_file() or path.suffix not in SOURCE_SUFFIXES:
                continue
            if any(part in SKIPPED_FOLDERS or part.startswith(".") for part in rel.parts[:-1]):
                continue
            if rel.parts[:-1] and f"{package}.{rel.parts[0]}" in claimed:
                continue
            yield path, base, package


def module_name(path: Path, base: Path, package: str) -> str:
    """The dotted name a Python file installs as (``agents/neural/__init__.py``: ``ginenv.agents.neural``)."""
    parts = list(path.relative_to(base).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package, *parts])


def call_name(node: ast.expr) -> str:
    """The dotted name of a called function (``importlib.import_module``), or ``""``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        prefix = call_name(node.value)
        return f"{prefix}.{node.attr}" if prefix else ""
    return ""


def from_base(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from ... import`` statement of a module of ``package`` imports from (relative
    imports resolved)."""
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def imports_of(tree: ast.AST, package: str, known: set[str]) -> Iterator[Import]:
    """Every import of a parsed module, at any depth (lazy imports included).

    ``package``: where the module's relative imports start; ``known``: the tree's module names (to
    tell ``from pkg import submodule`` from ``from module import name``).
    """
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(node.lineno, alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = from_base(node, package)
            if base == "__future__":
                continue
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in known:
                    yield Import(node.lineno, full)
                else:
                    yield Import(node.lineno, base, None if alias.name == "*" else alias.name)
        elif isinstance(node, ast.Call) and call_name(node.func) in IMPORT_CALLS and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value[:1] != ".":
                yield Import(node.lineno, first.value)


def read_tree(root: Path, roots: dict[str, str] = ROOTS) -> Tree:
    """Read every source file under the package roots of the repository at ``root``."""
    root = Path(root)
    files = list(source_files(root, roots))
    python = {module_name(path, base, package): path for path, base, package in files if path.suffix == ".py"}
    known = set(python)
    modules: dict[str, Module] = {}
    unreadable: list[Finding] = []
    for name, path in python.items():
        is_package = path.name == "__init__.py"
        try:
            parsed = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except (SyntaxError, UnicodeDecodeError, ValueError) as err:
            line = getattr(err, "lineno", None) or 1
            where = f"{path.relative_to(root)}:{line}"
            unreadable.append(Finding("unreadable", where, f"cannot parse {name}: {err}"))
            parsed = ast.Module(body=[], type_ignores=[])
        package = name if is_package else name.rpartition(".")[0]
        imports = tuple(imports_of(parsed, package, known))
        modules[name] = Module(name, path, is_package, imports, deprecated_alias(parsed))
    return Tree(root, modules, tuple(path for path, _, _ in files), tuple(unreadable))


def deprecated_alias(parsed: ast.Module) -> str | None:
    """The string a module assigns to ``__deprecated_alias__`` at its top level, or None."""
    top = [(t, n.value) for n in parsed.body if isinstance(n, ast.Assign) for t in n.targets]
    values = [v for t, v in top if isinstance(t, ast.Name) and t.id == "__deprecated_alias__"]
    return next((str(v.value) for v in values if isinstance(v, ast.Constant)), None)


def prefixes(dotted: str) -> list[str]:
    """``a``, ``a.b``, ``a.b.c`` for ``a.b.c``: the modules an import of it runs, outermost first."""
    parts = dotted.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def private_imports(tree: Tree) -> list[Finding]:
    """Imports of another module's private name, or of a private submodule from outside its package."""
    found = []
    tops = {name.split(".")[0] for name in tree.modules}
    for module in tree.modules.values():
        for imp in module.imports:
            if imp.module.split(".")[0] not in tops:
                continue  # not a module of this project
            if imp.name is not None and is_private(imp.name) and imp.module != module.name:
                found.append(
                    Finding(
                        "private-import",
                        tree.where(module.name, imp.line),
                        f"{module.name} imports {imp.name} from {imp.module}",
                    )
                )
            for dotted in prefixes(imp.module)[1:]:
                owner, _, last = dotted.rpartition(".")
                if is_private(last) and not module.inside(owner):
                    found.append(
                        Finding(
                            "private-import",
                            tree.where(module.name, imp.line),
                            f"{module.name} imports {dotted}, private to {owner}",
                        )
                    )
    return found


def import_edges(tree: Tree) -> dict[str, dict[str, int]]:
    """Module -> {module it imports (runs): line of the first such import}.

    An import of ``a.b.c`` is an edge to ``a``, ``a.b`` and ``a.b.c`` (their ``__init__`` runs), except
    to the importing module's own enclosing packages and to itself; a name taken from an enclosing
    package (``from a import NAME`` in ``a.b``) is an edge to that package.
    """
    edges: dict[str, dict[str, int]] = {name: {} for name in tree.modules}
    for module in tree.modules.values():
        for imp in module.imports:
            for target in prefixes(imp.module):
                if target in tree.modules and not module.inside(target):
                    edges[module.name].setdefault(target, imp.line)
            takes_a_name = imp.name is not None and imp.module != module.name
            if takes_a_name and imp.module in tree.modules and module.inside(imp.module):
                edges[module.name].setdefault(imp.module, imp.line)
    return edges


def strongly_connected(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of the import graph (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            step = next(successors, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(edges[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def shortest_circle(edges: dict[str, dict[str, int]], members: list[str]) -> list[str]:
    """A shortest circle through the first of ``members`` (a strongly connected component), within it."""
    start, inside = members[0], set(members)
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(edges[node]):
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if nxt in inside and nxt not in came_from:
                came_from[nxt] = node
                queue.append(nxt)
    raise ValueError(f"no circle through {start}")  # unreachable for a component of two or more


def import_circles(tree: Tree) -> list[Finding]:
    """One finding per group of modules that import each other, showing a shortest circle in it."""
    edges = import_edges(tree)
    found = []
    for members in strongly_connected(edges):
        if len(members) < 2:
            continue
        circle = shortest_circle(edges, members)
        steps = " -> ".join(f"{a} (line {edges[a][b]})" for a, b in itertools.pairwise(circle))
        others = f"; the group also holds {', '.join(m for m in members if m not in circle)}"
        found.append(
            Finding(
                "import-circle",
                tree.where(circle[0], edges[circle[0]][circle[1]]),
                f"{steps} -> {circle[0]}" + (others if len(set(circle)) < len(members) else ""),
            )
        )
    return found


def long_files(tree: Tree) -> list[Finding]:
    """Source files (Python, JavaScript) over :data:`MAX_LINES` lines."""
    found = []
    for path in tree.sources:
        lines = len(path.read_text(encoding="utf-8", errors="replace").splitlines())
        if lines > MAX_LINES:
            where = f"{path.relative_to(tree.root)}:{lines}"
            found.append(Finding("long-file", where, f"{lines} lines (at most {MAX_LINES})"))
    return found


def long_functions(tree: Tree) -> list[Finding]:
    """Functions of :data:`SHORT_FUNCTION_PACKAGES` over :data:`MAX_FUNCTION_LINES` lines (decorators
    included) without a ``# long:`` comment saying why (see the module docstring)."""
    found = []
    for module in tree.modules.values():
        if not any(module.inside(package) for package in SHORT_FUNCTION_PACKAGES):
            continue
        text = module.path.read_text(encoding="utf-8", errors="replace")
        try:
            parsed = ast.parse(text)
        except (SyntaxError, ValueError):
            continue  # reported as unreadable
        lines = text.splitlines()
        for node in ast.walk(parsed):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = (node.end_lineno or node.lineno) - first + 1
            if length <= MAX_FUNCTION_LINES:
                continue
            body = node.body[1:] if ast.get_docstring(node) is not None and len(node.body) > 1 else node.body
            # The line above, and the lines from the def to the first statement past the docstring.
            reasons = lines[max(first - 2, 0) : first - 1] + lines[node.lineno - 1 : body[0].lineno - 1]
            if any(LONG_REASON.match(line) for line in reasons):
                continue
            found.append(
                Finding(
                    "long-function",
                    tree.where(module.name, node.lineno),
                    f"{node.name} is {length} lines (at most {MAX_FUNCTION_LINES}): split it into named "
                    "steps, or say why it must be long in a `# long:` comment just above it",
                )
            )
    return found


def core_imports_above(tree: Tree) -> list[Finding]:
    """Imports by the core (``ginenv`` but not its agents or experiments) of the layers above it."""
    found = []
    for module in tree.modules.values():
        if not module.inside(CORE) or any(module.inside(layer) for layer in ABOVE_CORE):
            continue
        for imp in module.imports:
            layer = next((x for x in ABOVE_CORE if imp.module == x or imp.module.startswith(x + ".")), None)
            if layer is not None:
                found.append(
                    Finding(
                        "core-imports-above",
                        tree.where(module.name, imp.line),
                        f"the core module {module.name} imports {imp.module} ({layer} sits above the core)",
                    )
                )
    return found


def guessable_random(tree: Tree) -> list[Finding]:
    """Non-cryptographic generators used where secrecy matters (see the module docstring)."""
    found = []
    for module in tree.modules.values():
        if not any(module.inside(m) for m in SECRET_MODULES):
            continue
        why = []
        for imp in module.imports:
            if any(imp.module == m or imp.module.startswith(m + ".") for m in GUESSABLE_MODULES):
                why.append((imp.line, f"imports {imp.module}"))
            elif imp.name in GUESSABLE_NAMES or imp.module.rsplit(".", 1)[-1] in GUESSABLE_NAMES:
                why.append((imp.line, f"imports {imp.name or imp.module}"))
        parsed = ast.parse(module.path.read_text(encoding="utf-8"))
        for node in ast.walk(parsed):
            if isinstance(node, ast.Call):
                name = call_name(node.func)
                if name.startswith(("np.random.", "numpy.random.")) or name.split(".")[-1] in GUESSABLE_NAMES:
                    why.append((node.lineno, f"calls {name}"))
        for line, what in sorted(set(why)):
            found.append(
                Finding(
                    "guessable-random",
                    tree.where(module.name, line),
                    f"{module.name} {what}: where secrecy matters, deal from a DealKey and draw from secrets",
                )
            )
    return found


def unsandboxed_processes(tree: Tree) -> list[Finding]:
    """Programs started outside :data:`PROCESS_STARTERS` (see the module docstring)."""
    found = []
    for module in tree.modules.values():
        if module.name in PROCESS_STARTERS:
            continue
        try:
            parsed = ast.parse(module.path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue  # an unreadable module is its own finding
        for node in ast.walk(parsed):
            if isinstance(node, ast.Call) and STARTING_CALLS.search(call_name(node.func)):
                found.append(
                    Finding(
                        "unsandboxed-process",
                        tree.where(module.name, node.lineno),
                        f"{module.name} calls {call_name(node.func)}: start a program through "
                        "ginenv.agents.sandbox.start, so that it runs in a sandbox",
                    )
                )
    return found


def self_imports(tree: Tree) -> list[Finding]:
    """Scripts that import a top-level module of their own name (see the module docstring)."""
    found = []
    for folder in SCRIPT_FOLDERS:
        for path in sorted((tree.root / folder).rglob("*.py")):
            if SKIPPED_FOLDERS.intersection(path.parts):
                continue
            try:
                parsed = ast.parse(path.read_text(encoding="utf-8"))
            except (SyntaxError, UnicodeDecodeError):
                continue  # a script that does not parse fails where it runs
            # A script is no package: its imports are read as a top-level module's.
            imports = imports_of(parsed, "", set())
            lines = {imp.line for imp in imports if imp.module.split(".")[0] == path.stem}
            for line in sorted(lines):
                found.append(
                    Finding(
                        "self-import",
                        f"{path.relative_to(tree.root)}:{line}",
                        f"the script {path.name} imports {path.stem}, which run as a script is "
                        f"itself: name the file after what it does (e.g. train_{path.stem}.py)",
                    )
                )
    return found


def pyproject_entries(root: Path) -> Iterator[tuple[str, str, str, str]]:
    """``(table, name, module, object)`` of each ``module:object`` entry of :data:`ENTRY_TABLES` in
    the ``pyproject.toml`` of the repository at ``root`` (``object`` is ``""`` for a bare module)."""
    pyproject = root / "pyproject.toml"
    table = ""
    for line in pyproject.read_text(encoding="utf-8").splitlines() if pyproject.is_file() else []:
        header = re.match(r"\s*\[([^\]]+)\]", line)
        if header:
            table = header.group(1).strip()
        elif table.startswith(ENTRY_TABLES):
            entry = re.match(r"\s*([\w.\"'-]+)\s*=\s*[\"']([\w.]+)(?::([\w.]+))?[\"']", line)
            if entry:
                yield table, entry.group(1).strip("\"'"), entry.group(2), entry.group(3) or ""


def entry_modules(root: Path) -> Iterator[str]:
    """The dotted names the entries of the repository at ``root`` name (see ``unreached-module``)."""
    yield from ENTRY_MODULES
    yield from (module for _, _, module, _ in pyproject_entries(root))
    pages = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    records = tuple(root / folder for folder in RECORD_FOLDERS)
    for page in pages:
        if not page.is_file():
            continue
        text = page.read_text(encoding="utf-8")
        yield from re.findall(r"^\s*:::\s+([\w.]+)", text, re.M)
        if not any(page.is_relative_to(folder) for folder in records):
            yield from re.findall(r"python3?\s+-m\s+([\w.]+)", text)


def unreached_modules(tree: Tree) -> list[Finding]:
    """Modules of :data:`REACHED_LAYERS` that no entry reaches by imports (see the module docstring)."""

    def module_of(dotted: str) -> str | None:
        # ``::: ginenv.agents.levels.easy.EasyAgent`` names a class: its longest module prefix.
        return next((m for m in reversed(prefixes(dotted)) if m in tree.modules), None)

    todo = [m for m in map(module_of, entry_modules(tree.root)) if m is not None]
    reached: set[str] = set()
    while todo:
        name = todo.pop()
        if name in reached:
            continue
        reached.add(name)
        ran = [name, *(imp.module for imp in tree.modules[name].imports)]
        todo.extend(m for dotted in ran for m in prefixes(dotted) if m in tree.modules)
        if tree.modules[name].is_package and f"{name}.__main__" in tree.modules:
            todo.append(f"{name}.__main__")
    return [
        Finding(
            "unreached-module",
            tree.where(name, 1),
            f"{name} is imported by no command, agent or documented API: remove it, move it out of the "
            "package (research/), or name it in the API reference",
        )
        for name, module in sorted(tree.modules.items())
        if name not in reached
        and module.alias_of is None
        and any(module.inside(layer) for layer in REACHED_LAYERS)
    ]


def shared_module_names(tree: Tree) -> list[Finding]:
    """Modules that share their last name with another (see the module docstring), one finding each
    beyond the first of its name."""
    by_name: dict[str, list[str]] = {}
    for name, module in sorted(tree.modules.items()):
        last = name.rpartition(".")[2]
        # A package counts as a room too: a module named like a package elsewhere (cli.play beside
        # the play package) is the same two-rooms-one-name a reader trips on.
        if last != "__main__" and module.alias_of is None:
            by_name.setdefault(last, []).append(name)
    for names in by_name.values():
        # The package keeps the name and the module is the one reported: it is the room to rename.
        names.sort(key=lambda name: (not tree.modules[name].is_package, name))
    return [
        Finding(
            "shared-module-name",
            tree.where(name, 1),
            f"{name} shares its name with {', '.join(n for n in names if n != name)}: name each module "
            "after what it holds (an old path may stay as a deprecated alias, ginenv.deprecation)",
        )
        for names in by_name.values()
        if len(names) > 1
        for name in names[1:]
    ]


def layout_names(tree: Tree) -> frozenset[str]:
    """The upper-case names :data:`RECORD_MODULE` assigns at its top level and leaves out of its
    ``__all__``: the hand record's columns and the rule array's entries (none without the module)."""
    module = tree.modules.get(RECORD_MODULE)
    if module is None:
        return frozenset()
    defined: set[str] = set()
    exported: set[str] = set()
    for node in ast.parse(module.path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign):
            names = [n.id for target in node.targets for n in ast.walk(target) if isinstance(n, ast.Name)]
            if names == ["__all__"]:
                exported.update(
                    e.value
                    for e in ast.walk(node.value)
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)
                )
            defined.update(name for name in names if name.isupper())
        elif (
            isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id.isupper()
        ):
            defined.add(node.target.id)
    return frozenset(defined - exported)


def column_reads(parsed: ast.AST, package: str, columns: frozenset[str]) -> Iterator[tuple[int, str]]:
    """``(line, name)`` of each of ``columns`` a parsed module (of ``package``) names: imported from
    :data:`RECORD_MODULE`, or read as an attribute of it under any name an import binds it to
    (``H.HAND0``, ``hand.PHASE``, ``ginenv.kernels.hand.DECK``, ``kernels.hand.BANNED``)."""
    bound: dict[str, str] = {}  # a name the module binds by an import -> the dotted name it stands for
    for node in ast.walk(parsed):
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                bound[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom):
            base = from_base(node, package)
            for alias in node.names:
                if base == RECORD_MODULE and alias.name in columns:
                    yield node.lineno, alias.name
                bound[alias.asname or alias.name] = f"{base}.{alias.name}"
    for node in ast.walk(parsed):
        if isinstance(node, ast.Attribute) and node.attr in columns:
            head, _, rest = call_name(node.value).partition(".")
            if head in bound and ".".join([bound[head], *([rest] if rest else [])]) == RECORD_MODULE:
                yield node.lineno, node.attr


def record_columns(tree: Tree) -> list[Finding]:
    """Names of the hand record's columns outside its module, in the scripts too (see the module
    docstring)."""
    columns = layout_names(tree)
    if not columns:
        return []
    readers = [
        (module.path, module.name if module.is_package else module.name.rpartition(".")[0])
        for module in tree.modules.values()
        if module.name != RECORD_MODULE
    ]
    for folder in SCRIPT_FOLDERS:
        readers += [
            (p, "") for p in sorted((tree.root / folder).rglob("*.py")) if not SKIPPED_FOLDERS & set(p.parts)
        ]
    found = []
    for path, package in readers:
        try:
            parsed = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue  # reported as unreadable, or fails where it runs
        for line, name in sorted(set(column_reads(parsed, package, columns))):
            found.append(
                Finding(
                    "record-columns",
                    f"{path.relative_to(tree.root)}:{line}",
                    f"names the hand record's {name} ({RECORD_MODULE}): read a record through that "
                    "module's functions (phase_of, hand_of, stock_cards, ...), which alone know its layout",
                )
            )
    return found


# ---------------------------------------------------------------------------- entry-point edges


@dataclass(frozen=True)
class EntryEdge:
    """A call of the core into a layer above it through an entry point (the map's dashed arrows).

    ``source``: the core module that reads the entry-point ``group`` (its source spells the group's
    name); ``target``: the module the entry ``name`` points to (``obj`` inside it). The import graph
    has no such edge: the core loads the entry by its name at run time.
    """

    source: str
    target: str
    group: str
    name: str
    obj: str
    kind: str = "entry point"


@dataclass(frozen=True)
class DefaultName:
    """A strategy the core names by default (``opponent="greedy"``): where, and the name."""

    module: str
    line: int
    name: str


def in_core(module: Module) -> bool:
    """Whether a module is the core's (``ginenv``, not its agents or experiments)."""
    return module.inside(CORE) and not any(module.inside(layer) for layer in ABOVE_CORE)


def parse(module: Module) -> ast.Module:
    """A module's syntax tree (empty when it does not parse: that is reported as unreadable)."""
    try:
        return ast.parse(module.path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return ast.Module(body=[], type_ignores=[])


def strings(module: Module) -> set[str]:
    """The string constants of a module's source."""
    return {
        n.value for n in ast.walk(parse(module)) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


def entry_points(root: Path) -> list[tuple[str, str, str, str]]:
    """``(group, name, module, object)`` of every ``[project.entry-points."GROUP"]`` entry of the
    repository at ``root``."""
    prefix = ENTRY_TABLES[-1] + "."
    return [
        (table[len(prefix) :].strip("\"'"), name, module, obj)
        for table, name, module, obj in pyproject_entries(root)
        if table.startswith(prefix)
    ]


def group_readers(tree: Tree, groups: set[str]) -> dict[str, list[str]]:
    """Entry-point group -> the core modules that read it: those whose source spells its name."""
    readers: dict[str, list[str]] = {group: [] for group in groups}
    for module in tree.modules.values():
        if in_core(module):
            for group in sorted(groups & strings(module)):
                readers[group].append(module.name)
    return readers


def entry_edges(tree: Tree) -> list[EntryEdge]:
    """Every entry point the core reads, as an edge from the reading module to the entry's module."""
    points = entry_points(tree.root)
    readers = group_readers(tree, {group for group, *_ in points})
    return [
        EntryEdge(source, module, group, name, obj)
        for group, name, module, obj in points
        for source in readers[group]
    ]


def default_names(tree: Tree) -> list[DefaultName]:
    """The strategies the core names by default (see ``default-strategy``): the string value of a
    parameter's default, a keyword argument or a dict key named by one of :data:`STRATEGY_WORDS`, or
    of a module-level upper-case name ending in one (``DEFAULT_OPPONENT = "greedy"``)."""
    found = set()
    for module in filter(in_core, tree.modules.values()):
        parsed = parse(module)
        values: list[ast.expr] = []
        for node in ast.walk(parsed):
            if isinstance(node, ast.arguments):
                positional = [*node.posonlyargs, *node.args]
                pairs = [*zip(positional[len(positional) - len(node.defaults) :], node.defaults, strict=True)]
                pairs += [
                    (a, d) for a, d in zip(node.kwonlyargs, node.kw_defaults, strict=True) if d is not None
                ]
                values += [default for arg, default in pairs if arg.arg in STRATEGY_WORDS]
            elif isinstance(node, ast.keyword) and node.arg in STRATEGY_WORDS:
                values.append(node.value)
            elif isinstance(node, ast.Dict):
                values += [
                    v
                    for k, v in zip(node.keys, node.values, strict=True)
                    if isinstance(k, ast.Constant) and k.value in STRATEGY_WORDS
                ]
        for node in parsed.body:
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [t.id for t in targets if isinstance(t, ast.Name)]
                if any(name.isupper() and name.lower().endswith(STRATEGY_WORDS) for name in names):
                    values.append(node.value)
        found |= {
            DefaultName(module.name, v.lineno, v.value)
            for v in values
            if isinstance(v, ast.Constant) and isinstance(v.value, str)
        }
    return sorted(found, key=lambda d: (d.module, d.line, d.name))


def reached_in_core(tree: Tree, edges: dict[str, dict[str, int]], start: str) -> set[str]:
    """The core modules ``start`` runs through the core's imports, or names in a ``"module:object"``
    string (Gymnasium's entry points), itself included."""
    reached, todo = set(), [start]
    while todo:
        name = todo.pop()
        if name in reached or name not in tree.modules or not in_core(tree.modules[name]):
            continue
        reached.add(name)
        todo += edges[name]
        todo += [m.group(1) for s in strings(tree.modules[name]) if (m := re.fullmatch(r"([\w.]+):\w+", s))]
    return reached


def resolvable_names(tree: Tree, group: str, readers: list[str]) -> set[str]:
    """The names a default may give that ``group`` resolves: for a factory group
    (:data:`FACTORY_GROUPS`), the names the layers above register (:data:`REGISTERING_CALLS` with a
    literal first argument) or declare in the group the factory reads; for any other group, its
    entries' names and the names its core readers own (module-level upper-case string constants,
    ``RANDOM = "random"``)."""
    points = entry_points(tree.root)
    if group in FACTORY_GROUPS:
        names = {name for g, name, *_ in points if g == FACTORY_GROUPS[group]}
        for module in tree.modules.values():
            if in_core(module):
                continue
            for node in ast.walk(parse(module)):
                if isinstance(node, ast.Call) and call_name(node.func).split(".")[-1] in REGISTERING_CALLS:
                    first = node.args[0] if node.args else None
                    if isinstance(first, ast.Constant) and isinstance(first.value, str):
                        names.add(first.value)
        return names
    names = {name for g, name, *_ in points if g == group}
    for reader in readers:
        for node in parse(tree.modules[reader]).body:
            owned = isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
            if owned and any(isinstance(t, ast.Name) and t.id.isupper() for t in node.targets):
                names.add(node.value.value)
    return {name for name in names if isinstance(name, str)} - {group}


def default_strategies(tree: Tree) -> list[Finding]:
    """Strategies the core names by default that no entry point or core-owned policy resolves (see
    the module docstring)."""
    groups = {group for group, *_ in entry_points(tree.root)} | set(FACTORY_GROUPS)
    readers = group_readers(tree, groups)
    edges = import_edges(tree)
    found = []
    for default in default_names(tree):
        reach = reached_in_core(tree, edges, default.module)
        via = sorted(group for group, modules in readers.items() if reach.intersection(modules))
        where = tree.where(default.module, default.line)
        if not via:
            what = f"names the strategy {default.name!r} by default, but reaches no entry-point group"
            found.append(Finding("default-strategy", where, what + " to resolve it"))
        for group in via:
            known = resolvable_names(tree, group, readers[group])
            if default.name not in known:
                message = (
                    f"names the strategy {default.name!r} by default, resolved through the entry-point group "
                    f"{group!r}, which knows no {default.name!r} (known: {', '.join(sorted(known))}): "
                    "name it in pyproject.toml's entry points, or keep it in the core"
                )
                found.append(Finding("default-strategy", where, message))
    return found


RULES = (
    private_imports,
    import_circles,
    long_files,
    long_functions,
    core_imports_above,
    guessable_random,
    self_imports,
    unreached_modules,
    record_columns,
    unsandboxed_processes,
    default_strategies,
    shared_module_names,
)


def check(root: Path) -> list[Finding]:
    """Every finding of every rule in the repository at ``root`` (empty: the tree passes)."""
    tree = read_tree(root)
    return [*tree.unreadable, *(finding for rule in RULES for finding in rule(tree))]


def main(argv: list[str]) -> int:
    """Check the repository named by ``argv`` (or this file's), print the findings; 1 if any."""
    root = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent
    findings = check(root)
    for finding in findings:
        print(finding)
    rules = (
        "private-import",
        "import-circle",
        "long-file",
        "long-function",
        "core-imports-above",
        "guessable-random",
        "self-import",
        "unreached-module",
        "record-columns",
        "unsandboxed-process",
        "default-strategy",
        "shared-module-name",
    )
    counts = ", ".join(f"{sum(f.rule == rule for f in findings)} {rule}" for rule in rules)
    print(f"{len(findings)} findings ({counts})")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
