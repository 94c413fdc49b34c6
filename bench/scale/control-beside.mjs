// The control beside a plugin's calls, in a process of its own: node control-beside.mjs URL ITERATIONS EVERY_MS.
// It calls the fixed-work loop (no Redis call, no allocation) every EVERY_MS until stdin closes.
// Run at real-time priority by kit.mjs's controlBeside, so that it samples the time evenly: called
// from the bench's own event loop, shared with thousands of simulated heartbeats, it was called less
// often when the machine was busiest, and so met fewer of the host's pauses than the scripts it
// stood beside.
import { createBackend } from '../../dist/adapters/index.js';
import { control, sleep } from './kit.mjs';

const [url, iterations, everyMs] = process.argv.slice(2);
const backend = await createBackend({ url, clientName: 'control-beside' });
await backend.send(['SCRIPT', 'LOAD', control.lua]);
let running = true;
process.stdin.on('end', () => (running = false)).resume();
while (running) {
  await backend.evalScript(control, [], [Number(iterations)]);
  await sleep(Number(everyMs));
}
await backend.close();
