"""The difficulty levels, one file each with its strategy in the docstring (easy, normal, hard,
expert, master), and what they share: the card evaluation of ``heuristics`` (compiled in
``heuristics_compiled``), the turn structure of ``level_base`` and the opponent model of ``belief``."""
