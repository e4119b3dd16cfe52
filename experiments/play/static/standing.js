// Where the person stands against the computer: the #standing panel, read from GET /api/me only
// (the person of the page's cookie; nothing of any table), shown on the setup card before a match
// and in the showdown and the match's end of a computer table after each hand (never at a friend
// table). It says the rating as one sentence (signed, one decimal, the 95% interval, the ladder
// levels it falls between, the hands), the margin against each level played, and a small SVG plot
// of the estimate and its interval over the hands played with the ladder's levels as lines; a
// preset without a ladder run shows the margins only and says why. "Delete my record" (after a
// confirm) sends DELETE /api/me. An ES module; plain ES2020, no build step.

import { $ } from './common.js';
import { api, showMessage, state } from './state.js';

// The plot's drawing box (SVG units; the element scales to the panel's width).
const PLOT = { width: 360, height: 150, left: 40, right: 64, top: 10, bottom: 22 };

const local = {
  key: null, // the finished hand (or match) the panel was last fetched for
  asked: 0, // bumped by each fetch: a late reply to an older one is dropped
  forgotten: null, // the table at which the record was deleted: its later hands are not recorded
};

// ---------------------------------------------------------------- words

// A number of points, signed, to one decimal: +1.3, -0.4, 0.0.
function signed(x) {
  const text = (Math.round(x * 10) / 10).toFixed(1);
  if (text === '0.0' || text === '-0.0') return '0.0';
  return x > 0 ? `+${text}` : text;
}

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

// A level's label as the setup's opponent list shows it (its spec name when the list lacks it).
function levelLabel(name) {
  const item = ((state.options && state.options.opponents) || []).find((x) => x.name === name);
  return item ? item.label || item.name : name;
}

function betweenWords([below, above]) {
  if (below && above) return `between ${levelLabel(below)} and ${levelLabel(above)}`;
  if (above) return `below ${levelLabel(above)}, the lowest level`;
  if (below) return `above ${levelLabel(below)}, the highest level`;
  return 'off the ladder';
}

// The server's words, as a sentence: a capital, a stop, `command` quotes as they are.
function sentence(text) {
  text = String(text).replace(/`/g, '');
  text = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

// The panel's sentence for an answer of /api/me.
function standingSentence(me) {
  if (!me.hands) return 'Your rating appears here after your first finished hand against the computer.';
  if (me.rating == null) return sentence(me.why);
  return (
    `You play at ${signed(me.rating)} [${signed(me.low)}, ${signed(me.high)}] points a hand, ` +
    `${betweenWords(me.between || [null, null])}, over ${plural(me.hands, 'hand')}.`
  );
}

// ---------------------------------------------------------------- the panel

// Shows the panel inside #hostId, fetched again unless `key` names what it shows already (a
// table's finished hand: render() runs on every view, the fetch once a hand). `preset`: the rules
// the rating is asked for.
function showStanding(hostId, { preset, key = null }) {
  const section = $('standing');
  const host = $(hostId);
  if (section.parentElement !== host) host.append(section);
  section.hidden = false;
  const table = state.table ? state.table.token : null;
  if (table && table === local.forgotten) {
    local.key = key;
    renderGone();
    return;
  }
  if (key !== null && key === local.key) return;
  local.key = key;
  fetchStanding(preset);
}

function hideStanding() {
  $('standing').hidden = true;
}

// The setup card: the rating under the rules chosen, when the match is against the computer.
function showSetupStanding() {
  if (state.mode === 'computer' && state.options) showStanding('setup-standing', { preset: $('preset-select').value });
  else hideStanding();
}

async function fetchStanding(preset) {
  const asked = ++local.asked;
  const section = $('standing');
  section.setAttribute('aria-busy', 'true');
  try {
    // No preset asks for the server's default (the ladder's): the page restates no preset's name.
    const me = await api('GET', preset ? `/api/me?preset=${encodeURIComponent(preset)}` : '/api/me');
    if (asked !== local.asked) return;
    renderStanding(me);
  } catch (err) {
    if (asked !== local.asked) return;
    local.key = null; // asked again at the next render
    $('standing-sentence').textContent = `Your rating could not be read (${err.message}).`;
    for (const id of ['standing-why', 'standing-gone', 'standing-plot', 'standing-levels']) $(id).hidden = true;
  } finally {
    if (asked === local.asked) section.setAttribute('aria-busy', 'false');
  }
}

function renderStanding(me) {
  const section = $('standing');
  section.dataset.hands = String(me.hands);
  $('standing-sentence').textContent = standingSentence(me);
  // Hands the rating leaves out (a level off the ladder): said under the sentence.
  const note = me.rating != null && me.why ? sentence(me.why) : '';
  $('standing-why').textContent = note;
  $('standing-why').hidden = !note;
  renderLevels(me);
  renderPlot(me);
  $('forget-me').hidden = !me.hands;
  $('standing-gone').hidden = true;
}

// After DELETE /api/me: the panel says the record is gone (in a match, that the rest of it is not
// recorded either: the table no longer names the person).
function renderGone() {
  const playing = !!state.table && !!state.view && state.view.stage !== 'over';
  const section = $('standing');
  section.dataset.hands = '0';
  section.setAttribute('aria-busy', 'false');
  $('standing-sentence').textContent = 'Your record is deleted: this server keeps no hand of yours.';
  const gone = $('standing-gone');
  gone.textContent = playing
    ? 'The rest of this match is not recorded; your next match starts a new record.'
    : 'Your next match starts a new record.';
  gone.hidden = false;
  $('standing-why').hidden = true;
  $('standing-levels').hidden = true;
  $('standing-plot').hidden = true;
  $('forget-me').hidden = true;
}

// Margin a hand against each level played (luck-adjusted, with its 95% interval), the ladder's
// order when the preset has one.
function renderLevels(me) {
  const table = $('standing-levels');
  const levels = me.levels || {};
  const names = Object.keys(levels);
  table.hidden = names.length === 0;
  table.replaceChildren();
  if (!names.length) return;
  const ladder = me.ladder || {};
  names.sort((a, b) => (ladder[a] ?? Infinity) - (ladder[b] ?? Infinity) || a.localeCompare(b));
  const caption = document.createElement('caption');
  caption.textContent = 'Your margin a hand against each level (points minus luck, 95% interval)';
  table.append(caption);
  const row = (cells, tag) => {
    const tr = document.createElement('tr');
    cells.forEach((text, i) => {
      const el = document.createElement(i === 0 || tag === 'th' ? 'th' : 'td');
      if (tag === 'th') el.scope = 'col';
      else if (i === 0) el.scope = 'row';
      el.textContent = text;
      tr.append(el);
    });
    table.append(tr);
  };
  row(['Level', 'Hands', 'Margin'], 'th');
  for (const name of names) {
    const l = levels[name];
    row([levelLabel(name), String(l.hands), `${signed(l.margin)} [${signed(l.low)}, ${signed(l.high)}]`], 'td');
  }
}

// ---------------------------------------------------------------- the plot

const SVG = 'http://www.w3.org/2000/svg';

function svgEl(tag, attrs = {}, text = null) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== null) el.textContent = text;
  return el;
}

// How far from the last estimate the plot reaches for its interval (points a hand).
const BAND_REACH = 25;

// The points a hand the plot spans: the estimates, the levels either side of the rating and the
// last interval up to BAND_REACH from the estimate, padded. An early interval (±160 points after
// one hand) runs off the top and the bottom: it is clipped, so the estimate and the levels stay
// readable.
function plotRange(me) {
  const history = me.history;
  const last = history[history.length - 1];
  const values = [
    ...history.map((h) => h.rating),
    Math.max(last.low, last.rating - BAND_REACH),
    Math.min(last.high, last.rating + BAND_REACH),
  ];
  for (const name of me.between || []) {
    if (name && me.ladder && name in me.ladder) values.push(me.ladder[name]);
  }
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  if (hi - lo < 2) {
    lo -= 1;
    hi += 1;
  }
  const pad = (hi - lo) * 0.08;
  return [lo - pad, hi + pad];
}

function renderPlot(me) {
  const box = $('standing-plot');
  box.replaceChildren();
  const history = me.history || [];
  box.hidden = me.rating == null || !history.length;
  if (box.hidden) return;
  const [lo, hi] = plotRange(me);
  const n = history[history.length - 1].hands;
  const { width, height, left, right, top, bottom } = PLOT;
  const x = (k) => left + (n === 1 ? 0.5 : (k - 1) / (n - 1)) * (width - left - right);
  const y = (v) => top + ((hi - Math.min(hi, Math.max(lo, v))) / (hi - lo)) * (height - top - bottom); // clipped
  const svg = svgEl('svg', {
    viewBox: `0 0 ${width} ${height}`,
    role: 'img',
    'aria-labelledby': 'standing-plot-title',
    class: 'standing-svg',
  });
  svg.append(
    svgEl(
      'title',
      { id: 'standing-plot-title' },
      `Your rating after each of ${plural(n, 'hand')}: the line is the estimate, the band its 95% ` +
        `interval, the dashed lines the computer levels; now ${signed(me.rating)} points a hand.`,
    ),
  );
  const [plotW, plotH] = [width - left - right, height - top - bottom];
  svg.append(svgEl('rect', { x: left, y: top, width: plotW, height: plotH, class: 'plot-frame' }));
  // The ladder's levels within the range, labelled at the right: the two either side of the rating
  // first, then the others where a label has room (a crowded level keeps its line).
  const between = (me.between || []).filter(Boolean);
  const shown = Object.entries(me.ladder || {})
    .filter(([, rating]) => rating >= lo && rating <= hi)
    .sort((a, b) => between.includes(b[0]) - between.includes(a[0]) || b[1] - a[1]);
  const labelled = [];
  for (const [name, rating] of shown) {
    const at = y(rating);
    svg.append(svgEl('line', { x1: left, x2: width - right, y1: at, y2: at, class: 'plot-level' }));
    if (labelled.some((other) => Math.abs(other - at) < 11)) continue;
    labelled.push(at);
    svg.append(svgEl('text', { x: width - right + 4, y: at + 4, class: 'plot-level-label' }, levelLabel(name)));
  }
  // The interval as a band, the estimate as a line (one hand: a bar and a dot).
  if (history.length === 1) {
    const h = history[0];
    const bar = { x: x(1) - 4, y: y(h.high), width: 8, height: y(h.low) - y(h.high), class: 'plot-band' };
    svg.append(svgEl('rect', bar));
  } else {
    const upper = history.map((h) => `${x(h.hands).toFixed(1)},${y(h.high).toFixed(1)}`);
    const lower = history.map((h) => `${x(h.hands).toFixed(1)},${y(h.low).toFixed(1)}`).reverse();
    svg.append(svgEl('polygon', { points: [...upper, ...lower].join(' '), class: 'plot-band' }));
    const line = history.map((h) => `${x(h.hands).toFixed(1)},${y(h.rating).toFixed(1)}`).join(' ');
    svg.append(svgEl('polyline', { points: line, class: 'plot-line' }));
  }
  const end = history[history.length - 1];
  svg.append(svgEl('circle', { cx: x(end.hands), cy: y(end.rating), r: 3, class: 'plot-dot' }));
  // The axes' words: the range of points at the left, the hands along the bottom.
  svg.append(svgEl('text', { x: left - 4, y: top + 9, class: 'plot-axis', 'text-anchor': 'end' }, signed(hi)));
  svg.append(svgEl('text', { x: left - 4, y: height - bottom, class: 'plot-axis', 'text-anchor': 'end' }, signed(lo)));
  svg.append(svgEl('text', { x: left, y: height - 6, class: 'plot-axis' }, '1'));
  svg.append(
    svgEl('text', { x: width - right, y: height - 6, class: 'plot-axis', 'text-anchor': 'end' }, plural(n, 'hand')),
  );
  box.append(svg);
}

// ---------------------------------------------------------------- forgetting

async function forgetMe() {
  const ok = window.confirm(
    'Delete your record on this server? Your hands against the computer, your games of the day and ' +
      'your name on the tables you started are removed, and the rating with them. This cannot be undone.',
  );
  if (!ok) return;
  try {
    await api('DELETE', '/api/me');
  } catch (err) {
    showMessage(err.message);
    return;
  }
  local.asked += 1; // a fetch still on its way shows nothing now
  local.forgotten = state.table ? state.table.token : null;
  renderGone();
}

function wireStanding() {
  $('forget-me').addEventListener('click', forgetMe);
}

export { showStanding, hideStanding, showSetupStanding, wireStanding };
