"""The shipped configs (package data of ginenv.configs, configs/*.yaml at the top): looked up by
name wherever a config is named, a path otherwise; listed, printed and copied out by ``ginenv config``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from ginenv.experiments.cli import main
from ginenv.experiments.cli.configs import missing_needs, needs_of
from ginenv.experiments.errors import UsageError
from ginenv.experiments.eval.ladder_config import (
    LadderFile,
    copy_shipped_config,
    load_dataclass_yaml,
    load_ladder_file,
    shipped_config_text,
    shipped_configs,
)
from ginenv.experiments.train.args import Args

FOLDER = Path(__file__).resolve().parents[3] / "configs"
LADDERS = ("ladder", "ladder_big")
TRAINING = ("master_ppo", "neural", "ppo")


def test_every_yaml_in_the_folder_is_shipped_by_its_name() -> None:
    on_disk = sorted(p.stem for p in FOLDER.glob("*.yaml"))
    assert shipped_configs() == on_disk == sorted(LADDERS + TRAINING)
    for name in on_disk:
        assert shipped_config_text(name) == (FOLDER / f"{name}.yaml").read_text()


def test_every_shipped_config_loads_by_name() -> None:
    for name in LADDERS:
        spec = load_ladder_file(name)
        assert isinstance(spec, LadderFile) and spec.agents and spec.seed == 0
    for name in TRAINING:
        args = load_dataclass_yaml(name, Args)
        assert args.experiment == name


def test_a_shipped_name_wins_over_a_file_of_that_name_and_a_path_reads_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("ladder").write_text("deals: 3\n")
    assert load_ladder_file("ladder").deals == load_ladder_file(FOLDER / "ladder.yaml").deals == 200
    assert load_ladder_file(Path("ladder")).deals == 3
    assert load_ladder_file("./ladder").deals == 3


def test_an_unknown_name_or_missing_file_is_one_line_naming_the_shipped_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    known = "shipped configs: ladder, ladder_big, master_ppo, neural, ppo"
    with pytest.raises(
        UsageError, match=f"cannot read config pp0: no such file, nor a shipped config; {known}"
    ):
        load_dataclass_yaml("pp0", Args)
    with pytest.raises(UsageError, match=f"no shipped config named 'pp0'; {known}"):
        shipped_config_text("pp0")
    # The old repository path, from a folder without it, points at the names too.
    assert main(["train", "--config", "configs/ppo.yaml"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and known in err
    assert main(["config", "show", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no shipped config named 'nope'" in err and known in err


def test_config_list_and_show(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "list"]) == 0
    rows = capsys.readouterr().out.splitlines()
    for name in LADDERS + TRAINING:
        (row,) = [r for r in rows if r.split()[0] == name]
        assert ("ginenv ladder/rate" if name in LADDERS else "ginenv train") in row
    assert "ginenv config copy NAME" in rows[-1]
    assert main(["config", "show", "ppo"]) == 0
    assert capsys.readouterr().out == (FOLDER / "ppo.yaml").read_text()


#: The shipped configs that read a file no install brings, and the file (made by research/bc.py).
NEEDS_FIRST = {"neural": "runs/expert_bc.pt", "master_ppo": "runs/master_clone.pt"}


def list_blocks(out: str) -> dict[str, str]:
    """``config list``'s output cut into each config's lines, by name."""
    blocks: dict[str, str] = {}
    name = None
    for line in out.splitlines()[:-1]:
        if not line.startswith(" "):
            name = line.split()[0]
            blocks[name] = ""
        assert name is not None
        blocks[name] += line + "\n"
    return blocks


def test_config_list_says_what_a_config_needs_before_it_runs_from_an_empty_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # From an empty folder, as from an installed wheel: no runs/, no research/.
    monkeypatch.chdir(tmp_path)
    for name in TRAINING + LADDERS:
        needed = needs_of(name)
        # Every file a config names says how it is made, in the config's own header.
        assert all(how for how in needed.values()), (name, needed)
        assert (
            set(missing_needs(name)) == set(needed) == ({NEEDS_FIRST[name]} if name in NEEDS_FIRST else set())
        )
    assert main(["config", "list"]) == 0
    blocks = list_blocks(capsys.readouterr().out)
    assert set(blocks) == set(TRAINING + LADDERS)
    for name, block in blocks.items():
        if name in NEEDS_FIRST:
            assert "(needs files first: below)" in block.splitlines()[0]
            flat = " ".join(line.strip() for line in block.splitlines())
            assert f"needs {NEEDS_FIRST[name]}, not in this folder: " in flat and "research/bc.py" in flat
        else:
            assert "needs" not in block, block
    # The configs listed without a note run here; the others are refused for the file they name.
    for name in TRAINING:
        spec = load_dataclass_yaml(name, Args)
        if name in NEEDS_FIRST:
            refused = rf"no such checkpoint file .*{re.escape(NEEDS_FIRST[name])}"
            with pytest.raises(UsageError, match=refused):
                spec.validate()
        else:
            spec.validate()
    for name in LADDERS:
        load_ladder_file(name)
    # The command's refusal says the same, in its one line.
    capsys.readouterr()
    assert main(["train", "--config", "neural"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "init: no such checkpoint file 'runs/expert_bc.pt'" in err
    assert "; the shipped config neural needs runs/expert_bc.pt first: " in err and "research/bc.py" in err
    # Once the file exists where the command runs, the note goes.
    Path("runs").mkdir()
    Path(NEEDS_FIRST["neural"]).write_bytes(b"")
    assert main(["config", "list"]) == 0
    blocks = list_blocks(capsys.readouterr().out)
    assert "needs" not in blocks["neural"] and "needs runs/master_clone.pt" in blocks["master_ppo"]


def test_config_copy_writes_an_editable_file_that_config_reads_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["config", "copy", "ppo"]) == 0
    assert capsys.readouterr().out.strip() == "wrote ppo.yaml: edit it, then ginenv train --config ppo.yaml"
    assert Path("ppo.yaml").read_text() == (FOLDER / "ppo.yaml").read_text()
    assert load_dataclass_yaml("ppo.yaml", Args) == Args()
    # Never over an existing file; a folder gets NAME.yaml inside it.
    assert main(["config", "copy", "ppo"]) == 2
    assert "ppo.yaml exists" in capsys.readouterr().err
    Path("mine").mkdir()
    assert copy_shipped_config("ladder", "mine") == Path("mine", "ladder.yaml")
    edited = Path("mine", "ladder.yaml")
    edited.write_text(edited.read_text().replace("deals: 200", "deals: 7"))
    assert load_ladder_file(str(edited)).deals == 7
    with pytest.raises(UsageError, match="cannot write"):
        copy_shipped_config("ladder", tmp_path / "no" / "such" / "folder.yaml")
