"""Only the play server's own page changes state (experiments/play/guards.py, ``OriginGuard``).

A page on any other site can make a browser send ``POST /api/games`` to a server on this machine
(a form, a ``no-cors`` fetch: no preflight asks first). The guard answers every ``POST``, ``PUT``,
``PATCH`` and ``DELETE`` 403 unless its ``Origin`` (or, without one, its ``Referer``'s origin) is
the server's own, and 415 unless it is JSON. These tests hold the check itself on requests built
by hand (origins, ports, IPv6, ``--allow-host``, the Referer, content types) and the served
application end to end: a refused request creates no table. The browser's side (a page of another
origin tries a ``no-cors`` fetch and a form) is in ``test_browser.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from ginenv.experiments.play.guards import LOOPBACK_HOSTS, OriginGuard, allowed_hosts
from ginenv.experiments.play.server import BackgroundServer, create_app, serve_in_background

JSON = "application/json"


def _scope(method: str = "POST", host: str | None = "127.0.0.1:8765", **headers: str) -> dict[str, Any]:
    """An ASGI request scope; ``headers`` by name, ``_`` for ``-`` (``content_type``)."""
    raw = [(b"host", host.encode())] if host is not None else []
    raw += [(name.replace("_", "-").encode(), value.encode()) for name, value in headers.items()]
    return {"type": "http", "method": method, "scheme": "http", "path": "/api/games", "headers": raw}


def _guard(*more: str, host: str = "127.0.0.1") -> OriginGuard:
    async def app(scope: Any, receive: Any, send: Any) -> None:  # pragma: no cover - never reached
        raise AssertionError("the guard's checks are called directly")

    return OriginGuard(app, allowed_hosts(host, more))


def test_the_servers_own_origin_passes_on_every_name_and_port_it_answers_to() -> None:
    guard = _guard("gin.example.org")
    passing = [
        ("127.0.0.1:8765", "http://127.0.0.1:8765"),
        ("localhost:8765", "http://localhost:8765"),
        ("LOCALHOST:8765", "http://localhost:8765"),
        ("[::1]:8765", "http://[::1]:8765"),
        ("[::1]", "http://[::1]"),
        ("gin.example.org", "http://gin.example.org"),
        ("gin.example.org:80", "http://gin.example.org"),
        ("gin.example.org", "https://gin.example.org"),  # behind a TLS proxy that keeps the Host
        ("gin.example.org:8443", "https://gin.example.org:8443"),
    ]
    for host, origin in passing:
        assert guard.refusal(_scope(host=host, origin=origin, content_type=JSON)) is None, (host, origin)


def test_any_other_origin_is_refused_in_one_line_naming_what_is_allowed() -> None:
    guard = _guard("gin.example.org")
    refused = [
        ("127.0.0.1:8765", "https://evil.example"),
        ("127.0.0.1:8765", "http://127.0.0.1:3000"),  # another server of this machine: another origin
        ("127.0.0.1:8765", "http://127.0.0.1"),
        ("127.0.0.1:8765", "http://localhost:8765"),  # a name other than the one the request uses
        ("127.0.0.1:8765", "null"),  # a sandboxed frame, a file:// page
        ("127.0.0.1:8765", "file://"),
        ("127.0.0.1:8765", "http://127.0.0.1:99999"),
        ("[::1]:8765", "http://[::1]:8766"),
        ("[::1]:8765", "http://[::2]:8765"),
        ("[::1]:8765", "http://[::1"),
        ("gin.example.org", "https://gin.example.org.evil.example"),
        ("other.example:8765", "http://other.example:8765"),  # a name the server does not answer to
        ("", "http://127.0.0.1:8765"),
    ]
    for host, origin in refused:
        scope = _scope(host=host or None, origin=origin, content_type=JSON)
        found = guard.refusal(scope)
        assert found is not None, (host, origin)
        status, message = found
        assert status == 403 and "\n" not in message
        assert message.startswith("state changes are accepted only from this server's own page")
        assert f"got Origin {origin!r}" in message
    _, message = guard.refusal(_scope(origin="https://evil.example", content_type=JSON)) or (0, "")
    assert message == (
        "state changes are accepted only from this server's own page (Origin http://127.0.0.1:8765); "
        "got Origin 'https://evil.example'"
    )


def test_without_an_origin_the_referer_decides_and_without_both_the_request_is_refused() -> None:
    guard = _guard()
    assert guard.refusal(_scope(referer="http://127.0.0.1:8765/?seed=3", content_type=JSON)) is None
    assert guard.refusal(_scope(referer="http://127.0.0.1:8765/replay#x", content_type=JSON)) is None
    status, message = guard.refusal(
        _scope(referer="https://evil.example/a/secret?k=1", content_type=JSON)
    ) or (
        0,
        "",
    )
    assert status == 403 and "got a Referer from 'https://evil.example'" in message
    assert "secret" not in message  # only the Referer's origin is quoted
    for referer in ("/relative/path", "", "http://[::1"):
        found = guard.refusal(_scope(referer=referer, content_type=JSON))
        assert found is not None and "got a Referer from 'null'" in found[1], referer
    # An Origin, when there is one, decides: a Referer of ours does not lift a foreign Origin.
    mixed = _scope(origin="https://evil.example", referer="http://127.0.0.1:8765/", content_type=JSON)
    assert (guard.refusal(mixed) or (0,))[0] == 403
    status, message = guard.refusal(_scope(content_type=JSON)) or (0, "")
    assert status == 403 and message.endswith("got neither Origin nor Referer")


def test_a_change_from_our_own_page_must_be_json() -> None:
    guard = _guard()
    ours = "http://127.0.0.1:8765"
    for media in (JSON, "application/json; charset=utf-8", "Application/JSON"):
        assert guard.refusal(_scope(origin=ours, content_type=media)) is None, media
    for media in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""):
        status, message = guard.refusal(_scope(origin=ours, content_type=media)) or (0, "")
        assert status == 415 and "\n" not in message, media
        assert message.startswith(
            "a request that changes state must send JSON (Content-Type: application/json"
        )
        assert f"got Content-Type {media!r}" in message
    status, message = guard.refusal(_scope(origin=ours)) or (0, "")
    assert status == 415 and message.endswith("got no Content-Type")
    # The origin is looked at first: another site learns nothing about what else would pass.
    assert (guard.refusal(_scope(origin="https://evil.example")) or (0,))[0] == 403


def test_allow_host_names_a_name_and_a_star_any_name_of_the_request_itself() -> None:
    assert _guard().refusal(
        _scope(host="gin.example.org", origin="http://gin.example.org", content_type=JSON)
    )
    guard = _guard("gin.example.org", host="0.0.0.0")
    assert (
        guard.refusal(_scope(host="gin.example.org", origin="http://gin.example.org", content_type=JSON))
        is None
    )
    # --host 0.0.0.0 is no name: a LAN address must be allowed to be the page's origin.
    assert "0.0.0.0" not in guard.hosts and set(LOOPBACK_HOSTS) <= set(guard.hosts)
    anything = _guard("*")
    assert (
        anything.refusal(_scope(host="x.example:81", origin="http://x.example:81", content_type=JSON)) is None
    )
    # "*" takes any name, but never an origin other than the request's own.
    assert anything.refusal(_scope(host="x.example:81", origin="http://y.example:81", content_type=JSON))


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[BackgroundServer, Any]]:
    app = create_app(replay_dir=tmp_path / "replays", state_dir=tmp_path / "tables", pace_ms=0)
    server = serve_in_background(app, allow_hosts=["gin.example.org"])
    try:
        yield server, app
    finally:
        server.stop()


def test_a_refused_change_reaches_no_route_and_reads_pass(served: tuple[BackgroundServer, Any]) -> None:
    server, app = served
    url = server.url
    with httpx.Client(base_url=url, timeout=10) as api:
        attempts = [
            api.post("/api/games"),  # no Origin, no body: what a page elsewhere could send before
            api.post("/api/games", json={}),
            api.post("/api/games", json={}, headers={"Origin": "https://evil.example"}),
            api.post("/api/games", content=b"{}", headers={"Origin": url, "Content-Type": "text/plain"}),
            api.post("/api/games", data={"daily": "true"}, headers={"Origin": url}),  # a form's body
            api.post("/api/friends", json={"name": "Eve"}, headers={"Referer": "https://evil.example/"}),
            api.put("/api/games", json={}, headers={"Origin": "https://evil.example"}),
            api.patch("/api/games", json={}, headers={"Origin": "https://evil.example"}),
        ]
        assert [r.status_code for r in attempts] == [403, 403, 403, 415, 415, 403, 403, 403]
        for r in attempts:
            assert r.headers["content-type"] == JSON and r.headers["cache-control"] == "no-store"
            assert set(r.json()) == {"error"} and "\n" not in r.json()["error"]
        assert len(app.state.store) == 0
        # Reads are as they were.
        assert api.get("/api/options").status_code == 200 and api.get("/").status_code == 200
        # The page's own requests: JSON with its Origin; a body-less one says {} (an empty JSON body
        # is taken too), and a Referer of ours serves when a client sends no Origin.
        page = {"Origin": url}
        made = api.post("/api/games", json={"opponent": "random"}, headers=page)
        assert made.status_code == 201, made.text
        game = made.json()["id"]
        empty = api.post("/api/games", headers={**page, "Content-Type": JSON})
        assert empty.status_code == 201, empty.text
        assert api.post(
            f"/api/games/{game}/advance", json={}, headers={"Referer": f"{url}/"}
        ).status_code in (200, 409)
        gone = api.delete(f"/api/games/{game}", headers={"Origin": "https://evil.example"})
        assert gone.status_code == 403 and api.get(f"/api/games/{game}").status_code == 200
        assert api.request("DELETE", f"/api/games/{game}", json={}, headers=page).status_code == 200
        assert len(app.state.store) == 1
        # A name given to --allow-host is an origin of this server when the request uses it.
        named = {"Host": "gin.example.org", "Origin": "http://gin.example.org"}
        assert api.post("/api/games", json={}, headers=named).status_code == 201
        assert api.post("/api/games", json={}, headers={**named, "Origin": url}).status_code == 403
    assert len(app.state.store) == 2
