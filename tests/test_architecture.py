"""The project's architecture check (tools/archcheck.py): the repository passes it, and each rule
finds what breaks it in a small tree written for the test."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "tools" / "archcheck.py"


def load_checker() -> ModuleType:
    """tools/archcheck.py as a module (tools/ is not a package: the check is a script)."""
    spec = importlib.util.spec_from_file_location("archcheck", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


archcheck = load_checker()


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """A repository at ``root`` holding ``files`` (path -> text); every package folder of the three
    roots gets an empty ``__init__.py`` unless ``files`` gives one."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for folder in ("ginenv", "agents", "experiments"):
        (root / folder).mkdir(exist_ok=True)
        for sub in [root / folder, *(p for p in (root / folder).rglob("*") if p.is_dir())]:
            if any(sub.glob("*.py")) and not (sub / "__init__.py").exists():
                (sub / "__init__.py").write_text("", encoding="utf-8")
    return root


def findings(root: Path, rule: str) -> list[str]:
    """The findings of one rule in the tree at ``root``, as the script prints them, sorted."""
    return sorted(str(f) for f in archcheck.check(root) if f.rule == rule)


# ---------------------------------------------------------------------------- the repository


def test_the_repository_passes() -> None:
    found = archcheck.check(REPO)
    assert found == [], "\n".join(map(str, found))


def test_the_repository_is_read_whole() -> None:
    """The check sees the packages as they install (not an empty or partial tree)."""
    tree = archcheck.read_tree(REPO)
    for name in (
        "ginenv",
        "ginenv.kernels.hand",
        "ginenv.agents.neural.policy_file",
        "ginenv.experiments.cli",
    ):
        assert name in tree.modules
    assert REPO / "experiments" / "play" / "static" / "app.js" in tree.sources
    edges = archcheck.import_edges(tree)
    assert "ginenv.agents.base" in edges["ginenv.agents.levels.master"]
    # Lazy: the registry builds the shipped network's agent inside a function.
    assert "ginenv.agents.neural" in edges["ginenv.agents"]


def test_the_script_exits_0_on_the_repository_and_1_on_a_finding(tmp_path: Path) -> None:
    ok = subprocess.run([sys.executable, SCRIPT, REPO], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.startswith("0 findings")
    bad = write_tree(
        tmp_path, {"ginenv/a.py": "from ginenv.b import _hidden\n", "ginenv/b.py": "_hidden = 1\n"}
    )
    run = subprocess.run([sys.executable, SCRIPT, bad], capture_output=True, text=True)
    assert run.returncode == 1
    assert (
        run.stdout.splitlines()[0] == "private-import: ginenv/a.py:1: ginenv.a imports _hidden from ginenv.b"
    )
    assert run.stdout.splitlines()[-1].startswith("1 findings (1 private-import,")


# ---------------------------------------------------------------------------- private imports


def test_a_private_name_of_another_module_is_found(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "ginenv/cards.py": "_TABLE = {}\n__version__ = '1'\n",
            "ginenv/melds.py": "import os\n\n\ndef f():\n    from .cards import _TABLE\n",
            "agents/levels/easy.py": "from ginenv.cards import __version__\n"
            "from ginenv.cards import _TABLE as T\n",
        },
    )
    assert findings(tmp_path, "private-import") == [
        "private-import: agents/levels/easy.py:2: ginenv.agents.levels.easy imports _TABLE from ginenv.cards",
        "private-import: ginenv/melds.py:5: ginenv.melds imports _TABLE from ginenv.cards",
    ]


def test_a_private_submodule_belongs_to_its_package(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "ginenv/kernels/_impl.py": "X = 1\n",
            "ginenv/kernels/__init__.py": "from ginenv.kernels._impl import X\n",
            "ginenv/kernels/hand.py": "from . import _impl\n",
            "ginenv/engine.py": "import ginenv.kernels._impl\n",
        },
    )
    assert findings(tmp_path, "private-import") == [
        "private-import: ginenv/engine.py:1: "
        "ginenv.engine imports ginenv.kernels._impl, private to ginenv.kernels"
    ]


def test_private_names_of_other_packages_are_not_judged(tmp_path: Path) -> None:
    write_tree(tmp_path, {"ginenv/a.py": "from numpy._core import _x\n"})
    assert findings(tmp_path, "private-import") == []


# ---------------------------------------------------------------------------- import circles


def test_two_modules_importing_each_other_are_a_circle(tmp_path: Path) -> None:
    write_tree(tmp_path, {"ginenv/a.py": "import ginenv.b\n", "ginenv/b.py": "\n\nfrom ginenv import a\n"})
    assert findings(tmp_path, "import-circle") == [
        "import-circle: ginenv/a.py:1: ginenv.a (line 1) -> ginenv.b (line 3) -> ginenv.a"
    ]


def test_a_lazy_import_closes_a_circle(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "ginenv/a.py": "from ginenv.b import B\n",
            "ginenv/b.py": "from ginenv.c import C\nB = 1\n",
            "ginenv/c.py": "C = 1\n\n\ndef later():\n    from ginenv.a import thing\n",
        },
    )
    assert findings(tmp_path, "import-circle") == [
        "import-circle: ginenv/a.py:1: "
        "ginenv.a (line 1) -> ginenv.b (line 1) -> ginenv.c (line 5) -> ginenv.a"
    ]


def test_import_module_with_a_literal_name_is_an_import(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "ginenv/a.py": "import importlib\n\n\ndef f():\n    return importlib.import_module('ginenv.b')\n",
            "ginenv/b.py": "from ginenv.a import f\n",
        },
    )
    assert len(findings(tmp_path, "import-circle")) == 1


def test_a_package_init_edge_closes_a_circle(tmp_path: Path) -> None:
    """sibling -> package -> sibling: the core's lazy import of the agents package runs its
    ``__init__``, which imports the agent that imports the core module."""
    write_tree(
        tmp_path,
        {
            "ginenv/wrappers.py": "class RandomPolicy: ...\n\n\ndef opponent():\n    import ginenv.agents\n",
            "agents/__init__.py": "from ginenv.agents.baselines.random_agent import RandomAgent\n",
            "agents/baselines/random_agent.py": "from ginenv.wrappers import RandomPolicy\n",
        },
    )
    assert findings(tmp_path, "import-circle") == [
        "import-circle: agents/__init__.py:1: ginenv.agents (line 1) -> "
        "ginenv.agents.baselines.random_agent (line 1) -> ginenv.wrappers (line 5) -> ginenv.agents"
    ]


def test_importing_a_submodule_runs_the_packages_it_passes_through(tmp_path: Path) -> None:
    """``from ginenv.pkg.leaf import x`` runs ``ginenv/pkg/__init__.py``: an edge to it."""
    write_tree(
        tmp_path,
        {
            "ginenv/a.py": "from ginenv.pkg.leaf import x\n",
            "ginenv/pkg/__init__.py": "from ginenv.a import y\n",
            "ginenv/pkg/leaf.py": "x = 1\n",
        },
    )
    assert findings(tmp_path, "import-circle") == [
        "import-circle: ginenv/a.py:1: ginenv.a (line 1) -> ginenv.pkg (line 1) -> ginenv.a"
    ]


def test_a_module_importing_its_own_package_is_no_circle(tmp_path: Path) -> None:
    """The package's ``__init__`` is already running when its submodule is imported; a name taken
    from a package that does not import the module back is no circle either."""
    write_tree(
        tmp_path,
        {
            "agents/__init__.py": "from ginenv.agents.levels.master import Master\nSHIPPED = 1\n",
            "agents/levels/master.py": "from ginenv import agents\nfrom ginenv.agents.base import A\n",
            "agents/base.py": "A = 1\n",
            "agents/neural/agent.py": "from ginenv.agents import SHIPPED\n",
        },
    )
    assert findings(tmp_path, "import-circle") == []


def test_a_name_taken_from_a_package_that_imports_the_module_back_is_a_circle(tmp_path: Path) -> None:
    """The package must have defined the name before its submodule runs: the registry building the
    network agent lazily while the agent reads the registry's constant is a circle."""
    write_tree(
        tmp_path,
        {
            "agents/__init__.py": "SHIPPED = 1\n\n\ndef neural():\n"
            "    from ginenv.agents.neural import play\n",
            "agents/neural/__init__.py": "from ginenv.agents.neural.agent import play\n",
            "agents/neural/agent.py": "from ginenv.agents import SHIPPED\n",
        },
    )
    assert findings(tmp_path, "import-circle") == [
        "import-circle: agents/__init__.py:5: ginenv.agents (line 5) -> ginenv.agents.neural (line 1) "
        "-> ginenv.agents.neural.agent (line 1) -> ginenv.agents"
    ]


def test_a_circle_is_shown_once_with_the_rest_of_its_group(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "ginenv/a.py": "import ginenv.b\nimport ginenv.c\n",
            "ginenv/b.py": "import ginenv.a\n",
            "ginenv/c.py": "import ginenv.a\n",
        },
    )
    assert findings(tmp_path, "import-circle") == [
        "import-circle: ginenv/a.py:1: ginenv.a (line 1) -> ginenv.b (line 1) -> ginenv.a; "
        "the group also holds ginenv.c"
    ]


# ---------------------------------------------------------------------------- long files


def test_a_source_file_over_800_lines_is_found(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "ginenv/fits.py": "x = 1\n" * 800,
            "agents/long.py": "x = 1\n" * 801,
            "experiments/play/static/app.js": "let x = 1;\n" * 900,
            "experiments/play/static/ok.js": "let x = 1;\n" * 800,
            "experiments/play/static/notes.txt": "words\n" * 2000,
            "tests/test_long.py": "x = 1\n" * 2000,
        },
    )
    assert findings(tmp_path, "long-file") == [
        "long-file: agents/long.py:801: 801 lines (at most 800)",
        "long-file: experiments/play/static/app.js:900: 900 lines (at most 800)",
    ]


def function(name: str, lines: int, head: str = "", top: str = "") -> str:
    """A function ``name`` of ``lines`` lines: ``head`` above its def, a docstring, ``top`` after it."""
    body = [f'    """{name}."""', *([top] if top else [])]
    body += ["    x = 1"] * (lines - 1 - len(body))
    return "".join(f"{line}\n" for line in [*([head] if head else []), f"def {name}() -> None:", *body])


def test_a_long_function_where_readers_follow_steps_is_found_unless_it_says_why(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "experiments/train/loop.py": function("fits", 80) + function("long", 81),
            "experiments/eval/why.py": function("above", 90, head="# long: one table of cases")
            + function("inside", 90, top="    # long: the steps share twenty locals"),
            "experiments/play/silent.py": function("bare", 90, head="# long:")
            + "@property\n"
            + function("decorated", 80),
            "experiments/cli/free.py": function("elsewhere", 200),
            "experiments/eval/broken.py": "def broken(:\n",
            "agents/free.py": function("elsewhere", 200),
        },
    )
    assert findings(tmp_path, "long-function") == [
        "long-function: experiments/play/silent.py:2: bare is 90 lines (at most 80): split it into named "
        "steps, or say why it must be long in a `# long:` comment just above it",
        "long-function: experiments/play/silent.py:93: decorated is 81 lines (at most 80): split it into "
        "named steps, or say why it must be long in a `# long:` comment just above it",
        "long-function: experiments/train/loop.py:81: long is 81 lines (at most 80): split it into named "
        "steps, or say why it must be long in a `# long:` comment just above it",
    ]


# ---------------------------------------------------------------------------- the core stays below


def test_the_core_importing_agents_or_experiments_is_found(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "ginenv/wrappers.py": "def opponent(spec):\n    from ginenv.agents import make\n",
            "ginenv/kernels/hand.py": "import importlib\n\n"
            "CLI = importlib.import_module('ginenv.experiments.cli')\n",
            "agents/__init__.py": "def make(spec): ...\n",
            "agents/arena.py": "from ginenv.wrappers import opponent\n",
            "experiments/cli.py": "from ginenv.agents import make\nfrom ginenv.kernels import hand\n",
        },
    )
    assert findings(tmp_path, "core-imports-above") == [
        "core-imports-above: ginenv/kernels/hand.py:3: the core module ginenv.kernels.hand imports "
        "ginenv.experiments.cli (ginenv.experiments sits above the core)",
        "core-imports-above: ginenv/wrappers.py:2: the core module ginenv.wrappers imports "
        "ginenv.agents (ginenv.agents sits above the core)",
    ]


@pytest.mark.parametrize("statement", ["from .. import agents", "from ginenv import experiments"])
def test_the_core_reaching_up_through_its_own_package_is_found(tmp_path: Path, statement: str) -> None:
    write_tree(
        tmp_path,
        {
            "ginenv/kernels/hand.py": f"{statement}\n",
            "agents/__init__.py": "",
            "experiments/__init__.py": "",
        },
    )
    assert len(findings(tmp_path, "core-imports-above")) == 1


def test_a_file_that_does_not_parse_is_reported(tmp_path: Path) -> None:
    write_tree(tmp_path, {"ginenv/broken.py": "def f(:\n"})
    found = archcheck.check(tmp_path)
    assert [f.rule for f in found] == ["unreadable"]
    assert found[0].where == "ginenv/broken.py:1"


def test_a_guessable_generator_where_secrecy_matters_is_found(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "experiments/play/table.py": "import random\n\nSEED = random.getrandbits(31)\n",
            "experiments/play/store.py": "import numpy as np\n\nKEY = np.random.default_rng().integers(9)\n",
            "experiments/play/deal.py": "from ginenv.agents.arena import deal_seed\n",
            "experiments/play/ok.py": "import secrets\n\nTOKEN = secrets.token_urlsafe(24)\n",
            "experiments/eval/harness.py": "import random\n",  # research seeds: allowed here
            "ginenv/secret_deals.py": "from numpy.random import default_rng\n",
        },
    )
    found = findings(tmp_path, "guessable-random")
    assert [f.split(": ")[1] for f in found] == [
        "experiments/play/deal.py:1",
        "experiments/play/store.py:3",
        "experiments/play/table.py:1",
        "ginenv/secret_deals.py:1",
    ]
    assert "imports random" in found[2] and "calls np.random.default_rng" in found[1]


def test_a_program_started_outside_the_sandbox_is_found(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "agents/external.py": "import subprocess\n\nproc = subprocess.Popen(['client'])\n",
            "agents/helper.py": "import os\n\ndef f():\n    os.execv('/bin/sh', ['sh'])\n",
            "experiments/eval/units.py": "import subprocess\n\nx: subprocess.Popen[str] | None = None\n",
            "ginenv/tool.py": "import subprocess\n\nsubprocess.run(['ls'], check=True)\n",
            "agents/sandbox.py": "import subprocess\n\nsubprocess.Popen(['launcher'])\n",  # the one starter
        },
    )
    found = findings(tmp_path, "unsandboxed-process")
    assert [f.split(": ")[1] for f in found] == [
        "agents/external.py:3",
        "agents/helper.py:4",
        "ginenv/tool.py:3",
    ]
    assert "calls subprocess.Popen: start a program through ginenv.agents.sandbox.start" in found[0]


def test_a_script_named_after_a_module_it_imports_is_found(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "docs/recipes/torchrl.py": "import sys\n\nimport torchrl.envs\n",
            "docs/recipes/tianshou.py": "from tianshou.env import PettingZooEnv\n",
            "docs/recipes/train_rllib.py": "import ray\nfrom ray import rllib\n",  # named apart: fine
            "benchmarks/numpy.py": "def f():\n    import numpy as np\n",  # a lazy import counts too
            "benchmarks/bench_common.py": "",
            "benchmarks/bench_env.py": "import bench_common\n",  # a sibling helper, not itself
        },
    )
    found = findings(tmp_path, "self-import")
    assert [f.split(": ")[1] for f in found] == [
        "benchmarks/numpy.py:2",
        "docs/recipes/tianshou.py:1",
        "docs/recipes/torchrl.py:3",
    ]
    assert "train_torchrl.py" in found[2]


# ---------------------------------------------------------------------------- the record's columns


def test_a_column_of_the_hand_record_named_outside_its_module_is_found(tmp_path: Path) -> None:
    """In every module but the record's own (the rest of the core included) and in the scripts, a
    column (an upper-case name the record's module does not export) is found under any name the
    module is bound to; its exports, its enum and functions, the record's module itself and the
    tests are not."""
    write_tree(
        tmp_path,
        {
            "ginenv/kernels/hand.py": "HAND0, PHASE = 0, 1\nRECORD_SIZE: int = 2\nDEAD = -1\n"
            "__all__ = ['DEAD', 'RECORD_SIZE', 'Phase', 'hand_of']\n\n\n"
            "class Phase:\n    DRAW = 2\n\n\ndef hand_of(s, i, seat):\n    return s[i, HAND0 + seat]\n",
            "ginenv/vector.py": "from ginenv.kernels import hand as H\n\nX = H.PHASE\nY = H.mover(X, 0)\n",
            "ginenv/kernels/loops.py": "from . import hand\nfrom .hand import PHASE, RECORD_SIZE\n\n\n"
            "def f(s):\n    s[0, hand.HAND0] = 0\n    return RECORD_SIZE - s[0, PHASE]\n",
            "agents/levels/hard.py": "from ginenv.kernels import hand as H\n\n\n"
            "def f(s):\n    return s[0, H.PHASE], H.RECORD_SIZE, H.hand_of(s, 0, 0), H.Phase.DRAW, H.DEAD\n",
            "agents/levels/other.py": "import ginenv.kernels.hand\nfrom ginenv import kernels\n\n"
            "A = ginenv.kernels.hand.HAND0\nB = kernels.hand.PHASE\n",
            "agents/levels/relative.py": "from ...kernels import hand as K\n\nC = K.HAND0\n",
            "experiments/eval/luck.py": "from ginenv.kernels.hand import DEAD, Phase\n"
            "from ginenv.kernels.hand import HAND0 as H0\n",
            "research/worlds.py": "from ginenv.kernels import hand\n\nN = hand.HAND0\n",
            "tests/test_hand.py": "from ginenv.kernels import hand as H\n\nN = H.HAND0\n",  # tests: free
        },
    )
    found = findings(tmp_path, "record-columns")
    assert [f.split(": ")[1] + " " + f.split("record's ")[1].split()[0] for f in found] == [
        "agents/levels/hard.py:5 PHASE",
        "agents/levels/other.py:4 HAND0",
        "agents/levels/other.py:5 PHASE",
        "agents/levels/relative.py:3 HAND0",
        "experiments/eval/luck.py:2 HAND0",
        "ginenv/kernels/loops.py:2 PHASE",
        "ginenv/kernels/loops.py:6 HAND0",
        "ginenv/vector.py:3 PHASE",
        "research/worlds.py:3 HAND0",
    ]
    assert "through that module's functions" in found[0]


# ---------------------------------------------------------------------------- unreached modules


def test_a_module_no_entry_reaches_is_found(tmp_path: Path) -> None:
    """Entries: pyproject's scripts and entry points, the agents package, the API reference and the
    manual's ``python -m`` commands; what they import, lazily too, is reached, and so are the
    packages it runs and a reached package's ``__main__``. The reports' commands are no entries."""
    write_tree(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "ginenv"\n\n'
            '[project.scripts]\nginenv = "ginenv.experiments.cli:main"\n'
            '\n[project.entry-points."ginenv.agent_factory"]\nginenv = "ginenv.agents.specs:make"\n'
            '\n[tool.setuptools.package-data]\n"ginenv.experiments.data" = ["*.json"]\n',
            "docs/reference/luck.md": "# Luck\n\n::: ginenv.experiments.eval.luck.deal_delta\n",
            "docs/clients.md": "Run `python -m\n  ginenv.agents.clients.client` as a player.\n",
            "docs/reports/old.md": "`python -m ginenv.experiments.train.bc record`\n",
            "agents/__init__.py": "from ginenv.agents.base import Agent\n",
            "agents/base.py": "Agent = object\n",
            "agents/specs.py": "def make():\n    from ginenv.agents.neural.agent import play\n",
            "agents/neural/agent.py": "play = 1\n",
            "agents/neural/worlds.py": "import numpy\n",  # an orphan
            "agents/clients/client.py": "import sys\n",
            "experiments/cli/__init__.py": "from ginenv.experiments.cli import run\n",
            "experiments/cli/run.py": "import importlib\n\n"
            "importlib.import_module('ginenv.experiments.eval.rate')\n",
            "experiments/cli/__main__.py": "from ginenv.experiments.cli import main\n",
            "experiments/eval/rate.py": "",
            "experiments/eval/luck.py": "def deal_delta(): ...\n",
            "experiments/data/__init__.py": "",  # named only as package data
            "experiments/train/bc.py": "",  # only a report runs it
            "ginenv/unused.py": "",  # the core is not judged
        },
    )
    found = findings(tmp_path, "unreached-module")
    assert [f.split(": ")[1] for f in found] == [
        "agents/neural/worlds.py:1",
        "experiments/data/__init__.py:1",
        "experiments/train/__init__.py:1",
        "experiments/train/bc.py:1",
    ]
    assert "ginenv.agents.neural.worlds is imported by no command, agent or documented API" in found[0]


# ---------------------------------------------------------------------------- entry-point edges and defaults

ENTRY_POINTS = (
    '[project]\nname = "ginenv"\n\n'
    '[project.entry-points."ginenv.agent_factory"]\nginenv = "ginenv.agents:make"\n\n'
    '[project.entry-points."ginenv.compiled_policies"]\ngreedy = "ginenv.agents.baselines.greedy:act"\n'
)


def test_the_repository_s_entry_points_are_edges_from_the_core_upward() -> None:
    """The core's readers of each group (wrappers: the agent factory; the policy table: the compiled
    opponents) point at what pyproject names, and the core's defaults are found where they are."""
    tree = archcheck.read_tree(REPO)
    edges = {(e.source, e.group, e.name) for e in archcheck.entry_edges(tree)}
    assert ("ginenv.wrappers", "ginenv.agent_factory", "ginenv") in edges
    assert ("ginenv.kernels.policies", "ginenv.compiled_policies", "greedy") in edges
    assert all(
        e.kind == "entry point" and e.target.startswith("ginenv.agents") for e in archcheck.entry_edges(tree)
    )
    defaults = {(d.module, d.name) for d in archcheck.default_names(tree)}
    assert {
        ("ginenv.wrappers", "normal"),
        ("ginenv.vector_env", "greedy"),
        ("ginenv.vector", "greedy"),
    } <= defaults


def test_a_default_strategy_no_entry_point_resolves_is_found(tmp_path: Path) -> None:
    """A default resolves through every group whose reader its module reaches (imports, and
    ``"module:object"`` strings): to the group's entries or the reader's own constants, or, for the
    agent factory, to a name the agents layer registers."""
    write_tree(
        tmp_path,
        {
            "pyproject.toml": ENTRY_POINTS,
            "ginenv/kernels/policies.py": 'GROUP = "ginenv.compiled_policies"\nRANDOM = "random"\n',
            "ginenv/vector.py": "from ginenv.kernels.policies import RANDOM\n\n\n"
            'def step(policy="greedy", other="mine"):\n    return run(opponent="random")\n\n\n'
            'def play(*, opponent="master"):\n    ...\n',
            "ginenv/wrappers.py": 'GROUP = "ginenv.agent_factory"\nDEFAULT_OPPONENT = "normal"\n'
            'BAD_OPPONENT = "hard"\n',
            "ginenv/__init__.py": 'SPECS = {"a": {"entry_point": "ginenv.wrappers:Env",'
            ' "opponent": "greedy"}}\n',
            "ginenv/render.py": 'def show(policy="normal"):\n    ...\n',  # reaches no reader
            "agents/__init__.py": 'register_builtin("normal", object)\nregistry.register("greedy", object)\n',
        },
    )
    found = findings(tmp_path, "default-strategy")
    assert [f.split(": ")[1] + " " + f.split("'")[1] for f in found] == [
        "ginenv/render.py:1 normal",
        "ginenv/vector.py:8 master",
        "ginenv/wrappers.py:3 hard",
    ]
    assert "through the entry-point group 'ginenv.compiled_policies'" in found[1]
    assert "(known: greedy, random)" in found[1]
    assert "(known: greedy, normal)" in found[2]
    assert "reaches no entry-point group" in found[0]


def test_a_deprecated_alias_is_no_unreached_module(tmp_path: Path) -> None:
    """An old path kept for users' code (``__deprecated_alias__``) is imported by nothing of the
    package, and is no finding; a module that merely mentions the name is still judged."""
    write_tree(
        tmp_path,
        {
            "agents/__init__.py": "",
            "agents/levels/kernels.py": "from ginenv.agents.levels.compiled import *  # noqa: F403\n\n"
            '__deprecated_alias__ = "ginenv.agents.levels.compiled"\n',
            "agents/levels/compiled.py": "",  # named in the API reference below
            "agents/levels/orphan.py": 'def f():\n    __deprecated_alias__ = "not at the top"\n',
            "docs/reference/levels.md": "::: ginenv.agents.levels.compiled\n",
        },
    )
    tree = archcheck.read_tree(tmp_path)
    assert tree.modules["ginenv.agents.levels.kernels"].alias_of == "ginenv.agents.levels.compiled"
    assert tree.modules["ginenv.agents.levels.orphan"].alias_of is None
    found = findings(tmp_path, "unreached-module")
    assert [f.split(": ")[1] for f in found] == ["agents/levels/orphan.py:1"]


# ---------------------------------------------------------------------------- shared module names


def test_modules_and_packages_that_share_a_name_are_found_but_not_aliases(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "ginenv/melds.py": "",
            "ginenv/kernels/melds.py": "",
            "experiments/config.py": "",
            "experiments/eval/config.py": "",
            "experiments/train/config.py": "",  # three of one name: a finding for each but the first
            "experiments/cli/__main__.py": "",  # __main__ and __init__ are names Python gives
            "agents/clients/__main__.py": "",
            "ginenv/kernels/__init__.py": "",
            "agents/kernels.py": "",  # a module named like a package: the module is the one to rename
            "agents/levels/melds.py": '__deprecated_alias__ = "ginenv.agents.levels.meld_search"\n',
            "agents/levels/meld_search.py": "",
        },
    )
    found = findings(tmp_path, "shared-module-name")
    assert [f.split(": ")[1] for f in found] == [
        "agents/kernels.py:1",
        "experiments/eval/config.py:1",
        "experiments/train/config.py:1",
        "ginenv/melds.py:1",
    ]
    assert found[1].startswith(
        "shared-module-name: experiments/eval/config.py:1: ginenv.experiments.eval.config shares its "
        "name with ginenv.experiments.config, ginenv.experiments.train.config: name each module after "
        "what it holds"
    )
    assert "ginenv.agents.kernels shares its name with ginenv.kernels:" in found[0]
    assert "ginenv.melds shares its name with ginenv.kernels.melds:" in found[3]
