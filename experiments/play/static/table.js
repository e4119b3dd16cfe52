// Play at an open table: each new view applied (a late, older one dropped), the person's moves and
// Next hand sent, the computer's moves of a computer match asked for at a readable pace (with
// retries), the event stream of a friend seat or a spectator (reconnecting after a pause), and the
// table closed, or found gone from the server. An ES module; plain ES2020, no build step.

import { $, clearMessage } from './common.js';
import { renderHelp } from './help.js';
import { render, renderStatus } from './render.js';
import { showScreen } from './setup.js';
import {
  api,
  base,
  busyDo,
  gone,
  isPlayer,
  opponentLabel,
  saveOrder,
  showMessage,
  state,
  waitingWords,
} from './state.js';
import { writeCurrent, writeHash } from './storage.js';

const STREAM_RETRY_MS = [1000, 2000, 4000, 8000, 15000];

// ---------------------------------------------------------------- closing

function closeTable() {
  stopComputer();
  closeStream();
  state.streamLost = false;
  state.table = null;
  state.view = null;
  window.ginState = null;
  state.selected = null;
  state.customOrder = null;
  state.leaveArmed = false;
}

function showSetup() {
  closeTable();
  showScreen('setup');
  renderHelp();
  (state.mode === 'friend' ? $('create-friend') : $('start')).focus({ preventScroll: true });
}

function tableGone(message) {
  closeTable();
  state.generation += 1;
  writeCurrent(null);
  writeHash(null);
  showSetup();
  showMessage(`That table is no longer on the server (${message})`);
}

// ---------------------------------------------------------------- talking to the game

function applyView(view) {
  const prev = state.view;
  if (
    prev &&
    typeof prev.version === 'number' &&
    typeof view.version === 'number' &&
    view.version < prev.version
  ) {
    return; // an older view than the one shown (a late reply)
  }
  state.view = view;
  window.ginState = view;
  if (prev && prev.hand_index !== view.hand_index) {
    state.customOrder = null; // a new deal: back to the server's order
    state.selected = null;
    saveOrder();
  }
  const cards = (view.hand && view.hand.cards) || [];
  if (state.selected && !cards.includes(state.selected)) state.selected = null;
  render();
  scheduleComputer();
}

async function act(action) {
  if (!isPlayer() || state.busy) return;
  const gen = state.generation;
  await busyDo(async () => {
    try {
      const view = await api('POST', `${base()}/action`, { action });
      if (gen !== state.generation) return;
      if (action.startsWith('discard ') || action.startsWith('knock ') || action === 'big_gin') {
        state.selected = null;
      }
      clearMessage();
      state.busy = false;
      applyView(view);
    } catch (err) {
      if (gen !== state.generation) return;
      if (gone(err)) tableGone(err.message);
      else showMessage(err.message); // the state stays as it was
    }
  });
}

async function nextHand() {
  if (!isPlayer() || state.busy || !state.view) return;
  const gen = state.generation;
  await busyDo(async () => {
    try {
      const view = await api('POST', `${base()}/next`);
      if (gen !== state.generation) return;
      state.busy = false;
      clearMessage();
      applyView(view);
    } catch (err) {
      if (gen !== state.generation) return;
      if (gone(err)) tableGone(err.message);
      else showMessage(err.message);
    }
  });
}

function stopComputer() {
  clearTimeout(state.advanceTimer);
  state.advanceTimer = null;
  state.generation += 1;
}

// A computer match: the page asks the server for each of the computer's decisions, at a readable pace.
function scheduleComputer() {
  clearTimeout(state.advanceTimer);
  state.advanceTimer = null;
  const v = state.view;
  if (!v || !state.table || state.table.kind !== 'game') return;
  if (v.stage !== 'play' || v.turn !== 'opponent') return;
  const gen = state.generation;
  const pace = Number(state.options && state.options.pace_ms) || 0;
  const delay = state.advanceFailures ? Math.min(4000, 700 * 2 ** state.advanceFailures) : pace;
  state.advanceTimer = setTimeout(() => advance(gen), delay);
}

async function advance(gen) {
  state.advanceTimer = null;
  if (gen !== state.generation || !state.table || state.table.kind !== 'game') return;
  if (state.busy) {
    scheduleComputer();
    return;
  }
  state.busy = true;
  try {
    const view = await api('POST', `${base()}/advance`);
    state.busy = false;
    if (gen !== state.generation) return;
    state.advanceFailures = 0;
    applyView(view);
  } catch (err) {
    state.busy = false;
    if (gen !== state.generation) return;
    if (gone(err)) {
      tableGone(err.message);
      return;
    }
    if (err.status === 409) {
      // Not the computer's turn after all (another tab of this match asked first): the latest view.
      try {
        const view = await api('GET', base());
        if (gen === state.generation) applyView(view);
        return;
      } catch (again) {
        /* as any other failure */
      }
    }
    state.advanceFailures += 1;
    showMessage(err.message);
    if (state.advanceFailures <= 3) scheduleComputer();
  }
}

// What the person asked for with a key or a tap on the stock or the pile.
function tryAction(action) {
  const v = state.view;
  if (!v || !state.table) return;
  if (v.stage !== 'play') return;
  if (!isPlayer()) {
    showMessage('You are watching: spectators do not play.', 'info');
    return;
  }
  if (v.turn !== 'you') {
    const waiting = waitingWords(v);
    showMessage(waiting || `Wait: it is ${opponentLabel()}'s turn.`, 'info');
    if (state.table.kind === 'game' && !state.advanceTimer && !state.busy) {
      // The computer's move failed earlier and retries stopped: a key or tap tries again.
      state.advanceFailures = 0;
      scheduleComputer();
    }
    return;
  }
  act(action);
}

// ---------------------------------------------------------------- the stream of a friend table

function openStream() {
  closeStream();
  const t = state.table;
  if (!t || t.kind === 'game' || typeof EventSource === 'undefined') return;
  const es = new EventSource(`${base(t)}/stream`);
  state.stream = es;
  es.addEventListener('view', (ev) => {
    if (state.stream !== es) return;
    let view;
    try {
      view = JSON.parse(ev.data);
    } catch (err) {
      return;
    }
    state.streamRetry = 0;
    setStreamLost(false);
    applyView(view);
  });
  es.addEventListener('open', () => {
    if (state.stream === es) setStreamLost(false);
  });
  es.addEventListener('error', () => {
    if (state.stream !== es) return;
    setStreamLost(true);
    // The browser retries a dropped stream by itself; a refused one (404, the table gone) it closes.
    if (es.readyState === EventSource.CLOSED) {
      state.stream = null;
      es.close();
      recheckTable();
    }
  });
}

function closeStream() {
  clearTimeout(state.streamTimer);
  state.streamTimer = null;
  if (state.stream) state.stream.close();
  state.stream = null;
}

function setStreamLost(lost) {
  if (state.streamLost === lost) return;
  state.streamLost = lost;
  if (state.view) renderStatus(state.view);
}

// The stream closed: is the table still there? Then the stream again, after a pause.
async function recheckTable() {
  const t = state.table;
  const gen = state.generation;
  if (!t) return;
  try {
    const view = await api('GET', base(t));
    if (gen !== state.generation) return;
    applyView(view);
  } catch (err) {
    if (gen !== state.generation) return;
    if (gone(err)) {
      tableGone(err.message);
      return;
    }
  }
  const wait = STREAM_RETRY_MS[Math.min(state.streamRetry, STREAM_RETRY_MS.length - 1)];
  state.streamRetry += 1;
  clearTimeout(state.streamTimer);
  state.streamTimer = setTimeout(() => {
    if (gen === state.generation && state.table && !state.stream) openStream();
  }, wait);
}

// Back on the page (a phone tab shown again, the page restored from the back-forward cache, the
// network back): the stream again, or the latest view of a computer match.
function refreshTable() {
  const t = state.table;
  if (!t) return;
  if (t.kind === 'game') {
    const gen = state.generation;
    api('GET', base(t))
      .then((view) => {
        if (gen === state.generation && !state.busy) applyView(view);
      })
      .catch((err) => {
        if (gen === state.generation && gone(err)) tableGone(err.message);
      });
  } else if (!state.stream || state.stream.readyState === EventSource.CLOSED) {
    state.streamRetry = 0;
    openStream();
  }
}

export { closeTable, showSetup, applyView, act, nextHand, tryAction, openStream, refreshTable };
