"""ginenv: gin rummy for reinforcement-learning research.

Layers (imports point down only): ``cards`` / ``melds`` / ``rules`` (pure rules) -> ``scoring`` ->
``engine`` (one hand) -> ``match`` (hands to the target) -> ``replay`` -> the PettingZoo env.
"""

__version__ = "0.1.0"
