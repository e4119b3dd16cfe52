"""Research code and networks of the project, outside the installed package.

The belief sampler (:mod:`research.beliefs`), the world helpers (:mod:`research.worlds`), behaviour
cloning (:mod:`research.bc`) and policy improvement from the true deal
(:mod:`research.deal_rollouts`) are used by no ``ginenv`` command, shipped agent or config: the
research reports and the benchmarks run them. A package so that they run from the repository root
as ``python -m research.bc ...``; they import ginenv's names, and nothing under ``ginenv/``,
``agents/`` or ``experiments/`` imports them (the wheel does not contain this folder).
"""
