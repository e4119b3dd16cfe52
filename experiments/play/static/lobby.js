// Getting to a table and away from it: a computer match started (or the game of the day), a friend
// table created or an invitation joined, a table opened from the address or from localStorage
// (route: where the page goes on load and when the address changes), and Leave. An ES module;
// plain ES2020, no build step.

import { $, clearMessage } from './common.js';
import { askName, showScreen, urlSeed } from './setup.js';
import { api, base, busyDo, gone, showMessage, state } from './state.js';
import {
  inviteToken,
  readCurrent,
  readHash,
  readOrder,
  rememberInvite,
  sameTable,
  savedName,
  seatOfInvite,
  writeCurrent,
  writeHash,
} from './storage.js';
import { applyView, closeTable, openStream, showSetup } from './table.js';

function showJoin(token) {
  closeTable();
  state.joinToken = token;
  showScreen('join');
  const input = $('join-name');
  if (!input.value) input.value = savedName();
  input.focus({ preventScroll: true });
}

function startMatch(body) {
  return busyDo(async () => {
    try {
      const view = await api('POST', '/api/games', body);
      state.busy = false;
      clearMessage();
      await openTable({ kind: 'game', token: view.id }, view);
    } catch (err) {
      showMessage(err.message); // the game of the day played already: the server says so
      if (!state.table) showScreen('setup');
    }
  });
}

function createFriendTable() {
  const name = askName($('host-name'));
  if (!name) return Promise.resolve();
  const target = $('target-select').value;
  return busyDo(async () => {
    try {
      const r = await api('POST', '/api/friends', {
        preset: $('preset-select').value,
        target: target ? Number(target) : null,
        name,
      });
      const invite = inviteToken(r.view && r.view.invite);
      if (invite) rememberInvite(invite, r.seat); // the host opening its own invitation comes back here
      state.busy = false;
      clearMessage();
      await openTable({ kind: 'seat', token: r.seat }, r.view);
    } catch (err) {
      showMessage(err.message);
    }
  });
}

function joinTable() {
  const name = askName($('join-name'));
  if (!name) return Promise.resolve();
  const invite = state.joinToken;
  return busyDo(async () => {
    try {
      const r = await api('POST', '/api/friends/join', { invite, name });
      rememberInvite(invite, r.seat);
      state.busy = false;
      clearMessage();
      await openTable({ kind: 'seat', token: r.seat }, r.view);
    } catch (err) {
      showMessage(err.message); // an invitation seats one person, once: the server explains
    }
  });
}

// ---------------------------------------------------------------- opening a table

// Shows table `t` (with its `view` when the caller has it already, else fetched): the address and
// ginenv.current name it from now on. False when the server does not have it.
async function openTable(t, view = null) {
  closeTable();
  clearMessage();
  const gen = ++state.generation;
  if (!view) {
    try {
      view = await api('GET', base(t));
    } catch (err) {
      if (gen !== state.generation) return false;
      if (gone(err)) {
        if (sameTable(readCurrent(), t)) writeCurrent(null);
        writeHash(null);
        showMessage(`That table is no longer on the server (${err.message})`);
      } else {
        showMessage(err.message);
      }
      return false;
    }
    if (gen !== state.generation) return false;
  }
  state.table = t;
  state.advanceFailures = 0;
  writeCurrent(t);
  writeHash(t);
  showScreen('table');
  $('leave').hidden = false;
  $('leave').textContent = t.kind === 'watch' ? 'Stop watching' : 'Leave';
  state.customOrder = readOrder(t, view.hand_index);
  applyView(view);
  if (t.kind !== 'game') openStream();
  return true;
}

// Where the page goes on load and when the address changes: the address's table, else the current
// one, else New match (or the command line's match at once).
async function route() {
  const h = readHash();
  if (h && h.kind === 'join') {
    const seat = seatOfInvite(h.token);
    if (seat && (await openTable({ kind: 'seat', token: seat }))) return;
    showJoin(h.token);
    return;
  }
  if (h && sameTable(h, state.table)) return;
  const t = h || readCurrent();
  if (t && (await openTable(t))) return;
  const start = (state.options && state.options.start) || {};
  if (start.autostart && !t) {
    startMatch({ opponent: start.opponent, preset: start.preset, daily: !!start.daily, seed: urlSeed() });
  } else {
    showSetup();
  }
}

// Leave: the server ends the match (a computer match is abandoned, a friend seat left; its replay
// written), and the page forgets it.
async function leaveTable() {
  const t = state.table;
  const v = state.view;
  closeTable();
  state.generation += 1;
  writeCurrent(null);
  writeHash(null);
  let replay = null;
  if (t && t.kind !== 'watch' && !(t.kind === 'seat' && v && v.stage === 'over')) {
    try {
      const r = await api('DELETE', base(t));
      replay = r && r.replay ? r.replay : null;
    } catch (err) {
      /* already gone: nothing to keep */
    }
  }
  showSetup();
  return { table: t, replay };
}

export { startMatch, createFriendTable, joinTable, route, leaveTable };
