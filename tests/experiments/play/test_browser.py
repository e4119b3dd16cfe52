"""The play and replay pages of ``ginenv play`` in a real browser (Playwright driving the system Chromium).

A scripted person plays a whole match by clicks and keys: draws with T and D and by clicking the stock,
takes and passes the upcard, discards by tap-tap and by dragging a card onto the discard pile,
reorders the hand by dragging, tries an illegal discard (the card just taken from the pile), knocks
whenever a knock is legal, goes through every showdown to the match's end, then opens its replay.
Other tests: two tabs are two games, the start options and the server's refusals, and the layouts
at 1280x800 and 390x844 have no overlapping regions.

No browser is downloaded: Chromium comes from the system (``apt-get install chromium``) or from the
path in ``GINENV_CHROMIUM``; without it these tests fail, they are never skipped. Screenshots go to
``results/screenshots/`` (gitignored).
"""

from __future__ import annotations

import os
import re
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
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
SHOTS = Path(__file__).resolve().parents[3] / "results" / "screenshots"
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
    if found is None:
        pytest.fail(
            f"Chromium not found at {CHROMIUM!r}: the browser tests of `ginenv play` drive the system "
            "Chromium; apt-get install chromium (or set GINENV_CHROMIUM to the browser's path)"
        )
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the browser tests need Playwright's Python package: pip install -e '.[dev]'")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[BackgroundServer, Path]]:
    replay_dir = tmp_path / "replays"
    srv = serve_in_background(create_app(replay_dir=replay_dir, pace_ms=30))
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


# ---------------------------------------------------------------------- reading and driving the page


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


def _centre(locator: Any, fx: float = 0.5, fy: float = 0.5) -> tuple[float, float]:
    box = locator.bounding_box()
    assert box is not None
    return box["x"] + box["width"] * fx, box["y"] + box["height"] * fy


def _drag(page: Any, source: Any, target: Any, fx: float = 0.5) -> None:
    """Press on ``source``, move past the drag threshold, drop on ``target`` (at ``fx`` of its width)."""
    x0, y0 = _centre(source)
    x1, y1 = _centre(target, fx)
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move(x0 + 4, y0 - 12, steps=3)
    page.mouse.move(x1, y1, steps=10)
    page.mouse.up()


def _tap_tap(page: Any, card: str) -> None:
    _card(page, card).click()
    page.wait_for_selector(f'#hand [data-card="{card}"].selected')
    _card(page, card).click()


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
        _card(page, card).click()
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
        for who in ("you", "computer"):
            side, shown = sd[who], page.locator(f"#showdown .sd-{who} .card")
            if side is None:
                assert who == "computer" and sd["kind"] == "dead" and shown.count() == 0
                self.expect(page.locator("#showdown .sd-computer")).to_contain_text("not shown")
            else:
                cards = {c for m in side["melds"] for c in m} | {*side["deadwood_cards"], *side["layoffs"]}
                assert shown.count() == len(cards) >= 10
        if sd["you"] and sd["you"]["layoffs"]:
            self.expect(page.locator("#showdown .sd-you .laid-off")).to_contain_text("laid off")
        self.expect(page.locator("#showdown-score")).to_contain_text(str(s["scores"]["computer"]))
        if not self.used[f"showdown {sd['kind']}"]:
            _shot(page, f"showdown-{sd['kind']}")
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
    context, page, errors = _new_page(browser, DESKTOP)
    try:
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

        # The end of the match: standings with bonuses and totals, the winner, the replay file.
        result = final["match_result"]
        expect(page.locator("#match-over")).to_be_visible()
        expect(page.locator("#match-title")).to_contain_text("win")
        standings = page.locator("#standings")
        for row in ("Points", "Game bonus", "Line bonus", "Total"):
            expect(standings).to_contain_text(row)
        expect(standings.locator("tr.total")).to_contain_text(str(result["totals"]["you"]))
        expect(standings.locator("tr.total")).to_contain_text(str(result["totals"]["computer"]))
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
        assert not errors, errors
    finally:
        context.close()


# ---------------------------------------------------------------------- tabs, start options, refusals


def test_two_tabs_play_two_independent_games(browser: Any, server: tuple[BackgroundServer, Path]) -> None:
    from playwright.sync_api import expect

    srv, _ = server
    context, first, errors = _new_page(browser, DESKTOP)
    try:
        second = context.new_page()
        _start(first, srv.url, seed=11)
        _start(second, srv.url, seed=12)
        a, b = _wait_for_person(first), _wait_for_person(second)
        assert a["id"] != b["id"]
        # A move in the first tab leaves the second tab's game as it was.
        first.keyboard.press("p" if a["phase"] == "upcard" else "t")
        a2 = _wait_after(first, a)
        assert a2["events"] != a["events"]
        fetched = second.request.get(f"{srv.url}/api/games/{b['id']}").json()
        assert fetched["events"] == _state(second)["events"] == b["events"]
        # The game id lives in the page's memory only.
        assert context.cookies() == []
        assert second.evaluate("localStorage.length + sessionStorage.length") == 0
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
        assert not errors, errors
    finally:
        context.close()


def test_the_page_starts_at_once_with_the_command_line_choices(browser: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    app = create_app(
        replay_dir=tmp_path / "replays", pace_ms=30, opponent="random", preset="seed004", autostart=True
    )
    srv = serve_in_background(app)
    context, page, errors = _new_page(browser, DESKTOP)
    try:
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
        assert not errors, errors
    finally:
        context.close()
        srv.stop()


# ---------------------------------------------------------------------- layouts


_OVERLAPS = """
() => {
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
  const cards = [...document.querySelectorAll('#hand [data-card]')].filter(shown)
    .map((el) => box(el, 'card ' + el.dataset.card));
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
    for (const d of cards.slice(i + 1)) if (hit(c, d)) found.push(c.name + ' / ' + d.name);
    if (c.left < 0 || c.right > window.innerWidth) found.push(c.name + ' outside the window');
  });
  regions.forEach((r, i) => {
    for (const q of regions.slice(i + 1)) if (hit(r, q)) found.push(r.name + ' / ' + q.name);
  });
  const rank = document.querySelector('#hand .rank');
  const red = document.querySelector('#hand .card.red');
  return {
    overlaps: found,
    cards: cards.length,
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
    context, page, errors = _new_page(browser, viewport)
    try:
        page.goto(f"{srv.url}/?seed={SEED}")
        page.wait_for_selector("#start:visible")
        _shot(page, f"{size}-setup")
        _start(page, srv.url, seed=SEED)
        s = _wait_for_person(page)
        while s["phase"] == "upcard":
            expect(page.locator("#take")).to_be_visible()
            _shot(page, f"{size}-upcard")
            page.keyboard.press("p")
            s = _wait_after(page, s)
        page.keyboard.press("t")
        s = _wait_after(page, s)
        assert s["phase"] == "discard" and len(s["hand"]["cards"]) == 11
        _card(page, s["hand"]["cards"][-1]).click()  # a raised card
        page.wait_for_selector("#hand .selected")
        _shot(page, f"{size}-eleven-cards")
        found = page.evaluate(_OVERLAPS)
        assert found["cards"] == 11
        assert found["overlaps"] == [], found["overlaps"]
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
        assert not errors, errors
    finally:
        context.close()
