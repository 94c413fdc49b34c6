// The manager's one blocking connection at scale (manager/blocking-waits.ts):
// a queue of thousands waiting on hundreds of orchestrators' lists, as at
// 5,000 requests on 200 orchestrators (bench/scale/webdriver.mjs). Each item
// goes to the earliest waiter (queue order), and neither a new waiter nor an
// item costs a pass over every waiter's lists: before the waiters were
// indexed by list, 3,000 waiters on 200 lists took 12 s to serve (1.8 s after), on a loaded 2-core machine.
// The slot lists the orchestrators announce are not named in the BLPOP at all:
// read when announced, when first wanted, and by a sweep every 5 s.
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import { BlockingWaits } from '../plugins/webdriver/manager/blocking-waits.ts';
import { silentLogger } from '../core/logger.ts';
import { startRedis } from './support/redis.ts';

const WAITERS = 3000;
const LISTS = 200;
const redis = await startRedis();
const backend = await createBackend({ url: redis.url });
const waits = new BlockingWaits(backend, '{bw}:wake', silentLogger);
waits.start();
t.teardown(async () => {
  await waits.stop();
  await backend.close();
  await redis.stop();
});

t.test(`${WAITERS} waiters on ${LISTS} lists: each item to the earliest waiter, none costing a pass over every waiter's lists`, async (t) => {
  const lists = Array.from({ length: LISTS }, (_, i) => `{bw}:orchestrator:${i}:slots.available`);
  const served: number[] = [];
  const queuing = performance.now();
  // each waiter its own array, as each queued request has (the manager's listsOf)
  const done = Array.from({ length: WAITERS }, (_, rank) => {
    const mine = [...lists];
    return waits.pop(() => mine, 120, { rank }).then((popped) => popped && served.push(rank));
  });
  const queuedMs = performance.now() - queuing;
  await new Promise((r) => setTimeout(r, 200)); // the loop blocks on every list
  const serving = performance.now();
  for (let i = 0; i < WAITERS; i += 100) await backend.send(['RPUSH', lists[i % LISTS]!, ...Array.from({ length: 100 }, (_, j) => `slot-${i + j}`)]);
  await Promise.all(done);
  const servedMs = performance.now() - serving;
  t.same(served, Array.from({ length: WAITERS }, (_, rank) => rank), 'served in queue order');
  t.ok(queuedMs < 3000, `queued ${WAITERS} waiters in ${queuedMs.toFixed(0)} ms`);
  t.ok(servedMs < 6000, `served ${WAITERS} items in ${servedMs.toFixed(0)} ms`);
  t.same(await backend.send(['EXISTS', ...lists]), 0, 'every item taken, none pushed back');
});

t.test('announced lists (the slots.available the orchestrators announce on slots.freed): read when a notice names them, when first wanted, and by the sweep when nobody announced the push', async (t) => {
  const list = (id: string) => `{bw}:orchestrator:${id}:slots.available`;
  const announced = new BlockingWaits(backend, '{bw}:wake2', silentLogger, { key: '{bw}:freed', list });
  announced.start();
  t.teardown(() => announced.stop());
  const lists = ['a', 'b', 'c'].map(list);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  await backend.send(['RPUSH', list('a'), 'a:1']);
  t.same(await announced.pop(lists, 5, { announced: true }), { key: list('a'), value: 'a:1' }, 'an item already there is read as the first waiter comes');

  const waiting = [0, 1, 2, 3].map((rank) => announced.pop(lists, 20, { announced: true, rank }));
  await sleep(300); // the loop blocks on the wake and notices lists alone
  for (const [i, id] of ['b', 'c', 'a', 'b'].entries()) {
    await backend.send(['RPUSH', list(id), `${id}:${i}`]);
    await backend.send(['RPUSH', '{bw}:freed', id]);
  }
  t.same((await Promise.all(waiting)).map((p) => p?.value), ['b:0', 'c:1', 'a:2', 'b:3'], 'each announced item to the earliest waiter');

  const began = performance.now();
  const late = announced.pop(lists, 30, { announced: true });
  await sleep(300);
  await backend.send(['RPUSH', list('c'), 'c:9']); // no notice
  t.equal((await late)?.value, 'c:9', 'a push nobody announced is found by the sweep');
  t.ok(performance.now() - began < 12_000, `within the sweep (${(performance.now() - began).toFixed(0)} ms)`);
  t.same(await backend.send(['EXISTS', ...lists]), 0, 'every item taken');
});
