"""Result kinds have one list: the hand record's. The play server words each of them
(experiments/play/words.py), sends the words with every showdown and replay, and the pages keep no
list of kinds of their own (experiments/play/static/)."""

from __future__ import annotations

import random
import re

from ginenv.experiments.play.frames import replay_frames
from ginenv.experiments.play.server import STATIC_DIR
from ginenv.experiments.play.words import KIND_WORDS

from ginenv.kernels.hand import RESULT_KINDS
from ginenv.match import Match
from ginenv.replay import match_replay
from ginenv.rules import Rules


def test_every_result_kind_has_words_in_the_record_s_order() -> None:
    assert tuple(KIND_WORDS) == RESULT_KINDS
    assert all(isinstance(words, str) and words.strip() for words in KIND_WORDS.values())


def test_the_pages_keep_no_list_of_result_kinds() -> None:
    # The words the server sends are the only ones: no page maps a kind to words of its own
    # (``dead: 'Dead hand'``), nor keeps a table named for them.
    kinds = "|".join(RESULT_KINDS)
    entry = re.compile(rf"\b({kinds})\s*:\s*['\"`]")
    for path in sorted(STATIC_DIR.glob("*.js")):
        text = path.read_text(encoding="utf-8")
        assert not entry.search(text), f"{path.name} words a result kind itself: {entry.search(text)}"
        assert "KIND_WORDS" not in text, path.name


def test_a_replay_s_frames_carry_the_words_of_every_kind() -> None:
    rng = random.Random(3)
    match = Match(rules=Rules(), rng=rng, hand_limit=3)
    while not match.is_over:
        match.step(rng.choice(match.legal_actions()))
    frames = replay_frames(match_replay(match))
    assert frames["kind_words"] == KIND_WORDS
    assert all(h["result"]["kind"] in frames["kind_words"] for h in frames["hands"] if h["result"])
