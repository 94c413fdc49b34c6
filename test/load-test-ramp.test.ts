// The ramp after a slow start, and large ramp steps, against a scripted worker
// (this file writes its heartbeat and acknowledgements; no users run):
// a start waits for its workers to acknowledge start_test (a cold worker loads
// its scenario first), and that wait spawns no user — the spawn rate counts
// from when the test runs; and a step that adds many users at once assigns
// them ASSIGN_CHUNK per addUsers call, so no script call holds Redis for the
// whole ramp (bench/scale/load-test.mjs found both at 100 workers: a 9 s start,
// then 10,000 users in one 190 ms call).
import t from 'tap';
import { resolve } from 'node:path';
import { keyBuilders } from '../core/contract.ts';
import { contract } from '../plugins/load-test/contract.ts';
import { ASSIGN_CHUNK } from '../plugins/load-test/run-lifecycle/run-writes.ts';
import { root } from './support/cli.ts';
import { startLoad } from './support/load.ts';
import { until } from './support/until.ts';

const load = await startLoad({ roles: ['orchestrator'], options: { metricsInterval: 0.3, gracefulStop: 1 } });
const controller = load.controller!;
const { backend } = load.handle;
const keys = keyBuilders(contract, '');
const paced = resolve(root, 'test/fixtures/load-test/paced.mjs');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A worker that beats, and acknowledges each command `ackDelayMs` after it saw it. */
function scriptedWorker(workerId: string, ackDelayMs: number) {
  const status = keys.workerStatus({ workerId });
  const commands = keys.workerCommands({ workerId });
  let running = true;
  const seen = new Map<string, number>();
  const loop = (async () => {
    while (running) {
      await backend.send(['HSET', status, 'status', 'idle', 'last_heartbeat', (Date.now() / 1000).toFixed(3), 'requests', 0, 'requests_epoch', await backend.send(['GET', keys.testEpoch()]) ?? 0, 'requests_writer', 'none']);
      await backend.send(['SADD', keys.workers(), workerId]);
      const entries = (await backend.send(['XRANGE', commands, '-', '+'])) as [string, string[]][];
      const now = performance.now();
      for (const [id] of entries) if (!seen.has(id)) seen.set(id, now);
      const due = entries.filter(([id]) => now - seen.get(id)! >= ackDelayMs).at(-1);
      if (due) await backend.send(['SET', keys.workerAck({ workerId }), due[0]]);
      await sleep(50);
    }
  })();
  return {
    /** add_user commands per addUsers call (their command ids are the call's id and a number). */
    async usersPerCall(): Promise<number[]> {
      const entries = (await backend.send(['XRANGE', commands, '-', '+'])) as [string, string[]][];
      const calls = new Map<string, number>();
      for (const [, fields] of entries) {
        const f = Object.fromEntries(fields.flatMap((v, i) => (i % 2 ? [] : [[v, fields[i + 1]]])));
        if (f.type === 'add_user') calls.set(f.command_id!.replace(/-\d+$/, ''), (calls.get(f.command_id!.replace(/-\d+$/, '')) ?? 0) + 1);
      }
      return [...calls.values()];
    },
    async stop() {
      running = false;
      await loop;
      await backend.send(['SREM', keys.workers(), workerId]);
      await backend.send(['DEL', status, commands, keys.workerAck({ workerId })]);
    },
  };
}

t.teardown(() => load.handle.stop('test over'));
const assigned = async () => Number(await backend.send(['SCARD', keys.users()]));

t.test('a start that waits 1.5 s for its worker spawns no user meanwhile: the spawn rate counts from when the test runs', async (t) => {
  const worker = scriptedWorker('slow', 1500);
  t.teardown(() => worker.stop());
  await until('the worker registered', async () => (await backend.send(['SISMEMBER', keys.workers(), 'slow'])) === 1);
  const asked = performance.now();
  await controller.start({ scenario: paced, users: 400, spawnRate: 200, params: { baseUrl: 'http://127.0.0.1:1' } });
  const runningAt = performance.now();
  t.ok(runningAt - asked >= 1400, `the start waited for the acknowledgement (${Math.round(runningAt - asked)} ms)`);
  await sleep(200);
  const early = await assigned();
  t.ok(early <= 1 + 200 * ((performance.now() - runningAt + 150) / 1000), `${early} users 0.2 s after the test ran (at 200/s), not the 1.5 s wait's 300`);
  await until('every user assigned', async () => (await assigned()) === 400, 10_000);
  const tookS = (performance.now() - runningAt) / 1000;
  t.ok(tookS >= 1.6, `400 users at 200/s took ${tookS.toFixed(2)} s from the test's run`);
  await controller.stop('test over');
});

t.test(`1,000 users at once are assigned ${ASSIGN_CHUNK} per addUsers call`, async (t) => {
  const worker = scriptedWorker('fast', 0);
  t.teardown(() => worker.stop());
  await until('the worker registered', async () => (await backend.send(['SISMEMBER', keys.workers(), 'fast'])) === 1);
  await controller.start({ scenario: paced, users: 1000, spawnRate: 1_000_000, params: { baseUrl: 'http://127.0.0.1:1' } });
  await until('every user assigned', async () => (await assigned()) === 1000, 10_000);
  const calls = await worker.usersPerCall();
  // the first step's users are those of its first microseconds; the next step asks for all the rest
  t.ok(calls.every((n) => n <= ASSIGN_CHUNK), `no call assigned more than ${ASSIGN_CHUNK}: ${calls.join(', ')}`);
  t.ok(calls.filter((n) => n === ASSIGN_CHUNK).length >= 4, 'a step of many users is split into calls of that many');
  t.equal(calls.reduce((a, b) => a + b, 0), 1000, 'every user has its add_user command');
  t.equal((await controller.status()).users, 1000, 'the orchestrator counts them all');
  await controller.stop('test over');
});
