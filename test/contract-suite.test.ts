// The contract conformance suite on the drift fixture plugin: a conforming
// scenario passes (in this process), and scenarios that drift — a field of the
// wrong type, a forgotten TTL, an undeclared key, a key expected but never
// written — make it fail (run in a child tap process whose exit code and
// output are checked). On real Redis, Redis Cluster and the embedded backend.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import type { Backend } from '../core/backend.ts';
import { contractSuite } from '../conformance/contract-suite.ts';
import { scenarioContext } from '../conformance/scenario-context.ts';
import { snapshotKeyspace } from '../core/snapshot.ts';
import { driftPlugin } from './fixtures/plugins/drift/index.ts';
import { startCluster, startRedis } from './support/redis.ts';

const redis = await startRedis();
t.teardown(() => redis.stop());
const cluster = await startCluster();
t.teardown(() => cluster.stop());

const targets: { name: string; adapter: string; url?: string }[] = [
  { name: 'ioredis', adapter: 'ioredis', url: redis.url },
  { name: 'ioredis-cluster', adapter: 'ioredis', url: cluster.url },
  { name: 'embedded', adapter: 'embedded' },
];

const suiteFile = fileURLToPath(new URL('./fixtures/plugins/drift/suite.ts', import.meta.url));

/** Runs the fixture suite in a child tap process; resolves with its exit code and TAP output. */
function runChild(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  // Keep the TypeScript loader this process runs under, not tap's coverage/processinfo hooks.
  const loader = process.execArgv.filter((a) => a.includes('@tapjs/typescript') || a === '--enable-source-maps');
  // Drop the runner's TAP_* / processinfo settings: the child runs standalone, as `node suite.ts` would.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TAP|_TAPJS)|^NODE_OPTIONS$/.test(k)));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...loader, suiteFile], {
      env: { ...inherited, TS_NODE_TRANSPILE_ONLY: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, output }));
  });
}

/** Every key on the backend (to prove the suite cleans up and touches nothing else). */
async function allKeys(backend: Backend): Promise<string[]> {
  return (await snapshotKeyspace(backend)).map((s) => s.key);
}

for (const target of targets) {
  t.test(target.name, async (t) => {
    const make = () => createBackend({ url: target.url, adapter: target.adapter });
    const observer = await make();
    t.teardown(() => observer.close());
    await observer.ready();

    t.test('a conforming scenario passes, and the suite leaves no keys and touches no others', async (t) => {
      await observer.send(['SET', 'bystander', 'keep me']);
      await observer.send(['HSET', 'job:j1', 'not', 'ours']); // an unprefixed key of the same name
      await contractSuite(t, { plugin: driftPlugin, name: target.name, make });
      t.equal(await observer.send(['GET', 'bystander']), 'keep me', 'a key outside the prefix is untouched');
      t.same(await observer.send(['HGETALL', 'job:j1']), ['not', 'ours'], 'an unprefixed key of a contract pattern is untouched');
      t.same((await allKeys(observer)).filter((k) => k.includes('{conf-')), [], 'no key of the run is left behind');
      await observer.pipeline([['DEL', 'bystander'], ['DEL', 'job:j1']]);
    });

    t.test('drifting scenarios fail the suite, each with its deviation', async (t) => {
      const { code, output } = await runChild({
        DRIFT_SCENARIOS: 'good,wrongType,forgottenTtl,undeclaredKey,missingExpected',
        DRIFT_ADAPTER: target.adapter,
        DRIFT_URL: target.url ?? '',
      });
      t.equal(code, 1, 'the child tap process exits 1');
      const subject = `drift on ${target.adapter}`;
      t.match(output, `ok 1 - ${subject}: claims two jobs through the script`, 'the conforming scenario still passes');
      t.notMatch(output, `not ok 1 - ${subject}: claims`, 'and is not reported failing');

      t.match(output, `not ok 2 - ${subject}: writes a field of the wrong type`);
      t.match(output, /not ok 1 - bad-value: key \{conf-[0-9a-f]+\}:job:j1 \(job\): field "attempts" = "many" must be integer/);

      t.match(output, `not ok 3 - ${subject}: forgets the lease TTL`);
      t.match(output, /not ok 1 - missing-ttl: key \{conf-[0-9a-f]+\}:lease:j2 \(lease\): has no TTL, expected one between 1 s and 60 s/);

      t.match(output, `not ok 4 - ${subject}: writes an undeclared key`);
      t.match(output, /not ok 1 - unknown-key: key \{conf-[0-9a-f]+\}:jobs:archive: matches no key pattern of contract drift/);

      t.match(output, `not ok 5 - ${subject}: expects a key it never writes`);
      t.match(output, 'not ok 3 - leaves at least one lease key (lease:{jobId}): found 0');

      t.match(output, '# { total: 10, pass: 6, fail: 4 }', 'exactly the four drifts fail: one assertion each, nothing else');
      if (code !== 1) t.comment(output);
      t.same((await allKeys(observer)).filter((k) => k.includes('{conf-')), [], 'failed runs clean up too');
    });
  });
}

t.test('the child harness itself passes a conforming run (exit 0)', async (t) => {
  const { code, output } = await runChild({ DRIFT_SCENARIOS: 'good', DRIFT_ADAPTER: 'ioredis', DRIFT_URL: redis.url });
  t.equal(code, 0, output);
  t.match(output, '# { total: 4, pass: 4 }');
});

t.test('scenarioContext: config from schema defaults, keys and scripts under the prefix', async (t) => {
  const backend = await createBackend({ url: redis.url, adapter: 'ioredis' });
  t.teardown(() => backend.close());
  const controller = new AbortController();
  const ctx = scenarioContext({ plugin: driftPlugin, backend, keyPrefix: '{ctx}:', signal: controller.signal });
  t.same(ctx.config, { owner: 'worker-1', leaseSeconds: 20 }, 'the schema defaults');
  t.ok(Object.isFrozen(ctx.config), 'frozen');
  t.equal(ctx.keys.job({ jobId: 'j9' }), '{ctx}:job:j9');
  t.same(ctx.scripts.names, ['claimJob']);
  t.same(ctx.scripts.prepare('claimJob', { keys: { job: { jobId: 'a' }, lease: { jobId: 'a' }, running: {} }, args: { jobId: 'a', owner: 'o', leaseSeconds: 5, now: 1 } }).keys, [
    '{ctx}:job:a',
    '{ctx}:lease:a',
    '{ctx}:running',
  ]);
  t.equal(ctx.global.redis.keyPrefix, '{ctx}:');
  t.same(ctx.roles, []);
  t.equal(ctx.signal, controller.signal);

  const custom = scenarioContext({ plugin: driftPlugin, backend, keyPrefix: '', signal: controller.signal, config: { leaseSeconds: 5 } });
  t.same(custom.config, { owner: 'worker-1', leaseSeconds: 5 }, 'given values over the defaults');
  t.throws(() => scenarioContext({ plugin: driftPlugin, backend, keyPrefix: '', signal: controller.signal, config: { leaseSeconds: 0 } }), {
    name: 'PluginError',
    message: 'plugin drift: config is not valid: /leaseSeconds must be >= 1',
  });
});
