"""Neural agents from checkpoints: pickle-free round trip, refusal of bad files, harness use."""

from __future__ import annotations

import hashlib
import json
import pickle
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
from ginenv.agents import neural
from ginenv.agents.neural import (
    OBS_FORMAT,
    CheckpointError,
    MaskedPolicy,
    NeuralAgent,
    checkpoint_digest,
    clear_cache,
    load_checkpoint,
    read_checkpoint,
    save_checkpoint,
)
from ginenv.experiments.cli import main
from scenarios import DEALER, deck_with, play, start

import ginenv
from ginenv import agents, gin_rummy_v0
from ginenv.actions import DISCARD_BASE, KNOCK_BASE, NUM_ACTIONS, action_id, action_name
from ginenv.cards import parse_cards
from ginenv.features import input_size
from ginenv.observation import OBS_SIZE, PLANE_BASE


def saved_policy(tmp_path: Path, seed: int = 0) -> Path:
    torch.manual_seed(seed)
    path = tmp_path / "policy.pt"
    save_checkpoint(MaskedPolicy(hidden=(32,)), path)
    return path


def test_round_trip_gives_the_same_actions(tmp_path: Path) -> None:
    path = saved_policy(tmp_path)
    a = agents.make(f"checkpoint:{path}")
    b = NeuralAgent(load_checkpoint(path))
    env = gin_rummy_v0.raw_env()
    env.reset(seed=4)
    for _ in range(30):
        obs = env.observe(env.agent_selection)
        act = a.act(obs)
        assert act == b.act(obs)
        assert obs["action_mask"][act] == 1  # only legal actions
        env.step(act)
        if not env.agents:
            break


def test_sampling_at_a_temperature_is_seeded_and_legal(tmp_path: Path) -> None:
    agent = NeuralAgent(load_checkpoint(saved_policy(tmp_path)), temperature=1.0)
    env = gin_rummy_v0.raw_env()
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    agent.reset(3)
    first = [agent.act(obs) for _ in range(20)]
    agent.reset(3)
    assert [agent.act(obs) for _ in range(20)] == first
    assert all(obs["action_mask"][a] for a in first)


class Boom:
    def __reduce__(self) -> tuple:
        return (print, ("unpickled!",))


def test_untrusted_and_malformed_files_are_refused(tmp_path: Path) -> None:
    evil = tmp_path / "evil.pt"
    evil.write_bytes(pickle.dumps({"format": "ginenv-policy", "payload": Boom()}))
    with pytest.raises(CheckpointError, match="weights_only"):
        load_checkpoint(evil)
    text = tmp_path / "notes.pt"
    text.write_text(json.dumps({"hello": 1}))
    with pytest.raises(CheckpointError, match="not a ginenv policy checkpoint"):
        load_checkpoint(text)
    other = tmp_path / "other.pt"
    torch.save(
        {
            "format": "ginenv-policy",
            "version": 1,
            "obs_size": 10,
            "num_actions": 108,
            "hidden": [4],
            "state_dict": {},
        },
        other,
    )
    with pytest.raises(CheckpointError, match="expects 10 inputs"):
        load_checkpoint(other)
    with pytest.raises(CheckpointError, match="no checkpoint"):
        load_checkpoint(tmp_path / "missing.pt")


def test_the_harness_plays_a_checkpoint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = saved_policy(tmp_path)
    argv = [
        "match",
        f"checkpoint:{path}",
        "random",
        "--hands",
        "4",
        "--json",
        "--workers",
        "1",
        "--no-plots",
        "--out",
        str(tmp_path / "run"),
    ]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["hands_played"] == 4 and np.isfinite(doc["points_per_hand_a_minus_b"]["mean"])
    assert main(["match", f"checkpoint:{tmp_path / 'nope.pt'}", "random", "--hands", "2"]) == 2
    assert "no checkpoint" in capsys.readouterr().err


# --- Checkpoint validation: every declared size is checked before the network is built ----------


def checkpoint_data(hidden: tuple[int, ...] = (8,), seed: int = 0) -> dict:
    """The plain data of a valid small checkpoint, to be altered by each test."""
    torch.manual_seed(seed)
    policy = MaskedPolicy(hidden=hidden)
    return {
        "format": "ginenv-policy",
        "version": 1,
        "obs_size": policy.obs_size,
        "num_actions": policy.num_actions,
        "hidden": list(hidden),
        "state_dict": dict(policy.state_dict()),
    }


def write(tmp_path: Path, data: object, name: str = "ckpt.pt") -> Path:
    path = tmp_path / name
    torch.save(data, path)
    return path


@pytest.fixture
def never_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if a network is built: a refused checkpoint must allocate nothing of its size."""

    def boom(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a network was built for a refused checkpoint: {args} {kwargs}")

    # The checkpoint module builds the network (the package only re-exports MaskedPolicy).
    monkeypatch.setattr(neural.policy_file, "MaskedPolicy", boom)


def altered(change: Callable[[dict], None]) -> dict:
    data = checkpoint_data()
    change(data)
    return data


def set_weight(key: str, value: torch.Tensor) -> Callable[[dict], None]:
    return lambda d: d["state_dict"].__setitem__(key, value)


def drop_weight(key: str) -> Callable[[dict], None]:
    return lambda d: d["state_dict"].pop(key)


REFUSALS = {
    # The 1.4 KB file of the issue: declares two 200000-wide layers, holds an 8-wide one.
    "huge declared layers": (lambda d: d.update(hidden=[200000, 200000]), r"from 1 to 16384; got \[200000"),
    "layers within bounds but not in the file": (
        lambda d: d.update(hidden=[4096, 4096]),
        r"does not fit hidden layers \[4096, 4096\].*missing net.4.weight",
    ),
    "too many parameters": (lambda d: d.update(hidden=[16384] * 3), r"parameters; at most 64000000"),
    "too many layers": (lambda d: d.update(hidden=[8] * 17), r"at most 16 layer widths"),
    "a bool width": (lambda d: d.update(hidden=[True]), r"got \[True\] \(True is not allowed\)"),
    "a zero width": (lambda d: d.update(hidden=[0]), r"from 1 to 16384; got \[0\]"),
    "hidden not a list": (lambda d: d.update(hidden="8"), r"'hidden' must be a list.*got '8'"),
    "state_dict as a list": (
        lambda d: d.update(state_dict=list(d["state_dict"].values())),
        r"'state_dict' must be a mapping of parameter names to tensors, got list",
    ),
    "a missing weight": (drop_weight("net.2.bias"), r"missing net.2.bias\); expected exactly net.0.weight"),
    "an unexpected weight": (set_weight("net.9.weight", torch.zeros(1)), r"unexpected net.9.weight"),
    "a non-string key": (lambda d: d["state_dict"].__setitem__(0, torch.zeros(1)), r"keys must be strings"),
    "a weight that is not a tensor": (
        set_weight("net.2.bias", [0.0] * 3),
        r"must be a dense tensor, got list",
    ),
    "integer weights": (
        set_weight("net.2.bias", torch.zeros(NUM_ACTIONS, dtype=torch.int64)),
        r"dtype int64; allowed: float32, float64, float16, bfloat16",
    ),
    "a wrong shape": (
        set_weight("net.0.weight", torch.zeros(8, 7)),
        r"net.0.weight'\] has shape \[8, 7\], but hidden layers \[8\] need \[8, 532\]",
    ),
    "a NaN weight": (set_weight("net.2.bias", torch.full((NUM_ACTIONS,), float("nan"))), "NaN or infinite"),
    "an infinite weight": (set_weight("net.0.bias", torch.full((8,), float("inf"))), "NaN or infinite"),
    "a float64 weight beyond float32": (
        set_weight("net.0.bias", torch.full((8,), 1e300, dtype=torch.float64)),
        r"NaN or infinite weights \(as float32\)",
    ),
    "a bool version": (lambda d: d.update(version=True), r"unsupported checkpoint version True"),
    "sizes as strings": (lambda d: d.update(obs_size="532"), r"expects '532' inputs"),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_bad_checkpoints_are_refused_before_any_network_is_built(
    case: str, tmp_path: Path, never_built: None
) -> None:
    change, message = REFUSALS[case]
    path = write(tmp_path, altered(change))
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(path)
    with pytest.raises(CheckpointError, match=message):
        agents.make(f"checkpoint:{path}")


def test_the_tiny_file_declaring_huge_layers_is_small(tmp_path: Path) -> None:
    data = checkpoint_data()
    data.update(hidden=[200000, 200000], state_dict={"net.0.weight": torch.zeros(2, 2)})
    path = write(tmp_path, data)
    assert path.stat().st_size < 2 * 1024  # the 1.4 KB file: nothing to hold 160 GB of weights
    with pytest.raises(CheckpointError, match="16384"):
        load_checkpoint(path)


def test_legacy_and_compressed_files_are_refused(tmp_path: Path, never_built: None) -> None:
    # torch's legacy format allocates every storage at its declared size before reading it.
    legacy = tmp_path / "legacy.pt"
    torch.save(checkpoint_data(), legacy, _use_new_zipfile_serialization=False)
    with pytest.raises(CheckpointError, match=r"expected a zip archive written by torch\.save"):
        load_checkpoint(legacy)
    # A compressed entry could inflate far beyond the file's size; torch.save never compresses.
    plain = write(tmp_path, checkpoint_data())
    packed = tmp_path / "packed.pt"
    with zipfile.ZipFile(plain) as src, zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info))
    with pytest.raises(CheckpointError, match="compressed entries are refused"):
        load_checkpoint(packed)


def test_half_precision_weights_load_as_float32(tmp_path: Path) -> None:
    data = checkpoint_data()
    data["state_dict"] = {k: v.to(torch.float16) for k, v in data["state_dict"].items()}
    policy = load_checkpoint(write(tmp_path, data))
    assert all(p.dtype == torch.float32 for p in policy.parameters())
    assert torch.equal(policy.net[0].bias, data["state_dict"]["net.0.bias"].float())


# --- Legality when the network's logits are NaN or infinite ------------------------------------


def rigged_policy(logits: dict[str, float], others: float = 100.0) -> MaskedPolicy:
    """A network whose logits ignore the observation: ``others`` everywhere but the named actions."""
    policy = MaskedPolicy(hidden=(8,))
    with torch.no_grad():
        policy.net[2].weight.zero_()
        policy.net[2].bias.fill_(others)
        for name, value in logits.items():
            policy.net[2].bias[action_id(name)] = value
    return policy


def first_decision() -> dict:
    """The non-dealer's first decision: only draw_discard (take the 9h upcard) and pass are legal."""
    obs = play(start(deck_with("7h 8h Ks Kc 2d 5c 9s Jd 4s Qc", DEALER, "9h")))
    assert {action_name(a) for a in np.flatnonzero(obs["action_mask"])} == {"draw_discard", "pass"}
    return obs


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_a_nan_logit_on_a_legal_action_is_skipped(temperature: float) -> None:
    # Illegal actions score 100: only the legal ones may count, and NaN is not a maximum.
    agent = NeuralAgent(
        rigged_policy({"draw_discard": float("nan"), "pass": 5.0}), seed=0, temperature=temperature
    )
    with pytest.warns(RuntimeWarning, match="NaN or infinite logits on 1 of 2 legal actions"):
        picks = {action_name(agent.act(first_decision())) for _ in range(20)}
    assert picks == {"pass"}


@pytest.mark.parametrize("bad", [float("-inf"), float("nan")])
@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_no_finite_legal_logit_plays_uniformly_among_legal_actions(bad: float, temperature: float) -> None:
    policy = rigged_policy({"draw_discard": bad, "pass": bad})
    agent = NeuralAgent(policy, seed=0, temperature=temperature)
    obs = first_decision()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        picks = [action_name(agent.act(obs)) for _ in range(200)]
        # A second agent on the same network (the harness builds one per game) does not warn again.
        NeuralAgent(policy, seed=1, temperature=temperature).act(obs)
    assert set(picks) == {"draw_discard", "pass"}
    assert 60 < picks.count("pass") < 140  # uniform: 100 expected of 200
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 1 and "playing a uniformly random legal action" in messages[0]


def test_a_network_of_nan_weights_plays_a_whole_hand_legally() -> None:
    policy = MaskedPolicy(hidden=(8,))
    with torch.no_grad():
        policy.net[0].weight.fill_(float("nan"))
    players = [NeuralAgent(policy, seed=s, temperature=t) for s, t in ((0, 0.0), (1, 1.0))]
    env = start(deck_with("7h 8h Ks Kc 2d 5c 9s Jd 4s Qc", DEALER, "9h"))
    steps = 0
    with pytest.warns(RuntimeWarning, match="uniformly random legal action"):
        while env.agents and steps < 400:
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            action = players[env.agents.index(env.agent_selection)].act(obs)
            assert obs["action_mask"][action] == 1, action_name(action)
            env.step(action)
            steps += 1
    assert not env.agents  # the hand ended, every decision legal
    assert steps > 2


def test_temperature_must_be_a_finite_number() -> None:
    for bad in (float("nan"), float("inf"), -1.0, True, "1"):
        with pytest.raises(ValueError, match="temperature must be"):
            NeuralAgent(MaskedPolicy(hidden=(4,)), temperature=bad)  # type: ignore[arg-type]


# --- Shared read-only weights, fresh agents --------------------------------------------------


def test_agents_share_the_weights_of_one_file_content(tmp_path: Path) -> None:
    clear_cache()
    path = saved_policy(tmp_path, seed=0)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert checkpoint_digest(path) == digest
    a = agents.make(f"checkpoint:{path}", seed=3, temperature=1.0)
    b = agents.make(f"checkpoint:{path}", seed=3, temperature=1.0)
    assert isinstance(a, NeuralAgent) and isinstance(b, NeuralAgent)
    assert a is not b and a.policy is b.policy and a.digest == b.digest == digest
    assert not any(p.requires_grad for p in a.policy.parameters())  # shared: read-only
    # Fresh state: b plays as a played, whatever a did since.
    obs = first_decision()
    first = [a.act(obs) for _ in range(30)]
    c = agents.make(f"checkpoint:{path}", seed=3, temperature=1.0)
    assert [c.act(obs) for _ in range(30)] == first == [b.act(obs) for _ in range(30)]
    # load_checkpoint gives a private, trainable copy, never the shared one.
    private = load_checkpoint(path)
    assert private is not a.policy and all(p.requires_grad for p in private.parameters())


def test_a_changed_file_is_reloaded(tmp_path: Path) -> None:
    clear_cache()
    path = saved_policy(tmp_path, seed=0)
    old = agents.make(f"checkpoint:{path}")
    assert isinstance(old, NeuralAgent)
    old_digest = old.digest
    # Same size, written at once: only the content tells the two files apart.
    save_checkpoint(MaskedPolicy(hidden=(32,)), path)
    new = agents.make(f"checkpoint:{path}")
    assert isinstance(new, NeuralAgent)
    assert new.policy is not old.policy and new.digest == checkpoint_digest(path) != old_digest
    assert not torch.equal(new.policy.net[0].weight, old.policy.net[0].weight)
    assert torch.equal(new.policy.net[0].weight, load_checkpoint(path).net[0].weight)
    # A run pinned to the old content refuses the new one instead of mixing two networks.
    with pytest.raises(
        CheckpointError, match=f"has changed: its sha256 is {new.digest}, expected {old_digest}"
    ):
        agents.make(f"checkpoint:{path}", digest=old_digest)


def test_digest_of_a_missing_file_or_folder(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="no checkpoint at"):
        checkpoint_digest(tmp_path / "missing.pt")
    with pytest.raises(CheckpointError, match="is a folder, not a checkpoint file"):
        checkpoint_digest(tmp_path)


# --- Version 2: observation format, code version, training config ----------------------------------


def test_version_2_records_the_observation_format_code_version_and_config(tmp_path: Path) -> None:
    torch.manual_seed(0)
    policy = MaskedPolicy(hidden=(8,))
    path = tmp_path / "v2.pt"
    save_checkpoint(policy, path, config={"seed": 3, "hidden": [8]}, training={"progress": {"update": 1}})
    assert not list(tmp_path.glob(".*partial"))  # written beside the target, then renamed over it
    ckpt = read_checkpoint(path)
    assert (ckpt.version, ckpt.obs_format, ckpt.code_version) == (3, OBS_FORMAT, ginenv.__version__)
    assert ckpt.policy.inputs == "observation"
    assert ckpt.config == {"seed": 3, "hidden": [8]}
    assert ckpt.training == {"progress": {"update": 1}}
    for key, value in policy.state_dict().items():
        assert torch.equal(ckpt.policy.state_dict()[key], value)
    assert isinstance(agents.make(f"checkpoint:{path}"), NeuralAgent)


def test_version_1_files_still_load(tmp_path: Path) -> None:
    path = write(tmp_path, checkpoint_data())
    ckpt = read_checkpoint(path)
    assert (ckpt.version, ckpt.obs_format, ckpt.code_version, ckpt.config, ckpt.training) == (
        1,
        1,
        None,
        None,
        None,
    )
    assert isinstance(agents.make(f"checkpoint:{path}"), NeuralAgent)


def version_2(**changes: object) -> dict:
    data = checkpoint_data()
    data.update(version=2, obs_format=OBS_FORMAT, code_version="0.1.0", config=None, training=None)
    data.update(changes)
    return data


V2_REFUSALS = {
    "another observation format": (
        {"obs_format": OBS_FORMAT + 1},
        rf"trained on observation format {OBS_FORMAT + 1}, but this ginenv encodes observations "
        rf"in format {OBS_FORMAT}",
    ),
    "no observation format": ({"obs_format": None}, r"'obs_format' must be an integer"),
    "a bool observation format": ({"obs_format": True}, r"'obs_format' must be an integer"),
    "a code version that is not a string": ({"code_version": 5}, r"'code_version' must be a string"),
    "a config that is not a mapping": ({"config": [1, 2]}, r"'config' must be None or a mapping"),
    "training with non-string keys": ({"training": {1: 2}}, r"'training' must be None or a mapping"),
    "an unknown version": ({"version": 4}, r"unsupported checkpoint version 4, expected 1 or 2 or 3"),
    "version 3 without its inputs": ({"version": 3}, r"'inputs' must be one of 'observation', 'features'"),
    "version 3 with unknown inputs": (
        {"version": 3, "inputs": "pixels"},
        r"'inputs' must be one of 'observation', 'features', got 'pixels'",
    ),
    "features declared over a raw-observation network": (
        {"version": 3, "inputs": "features"},
        rf"with inputs 'features' this env gives {input_size('features')} and",
    ),
    "an unknown activation": (
        {"version": 3, "inputs": "observation", "activation": "gelu"},
        r"'activation' must be one of 'relu', 'tanh' \(or absent, meaning 'relu'\), got 'gelu'",
    ),
    "an activation that is not a string": (
        {"version": 3, "inputs": "observation", "activation": ["tanh"]},
        r"'activation' must be one of 'relu', 'tanh'.*got \['tanh'\]",
    ),
    "tanh in a version-2 file": (
        {"activation": "tanh"},
        r"version-2 checkpoints are ReLU networks, but 'activation' is 'tanh'; another activation "
        r"needs a version-3 file",
    ),
}


@pytest.mark.parametrize("case", list(V2_REFUSALS))
def test_bad_version_2_metadata_is_refused(case: str, tmp_path: Path, never_built: None) -> None:
    changes, message = V2_REFUSALS[case]
    path = write(tmp_path, version_2(**changes))
    with pytest.raises(CheckpointError, match=message):
        read_checkpoint(path)
    with pytest.raises(CheckpointError, match=message):
        agents.make(f"checkpoint:{path}")


# --- Version 3: the activation between the layers ------------------------------------------------


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_the_activation_round_trips(activation: str, tmp_path: Path) -> None:
    torch.manual_seed(0)
    policy = MaskedPolicy(hidden=(8, 8), activation=activation)
    assert isinstance(policy.net[1], neural.ACTIVATIONS[activation])
    path = tmp_path / f"{activation}.pt"
    save_checkpoint(policy, path)
    assert torch.load(path, weights_only=True)["activation"] == activation
    loaded = read_checkpoint(path).policy
    assert loaded.activation == activation
    assert [type(m) for m in loaded.net] == [type(m) for m in policy.net]
    inputs = torch.rand(16, policy.obs_size) * 4 - 2  # tanh and relu differ on negative values
    with torch.no_grad():
        assert torch.equal(loaded(inputs), policy(inputs))
    assert agents.make(f"checkpoint:{path}").policy.activation == activation


def test_a_version_3_file_without_an_activation_is_relu(tmp_path: Path) -> None:
    data = version_2(version=3, inputs="observation")
    assert "activation" not in data
    assert load_checkpoint(write(tmp_path, data)).activation == "relu"
    assert load_checkpoint(write(tmp_path, checkpoint_data(), "v1.pt")).activation == "relu"


def test_an_unknown_activation_is_refused_when_building() -> None:
    with pytest.raises(ValueError, match=r"activation must be 'relu' or 'tanh', got 'gelu'"):
        MaskedPolicy(hidden=(8,), activation="gelu")


# --- the card head ---------------------------------------------------------------------------------


@pytest.mark.parametrize("inputs", ["observation", "features"])
def test_the_card_head_round_trips_and_plays(inputs: str, tmp_path: Path) -> None:
    torch.manual_seed(0)
    policy = MaskedPolicy(hidden=(8,), inputs=inputs, card_hidden=6)
    path = tmp_path / "card.pt"
    save_checkpoint(policy, path)
    loaded = read_checkpoint(path).policy
    assert (loaded.card_hidden, loaded.inputs) == (6, inputs)
    env = gin_rummy_v0.env()
    env.reset(seed=5)
    x = policy.prepare(env.observe(env.agent_selection)["observation"][None])
    with torch.no_grad():
        assert torch.equal(loaded(x), policy(x))
    assert cli_match(path) == 0


def cli_match(path: Path) -> int:
    return main(["match", f"checkpoint:{path}", "random", "--hands", "2", "--json"])


def test_the_card_head_treats_every_card_alike() -> None:
    # One function of a card's columns for all 52 cards: swapping two cards' columns in the input
    # swaps their card-head logits (discard, knock and, for the top card, take).
    torch.manual_seed(1)
    policy = MaskedPolicy(hidden=(8,), inputs="features", card_hidden=16)
    env = gin_rummy_v0.env()
    env.reset(seed=9)
    obs = env.observe(env.agent_selection)["observation"]
    a, b = parse_cards("Qs 3d")
    x = policy.prepare(obs[None])
    y = x.clone()
    for base in [*range(PLANE_BASE, OBS_SIZE, 52), *range(OBS_SIZE, OBS_SIZE + 3 * 52, 52)]:
        y[0, base + a], y[0, base + b] = x[0, base + b], x[0, base + a]
    with torch.no_grad():
        cx, cy = policy.card_logits(x)[0], policy.card_logits(y)[0]
    for offset in (DISCARD_BASE, KNOCK_BASE):
        assert torch.allclose(cx[offset + a], cy[offset + b]) and torch.allclose(
            cx[offset + b], cy[offset + a]
        )
    assert not torch.allclose(cx[DISCARD_BASE + a], cx[DISCARD_BASE + b])


@pytest.mark.parametrize(
    ("card_hidden", "message"),
    [
        (-1, r"'card_hidden' must be an integer from 0 \(no card head\)"),
        ("8", r"'card_hidden' must be an integer from 0"),
        (4, r"missing card.0.weight"),  # declares a head the weights do not have
    ],
)
def test_a_bad_card_head_is_refused(card_hidden: object, message: str, tmp_path: Path) -> None:
    policy = MaskedPolicy(hidden=(8,))
    path = tmp_path / "bad.pt"
    save_checkpoint(policy, path)
    data = torch.load(path, weights_only=True)
    data["card_hidden"] = card_hidden
    torch.save(data, path)
    with pytest.raises(CheckpointError, match=message):
        read_checkpoint(path)


# --- the shipped network ----------------------------------------------------------------------------


def test_the_shipped_network_plays_as_neural() -> None:
    assert "neural" in agents.available()
    ckpt = read_checkpoint(neural.SHIPPED_CHECKPOINT)
    # About a megabyte: the policy, its opponent-hand head and the config of the run that trained it.
    assert ckpt.training is not None and set(ckpt.training) == {"aux"} and ckpt.config is not None
    assert neural.SHIPPED_CHECKPOINT.stat().st_size < 4_000_000
    assert ckpt.policy.inputs == "features" and ckpt.policy.card_hidden > 0
    a, b = agents.make("neural", seed=0), agents.make("neural", seed=0)
    assert a is not b and a.policy is b.policy  # fresh agents, one shared read-only network
    from ginenv.agents.neural import opponent_hand_predictor

    env = gin_rummy_v0.env()
    env.reset(seed=4)
    obs = env.observe(env.agent_selection)["observation"]
    probs = opponent_hand_predictor(neural.SHIPPED_CHECKPOINT)(obs[None])
    assert probs.shape == (1, 52) and bool(((probs >= 0) & (probs <= 1)).all())
    env = gin_rummy_v0.env()
    env.reset(seed=11)
    for _seat in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        action = None if term or trunc else a.act(obs)
        if action is not None:
            assert obs["action_mask"][action] == 1
        env.step(action)


def test_export_policy_keeps_the_policy_and_config_only(tmp_path: Path) -> None:
    torch.manual_seed(2)
    policy = MaskedPolicy(hidden=(8,), inputs="features", card_hidden=4)
    source = tmp_path / "training.pt"
    aux = {"weight": torch.zeros(52, 8), "bias": torch.zeros(52)}
    optimizer = {"state": {0: {"exp_avg": torch.zeros(8, policy.obs_size)}}}
    training = {"progress": {"update": 3}, "aux": aux, "optimizer": optimizer}
    save_checkpoint(policy, source, config={"seed": 5}, training=training)
    out = neural.export_policy(source, tmp_path / "policy.pt")
    assert out.config == {"seed": 5} and out.training is not None and set(out.training) == {"aux"}
    assert neural.export_policy(source, tmp_path / "bare.pt", keep=()).training is None
    x = torch.rand(3, policy.obs_size)
    with torch.no_grad():
        assert torch.equal(out.policy(x), policy(x))
    assert (tmp_path / "policy.pt").stat().st_size < source.stat().st_size
