"""Experiments on top of the env and the agents: the command line (``cli``), evaluation (``eval``:
the harness, statistics, ratings, luck, reports, configs, ``ginenv rate``), training (``train``:
PPO, behaviour cloning, the SB3 bridge) and play in the browser (``play``: the table, its server
and pages). See docs/ARCHITECTURE.md for the layers and how data flows."""
