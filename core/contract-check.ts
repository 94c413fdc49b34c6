// Checks a keyspace snapshot against a contract: every key must match a
// declared pattern and hold what its entry says (type, fields, members, TTL).
// Used by the conformance suite (no deviation allowed) and `coord inspect`.
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { createAjv } from './ajv.ts';
import { ContractError, patternParams, patternRegex, type ContractSpec, type JsonSchema, type KeySpec } from './contract.ts';
import type { KeySnapshot } from './snapshot.ts';

/** What is wrong with a key, as checkSnapshot reports it. */
export type DeviationKind =
  | 'unknown-key'
  | 'wrong-type'
  | 'missing-field'
  | 'bad-value'
  | 'unknown-field'
  | 'missing-ttl'
  | 'unexpected-ttl'
  | 'ttl-out-of-bounds'
  | 'stream-too-long';

/** One way a key departs from its contract: the key, its entry, the kind and a one-line message. */
export interface Deviation {
  /** The full key name, prefix included. */
  key: string;
  /** The contract entry the key matched (absent for unknown keys). */
  entry?: string;
  kind: DeviationKind;
  /** One line: which key, what is wrong, what was expected. */
  message: string;
}

export interface CheckOptions {
  /** The deployment's key prefix: stripped before matching; keys without it are someone else's and are skipped. */
  keyPrefix?: string;
}

/** Checks one stored text: undefined when valid, else why not (ajv's words). */
type ValueCheck = (text: string) => string | undefined;

interface CompiledEntry {
  entry: string;
  spec: KeySpec;
  regex: RegExp;
  /** Literal characters of the pattern: the more, the more specific. */
  literal: number;
  fields: Map<string, ValueCheck>;
  dynamicField?: { regex: RegExp; check: ValueCheck };
  /** Member / item / string value. */
  value?: ValueCheck;
  score?: ValueCheck;
}

interface CompiledContract {
  /** Most specific first. */
  entries: CompiledEntry[];
}

const cache = new WeakMap<ContractSpec, CompiledContract>();

/**
 * Every deviation of the snapshot from the contract, in key order: keys that
 * match no pattern, and keys whose type, fields, values or TTL are not what
 * their entry says. With `keyPrefix`, keys without it are someone else's and
 * are skipped. Empty when the keyspace keeps to the contract.
 *
 * @example
 * const snapshot = await snapshotKeyspace(backend, { keyPrefix: '{cron}:' });
 * const deviations = checkSnapshot(contract, snapshot, { keyPrefix: '{cron}:' });
 * t.same(deviations, [], formatDeviations(deviations));
 */
export function checkSnapshot(contract: ContractSpec, snapshot: readonly KeySnapshot[], opts: CheckOptions = {}): Deviation[] {
  const compiled = compile(contract);
  const prefix = opts.keyPrefix ?? '';
  const out: Deviation[] = [];
  for (const snap of snapshot) {
    if (!snap.key.startsWith(prefix)) continue;
    const name = snap.key.slice(prefix.length);
    const match = compiled.entries.find((e) => e.regex.test(name));
    if (!match) {
      out.push({
        key: snap.key,
        kind: 'unknown-key',
        message: `key ${snap.key}: matches no key pattern of contract ${contract.plugin}${prefix ? ` (under prefix ${prefix})` : ''}; expected only declared keys`,
      });
      continue;
    }
    out.push(...checkKey(match, snap));
  }
  return out;
}

/**
 * The contract entry a key (without prefix) belongs to: the most specific
 * matching pattern, or undefined.
 *
 * @example
 * matchEntry(contract, 'job:nightly'); // 'job'
 * matchEntry(contract, 'nothing:here'); // undefined
 */
export function matchEntry(contract: ContractSpec, key: string): string | undefined {
  return compile(contract).entries.find((e) => e.regex.test(key))?.entry;
}

/**
 * One line per deviation, `kind: message`, for the CLI and test output.
 *
 * @example
 * const deviations = checkSnapshot(contract, await snapshotKeyspace(backend, { keyPrefix }), { keyPrefix });
 * if (deviations.length) console.error(formatDeviations(deviations));
 * // wrong-type: key {cron}:job:nightly (job): is a string, expected a hash
 */
export function formatDeviations(deviations: readonly Deviation[]): string {
  return deviations.map((d) => `${d.kind}: ${d.message}`).join('\n');
}

function checkKey(c: CompiledEntry, snap: KeySnapshot): Deviation[] {
  const out: Deviation[] = [];
  const where = `key ${snap.key} (${c.entry})`;
  const add = (kind: DeviationKind, message: string) => out.push({ key: snap.key, entry: c.entry, kind, message: `${where}: ${message}` });
  const spec = c.spec;

  if (snap.type !== spec.type) {
    add('wrong-type', `is a ${snap.type === 'other' ? snap.redisType : snap.type}, expected a ${spec.type}`);
    return out;
  }
  checkTtl(spec, snap.ttlMs, add);

  switch (snap.type) {
    case 'string': {
      const bad = c.value!(snap.value);
      if (bad) add('bad-value', `value ${show(snap.value)} ${bad}`);
      break;
    }
    case 'hash': {
      const required = spec.type === 'hash' ? (spec.required ?? []) : [];
      for (const field of required) if (!Object.hasOwn(snap.value, field)) add('missing-field', `required field "${field}" is missing`);
      for (const [field, text] of Object.entries(snap.value)) checkField(c, field, text, 'field', add);
      break;
    }
    case 'set':
    case 'list': {
      const what = snap.type === 'set' ? 'member' : 'item';
      snap.value.forEach((text) => {
        const bad = c.value!(text);
        if (bad) add('bad-value', `${what} ${show(text)} ${bad}`);
      });
      break;
    }
    case 'zset':
      for (const { member, score } of snap.value) {
        const bad = c.value!(member);
        if (bad) add('bad-value', `member ${show(member)} ${bad}`);
        const badScore = c.score?.(String(score));
        if (badScore) add('bad-value', `score ${score} of member ${show(member)} ${badScore}`);
      }
      break;
    case 'stream': {
      if (spec.type !== 'stream') break;
      if (spec.maxLength !== undefined && snap.value.length > spec.maxLength) {
        add('stream-too-long', `has ${snap.value.length} entries, expected at most ${spec.maxLength} (writers must cap it with XADD MAXLEN)`);
      }
      for (const { id, fields } of snap.value) {
        for (const field of spec.required ?? []) if (!Object.hasOwn(fields, field)) add('missing-field', `entry ${id}: required field "${field}" is missing`);
        for (const [field, text] of Object.entries(fields)) checkField(c, field, text, `entry ${id}: field`, add);
      }
      break;
    }
  }
  return out;
}

function checkField(c: CompiledEntry, field: string, text: string, what: string, add: (kind: DeviationKind, message: string) => void): void {
  const check = c.fields.get(field) ?? (c.dynamicField?.regex.test(field) ? c.dynamicField.check : undefined);
  if (!check) {
    const named = [...c.fields.keys()];
    const expected = [named.length ? `one of ${named.join(', ')}` : '', c.dynamicField ? `a field matching ${c.dynamicField.regex.source}` : '']
      .filter(Boolean)
      .join(' or ');
    add('unknown-field', `${what} "${field}" is not declared; expected ${expected || 'no fields'}`);
    return;
  }
  const bad = check(text);
  if (bad) add('bad-value', `${what} "${field}" = ${show(text)} ${bad}`);
}

function checkTtl(spec: KeySpec, ttlMs: number | null, add: (kind: DeviationKind, message: string) => void): void {
  const rule = spec.ttl;
  if (rule === 'optional') return;
  if (rule === 'none') {
    if (ttlMs !== null) add('unexpected-ttl', `expires in ${seconds(ttlMs)}, expected no TTL`);
    return;
  }
  if (ttlMs === null) {
    add('missing-ttl', `has no TTL, expected ${rule === 'required' ? 'one' : `one ${bounds(rule)}`}`);
    return;
  }
  if (rule === 'required') return;
  // The TTL seen is what is left: a key set with EX 30 reads 29.9 s, so the lower bound uses whole seconds rounded up.
  const tooShort = rule.min !== undefined && Math.ceil(ttlMs / 1000) < rule.min;
  const tooLong = rule.max !== undefined && ttlMs > rule.max * 1000;
  if (tooShort || tooLong) add('ttl-out-of-bounds', `expires in ${seconds(ttlMs)}, expected a TTL ${bounds(rule)}`);
}

function bounds(rule: { min?: number; max?: number }): string {
  if (rule.min !== undefined && rule.max !== undefined) return `between ${rule.min} s and ${rule.max} s`;
  if (rule.min !== undefined) return `of at least ${rule.min} s`;
  if (rule.max !== undefined) return `of at most ${rule.max} s`;
  return 'of any length';
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}

/** A value quoted for a message, shortened so one bad value cannot flood a line. */
function show(text: string): string {
  const quoted = JSON.stringify(text);
  return quoted.length > 80 ? `${quoted.slice(0, 77)}…"` : quoted;
}

// ---- compiling a contract: regexes and ajv validators, once per contract object

function compile(contract: ContractSpec): CompiledContract {
  const hit = cache.get(contract);
  if (hit) return hit;
  const ajv = createAjv();
  const entries: CompiledEntry[] = Object.entries(contract.keys).map(([entry, spec]) => {
    const where = `contract ${contract.plugin}, key ${entry}`;
    const check = (schema: JsonSchema, what: string) => valueCheck(ajv, schema, `${where}, ${what}`);
    const compiled: CompiledEntry = {
      entry,
      spec,
      regex: patternRegex(spec.pattern, spec.params),
      literal: literalLength(spec.pattern),
      fields: new Map(),
    };
    switch (spec.type) {
      case 'string':
        compiled.value = check(spec.value, 'value');
        break;
      case 'set':
      case 'zset':
        compiled.value = check(spec.member, 'member');
        if (spec.type === 'zset' && spec.score) compiled.score = check({ type: 'number', ...spec.score }, 'score');
        break;
      case 'list':
        compiled.value = check(spec.item, 'item');
        break;
      case 'hash':
      case 'stream':
        for (const [field, schema] of Object.entries(spec.fields ?? {})) compiled.fields.set(field, check(schema, `field ${field}`));
        if (spec.type === 'hash' && spec.dynamicFields) {
          compiled.dynamicField = {
            regex: patternRegex(spec.dynamicFields.pattern, spec.dynamicFields.params),
            check: check(spec.dynamicFields.value, 'dynamic fields'),
          };
        }
        break;
    }
    return compiled;
  });
  // Most literal characters first; ties keep declaration order (sort is stable).
  entries.sort((a, b) => b.literal - a.literal);
  const result = { entries };
  cache.set(contract, result);
  return result;
}

function literalLength(pattern: string): number {
  let length = pattern.length;
  for (const name of patternParams(pattern)) length -= name.length + 2;
  return length;
}

function valueCheck(ajv: Ajv, schema: JsonSchema, where: string): ValueCheck {
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema);
  } catch (err) {
    throw new ContractError(`${where}: invalid JSON Schema: ${(err as Error).message}`, { code: 'COORD_ERR_CONTRACT_SCHEMA' });
  }
  const types = schemaTypes(schema);
  return (text) => (validate(decodeValue(text, types)) ? undefined : describeErrors(validate.errors ?? []));
}

function schemaTypes(schema: JsonSchema): string[] {
  const type = schema.type;
  return Array.isArray(type) ? type.map(String) : typeof type === 'string' ? [type] : [];
}

const NUMBER = /^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/**
 * Decodes stored text by the schema's type, as core/contract.ts documents:
 * integer/number → number, boolean → 'true'|'false'|'1'|'0', object/array → JSON,
 * else the text. Text that does not decode stays text, so ajv reports the type it lacks.
 */
export function decodeValue(text: string, types: readonly string[]): unknown {
  if ((types.includes('integer') || types.includes('number')) && NUMBER.test(text)) return Number(text);
  // Redis spells infinite scores 'inf' / '-inf' (JavaScript: 'Infinity').
  if ((types.includes('integer') || types.includes('number')) && /^[+-]?inf(inity)?$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  if (types.includes('boolean') && /^(true|false|1|0)$/.test(text)) return text === 'true' || text === '1';
  if (types.includes('object') || types.includes('array')) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

function describeErrors(errors: readonly ErrorObject[]): string {
  return errors
    .map((e) => {
      const path = e.instancePath ? `at ${e.instancePath} ` : '';
      const allowed = (e.params as { allowedValues?: unknown[] }).allowedValues;
      return `${path}${e.message}${allowed ? ` (${allowed.map((v) => JSON.stringify(v)).join(', ')})` : ''}`;
    })
    .join('; ');
}
