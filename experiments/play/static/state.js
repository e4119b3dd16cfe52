// The play page's state (one object that every module of the page reads and changes), the JSON
// API and message banner as this page uses them, and what follows from the state alone: the API
// path of the table, whether this page plays or watches, the legal moves, and how the page names
// the two sides. An ES module; plain ES2020, no build step.

import { ApiError, api as apiCall, showMessage as showBanner } from './common.js';
import { writeOrder } from './storage.js';

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

// The API path of a table.
function base(t = state.table) {
  const id = encodeURIComponent(t.token);
  if (t.kind === 'game') return `/api/games/${id}`;
  if (t.kind === 'seat') return `/api/seats/${id}`;
  return `/api/watch/${id}`;
}

const gone = (err) => err instanceof ApiError && (err.status === 404 || err.status === 410);

// The hand's custom order of this table and hand, kept for a reload (sessionStorage).
function saveOrder() {
  const t = state.table;
  const v = state.view;
  if (!t || !v) return;
  writeOrder(t, v.hand_index, state.customOrder);
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

function setBusy(on) {
  document.body.classList.toggle('busy', on);
}

const isPlayer = () => !!state.table && state.table.kind !== 'watch';

const legal = () => (state.view && state.view.legal) || [];
const knockCards = () =>
  legal()
    .filter((a) => a.startsWith('knock '))
    .map((a) => a.slice(6));

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

export {
  state, api, showMessage, base, gone, saveOrder, busyDo,
  isPlayer, legal, knockCards, opponentLabel, youLabel, waitingWords,
};
