// The WebDriver grid when its one redis-server stalls or goes for good, on
// both adapters side by side (each deployment its own prefix: a proxy and a
// manager in one coord process, an orchestrator with a real chromedriver and
// Chromium in another), with a session open on each. A 20 s DEBUG SLEEP
// (nothing fails over): /status says not ready, naming Redis, within its 3 s
// deadline; commands on the open session go on (routes are cached, a command
// needs no Redis); a New Session asked for during the pause waits for Redis
// within its queue timeout, as a Selenium client expects of a queued request,
// and is served after it. Then Redis killed -9 and never back: /status not
// ready naming Redis; a New Session refused with `session not created` naming
// Redis (it waited forever: no call had a bound) — at its queue timeout on
// ioredis, which queues commands until Redis is back, within seconds on
// node-redis, which fails a command not sent within 5 s; the processes stay
// up and answer; the open session works within heartbeat.nodeTtl, and past it
// each command works (ioredis: heartbeats wait) or is told the session ended
// or Redis cannot be reached (node-redis: the node ends its session once its
// heartbeats failed for nodeTtl), never a hang. Figures printed;
// docs/webdriver.md has them.
import t, { type Test } from 'tap';
import { buildIfStale } from './support/build.ts';
import type { CoordProcess } from './support/cli.ts';
import { roleStarter } from './support/grid-failover.ts';
import { startPage } from './support/page.ts';
import { freePort, startRedis } from './support/redis.ts';
import { debugSleep } from './support/redis-ha.ts';
import { ready } from './support/rig.ts';
import { until } from './support/until.ts';
import { newSessionBody } from './support/webdriver.ts';

buildIfStale();
const PAUSE_S = 20;
/** timeouts.queue (and sessionTermination, which may not exceed it): what bounds a New Session while Redis does not answer. */
const QUEUE_S = 40;
/** The manager refuses a request whose Redis call is not answered this long after its queue timeout (manager.ts REDIS_GRACE_MS). */
const GRACE_MS = 3000;
/** A loaded 2-core machine's slack on every bound below; a hang is minutes, not this. */
const SLACK_MS = 10_000;

const redis = await startRedis({ args: ['--enable-debug-command', 'yes'] });
const page = await startPage();
t.teardown(async () => {
  await page.close();
  await redis.stop(true);
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Answer {
  status: number;
  body: { value?: { sessionId?: string; error?: string; message?: string; ready?: boolean } & Record<string, unknown> };
  /** When it was asked and answered (Date.now()). */
  at: number;
  end: number;
  /** Why there was no answer (a timeout, a refused connection). */
  error?: string;
}

/** One W3C request, given up after `timeoutMs`: the answer, or why there was none, and when. */
async function call(base: string, method: string, path: string, body?: unknown, timeoutMs = 15_000): Promise<Answer> {
  const at = Date.now();
  try {
    const res = await fetch(`${base}${path}`, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : {}, at, end: Date.now() };
  } catch (error) {
    return { status: 0, body: {}, at, end: Date.now(), error: (error as Error).message };
  }
}

interface Deployment {
  adapter: string;
  base: string;
  processes: CoordProcess[];
  /** The session open throughout. */
  session: string;
}

/** heartbeat.nodeTtl: longer than the pause, so its sessions outlive it (the default, 60 s, is too). */
const NODE_TTL_S = 30;
const sets = ['heartbeat.interval=1', `heartbeat.nodeTtl=${NODE_TTL_S}`, 'heartbeat.managerTtl=4', 'timeouts.slotReclaimInterval=2', `timeouts.queue=${QUEUE_S}`, `timeouts.sessionTermination=${QUEUE_S}`];
const deployments: Deployment[] = await Promise.all(['ioredis', 'node-redis'].map(async (adapter, i) => {
  const port = await freePort();
  const start = roleStarter(t, 'webdriver', redis.url, adapter, `{wf${i}}:`);
  const processes = [start(['proxy', 'manager'], [...sets, `proxy.port=${port}`]), start(['orchestrator'], [...sets, 'orchestrator.slots=2', 'orchestrator.id=orch-f'])];
  await ready(...processes);
  const base = `http://127.0.0.1:${port}`;
  const created = await until(`${adapter}: a first session`, async () => {
    const a = await call(base, 'POST', '/session', newSessionBody(), 60_000);
    return a.status === 200 ? a : undefined;
  }, 90_000, 500);
  return { adapter, base, processes, session: created.body.value!.sessionId! };
}));

/** A command on the open session: navigate, then read the title; whether both worked, and when it was done. */
async function command(d: Deployment, tag: string): Promise<{ ok: boolean; at: number; end: number; what: string }> {
  const nav = await call(d.base, 'POST', `/session/${d.session}/url`, { url: `${page.url}/${tag}` });
  const title = nav.status === 200 ? await call(d.base, 'GET', `/session/${d.session}/title`) : nav;
  const ok = nav.status === 200 && title.body.value === `coord /${tag}`;
  return { ok, at: nav.at, end: title.end, what: ok ? 'worked' : `${title.status} ${title.error ?? JSON.stringify(title.body.value).slice(0, 300)}` };
}

type Done = Awaited<ReturnType<typeof command>>;

/** Commands on the open session one after another, every second, until stop(): each one's outcome (it also keeps the session from going idle). */
function keepBusy(d: Deployment, tag: string): { stop(): Promise<Done[]> } {
  const done: Done[] = [];
  let going = true;
  const loop = (async () => {
    for (let n = 0; going; n++) {
      done.push(await command(d, `${tag}${n}`));
      await sleep(1000);
    }
  })();
  return { stop: async () => ((going = false), await loop, done) };
}

/** Prints and checks commands on the open session: every one worked, and `some` of them were done within [from, to]. */
function allWorked(t: Test, d: Deployment, done: Done[], from: number, to: number, what: string): void {
  const within = done.filter((c) => c.at >= from && c.end <= to);
  const failed = done.filter((c) => !c.ok);
  const slowest = Math.max(...done.map((c) => c.end - c.at));
  t.comment(`${d.adapter}: ${done.length} commands on the open session ${what} (${within.length} wholly within it), ${failed.length} failed, slowest ${slowest} ms`);
  t.ok(within.length > 0, `${d.adapter}: commands were sent ${what} (${within.length})`);
  t.same(failed.map((c) => c.what), [], `${d.adapter}: every command on the open session worked ${what}`);
}

/** GET /status: ready and its message, given up after 10 s. */
const status = (d: Deployment) => call(d.base, 'GET', '/status', undefined, 10_000);

t.test(`a ${PAUSE_S} s DEBUG SLEEP: /status not ready naming Redis; the open session goes on; a session asked for meanwhile is served after it`, async (t) => {
  for (const d of deployments) t.ok((await command(d, 'before')).ok, `${d.adapter}: the open session works`);
  const busy = deployments.map((d) => keepBusy(d, 'paused'));
  const pausedAt = Date.now();
  const woke = debugSleep(redis.port, PAUSE_S).then(() => Date.now());
  await sleep(2000);
  const asked = deployments.map((d) => call(d.base, 'POST', '/session', newSessionBody(), (QUEUE_S + 60) * 1000));
  await sleep(2000);
  const during = await Promise.all(deployments.map((d) => status(d)));
  const wokeAt = await woke;
  const commands = await Promise.all(busy.map((b) => b.stop()));
  t.comment(`DEBUG SLEEP ${PAUSE_S}: Redis answered again ${wokeAt - pausedAt} ms after it began`);
  await Promise.all(deployments.map(async (d, i) => {
    const s = during[i]!;
    t.comment(`${d.adapter}: /status during the pause in ${s.end - s.at} ms: ready ${s.body.value?.ready}, "${s.body.value?.message}"`);
    t.equal(s.body.value?.ready, false, `${d.adapter}: /status during the pause says not ready`);
    t.match(s.body.value?.message, /Redis/, `${d.adapter}: naming Redis`);
    t.ok(s.end - s.at <= 3000 + SLACK_MS, `${d.adapter}: within its deadline (${s.end - s.at} ms)`);
    allWorked(t, d, commands[i]!, pausedAt, wokeAt, 'during the pause');

    const a = await asked[i]!;
    t.comment(`${d.adapter}: New Session asked ${a.at - pausedAt} ms into the pause: ${a.status} ${a.end - wokeAt} ms after it ended (${a.end - a.at} ms in all)${a.status === 200 ? '' : `: ${a.error ?? JSON.stringify(a.body.value)}`}`);
    t.equal(a.status, 200, `${d.adapter}: the session asked for during the pause is served`);
    t.ok(a.end > wokeAt && a.end - a.at <= QUEUE_S * 1000, `${d.adapter}: after the pause, within its queue timeout (${a.end - a.at} ms)`);
    const id = a.body.value?.sessionId;
    if (id) {
      t.equal((await call(d.base, 'POST', `/session/${id}/url`, { url: `${page.url}/new` })).status, 200, `${d.adapter}: and it works`);
      t.equal((await call(d.base, 'DELETE', `/session/${id}`)).status, 200);
    }
    const readyAgain = await until(`${d.adapter}: /status ready again`, async () => ((await status(d)).body.value?.ready ? Date.now() : undefined), 60_000, 250);
    t.comment(`${d.adapter}: /status ready again ${readyAgain - wokeAt} ms after the pause`);
    // the manager counts again once its queue loop's BLPOP came back (within 5 s) and it heartbeat after it
    t.ok(readyAgain - wokeAt <= 5000 + SLACK_MS, `${d.adapter}: /status ready again within ${5000 + SLACK_MS} ms of the pause's end (${readyAgain - wokeAt} ms)`);
    t.ok((await command(d, 'after-pause')).ok, `${d.adapter}: the open session works after the pause`);
  }));
});

t.test('Redis lost for good: /status not ready naming Redis; New Session refused naming it, never a hang; processes up; the open session goes on within heartbeat.nodeTtl', async (t) => {
  await redis.down();
  const lostAt = Date.now();
  const busy = deployments.map((d) => keepBusy(d, 'lost'));
  await Promise.all(deployments.map(async (d) => lostCase(t, d, lostAt)));
  const endAt = Date.now();
  for (const [i, d] of deployments.entries()) {
    const done = await busy[i]!.stop();
    // within the node heartbeat's TTL every command works; past it, a node whose heartbeats fail ends its session
    const early = done.filter((c) => c.end - lostAt <= (NODE_TTL_S - 2) * 1000);
    allWorked(t, d, early, lostAt, lostAt + NODE_TTL_S * 1000, `within heartbeat.nodeTtl (${NODE_TTL_S} s) of the loss`);
    const late = done.filter((c) => c.end - lostAt > (NODE_TTL_S - 2) * 1000);
    const firstFailed = late.find((c) => !c.ok);
    t.comment(`${d.adapter}: past it, until ${Math.round((endAt - lostAt) / 1000)} s: ${late.filter((c) => c.ok).length} of ${late.length} commands worked${firstFailed ? `; the first to fail, ${firstFailed.at - lostAt} ms after the loss: ${firstFailed.what}` : ''}`);
    t.same(late.filter((c) => !c.ok && !/invalid session id|Redis/.test(c.what)).map((c) => c.what), [], `${d.adapter}: past it, each command works, or is told \`invalid session id\` or that Redis cannot be reached (no hang)`);
  }
});

async function lostCase(t: Test, d: Deployment, lostAt: number): Promise<void> {
  const asked = call(d.base, 'POST', '/session', newSessionBody(), (QUEUE_S + 120) * 1000);
  const notReady = await until(`${d.adapter}: /status not ready`, async () => {
    const s = await status(d);
    return s.body.value?.ready === false ? s : undefined;
  }, 60_000, 250);
  t.comment(`${d.adapter}: /status not ready ${notReady.end - lostAt} ms after Redis was killed: "${notReady.body.value?.message}"`);
  t.match(notReady.body.value?.message, /Redis/, `${d.adapter}: /status names Redis`);
  t.ok(notReady.end - lostAt <= 3000 + SLACK_MS, `${d.adapter}: not ready within ${3000 + SLACK_MS} ms (${notReady.end - lostAt} ms)`);

  const a = await asked;
  const waited = a.end - a.at;
  t.comment(`${d.adapter}: New Session with Redis gone answered after ${waited} ms: ${a.status} ${a.error ?? JSON.stringify(a.body.value)}`);
  t.equal(a.status, 500, `${d.adapter}: refused`);
  t.equal(a.body.value?.error, 'session not created', `${d.adapter}: session not created`);
  t.match(a.body.value?.message, /Redis/, `${d.adapter}: naming Redis`);
  t.ok(waited <= QUEUE_S * 1000 + GRACE_MS + SLACK_MS, `${d.adapter}: after its queue timeout (${QUEUE_S} s) and no hang past it (${waited} ms)`);

  for (const p of d.processes) t.ok(p.child.exitCode === null && p.child.signalCode === null, `${d.adapter}: pid ${p.child.pid} still runs`);
  const s = await status(d);
  t.ok(s.status === 200 && s.body.value?.ready === false, `${d.adapter}: /status still answers, not ready (${s.end - s.at} ms): ${s.body.value?.message}`);
}
