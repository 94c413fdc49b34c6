// Helpers for load-test tests: the target HTTP server (in its own process or
// this one) that counts and times what it serves, and in-process load-test
// roles (as `coord run --plugin load-test` runs them).
import { fork } from 'node:child_process';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import plugin from '../../plugins/load-test/index.ts';
import type { OrchestratorRole } from '../../plugins/load-test/roles/orchestrator.ts';
import type { TestController } from '../../plugins/load-test/run-lifecycle/controller.ts';
import { root, type CoordProcess } from './cli.ts';
import { freePort } from './redis.ts';
import { startRig, type Rig } from './rig.ts';
import { startRoles, type RolesOptions, type RolesProcess } from './roles.ts';

export interface TargetStats {
  /** Requests served, by "METHOD /route". */
  counts: Record<string, number>;
  /** Server-side durations (ms) by "METHOD /route". */
  timings: Record<string, number[]>;
  held: string[];
  doubleHolds: string[];
  /** Server-side duration (ms) by request id, for requests sent with ?rid=. */
  byRequest: Record<string, number>;
  total: number;
  /** Requests that arrived after the `since` mark given to stats(). */
  arrivedSince: number;
  /** Milliseconds from the first to the last request that arrived after the `since` mark. */
  spanSince: number;
  /** The server's performance.now(), to use as a later `since` mark. */
  now: number;
  /** When the last request of each "METHOD /route" arrived (the server's performance.now()). */
  lastAt: Record<string, number>;
}

export interface Target {
  url: string;
  stats(since?: number): Promise<TargetStats>;
  close(): Promise<void>;
}

const targetModule = join(root, 'test/fixtures/load-test/target.mjs');

/** The target server (test/fixtures/load-test/target.mjs) in this process, or in its own with `own: true`. */
export async function startTarget(opts: { own?: boolean } = {}): Promise<Target> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  if (!opts.own) {
    const { createTarget } = (await import(pathToFileURL(targetModule).href)) as { createTarget(): { server: Server; stats(since?: number): TargetStats } };
    const { server, stats } = createTarget();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return {
      url,
      stats: async (since) => stats(since),
      close: () =>
        new Promise((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  }
  const child = fork(targetModule, ['serve', String(port)], { stdio: 'ignore' });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`target server exited with ${code}`)));
  });
  let next = 0;
  return {
    url,
    stats: (since) =>
      new Promise((resolve) => {
        const id = ++next;
        const onMessage = (msg: { type: string; id: number; stats: TargetStats }) => {
          if (msg.type !== 'stats' || msg.id !== id) return;
          child.off('message', onMessage);
          resolve(msg.stats);
        };
        child.on('message', onMessage);
        child.send({ type: 'stats', id, since });
      }),
    close: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export interface LoadDeployment extends Rig {
  target: Target;
  /** The orchestrator's API port. */
  port: number;
  orchestrator: CoordProcess;
  /** wA and wB. */
  workers: CoordProcess[];
}

/**
 * load-test as processes of the built CLI on real Redis (support/rig.ts), under
 * `prefix` and each given `sets` (`--set load-test.<set>`): an orchestrator
 * with its API on a free port and workers wA and wB, against the target server
 * in its own process. Resolves once wA, then wB, registered and the API is up.
 */
export async function startLoadDeployment(t: { teardown(fn: () => unknown): void }, prefix: string, sets: readonly string[]): Promise<LoadDeployment> {
  const rig = await startRig(t, 'load-test');
  const target = await startTarget({ own: true });
  rig.atEnd(() => target.close());
  const port = await freePort();
  const run = (role: string, set: string) => rig.run(role, { prefix, sets: [...sets, set] });
  const orchestrator = run('orchestrator', `port=${port}`);
  const workers: CoordProcess[] = [];
  for (const id of ['wA', 'wB']) {
    workers.push(run('worker', `workerId=${id}`));
    await workers.at(-1)!.waitFor((l) => l.msg === 'worker registered');
  }
  await orchestrator.waitFor((l) => l.msg === 'load test API and page');
  return { ...rig, target, port, orchestrator, workers };
}

export interface LoadProcess extends RolesProcess {
  controller?: TestController;
}

/** Starts load-test roles in this process (no roles given: orchestrator and worker, standalone); its API is off unless options turn it on. */
export async function startLoad(opts: RolesOptions = {}): Promise<LoadProcess> {
  const { handle, logs } = await startRoles(plugin, { ...opts, options: { api: false, ...opts.options } });
  return { handle, controller: handle.role<OrchestratorRole>(plugin.name, 'orchestrator')?.controller, logs };
}

/** Exact percentile of raw values (nearest rank), to compare with the HDR's. */
export function exactPercentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

/** Calls the orchestrator's API; resolves with the status and the JSON body. */
export async function api(port: number, method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json().catch(() => undefined) };
}

/** Opens a saved HTML report from its file in a 1280×1200 page (closed at teardown); `outside` collects every request it makes for anything but a file. */
export async function openSavedReport(t: { teardown(fn: () => unknown): void }, browser: Browser, file: string): Promise<{ page: Page; outside: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1200 } });
  t.teardown(() => page.close());
  const outside: string[] = [];
  page.on('request', (r) => {
    if (!r.url().startsWith('file:')) outside.push(r.url());
  });
  await page.goto(pathToFileURL(file).href);
  return { page, outside };
}
