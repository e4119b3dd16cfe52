// The panels over the table (the whole discard pile, the links of a friend table, Help): opening
// and closing them, their contents, and the links to send (built on the server's share_base, and
// copied to the clipboard). An ES module; plain ES2020, no build step.

import { $, cardEl } from './common.js';
import { renderHelp } from './help.js';
import { showMessage, state } from './state.js';

const PANELS = ['help', 'pile-panel', 'share-panel'];

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

export { PANELS, openPanel, closePanel, renderPilePanel, renderSharePanel, setLink, copyLink };
