"""Baseline players: the floor of the ladder and published gin rummy bots as ginenv agents.

The published baselines anchor the ladder to players other people wrote. Both packages are optional
(the ``baselines`` extra: ``open-spiel`` and ``rlcard``); :func:`register_available` registers
``openspiel_simple`` and ``rlcard_novice`` only where the package is installed, and each adapter
imports its package when it is first built. Like every agent, an adapter sees nothing but the
observations of its own seat (``observe()`` and the legal-action mask): it never reads the env, the
engine or the opponent's cards.

One module per concern:

- :mod:`~ginenv.agents.baselines.random_agent`: ``random``, a uniformly random legal action;
- :mod:`~ginenv.agents.baselines.greedy`: ``greedy``, takes what melds, dumps deadwood, knocks at once;
- :mod:`~ginenv.agents.baselines.history`: :class:`PublicHistory`, one hand as one seat saw it, rebuilt
  from its observations (what the OpenSpiel adapter replays), and :class:`ReconstructionError`;
- :mod:`~ginenv.agents.baselines.openspiel_simple`: :class:`OpenSpielSimpleAgent`, OpenSpiel's
  ``simple_gin_rummy_bot`` on a ``pyspiel`` state rebuilt from the record, with the rule differences;
- :mod:`~ginenv.agents.baselines.rlcard_novice`: :class:`RLCardNoviceAgent`, RLCard's novice rule
  agent on RLCard's state rebuilt from the observation, with the rule differences;
- :mod:`~ginenv.agents.baselines.registration`: :func:`register_available`.

This package re-exports the public names of the adapters' modules (``random`` and ``greedy`` are
imported from their own modules, as :mod:`ginenv.agents` does).
"""

from ginenv.agents.baselines.history import (
    ME,
    OPP,
    UNSEEN_CARD,
    Move,
    PublicHistory,
    ReconstructionError,
)
from ginenv.agents.baselines.openspiel_simple import (
    OS_DRAW_STOCK,
    OS_DRAW_UPCARD,
    OS_KNOCK,
    OS_MAX_DRAW_UPCARD,
    OS_PASS,
    OpenSpielSimpleAgent,
    openspiel_actions,
    openspiel_installed,
)
from ginenv.agents.baselines.registration import register_available
from ginenv.agents.baselines.rlcard_novice import (
    RL_DISCARD_BASE,
    RL_DRAW_CARD,
    RL_GIN,
    RL_KNOCK_BASE,
    RL_PICK_UP_DISCARD,
    RLCardNoviceAgent,
    rlcard_card_ids,
    rlcard_installed,
)

__all__ = [
    "ME",
    "OPP",
    "OS_DRAW_STOCK",
    "OS_DRAW_UPCARD",
    "OS_KNOCK",
    "OS_MAX_DRAW_UPCARD",
    "OS_PASS",
    "RL_DISCARD_BASE",
    "RL_DRAW_CARD",
    "RL_GIN",
    "RL_KNOCK_BASE",
    "RL_PICK_UP_DISCARD",
    "UNSEEN_CARD",
    "Move",
    "OpenSpielSimpleAgent",
    "PublicHistory",
    "RLCardNoviceAgent",
    "ReconstructionError",
    "openspiel_actions",
    "openspiel_installed",
    "register_available",
    "rlcard_card_ids",
    "rlcard_installed",
]
