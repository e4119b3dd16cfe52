// The play page of `ginenv play`: one match against a computer opponent, driven by the JSON API of
// experiments/play/server.py. Plain ES2020, no build step. The game id lives in memory only, so two
// tabs play two independent games. window.ginState is the latest view (for tests).
'use strict';

(() => {
  // The cards, card texts, meld groups, API wrapper and message banner come from common.js.
  const {
    MELD_COLOURS,
    $,
    cardLabel,
    cardSpoken,
    kindWords,
    cardEl,
    backEl,
    setRichText,
    meldBlock,
    clearMessage,
  } = window.GinCommon;

  const DRAG_THRESHOLD = 6; // pixels a pointer must move before a press becomes a drag

  // ---------------------------------------------------------------- state

  const state = {
    options: null,
    view: null, // the latest view from the server
    gameId: null, // in memory only: two tabs are two games
    generation: 0, // bumped when a match starts or ends, to drop stale computer-turn timers
    selected: null, // the card raised in the hand
    customOrder: null, // null: the server's order (melds first, then deadwood)
    busy: false,
    advanceTimer: null,
    advanceFailures: 0,
    drag: null,
    pendingHandRender: false,
    leaveArmed: false,
    helpKey: null,
  };
  window.ginState = null;

  // The API wrapper and the message banner of common.js, as this page uses them.
  const api = (method, path, body) => GinCommon.api(method, path, body, { server: 'the game server' });

  // Messages start with a capital and end with a stop; card names show as cards.
  function showMessage(text, kind = 'error') {
    text = String(text);
    text = text.charAt(0).toUpperCase() + text.slice(1);
    if (!/[.!?\u2026]$/.test(text)) text += '.';
    GinCommon.showMessage(text, kind, { rich: true, ms: kind === 'error' ? 8000 : 5000 });
  }

  // ---------------------------------------------------------------- setup

  async function loadOptions() {
    try {
      state.options = await api('GET', '/api/options');
    } catch (err) {
      showMessage(err.message);
      $('setup').hidden = false;
      return;
    }
    const o = state.options;
    const oppSel = $('opponent-select');
    oppSel.replaceChildren();
    for (const opp of o.opponents || []) {
      const opt = document.createElement('option');
      opt.value = opp.name;
      opt.textContent = opp.label || opp.name;
      oppSel.append(opt);
    }
    const preSel = $('preset-select');
    preSel.replaceChildren();
    for (const p of o.presets || []) {
      const opt = document.createElement('option');
      opt.value = p.name;
      opt.textContent = p.label || p.name;
      preSel.append(opt);
    }
    const start = o.start || {};
    if (start.opponent) oppSel.value = start.opponent;
    if (start.preset) preSel.value = start.preset;
    describeSetup();
    if (o.daily) {
      const oppLabel = labelOf(o.opponents, o.daily.opponent);
      const preLabel = labelOf(o.presets, o.daily.preset);
      $('daily-note').textContent =
        `Game of the day ${o.daily.date}: ${oppLabel}, ${preLabel}. ` +
        'Everyone playing on the same day gets the same hands.';
    }
    if (start.autostart) {
      startMatch({ opponent: start.opponent, preset: start.preset, daily: !!start.daily, seed: urlSeed() });
    } else {
      showSetup();
    }
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

  function describeSetup() {
    const o = state.options;
    if (!o) return;
    const opp = (o.opponents || []).find((x) => x.name === $('opponent-select').value);
    $('opponent-description').textContent = opp ? opp.description || '' : '';
    const pre = (o.presets || []).find((x) => x.name === $('preset-select').value);
    // The presets, their labels and their help text come from the server (/api/options).
    $('preset-description').textContent = pre ? pre.help || '' : '';
    renderHelp();
  }

  function showSetup() {
    stopComputer();
    state.view = null;
    window.ginState = null;
    state.gameId = null;
    $('setup').hidden = false;
    $('table').hidden = true;
    $('showdown').hidden = true;
    $('match-over').hidden = true;
    $('leave').hidden = true;
    $('score').textContent = '';
    $('hand-info').textContent = '';
    renderHelp();
    $('start').focus();
  }

  async function abandonCurrent() {
    if (!state.gameId) return null;
    const id = state.gameId;
    state.gameId = null;
    stopComputer();
    try {
      const r = await api('DELETE', `/api/games/${encodeURIComponent(id)}`);
      return r && r.replay ? r.replay : null;
    } catch (err) {
      return null; // already gone: nothing to keep
    }
  }

  async function startMatch(body) {
    if (state.busy) return;
    state.busy = true;
    setBusy(true);
    try {
      await abandonCurrent();
      const view = await api('POST', '/api/games', body);
      state.generation += 1;
      state.gameId = view.id;
      state.selected = null;
      state.customOrder = null;
      state.leaveArmed = false;
      state.advanceFailures = 0;
      clearMessage();
      $('setup').hidden = true;
      $('table').hidden = false;
      $('leave').hidden = false;
      $('leave').textContent = 'Leave match';
      state.busy = false;
      applyView(view);
    } catch (err) {
      showMessage(err.message);
      if (!state.view) showSetup();
    } finally {
      state.busy = false;
      setBusy(false);
    }
  }

  // ---------------------------------------------------------------- talking to the game

  function applyView(view) {
    const prev = state.view;
    state.view = view;
    window.ginState = view;
    if (prev && prev.hand_index !== view.hand_index) {
      state.customOrder = null; // a new deal: back to the server's order
      state.selected = null;
    }
    const cards = (view.hand && view.hand.cards) || [];
    if (state.selected && !cards.includes(state.selected)) state.selected = null;
    render();
    scheduleComputer();
  }

  async function act(action) {
    if (!state.gameId || state.busy) return;
    state.busy = true;
    setBusy(true);
    const gen = state.generation;
    try {
      const view = await api('POST', `/api/games/${encodeURIComponent(state.gameId)}/action`, { action });
      if (gen !== state.generation) return;
      if (action.startsWith('discard ') || action.startsWith('knock ') || action === 'big_gin') {
        state.selected = null;
      }
      clearMessage();
      state.busy = false;
      applyView(view);
    } catch (err) {
      showMessage(err.message); // the state stays as it was
    } finally {
      state.busy = false;
      setBusy(false);
    }
  }

  async function nextHand() {
    if (!state.gameId || state.busy) return;
    state.busy = true;
    setBusy(true);
    try {
      const view = await api('POST', `/api/games/${encodeURIComponent(state.gameId)}/next`);
      state.busy = false;
      clearMessage();
      applyView(view);
    } catch (err) {
      showMessage(err.message);
    } finally {
      state.busy = false;
      setBusy(false);
    }
  }

  function stopComputer() {
    clearTimeout(state.advanceTimer);
    state.advanceTimer = null;
    state.generation += 1;
  }

  function scheduleComputer() {
    clearTimeout(state.advanceTimer);
    state.advanceTimer = null;
    const v = state.view;
    if (!v || v.stage !== 'play' || v.turn !== 'computer') return;
    const gen = state.generation;
    const pace = Number(state.options && state.options.pace_ms) || 0;
    const delay = state.advanceFailures ? Math.min(4000, 700 * 2 ** state.advanceFailures) : pace;
    state.advanceTimer = setTimeout(() => advance(gen), delay);
  }

  async function advance(gen) {
    state.advanceTimer = null;
    if (gen !== state.generation || !state.gameId) return;
    if (state.busy) {
      scheduleComputer();
      return;
    }
    state.busy = true;
    try {
      const view = await api('POST', `/api/games/${encodeURIComponent(state.gameId)}/advance`);
      state.busy = false;
      if (gen !== state.generation) return;
      state.advanceFailures = 0;
      applyView(view);
    } catch (err) {
      state.busy = false;
      if (gen !== state.generation) return;
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
    if (!v || !state.gameId) return;
    if (v.stage !== 'play') return;
    if (v.turn !== 'you') {
      showMessage(`Wait: it is ${opponentLabel()}'s turn.`, 'info');
      if (!state.advanceTimer && !state.busy) {
        // The computer's move failed earlier and retries stopped: a key or tap tries again.
        state.advanceFailures = 0;
        scheduleComputer();
      }
      return;
    }
    act(action);
  }

  function opponentLabel() {
    const v = state.view;
    return (v && v.opponent && (v.opponent.label || v.opponent.name)) || 'the computer';
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
    renderTop(v);
    renderOpponent(v);
    renderPiles(v);
    renderTalk(v);
    renderToolbar(v);
    if (state.drag) state.pendingHandRender = true;
    else renderHand(v);
    renderShowdown(v);
    renderMatchOver(v);
    if (!$('pile-panel').hidden) renderPilePanel();
    if (!$('help').hidden) renderHelp();
  }

  function renderTop(v) {
    const opp = opponentLabel();
    const sc = v.scores || { you: 0, computer: 0 };
    const score = $('score');
    score.replaceChildren();
    const mk = (cls, text) => {
      const s = document.createElement('span');
      s.className = cls;
      s.textContent = text;
      return s;
    };
    score.append(
      mk('score-you', `You ${sc.you}`),
      mk('score-sep', '\u2013'),
      mk('score-opp', `${opp} ${sc.computer}`),
      mk('score-target', `to ${v.target}`),
    );
    const parts = [`Hand ${v.hand_index + 1}`, v.dealer === 'you' ? 'you deal' : `${opp} deals`];
    if (v.daily) parts.push(`game of the day ${v.daily}`);
    $('hand-info').textContent = parts.join(' \u00b7 ');
  }

  function renderOpponent(v) {
    const opp = opponentLabel();
    $('opponent-name').textContent = opp;
    const n = v.opponent_cards || 0;
    $('opponent-count').textContent = `${n} card${n === 1 ? '' : 's'}`;
    const row = $('opponent-cards');
    row.replaceChildren();
    for (let i = 0; i < n; i++) row.append(backEl(true));
    row.classList.toggle('thinking', v.stage === 'play' && v.turn === 'computer');
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
      if (last && last.who === 'computer' && last.card === top && /discard|knock/.test(last.action || '')) {
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
    if (v.stage === 'play' && v.turn === 'computer' && !prompt) prompt = `${opponentLabel()} is playing\u2026`;
    const promptEl = $('prompt');
    setRichText(promptEl, prompt);
    const last = lastEvent(v);
    if (v.stage === 'play' && v.turn === 'you' && last && last.who === 'computer' && last.text) {
      // What the computer just did, before what to do now.
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
      li.className = ev.who === 'you' ? 'ev-you' : ev.who === 'computer' ? 'ev-computer' : 'ev-other';
      setRichText(li, ev.text || `${ev.who} ${ev.action}`);
      log.append(li);
    }
    log.scrollTop = log.scrollHeight;
  }

  function renderToolbar(v) {
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
  }

  function pointsWords(sd) {
    if (!sd.winner || !sd.points) return 'No points';
    const who = sd.winner === 'you' ? 'you' : opponentLabel();
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
    side('you', 'You', sd.you);
    side('computer', opponentLabel(), sd.computer);
  }

  function scoreWords(v) {
    const sc = v.scores || { you: 0, computer: 0 };
    return `Score: you ${sc.you}, ${opponentLabel()} ${sc.computer} (match to ${v.target}).`;
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
    if (!state.busy) $('next-hand').focus({ preventScroll: true });
  }

  const pick = (obj, who) => {
    if (obj == null) return null;
    if (Array.isArray(obj)) return obj[who === 'you' ? 0 : 1];
    return obj[who];
  };

  function renderMatchOver(v) {
    const zero = { you: 0, computer: 0 };
    // A match stopped at the hand limit has no points, bonuses or totals: its table is hidden.
    const mr = v.match_result && { points: zero, bonuses: zero, totals: null, hands_won: zero, ...v.match_result };
    const open = v.stage === 'over' && !!mr;
    $('match-over').hidden = !open;
    if (!open) return;
    const opp = opponentLabel();
    let title;
    if (mr.winner === 'you') title = 'You win the match!';
    else if (mr.winner === 'computer') title = `${opp} wins the match.`;
    else title = mr.truncated ? 'The match stopped at the hand limit: no winner.' : 'No winner.';
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
    const thead = ['', 'You', opp];
    row(thead, 'th');
    const hw = (w) => pick(mr.hands_won, w) ?? 0;
    row(['Hands won', String(hw('you')), String(hw('computer'))]);
    row(['Points', String(pick(mr.points, 'you')), String(pick(mr.points, 'computer'))]);
    const line = (w) => (rules.line_bonus || 0) * hw(w);
    const game = (w) => (mr.winner === w ? rules.game_bonus || 0 : 0);
    if (rules.line_bonus) row([`Line bonus (${rules.line_bonus} a hand)`, String(line('you')), String(line('computer'))]);
    if (rules.game_bonus) row([`Game bonus`, String(game('you')), String(game('computer'))]);
    if (mr.shutout && mr.winner) {
      const mult = rules.shutout_multiplier || 1;
      const cells = ['Shutout', '', ''];
      cells[mr.winner === 'you' ? 1 : 2] = mult === 2 ? 'bonuses doubled' : `bonuses \u00d7${mult}`;
      row(cells);
    }
    row(['Bonuses', String(pick(mr.bonuses, 'you') ?? 0), String(pick(mr.bonuses, 'computer') ?? 0)]);
    row(['Total', String(pick(mr.totals, 'you')), String(pick(mr.totals, 'computer'))], 'td', 'total');
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
        <li><b>Draw</b>: tap the stock or press <kbd>T</kbd>; tap the discard pile or press <kbd>D</kbd>.</li>
        <li><b>Upcard</b>: Take (<kbd>D</kbd>) or Pass (<kbd>P</kbd>).</li>
        <li><b>Discard</b>: tap a card to select it (it rises), tap it again to discard it; or drag it onto
          the discard pile.</li>
        <li><b>Knock</b>: select the card to discard, then press Knock. Knockable cards carry a small dot.</li>
        <li><b>Reorder</b>: drag a card onto another place in your hand. <b>Auto-sort</b> returns to the
          game's order (melds first, framed, then deadwood).</li>
        <li><kbd>Esc</kbd> closes a panel or drops the selection.</li>
      </ul>`;
  }

  function openPanel(id) {
    if (id === 'pile-panel') renderPilePanel();
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

  function onKey(ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const tag = (ev.target && ev.target.tagName) || '';
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA') return;
    if (ev.key === 'Escape') {
      for (const id of ['help', 'pile-panel']) {
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
    if (!$('help').hidden || !$('pile-panel').hidden) return;
    const v = state.view;
    if (!v || v.stage !== 'play') return;
    const k = ev.key.toLowerCase();
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

  function wire() {
    $('opponent-select').addEventListener('change', describeSetup);
    $('preset-select').addEventListener('change', describeSetup);
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
      render();
    });
    $('pile-button').addEventListener('click', () => openPanel('pile-panel'));
    $('help-button').addEventListener('click', () => openPanel('help'));
    document.querySelectorAll('.close-panel').forEach((b) =>
      b.addEventListener('click', () => closePanel(b.dataset.close)),
    );
    for (const id of ['help', 'pile-panel']) {
      $(id).addEventListener('click', (ev) => {
        if (ev.target === $(id)) closePanel(id); // a click on the backdrop
      });
    }
    $('next-hand').addEventListener('click', nextHand);
    $('new-match').addEventListener('click', async () => {
      await abandonCurrent();
      showSetup();
    });
    $('leave').addEventListener('click', async () => {
      if (!state.leaveArmed) {
        state.leaveArmed = true;
        $('leave').textContent = 'Leave: sure?';
        setTimeout(() => {
          state.leaveArmed = false;
          if (!$('leave').hidden) $('leave').textContent = 'Leave match';
        }, 4000);
        return;
      }
      state.leaveArmed = false;
      const replay = await abandonCurrent();
      showSetup();
      showMessage(replay ? `Match left. Replay saved as ${replay}.` : 'Match left.', 'info');
    });
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
  }

  wire();
  renderHelp();
  loadOptions();
})();
