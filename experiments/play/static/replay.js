// The replay page of `ginenv play`: saved replays (GET /api/replays) or any replay file from disk
// (POST /api/replays/view), shown move by move with both hands. An ES module; plain ES2020, no build step.

// The cards, card texts, meld groups, API wrapper and message banner come from common.js; the table
// being played (for the Play link) from storage.js, which the play page writes.
import {
  $,
  api as apiCall,
  cardEl,
  cardLabel,
  fillSelect,
  kindWords,
  meldBlock,
  setRichText as commonRichText,
  showMessage,
} from './common.js';
import { readCurrent } from './storage.js';

// Replay texts name cards "Th" and seats "player_0": shown as "10♥" and the players' names.
function setRichText(el, text) {
  text = String(text)
    .replace(/\bplayer_([01]) (deals|scores)\b/g, (all, i, verb) =>
      state.names[Number(i)] === 'You' ? `you ${verb.slice(0, -1)}` : all,
    )
    .replace(/\bplayer_([01])\b/g, (_, i) => state.names[Number(i)]);
  commonRichText(el, text);
}

const state = { doc: null, hand: 0, frame: 0, names: ['player_0', 'player_1'], current: null };

// Replay files are sent as read (text that is JSON already).
const api = (method, path, body) => apiCall(method, path, body, { raw: true });

// ---------------------------------------------------------------- the list

function sizeText(n) {
  return n < 1024 ? `${n} B` : `${(n / 1024).toFixed(n < 10240 ? 1 : 0)} kB`;
}

async function loadList() {
  const list = $('replay-list');
  let data;
  try {
    data = await api('GET', '/api/replays');
  } catch (err) {
    showMessage(err.message);
    return;
  }
  list.replaceChildren();
  const items = (data && data.replays) || [];
  if (!items.length) {
    const li = document.createElement('li');
    li.className = 'empty-note';
    li.textContent = 'No saved replays yet: play a match first.';
    list.append(li);
    return;
  }
  for (const r of items) {
    const li = document.createElement('li');
    const b = document.createElement('button');
    b.type = 'button';
    b.dataset.name = r.name;
    b.append(r.name);
    const meta = document.createElement('span');
    meta.className = 'meta';
    meta.textContent = `${(r.modified || '').replace('T', ' ')} \u00b7 ${sizeText(r.size || 0)}`;
    b.append(meta);
    b.addEventListener('click', () => openSaved(r.name));
    li.append(b);
    list.append(li);
  }
  markCurrent();
}

function markCurrent() {
  document.querySelectorAll('#replay-list button').forEach((b) => {
    b.classList.toggle('current', b.dataset.name === state.current);
  });
}

async function openSaved(name) {
  try {
    const doc = await api('GET', `/api/replays/${encodeURIComponent(name)}`);
    state.current = name;
    const url = new URL(window.location.href);
    url.searchParams.set('name', name);
    window.history.replaceState(null, '', url);
    show(doc);
  } catch (err) {
    showMessage(err.message);
  }
}

async function openFile(file) {
  if (!file) return;
  let text;
  try {
    text = await file.text();
  } catch (err) {
    showMessage(`Cannot read ${file.name}: ${err.message}`);
    return;
  }
  try {
    JSON.parse(text);
  } catch (err) {
    showMessage(`${file.name} is not a JSON file: ${err.message}`);
    return;
  }
  try {
    const doc = await api('POST', '/api/replays/view', text);
    if (!doc.name) doc.name = file.name;
    state.current = null;
    const url = new URL(window.location.href);
    url.searchParams.delete('name');
    window.history.replaceState(null, '', url);
    show(doc);
  } catch (err) {
    showMessage(err.message);
  }
}

// ---------------------------------------------------------------- the viewer

function playerNames(doc) {
  // The names the server gives (doc.players), else the file name: `ginenv play` writes
  // "STAMP-you-vs-OPPONENT-TAG.json" (the person is player_0) and, for a friend table,
  // "STAMP-HOST-vs-GUEST-TAG.json" (the names in lower case, dashes for spaces).
  if (Array.isArray(doc.players) && doc.players.length === 2 && doc.players.every((p) => typeof p === 'string')) {
    return doc.players.slice();
  }
  const m = /^\d{4}-\d\d-\d\dT\d{6}-(.+)-vs-(.+?)(?:-daily-\d{4}-\d\d-\d\d)?-[A-Za-z0-9_]+\.json$/.exec(doc.name || '');
  if (!m) return ['player_0', 'player_1'];
  const word = (slug) =>
    slug
      .split(/[-_]+/)
      .filter(Boolean)
      .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
      .join(' ');
  return [m[1] === 'you' ? 'You' : word(m[1]), word(m[2])];
}

function show(doc) {
  state.doc = doc;
  state.hand = 0;
  state.frame = 0;
  state.names = playerNames(doc);
  $('viewer-empty').hidden = true;
  $('viewer').hidden = false;
  const what = doc.mode === 'match' ? `a match of ${doc.hands.length} hand${doc.hands.length === 1 ? '' : 's'}` : 'one hand';
  $('replay-title').textContent = `${doc.name || 'Replay'} \u2014 ${what}`;
  const sel = $('hand-select');
  fillSelect(
    sel,
    doc.hands.map((h, i) => ({
      name: String(i),
      label: `${i + 1} (${h.result ? kindWords(doc.kind_words[h.result.kind], h.result.kind) : 'unfinished'})`,
    })),
  );
  markCurrent();
  render();
}

const frames = () => state.doc.hands[state.hand].frames;

function go(hand, frame) {
  if (!state.doc) return;
  const hands = state.doc.hands;
  hand = Math.max(0, Math.min(hands.length - 1, hand));
  const n = hands[hand].frames.length;
  frame = Math.max(0, Math.min(n - 1, frame));
  state.hand = hand;
  state.frame = frame;
  render();
}

function step(delta) {
  if (!state.doc) return;
  const n = frames().length;
  const f = state.frame + delta;
  if (f >= n && state.hand < state.doc.hands.length - 1) go(state.hand + 1, 0);
  else if (f < 0 && state.hand > 0) go(state.hand - 1, state.doc.hands[state.hand - 1].frames.length - 1);
  else go(state.hand, f);
}

function renderHand(box, seat, hand, prevHand, frame) {
  box.replaceChildren();
  const h = document.createElement('h3');
  const name = document.createElement('span');
  name.textContent = state.names[seat];
  const seatTag = document.createElement('span');
  seatTag.className = 'dw';
  const dealer = state.doc.hands[state.hand].dealer === seat ? ' \u00b7 dealer' : '';
  seatTag.textContent = `player_${seat}${dealer}`;
  const dw = document.createElement('span');
  dw.className = 'dw';
  dw.textContent = `deadwood ${hand.deadwood}`;
  h.append(name, seatTag, dw);
  box.append(h);
  box.classList.toggle('actor', frame.actor === seat);
  const prev = new Set(prevHand ? prevHand.cards : hand.cards);
  const row = meldBlock(hand.melds, hand.deadwood_cards, {
    mark: (el, c) => {
      if (!prev.has(c)) el.classList.add('changed');
    },
  });
  if (!hand.cards.length) {
    const p = document.createElement('p');
    p.className = 'empty-note';
    p.textContent = 'No cards.';
    row.append(p);
  }
  box.append(row);
}

function resultText(r) {
  const n = state.names;
  const kind = kindWords(state.doc.kind_words[r.kind], r.kind);
  const lines = [];
  if (r.winner == null) {
    lines.push(`${kind}: no points.`);
  } else {
    const by = r.knocker != null ? ` by ${n[r.knocker]}` : '';
    lines.push(`${kind}${by}: ${n[r.winner]} scores ${r.points} point${r.points === 1 ? '' : 's'}.`);
  }
  if (Array.isArray(r.deadwood)) lines.push(`Deadwood: ${n[0]} ${r.deadwood[0]}, ${n[1]} ${r.deadwood[1]}.`);
  if (r.layoffs && r.layoffs.length) {
    lines.push(`Laid off: ${r.layoffs.map(cardLabel).join(' ')}.`);
  }
  return lines;
}

function renderResult(frame) {
  const box = $('replay-result');
  box.replaceChildren();
  const hand = state.doc.hands[state.hand];
  const atEnd = state.frame === hand.frames.length - 1;
  if (!atEnd || (!hand.result && !state.doc.match_result)) {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  if (hand.result) {
    const h = document.createElement('h3');
    h.textContent = `End of hand ${state.hand + 1}`;
    box.append(h);
    for (const line of resultText(hand.result)) {
      const p = document.createElement('p');
      p.textContent = line;
      box.append(p);
    }
    const sc = document.createElement('p');
    sc.textContent = `Score: ${state.names[0]} ${frame.scores[0]}, ${state.names[1]} ${frame.scores[1]}.`;
    box.append(sc);
  }
  const mr = state.doc.match_result;
  if (mr && state.hand === state.doc.hands.length - 1) {
    const n = state.names;
    const h = document.createElement('h3');
    h.textContent = mr.winner == null ? 'End of the match: no winner' : `${n[mr.winner]} wins the match`;
    box.append(h);
    const t = document.createElement('table');
    t.className = 'standings';
    const row = (cells, head = false) => {
      const tr = document.createElement('tr');
      cells.forEach((c, i) => {
        const el = document.createElement(head || i === 0 ? 'th' : 'td');
        el.textContent = c;
        tr.append(el);
      });
      t.append(tr);
      return tr;
    };
    row(['', n[0], n[1]], true);
    const pair = (key) => (Array.isArray(mr[key]) ? mr[key].map(String) : ['', '']);
    row(['Hands won', ...pair('hands_won')]);
    row(['Points', ...pair('points')]);
    row(['Bonuses', ...pair('bonuses')]);
    row(['Total', ...pair('totals')]).className = 'total';
    box.append(t);
    if (mr.shutout) {
      const p = document.createElement('p');
      p.textContent = "Shutout: the loser scored nothing, the winner's bonuses were multiplied.";
      box.append(p);
    }
  }
}

function render() {
  const doc = state.doc;
  if (!doc) return;
  const fs = frames();
  const frame = fs[state.frame];
  const prev = state.frame > 0 ? fs[state.frame - 1] : null;
  $('hand-select').value = String(state.hand);
  $('frame-count').textContent = `Move ${state.frame} of ${fs.length - 1}`;
  setRichText($('frame-text'), frame.text);
  const n = state.names;
  $('replay-scores').textContent =
    `Score: ${n[0]} ${frame.scores[0]} \u2013 ${n[1]} ${frame.scores[1]}` +
    (doc.rules && doc.rules.target ? ` (to ${doc.rules.target})` : '');
  renderHand($('hand-0'), 0, frame.hands[0], prev && prev.hands[0], frame);
  renderHand($('hand-1'), 1, frame.hands[1], prev && prev.hands[1], frame);
  $('replay-stock').textContent = `Stock ${frame.stock} \u00b7 discard pile ${frame.discard_pile.length}:`;
  const pile = $('replay-pile');
  pile.replaceChildren();
  frame.discard_pile.forEach((c, i) => {
    const el = cardEl(c, { small: true });
    if (i === frame.discard_pile.length - 1) el.classList.add('last');
    pile.append(el);
  });
  const lastHand = state.hand === doc.hands.length - 1;
  $('first').disabled = state.frame === 0 && state.hand === 0;
  $('prev').disabled = state.frame === 0 && state.hand === 0;
  $('next').disabled = state.frame === fs.length - 1 && lastHand;
  $('last').disabled = state.frame === fs.length - 1;
  renderResult(frame);
}

// ---------------------------------------------------------------- wiring

$('replay-file').addEventListener('change', (ev) => {
  const f = ev.target.files && ev.target.files[0];
  openFile(f);
});
$('first').addEventListener('click', () => go(state.hand, 0));
$('prev').addEventListener('click', () => step(-1));
$('next').addEventListener('click', () => step(1));
$('last').addEventListener('click', () => go(state.hand, Infinity));
$('hand-select').addEventListener('change', (ev) => {
  go(Number(ev.target.value), 0);
  ev.target.blur();
});
document.addEventListener('keydown', (ev) => {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const tag = (ev.target && ev.target.tagName) || '';
  if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA') return;
  if (ev.key === 'ArrowRight') {
    ev.preventDefault();
    step(1);
  } else if (ev.key === 'ArrowLeft') {
    ev.preventDefault();
    step(-1);
  } else if (ev.key === 'Home') {
    ev.preventDefault();
    go(state.hand, 0);
  } else if (ev.key === 'End') {
    ev.preventDefault();
    go(state.hand, Infinity);
  }
});

// A match in progress (the play page keeps it in localStorage): the Play link goes back to it.
function markMatchInProgress() {
  const current = readCurrent();
  if (current) {
    const link = $('play-link');
    link.textContent = current.kind === 'watch' ? 'Back to the table' : 'Back to the match';
    link.title = 'The play page returns to it';
  }
}

window.replayState = state;
markMatchInProgress();
loadList();
const wanted = new URLSearchParams(window.location.search).get('name');
if (wanted) openSaved(wanted);
