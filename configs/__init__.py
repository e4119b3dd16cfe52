"""The shipped configs: YAML files read by name (``--config ladder``, ``ginenv config list``).

This folder is package data (installed as ``ginenv.configs``, as ``agents/`` and ``experiments/``
install as ``ginenv.agents`` and ``ginenv.experiments``): :mod:`ginenv.experiments.config_loader` reads the
files through :mod:`importlib.resources`, so they work from any folder and from a wheel. A config's
``# needs PATH: HOW`` lines say what it needs beyond the package (``ginenv config list`` shows them).
"""
