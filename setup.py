"""Package discovery for the wheel; everything else is declared in pyproject.toml.

The repository keeps ``agents/`` and ``experiments/`` as top-level folders that install as
``ginenv.agents`` and ``ginenv.experiments`` (so that a user's own ``agents`` or ``experiments``
never collides with them). ``[tool.setuptools.packages.find]`` cannot put what it finds under a
prefix, so the mapping of the three roots lives here and setuptools' own discovery fills in every
package below each of them: a new subpackage (a folder with an ``__init__.py``) ships without
anyone listing it. tests/test_packaging.py builds the wheel and checks that it holds every one.
"""

from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).resolve().parent
#: Installed package name -> the repository folder it is built from.
ROOTS = {"ginenv": "ginenv", "ginenv.agents": "agents", "ginenv.experiments": "experiments"}


def discovered() -> list[str]:
    """Every package under the three roots, by its installed name (the nested roots' own folders
    are not searched twice: ``ginenv/`` holds neither ``agents/`` nor ``experiments/``)."""
    return [
        package
        for name, folder in ROOTS.items()
        for package in (name, *(f"{name}.{sub}" for sub in find_packages(str(HERE / folder))))
    ]


setup(package_dir=ROOTS, packages=discovered())
