// The play page of `ginenv play`, driven by the JSON API of experiments/play/server.py: a match
// against a computer opponent, or a table with a friend on another device (each seat sees its own
// side of the table; the other's moves arrive through an EventSource), or a friend table watched.
// This module is the page's entry: it wires the buttons, the keys and the window's events to the
// modules below and boots the page. An ES module; plain ES2020, no build step.
//
// The table being played lives in the address (#game=ID, #seat=TOKEN, #watch=TOKEN; #join=TOKEN
// opens an invitation) and in localStorage "ginenv.current", so a reload, Replays and back, or a
// phone browser dropping the tab returns to it; only Leave ends it. window.ginState is the latest
// view (for tests).
//
// The modules, each importing only those above it:
//   common.js    cards, card texts, meld groups, the API wrapper, the banner (shared with replay.js)
//   storage.js   localStorage, sessionStorage and the address (shared with replay.js)
//   state.js     the page's state, its API and banner, and the words that follow from the state
//   standing.js  where the person stands against the computer (GET /api/me), Delete my record
//   help.js      the Help panel's text
//   panels.js    the discard pile, links and Help panels; the links to send
//   showdown.js  the end of a hand and of the match
//   render.js    the table drawn from the latest view
//   setup.js     the setup and join screens
//   table.js     play at an open table: views in, moves out, the computer's pace, the stream
//   lobby.js     getting to a table (new match, friend table, invitation, route) and Leave
//   hand.js      tap, drag and reorder in the hand

import { $, cardLabel } from './common.js';
import { onCardTap, wireHand } from './hand.js';
import { renderHelp } from './help.js';
import { createFriendTable, joinTable, leaveTable, route, startMatch } from './lobby.js';
import { PANELS, closePanel, copyLink, openPanel } from './panels.js';
import { fitHand, render } from './render.js';
import { describeSetup, loadOptions, setMode, showScreen, urlSeed } from './setup.js';
import { showSetupStanding, wireStanding } from './standing.js';
import { knockCards, saveOrder, showMessage, state } from './state.js';
import { readHash, sameTable, writeHash } from './storage.js';
import { act, nextHand, refreshTable, showSetup, tryAction } from './table.js';

function onKnock() {
  const v = state.view;
  if (!v) return;
  const kc = knockCards();
  if (state.selected && kc.includes(state.selected)) {
    act(`knock ${state.selected}`);
    return;
  }
  const hints = v.discard_hints || {};
  const list = kc.map((c) => `${cardLabel(c)} (${hints[c] === 0 ? 'gin' : `deadwood ${hints[c]}`})`);
  const lead = state.selected
    ? `You cannot knock by discarding ${cardLabel(state.selected)}.`
    : 'Select the card to discard as you knock.';
  showMessage(`${lead} You can knock with ${list.join(', ')}.`, 'info');
}

function onKey(ev) {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const tag = (ev.target && ev.target.tagName) || '';
  if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA') {
    if (ev.key === 'Enter' && ev.target.id === 'join-name') joinTable();
    if (ev.key === 'Enter' && ev.target.id === 'host-name') createFriendTable();
    return;
  }
  if (ev.key === 'Escape') {
    for (const id of PANELS) {
      if (!$(id).hidden) {
        closePanel(id);
        ev.preventDefault();
        return;
      }
    }
    if (state.selected) {
      state.selected = null;
      render();
    }
    return;
  }
  if (PANELS.some((id) => !$(id).hidden)) return;
  const k = ev.key.toLowerCase();
  if (k === 'h' || ev.key === '?') {
    ev.preventDefault();
    openPanel('help');
    return;
  }
  const v = state.view;
  if (!v || v.stage !== 'play') return;
  if (k === 't') {
    ev.preventDefault();
    tryAction('draw_stock');
  } else if (k === 'd') {
    ev.preventDefault();
    tryAction('draw_discard');
  } else if (k === 'p') {
    ev.preventDefault();
    tryAction('pass');
  } else if ((ev.key === 'Enter' || ev.key === ' ') && ev.target.classList.contains('hand-card')) {
    ev.preventDefault();
    onCardTap(ev.target.dataset.card);
  }
}

function onLeave() {
  if (!state.leaveArmed) {
    state.leaveArmed = true;
    $('leave').textContent = state.table && state.table.kind === 'watch' ? 'Stop: sure?' : 'Leave: sure?';
    setTimeout(() => {
      state.leaveArmed = false;
      if (!$('leave').hidden && state.table) {
        $('leave').textContent = state.table.kind === 'watch' ? 'Stop watching' : 'Leave';
      }
    }, 4000);
    return;
  }
  state.leaveArmed = false;
  leaveTable().then(({ table, replay }) => {
    if (!table) return;
    if (table.kind === 'watch') showMessage('You stopped watching.', 'info');
    else showMessage(replay ? `Match left. Replay saved as ${replay}.` : 'Match left.', 'info');
  });
}

// The overlays start under the top bar, whose buttons (Help, Leave, Replays) stay usable.
function measureTopbar() {
  const h = document.querySelector('.topbar').getBoundingClientRect().height;
  document.documentElement.style.setProperty('--topbar-h', `${Math.round(h)}px`);
}

function wire() {
  $('opponent-select').addEventListener('change', describeSetup);
  $('preset-select').addEventListener('change', () => {
    describeSetup();
    showSetupStanding(); // the rating under the rules chosen
  });
  $('mode-computer').addEventListener('click', () => setMode('computer'));
  $('mode-friend').addEventListener('click', () => {
    setMode('friend');
    if (!$('host-name').value) $('host-name').focus();
  });
  $('start').addEventListener('click', () =>
    startMatch({
      opponent: $('opponent-select').value,
      preset: $('preset-select').value,
      daily: false,
      seed: urlSeed(),
    }),
  );
  $('daily').addEventListener('click', () => {
    const d = (state.options && state.options.daily) || {};
    startMatch({ opponent: d.opponent, preset: d.preset, daily: true, seed: null });
  });
  $('create-friend').addEventListener('click', createFriendTable);
  $('join-button').addEventListener('click', joinTable);
  $('join-cancel').addEventListener('click', () => {
    writeHash(null);
    showSetup();
  });
  $('stock').addEventListener('click', () => tryAction('draw_stock'));
  $('discard-pile').addEventListener('click', () => {
    const v = state.view;
    if (v && v.stage === 'play' && v.turn === 'you' && v.phase === 'discard' && state.selected) {
      act(`discard ${state.selected}`);
    } else {
      tryAction('draw_discard');
    }
  });
  for (const id of ['stock', 'discard-pile']) {
    $(id).addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' || ev.key === ' ') {
        ev.preventDefault();
        ev.stopPropagation();
        $(id).click();
      }
    });
  }
  $('take').addEventListener('click', () => tryAction('draw_discard'));
  $('pass').addEventListener('click', () => tryAction('pass'));
  $('knock').addEventListener('click', onKnock);
  $('big-gin').addEventListener('click', () => tryAction('big_gin'));
  $('autosort').addEventListener('click', () => {
    state.customOrder = null;
    saveOrder();
    render();
  });
  $('pile-button').addEventListener('click', () => openPanel('pile-panel'));
  $('help-button').addEventListener('click', () => openPanel('help'));
  $('links-button').addEventListener('click', () => openPanel('share-panel'));
  document.querySelectorAll('.close-panel').forEach((b) =>
    b.addEventListener('click', () => closePanel(b.dataset.close)),
  );
  document.querySelectorAll('[data-copy]').forEach((b) =>
    b.addEventListener('click', () => copyLink($(b.dataset.copy))),
  );
  document.querySelectorAll('.link-input').forEach((input) =>
    input.addEventListener('focus', () => input.select()),
  );
  for (const id of PANELS) {
    $(id).addEventListener('click', (ev) => {
      if (ev.target === $(id)) closePanel(id); // a click on the backdrop
    });
  }
  $('next-hand').addEventListener('click', nextHand);
  $('new-match').addEventListener('click', () => {
    leaveTable();
  });
  $('leave').addEventListener('click', onLeave);
  wireStanding();
  wireHand();
  document.addEventListener('keydown', onKey);
  // A link to another table opened in this tab (an invitation pasted into the address).
  window.addEventListener('hashchange', () => {
    const h = readHash();
    if (h && !sameTable(h, state.table)) route();
  });
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') refreshTable();
  });
  window.addEventListener('pageshow', (ev) => {
    if (ev.persisted) refreshTable();
  });
  window.addEventListener('online', refreshTable);
  window.addEventListener('resize', () => {
    measureTopbar();
    if (state.view && !state.drag) fitHand();
    $('log').scrollTop = $('log').scrollHeight;
  });
}

async function boot() {
  wire();
  setMode('computer');
  measureTopbar();
  if (typeof ResizeObserver !== 'undefined') {
    new ResizeObserver(measureTopbar).observe(document.querySelector('.topbar'));
  }
  renderHelp();
  const ok = await loadOptions();
  if (!ok) {
    // The server did not answer: a remembered table is kept for the next try.
    showScreen('setup');
    return;
  }
  await route();
}

boot();
