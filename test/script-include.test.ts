// Shared Lua for scripts: `-- @include name` in a script's header inlines
// lib/name.lua once, its own includes first; a missing or circular include, a
// bad include line, and a library that declares or reads KEYS/ARGV or calls
// KEYS/SCAN each get one clear error. The final text runs on real Redis (both
// client adapters) and on the embedded backend, and a Lua error from a library
// names the script and the library's own line.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { createBackend, type AdapterName } from '../adapters/index.ts';
import { ReplyError } from '../core/backend.ts';
import type { ContractSpec } from '../core/contract.ts';
import { loadScriptDir, parseScript, scriptRunner, ScriptError, type LuaLibraries } from '../core/scripts.ts';
import { findUp } from '../core/paths.ts';
import obniz from '../plugins/obniz/index.ts';
import { startRedis } from './support/redis.ts';

const contract: ContractSpec = {
  plugin: 'inc',
  keys: {
    counter: { pattern: 'counter', type: 'string', description: 'a counter', ttl: 'none', writers: ['r'], value: { type: 'integer' } },
  },
};

const libraries: LuaLibraries = {
  twice: '-- twice: doubles a number.\nlocal function twice(n)\n  return n * 2\nend\n',
  quad: '-- quad: uses twice.\n-- @include twice\nlocal function quad(n) return twice(twice(n)) end\n',
  fail: '-- fail: raises.\nlocal function fail(why)\n  error(why)\nend\n',
};

const script = [
  '-- grow: adds quad(step) and twice(step) to the counter.',
  '-- KEYS[1] counter',
  '-- ARGV[1] step',
  '-- @include quad',
  '-- @include twice   asked for again: still inlined once',
  '-- @include quad',
  'local step = tonumber(ARGV[1])',
  "return redis.call('INCRBY', KEYS[1], quad(step) + twice(step))",
].join('\n');

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof ScriptError) return error.message;
    throw error;
  }
  throw new Error('expected a ScriptError, got none');
}

const occurrences = (text: string, part: string) => text.split(part).length - 1;

t.test('each library is inlined once, after the header, its own includes first', async (t) => {
  const def = parseScript('grow', script, contract, libraries);
  t.same(def.includes, ['twice', 'quad'], 'twice before quad, which includes it');
  t.equal(occurrences(def.lua, 'local function twice'), 1, 'twice is inlined once, though asked for twice and included by quad');
  t.equal(occurrences(def.lua, 'local function quad'), 1, 'quad is inlined once, though asked for twice');
  t.notOk(def.lua.includes('fail'), 'a library nobody includes stays out');
  const at = (part: string) => def.lua.indexOf(part);
  t.ok(at('-- @include quad') < at('local function twice'), 'the header stays on top');
  t.ok(at('local function twice') < at('local function quad') && at('local function quad') < at('local step'), 'libraries stand before the code');
  t.equal(def.sha, createHash('sha1').update(def.lua).digest('hex'), 'the SHA is that of the final text');
  t.same(def.keys.map((k) => k.slot), ['counter']);
  t.same(def.args.map((a) => a.slot), ['step']);
  const lines = def.lua.split('\n');
  t.equal(def.origins.length, lines.length, 'every line of the final text has an origin');
  t.equal(def.origins[lines.indexOf('local function quad(n) return twice(twice(n)) end')], 'lib/quad.lua:3');
  t.equal(def.origins[lines.indexOf('local step = tonumber(ARGV[1])')], 'grow.lua:7');

  const plain = '-- plain: no includes.\n-- KEYS[1] counter\nreturn 1\n';
  const def2 = parseScript('plain', plain, contract, libraries);
  t.equal(def2.lua, plain, 'a script without includes is sent as written');
  t.same(def2.includes, []);
});

t.test('include errors: missing, circular, malformed, misplaced', async (t) => {
  const parse = (lua: string, libs: LuaLibraries = libraries) => errorOf(() => parseScript('s', lua, contract, libs));
  t.equal(
    parse('-- KEYS[1] counter\n-- @include nothere\nreturn 1'),
    'script s: its header includes "nothere", but there is no lib/nothere.lua beside the scripts (libraries: fail, quad, twice)',
  );
  t.equal(
    parse('-- @include outer\nreturn 1', { outer: '-- @include inner\nlocal x = 1\n' }),
    'script s: lib/outer.lua includes "inner", but there is no lib/inner.lua beside the scripts (libraries: outer)',
  );
  t.equal(
    parse('-- @include a\nreturn 1', { a: '-- @include b\nlocal a = 1\n', b: '-- @include c\nlocal b = 1\n', c: '-- @include a\nlocal c = 1\n' }),
    'script s: @include cycle lib/a.lua → lib/b.lua → lib/c.lua → lib/a.lua: a library cannot include itself, even through others',
  );
  t.equal(
    parse('-- @include me\nreturn 1', { me: '-- @include me\nlocal me = 1\n' }),
    'script s: @include cycle lib/me.lua → lib/me.lua: a library cannot include itself, even through others',
  );
  t.equal(
    parse('-- @include twice.lua\nreturn 1'),
    'script s: line 1 "-- @include twice.lua": expected "-- @include name" for a file lib/name.lua (the name without .lua)',
  );
  t.equal(parse('-- @include\nreturn 1'), 'script s: line 1 "-- @include": expected "-- @include name" for a file lib/name.lua (the name without .lua)');
  t.equal(
    parse('-- KEYS[1] counter\nlocal x = 1\n-- @include twice\nreturn x'),
    'script s: line 3 has an @include below the first line of code; includes go in the header at the top',
  );
  t.equal(parse('-- @include twice\nreturn 1', {}), 'script s: its header includes "twice", but there is no lib/twice.lua beside the scripts (libraries: none)');
});

t.test('a library is not a script: no KEYS/ARGV of its own, no KEYS or SCAN', async (t) => {
  const withLib = (lib: string) => errorOf(() => parseScript('s', '-- KEYS[1] counter\n-- @include lib\nreturn 1', contract, { lib }));
  t.equal(withLib("local function all()\n  return redis.call('KEYS', '*')\nend\n"), 'script s: lib/lib.lua: calls KEYS or SCAN; keep an index key instead');
  t.equal(withLib('local function page(c)\n  return redis.pcall("scan", c)\nend\n'), 'script s: lib/lib.lua: calls KEYS or SCAN; keep an index key instead');
  t.equal(
    withLib('-- lib: reads a counter.\n-- KEYS[1] counter\nlocal x = 1\n'),
    'script s: lib/lib.lua: its header declares KEYS[1], but a library is not a script: scripts declare KEYS and ARGV, library functions take them as parameters',
  );
  t.equal(
    withLib('-- ARGV[1] step\nlocal x = 1\n'),
    'script s: lib/lib.lua: its header declares ARGV[1], but a library is not a script: scripts declare KEYS and ARGV, library functions take them as parameters',
  );
  t.equal(
    withLib("-- reads the key (KEYS[1] in a comment is fine)\nlocal function get()\n  return redis.call('GET', KEYS[1])\nend\n"),
    "script s: lib/lib.lua: line 3 reads KEYS; a library's functions take keys and arguments as parameters",
  );
  t.equal(withLib('local step = ARGV [1]\n'), "script s: lib/lib.lua: line 1 reads ARGV; a library's functions take keys and arguments as parameters");
});

t.test('loadScriptDir: libraries come from lib/ beside the scripts and are not scripts themselves', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'coord-include-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'plain.lua'), '-- plain: no includes.\n-- KEYS[1] counter\nreturn 1\n');
  t.same(loadScriptDir(dir, contract).map((d) => d.name), ['plain'], 'no lib/ folder is needed when nothing is included');

  writeFileSync(join(dir, 'grow.lua'), script);
  t.equal(
    errorOf(() => loadScriptDir(dir, contract)),
    'script grow: its header includes "quad", but there is no lib/quad.lua beside the scripts (libraries: none)',
  );
  mkdirSync(join(dir, 'lib'));
  for (const [name, text] of Object.entries(libraries)) writeFileSync(join(dir, 'lib', `${name}.lua`), text);
  const defs = loadScriptDir(dir, contract);
  t.same(defs.map((d) => d.name), ['grow', 'plain'], 'lib/*.lua are not registered');
  t.same(defs[0]!.lua, parseScript('grow', script, contract, libraries).lua, 'the same final text as from parseScript');
});

t.test('the obniz scripts share their Lua through lib/', async (t) => {
  const dir = findUp(import.meta.url, 'plugins/obniz/lua');
  const defs = loadScriptDir(dir, obniz.contract);
  t.same(defs.map((d) => d.name), readdirSync(dir).filter((f) => f.endsWith('.lua')).map((f) => f.slice(0, -4)).sort(), 'one script a file, no library among them');
  const includes = Object.fromEntries(defs.map((d) => [d.name, d.includes]));
  t.same(includes.moveDevices, ['heartbeat', 'lists', 'entry', 'results', 'installs']);
  t.same(includes.touchSlave, []);
  for (const def of defs) t.equal(occurrences(def.lua, 'local function heartbeatMs'), def.includes.includes('heartbeat') ? 1 : 0, `${def.name}: heartbeat inlined at most once`);
});

const redis = await startRedis();
t.teardown(() => redis.stop());
const targets: { name: string; url?: string; adapter?: AdapterName }[] = [
  { name: 'redis (ioredis)', url: redis.url, adapter: 'ioredis' },
  { name: 'redis (node-redis)', url: redis.url, adapter: 'node-redis' },
  { name: 'embedded' },
];

for (const target of targets) {
  t.test(`${target.name}: the final text runs; an error in a library names the script and the library line`, async (t) => {
    const backend = await createBackend({ url: target.url, adapter: target.adapter });
    t.teardown(() => backend.close());
    const prefix = `{inc-${target.adapter ?? 'embedded'}}:`;
    const defs = [
      parseScript('grow', script, contract, libraries),
      parseScript('explode', '-- explode: fails in a library.\n-- KEYS[1] counter\n-- @include fail\nlocal n = 1\nfail("no luck")\nreturn n', contract, libraries),
    ];
    const runner = scriptRunner(backend, contract, defs, prefix);
    t.equal(await runner.run('grow', { keys: { counter: {} }, args: { step: 3 } }), 18, 'quad(3) + twice(3)');
    t.equal(await runner.run('grow', { keys: { counter: {} }, args: { step: 1 } }), 24, 'and again, by SHA');

    const error = await runner.run('explode', { keys: { counter: {} } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.ok(error instanceof ReplyError, 'a Redis reply error');
    const line = defs[1]!.lua.split('\n').indexOf('  error(why)') + 1;
    t.match((error as ReplyError).message, `user_script:${line}`, 'Redis numbers the lines of the final text');
    t.match((error as ReplyError).message, 'no luck');
    t.match((error as ReplyError).message, new RegExp(`\\(script explode: user_script:${line} is lib/fail\\.lua:3\\)$`), 'coord says where that line comes from');
  });
}

t.test('a script that reads a KEYS[n] its header does not declare is refused at load, naming the line', async (t) => {
  const script = (body: string, header = '-- KEYS[1] counter') => errorOf(() => parseScript('s', `${header}\n${body}`, contract));
  t.equal(
    script("local n = redis.call('INCR', KEYS[1])\nreturn redis.call('GET', KEYS[2])"),
    'script s: line 3 reads KEYS[2], which its header does not declare (declared: KEYS[1])',
  );
  t.doesNotThrow(() => parseScript('s', "-- KEYS[1] counter\nreturn redis.call('GET', KEYS[1]) -- KEYS[2] only in a comment", contract), 'a comment does not count');
  t.doesNotThrow(
    () => parseScript('s', "-- KEYS[1] counter\n-- KEYS[2..] more = counter\nreturn redis.call('GET', KEYS[3])", contract),
    'a variadic last slot allows every index from its own on',
  );
});
