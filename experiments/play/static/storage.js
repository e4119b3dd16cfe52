// What the play page keeps in the browser and in the address: the table being played
// (localStorage "ginenv.current" and #game= / #seat= / #watch= / #join=), the name last given for a
// friend table, the seat each invitation gave on this device, and the hand's custom order
// (sessionStorage). The replay page reads the current table from here too (its Play link returns to
// it). An ES module; plain ES2020, no build step. Storage that is off (private mode) or garbled
// reads as empty; the address still holds the table.

const CURRENT_KEY = 'ginenv.current'; // {"kind": "game" | "seat" | "watch", "token": ...}
const NAME_KEY = 'ginenv.name'; // the name last given for a friend table
const INVITES_KEY = 'ginenv.invites'; // invitation token -> the seat it gave on this device
const ORDER_KEY = 'ginenv.order'; // sessionStorage: the hand's custom order {token, hand, order}

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

// ---------------------------------------------------------------- the table being played

const KINDS = ['game', 'seat', 'watch'];
const validTable = (t) => !!t && KINDS.includes(t.kind) && typeof t.token === 'string' && t.token.length > 0;
const sameTable = (a, b) => !!a && !!b && a.kind === b.kind && a.token === b.token;

// The table this browser plays or watches ({kind, token}), or null.
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

// ---------------------------------------------------------------- friend tables

// The name last given for a friend table ('' when none).
function savedName() {
  try {
    return localStorage.getItem(NAME_KEY) || '';
  } catch (err) {
    return ''; // storage off
  }
}

function saveName(name) {
  try {
    localStorage.setItem(NAME_KEY, name);
  } catch (err) {
    /* storage off */
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

// The invitation token of an invitation link ("/#join=TOKEN"), or null.
function inviteToken(path) {
  const m = /#join=([^&#]+)$/.exec(path || '');
  return m ? decodeURIComponent(m[1]) : null;
}

// ---------------------------------------------------------------- the hand's custom order

// Keeps `order` (null: the server's order) for hand `hand` of table `t`, for a reload of this tab.
function writeOrder(t, hand, order) {
  writeJSON(sessionStorage, ORDER_KEY, order ? { token: `${t.kind}:${t.token}`, hand, order } : null);
}

// The custom order kept for hand `hand` of table `t`, or null.
function readOrder(t, hand) {
  const o = readJSON(sessionStorage, ORDER_KEY);
  if (!o || o.token !== `${t.kind}:${t.token}` || o.hand !== hand || !Array.isArray(o.order)) return null;
  return o.order.filter((c) => typeof c === 'string');
}

export {
  readCurrent, writeCurrent, sameTable, readHash, writeHash,
  savedName, saveName, rememberInvite, seatOfInvite, inviteToken,
  writeOrder, readOrder,
};
