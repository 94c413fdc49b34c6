// The backend of a worker thread's users (user-thread.ts): each call is a
// message to the thread that started them, which runs it on its own backend
// (embedded or Redis) and answers. So the users of every thread reach the
// embedded backend that lives in the main thread, and a thread opens no
// connection of its own. What the users' side needs — single commands,
// scripts, MULTI and pipelines (metric batches, markRunning, resources,
// probes) — goes over; blocking calls, SCAN and pub/sub stay with the worker
// role in the main thread and are refused here.
import type { MessagePort } from 'node:worker_threads';
import { type Arg, type Backend, type Command, type Reply, ReplyError } from '../../../entries/plugin.ts';

/** A backend call, as the thread sends it. */
export type BackendCall =
  | { op: 'send'; command: Command }
  | { op: 'multi'; commands: readonly Command[] }
  | { op: 'pipeline'; commands: readonly Command[] }
  | { op: 'eval'; script: Parameters<Backend['evalScript']>[0]; keys: readonly string[]; args: readonly Arg[] };

/** A pipeline's ReplyError as it crosses the port (an Error's class does not survive structured cloning). */
interface ErrorReply {
  replyError: string;
}

export interface CallMessage {
  type: 'call';
  seq: number;
  call: BackendCall;
}

export interface ReplyMessage {
  type: 'reply';
  seq: number;
  value?: Reply | (Reply | ErrorReply)[];
  /** The call failed: a Redis error reply (replyError), or another error's message. */
  error?: { message: string; replyError: boolean };
}

/** The main thread's side: runs a thread's call on `backend` and answers on `port`. */
export async function answerCall(backend: Backend, port: Pick<MessagePort, 'postMessage'>, { seq, call }: CallMessage): Promise<void> {
  let reply: ReplyMessage;
  try {
    reply = { type: 'reply', seq, value: await run(backend, call) };
  } catch (err) {
    reply = { type: 'reply', seq, error: { message: (err as Error).message, replyError: err instanceof ReplyError } };
  }
  port.postMessage(reply);
}

async function run(backend: Backend, call: BackendCall): Promise<ReplyMessage['value']> {
  switch (call.op) {
    case 'send':
      return backend.send(call.command);
    case 'multi':
      return backend.multi(call.commands);
    case 'pipeline':
      return (await backend.pipeline(call.commands)).map((r) => (r instanceof ReplyError ? { replyError: r.message } : r));
    case 'eval':
      return backend.evalScript(call.script, call.keys, call.args);
  }
}

/** The thread's side: a Backend whose calls go to the main thread over `port`. */
export function portBackend(port: Pick<MessagePort, 'postMessage'>, displayUrl: string): Backend & { answer(reply: ReplyMessage): void } {
  let next = 0;
  const waiting = new Map<number, { resolve(value: ReplyMessage['value']): void; reject(err: Error): void }>();
  const call = (c: BackendCall) =>
    new Promise<ReplyMessage['value']>((resolve, reject) => {
      const seq = ++next;
      waiting.set(seq, { resolve, reject });
      port.postMessage({ type: 'call', seq, call: c } satisfies CallMessage);
    });
  const refuse = (what: string) => () => Promise.reject(new Error(`${what} is not available to a worker thread's users`));
  return {
    name: 'thread',
    capabilities: { cluster: false, streamGroups: true, expiry: true, reconnect: false },
    displayUrl,
    ready: () => Promise.resolve(),
    send: (command) => call({ op: 'send', command }) as Promise<Reply>,
    multi: (commands) => call({ op: 'multi', commands }) as Promise<Reply[]>,
    pipeline: async (commands) => ((await call({ op: 'pipeline', commands })) as (Reply | ErrorReply)[]).map((r) => (isErrorReply(r) ? new ReplyError(r.replyError) : r)),
    evalScript: (script, keys, args) => call({ op: 'eval', script: { name: script.name, lua: script.lua, sha: script.sha }, keys, args }) as Promise<Reply>,
    scan: () => ({
      [Symbol.asyncIterator]: () => ({ next: refuse('SCAN') }),
    }),
    subscriber: refuse('pub/sub'),
    blocking: refuse('a blocking connection'),
    onState: () => () => {},
    close: () => Promise.resolve(),
    answer(reply) {
      const w = waiting.get(reply.seq);
      if (!w) return;
      waiting.delete(reply.seq);
      if (!reply.error) w.resolve(reply.value);
      else w.reject(reply.error.replyError ? new ReplyError(reply.error.message) : new Error(reply.error.message));
    },
  };
}

function isErrorReply(r: unknown): r is ErrorReply {
  return typeof r === 'object' && r !== null && !Array.isArray(r) && 'replyError' in r;
}
