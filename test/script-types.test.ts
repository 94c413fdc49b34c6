// Typed script calls: each plugin's scripts.gen.ts is current with its Lua
// headers, and a slot renamed in a header (then regenerated) makes tsc fail at
// the call that still uses the old name, naming the slot. The fixture is the
// plugin `coord new plugin` scaffolds, checked against coord's sources.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { SCRIPT_TYPES_FILE, scriptTypesSource, writeScriptTypes } from '../core/script-types.ts';
import { SCRIPT_TYPE_TARGETS } from '../scripts/script-type-targets.ts';
import { buildIfStale } from './support/build.ts';
import { coordSync, root } from './support/cli.ts';

t.before(() => buildIfStale());

t.test('every plugin, the cron example and the template have a current scripts.gen.ts (npm run script-types writes them)', async (t) => {
  t.same(Object.keys(SCRIPT_TYPE_TARGETS).sort(), ['examples/cron', 'plugins/browser-grid', 'plugins/load-test', 'plugins/obniz', 'plugins/webdriver', 'templates/plugin']);
  for (const [dir, typeName] of Object.entries(SCRIPT_TYPE_TARGETS)) {
    t.equal(readFileSync(join(root, dir, SCRIPT_TYPES_FILE), 'utf8'), scriptTypesSource(join(root, dir), typeName), `${dir}/${SCRIPT_TYPES_FILE} is current`);
  }
});

t.test('a declaration per script: key slots typed by their contract key, ARGV by name, @head arguments left to the registry', async (t) => {
  const grid = scriptTypesSource(join(root, 'plugins/browser-grid'), 'BrowserGridScripts');
  t.match(grid, "import type { ScriptArg, ScriptKey } from '../../entries/plugin.ts';", 'the types come from where its contract.ts takes defineContract: the plugin kit');
  t.match(grid, /touchWorker: \{\n\s+keys: \{\n\s+worker: ScriptKey<K, 'worker'>;\n\s+active: ScriptKey<K, 'activeConnections'>;/);
  t.match(grid, 'fields: ScriptArg | readonly ScriptArg[]', 'a variadic ARGV takes a list');
  const obniz = scriptTypesSource(join(root, 'plugins/obniz'), 'ObnizScripts');
  t.notMatch(obniz, /\bslaveHead\b|@head/, 'no argument the registry fills');
  const template = scriptTypesSource(join(root, 'templates/plugin'));
  t.match(template, "from 'coordkit/plugin'", "a plugin of its own takes the types from the plugin kit, as its contract.ts does");
});

/** Where the package's types are, as package.json tells an installed plugin. */
function packageTypes(): string {
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { types: string }).types;
}

/** A plugin made by `coord new plugin`, type-checked against coord's sources: tsc's exit code and output. */
function scaffold(t: Tap.Test): { dir: string; tsc(): { status: number | null; output: string } } {
  const dir = mkdtempSync(join(tmpdir(), 'coord-script-types-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const made = coordSync(['new', 'plugin', 'fixture', '--dir', join(dir, 'fixture')]);
  t.equal(made.status, 0, made.stderr);
  const plugin = join(dir, 'fixture');
  // The scaffold's own tsconfig, with 'coordkit' and its plugin kit mapped to this build's types (no install step); its tests left out.
  const own = JSON.parse(readFileSync(join(plugin, 'tsconfig.json'), 'utf8')) as { compilerOptions: Record<string, unknown> };
  const tsconfig = {
    compilerOptions: {
      ...own.compilerOptions,
      typeRoots: [join(root, 'node_modules/@types')],
      paths: { coordkit: [join(root, packageTypes())], 'coordkit/plugin': [join(root, packageTypes().replace(/coordkit\.d\.ts$/, 'plugin.d.ts'))] },
    },
    include: ['*.ts', 'roles/*.ts'],
  };
  writeFileSync(join(plugin, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
  return {
    dir: plugin,
    tsc() {
      const run = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', plugin], { encoding: 'utf8' });
      return { status: run.status, output: run.stdout + run.stderr };
    },
  };
}

t.test('a KEYS slot renamed in a Lua header fails tsc at the call that uses the old name, and names the slot', async (t) => {
  const { dir, tsc } = scaffold(t);
  t.equal(writeScriptTypes(dir), false, 'the scaffold ships its scripts.gen.ts current');
  const before = tsc();
  t.equal(before.status, 0, `the scaffold type-checks as made:\n${before.output}`);

  const lua = join(dir, 'lua/touchMember.lua');
  writeFileSync(lua, readFileSync(lua, 'utf8').replace('-- KEYS[1] member', '-- KEYS[1] record = member'));
  t.equal(writeScriptTypes(dir), true, 'regenerated');
  t.match(readFileSync(join(dir, SCRIPT_TYPES_FILE), 'utf8'), "record: ScriptKey<K, 'member'>");
  const after = tsc();
  t.not(after.status, 0, 'tsc fails');
  t.match(after.output, /roles\/member\.ts\(\d+,\d+\): error TS\d+:.*'member' does not exist/, 'at the call, naming the old slot');
  t.match(after.output, /\{ record: ScriptKey</, 'and the new one');
});

t.test('an ARGV renamed in a header, or a script renamed, fails tsc the same way', async (t) => {
  const { dir, tsc } = scaffold(t);
  const lua = join(dir, 'lua/touchMember.lua');
  writeFileSync(lua, readFileSync(lua, 'utf8').replace('-- ARGV[2] nowMs', '-- ARGV[2] beatAt'));
  writeScriptTypes(dir);
  const renamedArg = tsc();
  t.not(renamedArg.status, 0);
  t.match(renamedArg.output, /roles\/member\.ts\(\d+,\d+\): error TS\d+:.*'nowMs' does not exist/);

  writeFileSync(lua, readFileSync(lua, 'utf8').replace('-- ARGV[2] beatAt', '-- ARGV[2] nowMs'));
  rmSync(lua);
  writeFileSync(join(dir, 'lua/touchMemberRecord.lua'), readFileSync(join(root, 'templates/plugin/lua/touchMember.lua'), 'utf8'));
  writeScriptTypes(dir);
  const renamedScript = tsc();
  t.not(renamedScript.status, 0);
  t.match(renamedScript.output, /roles\/member\.ts\(\d+,\d+\): error TS\d+: Argument of type '"touchMember"' is not assignable/);
});

t.test('a Lua header naming a key the contract does not have fails tsc in scripts.gen.ts', async (t) => {
  const { dir, tsc } = scaffold(t);
  const lua = join(dir, 'lua/touchMember.lua');
  writeFileSync(lua, readFileSync(lua, 'utf8').replace('-- KEYS[2] members', '-- KEYS[2] members = memberIndex'));
  writeScriptTypes(dir);
  const run = tsc();
  t.not(run.status, 0);
  t.match(run.output, /scripts\.gen\.ts\(\d+,\d+\): error TS\d+:.*"memberIndex"/);
});
