// The WebDriver grid's Lua steps on real Redis (WD_BACKEND=embedded: on the
// embedded backend, whose Lua differs): queue → allocate → schedule → alive →
// terminate, exactly-once termination with the slot back, reclaim of orphaned
// slots (two passes) and dead sessions, slot counts, the reliable queue, purge.
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import type { Backend } from '../core/backend.ts';
import type { Clock } from '../core/clock.ts';
import { scenarioContext } from '../conformance/scenario-context.ts';
import plugin from '../plugins/webdriver/index.ts';
import type { Ctx } from '../plugins/webdriver/context.ts';
import { readLog } from '../plugins/webdriver/session/log.ts';
import { contract } from '../plugins/webdriver/contract.ts';
import { allocateSlot, forgetOrchestrator, markAlive, purgeSession, queueSession, reclaimSlots, registerOrchestrator, scheduleSession, terminateSession } from '../plugins/webdriver/scripts.ts';
import { gcOnce } from '../plugins/webdriver/roles/gc.ts';
import { readTimeouts } from '../plugins/webdriver/session/timeouts.ts';
import { startRedis } from './support/redis.ts';

const embedded = process.env.WD_BACKEND === 'embedded';
const redis = embedded ? undefined : await startRedis();
const backend: Backend = await createBackend({ url: redis?.url });
t.teardown(async () => {
  await backend.close();
  await redis?.stop();
});

let now = 1_800_000_000_000;
const clock: Clock = { now: () => now, sleep: async () => {} };
let run = 0;
const ctx0 = () => scenarioContext({ plugin, backend, keyPrefix: '', signal: new AbortController().signal, clock }) as Ctx;
const grid = (config: Record<string, unknown> = {}): Ctx =>
  scenarioContext({ plugin, backend, keyPrefix: `{wd${++run}}:`, signal: new AbortController().signal, clock, config }) as Ctx;

const O = 'orch-1';
const o = { orchestratorId: O };
const sid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const offer = (slots = 2) => ({ orchestratorId: O, type: 'local' as const, platformName: 'linux', browsers: ['chrome::156.0.8078.108'], slots });
const queue = (ctx: Ctx, sessionId: string) =>
  queueSession(ctx, { sessionId, requested: { alwaysMatch: { browserName: 'chrome' } }, clientHost: '10.0.0.9', userAgent: 'ua', meta: 'm' });
const list = (key: string) => backend.send(['LRANGE', key, 0, -1]) as Promise<string[]>;
const hash = async (key: string) => {
  const flat = (await backend.send(['HGETALL', key])) as string[];
  return Object.fromEntries(flat.flatMap((v, i) => (i % 2 ? [] : [[v, flat[i + 1]]])));
};
const codes = async (ctx: Ctx, sessionId: string) => (await readLog(ctx, sessionId)).map((e) => e.code);

/** A session taken all the way to alive, as the manager and orchestrator do. */
async function alive(ctx: Ctx, sessionId: string): Promise<string> {
  await queue(ctx, sessionId);
  const slot = (await backend.send(['LPOP', ctx.keys.slotsAvailable(o)])) as string;
  await allocateSlot(ctx, sessionId, O, slot);
  await backend.send(['RPOPLPUSH', ctx.keys.backlog(o), ctx.keys.pending(o)]);
  now += 2000;
  await scheduleSession(ctx, sessionId, O, 'sched');
  now += 1500;
  await markAlive(ctx, sessionId, 'alive');
  return slot;
}

t.test('registration: type, offer, TTLs, and exactly the configured slots', async (t) => {
  const ctx = grid();
  t.equal(await registerOrchestrator(ctx, offer(3)), 3, 'three new slots');
  t.same(await list(ctx.keys.slotsAvailable(o)), [`${O}:1`, `${O}:2`, `${O}:3`]);
  t.equal(await registerOrchestrator(ctx, offer(3)), 0, 'a heartbeat adds nothing');
  t.same(await hash(ctx.keys.orchestrator(o)), { type: 'local' });
  t.same(await backend.send(['SMEMBERS', ctx.keys.orchestratorBrowsers(o)]), ['chrome::156.0.8078.108']);
  const ttl = (await backend.send(['TTL', ctx.keys.orchestratorRetain(o)])) as number;
  t.ok(ttl > 604000 && ttl <= 604800, `retain expires in 7 days (${ttl} s)`);
  t.ok(((await backend.send(['TTL', ctx.keys.orchestratorHeartbeat(o)])) as number) <= 60);
  await registerOrchestrator(ctx, offer(1));
  t.same(await backend.send(['SMEMBERS', ctx.keys.slots(o)]), [`${O}:1`], 'fewer slots: the extra ones are dropped');
  t.same(await list(ctx.keys.slotsAvailable(o)), [`${O}:1`]);
});

t.test('a session from QUEUED to terminated: records, log, metrics, slot back exactly once', async (t) => {
  const ctx = grid();
  await registerOrchestrator(ctx, offer(2));
  const id = sid(1);
  const slot = await alive(ctx, id);
  t.equal(slot, `${O}:1`);
  t.equal(await backend.send(['GET', ctx.keys.sessionSlot({ sessionId: id })]), slot);
  t.same(await hash(ctx.keys.slotsHeld(o)), { [slot]: id }, 'the slot is held by the session');
  t.same(await list(ctx.keys.sessionOrchestrator({ sessionId: id })), [O], 'the orchestrator signalled scheduling');
  const status = await hash(ctx.keys.sessionStatus({ sessionId: id }));
  t.same(Object.keys(status).sort(), ['aliveAt', 'pendingAt', 'queuedAt']);
  t.same(await codes(ctx, id), ['QUEUED', 'NALLOC', 'SCHED', 'NALIVE']);
  t.equal(await backend.send(['GET', ctx.keys.startupCount()]), '1');
  t.equal(Number(await backend.send(['GET', ctx.keys.startupSum()])), 3.5, 'startup = queuedAt → aliveAt');
  const buckets = await hash(ctx.keys.startupBuckets());
  t.same(buckets, { '5': '1', '10': '1', '30': '1', '60': '1', '120': '1', '300': '1', '+Inf': '1' }, 'cumulative buckets from 5 s up');

  now += 10_000;
  const first = await terminateSession(ctx, id, { component: 'node', code: 'CLOSED', meta: 'bye' });
  t.same(first, { terminated: true, slot });
  const second = await terminateSession(ctx, id, { component: 'orchestrator', code: 'TERM', reason: 'dead' });
  t.same(second, { terminated: false, slot: '' }, 'a second termination does nothing');
  t.same(await list(ctx.keys.slotsReclaimed(o)), [slot], 'the slot is back once');
  t.same(await hash(ctx.keys.slotsHeld(o)), {});
  t.same(await backend.send(['SMEMBERS', ctx.keys.sessionsTerminated()]), [id]);
  t.same(await backend.send(['SMEMBERS', ctx.keys.sessionsActive()]), []);
  t.same(await codes(ctx, id), ['QUEUED', 'NALLOC', 'SCHED', 'NALIVE', 'CLOSED']);
  t.same(await hash(ctx.keys.sessionsTotal()), { queued: '1', pending: '1', alive: '1', terminated: '1' });
  const duration = await hash(ctx.keys.sessionsDuration());
  t.same(Object.fromEntries(Object.entries(duration).map(([k, v]) => [k, Number(v)])), { queued: 2, pending: 1.5, alive: 10 });
  t.same(await hash(ctx.keys.logCounts({ level: 'info' })), { QUEUED: '1', NALLOC: '1', SCHED: '1', NALIVE: '1', CLOSED: '1' });
  t.same(await hash(ctx.keys.slotsReclaimedTotal()), {}, 'a normal close is not a reclaim');
});

t.test('allocation to a session that ended meanwhile gives the slot back first in line', async (t) => {
  const ctx = grid();
  await registerOrchestrator(ctx, offer(2));
  await queue(ctx, sid(2));
  now += 4000;
  await terminateSession(ctx, sid(2), { component: 'manager', code: 'CLEFT', meta: 'left' });
  t.equal(Number(await backend.send(['HGET', ctx.keys.sessionsDuration(), 'queued'])), 4, 'the 4 s it spent queued are counted');
  const slot = (await backend.send(['LPOP', ctx.keys.slotsAvailable(o)])) as string;
  t.equal(await allocateSlot(ctx, sid(2), O, slot), false);
  t.same(await list(ctx.keys.slotsAvailable(o)), [`${O}:1`, `${O}:2`]);
  t.same(await list(ctx.keys.backlog(o)), [], 'nothing reaches the backlog');
  t.same(await hash(ctx.keys.logCounts({ level: 'warn' })), { CLEFT: '1' });
});

t.test('scheduling: a gone session leaves pending; a recovered one is not scheduled twice', async (t) => {
  const ctx = grid();
  await registerOrchestrator(ctx, offer(2));
  for (const n of [3, 4]) {
    await queue(ctx, sid(n));
    await allocateSlot(ctx, sid(n), O, (await backend.send(['LPOP', ctx.keys.slotsAvailable(o)])) as string);
  }
  t.same(await list(ctx.keys.backlog(o)), [sid(4), sid(3)], 'LPUSH: the first session is taken first (RPOPLPUSH)');
  await backend.send(['RPOPLPUSH', ctx.keys.backlog(o), ctx.keys.pending(o)]);
  await backend.send(['RPOPLPUSH', ctx.keys.backlog(o), ctx.keys.pending(o)]);
  t.same(await list(ctx.keys.pending(o)), [sid(4), sid(3)]);
  t.equal(await scheduleSession(ctx, sid(3), O, 'x'), 1);
  t.equal(await scheduleSession(ctx, sid(3), O, 'x again'), 2, 'after a restart: already scheduled');
  t.same(await list(ctx.keys.sessionOrchestrator({ sessionId: sid(3) })), [O], 'signalled once');
  await terminateSession(ctx, sid(4), { component: 'manager', code: 'OTIMEOUT', meta: 'late' });
  t.equal(await scheduleSession(ctx, sid(4), O, 'x'), 0);
  t.same(await list(ctx.keys.pending(o)), [sid(3)], 'the ended session left pending');
  t.same(await list(ctx.keys.slotsReclaimed(o)), [`${O}:2`], 'and its slot went back');
});

t.test('reclaim: an unheld slot is orphaned at the second pass; a dead session is reported; a stale hold goes back', async (t) => {
  const ctx = grid();
  await registerOrchestrator(ctx, offer(3));
  const live = sid(5);
  await alive(ctx, live);
  await backend.send(['SET', ctx.keys.sessionNodeHeartbeat({ sessionId: live }), 'x', 'EX', 60]);
  const dead = sid(6);
  await alive(ctx, dead);
  await backend.send(['DEL', ctx.keys.sessionManagerHeartbeat({ sessionId: dead })]);
  const lost = (await backend.send(['LPOP', ctx.keys.slotsAvailable(o)])) as string; // a manager took it and died

  const first = await reclaimSlots(ctx, O, []);
  t.same(first.orphaned, [], 'not at the first sight');
  t.same(first.suspects, [lost]);
  t.same(first.dead, [dead], 'the session with neither heartbeat is dead; the live one is not');
  const second = await reclaimSlots(ctx, O, first.suspects);
  t.same(second.orphaned, [lost], 'orphaned at the second');
  t.same(await list(ctx.keys.slotsReclaimed(o)), [lost]);
  const ended = await terminateSession(ctx, dead, { component: 'orchestrator', code: 'TERM', meta: 'no heartbeat', reason: 'dead' });
  t.equal(ended.slot, `${O}:2`);
  t.same(await hash(ctx.keys.slotsReclaimedTotal()), { orphaned: '1', dead: '1' });

  // a hold left by a session that ended without giving its slot back
  await backend.send(['SREM', ctx.keys.sessionsActive(), live]);
  const third = await reclaimSlots(ctx, O, []);
  t.same(third.orphaned, [`${O}:1`]);
  t.same(await hash(ctx.keys.slotsHeld(o)), {});
});

t.test('timeouts: defaults written when missing, a stored value wins', async (t) => {
  const ctx = grid({ timeouts: { queue: 700 } });
  await backend.send(['HSET', ctx.keys.timeouts(), 'scheduling', '99']);
  const read = await readTimeouts(ctx);
  t.equal(read.queue, 700);
  t.equal(read.scheduling, 99, 'the hash wins over config');
  t.same(await hash(ctx.keys.timeouts()), { scheduling: '99', queue: '700', nodeStartup: '120', driverStartup: '30', sessionTermination: '300', slotReclaimInterval: '300' });
});

t.test('purge and forget: every key of a session, an orchestrator whose retain expired', async (t) => {
  const ctx = grid();
  await registerOrchestrator(ctx, offer(1));
  await alive(ctx, sid(7));
  await terminateSession(ctx, sid(7), { component: 'node', code: 'CLOSED' });
  await queue(ctx, sid(8));
  await terminateSession(ctx, sid(8), { component: 'manager', code: 'QTIMEOUT' }); // leaves session:ID:ready behind
  const keysOf = async (n: number) => {
    const found: string[] = [];
    for await (const key of backend.scan(`${ctx.global.redis.keyPrefix}session:${sid(n)}:*`)) found.push(key);
    return found.length;
  };
  const before = [await keysOf(7), await keysOf(8)];
  t.ok(before[1]! >= 6, `the queued session has ${before[1]} keys, session:ID:ready among them`);
  t.equal(await purgeSession(ctx, sid(7)), before[0], 'every key of the served session is deleted');
  t.equal(await purgeSession(ctx, sid(8)), before[1], 'every key of the queued one too');
  const left: string[] = [];
  for await (const key of backend.scan(`${ctx.global.redis.keyPrefix}session:*`)) left.push(key);
  t.same(left, [], 'no session key is left');
  t.same(await backend.send(['SMEMBERS', ctx.keys.sessionsTerminated()]), []);
  t.equal(await forgetOrchestrator(ctx, O), false, 'retained: kept');
  await backend.send(['DEL', ctx.keys.orchestratorRetain(o)]);
  t.equal(await forgetOrchestrator(ctx, O), true);
  const rest: string[] = [];
  for await (const key of backend.scan(`${ctx.global.redis.keyPrefix}orchestrator*`)) rest.push(key);
  t.same(rest, [], 'no orchestrator key is left');
});

t.test('gc bounds the history: the newest gc.maxSessions and gc.maxBytes of terminated sessions are kept, each weighed once', async (t) => {
  const served = async (ctx: Ctx, n: number) => {
    await alive(ctx, sid(n));
    await terminateSession(ctx, sid(n), { component: 'node', code: 'CLOSED' });
    now += 1000; // each ends a second after the one before: the order gc keeps
  };
  const terminated = async (ctx: Ctx) => ((await backend.send(['SMEMBERS', ctx.keys.sessionsTerminated()])) as string[]).sort();

  const byCount = grid({ gc: { maxSessions: 3 } });
  await registerOrchestrator(byCount, offer(5));
  for (let n = 1; n <= 5; n++) await served(byCount, n);
  const first = await gcOnce(byCount);
  t.same(first.purged.sort(), [sid(1), sid(2)], 'the two oldest of five go');
  t.same(await terminated(byCount), [sid(3), sid(4), sid(5)], 'the newest three stay, for the API');
  const left: string[] = [];
  for await (const key of backend.scan(`${byCount.global.redis.keyPrefix}session:${sid(1)}:*`)) left.push(key);
  t.same(left, [], 'a purged session leaves no key');
  const weights = await Promise.all([3, 4, 5].map(async (n) => Number(await backend.send(['HGET', byCount.keys.sessionStatus({ sessionId: sid(n) }), 'bytes']))));
  t.ok(weights.every((w) => w > 500), `each kept session was weighed: ${weights.join(', ')} bytes`);
  if (!embedded) {
    // On Redis the weight is what MEMORY USAGE says of its keys, read here after the fact (bytes itself adds a field).
    let usage = 0;
    for await (const key of backend.scan(`${byCount.global.redis.keyPrefix}session:${sid(5)}:*`)) usage += Number(await backend.send(['MEMORY', 'USAGE', key]));
    t.ok(Math.abs(usage - weights[2]!) < 100, `weighed ${weights[2]} bytes, MEMORY USAGE now says ${usage}`);
  }
  await backend.send(['HSET', byCount.keys.sessionStatus({ sessionId: sid(5) }), 'bytes', '1']);
  await gcOnce(byCount);
  t.equal(await backend.send(['HGET', byCount.keys.sessionStatus({ sessionId: sid(5) }), 'bytes']), '1', 'a session is weighed once, not every pass');

  const bySize = grid();
  await registerOrchestrator(bySize, offer(5));
  for (let n = 1; n <= 4; n++) await served(bySize, n);
  t.same((await gcOnce(bySize)).purged, [], 'within the defaults nothing goes before its retention');
  const weight = Number(await backend.send(['HGET', bySize.keys.sessionStatus({ sessionId: sid(4) }), 'bytes']));
  const twoFit = scenarioContext({ plugin, backend, keyPrefix: bySize.global.redis.keyPrefix, signal: new AbortController().signal, clock, config: { gc: { maxBytes: Math.floor(weight * 2.5) } } }) as Ctx;
  t.same((await gcOnce(twoFit)).purged.sort(), [sid(1), sid(2)], 'past gc.maxBytes the oldest go');
  t.same(await terminated(bySize), [sid(3), sid(4)]);

  const byAge = grid({ gc: { retention: 60 } });
  await registerOrchestrator(byAge, offer(5));
  await served(byAge, 1);
  now += 61_000;
  await served(byAge, 2);
  t.same((await gcOnce(byAge)).purged, [sid(1)], 'the retention still applies');
});

t.test('session:ID:ready: the manager is woken by the node, or by the end of a session not yet served', async (t) => {
  const ctx = grid();
  await registerOrchestrator(ctx, offer(2));
  const ready = (n: number) => list(ctx.keys.sessionReady({ sessionId: sid(n) }));
  await queue(ctx, sid(9));
  await terminateSession(ctx, sid(9), { component: 'manager', code: 'CLEFT' });
  t.same(await ready(9), ['ended'], 'a session ended while queued wakes its manager');
  await alive(ctx, sid(10));
  t.same(await ready(10), [], 'nothing pushed for a session on its way');
  await backend.send(['RPUSH', ctx.keys.sessionReady({ sessionId: sid(11) }), '127.0.0.1:41000']);
  await alive(ctx, sid(11));
  t.same(await ready(11), [], 'NALIVE consumes the node\'s announcement');
  await terminateSession(ctx, sid(11), { component: 'node', code: 'CLOSED' });
  t.same(await ready(11), [], 'a session that was served wakes no one when it ends');
});

t.test('no script spells a key: every key it touches comes in KEYS or from a contract head and tail', async (t) => {
  const scripts = ctx0().scripts;
  const tails = Object.values(contract.keys)
    .map((k) => k.pattern)
    .filter((p) => p.includes('}'))
    .map((p) => p.slice(p.lastIndexOf('}') + 1))
    .filter((tail) => tail.length > 1);
  for (const name of scripts.names) {
    const lua = scripts.definition(name).lua;
    const code = lua.split('\n').filter((line) => !line.startsWith('--')).join('\n');
    // ':slots.held', or 'slots.held' appended after a ':' (field names such as 'pending' are no key tails)
    const spelled = tails.filter((tail) => [tail, ...(/[.:]/.test(tail.slice(1)) ? [tail.slice(1)] : [])].some((text) => code.includes(`'${text}'`) || code.includes(`"${text}"`)));
    t.same(spelled, [], `${name}: no key tail written out`);
  }
  // purge and forget name every key of a session and of an orchestrator
  const entriesOf = (name: string) => new Set(scripts.definition(name).keys.map((k) => k.entry));
  const under = (head: string) => Object.entries(contract.keys).filter(([, k]) => k.pattern.startsWith(head)).map(([entry]) => entry);
  const purged = entriesOf('purgeSession');
  t.same(under('session:{sessionId}').filter((e) => !purged.has(e)), [], 'purgeSession deletes every session key');
  const forgotten = entriesOf('forgetOrchestrator');
  t.same(under('orchestrator:{orchestratorId}').filter((e) => !forgotten.has(e)), [], 'forgetOrchestrator deletes every orchestrator key');
});

t.test('timing rule: a queue timeout below the idle timeout is refused at start, with one line saying why', async (t) => {
  t.throws(() => grid({ timeouts: { queue: 7 } }), /timeouts\.queue \(7s\) must be at least timeouts\.sessionTermination \(300s\)/);
  t.doesNotThrow(() => grid({ timeouts: { queue: 7, sessionTermination: 7 } }));
});
