"""The play and replay pages' ES modules (experiments/play/static/*.js), read without a browser.

Each module parses (``node --check``); every ``import {names} from './x.js'`` names a file beside it
and names that file exports; the modules import each other in one direction (no circle); the play
page preloads exactly the modules its entry imports, directly or not; and the server sends each
module with a JavaScript MIME type (a browser refuses a module script served as anything else).
The browser tests (test_browser.py) play the pages themselves.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from ginenv.experiments.play.server import STATIC_DIR, create_app

IMPORT = re.compile(r"^import\s*\{([^}]*)\}\s*from\s*'\./([\w-]+\.js)';", re.MULTILINE)
EXPORT = re.compile(r"^export\s*\{([^}]*)\};", re.MULTILINE)
PRELOAD = re.compile(r'<link rel="modulepreload" href="/static/([\w-]+\.js)">')
SCRIPT = re.compile(r'<script type="module" src="/static/([\w-]+\.js)"></script>')


def _names(listing: str) -> set[str]:
    """The names of an import or export list (``a, b as c``: the names before any ``as``)."""
    words = (re.sub(r"//[^\n]*", "", part).strip() for part in listing.split(","))
    return {w.split(" as ")[0].strip() for w in words if w}


def _modules() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(STATIC_DIR.glob("*.js"))}


def _graph() -> dict[str, set[str]]:
    """Module -> the modules it imports."""
    return {name: {m.group(2) for m in IMPORT.finditer(src)} for name, src in _modules().items()}


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_every_module_parses() -> None:
    node = shutil.which("node")
    assert node, "node not found: the static modules are checked with node --check (apt-get install nodejs)"
    for path in sorted(STATIC_DIR.glob("*.js")):
        done = subprocess.run([node, "--check", str(path)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"{path.name}: {done.stderr.strip()}"


def test_every_import_names_a_module_beside_it_and_what_that_module_exports() -> None:
    modules = _modules()
    exported = {name: set().union(*map(_names, EXPORT.findall(src))) for name, src in modules.items()}
    found = 0
    for name, src in modules.items():
        # Every import statement is of the one form read here (none slips past these checks).
        assert len(re.findall(r"^import\b", src, re.MULTILINE)) == len(IMPORT.findall(src)), name
        for m in IMPORT.finditer(src):
            target = m.group(2)
            assert target in modules, f"{name} imports ./{target}, which is not in {STATIC_DIR}"
            missing = _names(m.group(1)) - exported[target]
            assert not missing, f"{name} imports {sorted(missing)} from {target}, which does not export them"
            found += 1
    assert found >= 10  # the play page is split into modules: these checks have imports to check


def test_the_modules_import_each_other_in_one_direction() -> None:
    graph = _graph()
    circles = [name for name in graph if name in _reach(graph, name)]
    assert not circles, f"modules on an import circle: {circles}"


def test_the_pages_load_their_entry_as_a_module_and_preload_what_it_imports() -> None:
    graph = _graph()
    index = (STATIC_DIR / "index.html").read_text(encoding="utf-8")
    assert SCRIPT.findall(index) == ["app.js"]
    preloaded = PRELOAD.findall(index)
    assert len(preloaded) == len(set(preloaded))
    assert set(preloaded) == _reach(graph, "app.js"), (
        "index.html's modulepreload links are out of step with app.js"
    )
    replay = (STATIC_DIR / "replay.html").read_text(encoding="utf-8")
    assert SCRIPT.findall(replay) == ["replay.js"]


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(replay_dir=tmp_path / "replays", state_dir=tmp_path / "tables")) as c:
        yield c


def test_the_server_sends_each_module_as_javascript(client: TestClient) -> None:
    names = sorted(_modules())
    assert "app.js" in names and "replay.js" in names
    for name in names:
        r = client.get(f"/static/{name}")
        assert r.status_code == 200, name
        assert r.headers["content-type"].split(";")[0] in {"text/javascript", "application/javascript"}, (
            f"/static/{name} is sent as {r.headers['content-type']!r}: a browser refuses it as a module"
        )
        assert r.text == (STATIC_DIR / name).read_text(encoding="utf-8")
