// The Lua script registry. Each script is one file under lua/<plugin>/ whose
// header names its KEYS and ARGV:
//
//   -- selectWorker: picks a worker and counts the new session.
//   -- KEYS[1] active = activeConnections   the active-session counters
//   -- KEYS[2] index = workerIndex          the browser type's worker index
//   -- KEYS[3..] extra = worker             (variadic: any number, last only)
//   -- ARGV[1] workerHead @head worker      filled by the registry: prefix + 'worker:'
//   -- ARGV[2] browserType
//
// `KEYS[i] slot = entry` binds a slot name to a contract entry (`KEYS[i] entry`
// when they are the same). Callers pass keys and args by slot name; the
// registry builds the key names from the contract and orders everything.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Arg, Backend, Reply, ScriptSource } from './backend.ts';
import { fillPattern, patternHead, type ContractSpec, type KeySpec } from './contract.ts';

export class ScriptError extends Error {
  override readonly name = 'ScriptError';
}

interface KeySlot {
  index: number;
  slot: string;
  entry: string;
  variadic: boolean;
}

interface ArgSlot {
  index: number;
  slot: string;
  head?: string;
  variadic: boolean;
}

export interface ScriptDefinition extends ScriptSource {
  readonly keys: readonly KeySlot[];
  readonly args: readonly ArgSlot[];
}

/** Key params for one slot: params of its pattern, a key already built with ctx.keys, or a list for a variadic slot. */
export type KeyInput = Record<string, string | number> | string;

export interface ScriptCall {
  keys?: Readonly<Record<string, KeyInput | readonly KeyInput[]>>;
  args?: Readonly<Record<string, Arg | readonly Arg[]>>;
}

export interface ScriptRunner {
  /** Runs a script by name (file name without .lua). */
  run(name: string, call?: ScriptCall): Promise<Reply>;
  /** The KEYS and ARGV a call would send, in order (for tests and the cluster-slot check). */
  prepare(name: string, call?: ScriptCall): { keys: string[]; args: Arg[] };
  /** Names of the loaded scripts. */
  readonly names: readonly string[];
  definition(name: string): ScriptDefinition;
}

const KEYS_LINE = /^--\s*KEYS\[(\d+)(\.\.)?\]\s+([A-Za-z_]\w*)(?:\s*=\s*([A-Za-z_]\w*))?/;
const ARGV_LINE = /^--\s*ARGV\[(\d+)(\.\.)?\]\s+([A-Za-z_]\w*)(?:\s+@head\s+([A-Za-z_]\w*))?/;
const FORBIDDEN = /redis\.p?call\s*\(\s*['"](keys|scan)['"]/i;

/** Parses one script's header and checks it against the contract. */
export function parseScript(name: string, lua: string, contract: ContractSpec): ScriptDefinition {
  const where = `script ${name}`;
  const keys: KeySlot[] = [];
  const args: ArgSlot[] = [];
  for (const line of lua.split('\n')) {
    if (!line.startsWith('--')) {
      if (line.trim() === '') continue;
      break; // the header ends at the first line of code
    }
    const k = KEYS_LINE.exec(line);
    if (k) keys.push({ index: Number(k[1]), variadic: !!k[2], slot: k[3]!, entry: k[4] ?? k[3]! });
    const a = ARGV_LINE.exec(line);
    if (a) args.push({ index: Number(a[1]), variadic: !!a[2], slot: a[3]!, head: a[4] });
  }
  checkSlots(where, 'KEYS', keys);
  checkSlots(where, 'ARGV', args);
  for (const key of keys) {
    if (!contract.keys[key.entry]) throw new ScriptError(`${where}: KEYS[${key.index}] names "${key.entry}", which is not a key of contract ${contract.plugin}`);
  }
  for (const arg of args) {
    if (arg.head === undefined) continue;
    const spec = contract.keys[arg.head];
    if (!spec) throw new ScriptError(`${where}: ARGV[${arg.index}] @head names "${arg.head}", which is not a key of contract ${contract.plugin}`);
    if (!spec.derivable) throw new ScriptError(`${where}: ARGV[${arg.index}] @head ${arg.head}: the contract does not declare that key derivable`);
  }
  if (FORBIDDEN.test(lua)) throw new ScriptError(`${where}: calls KEYS or SCAN; keep an index key instead`);
  const sha = createHash('sha1').update(lua).digest('hex');
  return { name, lua, sha, keys, args };
}

function checkSlots(where: string, what: string, slots: { index: number; slot: string; variadic: boolean }[]): void {
  slots.forEach((s, i) => {
    if (s.index !== i + 1) throw new ScriptError(`${where}: header lists ${what}[${s.index}] where ${what}[${i + 1}] was expected (number them 1, 2, 3… in order)`);
    if (s.variadic && i !== slots.length - 1) throw new ScriptError(`${where}: only the last ${what} may be variadic (${what}[${s.index}..])`);
  });
  const names = new Set<string>();
  for (const s of slots) {
    if (names.has(s.slot)) throw new ScriptError(`${where}: ${what} slot name "${s.slot}" is used twice`);
    names.add(s.slot);
  }
}

/** Reads every .lua file of a folder. */
export function loadScriptDir(dir: string | URL, contract: ContractSpec): ScriptDefinition[] {
  const path = typeof dir === 'string' ? dir : fileURLToPath(dir);
  return readdirSync(path)
    .filter((f) => f.endsWith('.lua'))
    .sort()
    .map((file) => parseScript(basename(file, '.lua'), readFileSync(join(path, file), 'utf8'), contract));
}

/** A runner for a set of scripts on one backend, under a key prefix. */
export function scriptRunner(backend: Backend, contract: ContractSpec, definitions: readonly ScriptDefinition[], keyPrefix = ''): ScriptRunner {
  const byName = new Map(definitions.map((d) => [d.name, d]));
  const definition = (name: string): ScriptDefinition => {
    const def = byName.get(name);
    if (!def) throw new ScriptError(`no script "${name}" in plugin ${contract.plugin} (have: ${[...byName.keys()].join(', ') || 'none'})`);
    return def;
  };
  const prepare = (name: string, call: ScriptCall = {}) => {
    const def = definition(name);
    const keys: string[] = [];
    for (const slot of def.keys) {
      const input = call.keys?.[slot.slot];
      if (input === undefined) throw new ScriptError(`script ${name}: key "${slot.slot}" was not passed`);
      const list = slot.variadic ? (Array.isArray(input) ? input : [input]) : [input];
      if (!slot.variadic && Array.isArray(input)) throw new ScriptError(`script ${name}: key "${slot.slot}" takes one key, not a list`);
      for (const one of list as KeyInput[]) keys.push(buildKey(contract.keys[slot.entry]!, one, keyPrefix));
    }
    const args: Arg[] = [];
    for (const slot of def.args) {
      if (slot.head !== undefined) {
        args.push(keyPrefix + patternHead(contract.keys[slot.head]!.pattern));
        continue;
      }
      const value = call.args?.[slot.slot];
      if (value === undefined) throw new ScriptError(`script ${name}: argument "${slot.slot}" was not passed`);
      if (slot.variadic) args.push(...(Array.isArray(value) ? value : [value]) as Arg[]);
      else if (Array.isArray(value)) throw new ScriptError(`script ${name}: argument "${slot.slot}" takes one value, not a list`);
      else args.push(value as Arg);
    }
    return { keys, args };
  };
  return {
    names: [...byName.keys()],
    definition,
    prepare,
    async run(name, call) {
      const { keys, args } = prepare(name, call);
      return backend.evalScript(definition(name), keys, args);
    },
  };
}

function buildKey(spec: KeySpec, input: KeyInput, keyPrefix: string): string {
  if (typeof input === 'string') return input;
  return keyPrefix + fillPattern(spec.pattern, input, spec.params);
}
