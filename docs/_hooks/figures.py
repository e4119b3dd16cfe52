"""Headline figures from the file their benchmarks write: ``docs/figures.json``.

Every speed or time figure the README and the guides quote is an entry of ``docs/figures.json``
(value, kind, date, machine, load average, command), written by the benchmark that measured it
(``--record``) or by ``python docs/_hooks/figures.py time NAME -- COMMAND`` for a timed command. A
page names a figure instead of copying it:

- ``{{ fig:NAME }}`` becomes the value as the docs show it (``1.25 M``, ``28.7x``, ``5 min 20 s``);
- ``{{ fig:NAME:source }}`` becomes where it comes from (date, machine, load, command);
  ``{{ fig:NAME:date }}`` and ``{{ fig:NAME:load }}`` its date and load average alone.

As an MkDocs hook (``mkdocs.yml``'s ``hooks:``) it replaces them in every page and fails the build on
a name the file lacks. The README is not built, so it carries each value followed by a marker,
``1.25 M<!-- fig:NAME -->`` (or ``<!-- fig:NAME:date -->``, ``:load``); ``python
docs/_hooks/figures.py readme`` rewrites those values from the file, and ``tests/test_figures.py``
fails while one differs.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
#: The figures file (committed): ``{"NAME": {"value": ..., "kind": ..., "date": ..., ...}}``.
FIGURES = ROOT / "docs" / "figures.json"
README = ROOT / "README.md"
#: ``{{ fig:NAME }}`` or ``{{ fig:NAME:source }}`` in a page.
PLACEHOLDER = re.compile(r"\{\{\s*fig:([A-Za-z0-9_.]+)(?::(source|date|load))?\s*\}\}")
#: A value in the README followed by its marker: ``1.25 M``, ``28.7x``, ``72%``, ``5 min 20 s``.
README_MARK = re.compile(
    r"(\d[\d.-]*(?: min \d+ s| s| [kMG]|x|%)?)<!-- fig:([A-Za-z0-9_.]+)(?::(date|load))? -->"
)
KINDS = ("rate", "ratio", "percent", "duration", "seconds")


def load(path: Path = FIGURES) -> dict[str, dict[str, Any]]:
    """The figures, by name (an empty dict when the file does not exist yet)."""
    if not path.exists():
        return {}
    data: dict[str, dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _sig3(value: float) -> str:
    """Three significant figures, without an exponent (``1.25``, ``43.5``, ``185``, ``1234``)."""
    if value >= 1000:
        return f"{value:.0f}"
    text = f"{value:.3g}"
    return text if "e" not in text else f"{value:.0f}"


def show(figure: dict[str, Any]) -> str:
    """The value as the docs print it: ``1.25 M`` (rate), ``28.7x`` (ratio), ``72%``, ``5 min 20 s``."""
    value = float(figure["value"])
    kind = figure["kind"]
    if kind == "rate":
        for scale, suffix in ((1e9, " G"), (1e6, " M"), (1e3, " k")):
            if value >= scale:
                return _sig3(value / scale) + suffix
        return _sig3(value)
    if kind == "ratio":
        return _sig3(value) + "x"
    if kind == "percent":
        return f"{value:.0f}%"
    if kind == "duration":
        minutes, seconds = divmod(round(value), 60)
        return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"
    if kind == "seconds":
        return f"{value:.1f} s"
    raise ValueError(f"figure kind {kind!r} is not one of {KINDS}")


def source(figure: dict[str, Any]) -> str:
    """Where a figure comes from, in words: date, machine, load average and the command."""
    machine = figure["machine"]
    after = f" and {machine['load_1min_after']:.1f} at the end" if "load_1min_after" in machine else ""
    return (
        f"{figure['date']}, {machine['cores']} cores ({machine['cpu']}), load average "
        f"{machine['load_1min']:.1f} at the start{after}, `{figure['command']}`"
    )


def machine() -> dict[str, Any]:
    """This machine as a figure records it: CPU model, core count and the 1-minute load average."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count() or 1, "load_1min": round(os.getloadavg()[0], 2)}


def record(
    values: dict[str, tuple[float, str]], command: str, at: dict[str, Any], path: Path = FIGURES
) -> None:
    """Write (or replace) figures: ``values`` maps a name to ``(value, kind)``; ``at`` is
    :func:`machine` as it was when the measurement started (the load average now is added as
    ``load_1min_after``)."""
    figures = load(path)
    today = dt.date.today().isoformat()
    ended = {**at, "load_1min_after": round(os.getloadavg()[0], 2)}
    for name, (value, kind) in values.items():
        if kind not in KINDS:
            raise ValueError(f"figure kind {kind!r} is not one of {KINDS}")
        figures[name] = {"value": value, "kind": kind, "date": today, "machine": ended, "command": command}
    path.write_text(json.dumps(dict(sorted(figures.items())), indent=1) + "\n", encoding="utf-8")


def part(figure: dict[str, Any], which: str | None) -> str:
    """One part of a figure as a page shows it: the value (``None``), ``source``, ``date`` or
    ``load`` (the 1-minute load average when the measurement started)."""
    if which is None:
        return show(figure)
    if which == "source":
        return source(figure)
    if which == "date":
        return str(figure["date"])
    if which == "load":
        return f"{figure['machine']['load_1min']:.1f}"
    raise ValueError(f"no figure part {which!r}")


def substitute(text: str, figures: dict[str, dict[str, Any]]) -> str:
    """A page's placeholders replaced by their figures; a name the file lacks raises ``KeyError``."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in figures:
            raise KeyError(f"{{{{ fig:{name} }}}} names no figure in {FIGURES.relative_to(ROOT)}")
        return part(figures[name], match.group(2))

    return PLACEHOLDER.sub(one, text)


def update_readme(path: Path = README, figures: dict[str, dict[str, Any]] | None = None) -> bool:
    """Rewrite each marked value of the README from the figures (a name the file lacks is left as it
    is); True when the text changed."""
    figures = load() if figures is None else figures
    text = path.read_text(encoding="utf-8")

    def one(m: re.Match[str]) -> str:
        if m.group(2) not in figures:  # left as it is; tests/test_figures.py names it
            return m.group(0)
        return part(figures[m.group(2)], m.group(3)) + m.group(0)[len(m.group(1)) :]

    new = README_MARK.sub(one, text)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """MkDocs hook: every ``{{ fig:... }}`` of a page replaced; an unknown name fails the build."""
    from mkdocs.exceptions import PluginError

    try:
        return substitute(markdown, load())
    except KeyError as err:
        page = kwargs.get("page")
        raise PluginError(f"{getattr(page, 'file', page)}: {err.args[0]}") from err


def main(argv: list[str] | None = None) -> int:
    """``time NAME -- COMMAND``: run a command, record its wall time; ``readme``: refresh the README."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="task", required=True)
    timed = sub.add_parser("time", help="run COMMAND and record its wall time as figure NAME")
    timed.add_argument("name")
    timed.add_argument("command", nargs=argparse.REMAINDER)
    sub.add_parser("readme", help="rewrite the README's marked figures from docs/figures.json")
    a = p.parse_args(argv)
    if a.task == "readme":
        print("README.md updated" if update_readme() else "README.md already matches")
        return 0
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    at = machine()
    started = time.perf_counter()
    code = subprocess.call(command)
    wall = time.perf_counter() - started
    if code != 0:
        print(f"figures: {shlex.join(command)} exited {code}; nothing recorded", file=sys.stderr)
        return code
    record({a.name: (round(wall, 1), "duration")}, shlex.join(command), at)
    print(f"figures: {a.name} = {wall:.1f} s recorded in {FIGURES.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
