// `coord inspect --config deploy.yaml` takes the plugins the file names
// (plugins: and modules:), as `coord run --config` does, and holds each key of
// the running deployment to the contract it belongs to. Built CLI, real Redis.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import { buildIfStale } from './support/build.ts';
import { coord, coordSync, root } from './support/cli.ts';
import { startRedis } from './support/redis.ts';

// The environment must not point the CLI at some other Redis.
const env = { REDIS_URL: '', COORD_REDIS_URL: '', COORD_KEY_PREFIX: '', COORD_LOG_LEVEL: '', COORD_DEBUG: '' };
const dir = mkdtempSync(join(tmpdir(), 'coord-inspect-'));

t.before(() => buildIfStale());

t.test('inspect --config: the plugins of a deployment file, each key checked by its own contract', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const file = join(dir, 'deploy.yaml');
  writeFileSync(
    file,
    [
      'redis:',
      `  url: ${redis.url}`,
      "  keyPrefix: '{dep}:'",
      'modules:',
      `  echo: ${join(root, 'test/fixtures/plugins/echo/index.js')}`,
      'plugins:',
      '  echo:',
      '    greeting: hi',
      "  load-test:",
      '    api: false',
      '',
    ].join('\n'),
  );
  const p = coord(['run', '--config', file], env);
  t.teardown(() => p.kill('SIGKILL'));
  await p.waitFor((l) => l.msg === 'ready', 30_000);
  const check = await createBackend({ url: redis.url });
  t.teardown(() => check.close());
  t.equal(await check.send(['GET', '{dep}:echo:first']), 'hi from first', 'echo runs');
  t.equal(await check.send(['SCARD', '{dep}:workers']), 1, 'load-test runs: its worker registered');
  const keys = ((await check.send(['KEYS', '{dep}:*'])) as string[]).length;

  const clean = coordSync(['inspect', '--config', file], env);
  t.equal(clean.status, 0, clean.stderr);
  t.equal(clean.stdout, `no deviations in ${keys} keys under {dep}: on ${redis.url}\n`, "both plugins' keys conform, each to its own contract");

  await check.send(['SET', '{dep}:stray', 'x']);
  await check.send(['SET', '{dep}:echo:first', '']);
  await check.send(['SET', '{dep}:test:state', 'DANCING']);
  const dirty = coordSync(['inspect', '--config', file], env);
  t.equal(dirty.status, 1, 'exit 1 when the keyspace deviates');
  const lines = dirty.stdout.trim().split('\n');
  t.match(
    lines,
    [
      /^bad-value: key \{dep\}:echo:first \(greeting\): value "" must NOT have fewer than 1 characters$/,
      /^unknown-key: key \{dep\}:stray: matches no key pattern of contract echo, load-test \(under prefix \{dep\}:\)/,
      /^bad-value: key \{dep\}:test:state \(testState\): value "DANCING" must be equal to one of the allowed values/,
    ],
    'one line per bad key, in key order, each by the contract it belongs to',
  );
  t.equal(lines.length, 4);
  t.equal(lines.at(-1), `3 deviation(s) from contracts echo, load-test in ${keys + 2} keys under {dep}: on ${redis.url}`);

  const one = coordSync(['inspect', '--config', file, '--plugin', 'load-test'], env);
  t.equal(one.status, 1);
  t.match(one.stdout, /unknown-key: key \{dep\}:echo:first: matches no key pattern of contract load-test /, '--plugin wins over the file: echo keys are not load-test keys');
  t.match(one.stdout.trim().split('\n').at(-1), /^4 deviation\(s\) from contract load-test in /);

  p.kill('SIGTERM');
  t.equal(await p.exited, 0, 'the deployment stops cleanly');
});

t.test('inspect --config with a file that names no plugin: one line, exit 2', async (t) => {
  const file = join(dir, 'bare.yaml');
  writeFileSync(file, 'redis:\n  url: redis://127.0.0.1:1\n');
  const r = coordSync(['inspect', '--config', file], env);
  t.equal(r.status, 2);
  t.equal(r.stdout, '');
  t.equal(r.stderr, `coord: inspect needs --plugin NAME, or a plugins: section in ${file}\n`);
});
