"""Moves the play tests make through the API of a computer match: a quick person's policy, one
step (the person's move, the computer's, or Next hand) and a whole match to its end."""

from __future__ import annotations

import random
from typing import Any

from fastapi.testclient import TestClient


def _policy(view: dict[str, Any], rng: random.Random) -> str:
    legal = view["legal"]
    knocks = [a for a in legal if a.startswith("knock")]
    if knocks:
        return rng.choice(knocks)
    hints = view["discard_hints"]
    if hints:
        return f"discard {min(hints, key=lambda card: hints[card])}"
    return rng.choice(legal)


def step(c: TestClient, view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """One move of a computer match: the person's, the computer's, or Next hand."""
    gid = view["id"]
    if view["stage"] == "showdown":
        r = c.post(f"/api/games/{gid}/next", json={})  # {}: what the page sends, JSON as every change
    elif view["turn"] == "opponent":
        r = c.post(f"/api/games/{gid}/advance", json={})
    else:
        r = c.post(f"/api/games/{gid}/action", json={"action": _policy(view, rng)})
    assert r.status_code == 200, r.json()
    return r.json()


def finish(c: TestClient, view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Play a computer match to its end; returns the last view."""
    for _ in range(3000):
        if view["stage"] == "over":
            return view
        view = step(c, view, rng)
    raise AssertionError("the match did not end")


def both_move(c: TestClient, seats: list[str], rng: random.Random) -> None:
    """Each seat of a friend table (its two seat tokens) makes at least one move."""
    moved = [False, False]
    for _ in range(20):
        if all(moved):
            return
        for index, token in enumerate(seats):
            view = c.get(f"/api/seats/{token}").json()
            if view["legal"] and view["stage"] == "play":
                r = c.post(f"/api/seats/{token}/action", json={"action": _policy(view, rng)})
                assert r.status_code == 200, r.json()
                moved[index] = True
    raise AssertionError("the seats did not both move")
