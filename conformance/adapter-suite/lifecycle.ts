// Opening and closing: ready(), the descriptive fields, close() idempotent and final.
import type { SuiteTest } from '../suite-test.ts';
import type { Backend, BackendState } from '../../core/backend.ts';
import { settled, sleep, type SuiteContext } from './support.ts';

export async function lifecycleTests(t: SuiteTest, ctx: SuiteContext, make: () => Backend | Promise<Backend>): Promise<void> {
  await t.test('ready(), name and displayUrl', async (t) => {
    const b = await make();
    await b.ready();
    t.type(b.name, 'string');
    t.ok(b.name.length > 0, 'the adapter has a name');
    t.type(b.displayUrl, 'string');
    const auth = /^[a-z+]+:\/\/([^@/]*)@/i.exec(b.displayUrl)?.[1];
    t.ok(auth === undefined || !auth.includes(':') || auth.endsWith(':***'), `displayUrl masks any password (${b.displayUrl})`);
    t.equal(await b.send(['PING']), 'PONG', 'ready means it answers');
    await b.close();
  });

  await t.test('close() is idempotent, reports closed once, and ends pending blocking calls', async (t) => {
    const b = await make();
    await b.ready();
    const states: BackendState[] = [];
    b.onState((state) => states.push(state));
    const conn = await b.blocking();
    const sub = await b.subscriber();
    await sub.subscribe(ctx.key('close', 'c'));
    const pending = settled(conn.send(['BLPOP', ctx.key('close', 'list'), 10]));
    await sleep(50);
    const start = performance.now();
    await b.close();
    await b.close();
    const outcome = await Promise.race([pending, sleep(2000).then(() => undefined)]);
    if (!outcome) t.fail('the waiting BLPOP was still pending 2 s after close()');
    else {
      t.ok(outcome.at - start < 1000, `the waiting BLPOP settled when the backend closed (${Math.round(outcome.at - start)} ms)`);
      t.ok(outcome.error !== undefined || outcome.value === null, 'it rejected or returned null, never a value');
    }
    t.same(states.filter((s) => s === 'closed'), ['closed'], "onState heard 'closed' once");
    await t.resolves(sub.close(), 'closing a subscriber after its backend is fine');
    await t.resolves(conn.close(), 'closing a blocking connection after its backend is fine');
  });

  // A process that stops with Redis gone closes its backend early so its roles' stops go on: a call after that must fail, not wait.
  await t.test('after close(), every call rejects at once with ConnectionError', async (t) => {
    const b = await make();
    await b.ready();
    await b.close();
    const calls: [string, () => Promise<unknown>][] = [
      ['send', () => b.send(['PING'])],
      ['multi', () => b.multi([['PING']])],
      ['pipeline', () => b.pipeline([['PING']])],
      ['subscriber', () => b.subscriber().then((sub) => sub.subscribe(ctx.key('closed', 'c')))],
      ['blocking', () => b.blocking().then((conn) => conn.send(['BLPOP', ctx.key('closed', 'list'), 1]))],
    ];
    for (const [what, call] of calls) {
      const outcome = await Promise.race([settled(Promise.resolve().then(call)), sleep(1000).then(() => undefined)]);
      if (!outcome) t.fail(`${what}: still pending 1 s after the backend closed`);
      else t.equal((outcome.error as Error | undefined)?.name, 'ConnectionError', `${what}: ConnectionError (${(outcome.error as Error | undefined)?.message ?? 'resolved'})`);
    }
  });
}
