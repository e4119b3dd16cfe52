"""What the release claims: only what exists (the package metadata, the manual, the changelog).

The project has no public home yet and the package is on no package index, so nothing may point a
reader at one: no project URL in the metadata or the manual's header, no address of a repository,
site or tag that does not resolve, and no install command by the package's name
(``pip install ginenv``, ``"ginenv[sb3]"``), which would fetch someone else's package or fail. The
install commands shown work from what a user has: a checkout (``pip install ".[sb3]"``) or a wheel
file, whose name in the manual carries the version it is built with. The version and the changelog
agree: a development version (``0.2.0.dev0``) heads the changelog as ``0.2.0 - unreleased``, a
released one as ``X.Y.Z - YYYY-MM-DD`` (docs/versioning.md, "Between releases").
"""

from __future__ import annotations

import re
from pathlib import Path

from packaging.version import Version

from ginenv import __version__

ROOT = Path(__file__).resolve().parents[1]
#: Where the release speaks to users: the README, the manual (pages and the scripts it includes), the
#: notebooks, the changelog, and the sources whose help texts and error messages name commands.
TEXTS = ("README.md", "CHANGELOG.md", "docs/**/*.md", "docs/**/*.py", "notebooks/*.ipynb", "notebooks/*.md")
SOURCES = ("ginenv/**/*.py", "agents/**/*.py", "experiments/**/*.py", "configs/*.yaml")
#: Addresses of the project's own that do not exist: a repository, a docs site, an index page, a tag.
OWN_ADDRESS = re.compile(
    r"github\.com/ginenv|ginenv\.github\.io|ginenv\.readthedocs|pypi\.org/project/ginenv|releases/tag/v"
)
#: The package installed by its name, with or without extras and options: a package-index form.
BY_NAME = re.compile(r"""pip install\s+(?:-\S+\s+)*["']?ginenv(?![\w/-])|["']ginenv\[[\w,-]+\]["']""")
#: A wheel file named in the manual: its version must be the package's.
WHEEL = re.compile(r"ginenv-([^-\s\"'`]+)-py3-none-any\.whl")
#: A changelog version heading: ``## 0.2.0 - unreleased`` or ``## 0.1.0 - 2026-12-06``.
HEADING = re.compile(r"^## (\S+) - (unreleased|\d{4}-\d{2}-\d{2})$", re.MULTILINE)


def release_texts(*patterns: str) -> dict[str, str]:
    """The text of every file the patterns match, by its path from the repository root."""
    return {
        path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
        for pattern in patterns
        for path in sorted(ROOT.glob(pattern))
        if path.is_file()
    }


def findings(pattern: re.Pattern[str], texts: dict[str, str]) -> list[str]:
    """``path:line: text`` of every line of ``texts`` that ``pattern`` matches."""
    return [
        f"{name}:{number}: {line.strip()}"
        for name, text in texts.items()
        for number, line in enumerate(text.splitlines(), 1)
        if pattern.search(line)
    ]


def test_the_patterns_catch_what_they_are_for() -> None:
    # A pattern that matched nothing would pass every test below.
    for claim in (
        'pip install "ginenv[sb3]"',
        "pip install ginenv",
        "pip install -U ginenv[ray]",
        "(pip install 'ginenv[dev]')",
        "install ginenv (pip install ginenv, or ...)",
    ):
        assert BY_NAME.search(claim), claim
    for fine in (
        'pip install ".[sb3]"',
        'pip install "dist/ginenv-0.2.0.dev0-py3-none-any.whl[sb3]"',
        "ginenv[dev]",
    ):
        assert not BY_NAME.search(fine), fine
    assert OWN_ADDRESS.search("https://github.com/ginenv/ginenv/issues")
    assert OWN_ADDRESS.search("[0.1.0]: https://example.org/releases/tag/v0.1.0")
    assert not OWN_ADDRESS.search("https://github.com/google-deepmind/open_spiel")
    assert release_texts(*TEXTS).keys() >= {"README.md", "docs/training.md", "docs/recipes/train_sb3.py"}


def test_the_metadata_and_the_manual_name_no_address_that_does_not_exist() -> None:
    # Read as lines, not parsed: tomllib is Python 3.11's, and the project supports 3.10.
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "[project]" in pyproject and not re.search(r"^\[project\.urls\]", pyproject, re.MULTILINE)
    assert re.search(r'^dynamic = \["version"\]$', pyproject, re.MULTILINE)
    mkdocs = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    # mkdocs.yml's !!python tags are not plain YAML: its top-level keys are read as lines.
    assert not re.search(r"^(repo_url|repo_name|edit_uri|site_url):", mkdocs, re.MULTILINE)
    found = findings(OWN_ADDRESS, {**release_texts(*TEXTS, *SOURCES), "mkdocs.yml": mkdocs})
    assert not found, "\n".join(found)


def test_no_install_command_names_the_package_on_an_index() -> None:
    found = findings(BY_NAME, release_texts(*TEXTS, *SOURCES))
    assert not found, "the package is on no index; install from a checkout or a wheel file:\n" + "\n".join(
        found
    )


def test_every_wheel_file_the_manual_names_is_this_version() -> None:
    texts = release_texts(*TEXTS)
    named = {(name, found) for name, text in texts.items() for found in WHEEL.findall(text)}
    assert ("docs/getting-started.md", __version__) in named  # the install page shows the wheel
    assert {version for _, version in named} == {__version__}, sorted(named)


def test_the_version_and_the_changelogs_top_heading_agree() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = HEADING.findall(changelog)
    # Every version heading has that form, newest first, and no other level-2 heading exists.
    assert len(headings) == len(re.findall(r"^## ", changelog, re.MULTILINE)) >= 2
    versions = [Version(v) for v, _ in headings]
    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions)
    assert "unreleased" not in [when for _, when in headings[1:]]
    (top, when), version = headings[0], Version(__version__)
    if version.is_devrelease:
        # A wheel built between releases is the next version's pre-release, never a released number.
        assert (top, when) == (version.base_version, "unreleased")
    else:
        assert top == __version__ and when != "unreleased"
    # No heading links to a tag or a comparison (the versions are not tagged in a public repository).
    assert not re.search(r"^\[[^\]]+\]: ", changelog, re.MULTILINE)


def test_the_versioning_page_states_the_version() -> None:
    page = (ROOT / "docs" / "versioning.md").read_text(encoding="utf-8")
    (row,) = [line for line in page.splitlines() if line.startswith("| the package |")]
    assert f"`{__version__}`" in row
