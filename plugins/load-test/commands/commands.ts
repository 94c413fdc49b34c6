// The load test's CLI: `coord load run` runs a whole test in this process
// (load-run.ts); start, stop, users and status drive a running orchestrator
// through its HTTP API.
import { type CommandTools, optionText, type PluginCommand, UsageError } from '../../../entries/plugin.ts';
import { apiCall } from './api-client.ts';
import { parseCount } from '../parse.ts';
import type { TestStatus } from '../run-lifecycle/controller.ts';
import { InputError } from '../errors.ts';

const API_OPTIONS = [
  { flags: '--api <url>', description: 'Orchestrator API (default http://127.0.0.1:8089)' },
  { flags: '--token <token>', description: 'API token (default: env LOAD_TEST_TOKEN)' },
];
const TEST_OPTIONS = [
  { flags: '--scenario <file>', description: 'Scenario module (.ts, .js or .mjs)' },
  { flags: '--users <n>', description: 'Users (virtual users; in arrival-rate mode the pool of users)' },
  { flags: '--spawn-rate <rate>', description: 'Users started per second, e.g. 20 or 20/s (default: all within one second)' },
  { flags: '--duration <duration>', description: 'Test length, e.g. 30s, 5m, 1m30s' },
  { flags: '--rate <rate>', description: 'Arrival-rate mode: iterations per second for the whole test, e.g. 200/s' },
  { flags: '--param <key=value>', description: 'Scenario parameter over its default (repeatable; JSON values allowed)' },
  { flags: '--stages <stages>', description: 'Users over time (k6 stages), e.g. 30s:10,1m:50,30s:0; the test ends after the last' },
  { flags: '--rate-stages <stages>', description: 'Arrival rate over time (k6 ramping-arrival-rate), e.g. 10s:50/s,1m:200/s, from --rate (default 0); --users is the pool' },
];

/** Words left after the options (`--duration 5 minutes` leaves "minutes"): an error, not ignored. */
function noArguments(command: string, args: readonly string[]): void {
  if (args.length) throw new InputError(`${command}: unexpected ${args.map((a) => `"${a}"`).join(' ')}: values with spaces need quotes, and durations are written 5m, 30s, 1m30s`);
}

/** Turns bad input into the CLI's one-line usage error (exit 2). */
async function userFacing<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof InputError) throw new UsageError(err.message);
    throw err;
  }
}

export const commands: PluginCommand[] = [
  {
    name: 'load run',
    description: 'Run a whole load test here and print its results (embedded Redis and in-process workers unless --redis)',
    options: [
      ...TEST_OPTIONS,
      { flags: '--threshold <expr>', description: 'Pass/fail criterion, e.g. p95<200ms, errors<1%, rps>100 (repeatable; a failure exits 99)' },
      { flags: '--out <format>', description: 'Results on stdout as table (default), json or csv' },
      { flags: '--report <file>', description: 'Also write an HTML report to this file' },
      { flags: '--workers <n>', description: 'Workers without --redis, each running its users in a thread of its own (default auto: one per core)' },
      { flags: '--run-probes', description: "This process's workers run the scenario's probes (their values go to the HTML report)" },
    ],
    run: (options, args, tools) =>
      userFacing(async () => {
        noArguments('load run', args);
        const shaped = await (await import('./shape-flags.ts')).withShape(options, tools);
        return (await import('./load-run.ts')).loadRun(shaped.options, tools, shaped.shapeFlags);
      }),
  },
  {
    name: 'load start',
    description: 'Start a test on a running orchestrator',
    options: [...TEST_OPTIONS, ...API_OPTIONS],
    run: (options, args, tools) =>
      userFacing(async () => {
        noArguments('load start', args);
        const body: Record<string, unknown> = { users: options.users ?? 10 };
        if (options.scenario !== undefined) body.scenario = optionText(options.scenario);
        if (options.spawnRate !== undefined) body.spawnRate = optionText(options.spawnRate);
        if (options.duration !== undefined) body.duration = optionText(options.duration);
        if (options.rate !== undefined) body.rate = optionText(options.rate);
        Object.assign(body, (await import('./shape-flags.ts')).shapeBody(options));
        const params = (await import('./load-run.ts')).parseParams(options.param);
        if (Object.keys(params).length) body.params = params;
        const started = (await apiCall(options, 'POST', '/api/start', body)) as { epoch: number };
        tools.print(`test started: epoch ${started.epoch}`);
      }),
  },
  {
    name: 'load stop',
    description: 'Stop the running test and print its results',
    options: API_OPTIONS,
    run: (options, _args, tools) =>
      userFacing(async () => {
        const result = await apiCall(options, 'POST', '/api/stop');
        const { summaryTable } = await import('../report/formats.ts'); // the report (and its histogram library) only when there is one to print
        tools.print(summaryTable(result as Parameters<typeof summaryTable>[0]));
      }),
  },
  {
    name: 'load users',
    description: 'Change the number of users of the running test: coord load users N',
    options: API_OPTIONS,
    run: (options, args, tools) =>
      userFacing(async () => {
        if (args.length !== 1) throw new InputError('load users takes one number: coord load users 50');
        const users = parseCount(args[0], 'users');
        await apiCall(options, 'POST', '/api/users', { users });
        tools.print(`target users: ${users}`);
      }),
  },
  {
    name: 'load status',
    description: 'State, users and workers of the orchestrator',
    options: [...API_OPTIONS, { flags: '--json', description: 'Print JSON' }],
    run: (options, _args, tools: CommandTools) =>
      userFacing(async () => {
        const status = (await apiCall(options, 'GET', '/api/status')) as TestStatus;
        if (options.json) return tools.print(JSON.stringify(status, null, 2));
        tools.print(`state ${status.state}, epoch ${status.epoch}, users ${status.users}/${status.target}, ${status.workers.length} workers`);
        for (const w of status.workers) {
          tools.print(`  ${w.id}  ${w.status}  users ${w.users} (active ${w.active_users})  cpu ${w.cpu_percent}%  rss ${(w.rss_bytes / 1048576).toFixed(1)} MB  heartbeat ${w.lastHeartbeatAgeS ?? '-'}s ago`);
        }
        if (status.result && status.result.total.count > 0) tools.print((await import('../report/formats.ts')).summaryTable(status.result));
      }),
  },
];
