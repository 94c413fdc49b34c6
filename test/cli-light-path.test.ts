// `coord grid status --redis URL` is a read: it loads what reading needs and
// no more; `coord load run` loads no more than a test needs before its first
// request. The logger (pino, its worker-thread transport) loads with the first
// line, which a status that goes well never writes; ioredis is required, not
// imported, since Node's ESM import of a CommonJS package parses each of its
// modules for export names; the plugin's Lua is parsed when a script first
// runs, which a status never does. A load test coerces its flags and checks
// its plugin without ajv (the config's precompiled validator has done it),
// loads the embedded backend's ioredis-mock without fengari (its scripts run
// on wasmoon), semver's three functions without the rest, no undici when
// every user sends one request at a time on its own connection, and registers
// no module hook for a scenario that reaches coord without one (Node's hooks
// thread, and every later import through it). Checked by what the process
// loaded, not by time (bench/cli-start.mjs and bench/load-startup.mjs measure).
import { execFile, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t, { type Test } from 'tap';
import { buildIfStale } from './support/build.ts';
import { root } from './support/cli.ts';
import { startRedis } from './support/redis.ts';

t.before(() => buildIfStale());

/** The preload that records what a process (and its threads) loaded: ESM loads, CommonJS modules, .lua reads, module hooks registered. */
function recorder(t: Test): { record: string; preload: string[]; loaded(): string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'coord-light-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const record = join(dir, 'loaded.txt');
  const hook = pathToFileURL(join(dir, 'hook.mjs')).href;
  writeFileSync(join(dir, 'hook.mjs'), `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) { appendFileSync(${JSON.stringify(record)}, 'esm ' + url + '\\n'); return next(url, context); }`);
  writeFileSync(join(dir, 'register.mjs'), `import { register } from 'node:module'; register(${JSON.stringify(hook)});`);
  writeFileSync(join(dir, 'preload.cjs'), `const fs = require('node:fs');
const Module = require('node:module');
const seen = [];
const read = fs.readFileSync;
fs.readFileSync = function (path, ...rest) { if (String(path).endsWith('.lua')) seen.push('lua ' + String(path)); return read.call(this, path, ...rest); };
const register = Module.register;
Module.register = function (specifier, ...rest) { if (String(specifier) !== ${JSON.stringify(hook)}) seen.push('register ' + String(specifier)); return register.call(this, specifier, ...rest); };
process.on('exit', () => fs.appendFileSync(${JSON.stringify(record)}, [...Object.keys(require.cache).map((p) => 'cjs ' + p), ...seen].join('\\n') + '\\n'));
// A users' thread may be terminated, which runs no exit handler: its CommonJS modules are written as they load.
if (!require('node:worker_threads').isMainThread) {
  const load = Module._load;
  const written = new Set();
  Module._load = function (...args) {
    const loaded = load.apply(this, args);
    for (const p of Object.keys(require.cache)) if (!written.has(p)) { written.add(p); fs.appendFileSync(${JSON.stringify(record)}, 'cjs ' + p + '\\n'); }
    return loaded;
  };
}`);
  return {
    record,
    preload: ['--require', join(dir, 'preload.cjs'), '--import', join(dir, 'register.mjs')],
    loaded: () => readFileSync(record, 'utf8').split('\n').filter(Boolean),
  };
}

const options = { cwd: root, encoding: 'utf8', timeout: 120_000, env: { ...process.env, NODE_OPTIONS: '', REDIS_URL: '' } } as const;
const run = (args: string[]) => spawnSync(process.execPath, args, options);
const runAsync = (args: string[]) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, args, options, (error, stdout, stderr) => resolve({ status: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }));
  });

t.test('coord grid status loads no logger, imports no CommonJS client through ESM and parses no Lua', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const { preload, loaded } = recorder(t);
  const r = run([...preload, 'dist/bundle/coord.js', 'grid', 'status', '--redis', redis.url]);
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /no workers registered/, 'it read the grid');
  const lines = loaded();
  t.ok(lines.some((l) => l.startsWith('esm ') && l.includes('/dist/bundle/coord.js')), 'the ESM loads were recorded');
  t.ok(lines.some((l) => l.startsWith('cjs ') && l.includes('/node_modules/ioredis/')), 'ioredis was required');
  t.same(lines.filter((l) => /\/node_modules\/(pino|pino-pretty|thread-stream|sonic-boom)\//.test(l)), [], 'no logger module loaded');
  t.same(lines.filter((l) => l.startsWith('esm ') && /\/node_modules\/(ioredis|@redis\/client|cluster-key-slot)\//.test(l)), [], 'no Redis client went through the ESM loader');
  t.same(lines.filter((l) => l.startsWith('lua ')), [], 'no Lua file was read');
});

t.test('coord load run loads no ajv, no fengari, not all of semver, and registers no module hook for a scenario that reaches coord', async (t) => {
  const target = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  t.teardown(() => target.close());
  const url = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  const { preload, loaded } = recorder(t);
  // A scenario inside coord's folder: 'coordkit' resolves to this coord from there, as it does in a project that installed it.
  // Not spawnSync: the target answers from this process's event loop.
  const r = await runAsync([...preload, 'dist/bundle/coord.js', 'load', 'run', '--scenario', 'test/fixtures/load-test/routed.mjs', '--users', '1', '--duration', '1s', '--workers', 'auto', '--param', `baseUrl=${url}`]);
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /GET \/routed\s+[1-9]/, 'the test ran its requests');
  const lines = loaded();
  t.ok(lines.some((l) => l.startsWith('cjs ') && l.includes('/node_modules/ioredis-mock/')), 'the embedded backend loaded ioredis-mock');
  // ajv/dist/runtime/* are the precompiled validator's few helpers; fengari's two entry points are the empty stand-ins.
  t.same(lines.filter((l) => /\/node_modules\/ajv\/(?!dist\/runtime\/)|\/node_modules\/fengari(-interop)?\/src\/(?!fengari\.js$|js\.js$)/.test(l)), [], 'no ajv compiler, no fengari');
  t.same(lines.filter((l) => /\/node_modules\/semver\/index\.js$/.test(l)), [], "not semver's index (all its functions)");
  // (tap's processinfo, which follows the processes a test starts, registers its own)
  t.same(lines.filter((l) => l.startsWith('register ') && !l.includes('/@tapjs/')), [], 'no module hook registered');
  t.same(lines.filter((l) => l.startsWith('esm ') && /\/node_modules\/(undici|ws|hdr-histogram-js|http-parser-js|ioredis-mock)\//.test(l)), [], 'no CommonJS package went through the ESM loader');
  // each user sends one request at a time on its own connection: the worker's shared ones (undici) are never needed
  t.same(lines.filter((l) => l.includes('/node_modules/undici/')), [], 'no undici: the users ran on their own connections');
});
