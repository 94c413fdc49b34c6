// The reference of a plugin's keyspace, made from its contract: markdown for
// people (`coord schema --plugin P`) and plain JSON for tools (`--format json`).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { patternParams, type ContractSpec, type JsonSchema, type KeySpec, type TtlRule } from './contract.ts';
import { findUp } from './paths.ts';

/**
 * Where a user reads the layout a contract implements: the page coord ships
 * for it (docs/layouts/<plugin>.md, in the package), else the contract's
 * `source` — unless that is a path outside the package, which users do not have.
 */
export function layoutReference(contract: ContractSpec): string | undefined {
  let docs: string | undefined;
  try {
    docs = findUp(import.meta.url, 'docs/layouts');
  } catch {
    docs = undefined; // not shipped beside this copy
  }
  if (docs && existsSync(join(docs, `${contract.plugin}.md`))) return `docs/layouts/${contract.plugin}.md`;
  return contract.source && !contract.source.startsWith('../') ? contract.source : undefined;
}

/** The contract as plain JSON: entries in declaration order, schemas as declared. */
export function contractJson(contract: ContractSpec): Record<string, unknown> {
  const keys = Object.entries(contract.keys).map(([entry, spec]) => ({
    entry,
    ...spec,
    params: Object.fromEntries(patternParams(spec.pattern).map((p) => [p, spec.params?.[p] ?? '[^:]+'])),
    extension: spec.extension ?? false,
    derivable: spec.derivable ?? false,
  }));
  const channels = Object.entries(contract.channels ?? {}).map(([entry, spec]) => ({ entry, ...spec }));
  // A round trip through JSON drops undefined and makes sure the result is plain data.
  return JSON.parse(JSON.stringify({ plugin: contract.plugin, source: layoutReference(contract), keys, channels }));
}

/** The markdown reference: a summary table, one section per key, then the channels. */
export function contractMarkdown(contract: ContractSpec): string {
  const keys = Object.entries(contract.keys);
  const channels = Object.entries(contract.channels ?? {});
  const out: string[] = [`# Keyspace of plugin \`${contract.plugin}\``, ''];
  const layout = layoutReference(contract);
  if (layout) out.push(`Documented layout: \`${layout}\`${layout.startsWith('docs/layouts/') ? ' (in the coordkit package)' : ''}.`, '');
  out.push(
    'Every key below lives under the plugin\'s key prefix (`<plugin>.keyPrefix`, else `redis.keyPrefix`, e.g. `{grid}:`). ' +
      'A `{name}` in a pattern is a parameter: any text without `:` unless its row says otherwise.',
    '',
  );
  if (keys.some(([, k]) => k.extension)) {
    out.push('Keys marked **coord extension** are coord\'s additions beyond the documented layout.', '');
  }
  out.push(
    table(
      ['key', 'type', 'TTL', 'written by', 'entry'],
      keys.map(([entry, k]) => [code(k.pattern) + (k.extension ? ' *(extension)*' : ''), k.type, ttlText(k.ttl), k.writers.join(', '), code(entry)]),
    ),
    '',
  );
  for (const [entry, spec] of keys) out.push(...keySection(entry, spec));
  if (channels.length) {
    out.push('## Channels', '', 'Pub/sub channels, published under the same key prefix. Messages are not stored: they reach only current subscribers.', '');
    out.push(
      table(
        ['channel', 'message', 'published by', 'subscribed by', 'description'],
        channels.map(([, c]) => [code(c.pattern), describeSchema(c.message), c.publishers.join(', '), c.subscribers.join(', '), c.description]),
      ),
      '',
    );
  }
  return out.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd() + '\n';
}

function keySection(entry: string, spec: KeySpec): string[] {
  const out = [`## \`${spec.pattern}\``, ''];
  if (spec.extension) out.push('**coord extension** — not part of the documented layout.', '');
  out.push(spec.description, '');
  const facts = [
    `- **entry:** \`${entry}\` (\`keys.${entry}(…)\` in code, \`KEYS[i] ${entry}\` in Lua headers)`,
    `- **type:** ${spec.type}`,
    `- **TTL:** ${ttlText(spec.ttl)}`,
    `- **written by:** ${spec.writers.join(', ') || '—'}`,
  ];
  const params = patternParams(spec.pattern);
  if (params.length) facts.push(`- **parameters:** ${params.map((p) => `\`${p}\` = \`${spec.params?.[p] ?? '[^:]+'}\``).join(', ')}`);
  if (spec.derivable) facts.push('- **derivable:** Lua scripts may build this key from an index member (prefix + head passed in ARGV)');
  out.push(...facts, '');
  out.push(...contents(spec));
  return out;
}

function contents(spec: KeySpec): string[] {
  switch (spec.type) {
    case 'string':
      return [`**value:** ${describeSchema(spec.value)}`, ''];
    case 'set':
      return [`**members:** ${describeSchema(spec.member)}`, ''];
    case 'list':
      return [`**items:** ${describeSchema(spec.item)}`, ''];
    case 'zset':
      return [`**members:** ${describeSchema(spec.member)}`, '', `**scores:** ${describeSchema({ type: 'number', ...spec.score })}`, ''];
    case 'hash': {
      const out = fieldTable(spec.fields ?? {}, spec.required ?? []);
      if (spec.dynamicFields) {
        const d = spec.dynamicFields;
        const params = patternParams(d.pattern).map((p) => `\`${p}\` = \`${d.params?.[p] ?? '[^:]+'}\``);
        out.push(`**fields named** \`${d.pattern}\`${params.length ? ` (${params.join(', ')})` : ''}: ${describeSchema(d.value)}`, '');
      }
      if (!spec.fields && !spec.dynamicFields) out.push('No fields are declared.', '');
      return out;
    }
    case 'stream': {
      const out = ['**each entry:**', '', ...fieldTable(spec.fields, spec.required ?? [])];
      if (spec.maxLength !== undefined) out.push(`Capped at **${spec.maxLength}** entries (XADD MAXLEN).`, '');
      return out;
    }
  }
}

function fieldTable(fields: Readonly<Record<string, JsonSchema>>, required: readonly string[]): string[] {
  const rows = Object.entries(fields).map(([name, schema]) => [
    code(name),
    required.includes(name) ? 'yes' : '',
    describeSchema(schema, false),
    typeof schema.description === 'string' ? schema.description : '',
  ]);
  if (!rows.length) return [];
  return [table(['field', 'required', 'value', 'notes'], rows), ''];
}

function ttlText(rule: TtlRule): string {
  if (rule === 'none') return 'none (never expires)';
  if (rule === 'required') return 'required (any length)';
  if (rule === 'optional') return 'optional';
  if (rule.min !== undefined && rule.max !== undefined) return `${rule.min}–${rule.max} s`;
  if (rule.min !== undefined) return `≥ ${rule.min} s`;
  if (rule.max !== undefined) return `≤ ${rule.max} s`;
  return 'required (any length)';
}

/**
 * A JSON Schema in a few words: `integer ≥ 0`, `string, one of "a", "b"`,
 * `string matching `^wss?://``, `object { id: string, n?: integer }`.
 */
export function describeSchema(schema: JsonSchema, withDescription = true): string {
  const type = Array.isArray(schema.type) ? schema.type.join(' or ') : typeof schema.type === 'string' ? schema.type : '';
  const range = [
    bound('≥', schema.minimum),
    bound('>', schema.exclusiveMinimum),
    bound('≤', schema.maximum),
    bound('<', schema.exclusiveMaximum),
    bound('multiple of', schema.multipleOf),
  ];
  // A range reads best right after the type: 'integer ≥ 0'.
  const words = [[type, ...range].filter(Boolean).join(' ')];
  if ('const' in schema) words.push(`exactly ${JSON.stringify(schema.const)}`);
  if (Array.isArray(schema.enum)) words.push(`one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`);
  if (typeof schema.pattern === 'string') words.push(`matching \`${schema.pattern}\``);
  if (typeof schema.format === 'string') words.push(`format ${schema.format}`);
  const length = [bound('≥', schema.minLength), bound('≤', schema.maxLength)].filter(Boolean);
  if (length.length) words.push(`length ${length.join(' ')}`);
  const items = [bound('≥', schema.minItems), bound('≤', schema.maxItems)].filter(Boolean);
  if (items.length) words.push(`${items.join(' ')} items`);
  if (isSchema(schema.items)) words.push(`of ${describeSchema(schema.items, false)}`);
  if (isSchema(schema.properties)) {
    const required = Array.isArray(schema.required) ? schema.required : [];
    const props = Object.entries(schema.properties).map(
      ([name, s]) => `${name}${required.includes(name) ? '' : '?'}: ${isSchema(s) ? describeSchema(s, false) : 'any'}`,
    );
    words.push(`{ ${props.join('; ')} }`);
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const list = schema[key];
    if (Array.isArray(list)) words.push(`(${list.map((s) => (isSchema(s) ? describeSchema(s, false) : 'any')).join(' | ')})`);
  }
  if ('default' in schema) words.push(`default ${JSON.stringify(schema.default)}`);
  let text = words.filter(Boolean).join(', ') || 'any';
  if (withDescription && typeof schema.description === 'string') text += ` — ${schema.description}`;
  return text;
}

function bound(sign: string, value: unknown): string {
  return typeof value === 'number' ? `${sign} ${value}` : '';
}

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function code(text: string): string {
  return `\`${text}\``;
}

/** A markdown table; pipes inside cells (regex alternations) are escaped. */
function table(head: string[], rows: string[][]): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');
}
