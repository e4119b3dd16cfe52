"""The learning curve of two tiny seeded PPO runs, pinned (ginenv.experiments.train.ppo).

A change to the trainer's code that is meant to keep its behaviour (a refactor) must leave every
loss of every update and the final weights as they were: the same random draws in the same order,
the same arithmetic. The figures below were written by the trainer before PPO was laid out as
collect, advantages, update, log (commit a9caeee), and the refactored trainer reproduced them bit
for bit (the weights' SHA-256 too) on the machine that made them.

They are compared with a tolerance of 1e-6 (relative, and absolute for figures near 0), not
exactly: the networks' matrix products go through torch's CPU kernels, whose summation order
(and so the last bits of a float) may differ between CPUs (AVX2 or AVX-512 paths), so a digest
pinned on one machine could fail on another with no change to the code. A real change (a draw
moved, a loss term reordered, a minibatch split differently) moves these figures by far more. The
runs are fp32 (``precision: auto`` would be bf16 on a CPU with native bfloat16 only) on one torch
thread.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from ginenv.agents.neural import read_checkpoint
from ginenv.agents.neural import threads as torch_threads
from ginenv.agents.neural.threads import use_threads
from ginenv.experiments.train.ppo import train

from ginenv.cores import Change

#: The two runs: the tiny run of the tests (kickstarted by greedy against greedy, random and
#: snapshots, normalised advantages, clipped value loss), and one with most options on at once
#: (an oracle critic, shaping, truncated hands, two workers, PFSP over a league with hard, early
#: stopping on the KL).
RUNS: dict[str, dict[str, object]] = {
    "tiny": dict(total_steps=32 * 16 * 3, precision="fp32", eval_every=0),
    "options": dict(
        total_steps=32 * 16 * 3,
        precision="fp32",
        eval_every=0,
        critic_inputs="oracle",
        shaping=0.5,
        turn_limit=5,
        workers=2,
        pfsp="variance",
        update_epochs=3,
        target_kl=0.0003,
        opponents={"greedy": 0.3, "random": 0.2, "hard": 0.2, "snapshot": 0.3},
    ),
}

#: The losses logged per update, by tag.
LOSSES = (
    "losses/policy", "losses/value", "losses/entropy", "losses/approx_kl", "losses/clipfrac",
    "losses/aux_opponent_hand", "losses/explained_variance",
)  # fmt: skip


def figures(run_dir: Path, read_scalars: Callable[[Path], dict[str, list[float]]]) -> dict[str, list[float]]:
    """A run's losses per update (TensorBoard's float32 values, read by ``read_scalars``), and per
    network of its final checkpoint the sum of its weights and of their absolute values."""
    scalars = read_scalars(run_dir)
    found = {tag: scalars[tag] for tag in LOSSES}
    if "losses/kickstart" in scalars:
        found["losses/kickstart"] = scalars["losses/kickstart"]
    ckpt = read_checkpoint(run_dir / "checkpoints" / "latest.pt")
    assert ckpt.training is not None
    parts = {
        "policy": ckpt.policy.state_dict(),
        "critic": ckpt.training["critic"],
        "aux": ckpt.training["aux"],
    }
    for name, state in parts.items():
        found[f"weights/{name}"] = [
            float(sum(t.double().sum() for t in state.values())),
            float(sum(t.double().abs().sum() for t in state.values())),
        ]
    return found


#: The figures of the runs as the trainer made them before the refactor (commit a9caeee).
PINNED: dict[str, dict[str, list[float]]] = {
    "tiny": {
        "losses/policy": [-0.0013155656633898616, -0.0005207097856327891, 0.00021149730309844017],
        "losses/value": [0.0031261700205504894, 0.005379326641559601, 0.00553973950445652],
        "losses/entropy": [1.4362393617630005, 1.4976677894592285, 1.4847214221954346],
        "losses/approx_kl": [0.0004733954556286335, 0.0002146277402061969, 4.99398447573185e-05],
        "losses/clipfrac": [0.0, 0.0, 0.0],
        "losses/aux_opponent_hand": [0.6987050771713257, 0.7020808458328247, 0.6992952823638916],
        "losses/explained_variance": [0.0350458100438118, 0.0063593401573598385, 0.16647589206695557],
        "losses/kickstart": [1.578957438468933, 1.565934419631958, 1.5733822584152222],
        "weights/policy": [4.688641513211223, 466.6601237201312],
        "weights/critic": [-1.2060610470689426, 212.62260247993618],
        "weights/aux": [0.10773351436364464, 108.5774021425459],
    },
    "options": {
        "losses/policy": [-9.775382932275534e-05, -0.0011075823567807674, 0.000642178172711283],
        "losses/value": [0.018847424536943436, 0.020726453512907028, 0.02912621572613716],
        "losses/entropy": [1.3869355916976929, 1.4460363388061523, 1.4145689010620117],
        "losses/approx_kl": [0.0004650305490940809, 0.00037864051409997046, 8.286825323011726e-05],
        "losses/clipfrac": [0.0, 0.0, 0.0],
        "losses/aux_opponent_hand": [0.6917598247528076, 0.6889563798904419, 0.6889933943748474],
        "losses/explained_variance": [0.1183316707611084, -0.03498705103993416, 0.09544602781534195],
        "losses/kickstart": [1.549169659614563, 1.5238349437713623, 1.4899510145187378],
        "weights/policy": [3.61660617893358, 466.62974852658226],
        "weights/critic": [0.2883806220768861, 269.3035131066379],
        "weights/aux": [0.028140920534497127, 109.53749244628125],
    },
}


@pytest.mark.parametrize("name", list(RUNS))
def test_a_tiny_seeded_run_learns_as_it_always_did(name: str, tiny, scalars) -> None:  # type: ignore[no-untyped-def]
    found = figures(train(tiny(**RUNS[name])), scalars)
    pinned = PINNED[name]
    assert found.keys() == pinned.keys()
    for tag, values in pinned.items():
        assert found[tag] == pytest.approx(values, rel=1e-6, abs=1e-6), tag


def test_the_engine_threads_change_no_figure(tiny, scalars) -> None:  # type: ignore[no-untyped-def]
    # The batched engine on two threads (greedy, hard and random opponents, two workers) gives the
    # very figures of one thread, pinned above: not a bit differs.
    one, two = (
        figures(train(tiny(**RUNS["options"], engine_threads=k, experiment=f"engine{k}")), scalars)
        for k in (1, 2)
    )
    assert one == two


class Flipping:
    """An adaptive thread count that changes at every check (2, 1, 2, ...), as a machine whose
    load came and went at every rollout and update would make it."""

    def __init__(self) -> None:
        self.threads = 2

    def start(self) -> int:
        return self.threads

    def check(self) -> Change:
        before, self.threads = self.threads, 3 - self.threads
        return Change(before, self.threads, 0.0, 2)


def test_torch_threads_changed_as_it_runs_change_no_figure(  # type: ignore[no-untyped-def]
    tiny, scalars, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # threads auto (the default) follows the load, so a run's count may change between any two
    # rollouts or updates: it gives the figures of one thread (not a bit differed on the machine
    # that wrote this; compared as the pinned figures are, across CPUs).
    one = figures(train(tiny(**RUNS["tiny"], threads=1, experiment="one")), scalars)
    monkeypatch.setattr(torch_threads, "AdaptiveThreads", Flipping)
    use_threads(1)  # a run of auto starts adapting anew
    try:
        changing = figures(train(tiny(**RUNS["tiny"], threads="auto", experiment="auto")), scalars)
    finally:
        use_threads(1)
    said = capsys.readouterr().err
    assert said.count("torch threads 2 -> 1") >= 2 and said.count("torch threads 1 -> 2") >= 2
    assert changing.keys() == one.keys()
    for tag, values in one.items():
        assert changing[tag] == pytest.approx(values, rel=1e-6, abs=1e-6), tag
