// The table on screen, drawn from the latest view: the top bar's score and hand line, the
// invitation box, the opponent's (and for a spectator the first seat's) cards face down, the
// presence and waiting line of a friend table, the stock and the discard pile, the prompt and the
// log of moves, the toolbar (deadwood, Knock, Big gin, Auto-sort) and the hand itself in its melds
// (fitted into two rows on a phone). render() also refreshes the panels that are open. An ES
// module; plain ES2020, no build step.

import { $, MELD_COLOURS, backEl, cardEl, cardLabel, cardSpoken, setRichText } from './common.js';
import { renderHelp } from './help.js';
import { renderPilePanel, renderSharePanel, setLink } from './panels.js';
import { renderMatchOver, renderShowdown } from './showdown.js';
import { knockCards, legal, opponentLabel, state, waitingWords, youLabel } from './state.js';

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

export { render, renderStatus, renderHand, handOrder, fitHand };
