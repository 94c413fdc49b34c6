// 500 New Session requests queued at once on 2 slots, split layout (proxy,
// manager and orchestrator as separate processes), real Redis: the manager
// holds a bounded number of Redis connections however long the queue (all
// its waits share one blocking connection), every request is served in the
// order it was queued or answered QTIMEOUT at the queue timeout (which covers
// the whole request, as Selenium Grid's session-request-timeout does); each
// client that gets a session ends it at once, so the two slots keep turning.
// Then the idle grid's Redis commands per minute (INFO commandstats).
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import t from 'tap';
import { Agent } from 'undici';
import { LOOP_BLOCK_SECONDS } from '../plugins/webdriver/manager/blocking-waits.ts';
import { buildIfStale } from './support/build.ts';
import { freePort } from './support/redis.ts';
import { ready, startPageRig } from './support/rig.ts';
import { newSessionBody } from './support/webdriver.ts';
import { until } from './support/until.ts';

buildIfStale();
const rig = await startPageRig(t, 'webdriver');
const { redis, backend } = rig;
const P = '{w5}:';
const QUEUE = 30;
/** The manager's Redis connections, whatever the queue: its command connection and its one blocking connection (docs/webdriver.md). */
const MANAGER_CONNECTIONS = 2;
const sets = ['heartbeat.interval=2', 'heartbeat.nodeTtl=10', 'heartbeat.managerTtl=10', `timeouts.queue=${QUEUE}`, 'timeouts.sessionTermination=20'];
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const proxy = rig.run('proxy', { prefix: P, sets: [...sets, `proxy.port=${port}`] });
const manager = rig.run('manager', { prefix: P, sets });
const orchestrator = rig.run('orchestrator', { prefix: P, sets: [...sets, 'orchestrator.slots=2', 'orchestrator.id=orch-5', 'orchestrator.warmDrivers=2'] });
await ready(proxy, manager, orchestrator);
const redisPort = Number(new URL(redis.url).port);

/** TCP connections process `pid` holds to 127.0.0.1:`to` (its socket inodes matched in /proc/net/tcp). */
function connectionsTo(pid: number, to: number): number {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {} // closed meanwhile
  }
  const rows = ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((f) => readFileSync(f, 'utf8').trim().split('\n').slice(1));
  return rows.filter((row) => {
    const c = row.trim().split(/\s+/);
    return c[3] === '01' && Number.parseInt(c[2]!.split(':').at(-1)!, 16) === to && inodes.has(c[9]!);
  }).length;
}

t.test(`500 requests queued on 2 slots: the manager holds at most ${MANAGER_CONNECTIONS} Redis connections; each is served in queue order or answered at the queue timeout`, async (t) => {
  const managerPid = manager.child.pid!;
  t.ok(connectionsTo(managerPid, redisPort) <= MANAGER_CONNECTIONS, `before: ${connectionsTo(managerPid, redisPort)} connections`);
  let most = 0;
  const sampler = setInterval(() => (most = Math.max(most, connectionsTo(managerPid, redisPort))), 100);
  t.teardown(() => clearInterval(sampler));
  const clients = new Agent({ connections: null, headersTimeout: 0, bodyTimeout: 0 });
  t.teardown(() => clients.close());
  const body = JSON.stringify(newSessionBody());
  const answers = [];
  for (let i = 0; i < 500; i++) {
    const started = Date.now();
    answers.push(
      fetch(`${base}/session`, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: clients } as RequestInit).then(async (res) => {
        const value = ((await res.json()) as { value: { sessionId?: string; error?: string; message?: string } }).value;
        const answeredAt = Date.now();
        // a client that got its session ends it at once: the slot turns to the next in line
        if (value.sessionId) await fetch(`${base}/session/${value.sessionId}`, { method: 'DELETE', dispatcher: clients } as RequestInit).then((r) => r.arrayBuffer());
        return { status: res.status, value, waited: answeredAt - started };
      }),
    );
  }
  const results = await Promise.all(answers);
  clearInterval(sampler);
  const served = results.filter((r) => r.status === 200);
  const timedOut = results.filter((r) => r.status !== 200);
  t.ok(served.length >= 2, `${served.length} served`);
  t.equal(served.length + timedOut.length, 500, 'every request answered');
  const other = timedOut.filter((r) => !(r.value.error === 'session not created' && /queue timeout \(30 s\), which covers the whole request/.test(r.value.message ?? '')));
  t.same(other.map((r) => `${r.status} ${r.value.error}: ${r.value.message} after ${r.waited} ms`).slice(0, 5), [], 'the rest: session not created, the queue timeout');
  const waits = timedOut.map((r) => r.waited).sort((a, b) => a - b);
  t.ok(waits[0]! >= QUEUE * 1000 - 500, `none answered before the queue timeout (shortest ${waits[0]} ms)`);
  t.ok(waits.at(-1)! < QUEUE * 1000 + 15_000, `each answered at the queue timeout, with a loaded machine's slack (longest ${waits.at(-1)} ms)`);
  t.ok(most <= MANAGER_CONNECTIONS, `the manager held at most ${most} Redis connections while 500 requests queued (bound ${MANAGER_CONNECTIONS})`);

  // queue order: no session got a slot while one queued before it still waited
  const ids = [...((await backend.send(['SMEMBERS', `${P}sessions.terminated`])) as string[])];
  const info = await Promise.all(
    ids.map(async (id) => {
      const [queuedAt, terminatedAt] = (await backend.send(['HMGET', `${P}session:${id}:status`, 'queuedAt', 'terminatedAt'])) as string[];
      const log = (await backend.send(['XRANGE', `${P}session:${id}:log`, '-', '+'])) as [string, string[]][];
      const alloc = log.find(([, f]) => f[f.indexOf('code') + 1] === 'NALLOC');
      return { id, queued: Date.parse(queuedAt!), queuedSeq: Number(log[0]![0].split('-')[1]), allocated: alloc ? Number(alloc[0].split('-')[0]) : undefined, ended: Date.parse(terminatedAt!) };
    }),
  );
  const active = (await backend.send(['SMEMBERS', `${P}sessions.active`])) as string[];
  t.same(active, [], 'none left active');
  t.equal(info.length, 500, 'all 500 in sessions.terminated');
  const byQueue = info.sort((a, b) => a.queued - b.queued || a.queuedSeq - b.queuedSeq);
  const overtaken: string[] = [];
  for (const [i, later] of byQueue.entries()) {
    if (later.allocated === undefined) continue;
    for (const earlier of byQueue.slice(0, i)) {
      // earlier still waiting when later got its slot: not allocated yet, and neither ended nor past its queue
      // timeout (a request stops waiting at its deadline; its terminatedAt is written after, later still when
      // hundreds time out at once); 5 ms: one clock tick of slack
      const stoppedWaiting = Math.min(earlier.ended, earlier.queued + QUEUE * 1000);
      const waiting = (earlier.allocated === undefined || earlier.allocated > later.allocated + 5) && stoppedWaiting > later.allocated + 5;
      if (waiting && earlier.queued < later.queued - 5) {
        const at = (ms: number | undefined) => (ms === undefined ? '-' : `+${ms - byQueue[0]!.queued} ms`);
        overtaken.push(`${earlier.id} (queued ${at(earlier.queued)}, allocated ${at(earlier.allocated)}, ended ${at(earlier.ended)}) by ${later.id} (queued ${at(later.queued)}, allocated ${at(later.allocated)})`);
      }
    }
  }
  t.same(overtaken, [], `slots went in queue order (${info.filter((s) => s.allocated !== undefined).length} allocated)`);
  await until('both slots free again', async () => (await backend.send(['LLEN', `${P}orchestrator:orch-5:slots.available`])) === 2, 30_000);
});

t.test('an idle grid costs Redis next to nothing: commands per minute (INFO commandstats)', async (t) => {
  const calls = async () => {
    const text = (await backend.send(['INFO', 'commandstats'])) as string;
    return [...text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map(([, name, n]) => [name!, Number(n)] as const);
  };
  await new Promise((r) => setTimeout(r, 3000)); // the queue's last answers settle
  const before = new Map(await calls());
  const window = 30_000;
  await new Promise((r) => setTimeout(r, window));
  const after = await calls();
  // this test's own INFO calls are not the grid's
  const delta = after.map(([name, n]) => [name, n - (before.get(name) ?? 0) - (name === 'info' ? 1 : 0)] as const).filter(([, n]) => n > 0);
  const perMinute = (delta.reduce((sum, [, n]) => sum + n, 0) * 60_000) / window;
  t.comment(`idle grid (proxy, manager, orchestrator with 2 slots; heartbeat.interval 2 s): ${perMinute} commands/min: ${delta.map(([n, c]) => `${n} ${c}`).join(', ')}`);
  // The manager's queue loop asks again every LOOP_BLOCK_SECONDS (a BLPOP that does not come back then is one Redis
  // holds, after a failover: issue 30); any other blocking pop stays blocked the whole window.
  const loopPops = Math.ceil(window / (LOOP_BLOCK_SECONDS * 1000)) + 1;
  const pops = (name: string) => delta.find(([n]) => n === name)?.[1] ?? 0;
  t.ok(pops('blpop') <= loopPops, `the manager's queue loop: ${pops('blpop')} BLPOPs in ${window / 1000} s, one per ${LOOP_BLOCK_SECONDS} s at most (${loopPops})`);
  t.notOk(['brpop', 'brpoplpush', 'blmove'].some((name) => pops(name) > 1), 'no other blocking pop re-issued while idle (at most one each in the window)');
  const beats = 60 / 2; // heartbeat.interval=2 here
  // 16 per heartbeat, and the proxy's read of the API keys (HKEYS), so a revoked key is refused within a heartbeat
  t.ok(perMinute / beats <= 17, `${perMinute} commands/min: ${perMinute / beats} per heartbeat of the three processes, nothing else (bench/webdriver.mjs measures it at the default interval)`);
});

t.test('SIGTERM: every process stops cleanly', async (t) => {
  const stopping = Date.now();
  for (const p of [proxy, manager, orchestrator]) p.kill('SIGTERM');
  t.same(await Promise.all([proxy, manager, orchestrator].map((p) => p.exited)), [0, 0, 0]);
  t.ok(Date.now() - stopping < 15_000, `stopped in ${Date.now() - stopping} ms: long blocking pops do not hold a stop up`);
});
