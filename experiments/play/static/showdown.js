// The end of a hand and of a match: the showdown panel (the kind, the points, both hands laid out
// in melds with the layoffs, the score, Next hand and what the other side must do first) and the
// match's last panel (who won, the standings with the rules' bonuses, the replay file, the last
// hand); in both, at a computer table, where the person stands (standing.js). An ES module; plain
// ES2020, no build step.

import { $, kindWords, meldBlock, setRichText } from './common.js';
import { hideStanding, showStanding } from './standing.js';
import { opponentLabel, state, waitingWords, youLabel } from './state.js';

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
      k.textContent = sd.kind === 'gin' || sd.kind === 'big_gin' ? kindWords(sd.kind_words, sd.kind) : 'knocked';
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
  $('showdown-kind').textContent = kindWords(sd.kind_words, sd.kind);
  $('showdown-kind').className = 'kind-badge kind-' + sd.kind;
  setRichText($('showdown-title'), sd.title || kindWords(sd.kind_words, sd.kind));
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
  showRating(v, 'showdown-standing', v.hand_index);
}

// Where the person stands, after a hand of a computer table (fetched once a hand); no panel at a
// friend table, which is not rated.
function showRating(v, host, when) {
  const t = state.table;
  if (t && t.kind === 'game' && !v.spectator) showStanding(host, { preset: v.preset, key: `${t.token}/${when}` });
  else hideStanding();
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
  setRichText($('match-last-hand'), sd ? `Last hand: ${kindWords(sd.kind_words, sd.kind)}. ${sd.title || ''}` : '');
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
  showRating(v, 'match-standing', 'over');
}

export { renderShowdown, renderMatchOver };
