"""Trusted evaluation: ``ladder``, ``match`` and ``rate`` on secret deals (``--secret``, ``--key-file``).

A secret run prints its key's commitment when it starts and the key when it ends; the key replays
exactly its deals; the run folder never holds the key while the run goes on; a resume needs the key
given back, in a file or on standard input (``--key HEX`` is refused: a command line is public);
``rate --secret`` replays every ladder level on the new deals.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from extras import needs_extra
from ginenv.experiments.cli import evaluation, main
from ginenv.experiments.eval.compare import compare_runs, load_run
from ginenv.experiments.eval.harness import (
    EvalConfig,
    HarnessError,
    config_from_dict,
    evaluate,
    play_unit,
)

from ginenv.secret_deals import DealKey, check_commitment

RUN = ["--workers", "1", "--quiet", "--no-plots"]


def _match(out: Path, *extra: str, hands: int = 4) -> list[str]:
    return ["match", "random", "greedy", "--hands", str(hands), *RUN, "--out", str(out), *extra]


def _key_file(folder: Path, key: str) -> str:
    """A file only its owner reads, holding ``key`` (as a user keeps one to resume or check a run)."""
    path = folder / f"key-{len(list(folder.glob('key-*')))}.txt"
    path.write_text(key + "\n")
    path.chmod(0o600)
    return str(path)


def _said(err: str, start: str) -> str:
    """The value after ``start`` on the one stderr line that begins with it."""
    (line,) = [line for line in err.splitlines() if line.startswith(start)]
    return line[len(start) :].split()[0].rstrip(":")


def _played(out: Path) -> list[dict[str, Any]]:
    """Each finished deal's outcome without its timings (which vary from run to run)."""
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    for row in rows:
        for game in row["games"]:
            del game["a_think_s"], game["b_think_s"]
    return sorted(rows, key=lambda r: r["deal"])


def _files_holding(folder: Path, text: str) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.is_file() and text in p.read_text(errors="replace")]


def test_a_secret_run_prints_its_commitment_first_and_its_key_last(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert main(_match(out, "--secret", "--json")) == 0
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    commitment = _said(captured.err, "ginenv: secret deals, commitment ")
    key = _said(captured.err, "ginenv: deal key ")
    assert lines[0].startswith("ginenv: secret deals, commitment ")  # before any game
    assert lines[-1].startswith(f"ginenv: deal key {key}")  # once every game is over
    assert check_commitment(key, commitment)
    doc = json.loads(captured.out)
    assert (doc["deal_key"], doc["deal_commitment"]) == (key, commitment)
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["deal_key"], summary["deal_commitment"]) == (key, commitment)
    assert json.loads((out / "deal_key.json").read_text())["deal_key"] == key
    stored = json.loads((out / "config.json").read_text())
    assert stored["config"]["deal_commitment"] == commitment
    assert doc["publishable"] is summary["publishable"] is True  # ginenv's own levels only
    assert doc["not_publishable_because"] is None
    assert key not in (out / "config.json").read_text() + (out / "results.jsonl").read_text()


def test_the_key_replays_the_same_deals_and_another_key_other_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_match(tmp_path / "secret", "--secret", hands=20)) == 0
    key = _said(capsys.readouterr().err, "ginenv: deal key ")
    # Replayed on two worker processes (10 deals: 3 chunks): the key travels with the config.
    assert (
        main(
            [*_match(tmp_path / "check", "--key-file", _key_file(tmp_path, key), hands=20), "--workers", "2"]
        )
        == 0
    )
    other = _key_file(tmp_path, DealKey.new().hex())
    assert main(_match(tmp_path / "other", "--key-file", other, hands=20)) == 0
    assert main(_match(tmp_path / "public", hands=20)) == 0
    capsys.readouterr()
    secret = _played(tmp_path / "secret")
    assert _played(tmp_path / "check") == secret
    # The luck of the stock draws follows the cards: other decks, other luck on every deal.
    luck = [r["pair_luck"] for r in secret]
    assert all(
        a != b for a, b in zip(luck, [r["pair_luck"] for r in _played(tmp_path / "other")], strict=True)
    )
    assert all(
        a != b for a, b in zip(luck, [r["pair_luck"] for r in _played(tmp_path / "public")], strict=True)
    )


def test_the_secret_decks_are_the_keys_not_the_seeds(tmp_path: Path) -> None:
    key = DealKey.new()
    decks = {}
    for name, cfg_key in (("secret", key), ("public", None)):
        cfg = EvalConfig(agents=("random", "greedy"), deals=3, seed=0, key=cfg_key)
        folder = tmp_path / name
        folder.mkdir()
        for deal in range(cfg.deals):
            play_unit(("random", "greedy"), deal, cfg, {}, replay_dir=str(folder))
        decks[name] = {p.name: json.loads(p.read_text())["hands"][0]["deck"] for p in folder.iterdir()}
    from ginenv.cards import CARD_NAMES

    assert decks["secret"].keys() == decks["public"].keys()
    for name, deck in decks["secret"].items():
        deal = int(name[4:10])
        assert deck == [CARD_NAMES[c] for c in key.deck(deal, 0)]
        assert deck != decks["public"][name]


def test_the_key_is_never_in_the_run_folder_until_the_run_ends(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "run"
    seen: list[list[str]] = []
    real = evaluation.evaluate

    def stopped_after_two(*args: Any, **kwargs: Any) -> Any:
        key = args[0].key.hex()

        def look(record: dict[str, Any]) -> None:
            seen.append(_files_holding(out, key))
            if len(seen) == 2:
                raise KeyboardInterrupt

        return real(*args, on_record=look, **kwargs)

    monkeypatch.setattr(evaluation, "evaluate", stopped_after_two)
    assert main(_match(out, "--secret", hands=8)) == 130
    err = capsys.readouterr().err
    key = _said(err, "ginenv: deal key ")
    assert seen == [[], []]
    assert _files_holding(out, key) == []  # a stopped run may be resumed: its key stays out
    assert (
        "(with --key-file FILE in place of --secret, FILE holding that key and readable by you only)" in err
    )
    monkeypatch.setattr(evaluation, "evaluate", real)

    # Without the key, or with another, the folder is refused in one line; with it, it resumes.
    assert main(_match(out, hands=8)) == 2
    assert "holds a run on secret deals" in capsys.readouterr().err
    assert main(_match(out, "--secret", hands=8)) == 2
    assert "does not match the commitment of the run in" in capsys.readouterr().err
    assert main(_match(out, "--key-file", _key_file(tmp_path, key), hands=8)) == 0
    err = capsys.readouterr().err
    assert "2 of 4 deals already finished" in err
    assert json.loads((out / "deal_key.json").read_text())["deal_key"] == key


def test_a_seeded_folder_is_not_resumed_on_secret_deals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_match(tmp_path / "run")) == 0
    capsys.readouterr()
    assert main(_match(tmp_path / "run", "--secret")) == 2
    assert "holds a run on the seed's public deals" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["abc", "zz" * 16, "ab" * 15, "ab" * 65])
def test_a_bad_key_is_one_line_saying_what_is_allowed(
    bad: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _key_file(tmp_path, bad)
    assert main(_match(tmp_path / "run", "--key-file", path)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--key-file {path} must be a deal key of 32 to 128 hex digits" in err
    assert bad not in err  # a key with a typo is still most of a key
    assert not (tmp_path / "run").exists()


def test_a_missing_key_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_match(tmp_path / "run", "--key-file", str(tmp_path / "nowhere.txt"))) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--key-file: cannot read" in err and "No such file" in err


def test_the_key_is_read_from_standard_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    assert main(_match(tmp_path / "secret", "--secret", hands=8)) == 0
    key = _said(capsys.readouterr().err, "ginenv: deal key ")
    monkeypatch.setattr("sys.stdin", io.StringIO(key + "\n"))
    assert main(_match(tmp_path / "check", "--key-file", "-", hands=8)) == 0
    assert _played(tmp_path / "check") == _played(tmp_path / "secret")


def test_a_key_on_the_command_line_is_refused_with_a_pointer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = DealKey.new().hex()
    assert main(_match(tmp_path / "run", "--key", key)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and key not in err
    assert "--key would put the deal key in this command line" in err
    assert "--key-file FILE" in err and "--key-file -" in err
    assert not (tmp_path / "run").exists()


def test_secret_and_key_file_are_one_choice(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as stop:
        main(_match(tmp_path / "run", "--secret", "--key-file", _key_file(tmp_path, DealKey.new().hex())))
    assert stop.value.code == 2


def test_replays_are_refused_on_secret_deals(tmp_path: Path) -> None:
    cfg = EvalConfig(agents=("random", "greedy"), deals=1, key=DealKey.new())
    with pytest.raises(HarnessError, match="replays cannot be written on secret deals"):
        evaluate(cfg, tmp_path / "run", workers=1, progress=False, replays=True)


def test_a_secret_config_reads_back_only_with_its_key() -> None:
    key = DealKey.new()
    cfg = EvalConfig(agents=("random", "greedy"), deals=2, key=key)
    d = cfg.to_dict()
    assert "key" not in d and d["deal_commitment"] == key.commitment()
    assert key.hex() not in json.dumps(d) + repr(cfg)
    assert config_from_dict(d, key=key) == cfg
    assert cfg.fingerprint() != EvalConfig(agents=("random", "greedy"), deals=2).fingerprint()
    with pytest.raises(HarnessError, match="give its key"):
        config_from_dict(d)
    with pytest.raises(HarnessError, match="give its key"):
        config_from_dict(d, key=DealKey.new())


def test_compare_refuses_runs_of_other_deal_keys(tmp_path: Path) -> None:
    for name, key in (("a", DealKey.new()), ("b", DealKey.new())):
        evaluate(
            EvalConfig(agents=("random", "greedy"), deals=1, key=key),
            tmp_path / name,
            workers=1,
            progress=False,
        )
    from ginenv.experiments.errors import UsageError

    with pytest.raises(UsageError, match="deal commitment"):
        compare_runs([(load_run(tmp_path / "a"), load_run(tmp_path / "b"))], against="greedy")


LADDER = "agents: [random, easy, greedy]\nformat: round_robin\nunit: hand\ndeals: 2\nseed: 0\n"


def test_rate_on_secret_deals_replays_every_level_and_discloses_its_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ladder.yaml").write_text(LADDER)
    assert main(["ladder", "--config", "ladder.yaml", *RUN]) == 0
    (public,) = (tmp_path / "results").glob("ladder-*")
    stored = (public / "results.jsonl").read_text()
    capsys.readouterr()

    assert main(["rate", "normal", "--config", "ladder.yaml", "--secret", "--json", "--workers", "1"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    commitment = _said(captured.err, "ginenv: secret deals, commitment ")
    key = _said(captured.err, "ginenv: deal key ")
    assert (result["deal_key"], result["deal_commitment"]) == (key, commitment)
    assert check_commitment(key, commitment)
    assert "the ladder replayed on the secret deals" in captured.err
    assert "reused" not in captured.err
    assert (public / "results.jsonl").read_text() == stored  # the public ladder is left alone
    replayed = Path(result["ladder_results"])
    assert replayed != public
    config = json.loads((replayed / "config.json").read_text())["config"]
    assert config["deal_commitment"] == commitment
    # Every pairing of the ladder was played again on the secret deals: 3 pairings x 2 deals.
    pairs = {
        (r["a"], r["b"], r["deal"])
        for r in map(json.loads, (replayed / "results.jsonl").read_text().splitlines())
    }
    assert len(pairs) == 6
    for folder in (replayed, Path(result["results"])):
        assert json.loads((folder / "deal_key.json").read_text())["deal_key"] == key


def test_ray_deals_the_same_secret_decks_as_this_process(tmp_path: Path) -> None:
    needs_extra("ray", "ray")
    import ray

    key = DealKey.new()
    cfg = EvalConfig(agents=("random", "greedy"), deals=4, key=key)
    here = evaluate(cfg, tmp_path / "here", workers=1, progress=False)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = evaluate(cfg, tmp_path / "ray", backend="ray", progress=False)
    finally:
        ray.shutdown()
    for folder in ("here", "ray"):
        assert _files_holding(tmp_path / folder, key.hex()) == []

    def luck(records: list[dict[str, Any]]) -> list[tuple[int, float, int]]:
        return [(r["deal"], r["pair_luck"], r["pair_sum"]) for r in records]

    assert luck(remote) == luck(here)


IN_PROCESS_AGENT = """
from ginenv.agents.baselines.random_agent import RandomAgent


class Mine(RandomAgent):
    pass
"""


def test_a_secret_run_with_an_in_process_agent_is_not_publishable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "mine.py").write_text(IN_PROCESS_AGENT)
    spec = f"{tmp_path / 'mine.py'}:Mine"
    argv = ["match", spec, "greedy", "--hands", "2", *RUN, "--out", str(tmp_path / "run"), "--json"]
    assert main([*argv, "--secret"]) == 0
    captured = capsys.readouterr()
    said = [line for line in captured.err.splitlines() if "not publishable" in line]
    assert len(said) == 1 and f"{spec} ran inside the harness's processes, where the deal key is" in said[0]
    assert "run it as exec:COMMAND for a rating you publish" in said[0]
    doc = json.loads(captured.out)
    assert doc["publishable"] is False and spec in doc["not_publishable_because"]
    # On public deals nothing is publishable as a secret rating, and nothing is said as it starts.
    assert main([*argv[:-3], "--out", str(tmp_path / "seeded"), "--json"]) == 0
    captured = capsys.readouterr()
    assert "not publishable" not in captured.err
    assert json.loads(captured.out)["not_publishable_because"] == "public deals (a seed): play --secret"
