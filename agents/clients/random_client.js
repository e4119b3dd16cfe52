// A reference exec: client (docs/PROTOCOL.md) in Node.js: a random legal move, seeded by each
// hand's seed. Run it as `exec:node agents/clients/random_client.js`. No dependency but Node itself.
"use strict";
const readline = require("readline");

// mulberry32: a small seedable generator (Math.random cannot be seeded), so games are reproducible.
let state = 0;
function random() {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

const input = readline.createInterface({ input: process.stdin });
input.on("line", (line) => {
  const message = JSON.parse(line);
  if (message.type === "hand") {
    // Both 32-bit halves of the seed, so that seeds differing only in high bits differ here too.
    state = ((message.seed >>> 0) ^ (Math.floor(message.seed / 4294967296) >>> 0)) >>> 0;
  } else if (message.type === "act") {
    const legal = message.legal;
    // stdout is the protocol channel: one line per reply (logs go to console.error).
    process.stdout.write(legal[Math.floor(random() * legal.length)] + "\n");
  } else if (message.type === "end") {
    input.close();
  }
});
