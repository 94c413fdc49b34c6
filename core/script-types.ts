// Writes a plugin's scripts.gen.ts: one declaration per Lua script, made from
// its header (`-- KEYS[n] slot [= entry]`, `-- ARGV[n] name`). Each key slot is
// typed by the params of the contract key it names, each ARGV by its name, so
// with the plugin's context typed through TypedScripts (core/scripts.ts) a
// call that still passes a renamed slot, or misses a new one, fails tsc.
// Regenerate after editing a header: `npm run script-types` in this project,
// `writeScriptTypes('.')` in a plugin's own (its test checks the file is current).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ScriptError, scriptHeader } from './scripts.ts';

/** The file written beside the plugin's contract.ts. */
export const SCRIPT_TYPES_FILE = 'scripts.gen.ts';

const CONTRACT_IMPORT = /import\s*\{[^}]*\bdefineContract\b[^}]*\}\s*from\s*'([^']+)'/;

/**
 * The text of scripts.gen.ts for the plugin in `dir` (its lua/ folder and
 * contract.ts); `typeName` names the declared interface. What
 * writeScriptTypes writes; a plugin's test compares it with the file, so a Lua
 * header changed without regenerating fails.
 *
 * @example
 * const dir = fileURLToPath(new URL('..', import.meta.url));
 * t.equal(readFileSync(`${dir}scripts.gen.ts`, 'utf8'), scriptTypesSource(dir), 'scripts.gen.ts is current (npm run script-types)');
 */
export function scriptTypesSource(dir: string, typeName = 'Scripts'): string {
  const contractFile = join(dir, 'contract.ts');
  const from = CONTRACT_IMPORT.exec(readFileSync(contractFile, 'utf8'))?.[1];
  if (!from) throw new ScriptError(`${contractFile}: no "import { defineContract } from '…'" line to find coord's types from`, { code: 'COORD_ERR_SCRIPT_TYPES' });
  // The module that gave defineContract gives the script types too: 'coordkit', or core/ in this project.
  const core = from.replace(/contract\.ts$/, 'scripts.ts');
  const luaDir = join(dir, 'lua');
  const files = existsSync(luaDir) ? readdirSync(luaDir).filter((f) => f.endsWith('.lua')).sort() : [];
  const out = [
    `// Generated from the headers of lua/*.lua by writeScriptTypes (coord's core/script-types.ts): do not edit.`,
    '// Regenerate after changing a header; a call naming a slot a header does not declare then fails tsc.',
    `import type { ScriptArg, ScriptKey } from '${core}';`,
    "import type { contract } from './contract.ts';",
    '',
    'type K = (typeof contract)[\'keys\'];',
    '',
    `export interface ${typeName} {`,
  ];
  for (const file of files) {
    const name = basename(file, '.lua');
    const lua = readFileSync(join(luaDir, file), 'utf8');
    const { keys, args } = scriptHeader(name, lua);
    const summary = describe(lua);
    if (summary) out.push(`  /** ${summary.replace(/\*\//g, '* /')} */`);
    const keyTypes = keys.map((k) => {
      const one = `ScriptKey<K, '${k.entry}'>`;
      return `${k.slot}: ${k.variadic ? `${one} | readonly ${one}[]` : one}`;
    });
    const argTypes = args.filter((a) => a.head === undefined).map((a) => `${a.slot}: ${a.variadic ? 'ScriptArg | readonly ScriptArg[]' : 'ScriptArg'}`);
    out.push(`  ${name}: {`, ...members('keys', keyTypes), ...members('args', argTypes), '  };');
  }
  out.push('}', '');
  return out.join('\n');
}

const WIDTH = 160;

/** `keys: { a: A; b: B };` on one line when it fits, else one member a line. */
function members(part: string, types: readonly string[]): string[] {
  if (types.length === 0) return [`    ${part}: Record<string, never>;`]; // none (biome refuses the type {})
  const line = `    ${part}: { ${types.join('; ')} };`;
  if (line.length <= WIDTH) return [line];
  return [`    ${part}: {`, ...types.map((t) => `      ${t};`), '    };'];
}

/** The header's first sentence ('touchWorker: registers a worker, …'). */
function describe(lua: string): string {
  const text: string[] = [];
  for (const line of lua.split('\n')) {
    const m = /^--\s*(.*)$/.exec(line);
    if (!m || /^(KEYS|ARGV)\[|^@include\b/.test(m[1]!)) break;
    text.push(m[1]!.trim());
  }
  const joined = text.join(' ');
  const end = joined.search(/\.(\s|$)/);
  return end === -1 ? joined : joined.slice(0, end + 1);
}

/**
 * Writes `dir`/scripts.gen.ts (the typed call of each Lua script under
 * `dir`/lua, from their headers); returns true when its text changed.
 *
 * @example
 * writeScriptTypes('.'); // in a plugin folder: npm run script-types
 */
export function writeScriptTypes(dir: string, typeName = 'Scripts'): boolean {
  const file = join(dir, SCRIPT_TYPES_FILE);
  const text = scriptTypesSource(dir, typeName);
  if (existsSync(file) && readFileSync(file, 'utf8') === text) return false;
  writeFileSync(file, text);
  return true;
}
