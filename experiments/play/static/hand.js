// The hand under the person's fingers: a tap raises a card and a second tap discards it; a drag
// (a press that moves past DRAG_THRESHOLD) drops a card on the discard pile to discard it, or
// elsewhere in the hand to reorder it (the custom order, kept for a reload). While a card is
// dragged the hand is not redrawn: a view that arrives meanwhile is drawn when the drag ends. An ES
// module; plain ES2020, no build step.

import { $ } from './common.js';
import { handOrder, render, renderHand } from './render.js';
import { opponentLabel, saveOrder, showMessage, state } from './state.js';
import { act } from './table.js';

const DRAG_THRESHOLD = 6; // pixels a pointer must move before a press becomes a drag

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
  saveOrder();
  render();
}

function onPointerCancel(ev) {
  const d = state.drag;
  if (!d || ev.pointerId !== d.id) return;
  endDrag();
  render();
}

// The hand's pointer events (a card pressed, dragged, dropped, or its pointer lost).
function wireHand() {
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
}

export { onCardTap, wireHand };
