// Whether the event loop has turned since a moment, and a way to let it turn.
// A user whose iteration did no I/O (a step that only records, throws or
// computes) would otherwise run its next one in the same turn, for ever:
// timers, sockets and signals would never be served again. Asking "has the
// loop turned?" costs a counter read; the counter is bumped by one immediate
// per turn of the loop (shared by all users), not one per iteration.
//
// Users waiting for the next turn are resumed in the order they asked, each
// in its own immediate (so each runs its iteration before the next is
// resumed), for at most TURN_BUDGET_MS of a turn: the rest wait for the next
// turn, first in line. So CPU-heavy steps of many users hold the loop about
// that long at a time, not the sum of their steps, and the process keeps
// answering (its API, its signals) between them.
import { setImmediate } from 'node:timers';

const TURN_BUDGET_MS = 10;

let turn = 0;
let watching = false;
/** The turn the resumptions are in, and when its first one ran. */
let resumingTurn = -1;
let resumingSince = 0;
/** Users waiting for a turn, oldest first (from `head`). */
let waiting: (() => void)[] = [];
let head = 0;

function bump(): void {
  turn += 1;
  watching = false;
}

/** The current turn, to compare with turnedSince() later. */
export function currentTurn(): number {
  if (!watching) {
    watching = true;
    setImmediate(bump); // queued before any resumption asked for after it: it marks the start of the next turn's
  }
  return turn;
}

export function turnedSince(mark: number): boolean {
  return turn !== mark;
}

/** Resolves in a later turn of the event loop (after its timers and I/O). */
export function nextTurn(): Promise<void> {
  currentTurn();
  return new Promise((resolve) => {
    waiting.push(resolve);
    setImmediate(resumeOne);
  });
}

/** Resumes the user first in line, unless this turn's budget is spent (then it waits for the next turn). */
function resumeOne(): void {
  if (resumingTurn !== turn) {
    resumingTurn = turn;
    resumingSince = performance.now();
  } else if (performance.now() - resumingSince >= TURN_BUDGET_MS) {
    currentTurn();
    setImmediate(resumeOne);
    return;
  }
  const resolve = waiting[head]!;
  head += 1;
  if (head === waiting.length) {
    waiting = [];
    head = 0;
  } else if (head > 1024 && head * 2 > waiting.length) {
    waiting = waiting.slice(head);
    head = 0;
  }
  resolve();
}
