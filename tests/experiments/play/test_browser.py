"""The play and replay pages of ``ginenv play`` in a real browser (Playwright driving the system Chromium).

A scripted person plays a whole match by clicks and keys: draws with T and D and by clicking the stock,
takes and passes the upcard, discards by tap-tap and by dragging a card onto the discard pile,
reorders the hand by dragging, tries an illegal discard (the card just taken from the pile), knocks
whenever a knock is legal, opens Help over a showdown, goes through every showdown to the match's
end, then opens its replay. Two friends in two browser contexts (a desktop and a phone) play a
quick match against each other, each page checked to show only its own cards, with a spectator and
a third browser that gets no seat; one seat reloads mid-hand, one tab is dropped and opened again.
Coming back: a reload mid-hand, Replays and Back, a new tab at /, the game of the day (resumed, not
restarted, its replay hidden until it ends), and Leave. Other tests: two tabs, the start options
and the server's refusals, and the layouts at 1280x800 and 390x844 (no overlapping regions; on a
phone the 11 cards in two rows, overlapping but each corner in sight; no key hints on a touch
screen; an error banner moves nothing).

No browser is downloaded: Chromium comes from the system (``apt-get install chromium``) or from the
path in ``GINENV_CHROMIUM``; without it (or without Playwright, of the dev extra) these tests are
skipped, and fail in CI (tests/support/extras.py). Screenshots go to
``results/screenshots/`` (gitignored), or to the folder in ``GINENV_SHOTS``.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from extras import needs, needs_extra
from ginenv.experiments.play.server import BackgroundServer, create_app, serve_in_background

# GINENV_CHROMIUM, else the system's Chromium on the PATH (the names dev.py looks for).
CHROMIUM = os.environ.get("GINENV_CHROMIUM") or shutil.which("chromium") or "chromium-browser"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# GINENV_SHOTS names another folder for the screenshots.
SHOTS = Path(
    os.environ.get("GINENV_SHOTS") or Path(__file__).resolve().parents[3] / "results" / "screenshots"
)
# A short match (to 50) against a quick opponent, on fixed deals: it ends in a few hands.
OPPONENT, PRESET, SEED = "easy", "seed000_short", 4
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
KIND_WORDS = {
    "knock": "Knock",
    "undercut": "Undercut",
    "gin": "Gin",
    "big_gin": "Big gin",
    "dead": "Dead hand",
    "truncated": "Turn limit",
}


def _chromium() -> str:
    found = shutil.which(CHROMIUM) or (CHROMIUM if Path(CHROMIUM).is_file() else None)
    needs(
        "the system's Chromium",
        "apt-get install chromium (or set GINENV_CHROMIUM to the browser's path)",
        None if found else f"none at {CHROMIUM!r}",
    )
    assert found is not None
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    needs_extra("dev", "playwright")
    executable = _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[BackgroundServer, Path]]:
    replay_dir = tmp_path / "replays"
    # The tables are stored under the test's own folder (a reload or a restart reads them back).
    srv = serve_in_background(create_app(replay_dir=replay_dir, state_dir=tmp_path / "tables", pace_ms=30))
    try:
        yield srv, replay_dir
    finally:
        srv.stop()


def _shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"play-{name}.png"))


def _new_page(browser: Any, viewport: dict[str, int]) -> tuple[Any, Any, list[str]]:
    context = browser.new_context(viewport=viewport, device_scale_factor=1, has_touch=viewport["width"] < 600)
    context.set_default_timeout(15_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    return context, page, errors


@contextmanager
def _opened(browser: Any, viewport: dict[str, int]) -> Iterator[tuple[Any, Any, list[str]]]:
    """A page in a new browser context; on leaving, the page must have raised no script error (when
    the test body passed) and the context is closed either way."""
    context, page, errors = _new_page(browser, viewport)
    try:
        yield context, page, errors
        assert not errors, f"script errors on the page: {errors}"
    finally:
        context.close()


# ---------------------------------------------------------------------- reading and driving the page


def _post(request: Any, url: str, path: str, body: dict[str, Any] | None = None) -> Any:
    """``POST url+path`` through a page's request context (its cookies), as the page's own script
    sends it: JSON (``{}`` when there is nothing to say) with the page's ``Origin``."""
    headers = {"Origin": url, "Content-Type": "application/json"}
    return request.post(url + path, data=json.dumps(body or {}), headers=headers)


def _state(page: Any) -> dict[str, Any]:
    return page.evaluate("window.ginState")


def _wait_for_person(page: Any) -> dict[str, Any]:
    """Wait until the person is to move (or the hand or match is over) and return the view."""
    page.wait_for_function(
        "() => { const s = window.ginState; return !!s && (s.stage !== 'play' || s.turn === 'you'); }"
    )
    return _state(page)


def _wait_after(page: Any, before: dict[str, Any]) -> dict[str, Any]:
    """Wait until the page shows a view past ``before`` (a move made), then for the person's turn."""
    page.wait_for_function(
        """([n, hand, stage]) => { const s = window.ginState;
             return s.events.length !== n || s.hand_index !== hand || s.stage !== stage; }""",
        arg=[len(before["events"]), before["hand_index"], before["stage"]],
    )
    return _wait_for_person(page)


def _start(page: Any, url: str, opponent: str = OPPONENT, preset: str = PRESET, seed: int = SEED) -> None:
    page.goto(f"{url}/?seed={seed}")
    page.wait_for_selector("#start:visible")
    page.select_option("#opponent-select", opponent)
    page.select_option("#preset-select", preset)
    page.click("#start")
    page.wait_for_function("() => !!window.ginState && window.ginState.stage === 'play'")


def _dom_hand(page: Any) -> list[str]:
    return page.eval_on_selector_all("#hand [data-card]", "els => els.map(e => e.dataset.card)")


def _card(page: Any, card: str) -> Any:
    return page.locator(f'#hand [data-card="{card}"]')


def _press_card(page: Any, card: str) -> None:
    """Click a card of the hand near its left edge: on a phone the cards overlap, each one's corner shows."""
    locator = _card(page, card)
    box = _box(locator)
    locator.click(position={"x": min(10, box["width"] / 4), "y": box["height"] / 2})


def _box(locator: Any) -> dict[str, float]:
    """The element's box, once it is rendered: a pushed view re-renders the hand, and an element
    replaced between finding it and measuring it has no box for a moment."""
    for _ in range(40):
        locator.wait_for(state="visible")
        box = locator.bounding_box()
        if box is not None:
            return box  # type: ignore[no-any-return]
        locator.page.wait_for_timeout(25)
    raise AssertionError(f"{locator} never rendered")


def _centre(locator: Any, fx: float = 0.5, fy: float = 0.5) -> tuple[float, float]:
    box = _box(locator)
    return box["x"] + box["width"] * fx, box["y"] + box["height"] * fy


def _drag(page: Any, source: Any, target: Any, fx: float = 0.5) -> None:
    """Press on ``source``, move past the drag threshold, drop on ``target`` (at ``fx`` of its width)."""
    x0, y0 = _centre(source, 0.15)
    x1, y1 = _centre(target, fx)
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move(x0 + 4, y0 - 12, steps=3)
    page.mouse.move(x1, y1, steps=10)
    page.mouse.up()


def _tap_tap(page: Any, card: str) -> None:
    _press_card(page, card)
    page.wait_for_selector(f'#hand [data-card="{card}"].selected')
    _press_card(page, card)


# ---------------------------------------------------------------------- the match


class Person:
    """Plays by the page's controls only, choosing from window.ginState: the lowest-deadwood discard,
    a knock whenever one is legal; it rotates through the ways of drawing and discarding."""

    def __init__(self, page: Any, expect: Any) -> None:
        self.page = page
        self.expect = expect
        self.used: Counter[str] = Counter()
        self.turns = 0
        self.reorder_pending = True  # drag a card within the hand once (custom order)
        self.custom_since: int | None = None  # hand index of the custom order, to check Auto-sort

    def draw(self, s: dict[str, Any]) -> dict[str, Any]:
        page, legal = self.page, s["legal"]
        if not self.used["illegal"] and "draw_discard" in legal:
            return self.illegal_rediscard(s)
        if s["phase"] == "upcard":
            self.expect(page.locator("#take")).to_be_visible()
            self.expect(page.locator("#pass")).to_be_visible()
            how = ("key P", "pass button", "take button")[self.used["upcard"] % 3]
            self.used["upcard"] += 1
            self.used[how] += 1
            if how == "key P":
                page.keyboard.press("p")
            else:
                page.click("#pass" if how == "pass button" else "#take")
            return _wait_after(page, s)
        if self.reorder_pending and len(s["hand"]["cards"]) == 10:
            self.reorder(s)
        how = ("key T", "stock click", "key D")[self.turns % 3]
        if how == "key D" and "draw_discard" not in legal:
            how = "key T"
        self.used[how] += 1
        if how == "stock click":
            page.click("#stock")
        else:
            page.keyboard.press(how[-1].lower())
        after = _wait_after(page, s)
        if self.custom_since == after["hand_index"] and after["phase"] == "discard":
            # In a custom order a new card goes at the end.
            assert _dom_hand(page)[-1] == after["drawn"]
        return after

    def illegal_rediscard(self, s: dict[str, Any]) -> dict[str, Any]:
        """Take the upcard or the pile's top card with D, try to discard it again: refused, explained."""
        page = self.page
        page.keyboard.press("d")
        taken = _wait_after(page, s)
        card = taken["taken"]
        assert taken["phase"] == "discard" and card == s["discard_pile"][-1]
        _tap_tap(page, card)
        self.expect(page.locator("#message")).to_be_visible()
        self.expect(page.locator("#message")).to_contain_text("just took it")
        _shot(page, "illegal-rediscard")
        now = _state(page)
        assert now["hand"]["cards"] == taken["hand"]["cards"] and now["phase"] == "discard"
        assert card in _dom_hand(page)
        self.used["illegal"] += 1
        self.used["key D"] += 1
        return now

    def reorder(self, s: dict[str, Any]) -> None:
        """Drag the first card onto the right half of the last: a custom order, undone by Auto-sort."""
        page = self.page
        order = _dom_hand(page)
        assert order == s["hand"]["cards"]  # the server's order by default
        self.expect(page.locator("#autosort")).to_be_hidden()
        _drag(page, _card(page, order[0]), _card(page, order[-1]), fx=0.8)
        assert _dom_hand(page) == [*order[1:], order[0]]
        self.expect(page.locator("#autosort")).to_be_visible()
        self.reorder_pending = False
        self.custom_since = s["hand_index"]
        self.used["reorder"] += 1

    def discard(self, s: dict[str, Any]) -> dict[str, Any]:
        page, legal, hints = self.page, s["legal"], s["discard_hints"]
        self.turns += 1
        page.keyboard.press("Escape")  # no card selected
        if "big_gin" in legal:
            self.expect(page.locator("#big-gin")).to_be_visible()
            self.used["big gin"] += 1
            page.click("#big-gin")
            return _wait_after(page, s)
        knocks = [a.split()[1] for a in legal if a.startswith("knock ")]
        if knocks:
            return self.knock(s, knocks)
        self.expect(page.locator("#knock")).to_be_hidden()
        card = min((a.split()[1] for a in legal if a.startswith("discard ")), key=lambda c: (hints[c], c))
        if self.turns % 2:
            self.used["tap-tap"] += 1
            _tap_tap(page, card)
        else:
            self.used["drag to pile"] += 1
            _drag(page, _card(page, card), page.locator("#discard-pile"))
        after = _wait_after(page, s)
        if self.custom_since == after["hand_index"] and after["stage"] == "play":
            # Still the custom order, less the discarded card; Auto-sort returns to the server's order.
            assert card not in _dom_hand(page)
            self.expect(page.locator("#autosort")).to_be_visible()
            page.click("#autosort")
            assert _dom_hand(page) == after["hand"]["cards"]
            self.expect(page.locator("#autosort")).to_be_hidden()
            self.custom_since = None
            self.used["autosort"] += 1
        return after

    def knock(self, s: dict[str, Any], knocks: list[str]) -> dict[str, Any]:
        page, hints = self.page, s["discard_hints"]
        knock = page.locator("#knock")
        self.expect(knock).to_be_visible()
        for c in knocks:
            self.expect(_card(page, c)).to_have_class(re.compile(r"\bknockable\b"))
        if not self.used["knock hint"]:
            knock.click()  # nothing selected: the button says which cards can knock
            self.expect(page.locator("#message")).to_contain_text("You can knock with")
            self.used["knock hint"] += 1
        card = min(knocks, key=lambda c: (hints[c], c))
        _press_card(page, card)
        self.expect(knock).to_have_text("Gin" if hints[card] == 0 else f"Knock (deadwood {hints[card]})")
        if not self.used["knock"]:
            _shot(page, "knock-ready")
        self.used["knock"] += 1
        knock.click()
        return _wait_after(page, s)

    def showdown(self, s: dict[str, Any]) -> dict[str, Any]:
        page, sd = self.page, s["showdown"]
        self.expect(page.locator("#showdown")).to_be_visible()
        self.expect(page.locator("#showdown-kind")).to_have_text(KIND_WORDS[sd["kind"]])
        self.expect(page.locator("#showdown-title")).not_to_be_empty()
        if sd["winner"]:
            self.expect(page.locator("#showdown-points")).to_contain_text(str(sd["points"]))
        for who in ("you", "opponent"):
            side, shown = sd[who], page.locator(f"#showdown .sd-{who} .card")
            if side is None:
                assert who == "opponent" and sd["kind"] == "dead" and shown.count() == 0
                self.expect(page.locator("#showdown .sd-opponent")).to_contain_text("not shown")
            else:
                cards = {c for m in side["melds"] for c in m} | {*side["deadwood_cards"], *side["layoffs"]}
                assert shown.count() == len(cards) >= 10
        if sd["you"] and sd["you"]["layoffs"]:
            self.expect(page.locator("#showdown .sd-you .laid-off")).to_contain_text("laid off")
        self.expect(page.locator("#showdown-score")).to_contain_text(str(s["scores"]["opponent"]))
        if not self.used[f"showdown {sd['kind']}"]:
            _shot(page, f"showdown-{sd['kind']}")
        if not self.used["help in showdown"]:
            # Help opens over the showdown, and closes back to it.
            page.click("#help-button")
            self.expect(page.locator("#help")).to_be_visible()
            self.expect(page.locator("#help")).to_contain_text("Deadwood")
            page.keyboard.press("Escape")
            self.expect(page.locator("#help")).to_be_hidden()
            self.expect(page.locator("#showdown")).to_be_visible()
            self.used["help in showdown"] += 1
        self.used[f"showdown {sd['kind']}"] += 1
        page.click("#next-hand")
        page.wait_for_function(
            "(h) => window.ginState.hand_index === h + 1 && window.ginState.stage === 'play'",
            arg=s["hand_index"],
        )
        self.expect(page.locator("#showdown")).to_be_hidden()
        return _wait_for_person(page)

    def play_match(self) -> dict[str, Any]:
        s = _wait_for_person(self.page)
        for _ in range(1500):
            if s["stage"] == "over":
                return s
            if s["stage"] == "showdown":
                s = self.showdown(s)
            elif s["phase"] in ("upcard", "draw"):
                if self.turns == 3 and not self.used["eleven shot"]:
                    self.used["eleven shot"] += 1
                s = self.draw(s)
                if self.used["eleven shot"] == 1 and s["phase"] == "discard":
                    _shot(self.page, "eleven-cards")
                    self.used["eleven shot"] += 1
            else:
                s = self.discard(s)
        raise AssertionError(f"the match did not end; last view: {s}")


def test_a_person_plays_a_match_by_clicks_and_keys_and_replays_it(
    browser: Any, server: tuple[BackgroundServer, Path]
) -> None:
    from playwright.sync_api import expect

    srv, replay_dir = server
    with _opened(browser, DESKTOP) as (_context, page, _errors):
        page.goto(f"{srv.url}/?seed={SEED}")
        page.wait_for_selector("#start:visible")
        page.select_option("#opponent-select", OPPONENT)
        page.select_option("#preset-select", PRESET)
        expect(page.locator("#preset-description")).to_contain_text("match to 50 points")
        _shot(page, "setup")
        page.click("#start")
        page.wait_for_function("() => !!window.ginState && window.ginState.stage === 'play'")
        expect(page.locator("#setup")).to_be_hidden()
        expect(page.locator("#score")).to_contain_text("to 50")

        person = Person(page, expect)
        final = person.play_match()

        used = person.used
        for how in (
            "key T",
            "key D",
            "stock click",
            "tap-tap",
            "drag to pile",
            "reorder",
            "autosort",
            "illegal",
            "knock",
            "knock hint",
            "upcard",
        ):
            assert used[how] >= 1, f"the scripted person never used {how}: {dict(used)}"
        assert sum(n for k, n in used.items() if k.startswith("showdown ")) >= 1
        assert used["help in showdown"] == 1

        # The end of the match: standings with bonuses and totals, the winner, the replay file.
        result = final["match_result"]
        expect(page.locator("#match-over")).to_be_visible()
        expect(page.locator("#match-title")).to_contain_text("win")
        standings = page.locator("#standings")
        for row in ("Points", "Game bonus", "Line bonus", "Total"):
            expect(standings).to_contain_text(row)
        expect(standings.locator("tr.total")).to_contain_text(str(result["totals"]["you"]))
        expect(standings.locator("tr.total")).to_contain_text(str(result["totals"]["opponent"]))
        name = final["replay"]
        assert name and (replay_dir / name).is_file()
        expect(page.locator("#replay-link")).to_have_text(name)
        _shot(page, "match-over")

        # The replay opens on the replay page and steps with the arrow keys.
        page.click("#replay-link")
        page.wait_for_url(re.compile(r"/replay\?name="))
        expect(page.locator("#viewer")).to_be_visible()
        expect(page.locator(f'#replay-list button[data-name="{name}"]')).to_be_visible()
        expect(page.locator("#frame-text")).to_contain_text("Deal")
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        expect(page.locator("#frame-count")).to_have_text(re.compile(r"^Move 3 of \d+$"))
        expect(page.locator("#frame-text")).not_to_contain_text("Deal")
        assert page.locator("#hand-0 .card").count() >= 10
        assert page.locator("#hand-1 .card").count() >= 10
        page.keyboard.press("ArrowLeft")
        expect(page.locator("#frame-count")).to_have_text(re.compile(r"^Move 2 of \d+$"))
        page.select_option("#hand-select", str(result["hands_played"] - 1))
        page.keyboard.press("End")
        expect(page.locator("#replay-result")).to_be_visible()
        expect(page.locator("#replay-result")).to_contain_text("wins the match")
        _shot(page, "replay")

        # Any replay file from disk opens too.
        page.goto(f"{srv.url}/replay")
        page.set_input_files("#replay-file", str(replay_dir / name))
        expect(page.locator("#viewer")).to_be_visible()
        expect(page.locator("#frame-count")).to_have_text(re.compile(r"^Move 0 of \d+$"))


# ---------------------------------------------------------------------- tabs, start options, refusals


def test_two_tabs_play_two_independent_games(browser: Any, server: tuple[BackgroundServer, Path]) -> None:
    from playwright.sync_api import expect

    srv, _ = server
    with _opened(browser, DESKTOP) as (context, first, errors):
        second = context.new_page()
        second.on("pageerror", lambda err: errors.append(str(err)))
        _start(first, srv.url, seed=11)
        a = _wait_for_person(first)
        # A new tab at / returns to the match in progress (the page keeps it): no second match.
        second.goto(srv.url)
        assert _loaded(second)["id"] == a["id"]
        # Another match gets a tab of its own through its address.
        made = _post(
            second.request, srv.url, "/api/games", {"opponent": OPPONENT, "preset": PRESET, "seed": 12}
        )
        assert made.status == 201
        second.goto(f"{srv.url}/#game={made.json()['id']}")
        second.wait_for_function(
            "(id) => !!window.ginState && window.ginState.id === id", arg=made.json()["id"]
        )
        b = _wait_for_person(second)
        assert a["id"] != b["id"]
        # A move in the first tab leaves the second tab's game as it was.
        first.keyboard.press("p" if a["phase"] == "upcard" else "t")
        a2 = _wait_after(first, a)
        assert a2["events"] != a["events"]
        fetched = second.request.get(f"{srv.url}/api/games/{b['id']}").json()
        assert fetched["events"] == _state(second)["events"] == b["events"]
        # Each tab's address names its own game; a reload of either returns to it.
        assert first.evaluate("location.hash") == f"#game={a['id']}"
        assert second.evaluate("location.hash") == f"#game={b['id']}"
        first.reload()
        first.wait_for_function("() => !!window.ginState")
        assert _state(first)["id"] == a["id"] and _state(first)["events"] == a2["events"]
        # A refused move is explained and changes nothing: a discard before drawing.
        _wait_for_person(second)
        card = b["hand"]["cards"][0]
        _tap_tap(second, card)
        expect(second.locator("#message")).to_be_visible()
        expect(second.locator("#message")).to_contain_text(re.compile("upcard is offered|draw first"))
        assert _state(second)["hand"] == b["hand"]
        # New match: the old game is abandoned, the setup shows again.
        second.click("#leave")
        second.click("#leave")
        expect(second.locator("#setup")).to_be_visible()


def test_the_page_starts_at_once_with_the_command_line_choices(browser: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    app = create_app(
        replay_dir=tmp_path / "replays",
        state_dir=tmp_path / "tables",
        pace_ms=30,
        opponent="random",
        preset="seed004",
        autostart=True,
    )
    srv = serve_in_background(app)
    with _opened(browser, DESKTOP) as (_context, page, _errors):
        page.goto(srv.url)
        page.wait_for_function("() => !!window.ginState")
        s = _state(page)
        assert s["opponent"]["name"] == "random" and s["preset"] == "seed004"
        expect(page.locator("#setup")).to_be_hidden()
        expect(page.locator("#table")).to_be_visible()
        page.click("#help-button")
        expect(page.locator("#help")).to_contain_text("undercut")
        expect(page.locator("#help")).to_contain_text("you may discard the card you just took")
        page.keyboard.press("Escape")
        expect(page.locator("#help")).to_be_hidden()
        assert page.locator("a[href='/replay']").count() >= 1
        srv.stop()


# ---------------------------------------------------------------------- layouts


# On a phone the hand's cards may overlap (a fan): each card's corner (rank and suit) must stay in sight.
_OVERLAPS = """
(fan) => {
  const shown = (el) => {
    if (!el) return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden';
  };
  const box = (el, name) => {
    const r = el.getBoundingClientRect();
    return { name, left: r.left, top: r.top, right: r.right, bottom: r.bottom };
  };
  const hit = (a, b) =>
    Math.min(a.right, b.right) - Math.max(a.left, b.left) > 0.5 &&
    Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 0.5;
  const cardEls = [...document.querySelectorAll('#hand [data-card]')].filter(shown);
  const cards = cardEls.map((el) => box(el, 'card ' + el.dataset.card));
  const corners = cardEls.map((el) => box(el.querySelector('.corner'), 'corner ' + el.dataset.card));
  const others = ['#stock', '#discard-pile', '#score', '#hand-info', '#prompt', '#log', '#deadwood',
    '#knock', '#big-gin', '#autosort', '#pile-button', '#take', '#pass', '#opponent-area',
    '#help-button', '#leave', '#replays-link', '#message']
    .map((sel) => [sel, document.querySelector(sel)]).filter(([, el]) => shown(el))
    .map(([sel, el]) => box(el, sel));
  const regions = ['.topbar', '#opponent-area', '.piles', '.talk', '.toolbar', '#hand']
    .map((sel) => [sel, document.querySelector(sel)]).filter(([, el]) => shown(el))
    .map(([sel, el]) => box(el, sel));
  const found = [];
  cards.forEach((c, i) => {
    for (const o of others) if (hit(c, o)) found.push(c.name + ' / ' + o.name);
    cards.slice(i + 1).forEach((d) => {
      // A later card lies over an earlier one: it may cover the earlier card, not its corner.
      if (fan ? hit(corners[i], d) : hit(c, d)) found.push(c.name + ' / ' + d.name);
    });
    if (c.left < 0 || c.right > window.innerWidth) found.push(c.name + ' outside the window');
  });
  regions.forEach((r, i) => {
    for (const q of regions.slice(i + 1)) if (hit(r, q)) found.push(r.name + ' / ' + q.name);
  });
  const rank = document.querySelector('#hand .rank');
  const red = document.querySelector('#hand .card.red');
  const tops = cards.map((c) => c.top).sort((a, b) => a - b);
  let rows = 0;
  let last = -1e9;
  for (const t of tops) if (t - last > 30) { rows += 1; last = t; }
  return {
    overlaps: found,
    cards: cards.length,
    rows,
    cornerWidth: Math.min(...corners.map((c) => c.right - c.left)),
    scrollWidth: document.documentElement.scrollWidth,
    width: window.innerWidth,
    rankPx: parseFloat(getComputedStyle(rank).fontSize),
    red: red ? getComputedStyle(red).color : null,
  };
}
"""


@pytest.mark.parametrize(
    ("size", "viewport"), [("desktop", DESKTOP), ("phone", PHONE)], ids=["1280x800", "390x844"]
)
def test_the_table_has_no_overlapping_regions(
    browser: Any, server: tuple[BackgroundServer, Path], size: str, viewport: dict[str, int]
) -> None:
    from playwright.sync_api import expect

    srv, _ = server
    with _opened(browser, viewport) as (_context, page, _errors):
        page.goto(f"{srv.url}/?seed={SEED}")
        page.wait_for_selector("#start:visible")
        _shot(page, f"{size}-setup")
        _start(page, srv.url, seed=SEED)
        s = _wait_for_person(page)
        # The table names its rules; the key hints (T), (D), (P) show for a keyboard, not on a touch screen.
        expect(page.locator("#rules-line")).to_have_text(s["rules_line"])
        assert s["phase"] == "upcard", s["phase"]
        while s["phase"] == "upcard":
            expect(page.locator("#take")).to_be_visible()
            hints = page.locator("#take .key-hint, #pass .key-hint, #prompt .key-hint")
            assert hints.count() >= 3
            for i in range(hints.count()):
                if size == "phone":
                    expect(hints.nth(i)).to_be_hidden()
                else:
                    expect(hints.nth(i)).to_be_visible()
            _shot(page, f"{size}-upcard")
            page.keyboard.press("p")
            s = _wait_after(page, s)
        page.keyboard.press("t")
        s = _wait_after(page, s)
        assert s["phase"] == "discard" and len(s["hand"]["cards"]) == 11
        # An error floats over the table: nothing moves.
        where = "() => ['#table', '#hand', '#stock'].map((q) => document.querySelector(q).offsetTop)"
        before = page.evaluate(where)
        page.keyboard.press("t")  # drawn already: refused
        expect(page.locator("#message")).to_be_visible()
        assert page.evaluate(where) == before
        _shot(page, f"{size}-error")
        page.locator("#message").click()  # a tap hides it
        expect(page.locator("#message")).to_be_hidden()
        _press_card(page, s["hand"]["cards"][-1])  # a raised card
        page.wait_for_selector("#hand .selected")
        _shot(page, f"{size}-eleven-cards")
        found = page.evaluate(_OVERLAPS, size == "phone")
        assert found["cards"] == 11
        assert found["overlaps"] == [], found["overlaps"]
        # The 11 cards take one row on a desktop, at most two on a phone.
        assert found["rows"] <= (1 if size == "desktop" else 2), found
        assert found["scrollWidth"] <= found["width"], found
        assert found["rankPx"] >= 14, found
        assert found["red"] == "rgb(200, 16, 46)", found
        page.click("#pile-button")
        expect(page.locator("#pile-panel")).to_be_visible()
        _shot(page, f"{size}-discard-pile")
        page.keyboard.press("Escape")
        page.click("#help-button")
        expect(page.locator("#help")).to_be_visible()
        _shot(page, f"{size}-help")


# ---------------------------------------------------------------------- coming back to a match


def _loaded(page: Any) -> dict[str, Any]:
    page.wait_for_function("() => !!window.ginState")
    return _state(page)


def _position(page: Any) -> dict[str, Any]:
    """What a reload must keep: the hand (in the order shown), the discard pile, the turn."""
    s = _state(page)
    return {
        "hand_index": s["hand_index"],
        "stage": s["stage"],
        "phase": s["phase"],
        "turn": s["turn"],
        "hand": s["hand"]["cards"],
        "shown": _dom_hand(page),
        "pile": s["discard_pile"],
        "events": len(s["events"]),
        "scores": s["scores"],
    }


def _current(page: Any) -> Any:
    return page.evaluate("JSON.parse(localStorage.getItem('ginenv.current'))")


def _to_discard(page: Any) -> dict[str, Any]:
    """Pass on the upcard and draw from the stock: the person's discard, 11 cards in hand."""
    s = _wait_for_person(page)
    while s["phase"] == "upcard":
        page.keyboard.press("p")
        s = _wait_after(page, s)
    page.keyboard.press("t")
    s = _wait_after(page, s)
    assert s["phase"] == "discard", s
    return s


def test_a_reload_mid_hand_returns_to_the_same_position(
    browser: Any, server: tuple[BackgroundServer, Path]
) -> None:
    from playwright.sync_api import expect

    srv, _ = server
    with _opened(browser, DESKTOP) as (context, page, errors):
        _start(page, srv.url)
        s = _to_discard(page)
        # A custom order of the hand is kept too.
        order = _dom_hand(page)
        _drag(page, _card(page, order[0]), _card(page, order[-1]), fx=0.8)
        assert _dom_hand(page) == [*order[1:], order[0]]
        before = _position(page)
        assert page.evaluate("location.hash") == f"#game={s['id']}"
        assert _current(page) == {"kind": "game", "token": s["id"]}
        page.reload()
        after = _loaded(page)
        assert after["id"] == s["id"]
        assert _position(page) == before
        expect(page.locator("#setup")).to_be_hidden()
        expect(page.locator("#autosort")).to_be_visible()
        # A phone browser that dropped the tab: the page opened again at / returns to the match.
        page.close()
        page = context.new_page()
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.goto(srv.url)
        assert _loaded(page)["id"] == s["id"]
        assert _position(page)["pile"] == before["pile"]
        assert _position(page)["hand"] == before["hand"]
        # The match goes on from there.
        card = min(
            (a.split()[1] for a in after["legal"] if a.startswith("discard ")),
            key=lambda c: (after["discard_hints"][c], c),
        )
        _tap_tap(page, card)
        s = _wait_after(page, after)
        assert card in s["discard_pile"] or s["stage"] != "play"


def test_replays_and_back_return_to_the_match_and_leave_ends_it(
    browser: Any, server: tuple[BackgroundServer, Path]
) -> None:
    from playwright.sync_api import expect

    srv, _ = server
    with _opened(browser, PHONE) as (_context, page, _errors):
        _start(page, srv.url)
        s = _to_discard(page)
        before = _position(page)
        # Replays during a match, then Back: the same match at the same point.
        page.click("#replays-link")
        page.wait_for_url(re.compile(r"/replay$"))
        expect(page.locator("#play-link")).to_have_text("Back to the match")
        page.go_back()
        assert _loaded(page)["id"] == s["id"]
        assert _position(page) == before
        # And by the replay page's link back.
        page.click("#replays-link")
        page.wait_for_url(re.compile(r"/replay$"))
        page.click("#play-link")
        assert _loaded(page)["id"] == s["id"]
        assert _position(page)["hand"] == before["hand"]
        # Leave, confirmed: the match ends on the server and the page forgets it.
        page.click("#leave")
        expect(page.locator("#leave")).to_have_text("Leave: sure?")
        page.click("#leave")
        expect(page.locator("#setup")).to_be_visible()
        expect(page.locator("#message")).to_contain_text("Match left")
        assert _current(page) is None
        assert page.evaluate("location.hash") == ""
        assert page.request.get(f"{srv.url}/api/games/{s['id']}").status == 404
        page.reload()
        page.wait_for_selector("#start:visible")
        assert _state(page) is None
        # A link to the match left: the page says it is gone and offers New match.
        page.goto(f"{srv.url}/#game={s['id']}")
        expect(page.locator("#message")).to_contain_text("no longer on the server")
        expect(page.locator("#setup")).to_be_visible()


# ---------------------------------------------------------------------- the game of the day


def _choose(s: dict[str, Any]) -> str:
    """A plain player for the API: knock when it can, else the lowest-deadwood discard; pass; the stock."""
    legal, hints = s["legal"], s["discard_hints"]
    if "big_gin" in legal:
        return "big_gin"
    knocks = [a for a in legal if a.startswith("knock ")]
    if knocks:
        return min(knocks, key=lambda a: (hints[a.split()[1]], a))
    if "pass" in legal:
        return "pass"
    if "draw_stock" in legal:
        return "draw_stock"
    return min((a for a in legal if a.startswith("discard ")), key=lambda a: (hints[a.split()[1]], a))


def _finish_by_api(request: Any, url: str, game: str) -> dict[str, Any]:
    """Play computer match ``game`` to its end through the API (with the page's cookie)."""
    path = f"/api/games/{game}"
    s = request.get(url + path).json()
    for _ in range(5000):
        if s["stage"] == "over":
            return s
        if s["stage"] == "showdown":
            r = _post(request, url, f"{path}/next")
        elif s["turn"] == "opponent":
            r = _post(request, url, f"{path}/advance")
        else:
            r = _post(request, url, f"{path}/action", {"action": _choose(s)})
        assert r.ok, r.text()
        s = r.json()
    raise AssertionError(f"the match did not end: {s}")


def test_the_game_of_the_day_resumes_and_cannot_be_restarted(
    browser: Any, server: tuple[BackgroundServer, Path]
) -> None:
    from playwright.sync_api import expect

    srv, replay_dir = server
    with _opened(browser, DESKTOP) as (_context, page, _errors):
        page.goto(srv.url)
        page.wait_for_selector("#daily:visible")
        page.click("#daily")
        s = _loaded(page)
        assert s["daily"]
        s = _wait_for_person(page)
        page.keyboard.press("p" if s["phase"] == "upcard" else "t")
        s = _wait_after(page, s)
        # Coming back resumes it; so does asking for the game of the day again.
        page.goto(srv.url)
        assert _loaded(page)["id"] == s["id"]
        again = _post(page.request, srv.url, "/api/games", {"daily": True})
        assert again.ok and again.json()["id"] == s["id"]
        # Its replay cannot be read before it ends: not listed, not served.
        listed = page.request.get(f"{srv.url}/api/replays").json()["replays"]
        assert all("daily" not in r["name"] for r in listed), listed
        for f in replay_dir.glob("*.json"):
            assert page.request.get(f"{srv.url}/api/replays/{f.name}").status == 404, f.name
        # Played to its end (here through the API), it shows as over, and cannot be started again.
        final = _finish_by_api(page.request, srv.url, s["id"])
        page.reload()
        expect(page.locator("#match-over")).to_be_visible()
        assert final["replay"]
        # Even over, its replay stays closed until the day is: its deals are everyone's today.
        listed = page.request.get(f"{srv.url}/api/replays").json()["replays"]
        assert final["replay"] not in [r["name"] for r in listed]
        assert page.request.get(f"{srv.url}/api/replays/{final['replay']}").status == 404
        page.click("#new-match")
        page.wait_for_selector("#daily:visible")
        page.click("#daily")
        expect(page.locator("#message")).to_contain_text("you played today's game", ignore_case=True)
        expect(page.locator("#setup")).to_be_visible()
        assert _state(page) is None
        refused = _post(page.request, srv.url, "/api/games", {"daily": True})
        assert refused.status == 409


# ---------------------------------------------------------------------- a friend on another device

SUIT_SYMBOL = {"s": "\u2660", "c": "\u2663", "d": "\u2666", "h": "\u2665"}

# Every card the page shows (hand, piles, showdowns) and its visible text. Elements that are not
# rendered (a panel closed since, such as the last hand's showdown, shown when it was public) do not count.
_SEEN = """
() => {
  const cards = new Set();
  document.querySelectorAll('[data-card], [data-c]').forEach((e) => {
    if (e.getClientRects().length) cards.add(e.dataset.card || e.dataset.c);
  });
  return { cards: [...cards], text: document.body.innerText };
}
"""


def _label(card: str) -> str:
    return ("10" if card[0] == "T" else card[0]) + SUIT_SYMBOL[card[1]]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _assert_private(page: Any, mine: dict[str, Any], hidden: set[str], who: str) -> None:
    """No card of ``hidden`` (the other's cards that no rule has shown) in the page or its view."""
    seen = page.evaluate(_SEEN)
    leaked = hidden & set(seen["cards"])
    assert not leaked, f"{who} shows the other's cards {leaked}"
    for card in hidden:
        assert not re.search(rf"(?<![0-9]){re.escape(_label(card))}", seen["text"]), f"{who} names {card}"
        for text in _strings(mine):
            assert not re.search(rf"\b{card}\b", text), f"{who}'s view names {card}: {text!r}"


def _settled(pages: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each page's view once all show the same version of the table (a move reaches the two screens
    a few milliseconds apart; comparing a fresh view with a stale one would mix two hands)."""
    for _ in range(200):
        views = {who: _state(p) for who, p in pages.items()}
        if len({v.get("version") for v in views.values()}) == 1:
            return views
        next(iter(pages.values())).wait_for_timeout(25)
    raise AssertionError(
        f"the pages never showed the same version: {[v.get('version') for v in views.values()]}"
    )


def _hidden(of: dict[str, Any], seen_by: dict[str, Any]) -> set[str]:
    """The cards of ``of``'s hand that ``seen_by`` may not know: not taken from the pile, not on it."""
    return set(of["hand"]["cards"]) - set(seen_by["opponent_known"]) - set(seen_by["discard_pile"])


def _same_moment(page: Any, s: dict[str, Any]) -> dict[str, Any]:
    """Wait until ``page`` shows the table where ``s`` (the other seat's view) is: same hand, same moves."""
    page.wait_for_function(
        """([hand, n, stage]) => { const v = window.ginState;
             return !!v && v.hand_index === hand && v.events.length === n && v.stage === stage; }""",
        arg=[s["hand_index"], len(s["events"]), s["stage"]],
    )
    return _state(page)


def _moved(page: Any, before: dict[str, Any]) -> dict[str, Any]:
    page.wait_for_function(
        """([n, hand, stage]) => { const s = window.ginState;
             return s.events.length !== n || s.hand_index !== hand || s.stage !== stage; }""",
        arg=[len(before["events"]), before["hand_index"], before["stage"]],
    )
    return _state(page)


def _friend_move(page: Any, s: dict[str, Any], expect: Any, used: Counter[str]) -> None:
    """One move of the seat to play, by the page's controls: keys, clicks, taps and drags in turn."""
    legal, hints = s["legal"], s["discard_hints"]
    n = used[f"phase {s['phase']}"]
    used[f"phase {s['phase']}"] += 1
    if s["phase"] == "upcard":
        how = ("key P", "pass button", "take button")[n % 3]
        if how == "key P":
            page.keyboard.press("p")
        else:
            page.click("#pass" if how == "pass button" else "#take")
    elif s["phase"] == "draw":
        how = ("key T", "stock click", "key D")[n % 3]
        if how == "key D" and "draw_discard" not in legal:
            how = "key T"
        if how == "stock click":
            page.click("#stock")
        else:
            page.keyboard.press(how[-1].lower())
    else:
        page.keyboard.press("Escape")
        knocks = [a.split()[1] for a in legal if a.startswith("knock ")]
        if "big_gin" in legal:
            how = "big gin"
            page.click("#big-gin")
        elif knocks:
            how = "knock"
            card = min(knocks, key=lambda c: (hints[c], c))
            _press_card(page, card)
            expect(page.locator("#knock")).to_have_text(
                "Gin" if hints[card] == 0 else f"Knock (deadwood {hints[card]})"
            )
            page.click("#knock")
        else:
            card = min((a.split()[1] for a in legal if a.startswith("discard ")), key=lambda c: (hints[c], c))
            how = ("tap-tap", "drag to pile")[n % 2]
            if how == "tap-tap":
                _tap_tap(page, card)
            else:
                _drag(page, _card(page, card), page.locator("#discard-pile"))
    used[how] += 1


def _friend_page(context: Any, errors: list[str]) -> Any:
    page = context.new_page()
    page.on("pageerror", lambda err: errors.append(str(err)))
    return page


def _open_friend_table(host: Any, url: str, name: str = "Ann", target: str = "10") -> dict[str, Any]:
    host.goto(url)
    host.wait_for_selector("#start:visible")
    host.click("#mode-friend")
    host.fill("#host-name", name)
    host.select_option("#preset-select", "standard")
    host.select_option("#target-select", target)
    host.click("#create-friend")
    host.wait_for_function("() => !!window.ginState && window.ginState.kind === 'friend'")
    return _state(host)


def _join(guest: Any, invite: str, name: str = "Bob") -> dict[str, Any]:
    guest.goto(invite)
    guest.wait_for_selector("#join:visible")
    guest.fill("#join-name", name)
    guest.click("#join-button")
    guest.wait_for_function("() => !!window.ginState && window.ginState.kind === 'friend'")
    return _state(guest)


def _shoot_both(pages: dict[str, Any], label: str) -> None:
    """Both seats at 1280x800 and at 390x844."""
    for size, viewport in (("1280x800", DESKTOP), ("390x844", PHONE)):
        for who, page in pages.items():
            old = page.viewport_size
            page.set_viewport_size(viewport)
            page.wait_for_timeout(150)
            _shot(page, f"friend-{label}-{who}-{size}")
            page.set_viewport_size(old)
    for page in pages.values():
        page.wait_for_timeout(100)


@pytest.mark.long  # a whole match through two pages
def test_two_friends_play_a_match_each_seeing_only_their_own_cards(
    browser: Any, server: tuple[BackgroundServer, Path]
) -> None:
    from playwright.sync_api import expect

    srv, replay_dir = server
    with (
        _opened(browser, DESKTOP) as (_ctx_a, host, errors),
        _opened(browser, PHONE) as (ctx_b, guest, _errors_b),
        _opened(browser, DESKTOP) as (_ctx_c, third, _),
    ):
        # Ann sets the table up: a quick match to 10, the links to send.
        a = _open_friend_table(host, srv.url)
        assert a["you"]["name"] == "Ann" and a["waiting_for"] == "join"
        expect(host.locator("#invite-box")).to_be_visible()
        invite = host.input_value("#invite-link")
        watch = host.input_value("#watch-link")
        assert invite == f"{srv.url}{a['invite']}" and "#join=" in invite
        assert watch == f"{srv.url}{a['watch']}" and "#watch=" in watch
        expect(host.locator("#prompt")).to_contain_text("invitation")
        expect(host.locator("#rules-line")).to_contain_text("match to 10")
        assert host.evaluate("location.hash").startswith("#seat=")
        _shoot_both({"host": host}, "invite")

        # Bob opens the invitation on his phone, gives his name and sits down.
        b = _join(guest, invite)
        assert b["you"]["name"] == "Bob" and b["opponent"]["name"] == "Ann"
        assert guest.evaluate("location.hash").startswith("#seat=")
        expect(host.locator("#invite-box")).to_be_hidden()
        expect(host.locator("#opponent-name")).to_have_text("Bob")
        expect(guest.locator("#opponent-name")).to_have_text("Ann")
        host.wait_for_function(
            "() => window.ginState.waiting_for === null && window.ginState.opponent.connected"
        )
        expect(host.locator("#status")).to_be_hidden()

        # A third browser: no seat without a token; the invitation seats one person only; a spectator
        # link shows no hand.
        third.goto(srv.url)
        third.wait_for_selector("#start:visible")
        assert _state(third) is None and third.locator("#hand [data-card]").count() == 0
        third.goto(invite)
        third.wait_for_selector("#join:visible")
        third.fill("#join-name", "Eve")
        third.click("#join-button")
        expect(third.locator("#message")).to_be_visible()
        assert _state(third) is None and third.locator("#hand [data-card]").count() == 0
        assert third.request.get(f"{srv.url}/api/seats/not-a-seat").status == 404
        third.goto(watch)
        third.wait_for_function("() => !!window.ginState && window.ginState.spectator")
        expect(third.locator("#score")).to_contain_text("Ann")
        expect(third.locator("#score")).to_contain_text("Bob")
        assert third.locator("#hand [data-card]").count() == 0
        expect(third.locator("#watch-note")).to_be_visible()
        expect(third.locator("#seat0-name")).to_have_text("Ann")
        expect(third.locator("#opponent-name")).to_have_text("Bob")
        _shot(third, "friend-spectator")

        pages = {"host": host, "guest": guest}
        used: Counter[str] = Counter()
        moves = 0
        for _ in range(800):
            views = _settled(pages)
            va, vb = views["host"], views["guest"]
            if va["stage"] == "over" and vb["stage"] == "over":
                break
            if va["stage"] == "play" and vb["stage"] == "play":
                # Each seat shows its own cards only; the spectator shows neither hand.
                _assert_private(host, va, _hidden(vb, va), "Ann's page")
                _assert_private(guest, vb, _hidden(va, vb), "Bob's page")
                sv = _same_moment(third, va)
                public = set(va["discard_pile"]) | set(va["opponent_known"]) | set(vb["opponent_known"])
                both = set(va["hand"]["cards"]) | set(vb["hand"]["cards"])
                _assert_private(third, sv, both - public, "the spectator's page")
                assert sv["hand"]["cards"] == [] and sv["legal"] == []
            if va["stage"] == "showdown" or vb["stage"] == "showdown":
                if va["stage"] == "showdown":  # a friend table is not rated: no "Where you stand"
                    expect(host.locator("#showdown")).to_be_visible()
                    expect(host.locator("#standing")).to_be_hidden()
                # Next hand starts when both pressed it; the first to press waits for the other.
                host.click("#next-hand")
                expect(host.locator("#next-hand")).to_be_disabled()
                expect(host.locator("#showdown-wait")).to_contain_text("Bob")
                guest.click("#next-hand")
                for p in pages.values():
                    p.wait_for_function(
                        "(h) => window.ginState.hand_index > h || window.ginState.stage === 'over'",
                        arg=va["hand_index"],
                    )
                continue
            actor = "host" if va["turn"] == "you" else "guest" if vb["turn"] == "you" else None
            assert actor is not None, (va["turn"], vb["turn"], va["waiting_for"], vb["waiting_for"])
            other = "guest" if actor == "host" else "host"
            s = views[actor]
            if moves == 3:
                # A reload mid-hand returns the seat to the same position.
                before = _position(pages[actor])
                pages[actor].reload()
                _loaded(pages[actor])
                assert _position(pages[actor]) == before
                used["reload"] += 1
            if moves == 4:
                _shoot_both(pages, "mid-hand")
            if moves == 6:
                # Bob's tab is dropped: Ann sees it; the page opened again brings him back to his seat.
                guest.close()
                expect(host.locator("#status")).to_contain_text("lost the connection", timeout=20_000)
                expect(host.locator("#presence")).to_have_class(re.compile(r"\boff\b"))
                guest = _friend_page(ctx_b, errors)
                pages["guest"] = guest
                guest.goto(srv.url)
                _loaded(guest)
                host.wait_for_function("() => window.ginState.waiting_for === null", timeout=20_000)
                expect(host.locator("#status")).to_be_hidden()
                used["dropped tab"] += 1
                s = _state(pages[actor])
            _friend_move(pages[actor], s, expect, used)
            after = _moved(pages[actor], s)
            _same_moment(pages[other], after)  # the move shows on the other screen at once
            moves += 1
        else:
            raise AssertionError("the friend match did not end")

        for how in ("tap-tap", "drag to pile", "key T", "stock click"):
            assert used[how] >= 1, dict(used)
        assert used["reload"] == 1 and used["dropped tab"] == 1 and used["knock"] + used["big gin"] >= 1
        va, vb = _state(host), _state(guest)
        assert va["match_result"]["winner"] in ("you", "opponent")
        assert {va["match_result"]["winner"], vb["match_result"]["winner"]} == {"you", "opponent"}
        expect(host.locator("#match-over")).to_be_visible()
        expect(guest.locator("#match-over")).to_be_visible()
        expect(guest.locator("#standing")).to_be_hidden()
        winner = "Ann" if va["match_result"]["winner"] == "you" else "Bob"
        expect(third.locator("#match-title")).to_contain_text(winner)
        _shoot_both(pages, "match-over")
        assert va["replay"] and (replay_dir / va["replay"]).is_file()
        # The replay names the two players.
        host.click("#replay-link")
        host.wait_for_url(re.compile(r"/replay\?name="))
        expect(host.locator("#hand-0 h3")).to_contain_text("Ann")
        expect(host.locator("#hand-1 h3")).to_contain_text("Bob")


def test_a_friend_comes_back_from_replays_and_leave_ends_the_match_for_both(
    browser: Any, server: tuple[BackgroundServer, Path]
) -> None:
    from playwright.sync_api import expect

    srv, _ = server
    with (
        _opened(browser, DESKTOP) as (_ctx_a, host, _errors),
        _opened(browser, PHONE) as (_ctx_b, guest, _errors_b),
    ):
        a = _open_friend_table(host, srv.url, target="")
        _join(guest, host.input_value("#invite-link"))
        host.wait_for_function("() => window.ginState.waiting_for === null")
        # The first hand, played through the API (a match to 100 goes on after it): both pages follow.
        seats = {p: p.evaluate("decodeURIComponent(location.hash.slice(6))") for p in (host, guest)}
        for _ in range(400):
            views = {p: p.request.get(f"{srv.url}/api/seats/{t}").json() for p, t in seats.items()}
            if any(v["stage"] != "play" for v in views.values()):
                break
            mover = next(p for p, v in views.items() if v["turn"] == "you")
            r = _post(
                mover.request, srv.url, f"/api/seats/{seats[mover]}/action", {"action": _choose(views[mover])}
            )
            assert r.ok, r.text()
        assert views[host]["stage"] == "showdown", views[host]["stage"]
        expect(host.locator("#showdown")).to_be_visible()
        expect(guest.locator("#showdown")).to_be_visible()
        # Next hand starts once both pressed it; the first to press waits for the other.
        host.click("#next-hand")
        expect(host.locator("#next-hand")).to_be_disabled()
        expect(host.locator("#next-hand")).to_have_text("Waiting for Bob\u2026")
        expect(host.locator("#showdown-wait")).to_contain_text("Waiting for Bob")
        _shoot_both({"host": host, "guest": guest}, "showdown")
        host.reload()  # a reload keeps the press
        expect(host.locator("#next-hand")).to_be_disabled()
        guest.click("#next-hand")
        for p in (host, guest):
            p.wait_for_function("() => window.ginState.hand_index === 1 && window.ginState.stage === 'play'")
            expect(p.locator("#showdown")).to_be_hidden()
        # Bob looks at the replays and comes back with Back: his seat, as it was.
        before = _position(guest)
        guest.click("#replays-link")
        guest.wait_for_url(re.compile(r"/replay$"))
        guest.go_back()
        _loaded(guest)
        assert _position(guest) == before
        # Ann reloads: the same seat (the invitation is gone from her view, the spectator link stays).
        host.reload()
        s = _loaded(host)
        assert s["you"]["seat"] == 0 and s["invite"] is None and s["watch"] == a["watch"]
        expect(host.locator("#links-button")).to_be_visible()
        host.click("#links-button")
        expect(host.locator("#share-panel")).to_be_visible()
        assert host.input_value("#share-watch").endswith(a["watch"])
        host.keyboard.press("Escape")
        # Ann leaves: the match ends for Bob too, and her page forgets the table.
        host.click("#leave")
        host.click("#leave")
        expect(host.locator("#setup")).to_be_visible()
        assert _current(host) is None
        guest.wait_for_function("() => window.ginState.stage === 'over'")
        expect(guest.locator("#match-over")).to_be_visible()
        expect(guest.locator("#match-title")).to_contain_text("Ann left")
        guest.click("#new-match")
        expect(guest.locator("#setup")).to_be_visible()
        assert _current(guest) is None


# ---------------------------------------------------------------------- a page of another site


#: A page of another origin that tries to start a match at the play server, as any site could:
#: a ``no-cors`` fetch (no preflight) and a form (its body made to look like JSON).
CROSS_SITE_PAGE = """<!doctype html><html><body>
<form id="form" method="post" enctype="text/plain" action="{url}/api/games">
  <input name='{{"opponent": "random", "x": "' value='"}}'>
</form>
<script>
  window.fetched = false;
  fetch('{url}/api/games', {{method: 'POST', mode: 'no-cors'}})
    .then(() => fetch('{url}/api/games', {{method: 'POST', mode: 'no-cors',
                                           headers: {{'Content-Type': 'text/plain'}}, body: '{{}}'}}))
    .finally(() => {{ window.fetched = true; }});
</script></body></html>"""


@contextmanager
def _other_site(page: str) -> Iterator[str]:
    """``page`` served at / by a small HTTP server of another origin (another port); its URL."""
    import http.server
    import threading

    body = page.encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{site.server_address[1]}"
    finally:
        site.shutdown()
        site.server_close()


def test_only_the_page_itself_starts_matches_and_another_sites_page_cannot(
    browser: Any, server: tuple[BackgroundServer, Path]
) -> None:
    from playwright.sync_api import expect

    srv, _ = server
    store = srv.app.state.store
    with _opened(browser, DESKTOP) as (_context, page, _errors):
        # The page itself: its match starts, the person moves and the computer answers (a
        # body-less change, sent as {} by the page's script).
        _start(page, srv.url)
        s = _wait_for_person(page)
        page.keyboard.press("p" if s["phase"] == "upcard" else "t")
        _wait_after(page, s)
        assert len(store) == 1
        # A page of another origin, in the same browser (its cookie included), tries to start one.
        answers: list[tuple[str, int]] = []
        other = page.context.new_page()
        other.on(
            "response",
            lambda r: answers.append((r.request.method, r.status)) if r.url.startswith(srv.url) else None,
        )
        with _other_site(CROSS_SITE_PAGE.format(url=srv.url)) as site:
            other.goto(site)
            other.wait_for_function("() => window.fetched === true")
            with other.expect_navigation():
                other.evaluate("document.getElementById('form').submit()")
        # All three reached the server and were refused there: no table was made.
        assert answers == [("POST", 403)] * 3, answers
        assert "state changes are accepted only from this server's own page" in other.content()
        assert len(store) == 1
        other.close()
        # The page's own body-less DELETE (Leave) passes: the match ends.
        page.click("#leave")
        page.click("#leave")
        expect(page.locator("#setup")).to_be_visible()
        assert len(store) == 0


# ---------------------------------------------------------------------- where you stand


def _signed(x: float) -> str:
    """A number as the rating panel writes it: signed, one decimal (JavaScript's Math.round), 0.0 bare."""
    text = f"{math.floor(x * 10 + 0.5) / 10:.1f}"
    if text in ("0.0", "-0.0"):
        return "0.0"
    return f"+{text}" if x > 0 else text


def _standing_words(me: dict[str, Any], labels: dict[str, str]) -> str:
    """The panel's sentence for an answer of ``GET /api/me`` with a rating, spelled here on its own."""
    below, above = me["between"]
    if below and above:
        where = f"between {labels[below]} and {labels[above]}"
    elif above:
        where = f"below {labels[above]}, the lowest level"
    else:
        where = f"above {labels[below]}, the highest level"
    n = me["hands"]
    return (
        f"You play at {_signed(me['rating'])} [{_signed(me['low'])}, {_signed(me['high'])}] points a hand, "
        f"{where}, over {n} hand{'' if n == 1 else 's'}."
    )


def _me(page: Any, url: str) -> dict[str, Any]:
    answer = page.request.get(f"{url}/api/me")
    assert answer.ok, answer.text()
    return answer.json()  # type: ignore[no-any-return]


def _panel_shows(page: Any, hands: int) -> Any:
    """The rating panel once it shows ``hands`` hands (its fetch answered); returns its locator."""
    page.wait_for_selector(f'#standing[data-hands="{hands}"][aria-busy="false"]')
    return page.locator("#standing")


def test_the_rating_panel_shows_where_you_stand_after_each_hand_and_deletes_the_record(
    browser: Any, server: tuple[BackgroundServer, Path]
) -> None:
    from playwright.sync_api import expect

    srv, _ = server
    with _opened(browser, DESKTOP) as (_context, page, _errors):
        page.goto(srv.url)
        page.wait_for_selector("#start:visible")
        labels = {
            o["name"]: o["label"] for o in page.request.get(f"{srv.url}/api/options").json()["opponents"]
        }
        # Before any hand: one line, nothing to delete.
        panel = _panel_shows(page, 0)
        expect(panel.locator("#standing-sentence")).to_have_text(
            "Your rating appears here after your first finished hand against the computer."
        )
        expect(page.locator("#forget-me")).to_be_hidden()

        # One hand against Easy under the standard rules, played on the page by its controls.
        _start(page, srv.url, opponent="easy", preset="standard", seed=SEED)
        person = Person(page, expect)
        s = _wait_for_person(page)
        for _ in range(300):
            if s["stage"] != "play":
                break
            s = person.draw(s) if s["phase"] in ("upcard", "draw") else person.discard(s)
        assert s["stage"] in ("showdown", "over"), s["stage"]
        expect(page.locator("#showdown" if s["stage"] == "showdown" else "#match-over")).to_be_visible()
        panel = _panel_shows(page, 1)
        me = _me(page, srv.url)
        assert me["hands"] == 1 and me["rating"] is not None and list(me["levels"]) == ["easy"]
        expect(panel.locator("#standing-sentence")).to_have_text(_standing_words(me, labels))
        expect(panel.locator("#standing-levels")).to_contain_text("Easy")
        expect(panel.locator("#standing-plot svg")).to_be_visible()
        assert panel.locator("#standing-plot .plot-band").count() == 1  # one hand: one bar
        expect(page.locator("#forget-me")).to_be_visible()
        _shot(page, "standing-first-hand")

        # The rest of the match through the page's own calls (its cookie), then the page again: the
        # match's end shows the rating over every hand, tighter, with its history plotted.
        final = _finish_by_api(page.request, srv.url, s["id"])
        page.reload()
        expect(page.locator("#match-over")).to_be_visible()
        hands = final["match_result"]["hands_played"]
        panel = _panel_shows(page, hands)
        me = _me(page, srv.url)
        assert me["hands"] == hands >= 2 and [h["hands"] for h in me["history"]] == list(range(1, hands + 1))
        expect(panel.locator("#standing-sentence")).to_have_text(_standing_words(me, labels))
        first = me["history"][0]
        assert me["high"] - me["low"] < first["high"] - first["low"]
        points = panel.locator("#standing-plot polyline").get_attribute("points")
        assert points is not None and len(points.split()) == hands
        expect(panel.locator("#standing-plot title")).to_contain_text(f"{hands} hands")
        _shot(page, "standing-match-over")

        # Delete my record: asks first (dismissed: nothing happens), then deletes it.
        page.once("dialog", lambda dialog: dialog.dismiss())
        page.click("#forget-me")
        page.wait_for_timeout(200)
        assert _me(page, srv.url)["hands"] == hands
        asked: list[str] = []

        def accept(dialog: Any) -> None:
            asked.append(dialog.message)
            dialog.accept()

        page.once("dialog", accept)
        page.click("#forget-me")
        expect(panel.locator("#standing-sentence")).to_have_text(
            "Your record is deleted: this server keeps no hand of yours."
        )
        assert asked and "cannot be undone" in asked[0]
        expect(page.locator("#forget-me")).to_be_hidden()
        gone = _me(page, srv.url)
        assert (gone["hands"], gone["rating"], gone["history"]) == (0, None, [])
        # Back at New match, the person starts again from nothing.
        page.click("#new-match")
        page.wait_for_selector("#start:visible")
        expect(_panel_shows(page, 0).locator("#standing-sentence")).to_contain_text(
            "after your first finished hand"
        )


def test_a_preset_without_a_ladder_run_shows_margins_only_and_says_why(
    browser: Any, server: tuple[BackgroundServer, Path]
) -> None:
    from playwright.sync_api import expect

    srv, _ = server
    with _opened(browser, PHONE) as (_context, page, _errors):
        _start(page, srv.url, opponent=OPPONENT, preset=PRESET, seed=SEED)
        s = _wait_for_person(page)
        final = _finish_by_api(page.request, srv.url, s["id"])
        page.reload()
        expect(page.locator("#match-over")).to_be_visible()
        hands = final["match_result"]["hands_played"]
        panel = _panel_shows(page, hands)
        me = page.request.get(f"{srv.url}/api/me?preset={PRESET}").json()
        assert me["hands"] == hands and me["rating"] is None and me["ladder"] is None
        expect(panel.locator("#standing-sentence")).to_have_text(
            re.compile(
                rf"^No ladder run of the {PRESET} preset is recorded .*: margins against each level only\.$"
            )
        )
        expect(panel.locator("#standing-levels")).to_contain_text(str(hands))
        expect(panel.locator("#standing-plot")).to_be_hidden()
        _shot(page, "standing-margins-only")
