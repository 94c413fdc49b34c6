// The shared adapter conformance suite. An adapter author runs it with one call:
//
//   import t from 'tap';
//   import { adapterSuite } from 'coordkit/conformance';
//   await adapterSuite(t, { name: 'my-adapter', make: () => createMyBackend({ url }) });
//
// Every subtest makes its own backend and closes it. Every key and channel starts
// with a hash tag unique to the run ('{suite-…}:'), so the suite also runs on a
// Redis Cluster next to other data. Tests are skipped only from the adapter's
// declared capabilities. Real Redis 7 is the reference: every expectation holds there.
import type { SuiteTest } from './suite-test.ts';
import type { Backend } from '../core/backend.ts';
import { blockingTests } from './adapter-suite/blocking.ts';
import { dataTypeTests } from './adapter-suite/datatypes.ts';
import { expiryTests } from './adapter-suite/expiry.ts';
import { lifecycleTests } from './adapter-suite/lifecycle.ts';
import { pubsubTests } from './adapter-suite/pubsub.ts';
import { replyTests } from './adapter-suite/replies.ts';
import { scanTests } from './adapter-suite/scan.ts';
import { scriptTests } from './adapter-suite/scripts.ts';
import { streamTests } from './adapter-suite/streams.ts';
import { suiteContext } from './adapter-suite/support.ts';
import { transactionTests } from './adapter-suite/transactions.ts';

/** What adapterSuite runs against: a name for the subtest titles and a factory of fresh backends. */
export interface AdapterSuiteOptions {
  /** Shown in the subtest names. */
  name: string;
  /** Makes a new backend; called once per subtest. */
  make: () => Backend | Promise<Backend>;
}

/**
 * Holds a backend to coord's semantics (Redis 7 is the reference). Takes tap's
 * `t`, or any SuiteTest; `coord conformance --adapter NAME` runs it too.
 *
 * @example
 * import t from 'tap';
 * await adapterSuite(t, { name: 'mine', make: () => createMyBackend({ url }) });
 */
export async function adapterSuite(t: SuiteTest, opts: AdapterSuiteOptions): Promise<void> {
  const probe = await opts.make();
  const capabilities = probe.capabilities;
  await probe.close();
  const ctx = suiteContext(opts.name, opts.make, capabilities);
  const sections = [
    ['replies', replyTests],
    ['expiry', expiryTests],
    ['pub/sub', pubsubTests],
    ['scripts', scriptTests],
    ['blocking', blockingTests],
    ['streams', streamTests],
    ['transactions', transactionTests],
    ['scan', scanTests],
    ['data types', dataTypeTests],
  ] as const;
  // A hung call fails its section with a clear timeout instead of stalling the whole file.
  const limit = { timeout: 120_000 };
  for (const [section, run] of sections) await t.test(`${opts.name}: ${section}`, limit, (t) => run(t, ctx));
  await t.test(`${opts.name}: lifecycle`, limit, (t) => lifecycleTests(t, ctx, opts.make));
}
