"""The Stable-Baselines3 VecEnv over the batched engine, and the export of a trained MaskablePPO
model as a ginenv checkpoint (ginenv.experiments.train.sb3)."""

from __future__ import annotations

import io
import json
import pickle
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch
from extras import needs_extra
from ginenv.agents.neural import NeuralAgent, read_checkpoint
from ginenv.experiments.cli import main
from gymnasium import spaces
from torch import nn

from ginenv import agents
from ginenv.actions import NUM_ACTIONS
from ginenv.observation import OBS_SIZE, PHASE_BASE

# The module and ginenv.experiments.train.sb3 import the sb3 extra's libraries: checked first.
needs_extra("sb3", "stable_baselines3", "sb3_contrib")

from ginenv.experiments.train.sb3 import (  # noqa: E402
    SB3_REWARD_SCALE,
    GinRummyVecEnv,
    SB3ExportError,
    export_maskable_ppo,
)
from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.policies import (  # noqa: E402
    MaskableActorCriticPolicy,
    MaskableMultiInputActorCriticPolicy,
)
from sb3_contrib.common.maskable.utils import get_action_masks  # noqa: E402
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor  # noqa: E402
from stable_baselines3.common.vec_env import VecNormalize  # noqa: E402


def test_sb3_semantics_terminal_observations_and_masks() -> None:
    env = GinRummyVecEnv(num_envs=8, opponent="random", turn_limit=5, seed=3)
    obs = env.reset()
    assert obs.shape == (8, 532) and env.observation_space.contains(obs[0])
    rng = np.random.default_rng(0)
    ended = truncated_seen = 0
    for _ in range(200):
        masks = get_action_masks(env)  # how MaskablePPO asks
        assert masks.shape == (8, 108) and masks.any(axis=1).all()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, dones, infos = env.step(actions)
        assert rewards.shape == dones.shape == (8,)
        for i in np.flatnonzero(dones):
            ended += 1
            final = infos[i]["terminal_observation"]
            assert final[PHASE_BASE + 4] == 1 and obs[i][PHASE_BASE + 4] == 0
            truncated_seen += infos[i]["TimeLimit.truncated"]
        for i in np.flatnonzero(~dones):
            assert infos[i] == {}
    assert ended > 40 and truncated_seen > 0
    with pytest.raises(AttributeError, match="only action_masks"):
        env.env_method("render")


def test_rewards_default_to_the_trainers_scale() -> None:
    # 0.01 per point (SB3_REWARD_SCALE), not the Gymnasium env's raw points; reward_scale overrides it.
    scaled, raw = GinRummyVecEnv(num_envs=32, seed=4), GinRummyVecEnv(num_envs=32, seed=4, reward_scale=1.0)
    assert SB3_REWARD_SCALE == 0.01 and scaled.vector_env.vector is not raw.vector_env.vector
    scaled.reset(), raw.reset()
    rng = np.random.default_rng(4)
    total_scaled = total_raw = 0.0
    for _ in range(300):
        masks = scaled.action_masks()
        assert (masks == raw.action_masks()).all()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        total_scaled += float(scaled.step(actions)[1].sum())
        total_raw += float(raw.step(actions)[1].sum())
    assert total_raw != 0 and total_scaled == pytest.approx(total_raw * 0.01, rel=1e-5)


def test_maskable_ppo_learns_on_it() -> None:
    env = GinRummyVecEnv(num_envs=16, opponent="greedy", seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=64, n_epochs=1, seed=0, verbose=0)
    model.learn(total_timesteps=16 * 16 * 3)
    obs = env.reset()
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[np.arange(16), action].all()  # masked: only legal actions


# --- Export to a ginenv checkpoint -----------------------------------------------------------------


@dataclass
class Trained:
    model: MaskablePPO
    zip_path: Path
    obs: np.ndarray  # (N, OBS_SIZE) observations met while the model played
    masks: np.ndarray  # (N, NUM_ACTIONS) their legal actions


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Trained:
    """A tiny MaskablePPO (Tanh, the MlpPolicy default) trained a few updates, saved, and the
    observations it met while playing."""
    env = GinRummyVecEnv(num_envs=4, opponent="random", seed=0)
    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=32,
        batch_size=64,
        n_epochs=2,
        seed=0,
        policy_kwargs={"net_arch": [16, 16]},
        verbose=0,
    )
    model.learn(total_timesteps=4 * 32 * 3)
    path = tmp_path_factory.mktemp("sb3") / "model.zip"
    model.save(path)
    obs, seen, masks = env.reset(), [], []
    for _ in range(60):
        seen.append(obs)
        masks.append(env.action_masks())
        action, _ = model.predict(obs, action_masks=masks[-1], deterministic=False)
        obs, *_ = env.step(action)
    return Trained(model, path, np.concatenate(seen), np.concatenate(masks))


def sb3_logits(model: MaskablePPO, obs: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """The SB3 policy's raw action logits (action_net on the actor latent) and its distribution's
    normalized logits, before masking."""
    policy = model.policy
    with torch.no_grad():
        tensor, _ = policy.obs_to_tensor(obs)
        features = policy.extract_features(tensor, policy.pi_features_extractor)
        raw = policy.action_net(policy.mlp_extractor.forward_actor(features))
        normalized = policy.get_distribution(tensor).distribution.logits
    return raw, normalized


def assert_same_policy(model: MaskablePPO, exported: torch.nn.Module, obs: np.ndarray) -> None:
    raw, normalized = sb3_logits(model, obs)
    with torch.no_grad():
        ours = exported(exported.prepare(obs))
    assert ours.shape == raw.shape == (len(obs), NUM_ACTIONS)
    assert torch.allclose(ours, raw, rtol=0, atol=1e-5)
    assert torch.allclose(torch.log_softmax(ours, -1), normalized, rtol=0, atol=1e-5)


def test_the_export_gives_sb3s_logits_from_memory_and_from_the_save_file(
    trained: Trained, tmp_path: Path
) -> None:
    assert len(trained.obs) >= 200
    from_memory = export_maskable_ppo(trained.model, tmp_path / "memory.pt")
    from_policy = export_maskable_ppo(trained.model.policy, tmp_path / "policy.pt")
    from_file = export_maskable_ppo(trained.zip_path, tmp_path / "file.pt")
    for exported in (from_memory, from_policy, from_file):
        assert (exported.hidden, exported.activation) == ((16, 16), "tanh")
        assert_same_policy(trained.model, exported, trained.obs)
    # Greedy play: the harness agent picks SB3's deterministic masked action.
    agent = NeuralAgent(from_file)
    expected, _ = trained.model.predict(trained.obs, action_masks=trained.masks, deterministic=True)
    chosen = [
        agent.act({"observation": o, "action_mask": m.astype(np.int8)})
        for o, m in zip(trained.obs, trained.masks, strict=True)
    ]
    assert chosen == list(expected)
    memory_config = read_checkpoint(tmp_path / "memory.pt").config
    file_config = read_checkpoint(tmp_path / "file.pt").config
    assert memory_config is not None and file_config is not None
    assert memory_config["source"] == file_config["source"] == "sb3-contrib MaskablePPO"
    assert memory_config["num_timesteps"] == file_config["num_timesteps"] == trained.model.num_timesteps
    assert file_config["sha256"] and file_config["file"] == "model.zip"
    assert file_config["activation"] == "tanh" and file_config["hidden"] == [16, 16]
    # Like SB3's load, "model" finds model.zip.
    again = export_maskable_ppo(str(trained.zip_path.with_suffix("")), tmp_path / "again.pt")
    assert torch.equal(again.net[0].weight, from_file.net[0].weight)


def relu_model(tmp_path: Path, activation_fn: type[nn.Module] = nn.ReLU) -> tuple[MaskablePPO, Path]:
    env = GinRummyVecEnv(num_envs=2, opponent="random", seed=1)
    kwargs = {"net_arch": [8], "activation_fn": activation_fn}
    model = MaskablePPO("MlpPolicy", env, n_steps=8, seed=1, policy_kwargs=kwargs, verbose=0)
    path = tmp_path / "relu.zip"
    model.save(path)
    return model, path


def test_a_relu_model_exports_with_its_activation(trained: Trained, tmp_path: Path) -> None:
    model, path = relu_model(tmp_path)
    for exported in (
        export_maskable_ppo(model, tmp_path / "memory.pt"),
        export_maskable_ppo(path, tmp_path / "file.pt"),  # read from the file's plain-text description
        export_maskable_ppo(path, tmp_path / "given.pt", activation="relu"),
    ):
        assert exported.activation == "relu" and isinstance(exported.net[1], nn.ReLU)
        assert_same_policy(model, exported, trained.obs)
    with pytest.raises(
        SB3ExportError, match=r"the model's layers use 'relu', but activation='tanh' was given"
    ):
        export_maskable_ppo(model, tmp_path / "x.pt", activation="tanh")
    with pytest.raises(
        SB3ExportError,
        match=r"the save file says its activation_fn is ReLU, but activation 'tanh' was given; "
        r"export it with activation 'relu' \(--activation relu\)",
    ):
        export_maskable_ppo(path, tmp_path / "x.pt", activation="tanh")
    # The MlpPolicy default (no activation_fn in policy_kwargs) is Tanh: relu is refused for it.
    with pytest.raises(SB3ExportError, match=r"activation_fn is Tanh, but activation 'relu' was given"):
        export_maskable_ppo(trained.zip_path, tmp_path / "x.pt", activation="relu")
    with pytest.raises(SB3ExportError, match=r"activation must be one of 'relu', 'tanh' .*got 'gelu'"):
        export_maskable_ppo(path, tmp_path / "x.pt", activation="gelu")
    assert not (tmp_path / "x.pt").exists()


def test_an_exported_model_plays_through_the_harness(
    trained: Trained, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sb3.pt"
    assert main(["export-sb3", str(trained.zip_path), str(out), "--activation", "tanh"]) == 0
    assert f"wrote {out} (hidden layers [16, 16], tanh)" in capsys.readouterr().out
    assert isinstance(agents.make(f"checkpoint:{out}"), NeuralAgent)
    argv = ["match", f"checkpoint:{out}", "random", "--hands", "2", "--json", "--workers", "1"]
    assert main([*argv, "--no-plots", "--out", str(tmp_path / "run")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["hands_played"] == 2 and np.isfinite(doc["points_per_hand_a_minus_b"]["mean"])


# Refusals of save files: each rewrites the trained model's zip.


def rewritten(source: Path, target: Path, change: Callable[[dict[str, bytes]], None]) -> Path:
    """A copy of a save file with its members changed by ``change`` (name -> bytes)."""
    with zipfile.ZipFile(source) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    change(members)
    with zipfile.ZipFile(target, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return target


def with_state(change: Callable[[dict[str, torch.Tensor]], None]) -> Callable[[dict[str, bytes]], None]:
    """Change the state dict in policy.pth."""

    def apply(members: dict[str, bytes]) -> None:
        state = torch.load(io.BytesIO(members["policy.pth"]), weights_only=True)
        change(state)
        buffer = io.BytesIO()
        torch.save(state, buffer)
        members["policy.pth"] = buffer.getvalue()

    return apply


class Boom:
    def __reduce__(self) -> tuple:
        return (print, ("unpickled!",))


def set_key(key: str, value: torch.Tensor) -> Callable[[dict[str, bytes]], None]:
    return with_state(lambda state: state.__setitem__(key, value))


def set_member(name: str, data: bytes | None) -> Callable[[dict[str, bytes]], None]:
    return lambda members: members.pop(name) if data is None else members.__setitem__(name, data)


def relu_description(members: dict[str, bytes]) -> None:
    doc = json.loads(members["data"])
    doc["policy_kwargs"] = {
        "net_arch": [16, 16],
        "activation_fn": "<class 'torch.nn.modules.activation.GELU'>",
    }
    members["data"] = json.dumps(doc).encode()


SAVE_FILE_REFUSALS = {
    "no policy.pth": (
        set_member("policy.pth", None),
        r"not a Stable-Baselines3 save file .*: it has no policy.pth",
    ),
    "a pickled object in policy.pth": (
        set_member("policy.pth", pickle.dumps({"x": Boom()})),
        r"policy.pth is not a state dict saved by torch.save in its zip format",
    ),
    "an unsafe pickle inside torch's zip": (
        lambda members: members.__setitem__("policy.pth", torch_bytes({"x": Boom()})),
        r"policy.pth is not a state dict saved by torch.save \(read with weights_only=True\): "
        r"Unsupported global: GLOBAL print was not an allowed global by default\.$",
    ),
    "another observation size": (
        set_key("mlp_extractor.policy_net.0.weight", torch.zeros(16, 100)),
        rf"the policy reads observations of 100 entries, but ginenv's observation vector has {OBS_SIZE}",
    ),
    "another number of actions": (
        with_state(
            lambda s: s.update({"action_net.weight": torch.zeros(50, 16), "action_net.bias": torch.zeros(50)})
        ),
        r"action_net gives 50 action logits, but ginenv has 108 actions",
    ),
    "shapes that do not chain": (
        set_key("mlp_extractor.policy_net.2.weight", torch.zeros(16, 8)),
        r"policy_net.2.weight has shape \[16, 8\], but the layer before it gives 16 outputs",
    ),
    "a bias of the wrong size": (
        set_key("action_net.bias", torch.zeros(3)),
        r"action_net has weight \[108, 16\] and bias \[3\]",
    ),
    "a layer at an odd index": (
        set_key("mlp_extractor.policy_net.3.weight", torch.zeros(16, 16)),
        r"policy_net has parameters at indices \[0, 2, 3\]: expected a weight and a bias at 0, 2, 4",
    ),
    "a features extractor with weights": (
        set_key("features_extractor.cnn.0.weight", torch.zeros(4, 4)),
        r"the features extractor has parameters \(features_extractor.cnn.0.weight\)",
    ),
    "a continuous-action policy": (
        set_key("log_std", torch.zeros(3)),
        r"parameters log_std are not an MlpPolicy's",
    ),
    "NaN weights": (
        set_key("action_net.bias", torch.full((NUM_ACTIONS,), float("nan"))),
        r"action_net.bias holds NaN or infinite weights",
    ),
    "integer weights": (
        set_key("action_net.bias", torch.zeros(NUM_ACTIONS, dtype=torch.int64)),
        r"action_net.bias must be a dense float tensor, got torch.int64",
    ),
    "an unsupported activation_fn": (
        relu_description,
        r"policy_kwargs name activation_fn GELU; only nn.ReLU and nn.Tanh",
    ),
}


def torch_bytes(value: object) -> bytes:
    buffer = io.BytesIO()
    torch.save(value, buffer)
    return buffer.getvalue()


@pytest.mark.parametrize("case", list(SAVE_FILE_REFUSALS))
def test_bad_save_files_are_refused(
    case: str, trained: Trained, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    change, message = SAVE_FILE_REFUSALS[case]
    source = rewritten(trained.zip_path, tmp_path / "bad.zip", change)
    with pytest.raises(SB3ExportError, match=message):
        export_maskable_ppo(source, tmp_path / "out.pt")
    assert not (tmp_path / "out.pt").exists()
    assert "unpickled!" not in capsys.readouterr().out
    # The command says the same on one line, with exit status 2.
    assert main(["export-sb3", str(source), str(tmp_path / "out.pt")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ginenv: ") and err.count("\n") == 1


def test_files_that_are_no_save_file_are_refused(
    trained: Trained, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.zip"
    notes.write_text("not a zip")
    with pytest.raises(SB3ExportError, match=r"notes.zip is not a Stable-Baselines3 save file"):
        export_maskable_ppo(notes, tmp_path / "out.pt")
    with pytest.raises(SB3ExportError, match=r"no Stable-Baselines3 save file at"):
        export_maskable_ppo(tmp_path / "missing.zip", tmp_path / "out.pt")
    with pytest.raises(SB3ExportError, match=r"the folder .*nowhere does not exist"):
        export_maskable_ppo(trained.zip_path, tmp_path / "nowhere" / "out.pt")
    with pytest.raises(SB3ExportError, match=r"is the save file itself"):
        export_maskable_ppo(trained.zip_path, trained.zip_path)
    with pytest.raises(SystemExit) as exit:  # argparse's own errors exit
        main(["export-sb3", str(trained.zip_path), str(tmp_path / "o.pt"), "--activation", "gelu"])
    assert exit.value.code == 2
    assert "invalid choice: 'gelu'" in capsys.readouterr().err


class TinyExtractor(BaseFeaturesExtractor):  # type: ignore[misc]
    def __init__(self, observation_space: spaces.Box) -> None:
        super().__init__(observation_space, features_dim=8)
        self.linear = nn.Linear(observation_space.shape[0], 8)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.linear(obs)


def policy_on(
    observation_space: spaces.Space, action_space: spaces.Space, **kwargs: object
) -> MaskableActorCriticPolicy:
    cls = (
        MaskableMultiInputActorCriticPolicy
        if isinstance(observation_space, spaces.Dict)
        else MaskableActorCriticPolicy
    )
    return cls(observation_space, action_space, lambda _: 3e-4, net_arch=[8], **kwargs)


BOX = spaces.Box(0.0, 1.0, (OBS_SIZE,))

MODEL_REFUSALS = {
    "another observation size": (
        lambda: policy_on(spaces.Box(0.0, 1.0, (100,)), spaces.Discrete(NUM_ACTIONS)),
        rf"the model reads observations of 100 entries, but ginenv's observation vector has {OBS_SIZE}",
    ),
    "a non-flat observation space": (
        lambda: policy_on(spaces.Box(0.0, 1.0, (4, OBS_SIZE // 4)), spaces.Discrete(NUM_ACTIONS)),
        r"observation space is Box\(.*\(4, 133\).*\), not a flat Box",
    ),
    "a dict observation space": (
        lambda: policy_on(spaces.Dict({"observation": BOX}), spaces.Discrete(NUM_ACTIONS)),
        r"observation space is Dict\(.*not a flat Box",
    ),
    "another number of actions": (
        lambda: policy_on(BOX, spaces.Discrete(50)),
        r"action space is Discrete\(50\), but ginenv has Discrete\(108\)",
    ),
    "a custom features extractor": (
        lambda: policy_on(BOX, spaces.Discrete(NUM_ACTIONS), features_extractor_class=TinyExtractor),
        r"features extractor is a TinyExtractor, which a ginenv network cannot represent",
    ),
    "another activation": (
        lambda: policy_on(BOX, spaces.Discrete(NUM_ACTIONS), activation_fn=nn.LeakyReLU),
        r"activation_fn is LeakyReLU; only nn.ReLU and nn.Tanh are supported",
    ),
    "something else": (lambda: object(), r"cannot export a object: expected a MaskablePPO model, its policy"),
}


@pytest.mark.parametrize("case", list(MODEL_REFUSALS))
def test_models_a_checkpoint_cannot_represent_are_refused(case: str, tmp_path: Path) -> None:
    build, message = MODEL_REFUSALS[case]
    with pytest.raises(SB3ExportError, match=message):
        export_maskable_ppo(build(), tmp_path / "out.pt")
    assert not (tmp_path / "out.pt").exists()


def test_a_model_behind_vecnormalize_is_refused(tmp_path: Path) -> None:
    env = VecNormalize(GinRummyVecEnv(num_envs=2, opponent="random", seed=0))
    model = MaskablePPO("MlpPolicy", env, n_steps=8, policy_kwargs={"net_arch": [8]}, verbose=0)
    with pytest.raises(SB3ExportError, match=r"trained behind VecNormalize"):
        export_maskable_ppo(model, tmp_path / "out.pt")


def test_a_save_file_with_another_activation_fn_is_refused(tmp_path: Path) -> None:
    model, path = relu_model(tmp_path, nn.LeakyReLU)
    with pytest.raises(SB3ExportError, match=r"activation_fn is LeakyReLU; only nn.ReLU and nn.Tanh"):
        export_maskable_ppo(model, tmp_path / "out.pt")
    with pytest.raises(
        SB3ExportError, match=r"policy_kwargs name activation_fn LeakyReLU; only nn.ReLU and nn.Tanh"
    ):
        export_maskable_ppo(path, tmp_path / "out.pt")


def test_make_vec_env_builds_the_registered_env_with_sb3s_defaults() -> None:
    # make_vec_env asks a named env for render_mode="rgb_array" and retries without it on a
    # TypeError: ginenv's RenderModeError is one, so SB3's plain one-liner works.
    from stable_baselines3.common.env_util import make_vec_env

    import ginenv  # noqa: F401  (registers ginenv/GinRummy-v0)

    envs = make_vec_env("ginenv/GinRummy-v0", n_envs=2, seed=0, env_kwargs={"opponent": "random"})
    obs = envs.reset()
    assert obs.shape[0] == 2  # type: ignore[union-attr]
    assert envs.get_attr("render_mode") == [None, None]
    envs.close()
