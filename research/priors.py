"""``master_prior`` with a research network of this folder as its prior, as ``file.py:Name`` specs.

``master_prior`` (:class:`ginenv.agents.neural.search.PriorMasterAgent`) re-ranks master's scored
options by the shipped network's log-probabilities; the classes here swap in a network of
``research/`` and nothing else, so that a fresh clone can play them by name::

    ginenv match research/priors.py:PriorN3 master --hands 2000 --seed 1

(docs/reports/2026-12-03-research-priors-for-master-prior.md has the figures.) The package never
imports this file: it is research code, run only as a spec.
"""

from __future__ import annotations

from pathlib import Path

from ginenv.agents.neural.search import PriorMasterAgent

HERE = Path(__file__).resolve().parent


class PriorN3(PriorMasterAgent):
    """master's search with ``dr_n3.pt`` as the prior over its scored options (temperature 1 point
    per nat, as ``master_prior``)."""

    name = "master_prior_dr_n3"
    checkpoint = str(HERE / "dr_n3.pt")


class PriorS4(PriorMasterAgent):
    """master's search with ``dr_s4.pt`` as the prior over its scored options (temperature 1 point
    per nat, as ``master_prior``)."""

    name = "master_prior_dr_s4"
    checkpoint = str(HERE / "dr_s4.pt")
