"""gin_cautious: a computer level of ginenv from a package of its own, and its compiled twin.

``pyproject.toml`` beside this folder names both to ginenv: the level as the agent ``cautious``
(entry-point group ``ginenv.agents``) and its compiled policy as the batched engine's opponent
``cautious`` (group ``ginenv.compiled_policies``). Installed (``pip install -e .``), every command,
config and process of ginenv knows them by that name.
"""
