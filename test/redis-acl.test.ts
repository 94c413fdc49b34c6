// A Redis user made from `coord acl`'s line — its plugin's keys and channels
// under the prefix and the commands it sends, nothing more — runs each
// plugin's roles through their main paths with nothing in ACL LOG, with
// ioredis and with node-redis. browser-grid's CONFIG is optional: with
// keyspaceEvents: preset none is sent; with the default the refusal is quiet.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import t from 'tap';
import { connectBackend, createBackend } from '../adapters/index.ts';
import type { Backend, Reply } from '../core/backend.ts';
import obniz from '../plugins/obniz/index.ts';
import { buildIfStale } from './support/build.ts';
import { coordSync, root } from './support/cli.ts';
import { connect, startGrid } from './support/grid.ts';
import { startLoad, startTarget } from './support/load.ts';
import { freePort, startRedis } from './support/redis.ts';
import { startRoles, type RolesOptions } from './support/roles.ts';
import { until } from './support/until.ts';
import { newSessionBody, startWebdriver, w3c } from './support/webdriver.ts';

t.before(() => buildIfStale());
// The operator's part of browser-grid's ACL: keyspace notifications set in the server's config, not by coord.
const redis = await startRedis({ args: ['--notify-keyspace-events', 'Khgx'] });
const admin = await createBackend({ url: redis.url });
const dir = mkdtempSync(join(tmpdir(), 'coord-acl-'));
t.teardown(async () => {
  await admin.close();
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Creates the user `coord acl` prints a line for, through redis-cli; returns its URL. */
function createUser(t: Tap.Test, plugin: string, prefix: string, user: string): string {
  const printed = coordSync(['acl', '--plugin', plugin, '--prefix', prefix, '--user', user]);
  t.equal(printed.status, 0, `coord acl: ${printed.stderr}`);
  const line = printed.stdout.trim();
  t.match(line, /^ACL SETUSER \S+ reset on >[0-9a-f]{64} ~/);
  const made = spawnSync('redis-cli', ['-p', String(redis.port)], { input: `${line}\n`, encoding: 'utf8' });
  t.equal(made.stdout.trim(), 'OK', `redis-cli took the line: ${made.stdout}${made.stderr}`);
  const password = /reset on >(\S+)/.exec(line)![1]!;
  return `redis://${user}:${password}@127.0.0.1:${redis.port}`;
}

/** ACL LOG's entries, each as "reason object (command)". */
async function denials(backend: Backend): Promise<string[]> {
  const entries = (await backend.send(['ACL', 'LOG'])) as Reply[][];
  return entries.map((entry) => {
    const field = (name: string) => String(entry[entry.indexOf(name) + 1]);
    return `${field('reason')} ${field('object')} (user ${field('username')}, context ${field('context')})`;
  });
}

type Run = (url: string, adapter: string, prefix: string) => Promise<void>;

const runs: Record<string, Run> = {
  'browser-grid': async (url, adapter, prefix) => {
    const port = await freePort();
    const backend = await connectBackend({ url, adapter });
    const grid = await startGrid({ backend, prefix, roles: ['worker', 'proxy'], options: { port, workers: 1, keyspaceEvents: 'preset' } });
    try {
      await until('the worker registered', () => grid.logs.some((l) => l.msg === 'workers ready'), 60_000);
      const browser = await connect(port);
      const page = await browser.newPage();
      await page.close();
      await browser.close();
    } finally {
      await grid.handle.stop('test done');
      await backend.close();
    }
  },
  webdriver: async (url, adapter, prefix) => {
    const port = await freePort();
    const backend = await connectBackend({ url, adapter });
    const grid = await startWebdriver({
      backend,
      prefix,
      options: { proxy: { port }, api: { port: 0 }, orchestrator: { id: `o-${adapter}`, slots: 1 } },
    });
    try {
      const created = await w3c(`http://127.0.0.1:${port}`, 'POST', '/session', newSessionBody());
      const id = (created.body as { value?: { sessionId?: string } }).value?.sessionId;
      if (!id) throw new Error(`no session: ${JSON.stringify(created.body).slice(0, 300)}`);
      await w3c(`http://127.0.0.1:${port}`, 'DELETE', `/session/${id}`);
    } finally {
      await grid.handle.stop('test done');
      await backend.close();
    }
  },
  'load-test': async (url, adapter, prefix) => {
    const target = await startTarget();
    const backend = await connectBackend({ url, adapter });
    const load = await startLoad({ backend, prefix, options: { metricsInterval: 0.5 } });
    try {
      const scenario = resolve(root, 'test/fixtures/load-test/slow.mjs');
      const { finished } = await load.controller!.start({ scenario, users: 2, spawnRate: 1000, durationMs: 1500, params: { baseUrl: target.url, delayMs: 10 } });
      const result = await finished;
      if (!(result.total.count > 0)) throw new Error('the load test sent no request');
    } finally {
      await load.handle.stop('test done');
      await backend.close();
      await target.close();
    }
  },
  obniz: async (url, adapter, prefix) => {
    const file = join(dir, `devices-${adapter}.json`);
    writeFileSync(file, JSON.stringify([{ id: '0000-0001' }, { id: '0000-0002' }]));
    const backend = await connectBackend({ url, adapter });
    const worker = join(root, 'test/fixtures/obniz/recording-worker.mjs');
    const options: RolesOptions = { backend, prefix, roles: ['manager', 'slave'], options: { devices: file, worker, instanceName: `s-${adapter}` } };
    const process = await startRoles(obniz, options);
    try {
      await until('both devices started on the slave', () => process.logs.filter((l) => l.msg === 'worker started').length === 2, 20_000);
    } finally {
      await process.handle.stop('test done');
      await backend.close();
    }
  },
};

for (const adapter of ['ioredis', 'node-redis']) {
  for (const [plugin, run] of Object.entries(runs)) {
    t.test(`${plugin} as its ACL user, with ${adapter}`, async (t) => {
      const prefix = `{acl-${plugin}-${adapter}}:`;
      const url = createUser(t, plugin, prefix, `${plugin}-${adapter}`);
      await admin.send(['ACL', 'LOG', 'RESET']);
      await run(url, adapter, prefix);
      t.same(await denials(admin), [], 'ACL LOG is empty');
    });
  }

  t.test(`browser-grid's CONFIG refused, with ${adapter}: the proxy starts, says so once, and only CONFIG is denied`, async (t) => {
    const prefix = `{acl-config-${adapter}}:`;
    const url = createUser(t, 'browser-grid', prefix, `config-${adapter}`);
    await admin.send(['ACL', 'LOG', 'RESET']);
    const backend = await connectBackend({ url, adapter });
    const grid = await startGrid({ backend, prefix, roles: ['proxy'], options: { port: await freePort() } });
    t.teardown(async () => {
      await grid.handle.stop('test done');
      await backend.close();
    });
    t.equal(grid.logs.filter((l) => l.msg.startsWith('keyspace notifications unavailable')).length, 1);
    const denied = await denials(admin);
    t.ok(denied.length > 0 && denied.every((d) => d.startsWith('command config|get ')), `only CONFIG GET denied: ${denied.join('; ')}`);
  });
}
