// A process that stops while its Redis is unreachable gives up on it after a
// short grace (STOP_REDIS_GRACE_MS): the backend the runtime opened is closed,
// its held calls fail with ConnectionError, and the roles' stops go on, where
// before each one waited out roleStopTimeout. With Redis reachable, or back
// within the grace, or on a backend the caller keeps, nothing changes: a
// stop's slow Redis call is waited for. A fake backend says when Redis is
// lost; real Redis is test/stop-without-redis.test.ts.
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import { ConnectionError, type Backend, type BackendState, type Reply } from '../core/backend.ts';
import { loadConfig } from '../core/config.ts';
import { memoryLogger } from '../core/logger.ts';
import type { Plugin, Role, RoleContext } from '../core/plugin.ts';
import { startRoles } from '../core/runtime.ts';
import { STOP_REDIS_GRACE_MS } from '../core/stop-without-redis.ts';

/** An embedded backend whose state the test sets, and whose SETs are answered after `answerMs` (if ever) or fail when it closes. */
async function fakeBackend(name: string, answerMs: number): Promise<Backend & { say(state: BackendState, detail?: string): void; closedAt?: number }> {
  const inner = await createBackend({ url: `embedded://${name}` });
  const listeners = new Set<(state: BackendState, detail?: string) => void>();
  const closing = new AbortController();
  const fake = Object.assign(Object.create(inner) as Backend, {
    closedAt: undefined as number | undefined,
    say: (state: BackendState, detail?: string) => listeners.forEach((l) => l(state, detail)),
    onState(listener: (state: BackendState, detail?: string) => void) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    send: () =>
      new Promise<Reply>((resolve, reject) => {
        if (answerMs < Infinity) setTimeout(() => resolve('OK'), answerMs);
        closing.signal.addEventListener('abort', () => reject(new ConnectionError('the backend is closed', { code: 'COORD_ERR_BACKEND_CLOSED' })));
      }),
    async close() {
      fake.closedAt ??= Date.now();
      closing.abort();
      await inner.close();
    },
  });
  return fake;
}

/** Plugin `saver`: its one role writes once more when it stops, and records what that got. */
function saver(outcomes: string[]): Plugin {
  return {
    name: 'saver',
    version: '1.0.0',
    coord: '^0.1.0',
    description: 'writes to Redis when it stops',
    contract: { plugin: 'saver', keys: {} },
    config: { schema: { type: 'object', properties: {} } },
    roles: {
      saves: (ctx: RoleContext): Role => ({
        async start() {},
        async stop() {
          await ctx.backend.send(['SET', 'last', 'word']).then(
            (reply) => outcomes.push(String(reply)),
            (error: Error & { code?: string }) => outcomes.push(`${error.name} ${error.code}`),
          );
        },
      }),
    },
  } as Plugin;
}

const config = (plugin: Plugin) => loadConfig({ plugins: [plugin], env: {}, flags: [{ path: 'roleStopTimeout', value: '20' }] });
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

t.test('Redis unreachable when the stop begins: the backend is closed after the grace, the stop goes on', async (t) => {
  const outcomes: string[] = [];
  const plugin = saver(outcomes);
  const logger = memoryLogger();
  const backend = await fakeBackend('lost', Infinity);
  const handle = await startRoles({ plugins: [plugin], config: config(plugin), logger, backend: async () => backend });
  backend.say('reconnecting', 'connect ECONNREFUSED 127.0.0.1:6379');
  const at = Date.now();
  await handle.stop('test over');
  const took = Date.now() - at;
  t.ok(took >= STOP_REDIS_GRACE_MS - 50 && took < STOP_REDIS_GRACE_MS + 2000, `stopped after the grace, not roleStopTimeout (${seconds(took)})`);
  t.same(outcomes, ['ConnectionError COORD_ERR_BACKEND_CLOSED'], "the stop's held call failed with ConnectionError");
  const warned = logger.lines.filter((l) => l.fields.code === 'COORD_ERR_STOP_REDIS_UNREACHABLE');
  t.equal(warned.length, 1, 'one line says so');
  t.equal(warned[0]?.level, 'warn');
  t.match(warned[0]?.msg, /^Redis at embedded:\/\/lost unreachable while stopping \(connect ECONNREFUSED 127\.0\.0\.1:6379\) and not back within 3 s: closing the backend/);
  t.notOk(logger.lines.some((l) => l.level === 'error'), 'no error: the role stopped');
});

t.test('Redis lost during the stop: the grace counts from then', async (t) => {
  const outcomes: string[] = [];
  const plugin = saver(outcomes);
  const backend = await fakeBackend('lost-later', Infinity);
  const handle = await startRoles({ plugins: [plugin], config: config(plugin), logger: memoryLogger(), backend: async () => backend });
  const at = Date.now();
  const stopped = handle.stop('test over');
  setTimeout(() => backend.say('reconnecting'), 1000);
  await stopped;
  const closed = backend.closedAt! - at;
  t.ok(closed >= 1000 + STOP_REDIS_GRACE_MS - 50 && closed < 1000 + STOP_REDIS_GRACE_MS + 2000, `closed a grace after the loss (${seconds(closed)})`);
  t.same(outcomes, ['ConnectionError COORD_ERR_BACKEND_CLOSED']);
});

t.test('Redis reachable, back within the grace, or a backend the caller keeps: a slow stop is waited for', async (t) => {
  const answerMs = STOP_REDIS_GRACE_MS + 1000;
  for (const how of ['reachable', 'back', 'caller'] as const) {
    const outcomes: string[] = [];
    const plugin = saver(outcomes);
    const logger = memoryLogger();
    const backend = await fakeBackend(`slow-${how}`, answerMs);
    const handle = await startRoles({ plugins: [plugin], config: config(plugin), logger, backend: how === 'caller' ? backend : async () => backend });
    if (how !== 'reachable') backend.say('reconnecting');
    if (how === 'back') setTimeout(() => backend.say('ready'), 1000);
    const at = Date.now();
    await handle.stop('test over');
    t.ok(Date.now() - at >= answerMs - 50, `${how}: the stop waited for its call (${seconds(Date.now() - at)})`);
    t.same(outcomes, ['OK'], `${how}: and got its answer`);
    t.notOk(logger.lines.some((l) => l.fields.code === 'COORD_ERR_STOP_REDIS_UNREACHABLE'), `${how}: Redis not given up`);
    if (how === 'caller') {
      t.equal(backend.closedAt, undefined, "caller: the caller's backend is left open");
      await backend.close();
    }
  }
});
