"""What a rule option changes, seen from a seat: ``discard_taken_card`` (on in the ``seed004``
preset) lets the card just taken from the discard pile be thrown back at once.

    python docs/examples/extending/rule_option.py
"""

from __future__ import annotations

from ginenv import gin_rummy_v0
from ginenv.cards import card_name
from ginenv.rules import PRESETS, Rules


def may_throw_back(rules: Rules, seed: int = 0) -> bool:
    """Whether the non-dealer, having taken the upcard, may discard that very card (its mask says)."""
    env = gin_rummy_v0.env(rules=rules)
    env.reset(seed=seed)
    upcard = env.unwrapped.hand.upcard
    env.step(env.unwrapped.action_id("draw_discard"))
    mask = env.observe(env.agent_selection)["action_mask"]
    return bool(mask[env.unwrapped.action_id(f"discard {card_name(upcard)}")])


if __name__ == "__main__":
    for preset in ("standard", "seed004"):
        print(
            f"{preset}: discard_taken_card={PRESETS[preset].discard_taken_card}, "
            f"may throw the upcard back: {may_throw_back(PRESETS[preset])}"
        )
