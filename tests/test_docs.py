"""The manual (``mkdocs.yml``, ``docs/``): it builds with ``--strict``, and the code it shows runs.

A broken link, a page missing from the nav's targets or a docstring mkdocstrings cannot render fails
the strict build; the Python blocks of the tutorial and how-to pages are executed as a reader would
paste them, and the agent of "Bring your own agent" (``docs/examples/my_agent.py``) is checked to read
its own hand correctly and to play legal moves through the harness.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from extras import needs_extra
from ginenv.experiments.eval.harness import EvalConfig, evaluate
from ginenv.experiments.eval.report import summarise

from ginenv import agents, gin_rummy_v0
from ginenv.observation import decode

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
EXAMPLE = DOCS / "examples" / "my_agent.py"
#: Pages whose every ```python block runs, in order, in one namespace per page.
RUNNABLE_PAGES = (
    "getting-started.md",
    "environments.md",
    "agents.md",
    "benchmarking.md",
    "your-agent.md",
    "reference/index.md",
)
#: Most headings one API reference page may have (the longest, Training, shows the ~60 fields of Args).
MAX_REFERENCE_HEADINGS = 80
#: A ``::: identifier`` block of a reference page and its indented options.
DIRECTIVE = re.compile(r"^::: (\S+)\n((?:    .*\n)*)", re.MULTILINE)
#: Public names a module's ``__all__`` does not list yet (it lists only names kept for old imports).
NOT_IN_ALL = {"ginenv.experiments.eval.harness": {"evaluate"}}
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
SNIPPET = re.compile(r'^--8<-- "([^"]+)"$', re.MULTILINE)


def python_blocks(page: str) -> list[str]:
    """The ```python blocks of a page, with pymdownx.snippets lines replaced by the files they name."""
    text = (DOCS / page).read_text(encoding="utf-8")
    return [
        SNIPPET.sub(lambda m: (DOCS / m.group(1)).read_text(encoding="utf-8"), b) for b in FENCE.findall(text)
    ]


def test_site_builds_strict(tmp_path: Path) -> None:
    needs_extra("docs", "mkdocs", "material", "mkdocstrings", "mkdocs_jupyter")
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    # The API reference is generated from the docstrings, agents and experiments included.
    observation = (site / "reference" / "observation" / "index.html").read_text(encoding="utf-8")
    assert "SeatView" in observation and "Read an observation vector" in observation
    harness = (site / "reference" / "harness" / "index.html").read_text(encoding="utf-8")
    assert "ginenv.experiments.eval.harness" in harness and "EvalConfig" in harness
    # A #: comment documents an attribute (LadderFile.deals); no Sphinx role is printed as text.
    assert "Duplicate deals per pairing." in harness
    for page in (site / "reference").glob("*/index.html"):
        assert ":func:" not in page.read_text(encoding="utf-8"), page
    # The reference shows the public API, a page per object: no page is a whole module's dump (the
    # environments page had 123 headings and the agents page 222), and internals stay out.
    for built in (site / "reference").glob("*/index.html"):
        headings = re.findall(r"<h[1-6][ >]", built.read_text(encoding="utf-8"))
        assert len(headings) <= MAX_REFERENCE_HEADINGS, (built, len(headings))
    assert 'id="ginenv.experiments.eval.harness.MAX_WORKERS"' not in harness
    # The Gymnasium ids have their env card.
    guide = (site / "environments" / "index.html").read_text(encoding="utf-8")
    assert 'id="gymnasium-env-card"' in guide and "ginenv/GinRummyBatched-v0" in guide
    # The notebooks are rendered pages, their code included.
    quick = (site / "notebooks" / "01_quick_start" / "index.html").read_text(encoding="utf-8")
    assert "gin_rummy_v0" in quick
    # The example agent is shown from its tested file, not from a copy.
    page = (site / "your-agent" / "index.html").read_text(encoding="utf-8")
    assert "best_after_discard" in page


@pytest.mark.parametrize("page", RUNNABLE_PAGES)
def test_page_code_runs(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = python_blocks(page)
    assert blocks, f"{page} shows no python block"
    monkeypatch.chdir(tmp_path)  # anything a block writes lands here
    namespace: dict[str, object] = {"__name__": "docs_example"}
    for number, block in enumerate(blocks, 1):
        try:
            exec(compile(block, f"{page} block {number}", "exec"), namespace)
        except Exception as error:  # pragma: no cover - the message names the failing block
            pytest.fail(f"{page}, python block {number} raised {error!r}:\n{block}")


def test_docstring_extension_reads_roles_and_comments() -> None:
    needs_extra("docs", "griffe")  # the extension is a Griffe extension (mkdocstrings' loader)
    spec = importlib.util.spec_from_file_location(
        "sphinx_docstrings", DOCS / "_hooks" / "sphinx_docstrings.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.strip_roles("see :func:`decode` and :py:class:`~ginenv.rules.Rules`.") == (
        "see `decode` and `ginenv.rules.Rules`."
    )
    assert (
        module.strip_roles("reads like a score sheet::\n\n    {}\n")
        == "reads like a score sheet:\n\n    {}\n"
    )
    lines = ["x = 1", "#: The first line", "#: and the second.", "y: int = 2", "z = 3"]
    assert module.comment_doc(lines, 4) == "The first line\nand the second."
    assert module.comment_doc(lines, 5) is None


def test_example_agent_reads_its_own_hand() -> None:
    me = agents.make(f"{EXAMPLE}:DeadwoodAgent", seed=0)
    other = agents.make("normal", seed=1)
    env = gin_rummy_v0.env()
    decisions = 0
    for seed in range(6):
        env.reset(seed=seed)
        seats = {"player_0": me, "player_1": other}
        for player in (me, other):
            player.reset(seed)
        for seat in env.agent_iter():
            obs, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            if seats[seat] is me:
                view = decode(obs["observation"])
                assert view.hand == env.unwrapped.hand.hands[0]
                decisions += 1
            action = seats[seat].act(obs)
            assert obs["action_mask"][action] == 1
            env.step(action)
    assert decisions > 50


def test_example_agent_beats_random_in_the_harness(tmp_path: Path) -> None:
    spec = f"{EXAMPLE}:DeadwoodAgent"
    cfg = EvalConfig(agents=(spec, "random"), deals=10, seed=0)
    records = evaluate(cfg, tmp_path / "run", workers=1, progress=False)
    summary = summarise(records, cfg.agents)
    (pair,) = summary["pairs"]
    margin = pair["points_per_hand"]["mean"] * (1 if pair["a"] == spec else -1)
    assert summary["games"] == 20
    assert margin > 10, summary["pairs"]
    assert np.isfinite(margin)


def test_reference_pages_name_public_members_only() -> None:
    """Every module a reference page renders lists its members, each one public: in the module's
    ``__all__`` where it has one, never a private name; mkdocstrings would otherwise show the whole
    module, internals included."""
    import importlib
    import types

    import yaml

    rendered = 0
    for page in sorted((DOCS / "reference").glob("*.md")):
        for ident, block in DIRECTIVE.findall(page.read_text(encoding="utf-8")):
            options = (yaml.safe_load("\n".join(line[4:] for line in block.splitlines())) or {}).get(
                "options", {}
            )
            try:
                obj = importlib.import_module(ident)
            except ModuleNotFoundError:
                module, name = ident.rsplit(".", 1)
                obj = getattr(importlib.import_module(module), name)
            rendered += 1
            if not isinstance(obj, types.ModuleType):
                continue  # one class or function: its page is that object
            assert "members" in options, f"{page.name}: ::: {ident} renders the whole module"
            public = getattr(obj, "__all__", None)
            for member in options["members"] or []:
                assert hasattr(obj, member), f"{page.name}: {ident} has no {member}"
                assert not member.startswith("_"), f"{page.name}: {ident}.{member} is private"
                if public is not None and member not in NOT_IN_ALL.get(ident, set()):
                    assert member in public, f"{page.name}: {ident}.{member} is not in its __all__"
    assert rendered > 20
