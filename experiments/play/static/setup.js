// The screens before a table: which of setup (New match), join (an invitation) and table shows,
// the setup form (opponents, rules presets and "Match to" from /api/options, against the computer
// or with a friend, the game of the day, where the person stands) and the name a friend table asks
// for. An ES module; plain ES2020, no build step.

import { $, fillSelect } from './common.js';
import { renderHelp } from './help.js';
import { showSetupStanding } from './standing.js';
import { api, showMessage, state } from './state.js';
import { saveName, savedName } from './storage.js';

const TARGETS = [10, 25, 50, 100, 150, 200, 250]; // "Match to" for a friend table (besides the rules')

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
  $('host-name').value = savedName();
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
  showSetupStanding(); // against the computer only: friend tables are not rated
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
  if (name === 'setup') showSetupStanding();
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
  saveName(name);
  return name;
}

export { loadOptions, urlSeed, describeSetup, setMode, showScreen, askName };
