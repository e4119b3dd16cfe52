"""``dev.py``, the bootstrap and task runner: what its test task changes in the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

import dev


def test_byte_code_is_kept_outside_the_checkout_when_the_environment_forbids_writing_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    dev.keep_byte_code()
    assert "PYTHONDONTWRITEBYTECODE" not in dev.os.environ
    assert dev.os.environ["PYTHONPYCACHEPREFIX"] == str(dev.VENV / "pycache")


def test_a_chosen_prefix_and_an_environment_that_writes_byte_code_are_left_alone(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(tmp_path))
    dev.keep_byte_code()
    assert dev.os.environ["PYTHONPYCACHEPREFIX"] == str(tmp_path)
    assert "PYTHONDONTWRITEBYTECODE" not in dev.os.environ
    monkeypatch.delenv("PYTHONPYCACHEPREFIX")
    dev.keep_byte_code()
    assert "PYTHONPYCACHEPREFIX" not in dev.os.environ
