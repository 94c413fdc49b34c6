// What every section of the adapter suite shares: the run's key namespace,
// a fresh backend per subtest, and small helpers for timing and errors.
import { AssertionError } from 'node:assert';
import { createHash, randomUUID } from 'node:crypto';
import type { SuiteTest } from '../suite-test.ts';
import { ReplyError, type Backend, type BackendCapabilities, type ScriptSource } from '../../core/backend.ts';

export interface SuiteContext {
  /** The adapter's name as given to adapterSuite (for subtest names). */
  readonly name: string;
  readonly capabilities: BackendCapabilities;
  /** The run's hash tag, e.g. '{suite-1a2b3c4d}:' — every key and channel starts with it. */
  readonly tag: string;
  /** A key of this run: key('lists', 'a') → '{suite-…}:lists:a'. */
  key(section: string, ...parts: string[]): string;
  /** Runs `body` on a fresh backend, then deletes the section's keys and closes it. */
  use(section: string, body: (backend: Backend) => Promise<void>): Promise<void>;
}

export function suiteContext(name: string, make: () => Backend | Promise<Backend>, capabilities: BackendCapabilities): SuiteContext {
  // The hash tag puts every key of the run in one cluster slot, so multi-key
  // commands, MULTI and scripts work on a Redis Cluster too.
  const tag = `{suite-${randomUUID().slice(0, 8)}}:`;
  const key = (section: string, ...parts: string[]) => [tag + section, ...parts].join(':');
  return {
    name,
    capabilities,
    tag,
    key,
    async use(section, body) {
      const backend = await make();
      try {
        await backend.ready();
        await body(backend);
      } finally {
        await removeKeys(backend, key(section) + ':*').catch(() => undefined);
        await backend.close();
      }
    },
  };
}

async function removeKeys(backend: Backend, pattern: string): Promise<void> {
  const keys: string[] = [];
  for await (const k of backend.scan(pattern)) keys.push(k);
  for (let i = 0; i < keys.length; i += 100) await backend.send(['DEL', ...keys.slice(i, i + 100)]);
}

/** A script source as the registry would hand it over; the run's tag makes its SHA new to the server. */
export function script(ctx: SuiteContext, name: string, body: string): ScriptSource {
  const lua = `-- conformance ${ctx.tag} ${name}\n${body}`;
  return { name: `conformance/${name}`, lua, sha: createHash('sha1').update(lua).digest('hex') };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Resolves to check()'s first truthy value, polling every `everyMs`; rejects naming `what` after timeoutMs (test/support/until.ts's signature). */
export async function until<T>(what: string, check: () => T | Promise<T>, timeoutMs: number, everyMs = 5): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    // A check of the suite that did not hold: a failed assertion, as the suite's other checks fail.
    if (Date.now() > deadline) {
      // One more look after the event loop has read its sockets: a process stalled past the deadline
      // wakes in the timers phase, before the reply that arrived meanwhile is read.
      await new Promise((r) => setImmediate(r));
      const last = await check();
      if (last) return last as NonNullable<T>;
      throw new AssertionError({ message: `${what}: not within ${timeoutMs} ms` });
    }
    await sleep(everyMs);
  }
}

/** The promise's outcome and when it settled (performance.now()). */
export async function settled<T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown; at: number }> {
  try {
    const value = await promise;
    return { value, at: performance.now() };
  } catch (error) {
    return { error, at: performance.now() };
  }
}

/** Asserts that `promise` rejects with a ReplyError whose code is `code`. */
export async function rejectsWithCode(t: SuiteTest, promise: Promise<unknown>, code: string, what: string): Promise<void> {
  const outcome = await settled(promise);
  if (!('error' in outcome) || outcome.error === undefined) {
    t.fail(`${what}: expected a ${code} error reply, got ${JSON.stringify(outcome.value)}`);
    return;
  }
  const error = outcome.error;
  t.ok(error instanceof ReplyError, `${what}: rejects with ReplyError (got ${describe(error)})`);
  t.equal((error as ReplyError).code, code, `${what}: code ${code}`);
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** Splits a flat [field, value, field, value…] reply into sorted pairs. */
export function pairs(reply: unknown): [unknown, unknown][] {
  if (!Array.isArray(reply)) return [];
  const out: [unknown, unknown][] = [];
  for (let i = 0; i < reply.length; i += 2) out.push([reply[i], reply[i + 1]]);
  return out.sort((a, b) => String(a[0]).localeCompare(String(b[0])));
}

/** A copy of a reply array, sorted (for set-like replies whose order Redis does not promise). */
export function sorted(reply: unknown): unknown[] {
  return Array.isArray(reply) ? [...reply].sort() : [];
}
