// Pub/sub on dedicated connections: channel and pattern deliveries, unsubscribing.
// "Not delivered" is proven by ordering: one publisher's messages arrive in the order
// sent, so once a later marker arrived, an earlier message that did not never will.
import type { SuiteTest } from '../suite-test.ts';
import type { PubSubMessage } from '../../core/backend.ts';
import { sleep, until, type SuiteContext } from './support.ts';

// How long a delivery may take before the case fails: a wait, not a latency bound (each wait ends as the message
// arrives), long enough for a loaded machine, where a message through Sentinel's set-up once took over 2 s.
const WAIT = 10_000;

/** The message as a plain object, without a pattern key when it has none. */
const plain = ({ channel, message, pattern }: PubSubMessage) => (pattern === undefined ? { channel, message } : { channel, message, pattern });

export async function pubsubTests(t: SuiteTest, ctx: SuiteContext): Promise<void> {
  await t.test('SUBSCRIBE delivers messages in order; the shared connection keeps serving commands', (t) =>
    ctx.use('pubsub', async (b) => {
      const channel = ctx.key('pubsub', 'news');
      const sub = await b.subscriber();
      const got: PubSubMessage[] = [];
      sub.onMessage((m) => got.push(m));
      await sub.subscribe(channel);

      const k = ctx.key('pubsub', 'k');
      t.equal(await b.send(['PING']), 'PONG', 'PING on the shared connection while a subscriber exists');
      t.equal(await b.send(['SET', k, 'v']), 'OK');
      t.equal(await b.send(['GET', k]), 'v', 'commands still work on the shared connection');

      const receivers = await b.send(['PUBLISH', channel, 'one']);
      t.type(receivers, 'number', 'PUBLISH → number of receivers');
      // On a cluster PUBLISH counts only the receivers on the node it reached.
      if (!ctx.capabilities.cluster) t.equal(receivers, 1, 'one subscriber received it');
      await b.send(['PUBLISH', channel, 'two']);
      await b.send(['PUBLISH', channel, 'three']);
      await until('three messages', () => got.length >= 3, WAIT);
      t.same(
        got.map(plain),
        ['one', 'two', 'three'].map((message) => ({ channel, message })),
        'each message once, in order, with its channel and no pattern',
      );
      t.equal(got[0]!.pattern, undefined, 'pattern is not set for a SUBSCRIBE delivery');
      await sub.close();
    }),
  );

  await t.test('PSUBSCRIBE delivers matching channels with the pattern set', (t) =>
    ctx.use('psub', async (b) => {
      const pattern = ctx.key('psub', 'room', '*');
      const sub = await b.subscriber();
      const got: PubSubMessage[] = [];
      sub.onMessage((m) => got.push(m));
      await sub.psubscribe(pattern);
      await b.send(['PUBLISH', ctx.key('psub', 'other'), 'not matching']);
      await b.send(['PUBLISH', ctx.key('psub', 'room', 'a'), 'hello a']);
      await b.send(['PUBLISH', ctx.key('psub', 'room', 'b'), 'hello b']);
      await until('two pattern messages', () => got.length >= 2, WAIT);
      t.same(
        got.map(plain),
        [
          { channel: ctx.key('psub', 'room', 'a'), message: 'hello a', pattern },
          { channel: ctx.key('psub', 'room', 'b'), message: 'hello b', pattern },
        ],
        'matching channels only, each with its channel and the pattern',
      );
      await sub.close();
    }),
  );

  await t.test('UNSUBSCRIBE and PUNSUBSCRIBE stop delivery; other subscriptions go on', (t) =>
    ctx.use('unsub', async (b) => {
      const stay = ctx.key('unsub', 'stay');
      const leave = ctx.key('unsub', 'leave');
      const pattern = ctx.key('unsub', 'p', '*');
      const sub = await b.subscriber();
      const got: PubSubMessage[] = [];
      sub.onMessage((m) => got.push(m));
      await sub.subscribe(stay, leave);
      await sub.psubscribe(pattern);
      await b.send(['PUBLISH', leave, 'before']);
      await b.send(['PUBLISH', ctx.key('unsub', 'p', '1'), 'before']);
      await until('messages before unsubscribing', () => got.length >= 2, WAIT);

      await sub.unsubscribe(leave);
      await sub.punsubscribe(pattern);
      got.length = 0;
      await b.send(['PUBLISH', leave, 'after']);
      await b.send(['PUBLISH', ctx.key('unsub', 'p', '1'), 'after']);
      await b.send(['PUBLISH', stay, 'marker']);
      await until('the marker on the channel still subscribed', () => got.find((m) => m.message === 'marker'), WAIT);
      await sleep(50);
      t.same(got.map(plain), [{ channel: stay, message: 'marker' }], 'nothing arrives from the channel and pattern left');
      await sub.close();
    }),
  );

  await t.test('onMessage returns a remover; every subscriber connection gets its own copy', (t) =>
    ctx.use('handlers', async (b) => {
      const channel = ctx.key('handlers', 'c');
      const first = await b.subscriber();
      const second = await b.subscriber();
      const kept: string[] = [];
      const removed: string[] = [];
      const other: string[] = [];
      first.onMessage((m) => kept.push(m.message));
      const remove = first.onMessage((m) => removed.push(m.message));
      second.onMessage((m) => other.push(m.message));
      await first.subscribe(channel);
      await second.subscribe(channel);
      await b.send(['PUBLISH', channel, 'a']);
      await until('both subscribers', () => kept.length === 1 && other.length === 1, WAIT);
      remove();
      await b.send(['PUBLISH', channel, 'b']);
      await until('the second message', () => kept.length === 2 && other.length === 2, WAIT);
      t.same(kept, ['a', 'b'], 'the kept handler got both');
      t.same(other, ['a', 'b'], 'the other subscriber got both');
      t.same(removed, ['a'], 'the removed handler got only the message before its removal');
      await first.close();
      await second.close();
    }),
  );
}
