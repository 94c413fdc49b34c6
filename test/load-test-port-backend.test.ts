// The backend a worker thread's users get (port-backend.ts): each call crosses
// a message port to the main thread, runs on its backend (here the embedded
// one, which threads cannot reach otherwise) and comes back the same — replies,
// error replies (thrown as ReplyError, or in place in a pipeline), scripts,
// MULTI; blocking calls, pub/sub and SCAN are refused in one line.
import t from 'tap';
import { MessageChannel } from 'node:worker_threads';
import { createHash } from 'node:crypto';
import { createEmbeddedBackend } from '../adapters/embedded.ts';
import { ReplyError } from '../core/backend.ts';
import { answerCall, portBackend, type CallMessage, type ReplyMessage } from '../plugins/load-test/users/port-backend.ts';

const main = createEmbeddedBackend({ url: 'embedded://port-backend-test' });
const { port1, port2 } = new MessageChannel();
const thread = portBackend(port1, main.displayUrl);
port2.on('message', (msg: CallMessage) => void answerCall(main, port2, msg));
port1.on('message', (msg: ReplyMessage) => thread.answer(msg));
t.teardown(async () => {
  port1.close();
  await main.close();
});

t.test('commands, MULTI and scripts run on the main thread’s backend', async (t) => {
  t.equal(await thread.send(['SET', 'k', 'v']), 'OK');
  t.equal(await main.send(['GET', 'k']), 'v', 'the main thread’s backend has it');
  t.same(await thread.multi([['INCR', 'n'], ['INCRBY', 'n', 2]]), [1, 3]);
  const lua = "return redis.call('GET', KEYS[1]) .. ARGV[1]";
  const script = { name: 'test/concat', lua, sha: createHash('sha1').update(lua).digest('hex') };
  t.equal(await thread.evalScript(script, ['k'], ['!']), 'v!');
});

t.test('error replies come back as ReplyError, in place in a pipeline', async (t) => {
  await t.rejects(thread.send(['INCR', 'k']), ReplyError);
  const replies = await thread.pipeline([['GET', 'k'], ['INCR', 'k'], ['GET', 'n']]);
  t.equal(replies[0], 'v');
  t.ok(replies[1] instanceof ReplyError, 'the failed command’s reply is a ReplyError');
  t.match((replies[1] as ReplyError).message, /not an integer/);
  t.equal(replies[2], '3');
});

t.test('blocking calls, pub/sub and SCAN stay with the main thread', async (t) => {
  await t.rejects(thread.blocking(), /a blocking connection is not available to a worker thread's users/);
  await t.rejects(thread.subscriber(), /pub\/sub is not available/);
  await t.rejects(thread.scan('*')[Symbol.asyncIterator]().next(), /SCAN is not available/);
});
