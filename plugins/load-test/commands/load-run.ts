// `coord load run`: one command runs a whole test. Without --redis it starts
// an orchestrator on the embedded backend and --workers workers (auto: one
// per core), each running its users in a worker thread of its own
// (thread-session.ts) that reaches the backend through this thread; with
// --redis it starts an orchestrator there and uses the workers registered at
// that Redis. Progress goes to stderr once a second; the
// results go to stdout (table, json with the scenario's probes, or csv),
// optionally an HTML report too (with the probes, which --run-probes runs on
// this process's workers).
// Exit code: 0, or 99 when a threshold failed (as k6), 98 when the results are
// known to be incomplete (requests the workers recorded that no batch read
// holds, or Redis lost for longer than load-test.redisLostAfter: the summary
// says what is missing), 2 for bad input, 130 (SIGINT) or 143 (SIGTERM) when
// interrupted. The first signal aborts this process's users at once and
// stops the test (results are still printed) within a second whatever Redis
// does (a Redis that does not answer a PING within 0.5 s is not waited for); a thread held by users' code is terminated; a second signal exits at once.
import { writeFileSync } from 'node:fs';
import { type CommandTools, keyBuilders, optionList, optionText, type StopSignal } from '../../../entries/plugin.ts';
import { PLUGIN_NAME } from '../config.ts';
import { contract } from '../contract.ts';
import { parseCount, parseDuration, parseRate } from '../parse.ts';
import { within } from '../bounded.ts';
import { readProbes } from '../scenario/probes.ts';
import { failIfRanNothing } from './run-exit.ts';
import { incompleteHeadline, progressLine, resultCsv, resultHtml, resultJson, summaryTable } from '../report/formats.ts';
import type { OrchestratorRole } from '../roles/orchestrator.ts';
import type { WorkerRole } from '../roles/worker.ts';
import { checkUrls } from '../scenario/scenario.ts';
import type { ShapeFlag } from './shape-flags.ts';
import { loadScenario } from '../scenario/loader.ts';
import { evaluateThresholds, parseThreshold } from '../metrics/thresholds.ts';
import { InputError } from '../errors.ts';

/** The exit code of a run a signal ended (128 + the signal's number, as shells report it). */
const SIGNAL_EXIT: Record<StopSignal, number> = { SIGINT: 130, SIGTERM: 143 };

/** The exit code of a run whose results are known to miss requests (result.incomplete). */
export const INCOMPLETE_EXIT = 98;

/** After a signal, how long Redis may take to answer a PING before the run ends with the results read so far (it may hold the stop). */
const INTERRUPT_MS = 500;
/** How long the process's roles may take to stop once the results are printed (after a signal: what is left of its second). */
const ROLES_STOP_MS = 2000;
const INTERRUPTED_ROLES_STOP_MS = 250;

export interface RunInput {
  scenario: string;
  users: number;
  spawnRate: number;
  durationMs: number;
  rate?: number;
  params: Record<string, unknown>;
  thresholds: ReturnType<typeof parseThreshold>[];
  out: 'table' | 'json' | 'csv';
  report?: string;
  workers: number | 'auto';
}

/** Every flag checked before anything starts: each problem is one InputError line. */
export async function parseRunInput(options: Readonly<Record<string, unknown>>): Promise<RunInput> {
  const scenario = optionText(options.scenario);
  if (!scenario) throw new InputError('load run needs --scenario FILE (a .ts, .js or .mjs scenario module)');
  const users = parseCount(optionText(options.users) ?? '10', '--users', 1);
  const out = optionText(options.out) ?? 'table';
  if (!['table', 'json', 'csv'].includes(out)) throw new InputError(`--out "${out}" is not a format: expected table, json or csv`);
  const input: RunInput = {
    scenario,
    users,
    spawnRate: options.spawnRate === undefined ? users : parseRate(optionText(options.spawnRate), '--spawn-rate'),
    durationMs: parseDuration(optionText(options.duration) ?? '30s', '--duration'),
    rate: options.rate === undefined ? undefined : parseRate(optionText(options.rate), '--rate'),
    params: parseParams(options.param),
    thresholds: optionList(options.threshold).map(parseThreshold),
    out: out as RunInput['out'],
    report: optionText(options.report),
    workers: optionText(options.workers) === 'auto' || options.workers === undefined ? 'auto' : parseCount(optionText(options.workers), '--workers', 1),
  };
  // A scenario that does not load, or a base URL no client can use, is reported before anything starts.
  checkUrls(await loadScenario(scenario), input.params, scenario);
  return input;
}

/** The prefix of load-test's keys: its own keyPrefix when set, else redis.keyPrefix (as the roles' ctx has it). */
function ownPrefix(config: { redis: { keyPrefix: string }; plugins: Record<string, Record<string, unknown>> }): string {
  const own = config.plugins[PLUGIN_NAME]?.keyPrefix;
  return typeof own === 'string' ? own : config.redis.keyPrefix;
}

/** --param key=value (repeatable): the value is JSON when it parses as JSON, else text. */
export function parseParams(value: unknown): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const item of optionList(value)) {
    const at = item.indexOf('=');
    if (at <= 0) throw new InputError(`--param "${item}" is not key=value, e.g. --param baseUrl=http://127.0.0.1:8080`);
    const raw = item.slice(at + 1);
    let parsed: unknown = raw;
    try {
      parsed = JSON.parse(raw);
    } catch {
      // plain text
    }
    params[item.slice(0, at)] = parsed;
  }
  return params;
}

/**
 * Runs the test; `shapeFlags` are the config values --stages and --rate-stages
 * make (shape-flags.ts), over the command line's.
 */
export async function loadRun(options: Readonly<Record<string, unknown>>, tools: CommandTools, shapeFlags: readonly ShapeFlag[] = []): Promise<number> {
  const input = await parseRunInput(options);
  const loaded = tools.loadConfig({
    // The command line's flags override these.
    before: [
      { path: 'log.level', value: 'warn' },
      { path: 'load-test.workers', value: input.workers },
      { path: 'load-test.threads', value: true },
      { path: 'load-test.scenario', value: input.scenario }, // the workers' threads load it while the test is prepared
      ...(options.runProbes ? [{ path: 'load-test.runProbes', value: true, flag: '--run-probes' }] : []),
      // With --redis the workers are the ones registered there: none, and the run fails at once (--set load-test.waitForWorkers=S to wait).
      { path: 'load-test.waitForWorkers', value: 0 },
    ],
    after: [...shapeFlags, { path: 'load-test.api', value: false }],
  });
  // A Redis named anywhere (--redis, the environment, the config file): the workers are the ones registered there.
  const distributed = loaded.redis.url !== undefined;
  const withRoles = (roles: string[]) => Object.freeze({ ...loaded, roles });
  const config = withRoles(distributed ? ['orchestrator'] : ['orchestrator', 'worker']);
  const main = await tools.start(config);
  let offSignals = () => {};
  let interrupted: StopSignal | undefined;
  try {
    const { controller } = main.role<OrchestratorRole>(PLUGIN_NAME, 'orchestrator')!;
    const offTick = controller.onTick((status) => {
      const r = status.result;
      if (!r || status.state === 'IDLE') return;
      const recent = r.series.at(-2) ?? r.series.at(-1);
      const line = progressLine((Date.now() - r.startedAt) / 1000, status.users, status.target, recent?.rps ?? 0, r.total.p95, r.total.errors, r.total.count);
      tools.progress(line);
    });
    let giveUp: () => void = () => {};
    const gaveUp = new Promise<undefined>((resolve) => (giveUp = () => resolve(undefined)));
    offSignals = tools.onStop((signal) => {
      interrupted = signal;
      tools.progress();
      tools.printErr(`${signal}: stopping the test (${signal === 'SIGINT' ? 'Ctrl-C' : signal} again exits at once)`);
      stopNow();
      void watchRedisWhileStopping(signal);
    });
    let ended = false;
    /**
     * Redis may hold the stop (failing over, gone): while the stop runs, Redis is asked for a PING; one not
     * answered within INTERRUPT_MS ends the run at once with the results read so far. A stop Redis serves
     * goes on as usual (its users' grace, a held thread terminated), and reports everything.
     */
    const watchRedisWhileStopping = async (signal: StopSignal) => {
      while (!ended) {
        try {
          await within(main.backend.send(['PING']), INTERRUPT_MS, 'PING');
        } catch {
          if (!ended && !controller.endNow(`${signal}: Redis did not answer within ${INTERRUPT_MS} ms while the test stopped`)) giveUp();
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    /** This process's users aborted at once, and the test stopped (once it has started). */
    const stopNow = () => {
      main.role<WorkerRole>(PLUGIN_NAME, 'worker')?.interrupt();
      void controller.stop('interrupted').catch(() => {});
    };
    let result;
    try {
      const start = controller.start({
        scenario: input.scenario,
        users: input.users,
        spawnRate: input.spawnRate,
        durationMs: input.durationMs,
        params: input.params,
        rate: input.rate,
      });
      start.catch(() => {}); // awaited through the race; once given up, its late failure is nobody's
      const started = await Promise.race([start, gaveUp]);
      if (!started) return SIGNAL_EXIT[interrupted!]; // a signal while Redis held the start: nothing ran yet to report
      if (interrupted) stopNow(); // the signal came while the test was starting
      result = await started.finished;
    } finally {
      ended = true;
      offTick();
      tools.progress();
    }
    const outcomes = evaluateThresholds(input.thresholds, result);
    // The probes' values are read from Redis, which may be gone (the results then say so): a report does not wait for them long.
    const probes = () => within(readProbes({ backend: main.backend, keys: keyBuilders(contract, ownPrefix(loaded)) }, result.epoch), interrupted ? 100 : 2000, 'reading probes').catch(() => []);
    if (input.out === 'json') tools.print(resultJson(result, outcomes, await probes()));
    else if (input.out === 'csv') tools.print(resultCsv(result));
    else tools.print(summaryTable(result, outcomes));
    if (input.report) writeFileSync(input.report, resultHtml(result, outcomes, await probes()));
    if (interrupted) return SIGNAL_EXIT[interrupted];
    if (result.incomplete) {
      tools.printErr(`coord: ${incompleteHeadline(result)} (${result.incomplete.reasons.join('; ')})`);
      return INCOMPLETE_EXIT;
    }
    return failIfRanNothing(outcomes.some((o) => !o.ok) ? 99 : 0, controller);
  } finally {
    // Redis may hold the roles' last writes (gone for good): the run's exit does not wait for them long.
    await within(main.stop('load run finished'), interrupted ? INTERRUPTED_ROLES_STOP_MS : ROLES_STOP_MS, 'stopping').catch(() => {});
    offSignals();
  }
}
