"""The install layout, and a wheel that works from any folder (issue 43).

``agents/`` and ``experiments/`` install as ``ginenv.agents`` and ``ginenv.experiments``: a research
project's own ``agents`` and ``experiments`` packages neither shadow ginenv's nor are shadowed by them
(the first two tests, run with the project's environment from such a project folder).

The wheel is built with the standard build tool (``python -m build --wheel``) from a copy of the
sources, so that the checkout's own ``build/`` folder cannot leak stale files into it. One test reads
the wheel: every package (a folder with an ``__init__.py`` under ``ginenv/``, ``agents/`` and
``experiments/``) and every kind of package data is in it under its installed name. The other installs
it, not editable, into a fresh virtual environment in a temporary folder and runs the commands a new
user runs from an empty folder, with no PYTHONPATH and the checkout nowhere on ``sys.path``:
``ginenv config show``, ``demo``, ``ladder`` and ``rate`` (the shipped ``ladder`` config, 2 deals),
``match neural master_prior``, ``train --config ppo`` (a few hundred steps) and ``play`` (the page
and an API endpoint fetched, then stopped). It takes about 3 minutes on 2 cores, most of it pip
installing the dependencies from its cache and numba compiling the kernels once.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Repository folder -> its installed package (setup.py maps the same three roots).
ROOTS = {"ginenv": "ginenv", "agents": "ginenv/agents", "experiments": "ginenv/experiments"}
#: What the build reads: the metadata, the package discovery and the three package folders.
SOURCES = ("pyproject.toml", "setup.py", "README.md", *ROOTS)
SHIPPED_CONFIGS = ("ladder", "ladder_big", "master_ppo", "neural", "ppo")
LADDER_AGENTS = ["random", "easy", "normal", "hard", "neural", "expert", "master"]


def build_wheel(tmp: Path) -> Path:
    """``python -m build --wheel`` on a clean copy of the sources; the wheel's path."""
    src = tmp / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", ".ipynb_checkpoints")
    for name in SOURCES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, src / name, ignore=ignore)
        else:
            shutil.copy2(source, src / name)
    dist = tmp / "dist"
    done = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(src)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,) = dist.glob("ginenv-*.whl")
    return wheel


def expected_packages() -> set[str]:
    """Every package folder of the repository, as its path inside the wheel."""
    found = set()
    for folder, installed in ROOTS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder).as_posix()
            found.add(installed if relative == "." else f"{installed}/{relative}")
    return found


def test_the_wheel_holds_every_package_and_the_package_data(tmp_path: Path) -> None:
    names = set(zipfile.ZipFile(build_wheel(tmp_path)).namelist())
    packages = {n.removesuffix("/__init__.py") for n in names if n.endswith("/__init__.py")}
    expected = expected_packages()
    # The subpackages that exist today, so that a broken search cannot pass by finding nothing.
    assert {"ginenv", "ginenv/kernels", "ginenv/agents/levels", "ginenv/experiments/play"} <= expected
    assert packages == expected, (
        f"missing: {sorted(expected - packages)}, extra: {sorted(packages - expected)}"
    )
    # Nothing installs as a top-level agents or experiments package.
    assert {n.split("/")[0] for n in names} == {"ginenv", "ginenv-0.1.0.dist-info"}
    data = {
        *(f"ginenv/experiments/configs/{c}.yaml" for c in SHIPPED_CONFIGS),
        "ginenv/agents/neural/data/neural.pt",
        "ginenv/agents/clients/random_client.js",
        "ginenv/experiments/eval/data/luck_value.json",
        "ginenv/experiments/play/static/index.html",
        "ginenv/experiments/play/static/app.js",
    }
    assert data <= names, sorted(data - names)


@pytest.fixture
def fresh(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A fresh virtual environment outside the checkout with only the wheel (and its dependencies)
    installed; yields (its bin folder, the environment for commands, an empty working folder)."""
    wheel = build_wheel(tmp_path)
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / ("python.exe" if os.name == "nt" else "python")
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "PYTHONSAFEPATH")
    }
    pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    # As dev.py does: a local CPU torch first (pip's find-links), so the open torch requirement does
    # not pull a CUDA build; elsewhere pip picks torch from the index with the wheel.
    subprocess.run([*pip, "--no-index", "--no-deps", "torch>=2.2"], env=clean, capture_output=True)
    done = subprocess.run([*pip, str(wheel)], env=clean, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    work = tmp_path / "empty"
    work.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    run_env = {**clean, "PATH": f"{bin_dir}{os.pathsep}{clean.get('PATH', '')}", "HOME": str(home)}
    run_env["PYTHONNOUSERSITE"] = "1"
    yield bin_dir, run_env, work
    shutil.rmtree(env_dir, ignore_errors=True)  # 1.5 GB: not kept among pytest's last three runs


def test_the_installed_wheel_runs_from_an_empty_folder(fresh) -> None:  # type: ignore[no-untyped-def]
    bin_dir, env, work = fresh
    ginenv = str(bin_dir / "ginenv")
    timings: dict[str, float] = {}

    def run(*argv: str, timeout: float = 600) -> str:
        started = time.perf_counter()
        done = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=timeout)
        timings[" ".join([Path(argv[0]).name, *argv[1:3]])[:32]] = time.perf_counter() - started
        assert done.returncode == 0, f"{argv}: {done.stdout[-2000:]}{done.stderr[-3000:]}"
        assert "Traceback" not in done.stderr, done.stderr[-3000:]
        return done.stdout

    # The package comes from the fresh environment, never from the checkout.
    where = json.loads(
        run(
            str(bin_dir / "python"),
            "-c",
            "import json, sys, importlib.util as u, ginenv.kernels, ginenv.agents, ginenv.experiments; "
            "print(json.dumps({'file': ginenv.__file__, 'path': sys.path, "
            "'top': [u.find_spec(n) is not None for n in ('agents', 'experiments')]}))",
        )
    )
    assert Path(where["file"]).is_relative_to(bin_dir.parent)
    assert not any(p and Path(p).resolve().is_relative_to(ROOT) for p in where["path"])
    assert where["top"] == [False, False]
    assert os.listdir(work) == []

    assert run(ginenv, "config", "show", "ppo") == (ROOT / "experiments" / "configs" / "ppo.yaml").read_text()
    assert "result:" in run(ginenv, "demo")

    run(ginenv, "ladder", "--deals", "2", "--workers", "2", "--quiet")
    (summary,) = work.glob("results/ladder-*/summary.json")
    ladder = json.loads(summary.read_text())
    assert ladder["config"]["agents"] == LADDER_AGENTS and ladder["config"]["deals"] == 2
    rated = json.loads(run(ginenv, "rate", "greedy", "--deals", "2", "--workers", "2", "--json"))
    assert rated["agent"] == "greedy" and len(rated["margins"]) == len(LADDER_AGENTS)
    matched = json.loads(
        run(ginenv, "match", "neural", "master_prior", "--hands", "2", "--workers", "1", "--json")
    )
    assert matched["agents"] == ["neural", "master_prior"] and matched["hands_played"] == 2

    run(
        ginenv, "train", "--config", "ppo", "--total-steps", "512", "--num-envs", "16",
        "--set", "num_steps=16", "--set", "num_minibatches=2", "--set", "eval_every=0",
        "--set", "hidden=[32,32]", "--set", "card_hidden=8", "--quiet",
    )  # fmt: skip
    (checkpoint,) = work.glob("runs/ppo__1__*/checkpoints/latest.pt")
    assert checkpoint.stat().st_size > 0

    started = time.perf_counter()
    server = subprocess.Popen(
        [ginenv, "play", "--no-browser", "--port", "0", "--replay-dir", "replays", "--state-dir", "tables"],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        found = re.search(r" at (http://\S+)", line)
        assert found, line + (server.stderr.read() if server.poll() is not None and server.stderr else "")
        url = found.group(1).rstrip("/")
        with urllib.request.urlopen(url + "/", timeout=30) as page:
            assert page.status == 200 and "<html" in page.read().decode().lower()
        with urllib.request.urlopen(url + "/api/options", timeout=30) as api:
            assert api.status == 200 and isinstance(json.loads(api.read()), dict)
    finally:
        server.send_signal(signal.SIGTERM)
        out, err = server.communicate(timeout=60)
    timings["play"] = time.perf_counter() - started
    assert server.returncode == 0, err[-3000:]
    assert "ginenv play: stopped" in out and "Traceback" not in err
    print("seconds per command:", {k: round(v, 1) for k, v in timings.items()})


def test_user_agents_and_experiments_packages_do_not_collide(tmp_path: Path) -> None:
    for name in ("agents", "experiments"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f"OWNER = 'user {name}'\n")
    script = (
        "import agents, experiments\n"
        "from ginenv import agents as ginenv_agents\n"
        "from ginenv.experiments import cli\n"
        "print(agents.OWNER, '|', experiments.OWNER)\n"
        "print(type(ginenv_agents.make('greedy')).__name__, '|', cli.main.__module__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == ["user agents | user experiments", "GreedyAgent | ginenv.experiments.cli"]


def test_no_top_level_agents_or_experiments_is_installed(tmp_path: Path) -> None:
    # From an empty folder, the bare names must not resolve to ginenv's folders.
    script = (
        "import importlib.util\n"
        "print(importlib.util.find_spec('agents'), importlib.util.find_spec('experiments'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "None None"
