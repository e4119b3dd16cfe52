"""The difficulty levels, one file each with its strategy in the docstring (easy, normal, hard,
expert, master), and what they share: the heuristics of ``common`` and the opponent model of
``belief``."""
