"""Neural agents from checkpoints: a masked policy network, saved and loaded without pickle.

This package owns the network agents and their files. One module per concern:

- :mod:`~ginenv.agents.neural.network`: :class:`MaskedPolicy`, the masked MLP (with its card head)
  from an observation to one logit per action;
- :mod:`~ginenv.agents.neural.policy_file`: the checkpoint file, plain data read without unpickling
  and checked before a network is built (:func:`save_checkpoint`, :func:`read_checkpoint`,
  :func:`load_checkpoint`, :func:`export_policy`, :class:`CheckpointError`; the format and what is
  refused are in its docstring);
- :mod:`~ginenv.agents.neural.shared`: :func:`shared_policy`, each checkpoint's content loaded once
  and shared read-only by the agents built from it;
- :mod:`~ginenv.agents.neural.agent`: :class:`NeuralAgent`, which plays a network legally, and
  :func:`shipped_agent`, the registered ``neural`` on the shipped network
  (:data:`SHIPPED_CHECKPOINT`, ``data/neural.pt``);
- :mod:`~ginenv.agents.neural.opponent_hand`: :func:`opponent_hand_predictor`, the opponent's hand
  read by a training checkpoint's auxiliary head;
- :mod:`~ginenv.agents.neural.search`: ``master_net`` and ``master_prior``, master's search helped by
  the shipped network (imported on its own: it loads master).

This package re-exports the public names of every module but ``search``, so
``from ginenv.agents.neural import MaskedPolicy, read_checkpoint, NeuralAgent`` works as it always has.
"""

# SHIPPED_CHECKPOINT (ginenv.agents.shipped) and OBS_FORMAT (ginenv.observation) live elsewhere:
# re-exported (``X as X``) because users import them from here, left out of __all__ so the API
# reference shows each once.
from ginenv.agents.neural.agent import NeuralAgent, shipped_agent
from ginenv.agents.neural.network import ACTIVATIONS, MaskedPolicy, card_channels, per_card_columns
from ginenv.agents.neural.opponent_hand import opponent_hand_predictor
from ginenv.agents.neural.policy_file import (
    CODE_VERSION,
    FORMAT,
    MAX_CHECKPOINT_BYTES,
    MAX_HIDDEN_LAYERS,
    MAX_LAYER_WIDTH,
    MAX_PARAMETERS,
    SUPPORTED_VERSIONS,
    VERSION,
    WEIGHT_DTYPES,
    Checkpoint,
    CheckpointError,
    PathLike,
    check_state,
    checkpoint_bytes,
    checkpoint_digest,
    export_policy,
    load_checkpoint,
    policy_from_bytes,
    read_bounded,
    read_checkpoint,
    save_checkpoint,
)
from ginenv.agents.neural.shared import CACHE_SIZE, clear_cache, shared_policy, shared_policy_and_digest
from ginenv.agents.shipped import SHIPPED_CHECKPOINT as SHIPPED_CHECKPOINT

from ginenv.observation import OBS_FORMAT as OBS_FORMAT

__all__ = [
    "ACTIVATIONS",
    "CACHE_SIZE",
    "CODE_VERSION",
    "FORMAT",
    "MAX_CHECKPOINT_BYTES",
    "MAX_HIDDEN_LAYERS",
    "MAX_LAYER_WIDTH",
    "MAX_PARAMETERS",
    "SUPPORTED_VERSIONS",
    "VERSION",
    "WEIGHT_DTYPES",
    "Checkpoint",
    "CheckpointError",
    "MaskedPolicy",
    "NeuralAgent",
    "PathLike",
    "card_channels",
    "check_state",
    "checkpoint_bytes",
    "checkpoint_digest",
    "clear_cache",
    "export_policy",
    "load_checkpoint",
    "opponent_hand_predictor",
    "per_card_columns",
    "policy_from_bytes",
    "read_bounded",
    "read_checkpoint",
    "save_checkpoint",
    "shared_policy",
    "shared_policy_and_digest",
    "shipped_agent",
]
