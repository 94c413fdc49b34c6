// The build compiles the config schemas of the built-in plugins ahead of time
// (dist/validators), so `coord P status` does not load ajv. A precompiled
// validator must answer exactly as ajv compiling the same schema does:
// the same verdict, the same errors, the same defaults filled in.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { adapterNames } from '../adapters/index.ts';
import { configSchema } from '../core/config.ts';
import { compileValidator, precompiledValidator } from '../core/config-validator.ts';
import type { JsonSchema } from '../core/contract.ts';
import { builtinPlugins } from '../plugins/index.ts';
import { buildIfStale } from './support/build.ts';
import { root } from './support/cli.ts';
import { startRedis } from './support/redis.ts';

buildIfStale();
const dist = new URL(`file://${join(root, 'dist/validators/')}`);

/** Configs to try against one plugin's schema: empty, wrong types, an unknown key, a bad enum. */
function samples(name: string, schema: JsonSchema): Record<string, unknown>[] {
  const properties = Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>);
  const wrongType = Object.fromEntries(properties.map(([key, sub]) => [key, sub.type === 'string' ? 42 : 'not-this']));
  return [
    {},
    { plugins: { [name]: {} } },
    { plugins: { [name]: wrongType } },
    { plugins: { [name]: { notAnOption: 1 } } },
    { log: { level: 'loud' }, redis: { url: 7 } },
    { roles: ['no-such-role', 'no-such-role'] },
  ];
}

for (const [name, load] of Object.entries(builtinPlugins)) {
  t.test(`${name}: the precompiled validator answers as ajv does`, async (t) => {
    const plugin = await load();
    const schema = configSchema([plugin], adapterNames);
    const precompiled = precompiledValidator(schema, dist);
    if (!precompiled) return t.fail(`no precompiled validator for ${name} in dist/validators: the build (scripts/compile-validators.ts) did not make it`);
    const compiled = compileValidator(schema);
    for (const sample of samples(name, plugin.config.schema)) {
      const a = structuredClone(sample);
      const b = structuredClone(sample);
      const verdict = precompiled(a);
      t.equal(verdict, compiled(b), `${JSON.stringify(sample)}: same verdict`);
      t.same(precompiled.errors ?? null, compiled.errors ?? null, 'same errors');
      t.same(a, b, 'same defaults filled in');
    }
  });
}

t.test('a status command against a live Redis does not load ajv, and a bad value is still one line', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const hook = join(t.testdir(), 'watch-ajv.cjs');
  // Reports each package the process requires whose name starts with ajv (the validator's own runtime helpers are ajv/dist/runtime/*).
  writeFileSync(hook, `const M = require('module'); const load = M._load; M._load = function (request, ...rest) { if (/^ajv(\\/|$)/.test(request)) process.stderr.write('required ' + request + '\\n'); return load.call(this, request, ...rest); };`);
  for (const command of [['grid', 'status'], ['obniz', 'status'], ['webdriver', 'sessions']]) {
    const r = spawnSync(process.execPath, ['-r', hook, join(root, 'dist/bundle/coord.js'), ...command, '--redis', redis.url], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    t.equal(r.status, 0, `coord ${command.join(' ')}: exit 0 (${r.stderr.slice(-300)})`);
    const required = r.stderr.split('\n').filter((line) => line.startsWith('required '));
    t.ok(required.length > 0 && required.every((line) => line.startsWith('required ajv/dist/runtime/')), `coord ${command.join(' ')}: only ajv's runtime helpers (${required.join(', ')})`);
  }
  const bad = spawnSync(process.execPath, [join(root, 'dist/bundle/coord.js'), 'grid', 'status', '--redis', redis.url, '--set', 'browser-grid.maxConcurrentSessions=many'], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  t.equal(bad.status, 2, 'a bad value: exit 2');
  t.match(bad.stderr.trim(), /^coord: config: browser-grid\.maxConcurrentSessions = "many" \(from flag --set browser-grid\.maxConcurrentSessions\): expected integer >= 1$/, bad.stderr);
});
