"""Package discovery for the wheel; everything else is declared in pyproject.toml.

The repository keeps ``agents/`` and ``experiments/`` as top-level folders that install as
``ginenv.agents`` and ``ginenv.experiments`` (so that a user's own ``agents`` or ``experiments``
never collides with them). ``[tool.setuptools.packages.find]`` cannot put what it finds under a
prefix, so the mapping of the three roots lives here and setuptools' own discovery fills in every
package below each of them: a new subpackage ships without anyone listing it.

Discovery is setuptools' namespace discovery (``find_namespace_packages``): it finds the folders
with an ``__init__.py`` and also the data folders without one (``agents/neural/data``,
``experiments/eval/data``, ``experiments/play/static``). Python can import
those as namespace packages, so setuptools wants them named among the packages: left out, ``python
-m build`` warns that each "is absent from the `packages` configuration". Their files are package
data, declared per folder in pyproject.toml. tests/test_packaging.py builds the sdist and the wheel
without a warning and checks that the wheel holds every package and every data file.
"""

from pathlib import Path

from setuptools import find_namespace_packages, setup

HERE = Path(__file__).resolve().parent
#: Installed package name -> the repository folder it is built from.
ROOTS = {
    "ginenv": "ginenv",
    "ginenv.agents": "agents",
    "ginenv.experiments": "experiments",
    "ginenv.configs": "configs",
}
#: Folders that are never packages: bytecode caches (a name with a dot, as ``.ipynb_checkpoints``,
#: is never found).
EXCLUDE = ("__pycache__", "*.__pycache__")


def discovered() -> list[str]:
    """Every package under the three roots, by its installed name (the nested roots' own folders
    are not searched twice: ``ginenv/`` holds neither ``agents/`` nor ``experiments/``)."""
    return [
        package
        for name, folder in ROOTS.items()
        for package in (
            name,
            *(f"{name}.{sub}" for sub in find_namespace_packages(str(HERE / folder), exclude=EXCLUDE)),
        )
    ]


setup(package_dir=ROOTS, packages=discovered())
