"""The difficulty levels, one file each with its strategy in the docstring (easy, normal, hard,
expert, master), and what they share: the card evaluation of ``heuristics`` (its numba kernels in
``kernels``), the turn structure of ``base`` and the opponent model of ``belief``."""
