// `coord grid status --redis URL` is a read: it loads what reading needs and
// no more. The logger (pino, its worker-thread transport) loads with the first
// line, which a status that goes well never writes; ioredis is required, not
// imported, since Node's ESM import of a CommonJS package parses each of its
// modules for export names; the plugin's Lua is parsed when a script first
// runs, which a status never does. Checked by what the process loaded, not by
// time (bench/cli-start.mjs measures the CPU).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { buildIfStale } from './support/build.ts';
import { root } from './support/cli.ts';
import { startRedis } from './support/redis.ts';

t.before(() => buildIfStale());

t.test('coord grid status loads no logger, imports no CommonJS client through ESM and parses no Lua', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const dir = mkdtempSync(join(tmpdir(), 'coord-light-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const record = join(dir, 'loaded.txt');
  // Every module the ESM loader loads, and at exit every CommonJS module required and every .lua file read.
  writeFileSync(join(dir, 'hook.mjs'), `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) { appendFileSync(${JSON.stringify(record)}, 'esm ' + url + '\\n'); return next(url, context); }`);
  writeFileSync(join(dir, 'register.mjs'), `import { register } from 'node:module'; register(${JSON.stringify(pathToFileURL(join(dir, 'hook.mjs')).href)});`);
  writeFileSync(join(dir, 'preload.cjs'), `const fs = require('node:fs');
const read = fs.readFileSync;
const lua = [];
fs.readFileSync = function (path, ...rest) { if (String(path).endsWith('.lua')) lua.push(String(path)); return read.call(this, path, ...rest); };
process.on('exit', () => fs.appendFileSync(${JSON.stringify(record)}, [...Object.keys(require.cache).map((p) => 'cjs ' + p), ...lua.map((p) => 'lua ' + p)].join('\\n') + '\\n'));`);

  const r = spawnSync(process.execPath, ['--require', join(dir, 'preload.cjs'), '--import', join(dir, 'register.mjs'), 'dist/cli/main.js', 'grid', 'status', '--redis', redis.url], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /no workers registered/, 'it read the grid');
  const loaded = readFileSync(record, 'utf8').split('\n').filter(Boolean);
  t.ok(loaded.some((l) => l.startsWith('esm ') && l.includes('/dist/cli/main.js')), 'the ESM loads were recorded');
  t.ok(loaded.some((l) => l.startsWith('cjs ') && l.includes('/node_modules/ioredis/')), 'ioredis was required');
  t.same(loaded.filter((l) => /\/node_modules\/(pino|pino-pretty|thread-stream|sonic-boom)\//.test(l)), [], 'no logger module loaded');
  t.same(loaded.filter((l) => l.startsWith('esm ') && /\/node_modules\/(ioredis|@redis\/client|cluster-key-slot)\//.test(l)), [], 'no Redis client went through the ESM loader');
  t.same(loaded.filter((l) => l.startsWith('lua ')), [], 'no Lua file was read');
});
