// The Help panel's text: the rules in short (of the match being played, else of the preset chosen
// on the setup screen), tips, tactics and the controls. An ES module; plain ES2020, no build step.

import { $ } from './common.js';
import { state } from './state.js';

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
      <li><b>Draw</b>: tap the stock<span class="key-hint"> or press <kbd>T</kbd></span>; tap the discard
        pile<span class="key-hint"> or press <kbd>D</kbd></span>.</li>
      <li><b>Upcard</b>: Take<span class="key-hint"> (<kbd>D</kbd>)</span> or Pass<span class="key-hint"> (<kbd>P</kbd>)</span>.</li>
      <li><b>Discard</b>: tap a card to select it (it rises), tap it again to discard it; or drag it onto
        the discard pile.</li>
      <li><b>Knock</b>: select the card to discard, then press Knock. Knockable cards carry a small dot.</li>
      <li><b>Reorder</b>: drag a card onto another place in your hand. <b>Auto-sort</b> returns to the
        game's order (melds first, framed, then deadwood).</li>
      <li class="key-hint"><kbd>H</kbd> opens this help; <kbd>Esc</kbd> closes a panel or drops the selection.</li>
      <li><b>Play with a friend</b>: New match, With a friend, then send the invitation link. Each of you
        sees only your own hand. If you leave or lose the connection, the same link (or this page) brings
        you back to your seat; <b>Leave</b> ends the match for both.</li>
    </ul>`;
}

export { renderHelp };
