"""The install layout, the release files, and a wheel that works from any folder (issues 43 and 54).

``agents/`` and ``experiments/`` install as ``ginenv.agents`` and ``ginenv.experiments``: a research
project's own ``agents`` and ``experiments`` packages neither shadow ginenv's nor are shadowed by them
(two tests, run with the project's environment from such a project folder).

The release is built once for the module with the standard build tool (``python -m build``: the
sdist, then the wheel from the sdist, as a release is built) from a copy of the sources, so that the
checkout's own ``build/`` folder cannot leak stale files into it. The build must print no warning.
The wheel must hold every package (a folder with an ``__init__.py`` under ``ginenv/``, ``agents/``
and ``experiments/``) and every kind of package data under its installed name, the licence and the
metadata (authors, classifiers, the extras, and no project URL while the project has no public
home); the sdist the licence, the changelog, the manual and every tracked file the test suite reads,
so that its tests run, but not the research networks (``research/*.pt``, kept in the repository; the
test that plays them is skipped without them). ``ginenv --version`` prints the version. The last
test installs the wheel, not editable, into a fresh virtual environment in a temporary folder (its
dependencies linked there from the project's environment, not installed again: :func:`fresh`; ``pip
check`` says that they meet the wheel's requirements) and runs the commands a new user runs from an
empty folder, with no PYTHONPATH and the checkout nowhere on ``sys.path``: ``ginenv --version``,
``config show`` and ``list``, ``match greedy random`` twice (the first compiles: it says the
compiling note, naming the installed package's folder, and how long it took; the second says
neither), ``demo``,
``ladder`` and ``rate`` (the shipped ``ladder`` config, 2 deals), ``match neural master_prior``,
``train --config ppo`` (a few hundred steps) and ``play`` (the page and an API endpoint fetched, then
stopped). Last, it unpacks the sdist and runs a sample of its tests (:data:`SAMPLE`: the core, the
agents, the experiments, the research code) with ``python -m pytest`` from there against that
installed wheel, which the sdist's own ``ginenv/`` (without ``ginenv.agents``) must not shadow, with
pytest and hypothesis installed but no extra: the module that needs the sb3 extra is skipped saying
so. It takes 2 to 4 minutes on 2 cores, most of it numba compiling the kernels once into the fresh
install (the first ``match``, then ``ladder`` and ``train``).
"""

from __future__ import annotations

import email
import email.message
import fnmatch
import importlib.metadata
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import urllib.request
import venv
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from ginenv.experiments.cli import main
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from ginenv import __version__, compiling

ROOT = Path(__file__).resolve().parents[1]
#: The release's build and the installed wheel's commands: minutes (tests/conftest.py starts them first).
pytestmark = pytest.mark.long
#: Repository folder -> its installed package (setup.py maps the same three roots).
ROOTS = {
    "ginenv": "ginenv",
    "agents": "ginenv/agents",
    "experiments": "ginenv/experiments",
    "configs": "ginenv/configs",
}
SHIPPED_CONFIGS = ("ladder", "ladder_big", "master_ppo", "neural", "ppo")
LADDER_AGENTS = ["random", "easy", "normal", "hard", "neural", "expert", "master"]
#: Never copied into the build: environments, caches, build and run outputs, the VCS.
NOT_SOURCES = (
    ".git", ".venv", "build", "dist", "site", "runs", "results", "__pycache__", "*.pyc", "*.egg-info",
    ".ipynb_checkpoints", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis",
)  # fmt: skip
#: Tracked files that are not part of the source release (CI's entry point, the VCS's own file).
NOT_IN_SDIST = (".ci/run", ".gitignore")
#: Tracked files kept in the repository only, as patterns: the research networks (13 MB that no shipped
#: agent, command or config reads; the one test that plays them is skipped where they are absent).
ONLY_IN_REPOSITORY = ("research/*.pt",)
#: How the compiling note begins (its folder follows).
NOTE_START = compiling.NOTE.partition("{where}")[0]
#: The extras of pyproject.toml; ``dev`` is their union plus the test tools.
EXTRAS = {"sb3", "ray", "torchrl", "rllib", "tianshou", "baselines", "docs", "play-load"}
#: The sample of the suite run from the unpacked sdist against the installed wheel: the core, the
#: agents, the experiments, the research code (from the sdist's root: it is not installed), the
#: extras' mechanism, and a module that needs an extra the fresh environment lacks. Tests whose
#: first run compiles a kernel in worker processes are left out: the sample takes seconds.
SAMPLE = (
    "tests/ginenv/test_cards.py",
    "tests/agents/test_specs.py",
    "tests/experiments/test_config_loader.py",
    "--deselect",
    "tests/experiments/test_config_loader.py::test_workers_receive_the_checked_config_not_a_dict_to_parse_again",
    "tests/research/test_worlds.py::test_rollout_of_sampled_worlds_and_bad_worlds",
    "tests/support/test_extras.py",
    "tests/experiments/train/test_sb3.py",
)
#: What the sample needs beside the wheel: the test runner and the property-test library.
SAMPLE_TOOLS = ("pytest>=8", "hypothesis>=6.100")


@dataclass(frozen=True)
class Release:
    """What ``python -m build`` made: the sdist, the wheel and what the build printed."""

    sdist: Path
    wheel: Path
    output: str


def tracked_files(untracked: bool = False) -> list[str] | None:
    """The checkout's files that git tracks (and, with ``untracked``, those it would: not ignored) and
    that exist; None outside a git checkout (an unpacked sdist)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", *(["-co", "--exclude-standard"] if untracked else [])],
            cwd=ROOT, capture_output=True, text=True, check=True, timeout=60,
        ).stdout  # fmt: skip
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired):
        return None
    return [name for name in listed.split("\0") if name and (ROOT / name).is_file()]


def copy_sources(dest: Path) -> None:
    """The checkout's sources into ``dest``: git's files in a git checkout (new ones not yet committed
    included, as the tests run them), else every file but the build and run outputs
    (:data:`NOT_SOURCES`)."""
    files = tracked_files(untracked=True)
    if files is None:
        shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns(*NOT_SOURCES), symlinks=True)
        return
    for name in files:
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target, follow_symlinks=False)


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Release:
    """``python -m build`` (the sdist, then the wheel from it) on a clean copy of the sources."""
    tmp = tmp_path_factory.mktemp("release")
    src = tmp / "src"
    copy_sources(src)
    dist = tmp / "dist"
    # PYTHONDONTWRITEBYTECODE makes setuptools say that byte-compiling is disabled: a note about the
    # environment, not about the package, so the build runs without it.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(src)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (sdist,) = dist.glob("ginenv-*.tar.gz")
    (wheel,) = dist.glob("ginenv-*.whl")
    return Release(sdist, wheel, done.stdout + done.stderr)


def metadata(text: bytes) -> email.message.Message:
    """Core metadata (a wheel's METADATA, an sdist's PKG-INFO) as a message of headers."""
    return email.message_from_bytes(text)


def expected_packages() -> set[str]:
    """Every package folder of the repository, as its path inside the wheel."""
    found = set()
    for folder, installed in ROOTS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder).as_posix()
            found.add(installed if relative == "." else f"{installed}/{relative}")
    return found


def test_the_build_prints_no_warning(release: Release) -> None:
    # Setuptools' own words for a package left out (``Package ... is absent from the `packages`
    # configuration``), a MANIFEST.in line that matches nothing, a deprecated setting.
    warnings = [line for line in release.output.splitlines() if re.search(r"warn", line, re.IGNORECASE)]
    assert warnings == [], "\n".join(warnings)


def test_the_wheel_holds_every_package_and_the_package_data(release: Release) -> None:
    names = set(zipfile.ZipFile(release.wheel).namelist())
    packages = {n.removesuffix("/__init__.py") for n in names if n.endswith("/__init__.py")}
    expected = expected_packages()
    # The subpackages that exist today, so that a broken search cannot pass by finding nothing.
    assert {"ginenv", "ginenv/kernels", "ginenv/agents/levels", "ginenv/experiments/play"} <= expected
    assert packages == expected, (
        f"missing: {sorted(expected - packages)}, extra: {sorted(packages - expected)}"
    )
    # Nothing installs as a top-level agents or experiments package, nor the research code
    # (research/: in the sdist, for its tests, never in the wheel).
    assert {n.split("/")[0] for n in names} == {"ginenv", f"ginenv-{__version__}.dist-info"}
    data = {
        *(f"ginenv/configs/{c}.yaml" for c in SHIPPED_CONFIGS),
        "ginenv/agents/neural/data/neural.pt",
        "ginenv/agents/clients/random_client.js",
        "ginenv/experiments/eval/data/luck_value.json",
        "ginenv/experiments/eval/data/ladder_ratings.json",
        "ginenv/experiments/play/static/index.html",
        "ginenv/experiments/play/static/app.js",
    }
    assert data <= names, sorted(data - names)


def test_the_wheel_and_the_sdist_carry_the_licence_and_the_metadata(release: Release) -> None:
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License") and "The ginenv developers" in licence
    dist_info = f"ginenv-{__version__}.dist-info"
    with zipfile.ZipFile(release.wheel) as wheel:
        assert wheel.read(f"{dist_info}/licenses/LICENSE").decode("utf-8") == licence
        wheel_meta = metadata(wheel.read(f"{dist_info}/METADATA"))
    top = release.sdist.name.removesuffix(".tar.gz")
    with tarfile.open(release.sdist) as sdist:
        assert sdist.extractfile(f"{top}/LICENSE").read().decode("utf-8") == licence  # type: ignore[union-attr]
        sdist_meta = metadata(sdist.extractfile(f"{top}/PKG-INFO").read())  # type: ignore[union-attr]
    for meta in (wheel_meta, sdist_meta):
        assert meta["Version"] == __version__
        assert meta["License-Expression"] == "MIT" and meta.get_all("License-File") == ["LICENSE"]
        assert meta["Author"] == "The ginenv developers"
        classifiers = meta.get_all("Classifier") or []
        assert "Programming Language :: Python :: 3" in classifiers
        assert any(c.startswith("Development Status ::") for c in classifiers)
        # No project URL until the project has a public home that resolves (tests/test_release.py).
        assert meta.get_all("Project-URL") is None and meta["Home-page"] is None
        assert set(meta.get_all("Provides-Extra") or []) == {*EXTRAS, "dev"}
        # dev is the union of the extras (CI installs dev and so keeps everything).
        (union,) = (r for r in meta.get_all("Requires-Dist") or [] if r.startswith("ginenv["))
        assert set(union.split("[", 1)[1].split("]", 1)[0].split(",")) == EXTRAS
        assert union.endswith('extra == "dev"')


def test_the_sdist_holds_the_manual_and_what_its_tests_read(release: Release) -> None:
    top = release.sdist.name.removesuffix(".tar.gz")
    with tarfile.open(release.sdist) as sdist:
        names = {n.removeprefix(f"{top}/") for n in sdist.getnames()}
    shipped = {
        "LICENSE", "CHANGELOG.md", "README.md", "mkdocs.yml", "pyproject.toml", "setup.py",
        "tests/ginenv/test_cards.py", "tests/ginenv/reference.py", "tests/agents/neural/test_search.py",
        "docs/index.md", "docs/versioning.md", "docs/_hooks/installed_layout.py",
        "notebooks/01_quick_start.ipynb", "benchmarks/bench_play_load.py", "tools/archcheck.py",
        "research/priors.py", "research/README.md", "research/__init__.py", "research/bc.py",
        "tests/research/test_bc.py",
    }  # fmt: skip
    assert shipped <= names, sorted(shipped - names)
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    # The research networks stay in the repository: the sdist holds no network but the shipped one.
    assert sorted(n for n in names if n.endswith(".pt")) == ["agents/neural/data/neural.pt"]
    # Every file git tracks is in the sdist (MANIFEST.in names the kinds of file it takes).
    files = tracked_files()
    if files is None:
        pytest.skip("not a git checkout: the sdist's own contents cannot be compared with git's")
    kept_out = {f for f in files if any(fnmatch.fnmatch(f, pattern) for pattern in ONLY_IN_REPOSITORY)}
    assert "research/dr_n3.pt" in kept_out  # the patterns match what they are meant to
    missing = sorted(set(files) - names - set(NOT_IN_SDIST) - kept_out)
    assert not missing, f"not in the sdist (add their kind to MANIFEST.in): {missing}"


def test_ginenv_version_prints_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--version"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out == f"ginenv {__version__}\n"
    # One version: the installed metadata reads ginenv.__version__.
    assert importlib.metadata.version("ginenv") == __version__


def requirement_closure(requirements: list[str]) -> dict[str, importlib.metadata.Distribution]:
    """The distributions of this interpreter's environment that ``requirements`` need, theirs, and so
    on (markers evaluated for this Python, with the extras that each requirement names), by name."""
    found: dict[str, importlib.metadata.Distribution] = {}
    seen: set[tuple[str, str]] = set()
    todo = [(text, "") for text in requirements]
    while todo:
        text, extra = todo.pop()
        wanted = Requirement(text)
        if wanted.marker is not None and not wanted.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(wanted.name)
        for asked in ("", *sorted(wanted.extras)):
            if (name, asked) in seen:
                continue
            seen.add((name, asked))
            found[name] = importlib.metadata.distribution(wanted.name)
            todo.extend((needed, asked) for needed in found[name].requires or [])
    return found


def link_distributions(dists: dict[str, importlib.metadata.Distribution], site: Path) -> None:
    """Each distribution's top-level entries (its packages, modules and ``.dist-info``, as its RECORD
    lists them) linked into the ``site`` folder: importable there and seen by ``importlib.metadata``
    and pip as installed, with nothing copied."""
    for name, dist in dists.items():
        assert dist.files, f"{name}: no RECORD to link its files from"
        # "..": its scripts in bin/; __pycache__: a top-level module's byte code, remade at need.
        tops = {f.parts[0] for f in dist.files if f.parts[0] not in ("..", "__pycache__")}
        for top in sorted(tops):
            link = site / top
            if not os.path.lexists(link):  # a namespace folder (google/) may be shared: linked once
                link.symlink_to(Path(str(dist.locate_file(top))), target_is_directory=True)


@pytest.fixture
def fresh(release: Release, tmp_path: Path):  # type: ignore[no-untyped-def]
    """A fresh virtual environment outside the checkout with only the wheel, its dependencies and the
    test tools of the sdist's sample (:data:`SAMPLE_TOOLS`) installed; yields (its bin folder, the
    environment for commands, an empty working folder).

    The dependencies are this interpreter's own installed distributions, linked into the new
    environment's site-packages (:func:`link_distributions`) rather than installed again by pip from
    its cache (a minute and a half, and 1.5 GB to write and remove, on 2 cores): exactly those the
    wheel's metadata requires (no extra), and those of pytest and hypothesis, so that the sb3 extra is
    missing there as from a user's install. The wheel itself is installed by pip, not editable,
    without dependencies; ``pip check`` then says that every installed requirement is met. Nothing
    but that wheel may be installed there: pip replacing a linked distribution would delete the
    project environment's files through the link."""
    wheel = release.wheel
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / ("python.exe" if os.name == "nt" else "python")
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "PYTHONSAFEPATH")
    }
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            env=clean, capture_output=True, text=True, check=True,
        ).stdout.strip()
    )  # fmt: skip
    assert site.is_relative_to(env_dir), site
    with zipfile.ZipFile(wheel) as archive:
        (meta_name,) = (n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        requires = metadata(archive.read(meta_name)).get_all("Requires-Dist") or []
    needed = requirement_closure([*requires, *SAMPLE_TOOLS, "pip"])
    # The wheel's core dependencies are all there; no extra's package is (the sample's skip needs it).
    assert {"numpy", "numba", "torch", "pytest", "hypothesis"} <= set(needed)
    assert not {"ginenv", "stable-baselines3", "sb3-contrib", "pytest-xdist"} & set(needed)
    link_distributions(needed, site)
    pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
    done = subprocess.run(
        [*pip, "install", "-q", "--no-deps", "--no-index", str(wheel)],
        env=clean, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    # The wheel's declared requirements (and every linked distribution's) are met by what is there.
    checked = subprocess.run([*pip, "check"], env=clean, capture_output=True, text=True, timeout=600)
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-3000:]
    work = tmp_path / "empty"
    work.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    run_env = {**clean, "PATH": f"{bin_dir}{os.pathsep}{clean.get('PATH', '')}", "HOME": str(home)}
    run_env["PYTHONNOUSERSITE"] = "1"
    yield bin_dir, run_env, work
    shutil.rmtree(env_dir, ignore_errors=True)  # links are removed, never followed


def run_the_sdists_sample(release: Release, bin_dir: Path, env: dict[str, str], tmp_path: Path) -> float:
    """:data:`SAMPLE` run by ``python -m pytest`` from the unpacked sdist with the fresh environment's
    Python, which has the wheel (not editable) and the test tools (:func:`fresh`): it passes, and
    test_sb3 is skipped naming the sb3 extra. Returns the seconds the run took."""
    python = str(bin_dir / "python")
    with tarfile.open(release.sdist) as sdist:
        # The "data" filter (no links out, no absolute paths) where this Python has it.
        sdist.extractall(tmp_path, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    source = tmp_path / release.sdist.name.removesuffix(".tar.gz")
    # `python -m pytest` from the unpacked sdist puts its root, whose ginenv/ has no ginenv.agents,
    # first on sys.path: tests/conftest.py lets the installed wheel win. Outside CI, so that a
    # missing extra is a skip that names it.
    outside_ci = {k: v for k, v in env.items() if k != "CI"}
    started = time.perf_counter()
    done = subprocess.run(
        [python, "-m", "pytest", "-p", "no:cacheprovider", "-rs", *SAMPLE],
        cwd=source, env=outside_ci, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    summary = out.strip().splitlines()[-1]
    assert re.match(r"\d+ passed, 1 skipped, 1 deselected[ ,]", summary), out[-4000:]
    assert "needs the sb3 extra: pip install '.[sb3]' (not installed: stable_baselines3, sb3_contrib)" in out
    return seconds


def test_the_installed_wheel_runs_from_an_empty_folder(release: Release, fresh, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bin_dir, env, work = fresh
    ginenv = str(bin_dir / "ginenv")
    timings: dict[str, float] = {}

    def completed(*argv: str, label: str = "") -> subprocess.CompletedProcess[str]:
        started = time.perf_counter()
        done = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=600)
        timings[label or " ".join([Path(argv[0]).name, *argv[1:3]])[:32]] = time.perf_counter() - started
        assert done.returncode == 0, f"{argv}: {done.stdout[-2000:]}{done.stderr[-3000:]}"
        assert "Traceback" not in done.stderr, done.stderr[-3000:]
        return done

    def run(*argv: str) -> str:
        return completed(*argv).stdout

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

    assert run(ginenv, "--version") == f"ginenv {__version__}\n"
    assert run(ginenv, "config", "show", "ppo") == (ROOT / "configs" / "ppo.yaml").read_text()
    # The recipe's configs start from files only a checkout's research code makes: the list says so.
    listed = " ".join(run(ginenv, "config", "list").split())
    assert (
        "needs runs/expert_bc.pt, not in this folder: " in listed and "needs runs/master_clone.pt" in listed
    )

    # The first command of a fresh install compiles: it names its folder, says the note (naming the
    # installed package's cache folder) before the compilation the first deal waits on, then how long
    # it took, and --json's stdout holds the one JSON object only; a second run says neither.
    def match(out: str) -> list[str]:
        args = ("match", "greedy", "random", "--hands", "2", "--json", "--no-plots", "--out", str(work / out))
        done = completed(ginenv, *args, label=f"match greedy random {out}")
        result = json.loads(done.stdout)
        assert result["results"] == str(work / out) and result["hands_played"] == 2
        return done.stderr.splitlines()

    lines = match("first")
    assert lines[0] == f"ginenv: writing results to {work / 'first'}{os.sep}"
    assert lines[1].startswith(NOTE_START + str(bin_dir.parent)), lines
    assert compiling.is_note(lines[2]) and len(lines) == 3, lines
    assert match("second") == [f"ginenv: writing results to {work / 'second'}{os.sep}"]
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

    # Last, the numba cache filled by the commands: the sdist's tests against this installed wheel.
    timings["the sdist's tests"] = run_the_sdists_sample(release, bin_dir, env, tmp_path)
    print("seconds per command:", {k: round(v, 1) for k, v in timings.items()})


def test_user_agents_and_experiments_packages_do_not_collide(tmp_path: Path) -> None:
    for name in ("agents", "experiments", "configs"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f"OWNER = 'user {name}'\n")
    script = (
        "import agents, experiments, configs\n"
        "from ginenv import agents as ginenv_agents\n"
        "from ginenv.experiments import cli\n"
        "from ginenv.experiments.config_loader import shipped_configs\n"
        "print(agents.OWNER, '|', experiments.OWNER, '|', configs.OWNER)\n"
        "print(type(ginenv_agents.make('greedy')).__name__, '|', cli.main.__module__)\n"
        "print('ladder' in shipped_configs())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == [
        "user agents | user experiments | user configs",
        "GreedyAgent | ginenv.experiments.cli",
        "True",
    ]


def test_no_top_level_agents_or_experiments_is_installed(tmp_path: Path) -> None:
    # From an empty folder, the bare names must not resolve to ginenv's folders.
    script = (
        "import importlib.util\n"
        "print(*(importlib.util.find_spec(n) for n in ('agents', 'experiments', 'configs')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "None None None"
