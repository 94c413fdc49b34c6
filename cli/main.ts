#!/usr/bin/env node
// The `coord` command: `npx coord` runs the build (dist/bundle/coord.js, scripts/bundle.ts) on Node,
// `deno task coord` runs this source on Deno.
import { cliArgs, exit } from '../core/platform.ts';
import { runCli } from './app.ts';

// The process lives until the command is done, even while it only waits for
// a signal or for a client library whose timers do not hold the event loop.
const keepAlive = setInterval(() => {}, 1 << 30);
const code = await runCli(cliArgs());
clearInterval(keepAlive);
exit(code);
