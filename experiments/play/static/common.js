// What the play page (app.js and its modules) and the replay page (replay.js) of `ginenv play`
// share: the card constants and names, face-up and face-down card elements, card names in text
// ("Th" shown as "10♥"), key hints in text ("(T)", hidden on touch screens), meld groups, the JSON
// API wrapper and the #message banner. An ES module (both pages import from it); plain ES2020, no
// build step. What the pages keep in the browser (the table being played) is in storage.js.

// ---------------------------------------------------------------- cards

const SUIT_SYMBOL = { s: '\u2660', c: '\u2663', d: '\u2666', h: '\u2665' };
const SUIT_NAME = { s: 'spades', c: 'clubs', d: 'diamonds', h: 'hearts' };
const RANK_TEXT = { T: '10' }; // other ranks show as they are named: A 2 ... 9 J Q K
const RANK_NAME = { A: 'ace', T: '10', J: 'jack', Q: 'queen', K: 'king' };
const MELD_COLOURS = ['#f2b134', '#4fc3f7', '#ef7ab8', '#9ccc65', '#b39ddb', '#ff8a65'];

const $ = (id) => document.getElementById(id);
const rankText = (card) => RANK_TEXT[card[0]] || card[0];
const isRed = (card) => card[1] === 'h' || card[1] === 'd';
const cardLabel = (card) => rankText(card) + SUIT_SYMBOL[card[1]];
const cardSpoken = (card) => `${RANK_NAME[card[0]] || card[0]} of ${SUIT_NAME[card[1]]}`;
// How a hand ended, as a label: the server words each result kind (a showdown's `kind_words`, a
// replay's `kind_words` table, from the hand record's list of kinds); the page keeps no list of
// its own and only starts the words with a capital ("dead hand" -> "Dead hand").
const kindWords = (words, kind) => {
  const text = String(words || kind || '');
  return text.charAt(0).toUpperCase() + text.slice(1);
};

// A face-up card. `attr` is the data attribute naming it: the play page uses "card" for the hand
// and the pile top (the ids tests use), "c" elsewhere so that [data-card] always means a playable card.
function cardEl(card, { attr = 'c', small = false } = {}) {
  const el = document.createElement('div');
  el.className = 'card face' + (isRed(card) ? ' red' : '') + (small ? ' small' : '');
  el.dataset[attr] = card;
  el.setAttribute('aria-label', cardSpoken(card));
  el.title = cardSpoken(card);
  const corner = document.createElement('span');
  corner.className = 'corner';
  const r = document.createElement('span');
  r.className = 'rank';
  r.textContent = rankText(card);
  const s = document.createElement('span');
  s.className = 'suit';
  s.textContent = SUIT_SYMBOL[card[1]];
  corner.append(r, s);
  const pip = document.createElement('span');
  pip.className = 'pip';
  pip.textContent = SUIT_SYMBOL[card[1]];
  el.append(corner, pip);
  return el;
}

function backEl(small = false) {
  const el = document.createElement('div');
  el.className = 'card back' + (small ? ' small' : '');
  return el;
}

// Texts from the server and replays name cards "Th", "As": shown as "10♥", "A♠" (red suits in red).
// Key hints such as " (T)" go in a span.key-hint, which style.css hides on touch screens.
const CARD_TOKEN = /\b([A2-9TJQK])([scdh])\b/g;
const RICH_TOKEN = /\b([A2-9TJQK])([scdh])\b| ?\((?:[TDPH]|Esc)\)/g;
function setRichText(el, text) {
  text = String(text);
  el.replaceChildren();
  let last = 0;
  for (const m of text.matchAll(RICH_TOKEN)) {
    if (m.index > last) el.append(text.slice(last, m.index));
    const span = document.createElement('span');
    if (m[1]) {
      span.className = 'cn' + (isRed(m[0]) ? ' red' : '');
      span.textContent = cardLabel(m[0]);
    } else {
      span.className = 'key-hint';
      span.textContent = m[0];
    }
    el.append(span);
    last = m.index + m[0].length;
  }
  if (last < text.length) el.append(text.slice(last));
}

// Cards in melds (framed, a coloured bar under each), then laid-off cards, then loose cards.
// `mark(el, card)`, when given, is called on each card element (the replay marks changed cards).
function meldBlock(melds, loose, { layoffs = [], attr = 'c', small = true, mark = null } = {}) {
  const card = (c) => {
    const el = cardEl(c, { attr, small });
    if (mark) mark(el, c);
    return el;
  };
  const wrap = document.createElement('div');
  wrap.className = 'meld-row';
  melds.forEach((meld, i) => {
    const g = document.createElement('div');
    g.className = 'meld';
    g.style.setProperty('--mc', MELD_COLOURS[i % MELD_COLOURS.length]);
    for (const c of meld) g.append(card(c));
    wrap.append(g);
  });
  if (layoffs.length) {
    const g = document.createElement('div');
    g.className = 'laid-off';
    const tag = document.createElement('span');
    tag.className = 'tag';
    tag.textContent = 'laid off';
    g.append(tag);
    for (const c of layoffs) {
      const el = card(c);
      el.classList.add('is-laid-off');
      g.append(el);
    }
    wrap.append(g);
  }
  if (loose.length) {
    const g = document.createElement('div');
    g.className = 'loose';
    for (const c of loose) g.append(card(c));
    wrap.append(g);
  }
  return wrap;
}

// ---------------------------------------------------------------- the server

// An API refusal: the server's "error" text, and the HTTP status (0: the server was not reached).
class ApiError extends Error {
  constructor(message, status = 0) {
    super(message);
    this.status = status;
  }
}

// One JSON API call: resolves to the parsed reply, or throws an ApiError with the server's
// "error" text. The body is sent JSON-encoded, or as it is with `raw` (text that is JSON already).
// `server` names the server in the message when it cannot be reached. A call that changes state
// (any method but GET and HEAD) always sends JSON, `{}` when it has nothing to say: the server
// takes changes only as JSON from its own page (the browser adds the page's Origin), which no
// form or no-cors request of another site can send.
async function api(method, path, body, { raw = false, server = 'the server' } = {}) {
  const init = { method, headers: { Accept: 'application/json' } };
  if (body === undefined && method !== 'GET' && method !== 'HEAD') body = raw ? '{}' : {};
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = raw ? body : JSON.stringify(body);
  }
  let resp;
  try {
    resp = await fetch(path, init);
  } catch (err) {
    throw new ApiError(`Cannot reach ${server} (${err.message}).`);
  }
  let data = null;
  try {
    data = await resp.json();
  } catch (err) {
    data = null;
  }
  if (!resp.ok) {
    const msg = data && typeof data.error === 'string' ? data.error : `${resp.status} ${resp.statusText}`;
    throw new ApiError(msg, resp.status);
  }
  return data;
}

// ---------------------------------------------------------------- the #message banner

// Shows `text` in #message with the class "message KIND" and hides it after `ms` milliseconds (a tap
// hides it at once); with `rich`, card names in the text show as cards (setRichText). The banner
// floats over the page (style.css): it moves nothing.
let messageTimer = null;
function showMessage(text, kind = 'error', { rich = false, ms = 9000 } = {}) {
  const el = $('message');
  if (rich) setRichText(el, text);
  else el.textContent = text;
  el.className = 'message ' + kind;
  el.hidden = false;
  if (!el.dataset.wired) {
    el.dataset.wired = '1';
    el.addEventListener('click', clearMessage);
  }
  clearTimeout(messageTimer);
  messageTimer = setTimeout(() => {
    el.hidden = true;
  }, ms);
}

function clearMessage() {
  clearTimeout(messageTimer);
  $('message').hidden = true;
}

// A <select>'s options, one per {name, label} item (the label shown, the name as the value);
// returns the select.
function fillSelect(select, items) {
  select.replaceChildren();
  for (const item of items || []) {
    const opt = document.createElement('option');
    opt.value = item.name;
    opt.textContent = item.label || item.name;
    select.append(opt);
  }
  return select;
}

export {
  // cards and their names
  SUIT_SYMBOL, SUIT_NAME, RANK_TEXT, RANK_NAME, MELD_COLOURS, CARD_TOKEN,
  rankText, isRed, cardLabel, cardSpoken, kindWords,
  // elements
  $, cardEl, backEl, setRichText, meldBlock, fillSelect,
  // the server and the banner
  ApiError, api, showMessage, clearMessage,
};
