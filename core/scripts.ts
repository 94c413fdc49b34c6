// The Lua script registry. Each script is one file under plugins/<plugin>/lua/ whose
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
//
// Shared Lua: Redis has no modules, so a header line `-- @include name` makes
// the registry inline lib/name.lua (beside the scripts) after the header, once
// per script however often it is asked for, its own includes first. Libraries
// are not scripts: no KEYS/ARGV header, no KEYS[i]/ARGV[i] in their code (their
// functions take what they need as parameters), never registered. The SHA is
// that of the final text; a Lua error from a run names the script and the file
// line each `user_script:N` it mentions came from.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ReplyError, type Arg, type Backend, type Reply, type ScriptSource } from './backend.ts';
import { fillPattern, patternHead, type ContractSpec, type KeyParams, type KeySpec } from './contract.ts';
import { ScriptError } from './errors.ts';
import { lazyModule } from './lazy-module.ts';

export { ScriptError } from './errors.ts';

// node:crypto loads when the first script is read, not with the plugin kit:
// its ES module facade is the kit's largest single import cost (~8 ms).
const crypto = lazyModule<typeof import('node:crypto')>('node:crypto');

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
  /** Libraries inlined into `lua`, in the order they stand there. */
  readonly includes: readonly string[];
  /** Where each line of `lua` comes from ('relocateAll.lua:12', 'lib/heartbeat.lua:3'); index 0 is line 1. */
  readonly origins: readonly string[];
}

/** Texts of a plugin's Lua libraries by name (lib/<name>.lua without .lua). */
export type LuaLibraries = Readonly<Record<string, string>>;

/** The folder, beside the scripts, that holds the libraries. */
export const LIBRARY_DIR = 'lib';

/** Key params for one slot: params of its pattern, a key already built with ctx.keys, or a list for a variadic slot. */
export type KeyInput = Record<string, string | number> | string;

/**
 * What a script call passes, by the names its Lua header gives them: keys by
 * slot (each the parameters of the contract key the slot names, or a key
 * already built; a list for a variadic slot) and ARGV by name.
 */
export interface ScriptCall {
  keys?: Readonly<Record<string, KeyInput | readonly KeyInput[]>>;
  args?: Readonly<Record<string, Arg | readonly Arg[]>>;
}

/**
 * A plugin's scripts on one backend, under the key prefix (`ctx.scripts`): run
 * one by name with keys and arguments by name; the runner builds the key
 * names from the contract, orders KEYS and ARGV as the header declares them,
 * and runs it with EVALSHA (EVAL when Redis does not have it yet).
 */
export interface ScriptRunner {
  /** Runs a script by name (file name without .lua). */
  run(name: string, call?: ScriptCall): Promise<Reply>;
  /** The KEYS and ARGV a call would send, in order (for tests and the cluster-slot check). */
  prepare(name: string, call?: ScriptCall): { keys: string[]; args: Arg[] };
  /** Names of the loaded scripts. */
  readonly names: readonly string[];
  definition(name: string): ScriptDefinition;
}

// ---- typed view: what scripts.gen.ts (core/script-types.ts) declares per script

/** One key slot of a typed call: the params of the contract key `E` it names, or a key already built. */
export type ScriptKey<K extends Record<string, KeySpec>, E extends keyof K> = KeyParams<K[E]['pattern']> | string;

/** One ARGV slot of a typed call. */
export type ScriptArg = Arg;

/** A script's slots as its header declares them: key slot → key input, ARGV name → value. */
export interface ScriptShape {
  keys: object;
  args: object;
}

/** The empty object type: `Empty extends T` when T requires nothing. */
type Empty = Record<never, never>;

/** The call of one script: `keys` and `args` exactly as declared (a part with nothing required may be left out). */
export type TypedCall<D extends ScriptShape> = (Empty extends D['keys'] ? { keys?: D['keys'] } : { keys: D['keys'] }) &
  (Empty extends D['args'] ? { args?: D['args'] } : { args: D['args'] });

type CallParams<D extends ScriptShape> = Empty extends TypedCall<D> ? [call?: TypedCall<D>] : [call: TypedCall<D>];

/**
 * The plugin's ScriptRunner seen through its generated declarations (S, from
 * scripts.gen.ts): `run` takes only declared script names, and for each its
 * declared key slots (typed by the contract key they name) and ARGV names, so
 * a slot renamed in a Lua header fails tsc at every call that still uses the
 * old name. Same object at run time.
 */
export interface TypedScripts<S extends { [N in keyof S]: ScriptShape }> {
  run<N extends keyof S & string>(name: N, ...call: CallParams<S[N]>): Promise<Reply>;
  prepare<N extends keyof S & string>(name: N, ...call: CallParams<S[N]>): { keys: string[]; args: Arg[] };
  readonly names: readonly string[];
  definition(name: string): ScriptDefinition;
}

const KEYS_LINE = /^--\s*KEYS\[(\d+)(\.\.)?\]\s+([A-Za-z_]\w*)(?:\s*=\s*([A-Za-z_]\w*))?/;
const ARGV_LINE = /^--\s*ARGV\[(\d+)(\.\.)?\]\s+([A-Za-z_]\w*)(?:\s+@head\s+([A-Za-z_]\w*))?/;
const INCLUDE_ANY = /^\s*--\s*@include\b/;
const INCLUDE_LINE = /^--\s*@include\s+([A-Za-z_]\w*)(?:\s|$)/;
const FORBIDDEN = /redis\.p?call\s*\(\s*['"](keys|scan)['"]/i;
const SLOT_READ = /\b(KEYS|ARGV)\s*\[/;
const INCLUDE_SYNTAX = 'expected "-- @include name" for a file lib/name.lua (the name without .lua)';

interface Header {
  /** Index of the first line of code. */
  end: number;
  keys: KeySlot[];
  args: ArgSlot[];
  includes: string[];
}

/** Reads the comment block at the top of a script or library; the header ends at the first line of code. */
function readHeader(where: string, lines: readonly string[]): Header {
  const header: Header = { end: lines.length, keys: [], args: [], includes: [] };
  for (const [i, line] of lines.entries()) {
    if (!line.startsWith('--')) {
      if (line.trim() === '') continue;
      header.end = i;
      break;
    }
    const k = KEYS_LINE.exec(line);
    if (k) header.keys.push({ index: Number(k[1]), variadic: !!k[2], slot: k[3]!, entry: k[4] ?? k[3]! });
    const a = ARGV_LINE.exec(line);
    if (a) header.args.push({ index: Number(a[1]), variadic: !!a[2], slot: a[3]!, head: a[4] });
    if (INCLUDE_ANY.test(line)) {
      const inc = INCLUDE_LINE.exec(line);
      if (!inc) throw new ScriptError(`${where}: line ${i + 1} "${line.trim()}": ${INCLUDE_SYNTAX}`, { code: 'COORD_ERR_SCRIPT_INCLUDE' });
      header.includes.push(inc[1]!);
    }
  }
  const late = lines.findIndex((line, i) => i >= header.end && INCLUDE_ANY.test(line));
  if (late >= 0) throw new ScriptError(`${where}: line ${late + 1} has an @include below the first line of code; includes go in the header at the top`, { code: 'COORD_ERR_SCRIPT_INCLUDE' });
  return header;
}

/** The KEYS and ARGV a script's header declares, numbered and named as parseScript requires (for core/script-types.ts). */
export function scriptHeader(name: string, lua: string): { keys: readonly KeySlot[]; args: readonly ArgSlot[] } {
  const where = `script ${name}`;
  const { keys, args } = readHeader(where, lua.split('\n'));
  checkSlots(where, 'KEYS', keys);
  checkSlots(where, 'ARGV', args);
  return { keys, args };
}

/** Parses one script's header, checks it against the contract and inlines its libraries. */
export function parseScript(name: string, lua: string, contract: ContractSpec, libraries: LuaLibraries = {}): ScriptDefinition {
  const where = `script ${name}`;
  const lines = lua.split('\n');
  const { end, keys, args, includes } = readHeader(where, lines);
  checkSlots(where, 'KEYS', keys);
  checkSlots(where, 'ARGV', args);
  for (const key of keys) {
    if (!contract.keys[key.entry]) throw new ScriptError(`${where}: KEYS[${key.index}] names "${key.entry}", which is not a key of contract ${contract.plugin}`, { code: 'COORD_ERR_SCRIPT_HEADER' });
  }
  for (const arg of args) {
    if (arg.head === undefined) continue;
    const spec = contract.keys[arg.head];
    if (!spec) throw new ScriptError(`${where}: ARGV[${arg.index}] @head names "${arg.head}", which is not a key of contract ${contract.plugin}`, { code: 'COORD_ERR_SCRIPT_HEADER' });
    if (!spec.derivable) throw new ScriptError(`${where}: ARGV[${arg.index}] @head ${arg.head}: the contract does not declare that key derivable`, { code: 'COORD_ERR_SCRIPT_HEADER' });
  }
  if (FORBIDDEN.test(lua)) throw new ScriptError(`${where}: calls KEYS or SCAN; keep an index key instead`, { code: 'COORD_ERR_SCRIPT_FORBIDDEN' });
  checkKeyReads(where, lines, end, keys);

  const order = includeOrder(where, includes, libraries);
  const out: string[] = [];
  const origins: string[] = [];
  const add = (text: string, origin: string) => {
    out.push(text);
    origins.push(origin);
  };
  lines.slice(0, end).forEach((line, i) => add(line, `${name}.lua:${i + 1}`));
  for (const lib of order) {
    const file = libraryFile(lib);
    add(`-- ${file}, inlined by coord for @include ${lib}`, `the first line coord wrote around ${file}`);
    libraryLines(libraries[lib]!).forEach((line, i) => add(line, `${file}:${i + 1}`));
    add(`-- end of ${file}`, `the last line coord wrote around ${file}`);
  }
  lines.slice(end).forEach((line, i) => add(line, `${name}.lua:${end + i + 1}`));
  const text = out.join('\n'); // without includes: the file as it is
  const sha = crypto().createHash('sha1').update(text).digest('hex');
  return { name, lua: text, sha, keys, args, includes: order, origins };
}

/**
 * A script that reads KEYS[n] for an n its header does not declare would get
 * nil on Redis and touch a key the contract does not know: refused at load,
 * naming the line. (Only literal indexes can be checked; a variadic last slot
 * allows every index from its own on.)
 */
function checkKeyReads(where: string, lines: readonly string[], end: number, keys: readonly KeySlot[]): void {
  const last = keys.at(-1);
  const variadicFrom = last?.variadic ? last.index : Number.POSITIVE_INFINITY;
  for (let i = end; i < lines.length; i++) {
    for (const m of lines[i]!.replace(/--.*$/, '').matchAll(/\bKEYS\[(\d+)\]/g)) {
      const n = Number(m[1]);
      if (n >= variadicFrom || keys.some((k) => k.index === n)) continue;
      const declared = keys.length ? keys.map((k) => `KEYS[${k.index}${k.variadic ? '..' : ''}]`).join(', ') : 'none';
      throw new ScriptError(`${where}: line ${i + 1} reads KEYS[${n}], which its header does not declare (declared: ${declared})`, { code: 'COORD_ERR_SCRIPT_UNDECLARED_KEY' });
    }
  }
}

const libraryFile = (lib: string) => `${LIBRARY_DIR}/${lib}.lua`;

function libraryLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** The libraries a script needs, each once, every library after the ones it includes. */
function includeOrder(where: string, includes: readonly string[], libraries: LuaLibraries): string[] {
  const order: string[] = [];
  const visit = (lib: string, chain: readonly string[]) => {
    if (order.includes(lib)) return;
    if (chain.includes(lib)) throw new ScriptError(`${where}: @include cycle ${[...chain, lib].map(libraryFile).join(' → ')}: a library cannot include itself, even through others`, { code: 'COORD_ERR_SCRIPT_INCLUDE' });
    const text = Object.hasOwn(libraries, lib) ? libraries[lib] : undefined;
    const by = chain.length === 0 ? 'its header' : libraryFile(chain.at(-1)!);
    if (text === undefined) {
      const have = Object.keys(libraries).sort().join(', ') || 'none';
      throw new ScriptError(`${where}: ${by} includes "${lib}", but there is no ${libraryFile(lib)} beside the scripts (libraries: ${have})`, { code: 'COORD_ERR_SCRIPT_INCLUDE' });
    }
    for (const dep of checkLibrary(`${where}: ${libraryFile(lib)}`, text)) visit(dep, [...chain, lib]);
    order.push(lib);
  };
  for (const lib of includes) visit(lib, []);
  return order;
}

/** A library is plain functions: no slots of its own, no KEYS[i]/ARGV[i], no KEYS/SCAN. Returns its includes. */
function checkLibrary(where: string, text: string): string[] {
  const lines = libraryLines(text);
  const header = readHeader(where, lines);
  const slot = [...header.keys.map((k) => `KEYS[${k.index}]`), ...header.args.map((a) => `ARGV[${a.index}]`)][0];
  if (slot) throw new ScriptError(`${where}: its header declares ${slot}, but a library is not a script: scripts declare KEYS and ARGV, library functions take them as parameters`, { code: 'COORD_ERR_SCRIPT_LIBRARY' });
  const code = lines.map((line) => line.replace(/--.*$/, ''));
  const read = code.findIndex((line) => SLOT_READ.test(line));
  if (read >= 0) throw new ScriptError(`${where}: line ${read + 1} reads ${SLOT_READ.exec(code[read]!)![1]}; a library's functions take keys and arguments as parameters`, { code: 'COORD_ERR_SCRIPT_LIBRARY' });
  if (FORBIDDEN.test(text)) throw new ScriptError(`${where}: calls KEYS or SCAN; keep an index key instead`, { code: 'COORD_ERR_SCRIPT_FORBIDDEN' });
  return header.includes;
}

function checkSlots(where: string, what: string, slots: { index: number; slot: string; variadic: boolean }[]): void {
  slots.forEach((s, i) => {
    if (s.index !== i + 1) throw new ScriptError(`${where}: header lists ${what}[${s.index}] where ${what}[${i + 1}] was expected (number them 1, 2, 3… in order)`, { code: 'COORD_ERR_SCRIPT_HEADER' });
    if (s.variadic && i !== slots.length - 1) throw new ScriptError(`${where}: only the last ${what} may be variadic (${what}[${s.index}..])`, { code: 'COORD_ERR_SCRIPT_HEADER' });
  });
  const names = new Set<string>();
  for (const s of slots) {
    if (names.has(s.slot)) throw new ScriptError(`${where}: ${what} slot name "${s.slot}" is used twice`, { code: 'COORD_ERR_SCRIPT_HEADER' });
    names.add(s.slot);
  }
}

/**
 * Reads every .lua file of a folder as a script, with the libraries of its lib/
 * folder, and checks each header against the contract (ScriptError). The
 * runtime does this for a plugin's `scripts` folder; a worker thread or a tool
 * that makes its own context (roleContext) calls it.
 *
 * @example
 * const scripts = loadScriptDir(new URL('./lua/', import.meta.url), contract);
 * scripts.map((s) => s.name); // ['claimTick', 'finishTick', 'scheduleTick', 'sweepLeases']
 */
export function loadScriptDir(dir: string | URL, contract: ContractSpec): ScriptDefinition[] {
  const path = typeof dir === 'string' ? dir : fileURLToPath(dir);
  const libraryDir = join(path, LIBRARY_DIR);
  const libraries = existsSync(libraryDir) ? readLuaFiles(libraryDir) : {};
  const scripts = readLuaFiles(path);
  return Object.keys(scripts)
    .sort()
    .map((name) => parseScript(name, scripts[name]!, contract, libraries));
}

/** The .lua files of a folder, by name without .lua. */
function readLuaFiles(path: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const file of readdirSync(path)) {
    if (file.endsWith('.lua')) files[basename(file, '.lua')] = readFileSync(join(path, file), 'utf8');
  }
  return files;
}

/**
 * A runner for a set of scripts on one backend, under a key prefix.
 * `definitions` may be a function, called when a script is first asked for:
 * a command that may run none (`coord grid status`) does not parse them.
 */
export function scriptRunner(backend: Backend, contract: ContractSpec, definitions: readonly ScriptDefinition[] | (() => readonly ScriptDefinition[]), keyPrefix = ''): ScriptRunner {
  let parsed: Map<string, ScriptDefinition> | undefined;
  const scripts = () => (parsed ??= new Map((typeof definitions === 'function' ? definitions() : definitions).map((d) => [d.name, d])));
  const definition = (name: string): ScriptDefinition => {
    const byName = scripts();
    const def = byName.get(name);
    if (!def) throw new ScriptError(`no script "${name}" in plugin ${contract.plugin} (have: ${[...byName.keys()].join(', ') || 'none'})`, { code: 'COORD_ERR_SCRIPT_UNKNOWN' });
    return def;
  };
  const prepare = (name: string, call: ScriptCall = {}) => {
    const def = definition(name);
    const keys: string[] = [];
    for (const slot of def.keys) {
      const input = call.keys?.[slot.slot];
      if (input === undefined) throw new ScriptError(`script ${name}: key "${slot.slot}" was not passed`, { code: 'COORD_ERR_SCRIPT_CALL' });
      const list = slot.variadic ? (Array.isArray(input) ? input : [input]) : [input];
      if (!slot.variadic && Array.isArray(input)) throw new ScriptError(`script ${name}: key "${slot.slot}" takes one key, not a list`, { code: 'COORD_ERR_SCRIPT_CALL' });
      for (const one of list as KeyInput[]) keys.push(buildKey(contract.keys[slot.entry]!, one, keyPrefix));
    }
    const args: Arg[] = [];
    for (const slot of def.args) {
      if (slot.head !== undefined) {
        args.push(keyPrefix + patternHead(contract.keys[slot.head]!.pattern));
        continue;
      }
      const value = call.args?.[slot.slot];
      if (value === undefined) throw new ScriptError(`script ${name}: argument "${slot.slot}" was not passed`, { code: 'COORD_ERR_SCRIPT_CALL' });
      if (slot.variadic) args.push(...(Array.isArray(value) ? value : [value]) as Arg[]);
      else if (Array.isArray(value)) throw new ScriptError(`script ${name}: argument "${slot.slot}" takes one value, not a list`, { code: 'COORD_ERR_SCRIPT_CALL' });
      else args.push(value as Arg);
    }
    return { keys, args };
  };
  return {
    get names() {
      return [...scripts().keys()];
    },
    definition,
    prepare,
    async run(name, call) {
      const { keys, args } = prepare(name, call);
      const def = definition(name);
      try {
        return await backend.evalScript(def, keys, args);
      } catch (error) {
        throw withSourceLines(def, error);
      }
    },
  };
}

const LUA_LINE = /user_script:(\d+)/g;

/** Redis numbers the lines of the final text (user_script:N); this says which file and line that is. */
function withSourceLines(def: ScriptDefinition, error: unknown): unknown {
  if (!(error instanceof ReplyError)) return error;
  const lines = [...new Set([...error.message.matchAll(LUA_LINE)].map((m) => Number(m[1])))];
  if (lines.length === 0) return error;
  const places = lines.map((n) => `user_script:${n} is ${def.origins[n - 1] ?? `past the end of ${def.name}.lua`}`);
  return new ReplyError(`${error.message} (script ${def.name}: ${places.join(', ')})`);
}

function buildKey(spec: KeySpec, input: KeyInput, keyPrefix: string): string {
  if (typeof input === 'string') return input;
  return keyPrefix + fillPattern(spec.pattern, input, spec.params);
}
