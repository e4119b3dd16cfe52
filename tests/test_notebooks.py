"""The research notebooks (``notebooks/*.ipynb``): each one runs from top to bottom without an error,
is stored without outputs, and passes the project's lint and format checks.

Each notebook is executed by nbclient, with smaller sizes (:data:`SMALLER`: fewer deals and training
steps), in a fresh kernel of *this* interpreter (a kernel spec written to a temporary folder points
at ``sys.executable``, so a ``python3`` kernel installed elsewhere on the machine is never picked
up), with ``notebooks/`` as its working directory, as Jupyter runs it. A cell that raises fails the
test with the cell's traceback.

Notebooks are committed with outputs and execution counts stripped (``nbstripout
notebooks/*.ipynb`` before committing); ``test_stored_without_outputs`` refuses any that are not.
The repository's ``ruff check .`` skips ``notebooks/`` (``extend-exclude``), so
``test_notebooks_lint_clean`` runs ruff on the notebook files themselves.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from extras import needs_extra

# Jupyter's libraries, nbstripout and ruff come with the dev extra (ipykernel with docs, within dev).
needs_extra("dev", "nbformat", "nbclient", "ipykernel", "jupyter_client", "nbstripout", "ruff")

import nbformat  # noqa: E402
from ipykernel.kernelspec import write_kernel_spec  # noqa: E402
from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402
from jupyter_client.manager import KernelManager  # noqa: E402
from nbclient import NotebookClient  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
EXPECTED = {
    "01_quick_start.ipynb",
    "02_difficulty_ladder.ipynb",
    "03_reading_the_opponent.ipynb",
    "04_training.ipynb",
}
#: Seconds one cell may run (each notebook takes a minute or two in all on a 2-core machine as stored).
CELL_TIMEOUT = 900
#: Smaller sizes for the test's run, by notebook: (the text as stored, the text run instead), each found
#: in exactly one cell. Every cell still runs, on fewer duplicate deals and training steps (some 20 s a
#: notebook instead of 60 to 130 on 2 cores); the manual's build (``dev.py docs``) runs them as stored.
SMALLER = {
    "02_difficulty_ladder.ipynb": [("DEALS = 40  #", "DEALS = 6  #")],
    "04_training.ipynb": [
        ('"total_steps=131072",', '"total_steps=32768",'),  # 4 updates: a snapshot and an evaluation
        ("deals=30, seed=1", "deals=6, seed=1"),
    ],
}
KERNEL = "ginenv-test"


def test_the_notebooks_are_there() -> None:
    assert {p.name for p in NOTEBOOKS} >= EXPECTED


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_without_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    dirty = [
        i
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and (cell.get("outputs") or cell.get("execution_count") is not None)
    ]
    assert not dirty, (
        f"{path.name}: cells {dirty} are stored with outputs or execution counts; "
        f"run `nbstripout notebooks/*.ipynb` before committing"
    )


def test_nbstripout_leaves_them_unchanged() -> None:
    """Nothing else that nbstripout removes (cell metadata, widget state, ...) is stored either."""
    done = subprocess.run(
        [sys.executable, "-m", "nbstripout", "--verify", *map(str, NOTEBOOKS)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"{done.stdout}{done.stderr}run `nbstripout notebooks/*.ipynb`"


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["check", "format"])
def test_notebooks_lint_clean(command: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ruff", *command, *map(str, NOTEBOOKS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"ruff {' '.join(command)} notebooks/*.ipynb:\n{done.stdout}{done.stderr}"


@pytest.fixture(scope="module")
def kernel_specs(tmp_path_factory: pytest.TempPathFactory) -> KernelSpecManager:
    """Kernel specs holding one kernel that runs this interpreter (the project's venv)."""
    folder = tmp_path_factory.mktemp("kernels")
    write_kernel_spec(folder / KERNEL, overrides={"display_name": f"ginenv tests ({sys.executable})"})
    return KernelSpecManager(kernel_dirs=[str(folder)])


def made_smaller(nb: nbformat.NotebookNode, name: str) -> nbformat.NotebookNode:
    """The notebook with :data:`SMALLER`'s sizes for ``name`` put in place of those stored."""
    for stored, run in SMALLER.get(name, []):
        cells = [cell for cell in nb.cells if cell.cell_type == "code" and stored in cell.source]
        assert len(cells) == 1, f"{name}: {stored!r} is in {len(cells)} cells, not 1: update SMALLER"
        cells[0].source = cells[0].source.replace(stored, run)
    return nb


def test_the_smaller_sizes_name_notebooks_that_exist() -> None:
    assert set(SMALLER) <= {p.name for p in NOTEBOOKS}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path: Path, kernel_specs: KernelSpecManager, tmp_path: Path) -> None:
    nb = made_smaller(nbformat.read(path, as_version=4), path.name)
    manager = KernelManager(kernel_name=KERNEL, kernel_spec_manager=kernel_specs)
    client = NotebookClient(
        nb,
        km=manager,
        timeout=CELL_TIMEOUT,
        resources={"metadata": {"path": str(NOTEBOOK_DIR)}},
    )
    # The notebooks write their run folders under tempfile's folder: here, this test's tmp_path.
    client.execute(env={**os.environ, "TMPDIR": str(tmp_path)})  # a cell that raises: CellExecutionError
    errors = [o for cell in nb.cells for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
