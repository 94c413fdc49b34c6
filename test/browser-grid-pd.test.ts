// Mixing with the real playwright-distributed on one Redis, with a stand-in
// that does on Redis what its worker does (see support/pd-worker.ts): a new
// pd worker is selectable within 1 s, a pd worker that exits or dies leaves
// no counter fields or index entries behind for more than a heartbeat, and
// coord's own worker records carry the `endpoint` field pd's proxy dials.
import t from 'tap';
import { chromium } from 'playwright-core';
import { titleOf } from './support/grid.ts';
import { startPdWorker, type PdWorker } from './support/pd-worker.ts';
import { freePort } from './support/redis.ts';
import { ready, startPageRig } from './support/rig.ts';
import { until } from './support/until.ts';

const rig = await startPageRig(t, 'browser-grid');
const { backend, page } = rig;
const pds: PdWorker[] = [];
rig.atEnd(() => Promise.all(pds.map((w) => w.kill().catch(() => {}))));

const prefix = '{pd}:';
const sets = ['heartbeatInterval=1', 'redisKeyTtl=4', 'staleThreshold=3', 'reaperRunInterval=60', 'shutdownCommandTtl=5', 'drainTimeout=5'];
const run = (role: string, extra: string[]) => rig.run(role, { prefix, sets: [...sets, ...extra] });
const playwright = await import('playwright-core');
/** Where a worker ref still appears: counter fields and index entries. */
async function leftovers(ref: string): Promise<string[]> {
  const [active, lifetime, all, free] = await backend.pipeline([
    ['HEXISTS', `${prefix}cluster:active_connections`, ref],
    ['HEXISTS', `${prefix}cluster:lifetime_connections`, ref],
    ['ZSCORE', `${prefix}index:workers:chromium`, ref],
    ['ZSCORE', `${prefix}index:free:chromium`, ref],
  ]);
  return [active === 1 && 'active', lifetime === 1 && 'lifetime', all !== null && 'workerIndex', free !== null && 'freeIndex'].filter((x): x is string => !!x);
}

const port = await freePort();
const proxy = run('proxy', [`port=${port}`]);
await ready(proxy);

t.test('a new playwright-distributed worker is selectable within 1 s and serves clients', async (t) => {
  const started = Date.now();
  const pd = await startPdWorker({ backend, prefix, playwright, heartbeatMs: 5000, ttlSeconds: 60 });
  pds.push(pd);
  const registered = Date.now();
  await until('in the free index', async () => (await backend.send(['ZSCORE', `${prefix}index:free:chromium`, pd.ref])) !== null, 5000, 10);
  const took = Date.now() - registered;
  t.ok(took < 1000, `selectable ${took} ms after it registered (its browser took ${registered - started} ms to start)`);
  const b = await chromium.connect(`ws://127.0.0.1:${port}/?browser=chromium`, { timeout: 30_000 });
  t.match(await titleOf(b, page.url), /coord/);
  await b.close();
  t.equal(Number(await backend.send(['HGET', `${prefix}cluster:lifetime_connections`, pd.ref])), 1, 'served by the pd worker');
});

t.test('a pd worker that exits (deletes only its hash) leaves nothing behind within one heartbeat', async (t) => {
  const pd = pds[0]!;
  t.same((await leftovers(pd.ref)).sort(), ['active', 'freeIndex', 'lifetime', 'workerIndex'], 'filed while it runs');
  await pd.stop();
  const gone = Date.now();
  await until('its counter fields and index entries removed', async () => (await leftovers(pd.ref)).length === 0, 5000, 10);
  t.ok(Date.now() - gone <= 1000, `removed ${Date.now() - gone} ms after its hash was deleted (heartbeat 1 s)`);
});

t.test('a pd worker killed (its hash expires) leaves nothing behind within one heartbeat of the expiry', async (t) => {
  const pd = await startPdWorker({ backend, prefix, playwright, heartbeatMs: 1000, ttlSeconds: 2 });
  pds.push(pd);
  await until('adopted', async () => (await leftovers(pd.ref)).length === 4, 5000, 10);
  await pd.kill();
  await until('its hash expired', async () => (await backend.send(['EXISTS', pd.key])) === 0, 10_000, 10);
  const expired = Date.now();
  await until('its counter fields and index entries removed', async () => (await leftovers(pd.ref)).length === 0, 5000, 10);
  t.ok(Date.now() - expired <= 1000, `removed ${Date.now() - expired} ms after the expiry`);
});

t.test("coord's worker records carry both wsEndpoint and pd's endpoint; lastHeartbeat in seconds", async (t) => {
  const worker = run('worker', ['workers=1']);
  const id = String((await worker.waitFor((l) => l.msg === 'browser server registered')).workerId);
  const [wsEndpoint, endpoint, beat] = (await backend.send(['HMGET', `${prefix}worker:chromium:${id}`, 'wsEndpoint', 'endpoint', 'lastHeartbeat'])) as string[];
  t.match(wsEndpoint, /^ws:\/\/127\.0\.0\.1:\d+\//);
  t.equal(endpoint, wsEndpoint);
  t.ok(Math.abs(Number(beat) - Date.now() / 1000) < 10, 'seconds, as playwright-distributed documents');
  worker.kill('SIGTERM');
  t.equal(await worker.exited, 0);
});

t.test('the proxy stops cleanly', async (t) => {
  proxy.kill('SIGTERM');
  t.equal(await proxy.exited, 0);
});
