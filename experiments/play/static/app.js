// The play page of `ginenv play`, driven by the JSON API of experiments/play/server.py: a match
// against a computer opponent, or a table with a friend on another device (each seat sees its own
// side of the table; the other's moves arrive through an EventSource), or a friend table watched.
// An ES module; plain ES2020, no build step.
//
// The table being played lives in the address (#game=ID, #seat=TOKEN, #watch=TOKEN; #join=TOKEN
// opens an invitation) and in localStorage "ginenv.current", so a reload, Replays and back, or a
// phone browser dropping the tab returns to it; only Leave ends it. window.ginState is the latest
// view (for tests).

import {
  $,
  ApiError,
  MELD_COLOURS,
  api as apiCall,
  backEl,
  cardEl,
  cardLabel,
  cardSpoken,
  clearMessage,
  fillSelect,
  kindWords,
  meldBlock,
  setRichText,
  showMessage as showBanner,
} from './common.js';

const DRAG_THRESHOLD = 6; // pixels a pointer must move before a press becomes a drag
const CURRENT_KEY = 'ginenv.current'; // {"kind": "game" | "seat" | "watch", "token": ...}
const NAME_KEY = 'ginenv.name'; // the name last given for a friend table
const INVITES_KEY = 'ginenv.invites'; // invitation token -> the seat it gave on this device
const ORDER_KEY = 'ginenv.order'; // sessionStorage: the hand's custom order {token, hand, order}
const TARGETS = [10, 25, 50, 100, 150, 200, 250]; // "Match to" for a friend table (besides the rules')
const STREAM_RETRY_MS = [1000, 2000, 4000, 8000, 15000];

// ---------------------------------------------------------------- state

const state = {
  options: null,
  view: null, // the latest view from the server
  table: null, // the table on screen: {kind: "game" | "seat" | "watch", token}
  generation: 0, // bumped when a table opens or closes, to drop stale replies and timers
  selected: null, // the card raised in the hand
  customOrder: null, // null: the server's order (melds first, then deadwood)
  busy: false,
  advanceTimer: null,
  advanceFailures: 0,
  drag: null,
  pendingHandRender: false,
  leaveArmed: false,
  helpKey: null,
  mode: 'computer', // the setup's choice: "computer" or "friend"
  joinToken: null, // the invitation on the join screen
  stream: null, // the EventSource of a friend seat or a spectator
  streamLost: false, // the stream failed and is not back yet
  streamRetry: 0,
  streamTimer: null,
};
window.ginState = null;

// The API wrapper and the message banner of common.js, as this page uses them.
const api = (method, path, body) => apiCall(method, path, body, { server: 'the game server' });

// Messages start with a capital and end with a stop; card names show as cards.
function showMessage(text, kind = 'error') {
  text = String(text);
  text = text.charAt(0).toUpperCase() + text.slice(1);
  if (!/[.!?\u2026]$/.test(text)) text += '.';
  showBanner(text, kind, { rich: true, ms: kind === 'error' ? 8000 : 5000 });
}

// ---------------------------------------------------------------- storage and the address

function readJSON(store, key) {
  try {
    const raw = store.getItem(key);
    return raw ? JSON.parse(raw) : null;
  } catch (err) {
    return null; // storage off or garbled: as if empty
  }
}

function writeJSON(store, key, value) {
  try {
    if (value == null) store.removeItem(key);
    else store.setItem(key, JSON.stringify(value));
  } catch (err) {
    /* storage off (private mode): the address still holds the table */
  }
}

const KINDS = ['game', 'seat', 'watch'];
const validTable = (t) => !!t && KINDS.includes(t.kind) && typeof t.token === 'string' && t.token.length > 0;
const sameTable = (a, b) => !!a && !!b && a.kind === b.kind && a.token === b.token;

function readCurrent() {
  const t = readJSON(localStorage, CURRENT_KEY);
  return validTable(t) ? { kind: t.kind, token: t.token } : null;
}

function writeCurrent(t) {
  writeJSON(localStorage, CURRENT_KEY, t ? { kind: t.kind, token: t.token } : null);
}

// The address's #game= / #seat= / #watch= / #join= part, or null.
function readHash() {
  const m = /^#(game|seat|watch|join)=([^&#]+)$/.exec(window.location.hash);
  if (!m) return null;
  try {
    return { kind: m[1], token: decodeURIComponent(m[2]) };
  } catch (err) {
    return null;
  }
}

function hashOf(t) {
  return t ? `#${t.kind}=${encodeURIComponent(t.token)}` : '';
}

// Puts the table in the address without a new history entry (Back still leaves the page).
function writeHash(t) {
  const url = window.location.pathname + window.location.search + hashOf(t);
  if (url !== window.location.pathname + window.location.search + window.location.hash) {
    window.history.replaceState(null, '', url);
  }
}

function rememberInvite(invite, seat) {
  const map = readJSON(localStorage, INVITES_KEY) || {};
  delete map[invite];
  map[invite] = seat;
  const keys = Object.keys(map);
  for (const k of keys.slice(0, Math.max(0, keys.length - 20))) delete map[k];
  writeJSON(localStorage, INVITES_KEY, map);
}

const seatOfInvite = (invite) => (readJSON(localStorage, INVITES_KEY) || {})[invite] || null;

function inviteToken(path) {
  const m = /#join=([^&#]+)$/.exec(path || '');
  return m ? decodeURIComponent(m[1]) : null;
}

function saveOrder() {
  const t = state.table;
  const v = state.view;
  if (!t || !v) return;
  writeJSON(
    sessionStorage,
    ORDER_KEY,
    state.customOrder ? { token: `${t.kind}:${t.token}`, hand: v.hand_index, order: state.customOrder } : null,
  );
}

function loadOrder(t, v) {
  const o = readJSON(sessionStorage, ORDER_KEY);
  if (!o || o.token !== `${t.kind}:${t.token}` || o.hand !== v.hand_index || !Array.isArray(o.order)) return null;
  return o.order.filter((c) => typeof c === 'string');
}

// The API path of a table.
function base(t = state.table) {
  const id = encodeURIComponent(t.token);
  if (t.kind === 'game') return `/api/games/${id}`;
  if (t.kind === 'seat') return `/api/seats/${id}`;
  return `/api/watch/${id}`;
}

const gone = (err) => err instanceof ApiError && (err.status === 404 || err.status === 410);

// ---------------------------------------------------------------- setup

async function loadOptions() {
  try {
    state.options = await api('GET', '/api/options');
  } catch (err) {
    showMessage(err.message);
    return false;
  }
  const o = state.options;
  const oppSel = fillSelect($('opponent-select'), o.opponents);
  // The presets, their labels and their help text come from the server (/api/options).
  const preSel = fillSelect($('preset-select'), o.presets);
  const start = o.start || {};
  if (start.opponent) oppSel.value = start.opponent;
  if (start.preset) preSel.value = start.preset;
  $('host-name').value = localStorage.getItem(NAME_KEY) || '';
  describeSetup();
  if (o.daily) {
    const oppLabel = labelOf(o.opponents, o.daily.opponent);
    const preLabel = labelOf(o.presets, o.daily.preset);
    $('daily-note').textContent =
      `Game of the day ${o.daily.date}: ${oppLabel}, ${preLabel}. ` +
      'Everyone playing on the same day gets the same hands; you play it once.';
  }
  return true;
}

// A deal seed from the address (/?seed=12): the same deals again, for research and tests.
function urlSeed() {
  const v = new URLSearchParams(window.location.search).get('seed');
  return v != null && /^\d{1,9}$/.test(v) ? Number(v) : null;
}

function labelOf(list, name) {
  const item = (list || []).find((x) => x.name === name);
  return item ? item.label || item.name : name;
}

function chosenPreset() {
  return ((state.options && state.options.presets) || []).find((x) => x.name === $('preset-select').value);
}

function describeSetup() {
  const o = state.options;
  if (!o) return;
  const opp = (o.opponents || []).find((x) => x.name === $('opponent-select').value);
  $('opponent-description').textContent = opp ? opp.description || '' : '';
  const pre = chosenPreset();
  $('preset-description').textContent = pre ? pre.help || '' : '';
  // "Match to": the rules' own target first, then the usual ones (10: a quick match).
  const sel = $('target-select');
  const was = sel.value;
  const own = pre && pre.rules ? pre.rules.target : null;
  fillSelect(sel, [
    { name: '', label: own ? `${own} points (these rules)` : 'as these rules say' },
    ...TARGETS.filter((n) => n !== own).map((n) => ({
      name: String(n),
      label: n === 10 ? '10 points (a quick match)' : `${n} points`,
    })),
  ]);
  if ([...sel.options].some((x) => x.value === was)) sel.value = was;
  renderHelp();
}

function setMode(mode) {
  state.mode = mode;
  const friend = mode === 'friend';
  $('mode-computer').setAttribute('aria-selected', String(!friend));
  $('mode-friend').setAttribute('aria-selected', String(friend));
  $('computer-fields').hidden = friend;
  $('friend-fields').hidden = !friend;
  $('target-field').hidden = !friend;
  $('friend-note').hidden = !friend;
  $('start').hidden = friend;
  $('daily').hidden = friend;
  $('daily-note').hidden = friend;
  $('create-friend').hidden = !friend;
}

// The screens: "setup" (New match), "join" (an invitation), "table".
function showScreen(name) {
  document.body.classList.toggle('at-table', name === 'table');
  $('setup').hidden = name !== 'setup';
  $('join').hidden = name !== 'join';
  $('table').hidden = name !== 'table';
  if (name !== 'table') {
    for (const id of ['showdown', 'match-over', 'share-panel', 'pile-panel']) $(id).hidden = true;
    $('leave').hidden = true;
    $('links-button').hidden = true;
    $('score').textContent = '';
    $('hand-info').textContent = '';
  }
}

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

function showJoin(token) {
  closeTable();
  state.joinToken = token;
  showScreen('join');
  const input = $('join-name');
  if (!input.value) input.value = localStorage.getItem(NAME_KEY) || '';
  input.focus({ preventScroll: true });
}

function askName(input) {
  const name = input.value.trim();
  if (!name) {
    showMessage('Give a name first: 1 to 24 characters, as the other player will see it.');
    input.focus();
    return null;
  }
  if (name.length > 24) {
    showMessage('A name has at most 24 characters.');
    input.focus();
    return null;
  }
  try {
    localStorage.setItem(NAME_KEY, name);
  } catch (err) {
    /* storage off */
  }
  return name;
}

// Runs `work` with the page marked busy (one request at a time).
async function busyDo(work) {
  if (state.busy) return;
  state.busy = true;
  setBusy(true);
  try {
    await work();
  } finally {
    state.busy = false;
    setBusy(false);
  }
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
  state.customOrder = loadOrder(t, view);
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

function tableGone(message) {
  closeTable();
  state.generation += 1;
  writeCurrent(null);
  writeHash(null);
  showSetup();
  showMessage(`That table is no longer on the server (${message})`);
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

const isPlayer = () => !!state.table && state.table.kind !== 'watch';

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

function setBusy(on) {
  document.body.classList.toggle('busy', on);
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

// How the page names the other side: the computer's label, the friend's name.
function opponentLabel() {
  const v = state.view;
  const o = v && v.opponent;
  if (!o) return 'the opponent';
  return o.label || o.name || (o.kind === 'person' ? 'Your friend' : 'the computer');
}

// How the page names seat "you": You, or for a spectator the first seat's name.
function youLabel() {
  const v = state.view;
  if (!v || !v.spectator) return 'You';
  const p = Array.isArray(v.players) ? v.players[0] : null;
  return (p && (p.label || p.name)) || 'Player 1';
}

// What the other person must do before the game goes on, in words (friend tables), or ''.
function waitingWords(v) {
  const name = opponentLabel();
  if (v.spectator) {
    if (v.waiting_for === 'next') return 'Waiting for the players to start the next hand.';
    return '';
  }
  switch (v.waiting_for) {
    case 'join':
      return 'Waiting for your friend to open the invitation.';
    case 'reconnect':
      return `${name} left the table or lost the connection: waiting for them to come back.`;
    case 'next':
      return `Waiting for ${name} to press Next hand.`;
    default:
      return '';
  }
}

const legal = () => (state.view && state.view.legal) || [];
const knockCards = () =>
  legal()
    .filter((a) => a.startsWith('knock '))
    .map((a) => a.slice(6));

// ---------------------------------------------------------------- rendering

function render() {
  const v = state.view;
  if (!v) return;
  document.body.classList.toggle('spectating', !!v.spectator);
  renderTop(v);
  renderInvite(v);
  renderOpponent(v);
  renderStatus(v);
  renderPiles(v);
  renderTalk(v);
  renderToolbar(v);
  if (state.drag) state.pendingHandRender = true;
  else renderHand(v);
  renderShowdown(v);
  renderMatchOver(v);
  if (!$('pile-panel').hidden) renderPilePanel();
  if (!$('share-panel').hidden) renderSharePanel();
  if (!$('help').hidden) renderHelp();
}

function renderTop(v) {
  const opp = opponentLabel();
  const sc = v.scores || { you: 0, opponent: 0 };
  const score = $('score');
  score.replaceChildren();
  const mk = (cls, text) => {
    const s = document.createElement('span');
    s.className = cls;
    s.textContent = text;
    return s;
  };
  score.append(
    mk('score-you', `${youLabel()} ${sc.you}`),
    mk('score-sep', '\u2013'),
    mk('score-opp', `${opp} ${sc.opponent}`),
    mk('score-target', `to ${v.target}`),
  );
  const you = v.spectator ? `${youLabel()} deals` : 'you deal';
  const parts = [`Hand ${v.hand_index + 1}`, v.dealer === 'you' ? you : `${opp} deals`];
  if (v.daily) parts.push(`game of the day ${v.daily}`);
  if (v.spectator) parts.push('watching');
  $('hand-info').textContent = parts.join(' \u00b7 ');
  $('rules-line').textContent = v.rules_line || '';
  $('links-button').hidden = !v.watch || !!v.invite;
}

// A spectator: the first seat by name, its cards face down (the second is the opponent area).
function renderSeat0(v) {
  const area = $('seat0-area');
  area.hidden = !v.spectator;
  if (!v.spectator) return;
  const seat = Array.isArray(v.players) ? v.players[0] : null;
  $('seat0-name').textContent = youLabel();
  const presence = $('seat0-presence');
  presence.className = 'presence ' + (seat && seat.connected ? 'on' : 'off');
  const n = v.stage === 'play' ? 10 + (v.phase === 'discard' && v.turn === 'you' ? 1 : 0) : 10;
  $('seat0-count').textContent = `${n} cards`;
  const row = $('seat0-cards');
  row.replaceChildren();
  for (let i = 0; i < n; i++) row.append(backEl(true));
  row.classList.toggle('thinking', v.stage === 'play' && v.turn === 'you');
}

// A friend table the guest has not joined yet: the host sees the links to send.
function renderInvite(v) {
  const box = $('invite-box');
  box.hidden = !v.invite;
  if (!v.invite) return;
  setLink($('invite-link'), v.invite);
  setLink($('watch-link'), v.watch);
  $('watch-link').closest('.link-row').hidden = !v.watch;
  box.querySelector('.invite-watch').hidden = !v.watch;
}

// A link to send: on the address the server says others reach it at (share_base), else this page's.
function setLink(input, path) {
  const origin = (state.options && state.options.share_base) || window.location.origin;
  const url = path ? new URL(path, origin).href : '';
  if (input.value !== url) input.value = url;
}

function renderSharePanel() {
  const v = state.view || {};
  $('share-invite-wrap').hidden = !v.invite;
  setLink($('share-invite'), v.invite);
  setLink($('share-watch'), v.watch);
}

// Friend tables: whether the other person is here, and what the game waits for.
function renderStatus(v) {
  const presence = $('presence');
  const person = v.opponent && v.opponent.kind === 'person';
  presence.hidden = !person;
  if (person) {
    const here = !!v.opponent.joined && !!v.opponent.connected;
    presence.className = 'presence ' + (here ? 'on' : 'off');
    presence.title = !v.opponent.joined ? 'not joined yet' : here ? 'connected' : 'not connected';
  }
  let text = '';
  if (state.table && state.table.kind !== 'game' && state.streamLost) {
    text = 'The connection to the server was lost: reconnecting\u2026';
  } else if (v.stage !== 'showdown' && v.waiting_for !== 'join') {
    text = waitingWords(v); // "join": the prompt and the invitation box say it already
  }
  const el = $('status');
  el.textContent = text;
  el.hidden = !text;
}

function renderOpponent(v) {
  const opp = opponentLabel();
  $('opponent-name').textContent = opp;
  $('opponent-area').setAttribute('aria-label', opp);
  const n = v.opponent_cards || 0;
  $('opponent-count').textContent = `${n} card${n === 1 ? '' : 's'}`;
  const row = $('opponent-cards');
  row.replaceChildren();
  for (let i = 0; i < n; i++) row.append(backEl(true));
  row.classList.toggle('thinking', v.stage === 'play' && v.turn === 'opponent');
  const known = v.opponent_known || [];
  $('opponent-known-wrap').hidden = known.length === 0;
  const kc = $('opponent-known');
  kc.replaceChildren();
  for (const c of known) kc.append(cardEl(c, { small: true }));
}

function lastEvent(v) {
  const ev = v.events || [];
  return ev.length ? ev[ev.length - 1] : null;
}

function renderPiles(v) {
  const stock = $('stock');
  stock.classList.toggle('empty', !v.stock);
  stock.classList.toggle('can-draw', legal().includes('draw_stock'));
  $('stock-count').textContent = `Stock ${v.stock}`;
  const pileEl = $('discard-pile');
  pileEl.replaceChildren();
  const pile = v.discard_pile || [];
  if (pile.length > 1) {
    const under = backEl();
    under.classList.add('under');
    pileEl.append(under);
  }
  if (pile.length) {
    const top = pile[pile.length - 1];
    const el = cardEl(top, { attr: 'card' });
    el.classList.add('top');
    const last = lastEvent(v);
    if (last && last.who === 'opponent' && last.card === top && /discard|knock/.test(last.action || '')) {
      el.classList.add('highlight');
    }
    pileEl.append(el);
  } else {
    const ph = document.createElement('div');
    ph.className = 'card placeholder';
    ph.textContent = 'empty';
    pileEl.append(ph);
  }
  pileEl.classList.toggle('can-draw', legal().includes('draw_discard'));
  pileEl.classList.toggle('can-drop', v.stage === 'play' && v.turn === 'you' && v.phase === 'discard');
  $('pile-button').textContent = `Discard pile (${pile.length})`;
  const upcard = v.stage === 'play' && v.turn === 'you' && legal().includes('pass');
  $('upcard-buttons').hidden = !upcard;
}

function renderTalk(v) {
  let prompt = v.prompt || '';
  if (v.stage === 'play' && v.turn === 'opponent' && !prompt) prompt = `${opponentLabel()} is playing\u2026`;
  const promptEl = $('prompt');
  setRichText(promptEl, prompt);
  const last = lastEvent(v);
  if (v.stage === 'play' && v.turn === 'you' && last && last.who === 'opponent' && last.text) {
    // What the other side just did, before what to do now.
    const move = document.createElement('span');
    move.className = 'prompt-move';
    setRichText(move, last.text);
    promptEl.prepend(move, ' ');
  }
  $('prompt').classList.toggle('your-turn', v.stage === 'play' && v.turn === 'you');
  const log = $('log');
  log.replaceChildren();
  const events = v.events || [];
  for (const ev of events.slice(-30)) {
    const li = document.createElement('li');
    li.className = ev.who === 'you' ? 'ev-you' : ev.who === 'opponent' ? 'ev-opponent' : 'ev-other';
    setRichText(li, ev.text || `${ev.who} ${ev.action}`);
    log.append(li);
  }
  log.scrollTop = log.scrollHeight;
}

function renderToolbar(v) {
  const note = $('watch-note');
  note.hidden = !v.spectator;
  if (v.spectator) {
    note.textContent =
      `You are watching ${youLabel()} and ${opponentLabel()}. A spectator sees what both players see: ` +
      'the discard pile and the moves, and the hands at a showdown.';
  }
  renderSeat0(v);
  $('deadwood').hidden = !!v.spectator;
  const hand = v.hand || { cards: [], melds: [], deadwood: 0 };
  let text = `Deadwood ${hand.deadwood}`;
  const hints = v.discard_hints || {};
  if (state.selected && state.selected in hints) {
    text += ` \u00b7 after discarding ${cardLabel(state.selected)}: ${hints[state.selected]}`;
  }
  $('deadwood').textContent = text;
  const kc = knockCards();
  const knock = $('knock');
  knock.hidden = kc.length === 0;
  if (kc.length) {
    if (state.selected && kc.includes(state.selected)) {
      const n = hints[state.selected];
      knock.textContent = n === 0 ? 'Gin' : `Knock (deadwood ${n})`;
      knock.classList.add('ready');
    } else {
      knock.textContent = 'Knock';
      knock.classList.remove('ready');
    }
  }
  $('big-gin').hidden = !legal().includes('big_gin');
  $('autosort').hidden = !state.customOrder;
}

function handOrder(v) {
  const cards = (v.hand && v.hand.cards) || [];
  if (!state.customOrder) return cards.slice();
  const inHand = new Set(cards);
  const order = state.customOrder.filter((c) => inHand.has(c));
  const placed = new Set(order);
  for (const c of cards) if (!placed.has(c)) order.push(c); // new cards go at the end
  state.customOrder = order;
  return order;
}

function renderHand(v) {
  state.pendingHandRender = false;
  const handEl = $('hand');
  handEl.replaceChildren();
  const melds = (v.hand && v.hand.melds) || [];
  const meldOf = new Map();
  melds.forEach((m, i) => m.forEach((c) => meldOf.set(c, i)));
  const kc = new Set(knockCards());
  const hints = v.discard_hints || {};
  const justGot = v.drawn || v.taken;
  let group = null;
  let groupMeld = -1;
  for (const card of handOrder(v)) {
    const el = cardEl(card, { attr: 'card' });
    el.classList.add('hand-card');
    el.setAttribute('role', 'button');
    el.tabIndex = 0;
    if (card === state.selected) el.classList.add('selected');
    if (kc.has(card)) el.classList.add('knockable');
    if (card === justGot) el.classList.add('new');
    if (card in hints) el.title = `${cardSpoken(card)}: deadwood ${hints[card]} after discarding it`;
    const mi = meldOf.has(card) ? meldOf.get(card) : -1;
    if (mi >= 0) {
      el.classList.add('in-meld');
      el.style.setProperty('--mc', MELD_COLOURS[mi % MELD_COLOURS.length]);
      if (!group || groupMeld !== mi) {
        group = document.createElement('div');
        group.className = 'meld';
        group.style.setProperty('--mc', MELD_COLOURS[mi % MELD_COLOURS.length]);
        group.setAttribute('aria-label', 'meld');
        groupMeld = mi;
        handEl.append(group);
      }
      group.append(el);
    } else {
      group = null;
      groupMeld = -1;
      handEl.append(el);
    }
  }
  fitHand();
}

// A phone's 11 cards in at most two rows: the cards overlap (each keeps its corner in sight),
// more only when the melds' frames need it.
function handRows() {
  const tops = [...$('hand').querySelectorAll('.hand-card')]
    .map((el) => el.getBoundingClientRect().top)
    .sort((a, b) => a - b);
  let rows = 0;
  let last = -Infinity;
  for (const t of tops) {
    if (t - last > 30) {
      rows += 1; // a raised (selected) card or a meld's frame moves a card a few pixels, not a row
      last = t;
    }
  }
  return rows;
}

function fitHand() {
  const handEl = $('hand');
  handEl.style.removeProperty('--overlap');
  if (handEl.offsetParent === null || !window.matchMedia('(max-width: 600px)').matches) return;
  const base = parseFloat(getComputedStyle(handEl).getPropertyValue('--overlap')) || 0;
  let overlap = base;
  while (handRows() > 2 && overlap < 30) {
    overlap += 3;
    handEl.style.setProperty('--overlap', `${overlap}px`);
  }
}

function pointsWords(sd) {
  if (!sd.winner || !sd.points) return 'No points';
  const who = sd.winner === 'you' ? (state.view && state.view.spectator ? youLabel() : 'you') : opponentLabel();
  return `+${sd.points} to ${who}`;
}

function showdownHands(sd, container) {
  container.replaceChildren();
  const side = (who, label, data) => {
    const box = document.createElement('section');
    box.className = 'sd-side sd-' + who;
    const h = document.createElement('h3');
    const name = document.createElement('span');
    name.textContent = label;
    h.append(name);
    if (sd.knocker === who) {
      const k = document.createElement('span');
      k.className = 'tag';
      k.textContent = sd.kind === 'gin' || sd.kind === 'big_gin' ? kindWords(sd.kind) : 'knocked';
      h.append(k);
    }
    box.append(h);
    if (!data) {
      const p = document.createElement('p');
      p.className = 'field-note';
      p.textContent = 'Hand not shown (dead hand).';
      box.append(p);
      container.append(box);
      return;
    }
    const layoffs = data.layoffs || [];
    const loose = (data.deadwood_cards || []).filter((c) => !layoffs.includes(c));
    box.append(meldBlock(data.melds || [], loose, { layoffs }));
    const dw = document.createElement('p');
    dw.className = 'sd-deadwood';
    dw.textContent = `Deadwood ${data.deadwood}`;
    box.append(dw);
    container.append(box);
  };
  side('you', youLabel(), sd.you);
  side('opponent', opponentLabel(), sd.opponent);
}

function scoreWords(v) {
  const sc = v.scores || { you: 0, opponent: 0 };
  const you = v.spectator ? youLabel() : 'you';
  return `Score: ${you} ${sc.you}, ${opponentLabel()} ${sc.opponent} (match to ${v.target}).`;
}

function renderShowdown(v) {
  const sd = v.showdown;
  const open = v.stage === 'showdown' && !!sd;
  $('showdown').hidden = !open;
  if (!open) return;
  $('showdown-kind').textContent = kindWords(sd.kind);
  $('showdown-kind').className = 'kind-badge kind-' + sd.kind;
  setRichText($('showdown-title'), sd.title || kindWords(sd.kind));
  $('showdown-points').textContent = pointsWords(sd);
  $('showdown-points').className = 'points-badge ' + (sd.winner === 'you' ? 'win' : sd.winner ? 'loss' : 'none');
  showdownHands(sd, $('showdown-hands'));
  $('showdown-score').textContent = scoreWords(v);
  // A friend table: the next hand starts when both pressed Next hand.
  const next = $('next-hand');
  // waiting_for "next": this seat pressed it (a spectator: one of the players did), the other has not.
  const waiting = v.waiting_for === 'next';
  next.hidden = !!v.spectator;
  next.disabled = !!waiting && !v.spectator;
  next.textContent = waiting && !v.spectator ? `Waiting for ${opponentLabel()}\u2026` : 'Next hand';
  const waitWords = v.spectator ? waitingWords(v) || 'Waiting for the players to start the next hand.' : waiting ? waitingWords(v) : v.waiting_for === 'reconnect' ? waitingWords(v) : '';
  $('showdown-wait').textContent = waitWords;
  $('showdown-wait').hidden = !waitWords;
  if (!state.busy && !next.disabled && !next.hidden && $('help').hidden && $('pile-panel').hidden) {
    next.focus({ preventScroll: true });
  }
}

const pick = (obj, who) => {
  if (obj == null) return null;
  if (Array.isArray(obj)) return obj[who === 'you' ? 0 : 1];
  return obj[who];
};

function renderMatchOver(v) {
  const zero = { you: 0, opponent: 0 };
  // A match stopped at the hand limit has no points, bonuses or totals: its table is hidden.
  const mr = v.match_result && { points: zero, bonuses: zero, totals: null, hands_won: zero, ...v.match_result };
  const open = v.stage === 'over' && !!mr;
  $('match-over').hidden = !open;
  if (!open) return;
  const opp = opponentLabel();
  let title;
  const you = youLabel();
  if (mr.left === 'opponent') title = v.spectator ? `${opp} left the match.` : `${opp} left the match: it is over.`;
  else if (mr.left === 'you') title = v.spectator ? `${you} left the match.` : 'You left the match.';
  else if (mr.winner === 'you') title = v.spectator ? `${you} wins the match.` : 'You win the match!';
  else if (mr.winner === 'opponent') title = `${opp} wins the match.`;
  else title = mr.truncated ? 'The match stopped at the hand limit: no winner.' : 'No winner.';
  $('new-match').textContent = v.spectator ? 'Stop watching' : 'New match';
  $('match-title').textContent = title;
  const sd = v.showdown;
  setRichText($('match-last-hand'), sd ? `Last hand: ${kindWords(sd.kind)}. ${sd.title || ''}` : '');
  const rules = v.rules || {};
  const table = $('standings');
  table.replaceChildren();
  table.hidden = !mr.totals;
  const row = (cells, tag = 'td', cls = '') => {
    const tr = document.createElement('tr');
    if (cls) tr.className = cls;
    cells.forEach((c, i) => {
      const el = document.createElement(i === 0 ? 'th' : tag);
      if (i === 0 && tag === 'td') el.scope = 'row';
      el.textContent = c;
      tr.append(el);
    });
    table.append(tr);
  };
  const thead = ['', you, opp];
  row(thead, 'th');
  const hw = (w) => pick(mr.hands_won, w) ?? 0;
  row(['Hands won', String(hw('you')), String(hw('opponent'))]);
  row(['Points', String(pick(mr.points, 'you')), String(pick(mr.points, 'opponent'))]);
  const line = (w) => (rules.line_bonus || 0) * hw(w);
  const game = (w) => (mr.winner === w ? rules.game_bonus || 0 : 0);
  if (rules.line_bonus) row([`Line bonus (${rules.line_bonus} a hand)`, String(line('you')), String(line('opponent'))]);
  if (rules.game_bonus) row([`Game bonus`, String(game('you')), String(game('opponent'))]);
  if (mr.shutout && mr.winner && (rules.shutout_multiplier || 1) > 1 && (rules.game_bonus || rules.line_bonus)) {
    const mult = rules.shutout_multiplier || 1;
    const cells = ['Shutout', '', ''];
    cells[mr.winner === 'you' ? 1 : 2] = mult === 2 ? 'bonuses doubled' : `bonuses \u00d7${mult}`;
    row(cells);
  }
  row(['Bonuses', String(pick(mr.bonuses, 'you') ?? 0), String(pick(mr.bonuses, 'opponent') ?? 0)]);
  row(['Total', String(pick(mr.totals, 'you')), String(pick(mr.totals, 'opponent'))], 'td', 'total');
  const notes = [`${mr.hands_played} hand${mr.hands_played === 1 ? '' : 's'} played.`];
  if (mr.shutout) notes.push('Shutout: the loser scored no points.');
  $('match-notes').textContent = notes.join(' ');
  const rep = $('match-replay');
  rep.replaceChildren();
  if (v.replay) {
    rep.append('Replay saved as ');
    const a = document.createElement('a');
    a.href = `/replay?name=${encodeURIComponent(v.replay)}`;
    a.textContent = v.replay;
    a.id = 'replay-link';
    rep.append(a, '.');
  } else {
    rep.textContent = 'No replay file was saved.';
  }
  $('match-last-details').hidden = !sd;
  if (sd) showdownHands(sd, $('match-last-hands'));
}

function renderPilePanel() {
  const pile = (state.view && state.view.discard_pile) || [];
  const box = $('pile-cards');
  box.replaceChildren();
  if (!pile.length) {
    box.textContent = 'The discard pile is empty.';
    return;
  }
  pile.forEach((c, i) => {
    const item = document.createElement('div');
    item.className = 'pile-item' + (i === pile.length - 1 ? ' is-top' : '');
    const n = document.createElement('span');
    n.className = 'pile-n';
    n.textContent = i === pile.length - 1 ? 'top' : String(i + 1);
    item.append(cardEl(c, { small: true }), n);
    box.append(item);
  });
}

// ---------------------------------------------------------------- help

// The rules of the match being played, else of the preset chosen; null until the server answers.
function currentRules() {
  if (state.view && state.view.rules) return state.view.rules;
  const pre = ((state.options && state.options.presets) || []).find(
    (p) => p.name === $('preset-select').value,
  );
  return (pre && pre.rules) || null;
}

function renderHelp() {
  const r = currentRules();
  const key = JSON.stringify(r);
  if (key === state.helpKey) return; // unchanged: keep the reader's place and selection
  state.helpKey = key;
  const body = $('help-body');
  if (!r) {
    body.textContent = 'The rules show here once the game server has answered.';
    return;
  }
  const esc = (s) => String(s).replace(/[&<>]/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[ch]);
  const bigGin =
    r.big_gin_bonus == null
      ? 'Big gin is off in these rules.'
      : `<b>Big gin</b>: if all 11 cards meld right after your draw, lay them down without discarding: ${esc(r.big_gin_bonus)} points plus the opponent's deadwood.`;
  const knockRule = r.oklahoma
    ? 'Oklahoma: the knock limit of a hand is the value of the first upcard (an ace: gin only).'
    : `You may knock when discarding if the deadwood of the 10 cards you keep is ${esc(r.knock_limit)} or less.`;
  const match = [`The match goes to <b>${esc(r.target)}</b> points.`];
  if (r.game_bonus) match.push(`The winner gets a game bonus of ${esc(r.game_bonus)}.`);
  if (r.line_bonus) match.push(`Each hand won is worth a line bonus of ${esc(r.line_bonus)}.`);
  if (r.shutout_multiplier > 1 && (r.game_bonus || r.line_bonus)) {
    match.push(
      `A shutout (the loser scored nothing) multiplies the winner's bonuses by ${esc(r.shutout_multiplier)}.`,
    );
  }
  body.innerHTML = `
    <h3>The rules in short</h3>
    <ul>
      <li>A <b>meld</b> is a <b>set</b> (3 or 4 cards of one rank, 7\u2660 <span class="red">7\u2665 7\u2666</span>) or a <b>run</b>
        (3 or more cards in sequence in one suit, <span class="red">4\u2665 5\u2665 6\u2665</span>). Aces are low: A-2-3 is a run,
        Q-K-A is not. A card belongs to one meld only.</li>
      <li><b>Deadwood</b>: the cards outside your melds. Ace 1, 2 to 10 their value, J Q K 10. The game
        finds the best melds for you.</li>
      <li>Each player gets 10 cards; the next card, the <b>upcard</b>, starts the discard pile. The
        non-dealer may take it or pass, then the dealer; if both pass, the non-dealer draws from the
        stock.</li>
      <li>On your turn, draw the top card of the <b>stock</b> or of the <b>discard pile</b>, then discard
        one card. ${
          r.discard_taken_card
            ? 'In these rules you may discard the card you just took from the pile.'
            : 'You may not discard the card you just took from the discard pile.'
        }</li>
      <li><b>Knock</b>: ${knockRule} Deadwood 0 is <b>gin</b>.</li>
      <li>After a knock the other player lays down their melds and may <b>lay off</b> deadwood on the
        knocker's melds (never after gin); the game does it for you.</li>
      <li>The knocker scores the difference in deadwood. <b>Undercut</b>: if the other player has equal or
        less deadwood, they score the difference plus ${esc(r.undercut_bonus)}.</li>
      <li><b>Gin</b> scores ${esc(r.gin_bonus)} plus the opponent's deadwood. ${bigGin}</li>
      <li><b>Dead hand</b>: when only ${esc(r.dead_hand_stock)} cards are left in the stock and nobody
        has knocked, the hand scores nothing.</li>
      <li>${match.join(' ')}</li>
    </ul>
    <h3>Tips</h3>
    <ol>
      <li>Take the card from the discard pile only if it completes a meld or nearly makes one. Otherwise
        draw from the stock.</li>
      <li>Throw high cards early. Face cards are worth 10 each, and a single one left in your hand can hurt
        when someone knocks.</li>
      <li>Keep pairs and near cards in one suit, like a 5 and a 7. They can become melds with any draw.</li>
      <li>Watch what your opponent picks up from the discard pile. It tells you which cards they are
        building with, so do not throw those.</li>
      <li>Knock early when you can. Low deadwood while cards are still in play is a quick win, but the
        other side can undercut you if you knock with 10.</li>
      <li>Think before knocking with a high count. If your opponent may have a meld ready, an undercut costs
        you ${esc(r.undercut_bonus)} points on top of the difference.</li>
    </ol>
    <h3>Tactics</h3>
    <ul>
      <li>Play offence first: try to win the hand. When it goes badly, switch to defence: shed high cards to
        limit the loss, or hold back the cards the opponent needs until the stock runs out.</li>
      <li>When one card would help you, keep your hand intact for a few turns; when two would, wait a little
        longer, but soon start throwing high cards (such as a pair of kings) if nothing improves.</li>
      <li>With deadwood of only 1, play on for gin: if the opponent knocks, you undercut them.</li>
      <li>Low cards are good defensive discards: a third ace lowers the opponent's deadwood by 2, a third
        king by 20.</li>
      <li>Runs ending in a king or an ace are worth less: they can grow at one end only.</li>
      <li>Kings and aces are the safest discards, then queens and twos; threes to jacks are riskier.</li>
      <li>Remember the discards, so you never wait for a meld that cannot be made.</li>
      <li>Note what the opponent picks up (a set or a run?) and what they pass: their later discards often
        tell which.</li>
    </ul>
    <h3>Controls</h3>
    <ul>
      <li><b>Draw</b>: tap the stock<span class="key-hint"> or press <kbd>T</kbd></span>; tap the discard
        pile<span class="key-hint"> or press <kbd>D</kbd></span>.</li>
      <li><b>Upcard</b>: Take<span class="key-hint"> (<kbd>D</kbd>)</span> or Pass<span class="key-hint"> (<kbd>P</kbd>)</span>.</li>
      <li><b>Discard</b>: tap a card to select it (it rises), tap it again to discard it; or drag it onto
        the discard pile.</li>
      <li><b>Knock</b>: select the card to discard, then press Knock. Knockable cards carry a small dot.</li>
      <li><b>Reorder</b>: drag a card onto another place in your hand. <b>Auto-sort</b> returns to the
        game's order (melds first, framed, then deadwood).</li>
      <li class="key-hint"><kbd>H</kbd> opens this help; <kbd>Esc</kbd> closes a panel or drops the selection.</li>
      <li><b>Play with a friend</b>: New match, With a friend, then send the invitation link. Each of you
        sees only your own hand. If you leave or lose the connection, the same link (or this page) brings
        you back to your seat; <b>Leave</b> ends the match for both.</li>
    </ul>`;
}

function openPanel(id) {
  if (id === 'pile-panel') renderPilePanel();
  if (id === 'share-panel') renderSharePanel();
  if (id === 'help') renderHelp();
  $(id).hidden = false;
  const close = $(id).querySelector('.close-panel');
  if (close) close.focus({ preventScroll: true });
}

function closePanel(id) {
  $(id).hidden = true;
}

// ---------------------------------------------------------------- the hand: tap, drag, reorder

function onCardTap(card) {
  const v = state.view;
  if (!v) return;
  if (state.selected === card) {
    if (v.stage === 'play' && v.turn === 'you') {
      act(`discard ${card}`); // the server explains any refusal
    } else {
      state.selected = null;
      render();
    }
    return;
  }
  state.selected = card;
  render();
}

function onHandPointerDown(ev) {
  const el = ev.target.closest('.hand-card');
  if (!el || ev.button > 0) return;
  if (state.drag) return;
  ev.preventDefault();
  state.drag = {
    card: el.dataset.card,
    el,
    id: ev.pointerId,
    x0: ev.clientX,
    y0: ev.clientY,
    moving: false,
    ghost: null,
    target: null,
  };
  try {
    el.setPointerCapture(ev.pointerId);
  } catch (err) {
    /* capture is a convenience */
  }
}

function dropTargetAt(x, y) {
  const hit = document.elementFromPoint(x, y);
  if (!hit) return null;
  const pile = hit.closest('#discard-pile');
  if (pile) return { kind: 'pile', el: pile };
  const card = hit.closest('.hand-card');
  if (card) return { kind: 'card', el: card };
  const hand = hit.closest('#hand');
  if (hand) return { kind: 'hand', el: hand };
  return null;
}

function clearDropMarks() {
  document.querySelectorAll('.drop-before, .drop-after, .drop-hover').forEach((e) => {
    e.classList.remove('drop-before', 'drop-after', 'drop-hover');
  });
}

function onPointerMove(ev) {
  const d = state.drag;
  if (!d || ev.pointerId !== d.id) return;
  const dx = ev.clientX - d.x0;
  const dy = ev.clientY - d.y0;
  if (!d.moving) {
    if (Math.hypot(dx, dy) < DRAG_THRESHOLD) return;
    d.moving = true;
    const rect = d.el.getBoundingClientRect();
    d.offX = d.x0 - rect.left;
    d.offY = d.y0 - rect.top;
    const ghost = d.el.cloneNode(true);
    ghost.removeAttribute('data-card');
    ghost.classList.add('ghost');
    ghost.classList.remove('selected');
    ghost.style.width = `${rect.width}px`;
    ghost.style.height = `${rect.height}px`;
    $('drag-layer').append(ghost);
    d.ghost = ghost;
    d.el.classList.add('dragging');
    document.body.classList.add('is-dragging');
  }
  d.ghost.style.transform = `translate(${ev.clientX - d.offX}px, ${ev.clientY - d.offY}px) rotate(-3deg)`;
  clearDropMarks();
  const t = dropTargetAt(ev.clientX, ev.clientY);
  d.target = t;
  if (!t) return;
  if (t.kind === 'pile') t.el.classList.add('drop-hover');
  else if (t.kind === 'card' && t.el !== d.el) {
    const r = t.el.getBoundingClientRect();
    t.el.classList.add(ev.clientX < r.left + r.width / 2 ? 'drop-before' : 'drop-after');
  }
}

function endDrag() {
  const d = state.drag;
  state.drag = null;
  clearDropMarks();
  document.body.classList.remove('is-dragging');
  if (d && d.ghost) d.ghost.remove();
  if (d && d.el) d.el.classList.remove('dragging');
  return d;
}

function onPointerUp(ev) {
  const d = state.drag;
  if (!d || ev.pointerId !== d.id) return;
  if (!d.moving) {
    endDrag();
    if (state.pendingHandRender) renderHand(state.view);
    onCardTap(d.card);
    return;
  }
  const t = dropTargetAt(ev.clientX, ev.clientY);
  endDrag();
  const v = state.view;
  if (t && t.kind === 'pile') {
    if (state.pendingHandRender) renderHand(v);
    if (v && v.stage === 'play' && v.turn === 'you') act(`discard ${d.card}`);
    else showMessage(`Wait: it is ${opponentLabel()}'s turn.`, 'info');
    return;
  }
  if (t && t.kind === 'card' && t.el.dataset.card !== d.card) {
    const order = handOrder(v).filter((c) => c !== d.card);
    const r = t.el.getBoundingClientRect();
    let i = order.indexOf(t.el.dataset.card);
    if (ev.clientX >= r.left + r.width / 2) i += 1;
    order.splice(i, 0, d.card);
    const server = (v.hand && v.hand.cards) || [];
    state.customOrder = order.join() === server.join() ? null : order;
  } else if (t && t.kind === 'hand') {
    // Dropped on the hand's empty space: the card goes to the end.
    const order = handOrder(v).filter((c) => c !== d.card);
    order.push(d.card);
    const server = (v.hand && v.hand.cards) || [];
    state.customOrder = order.join() === server.join() ? null : order;
  }
  saveOrder();
  render();
}

function onPointerCancel(ev) {
  const d = state.drag;
  if (!d || ev.pointerId !== d.id) return;
  endDrag();
  render();
}


// ---------------------------------------------------------------- wiring

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

const PANELS = ['help', 'pile-panel', 'share-panel'];

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

async function copyLink(input) {
  const text = input.value;
  if (!text) return;
  try {
    await navigator.clipboard.writeText(text);
    showMessage('Link copied: send it to your friend.', 'info');
    return;
  } catch (err) {
    /* no clipboard API here (a page not served from localhost or https): select it instead */
  }
  input.focus();
  input.select();
  let copied = false;
  try {
    copied = document.execCommand('copy');
  } catch (err) {
    copied = false;
  }
  showMessage(copied ? 'Link copied: send it to your friend.' : 'The link is selected: copy it, then send it.', 'info');
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
  $('preset-select').addEventListener('change', describeSetup);
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
  const hand = $('hand');
  hand.addEventListener('pointerdown', onHandPointerDown);
  hand.addEventListener('pointermove', onPointerMove);
  hand.addEventListener('pointerup', onPointerUp);
  hand.addEventListener('pointercancel', onPointerCancel);
  hand.addEventListener('lostpointercapture', (ev) => {
    // pointerup fires first when it ends normally; this catches a capture lost mid-drag.
    const d = state.drag;
    if (d && ev.pointerId === d.id) setTimeout(() => onPointerCancel(ev), 0);
  });
  hand.addEventListener('contextmenu', (ev) => ev.preventDefault());
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
