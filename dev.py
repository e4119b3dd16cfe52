#!/usr/bin/env python3
"""Bootstrap and task runner: needs nothing but Python 3.10+.

    python3 dev.py run      # the main job: ginenv ladder on the shipped config `ladder` (see README)
    python3 dev.py test     # lint, format check, type check (meanwhile a one-deal ladder fills
                            # numba's cache), then the test suite
    python3 dev.py bench    # the speed benchmarks (installs the OpenSpiel anchor)
    python3 dev.py docs     # the manual (MkDocs, mkdocs.yml) built with --strict into site/,
                            # the notebooks run for their plots (GINENV_DOCS_EXECUTE=false: not)

Each task creates ``.venv`` beside this file on first use and installs the project into it (editable,
with the dev extra; ``docs`` with the docs extra alone, what the manual's build needs). ``test`` also
needs a Chromium for the browser tests of ``ginenv play``: the system's (``chromium`` on the PATH,
or the executable named by ``GINENV_CHROMIUM``), installed with ``apt-get install chromium`` when it
is missing and this runs as root on Debian or Ubuntu; and Node.js (``node``) for the test of the
exec: protocol's Node.js client, installed the same way.
Torch: a CPU wheel found locally (pip's find-links) is installed first so the
open ``torch>=2.2`` requirement does not pull a multi-GB CUDA build; elsewhere pip picks torch as usual.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".dev-stamp"


def sh(*cmd: str | Path, check: bool = True) -> int:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], cwd=ROOT, check=check).returncode


def ensure_env(extras: str = "dev") -> None:
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + extras.encode()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == digest:
        return
    if not PY.exists():
        venv.EnvBuilder(with_pip=True).create(VENV)
    # --no-compile: pip byte-compiles every file it installs (torch, ray, ...: some 40 s of CPU on 2
    # cores); Python writes the byte code of what is imported on first use instead.
    pip: list[str | Path] = [PY, "-m", "pip", "install", "--disable-pip-version-check", "-q", "--no-compile"]
    # A local CPU build of torch, if pip's find-links has one; fails fast (no index) otherwise.
    # --no-deps: its dependencies are not on the local disk; the project install below pulls them
    # from the index while keeping the torch already installed.
    if sh(*pip, "--no-index", "--no-deps", "torch>=2.2", check=False) != 0:
        print("no local torch wheel; pip will choose torch from the index", flush=True)
    sh(*pip, "-e", f".[{extras}]")
    STAMP.write_text(digest)


CHROMIUM_NAMES = ("chromium", "chromium-browser")


def find_chromium() -> str | None:
    """The Chromium the browser tests drive: ``GINENV_CHROMIUM``, else one on the PATH."""
    named = os.environ.get("GINENV_CHROMIUM")
    if named:
        return named
    return next((found for n in CHROMIUM_NAMES if (found := shutil.which(n))), None)


def apt_install(package: str, why: str) -> None:
    """``apt-get install package`` when this runs as root on Debian or Ubuntu (else nothing)."""
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        install = ["apt-get", "install", "-y", "-q", package]
        print("+", " ".join(install), f"({why})", flush=True)
        if subprocess.run(install, env=env).returncode != 0:
            subprocess.run(["apt-get", "update", "-q"], env=env)
            subprocess.run(install, env=env)


def ensure_node() -> None:
    """Node.js runs the reference client of the exec: protocol in its test; installed when missing."""
    if not shutil.which("node"):
        apt_install("nodejs", "the Node.js reference client of the exec: protocol is tested")
    if not shutil.which("node"):
        print("dev.py: no node found; the Node.js client's test will fail. Install Node.js.", flush=True)


def ensure_browser() -> None:
    """Install the system's Chromium for the browser tests when it is missing and apt-get can."""
    if find_chromium():
        return
    apt_install("chromium", "the browser tests drive the system's Chromium")
    if not find_chromium():
        print(
            "dev.py: no Chromium found; the browser tests will fail. Install it (sudo apt-get install "
            "chromium) or set GINENV_CHROMIUM to a Chromium or Chrome executable.",
            flush=True,
        )


#: The commands that fill numba's cache before the tests (``ginenv ...``, started together): a
#: one-deal ladder compiles the engine, every level and the harness; a tiny training run the vector
#: env and its compiled opponents (some 80 s and 50 s of one core, cold). Run side by side with the
#: type check they finish in some 90 s of 2 cores, one after the other in 150 (the few kernels both
#: use are compiled once: numba writes its cache files whole, and a second writer replaces them).
WARM_UP = (
    ("ladder", "--deals", "1", "--workers", "1", "--quiet"),
    ("train", "--config", "ppo", "--total-steps", "512", "--num-envs", "16", "--set", "num_steps=16",
     "--set", "num_minibatches=2", "--set", "eval_every=0", "--set", "hidden=[32,32]", "--quiet"),
)  # fmt: skip


def warm_numba_cache(folder: Path) -> list[subprocess.Popen[bytes]]:
    """Start :data:`WARM_UP` in ``folder``, all at once (their output in ``folder/warm-N.log``), while
    the linters and mypy run: the test workers and the commands they start then load the kernels
    instead of each compiling them at once. Returns the processes."""
    running = []
    for n, args in enumerate(WARM_UP):
        argv = [str(PY), "-m", "ginenv.experiments.cli", *args]
        with (folder / f"warm-{n}.log").open("wb") as log:
            running.append(subprocess.Popen(argv, cwd=folder, stdout=log, stderr=subprocess.STDOUT))
    return running


def keep_byte_code() -> None:
    """Let the test run's processes keep the byte code they compile, outside the checkout.

    The test suite starts hundreds of Python processes (its workers, the commands and servers it
    tests), each importing torch, scipy and the project. Under ``PYTHONDONTWRITEBYTECODE`` each of
    them compiles every one of those sources again: some 4 of the 9 CPU seconds of one play server's
    start on this 2-core machine. The variable's purpose, no ``__pycache__`` folders written in the
    tree, is kept by ``PYTHONPYCACHEPREFIX`` instead: the byte code goes to ``.venv/pycache``."""
    if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
        os.environ.setdefault("PYTHONPYCACHEPREFIX", str(VENV / "pycache"))
        where = os.environ["PYTHONPYCACHEPREFIX"]
        print("+ PYTHONDONTWRITEBYTECODE unset for the tests: byte code goes to", where, flush=True)


def typecheck_tree() -> Path:
    """The installed layout (``ginenv``, ``ginenv.agents``, ``ginenv.experiments``) as links, for mypy.

    The repository keeps ``agents/`` and ``experiments/`` at the top level and setuptools maps them under
    ``ginenv``; mypy does not run import hooks, so it checks this mirror of the installed tree instead.
    """
    tree = VENV / "typecheck"
    if tree.exists():
        shutil.rmtree(tree)
    package = tree / "ginenv"
    package.mkdir(parents=True)
    for source in (ROOT / "ginenv").iterdir():
        # Its modules and its subpackages (ginenv.kernels); caches and data stay out.
        if source.suffix == ".py" or (source / "__init__.py").is_file():
            (package / source.name).symlink_to(source, target_is_directory=source.is_dir())
    for sub in ("agents", "experiments", "configs"):
        (package / sub).symlink_to(ROOT / sub, target_is_directory=True)
    return package


def main(argv: list[str]) -> int:
    task = argv[0] if argv else "help"
    rest = argv[1:]
    if task == "run":
        ensure_env()
        # No arguments: the difficulty ladder with its shipped config (package data, found by name).
        return sh(BIN / "ginenv", *(rest or ["ladder", "--config", "ladder"]), check=False)
    if task == "test":
        ensure_env()
        keep_byte_code()
        ensure_browser()
        ensure_node()
        with tempfile.TemporaryDirectory(prefix="ginenv-warm-") as folder:
            warm_up = " & ".join("ginenv " + " ".join(args) for args in WARM_UP)
            print("+", warm_up, "(in the background: numba's cache)", flush=True)
            running = warm_numba_cache(Path(folder))
            for step in (
                [PY, "-m", "ruff", "check", "."],
                [PY, "-m", "ruff", "format", "--check", "."],
                # research/ is no package of the wheel but imports it: checked with it, as ginenv.
                [PY, "-m", "mypy", typecheck_tree(), ROOT / "research"],
            ):
                if sh(*step, check=False) != 0:
                    for proc in running:
                        proc.kill()
                        proc.wait()
                    return 1
            for n, proc in enumerate(running):
                if proc.wait() != 0:  # the tests will say what is wrong too
                    print((Path(folder) / f"warm-{n}.log").read_text(errors="replace")[-3000:], flush=True)
        # A worker a core: a third worker on 2 cores was measured slower (the first 39% of the tests
        # in 607 s instead of 319; the tests run threads of their own). worksteal: each worker
        # starts with its share of the tests, and one that runs out takes half of what another has
        # not started, so the long tests (started first: tests/conftest.py) never end the run on
        # one worker.
        # --durations: the slowest tests (CI's budget is 15 minutes).
        pytest = [PY, "-m", "pytest", "-n", "auto", "--dist", "worksteal", "--durations=15"]
        return sh(*pytest, *rest, check=False)
    if task == "docs":
        # --strict: a broken link, a missing page or a reference mkdocstrings cannot resolve fails
        # the build. `python3 dev.py docs serve` previews it instead (mkdocs serve).
        ensure_env("docs")  # MkDocs, its plugins and a Jupyter kernel: not the test tools of `dev`
        # Material for MkDocs prints a banner about its successor at every build; this quiets it.
        os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
        # The notebooks are stored without outputs: the manual's build runs them (a few minutes) so
        # their pages show the tables and plots; GINENV_DOCS_EXECUTE=false skips that.
        os.environ.setdefault("GINENV_DOCS_EXECUTE", "true")
        if rest[:1] == ["serve"]:
            return sh(PY, "-m", "mkdocs", "serve", "--strict", *rest[1:], check=False)
        return sh(PY, "-m", "mkdocs", "build", "--strict", *rest, check=False)
    if task == "bench":
        ensure_env("dev,baselines")
        code = 0
        # bench_master.py compares master variants over thousands of hands (tens of minutes) and
        # bench_net_rollouts.py measures what a search with the network could gain: research
        # measurements run by hand, not speed benchmarks.
        for script in sorted((ROOT / "benchmarks").glob("bench_*.py")):
            if script.name in ("bench_master.py", "bench_net_rollouts.py"):
                continue
            code |= sh(PY, script, *rest, check=False)
        return code
    print(__doc__)
    return 0 if task == "help" else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
