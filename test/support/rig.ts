// Tests of one plugin's coord processes on real Redis: a redis-server, a
// client on it, and processes of the built CLI (`coord run --plugin NAME
// --role …`). When the test ends the processes are killed -9 first (no
// graceful stop to wait for), then what the test gave atEnd() is closed,
// then the client and Redis.
import { createBackend } from '../../adapters/index.ts';
import type { Backend } from '../../core/backend.ts';
import { coord, type CoordProcess, type LogLine } from './cli.ts';
import { startPage, type PageServer } from './page.ts';
import { startRedis, type RedisServer } from './redis.ts';

export interface RunOptions {
  /** The key prefix (--prefix). */
  prefix: string;
  /** Each `path=value` is passed as `--set NAME.path=value`. */
  sets?: readonly string[];
  /** More command-line arguments, e.g. ['--run-probes']. */
  args?: readonly string[];
  env?: Record<string, string>;
}

export interface Rig {
  redis: RedisServer;
  backend: Backend;
  /** Starts `coord run --plugin NAME --role ROLE` on this Redis; killed -9 at teardown. */
  run(role: string, opts: RunOptions): CoordProcess;
  /** Runs `close` at teardown, after the processes are killed and before the client and Redis go (in the order given). */
  atEnd(close: () => unknown): void;
}

/** Starts Redis and a client on it for `coord run --plugin <plugin>` processes. */
export async function startRig(t: { teardown(fn: () => unknown): void }, plugin: string): Promise<Rig> {
  const redis = await startRedis();
  const backend = await createBackend({ url: redis.url });
  const processes: CoordProcess[] = [];
  const closes: (() => unknown)[] = [];
  t.teardown(async () => {
    for (const p of processes) p.kill('SIGKILL');
    for (const close of closes) await close();
    await backend.close();
    await redis.stop();
  });
  return {
    redis,
    backend,
    run(role, { prefix, sets = [], args = [], env = {} }) {
      const p = coord(['run', '--plugin', plugin, '--role', role, '--redis', redis.url, '--prefix', prefix, ...sets.flatMap((s) => ['--set', `${plugin}.${s}`]), ...args], env);
      processes.push(p);
      return p;
    },
    atEnd: (close) => closes.push(close),
  };
}

/** startRig with the page server (support/page.ts) for the browsers to open. */
export async function startPageRig(t: { teardown(fn: () => unknown): void }, plugin: string): Promise<Rig & { page: PageServer }> {
  const rig = await startRig(t, plugin);
  const page = await startPage();
  rig.atEnd(() => page.close());
  return { ...rig, page };
}

/** Resolves once each process has logged 'ready' (its roles are up), with a loaded machine's slack. */
export function ready(...processes: CoordProcess[]): Promise<LogLine[]> {
  return Promise.all(processes.map((p) => p.waitFor((l) => l.msg === 'ready', 90_000)));
}
