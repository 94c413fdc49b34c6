// load-test's Lua scripts on real Redis (LOAD_BACKEND=embedded: on the
// embedded backend, see load-test-scripts-embedded.test.ts): compare-and-set
// lifecycle with the epoch, round-robin assignment with its commands, removal
// of the highest ids, a dead worker's users, the lazy resource pool sync.
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import type { Backend } from '../core/backend.ts';
import { scenarioContext } from '../conformance/scenario-context.ts';
import plugin from '../plugins/load-test/index.ts';
import { decodeEnvelope } from '../plugins/load-test/envelope.ts';
import { startRedis } from './support/redis.ts';
import type { Ctx } from '../plugins/load-test/context.ts';

const embedded = process.env.LOAD_BACKEND === 'embedded';
const redis = embedded ? undefined : await startRedis();
const backend: Backend = await createBackend({ url: redis?.url });
t.teardown(async () => {
  await backend.close();
  await redis?.stop();
});

let run = 0;
const fresh = (): Ctx => scenarioContext({ plugin, backend, keyPrefix: `{lt${++run}}:`, signal: new AbortController().signal }) as Ctx;

const transition = (ctx: Ctx, from: string, to: string, bump = false, expectEpoch: string | number = '') =>
  ctx.scripts.run('transitionState', { keys: { state: {}, epoch: {} }, args: { from, to, bump: bump ? '1' : '0', expectEpoch } });

const add = (ctx: Ctx, epoch: number, count: number, workers: string[], ids: string[] = []) =>
  ctx.scripts.run('addUsers', {
    keys: { users: {}, cursor: {}, state: {}, epoch: {} },
    args: { usersTail: ':users', commandsTail: ':commands', expectEpoch: epoch, now: '1800000000.5', commandId: 'c', cap: 1000, count, ids: JSON.stringify(ids), target: count, workers },
  });

const remove = (ctx: Ctx, epoch: number, count: number) =>
  ctx.scripts.run('removeUsers', {
    keys: { users: {}, state: {}, epoch: {} },
    args: { usersTail: ':users', commandsTail: ':commands', expectEpoch: epoch, now: '1800000001', commandId: 'r', cap: 1000, count, target: 0 },
  });

async function commands(ctx: Ctx, workerId: string) {
  const entries = (await ctx.backend.send(['XRANGE', ctx.keys.workerCommands({ workerId }), '-', '+'])) as [string, string[]][];
  return entries.map(([id, fields]) => decodeEnvelope(id, fields)!);
}

const members = async (ctx: Ctx, key: string) => ((await ctx.backend.send(['SMEMBERS', key])) as string[]).map(Number).sort((a, b) => a - b);

t.test('the lifecycle changes only by compare-and-set; entering PREPARING bumps the epoch', async (t) => {
  const ctx = fresh();
  t.same(await transition(ctx, 'IDLE', 'PREPARING', true), ['ok', '1'], 'a missing state counts as IDLE; epoch 1');
  t.same(await transition(ctx, 'IDLE', 'PREPARING', true), ['err', 'STATE_CONFLICT', 'PREPARING'], 'a second start loses');
  t.same(await transition(ctx, 'PREPARING', 'RUNNING', false, 1), ['ok', '1']);
  t.same(await transition(ctx, 'RUNNING', 'STOPPING', false, 0), ['err', 'EPOCH_CONFLICT', '1'], 'an orchestrator of an older epoch cannot stop the test');
  t.same(await transition(ctx, 'RUNNING', 'STOPPING', false, 1), ['ok', '1']);
  t.same(await transition(ctx, 'STOPPING', 'IDLE'), ['ok', '1']);
  t.same(await transition(ctx, 'IDLE', 'PREPARING', true), ['ok', '2'], 'the next test has epoch 2');
  t.equal(await ctx.backend.send(['GET', ctx.keys.testState()]), 'PREPARING');
});

t.test('users are assigned round-robin over the worker snapshot, each with its add_user command', async (t) => {
  const ctx = fresh();
  await transition(ctx, 'IDLE', 'PREPARING', true);
  t.same(await add(ctx, 1, 0, []), ['err', 'NO_WORKERS', '']);
  const pairs = (await add(ctx, 1, 5, ['a', 'b'])) as string[];
  t.same(pairs, ['1', 'a', '2', 'b', '3', 'a', '4', 'b', '5', 'a']);
  t.same(await members(ctx, ctx.keys.workerUsers({ workerId: 'a' })), [1, 3, 5]);
  t.same(await members(ctx, ctx.keys.workerUsers({ workerId: 'b' })), [2, 4]);
  t.same(await ctx.backend.send(['HGETALL', ctx.keys.user({ userId: 4 })]), ['worker', 'b', 'status', 'assigned', 'updated_at', '1800000000.5']);
  const sent = await commands(ctx, 'a');
  t.same(sent.map((c) => [c.type, c.epoch, c.payload.user_id]), [['add_user', 1, 1], ['add_user', 1, 3], ['add_user', 1, 5]]);
  t.equal(new Set(sent.map((c) => c.command_id)).size, 3, 'each command has its own id');
  t.equal(sent[0]!.sent_at, 1800000000.5);
  t.same(await add(ctx, 1, 3, ['a', 'b']), ['6', 'b', '7', 'a', '8', 'b'], 'the cursor carries on where it was');
  t.same(await add(ctx, 0, 1, ['a']), ['err', 'EPOCH_CONFLICT', '1'], 'a stale epoch assigns nothing');
  t.same(await members(ctx, ctx.keys.users()), [1, 2, 3, 4, 5, 6, 7, 8]);
});

t.test('removal takes the highest ids and tells their workers; ids stay dense for the next users', async (t) => {
  const ctx = fresh();
  await transition(ctx, 'IDLE', 'PREPARING', true);
  await transition(ctx, 'PREPARING', 'RUNNING', false, 1);
  await add(ctx, 1, 12, ['a', 'b']);
  t.same(await remove(ctx, 1, 3), ['12', 'b', '11', 'a', '10', 'b']);
  t.same(await members(ctx, ctx.keys.users()), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  t.equal(await ctx.backend.send(['EXISTS', ctx.keys.user({ userId: 12 })]), 0, 'the user hash is gone');
  const b = await commands(ctx, 'b');
  t.same(b.filter((c) => c.type === 'remove_user').map((c) => c.payload.user_id), [12, 10]);
  t.same(await add(ctx, 1, 1, ['a', 'b']), ['10', 'a'], 'the next user takes id 10');
  await transition(ctx, 'RUNNING', 'STOPPING', false, 1);
  t.same(await remove(ctx, 1, 1), ['err', 'NOT_RUNNING', 'STOPPING'], 'no changes while stopping');
});

t.test("a dead worker is dropped once; its users go back for reassignment with their ids", async (t) => {
  const ctx = fresh();
  await transition(ctx, 'IDLE', 'PREPARING', true);
  await ctx.backend.send(['SADD', ctx.keys.workers(), 'a', 'b']);
  await ctx.backend.send(['HSET', ctx.keys.workerStatus({ workerId: 'b' }), 'status', 'running', 'last_heartbeat', '1']);
  await add(ctx, 1, 4, ['a', 'b']);
  const worker = { workerId: 'b' };
  const drop = () =>
    ctx.scripts.run('dropWorker', { keys: { workers: {}, status: worker, users: worker, active: worker, commands: worker, ack: worker }, args: { workerId: 'b', now: '2', keepSeconds: 100 } });
  const orphans = ((await drop()) as string[]).map(Number).sort();
  t.same(orphans, [2, 4]);
  t.same(await drop(), [], 'a second drop is a no-op');
  t.same(await ctx.backend.send(['SMEMBERS', ctx.keys.workers()]), ['a']);
  t.equal(await ctx.backend.send(['HGET', ctx.keys.workerStatus({ workerId: 'b' }), 'status']), 'dead');
  t.ok((await ctx.backend.send(['TTL', ctx.keys.workerStatus({ workerId: 'b' })])) as number > 0, 'the dead record expires');
  t.equal(await ctx.backend.send(['EXISTS', ctx.keys.workerUsers({ workerId: 'b' })]), 0);
  t.equal(await ctx.backend.send(['HGET', ctx.keys.user({ userId: 2 }), 'status']), 'reassigned');
  t.same(await add(ctx, 1, 0, ['a'], orphans.map(String)), ['2', 'a', '4', 'a']);
  t.same(await members(ctx, ctx.keys.workerUsers({ workerId: 'a' })), [1, 2, 3, 4]);
  t.same(await members(ctx, ctx.keys.users()), [1, 2, 3, 4], 'no user was lost or duplicated');
});

t.test('users are marked running only by the worker they are assigned to, many in one call', async (t) => {
  const ctx = fresh();
  await transition(ctx, 'IDLE', 'PREPARING', true);
  await add(ctx, 1, 3, ['a', 'b']); // 1 → a, 2 → b, 3 → a
  const mark = (workerId: string, userIds: number[]) =>
    ctx.scripts.run('markRunning', { keys: { active: { workerId }, users: userIds.map((userId) => ({ userId })) }, args: { workerId, now: '5', userIds } });
  t.equal(await mark('b', [1]), 0, 'another worker cannot claim a user');
  t.equal(await mark('a', [1, 2, 3]), 2, "a's users only");
  t.same(await members(ctx, ctx.keys.workerActiveUsers({ workerId: 'a' })), [1, 3]);
  t.equal(await ctx.backend.send(['HGET', ctx.keys.user({ userId: 1 }), 'status']), 'running');
  t.equal(await ctx.backend.send(['HGET', ctx.keys.user({ userId: 1 }), 'updated_at']), '5');
  t.equal(await ctx.backend.send(['HGET', ctx.keys.user({ userId: 2 }), 'status']), 'assigned', "b's user untouched");
  await remove(ctx, 1, 1); // the highest: 3
  t.equal(await mark('a', [3]), 0, 'a removed user is not brought back');
  t.equal(await ctx.backend.send(['EXISTS', ctx.keys.user({ userId: 3 })]), 0);
  t.equal(await mark('a', []), 0, 'no users: nothing to do');
});

t.test('2500 users added and marked running in one call each (more than one SADD of them)', async (t) => {
  const ctx = fresh();
  await transition(ctx, 'IDLE', 'PREPARING', true);
  await add(ctx, 1, 2500, ['a']);
  t.equal(await ctx.backend.send(['SCARD', ctx.keys.users()]), 2500, 'addUsers added them all (in slices of 1000)');
  t.equal(await ctx.backend.send(['SCARD', ctx.keys.workerUsers({ workerId: 'a' })]), 2500);
  const userIds = Array.from({ length: 2500 }, (_, i) => i + 1);
  const reply = await ctx.scripts.run('markRunning', { keys: { active: { workerId: 'a' }, users: userIds.map((userId) => ({ userId })) }, args: { workerId: 'a', now: '5', userIds } });
  t.equal(reply, 2500);
  t.equal(await ctx.backend.send(['SCARD', ctx.keys.workerActiveUsers({ workerId: 'a' })]), 2500);
});

t.test('the resource pool is synced lazily, once, however many workers ask', async (t) => {
  const ctx = fresh();
  await ctx.backend.send(['HSET', ctx.keys.resources(), 'accounts', 2500]);
  const sync = () => ctx.scripts.run('syncPool', { keys: { resources: {}, available: { name: 'accounts' }, loaded: { name: 'accounts' } }, args: { name: 'accounts' } });
  t.same(await Promise.all([sync(), sync(), sync()]), [[2500, 0], [2500, 2500], [2500, 2500]]);
  t.equal(await ctx.backend.send(['SCARD', ctx.keys.resourceAvailable({ name: 'accounts' })]), 2500);
  t.equal(await ctx.backend.send(['GET', ctx.keys.resourceLoaded({ name: 'accounts' })]), '2500');
  await ctx.backend.send(['SPOP', ctx.keys.resourceAvailable({ name: 'accounts' })]);
  await ctx.backend.send(['HSET', ctx.keys.resources(), 'accounts', 2600]);
  t.same(await sync(), [2600, 2500], 'only the new ids are added; a held one is not put back');
  t.equal(await ctx.backend.send(['SCARD', ctx.keys.resourceAvailable({ name: 'accounts' })]), 2599);
});

t.test('broadcast sends one command to each worker only in the current epoch', async (t) => {
  const ctx = fresh();
  await transition(ctx, 'IDLE', 'PREPARING', true);
  const send = (epoch: number) =>
    ctx.scripts.run('broadcast', {
      keys: { epoch: {}, commands: [{ workerId: 'a' }, { workerId: 'b' }] },
      args: { expectEpoch: epoch, type: 'stop_test', payload: '{"reason":"x"}', commandId: 's', now: '9', cap: 1000, workers: ['a', 'b'] },
    });
  const reply = (await send(1)) as string[];
  t.same([reply[0], reply[2]], ['a', 'b']);
  t.match(reply[1], /^\d+-\d+$/, 'returns the entry ids to wait for');
  t.same(await send(0), ['err', 'EPOCH_CONFLICT', '1']);
  const [cmd] = await commands(ctx, 'b');
  t.same({ type: cmd!.type, epoch: cmd!.epoch, payload: cmd!.payload }, { type: 'stop_test', epoch: 1, payload: { reason: 'x' } });
});
