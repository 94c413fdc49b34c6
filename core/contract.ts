// The key-layout contract: a plugin declares its keyspace once, as data, and
// gets typed key builders from it. The validator (contract-check.ts), the
// markdown reference (contract-doc.ts) and the script registry read the same
// declaration, so no key name is spelled anywhere else.
import { ContractError, type CoordErrorCode } from './errors.ts';

/** A JSON Schema (draft 2020-12 subset that ajv understands). */
export type JsonSchema = Record<string, unknown>;

/** The Redis data type a contract key holds. */
export type RedisType = 'string' | 'hash' | 'set' | 'zset' | 'list' | 'stream';

/**
 * TTL rule of a key:
 *  'none'      the key must not expire;
 *  'required'  the key must have a TTL, any length;
 *  'optional'  either is fine;
 *  {min,max}   the key must have a TTL within these bounds (seconds, inclusive).
 */
export type TtlRule = 'none' | 'required' | 'optional' | { min?: number; max?: number };

/**
 * How one stored value is checked. A value in Redis is text; it is decoded by
 * the schema's `type` before ajv sees it: integer/number → parsed number,
 * boolean → 'true'|'false'|'1'|'0', object/array → JSON.parse, anything else → the text.
 */
export type ValueSchema = JsonSchema;

interface KeySpecBase {
  /** e.g. 'worker:{browserType}:{workerId}'. Parameters match [^:]+ unless `params` says otherwise. */
  pattern: string;
  type: RedisType;
  /** One sentence: what the key holds and why. */
  description: string;
  ttl: TtlRule;
  /** Roles that write this key (for the reference and for review). */
  writers: readonly string[];
  /** Regex source per parameter when [^:]+ does not fit, e.g. { name: '[^:]+' }. */
  params?: Readonly<Record<string, string>>;
  /**
   * Lua scripts may build this key from an index member: key = head + member,
   * where head is the key prefix plus the pattern up to its first parameter.
   * The registry passes that head in ARGV (header tag `@head <entry>`).
   */
  derivable?: boolean;
  /** Added by coord beyond the documented layout. Shown in the reference. */
  extension?: boolean;
}

/** A string key in a contract: `value` is the schema its text is checked against. */
export interface StringKeySpec extends KeySpecBase {
  type: 'string';
  value: ValueSchema;
}

/**
 * A hash key in a contract: its named fields, the ones that must be there, and
 * fields named by a pattern.
 */
export interface HashKeySpec extends KeySpecBase {
  type: 'hash';
  /** Named fields and their value schemas. */
  fields?: Readonly<Record<string, ValueSchema>>;
  /** Fields that must be present. */
  required?: readonly string[];
  /**
   * Fields whose names follow a pattern (e.g. counters keyed '{browserType}:{workerId}').
   * A field that is neither named nor matches this is a deviation.
   */
  dynamicFields?: { pattern: string; value: ValueSchema; params?: Readonly<Record<string, string>> };
}

/** A set key in a contract: `member` is the schema every member is checked against. */
export interface SetKeySpec extends KeySpecBase {
  type: 'set';
  member: ValueSchema;
}

/** A sorted-set key in a contract: the schema of its members and of their scores. */
export interface ZsetKeySpec extends KeySpecBase {
  type: 'zset';
  member: ValueSchema;
  /** Schema of the score (a number). */
  score?: JsonSchema;
}

/** A list key in a contract: `item` is the schema every item is checked against. */
export interface ListKeySpec extends KeySpecBase {
  type: 'list';
  item: ValueSchema;
}

/** A stream key in a contract: the fields of each entry and how long the stream may grow. */
export interface StreamKeySpec extends KeySpecBase {
  type: 'stream';
  /** Fields of each entry. */
  fields: Readonly<Record<string, ValueSchema>>;
  required?: readonly string[];
  /** Streams must be capped: the most entries a conforming writer keeps. */
  maxLength?: number;
}

/** One key of a contract, by its Redis type: what `defineContract` takes under `keys`. */
export type KeySpec = StringKeySpec | HashKeySpec | SetKeySpec | ZsetKeySpec | ListKeySpec | StreamKeySpec;

/** A pub/sub channel, documented alongside the keys (channels are not keys: not validated in snapshots). */
export interface ChannelSpec {
  pattern: string;
  description: string;
  message: ValueSchema;
  publishers: readonly string[];
  subscribers: readonly string[];
}

/**
 * A plugin's keyspace as data: every key it writes (pattern, type, value
 * schemas, TTL rule, writers) and its pub/sub channels. Made with
 * `defineContract`; the conformance suite checks a real keyspace against it,
 * and `coord schema --plugin P` prints it as a reference.
 */
export interface ContractSpec<K extends Record<string, KeySpec> = Record<string, KeySpec>, Ch extends Readonly<Record<string, ChannelSpec>> = Readonly<Record<string, ChannelSpec>>> {
  /** The plugin that owns the keyspace. */
  plugin: string;
  /** Where the documented layout comes from (a document or a URL). */
  source?: string;
  keys: K;
  channels?: Ch;
}

// ---- typed parameters from a pattern: 'a:{x}:{y}' → { x: string; y: string }

type ParamNames<P extends string> = P extends `${string}{${infer Name}}${infer Rest}` ? Name | ParamNames<Rest> : never;

/**
 * The parameters a key pattern takes: `KeyParams<'job:{name}'>` is
 * `{ readonly name: string | number }`.
 */
export type KeyParams<P extends string> = [ParamNames<P>] extends [never]
  ? Record<string, never>
  : { readonly [N in ParamNames<P>]: string | number };

/** A key builder: `keys.worker({ browserType: 'chromium', workerId: 'a1' })` → 'worker:chromium:a1'. */
export type KeyBuilder<P extends string> = [ParamNames<P>] extends [never]
  ? (params?: Record<string, never>) => string
  : (params: KeyParams<P>) => string;

/** A builder for each key of a contract (the type of `ctx.keys`), made by `keyBuilders`. */
export type KeyBuilders<K extends Record<string, KeySpec>> = {
  readonly [E in keyof K]: KeyBuilder<K[E]['pattern']>;
};

/** Channel builders, typed like key builders: `channels.capacity({ browserType })`. */
export type ChannelBuilders<Ch extends Readonly<Record<string, ChannelSpec>>> = {
  readonly [E in keyof Ch]: KeyBuilder<Ch[E]['pattern']>;
};

export { ContractError } from './errors.ts';

const PARAM = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Declares a contract. Checks it once (ContractError) and returns it unchanged (typed).
 *
 * @example
 * export const contract = defineContract({
 *   plugin: 'cron',
 *   keys: { job: { pattern: 'job:{name}', type: 'hash', description: 'one job', ttl: 'none', writers: ['scheduler'], fields: { cron: { type: 'string' } } } },
 * });
 */
export function defineContract<const K extends Record<string, KeySpec>, const Ch extends Readonly<Record<string, ChannelSpec>> = Record<never, ChannelSpec>>(
  spec: ContractSpec<K, Ch>,
): ContractSpec<K, Ch> {
  for (const [entry, key] of Object.entries(spec.keys)) {
    const where = `contract ${spec.plugin}, key ${entry}`;
    const fail = (what: string, code: CoordErrorCode): never => {
      throw new ContractError(`${where}: ${what}`, { code });
    };
    if (!key.pattern || /\s/.test(key.pattern)) fail(`pattern "${key.pattern}" is empty or has spaces`, 'COORD_ERR_CONTRACT_PATTERN');
    // Braces are parameters and nothing else: a stray one ('a:{', 'a:{}') would be a literal no builder fills.
    if (/[{}]/.test(key.pattern.replace(PARAM, ''))) {
      fail(`pattern "${key.pattern}" has a { or } that is not a parameter: write parameters as {name} (letters, digits and _)`, 'COORD_ERR_CONTRACT_PATTERN');
    }
    const params = patternParams(key.pattern);
    const twice = params.find((name, i) => params.indexOf(name) !== i);
    if (twice !== undefined) fail(`pattern "${key.pattern}" names parameter {${twice}} twice`, 'COORD_ERR_CONTRACT_PATTERN');
    if (key.pattern.startsWith('{') && !params.length) fail('pattern must not start with a hash tag; use the keyPrefix option', 'COORD_ERR_CONTRACT_HASH_TAG');
    if (!['string', 'hash', 'set', 'zset', 'list', 'stream'].includes(key.type)) {
      fail(`type "${key.type}" is not string, hash, set, zset, list or stream`, 'COORD_ERR_CONTRACT_KEY_TYPE');
    }
    if (key.derivable && !params.length) fail('derivable keys need a parameter after their head', 'COORD_ERR_CONTRACT_DERIVABLE');
    for (const [name, rule] of Object.entries(key.params ?? {})) {
      if (!params.includes(name)) fail(`params names "${name}", which is not in the pattern`, 'COORD_ERR_CONTRACT_PARAM');
      try {
        paramRule(rule);
      } catch (err) {
        fail(`params.${name} is not a regular expression: ${(err as Error).message}`, 'COORD_ERR_CONTRACT_PARAM');
      }
    }
  }
  return spec;
}

/** The parameter names of a pattern, in order. */
export function patternParams(pattern: string): string[] {
  return [...pattern.matchAll(PARAM)].map((m) => m[1]!);
}

/** Compiled parameter rules, by source: keys are built on every script call (selection's hot path), a rule is compiled once. */
const paramRules = new Map<string, RegExp>();

function paramRule(source: string): RegExp {
  let re = paramRules.get(source);
  if (!re) paramRules.set(source, (re = new RegExp(`^(?:${source})$`)));
  return re;
}

/** Fills a pattern's parameters. Throws ContractError for a missing or empty one, or one that breaks the pattern. */
export function fillPattern(pattern: string, params: Record<string, string | number> = {}, paramRegex: Readonly<Record<string, string>> = {}): string {
  return pattern.replace(PARAM, (_all, name: string) => {
    const value = params[name];
    if (value === undefined || value === '') throw new ContractError(`key pattern ${pattern}: parameter "${name}" is missing`, { code: 'COORD_ERR_KEY_PARAM_MISSING' });
    const text = String(value);
    const re = paramRule(paramRegex[name] ?? '[^:]+');
    if (!re.test(text)) throw new ContractError(`key pattern ${pattern}: parameter ${name}="${text}" does not match ${re.source}`, { code: 'COORD_ERR_KEY_PARAM_INVALID' });
    return text;
  });
}

/**
 * A regex matching the whole of a key of this pattern (without the key
 * prefix); its groups are the parameters, in order. `paramRegex` gives a
 * parameter a rule of its own instead of `[^:]+` (a key spec's `params`).
 *
 * @example
 * const job = patternRegex('job:{name}');
 * job.exec('job:nightly')?.[1]; // 'nightly'
 * job.test('job:a:b'); // false: a parameter does not span ':'
 */
export function patternRegex(pattern: string, paramRegex: Readonly<Record<string, string>> = {}): RegExp {
  let source = '';
  let last = 0;
  for (const m of pattern.matchAll(PARAM)) {
    source += escapeRegex(pattern.slice(last, m.index)) + `(${paramRegex[m[1]!] ?? '[^:]+'})`;
    last = m.index! + m[0].length;
  }
  source += escapeRegex(pattern.slice(last));
  return new RegExp(`^${source}$`);
}

/** The literal text of a pattern before its first parameter ('worker:{a}:{b}' → 'worker:'). */
export function patternHead(pattern: string): string {
  const at = pattern.indexOf('{');
  return at === -1 ? pattern : pattern.slice(0, at);
}

/**
 * A SCAN glob for every key of this pattern: each parameter becomes `*`, and
 * glob characters in the literal text are escaped. Prefix it with the key
 * prefix through `escapeGlob`.
 *
 * @example
 * const prefix = ctx.global.redis.keyPrefix;
 * for await (const key of ctx.backend.scan(escapeGlob(prefix) + patternGlob(contract.keys.job.pattern))) {
 *   console.log(key); // '{cron}:job:nightly', …
 * }
 */
export function patternGlob(pattern: string): string {
  return escapeGlob(pattern).replace(PARAM, '*');
}

/**
 * The text with the glob characters of SCAN MATCH (`* ? [ ] \`) escaped, so
 * it matches only itself: for a key prefix such as '{grid}:' put in front of a
 * pattern's glob.
 *
 * @example
 * escapeGlob('[app]:'); // '\\[app\\]:'
 * for await (const key of ctx.backend.scan(`${escapeGlob(ctx.global.redis.keyPrefix)}job:*`)) console.log(key);
 */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/**
 * Typed builders for every key of a contract, under a key prefix (e.g.
 * '{cron}:'): one function per key entry, taking the pattern's parameters.
 * Roles get them ready-made as `ctx.keys`; this is for code that has a
 * contract and a prefix but no role context (a script, a test, a tool). A
 * missing or empty parameter, or one its rule does not match, throws
 * ContractError.
 *
 * @example
 * const keys = keyBuilders(contract, '{cron}:');
 * keys.job({ name: 'nightly' }); // '{cron}:job:nightly'
 */
export function keyBuilders<K extends Record<string, KeySpec>>(spec: ContractSpec<K>, keyPrefix = ''): KeyBuilders<K> {
  const builders: Record<string, (params?: Record<string, string | number>) => string> = {};
  for (const [entry, key] of Object.entries(spec.keys)) {
    builders[entry] = (params) => keyPrefix + fillPattern(key.pattern, params ?? {}, key.params);
  }
  return Object.freeze(builders) as KeyBuilders<K>;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Builders for a contract's pub/sub channels, under the same key prefix as its
 * keys (roles get them as `ctx.channels`).
 *
 * @example
 * const contract = defineContract({
 *   plugin: 'cron',
 *   keys: {},
 *   channels: { fired: { pattern: 'fired:{name}', description: 'a job ran', message: { type: 'string' }, publishers: ['scheduler'], subscribers: ['runner'] } },
 * });
 * const channels = channelBuilders(contract, '{cron}:');
 * channels.fired({ name: 'nightly' }); // '{cron}:fired:nightly'
 */
export function channelBuilders<K extends Record<string, KeySpec>, Ch extends Readonly<Record<string, ChannelSpec>>>(
  spec: ContractSpec<K, Ch>,
  keyPrefix = '',
): ChannelBuilders<Ch> {
  const builders: Record<string, (params?: Record<string, string | number>) => string> = {};
  for (const [entry, channel] of Object.entries(spec.channels ?? {})) {
    builders[entry] = (params) => keyPrefix + fillPattern(channel.pattern, params ?? {});
  }
  return Object.freeze(builders) as ChannelBuilders<Ch>;
}
