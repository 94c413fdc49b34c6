// The keyspace reference made from a contract: markdown for people, JSON for tools.
import t from 'tap';
import { defineContract } from '../core/contract.ts';
import { contractJson, contractMarkdown, describeSchema } from '../core/contract-doc.ts';

const contract = defineContract({
  plugin: 'demo',
  source: 'seeds/000.txt',
  keys: {
    worker: {
      pattern: 'worker:{browserType}:{workerId}',
      type: 'hash',
      description: 'A registered browser server.',
      ttl: 'required',
      writers: ['worker'],
      params: { browserType: 'chromium|firefox' },
      derivable: true,
      fields: {
        status: { type: 'string', enum: ['available', 'draining'], description: 'what the worker accepts' },
        port: { type: 'integer', minimum: 1, maximum: 65535 },
        endpoint: { type: 'string', pattern: '^(ws|wss)://' },
      },
      required: ['status'],
    },
    counters: {
      pattern: 'cluster:active',
      type: 'hash',
      description: 'Open sessions per worker.',
      ttl: 'none',
      writers: ['proxy', 'reaper'],
      dynamicFields: { pattern: '{browserType}:{workerId}', value: { type: 'integer', minimum: 0 } },
    },
    command: {
      pattern: 'worker:cmd:{browserType}:{workerId}',
      type: 'string',
      description: 'Asks a worker to drain.',
      ttl: { min: 1, max: 60 },
      writers: ['proxy'],
      value: { type: 'string', const: 'shutdown' },
    },
    index: {
      pattern: 'index:{browserType}',
      type: 'zset',
      extension: true,
      description: 'Workers by last heartbeat.',
      ttl: 'none',
      writers: ['worker'],
      member: { type: 'string', minLength: 3 },
      score: { type: 'integer', minimum: 0 },
    },
    events: {
      pattern: 'events',
      type: 'stream',
      extension: true,
      description: 'What happened.',
      ttl: 'optional',
      writers: ['worker'],
      fields: { kind: { type: 'string' }, data: { type: 'object', properties: { id: { type: 'string' }, n: { type: 'integer' } }, required: ['id'] } },
      required: ['kind'],
      maxLength: 1000,
    },
    tags: { pattern: 'tags', type: 'set', description: 'Tags.', ttl: { max: 30 }, writers: ['proxy'], member: { type: 'string', format: 'uuid' } },
    jobs: { pattern: 'jobs', type: 'list', description: 'Jobs.', ttl: { min: 5 }, writers: ['proxy'], item: { type: 'array', items: { type: 'integer' }, maxItems: 4 } },
  },
  channels: {
    shutdown: {
      pattern: 'worker:cmd:{browserType}:{workerId}',
      description: 'Published so a worker drains at once.',
      message: { type: 'string', const: 'shutdown' },
      publishers: ['proxy'],
      subscribers: ['worker'],
    },
  },
});

const md = contractMarkdown(contract);

t.test('the markdown opens with the plugin, its source and a summary table of every key', async (t) => {
  t.match(md, /^# Keyspace of plugin `demo`\n/);
  t.match(md, 'Documented layout: `seeds/000.txt`.');
  t.match(md, '| key | type | TTL | written by | entry |');
  t.match(md, '| `worker:{browserType}:{workerId}` | hash | required (any length) | worker | `worker` |');
  t.match(md, '| `cluster:active` | hash | none (never expires) | proxy, reaper | `counters` |');
  t.match(md, '| `worker:cmd:{browserType}:{workerId}` | string | 1–60 s | proxy | `command` |');
  t.match(md, '| `index:{browserType}` *(extension)* | zset | none (never expires) | worker | `index` |');
  t.match(md, '| `tags` | set | ≤ 30 s | proxy | `tags` |');
  t.match(md, '| `jobs` | list | ≥ 5 s | proxy | `jobs` |');
  t.match(md, '| `events` *(extension)* | stream | optional | worker | `events` |');
});

t.test('each key has a section with its facts, in declaration order', async (t) => {
  const headings = [...md.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
  t.same(headings, [
    '`worker:{browserType}:{workerId}`',
    '`cluster:active`',
    '`worker:cmd:{browserType}:{workerId}`',
    '`index:{browserType}`',
    '`events`',
    '`tags`',
    '`jobs`',
    'Channels',
  ]);
  const worker = section(md, 'worker:{browserType}:{workerId}');
  t.match(worker, 'A registered browser server.');
  t.match(worker, '- **type:** hash');
  t.match(worker, '- **TTL:** required (any length)');
  t.match(worker, '- **written by:** worker');
  t.match(worker, '- **parameters:** `browserType` = `chromium|firefox`, `workerId` = `[^:]+`', 'parameters with their regexes');
  t.match(worker, '- **derivable:**');
  t.notMatch(worker, 'coord extension', 'a documented key is not marked as an extension');
});

t.test('hash fields are a table with required marks, readable schemas and notes', async (t) => {
  const worker = section(md, 'worker:{browserType}:{workerId}');
  t.match(worker, '| field | required | value | notes |');
  t.match(worker, '| `status` | yes | string, one of "available", "draining" | what the worker accepts |');
  t.match(worker, '| `port` |  | integer ≥ 1 ≤ 65535 |  |');
  t.match(worker, '| `endpoint` |  | string, matching `^(ws\\|wss)://` |  |', 'a pipe inside a table cell is escaped');
  t.match(section(md, 'cluster:active'), '**fields named** `{browserType}:{workerId}` (`browserType` = `[^:]+`, `workerId` = `[^:]+`): integer ≥ 0');
});

t.test('extensions are marked as coord additions; members, scores, items, values and stream entries are shown', async (t) => {
  t.match(md, "Keys marked **coord extension** are coord's additions beyond the documented layout.");
  const index = section(md, 'index:{browserType}');
  t.match(index, '**coord extension** — not part of the documented layout.');
  t.match(index, '**members:** string, length ≥ 3');
  t.match(index, '**scores:** integer ≥ 0');
  t.match(section(md, 'worker:cmd:{browserType}:{workerId}'), '**value:** string, exactly "shutdown"');
  t.match(section(md, 'tags'), '**members:** string, format uuid');
  t.match(section(md, 'jobs'), '**items:** array, ≤ 4 items, of integer');
  const events = section(md, 'events');
  t.match(events, '| `kind` | yes | string |  |');
  t.match(events, '| `data` |  | object, { id: string; n?: integer } |  |');
  t.match(events, 'Capped at **1000** entries');
});

t.test('channels get their own section', async (t) => {
  const channels = md.slice(md.indexOf('## Channels'));
  t.match(channels, '| channel | message | published by | subscribed by | description |');
  t.match(channels, '| `worker:cmd:{browserType}:{workerId}` | string, exactly "shutdown" | proxy | worker | Published so a worker drains at once. |');
  const none = contractMarkdown(defineContract({ plugin: 'quiet', keys: contract.keys }));
  t.notMatch(none, 'Channels', 'no channels section when there are none');
  t.notMatch(contractMarkdown(defineContract({ plugin: 'plain', keys: { a: contract.keys.tags } })), 'coord extension', 'no extension note without extensions');
});

t.test('describeSchema renders the common keywords', async (t) => {
  t.equal(describeSchema({ type: 'integer', minimum: 0 }), 'integer ≥ 0');
  t.equal(describeSchema({ type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 }), 'number > 0 < 1');
  t.equal(describeSchema({ type: ['string', 'null'], maxLength: 8 }), 'string or null, length ≤ 8');
  t.equal(describeSchema({ enum: [1, 2] }), 'one of 1, 2');
  t.equal(describeSchema({ anyOf: [{ type: 'integer' }, { type: 'string', const: 'max' }] }), '(integer | string, exactly "max")');
  t.equal(describeSchema({ type: 'integer', default: 5, description: 'how many' }), 'integer, default 5 — how many');
  t.equal(describeSchema({}), 'any');
});

t.test('contractJson is plain JSON with every entry, its params and schemas', async (t) => {
  const json = contractJson(contract) as { plugin: string; source: string; keys: Record<string, unknown>[]; channels: Record<string, unknown>[] };
  t.same(JSON.parse(JSON.stringify(json)), json, 'survives a JSON round trip unchanged');
  t.equal(json.plugin, 'demo');
  t.equal(json.source, 'seeds/000.txt');
  t.same(
    json.keys.map((k) => k.entry),
    ['worker', 'counters', 'command', 'index', 'events', 'tags', 'jobs'],
  );
  t.match(json.keys[0], {
    entry: 'worker',
    pattern: 'worker:{browserType}:{workerId}',
    type: 'hash',
    ttl: 'required',
    writers: ['worker'],
    params: { browserType: 'chromium|firefox', workerId: '[^:]+' },
    extension: false,
    derivable: true,
    required: ['status'],
    fields: { port: { type: 'integer', minimum: 1, maximum: 65535 } },
  });
  t.match(json.keys[2], { ttl: { min: 1, max: 60 }, value: { const: 'shutdown' } });
  t.match(json.keys[3], { extension: true, score: { type: 'integer' } });
  t.same(json.channels, [{ entry: 'shutdown', ...contract.channels!.shutdown }]);
});

/** The text of one key's section (from its heading to the next). */
function section(text: string, pattern: string): string {
  const start = text.indexOf(`## \`${pattern}\``);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end === -1 ? undefined : end);
}
