// The contract check on hand-made snapshots: every deviation kind is caught,
// conforming keys pass, the most specific pattern wins, the key prefix is
// honoured; and the key builders fill and type patterns as core/contract.ts says.
import t, { type Test } from 'tap';
import { ContractError, defineContract, fillPattern, keyBuilders, patternGlob, patternRegex } from '../core/contract.ts';
import { checkSnapshot, decodeValue, formatDeviations, matchEntry, type Deviation } from '../core/contract-check.ts';
import type { KeySnapshot } from '../core/snapshot.ts';

const contract = defineContract({
  plugin: 'demo',
  keys: {
    worker: {
      pattern: 'worker:{browserType}:{workerId}',
      type: 'hash',
      description: 'a worker',
      ttl: 'required',
      writers: ['worker'],
      fields: {
        status: { type: 'string', enum: ['available', 'draining'] },
        port: { type: 'integer', minimum: 1, maximum: 65535 },
        ratio: { type: 'number' },
        busy: { type: 'boolean' },
        meta: { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'] },
        endpoint: { type: 'string', format: 'uri' },
      },
      required: ['status', 'port'],
    },
    command: {
      pattern: 'worker:cmd:{browserType}:{workerId}',
      type: 'string',
      description: 'a shutdown command',
      ttl: { min: 10, max: 60 },
      writers: ['proxy'],
      value: { type: 'string', const: 'shutdown' },
    },
    counters: {
      pattern: 'cluster:active',
      type: 'hash',
      description: 'counters',
      ttl: 'none',
      writers: ['proxy'],
      fields: { total: { type: 'integer', minimum: 0 } },
      dynamicFields: { pattern: '{browserType}:{workerId}', value: { type: 'integer', minimum: 0 }, params: { browserType: 'chromium|firefox' } },
    },
    members: {
      pattern: 'members:{group}',
      type: 'set',
      description: 'a set',
      ttl: 'optional',
      writers: ['worker'],
      member: { type: 'string', pattern: '^[a-z]+$' },
    },
    ranking: {
      pattern: 'ranking',
      type: 'zset',
      description: 'a zset',
      ttl: 'none',
      writers: ['worker'],
      member: { type: 'string', minLength: 2 },
      score: { type: 'integer', minimum: 0 },
    },
    queue: {
      pattern: 'queue:{name}',
      type: 'list',
      description: 'a list',
      ttl: 'optional',
      writers: ['proxy'],
      item: { type: 'array', items: { type: 'integer' } },
    },
    events: {
      pattern: 'events',
      type: 'stream',
      description: 'a stream',
      ttl: 'none',
      writers: ['worker'],
      fields: { kind: { type: 'string', enum: ['start', 'stop'] }, at: { type: 'integer' } },
      required: ['kind'],
      maxLength: 3,
    },
  },
});

const goodWorker: KeySnapshot = {
  key: 'worker:chromium:a1',
  type: 'hash',
  ttlMs: 55_000,
  value: { status: 'available', port: '9222', ratio: '0.5', busy: '0', meta: '{"zone":"eu"}', endpoint: 'ws://10.0.0.1:9222/x' },
};
const good: KeySnapshot[] = [
  goodWorker,
  { key: 'worker:cmd:chromium:a1', type: 'string', ttlMs: 59_500, value: 'shutdown' },
  { key: 'cluster:active', type: 'hash', ttlMs: null, value: { total: '3', 'chromium:a1': '2', 'firefox:b2': '1' } },
  { key: 'members:x', type: 'set', ttlMs: null, value: ['abc', 'def'] },
  { key: 'members:y', type: 'set', ttlMs: 1000, value: ['ghi'] },
  { key: 'ranking', type: 'zset', ttlMs: null, value: [{ member: 'ab', score: 0 }, { member: 'cd', score: 7 }] },
  { key: 'queue:q', type: 'list', ttlMs: null, value: ['[1,2]', '[]'] },
  { key: 'events', type: 'stream', ttlMs: null, value: [{ id: '1-0', fields: { kind: 'start', at: '1700000000000' } }, { id: '2-0', fields: { kind: 'stop' } }] },
];

/** Checks one snapshot and returns its deviations (kind + message). */
const check = (snap: KeySnapshot[], keyPrefix?: string): Deviation[] => checkSnapshot(contract, snap, { keyPrefix });

/** Asserts exactly one deviation of this kind whose message names all of `words`. */
function expectOne(t: Test, devs: Deviation[], kind: Deviation['kind'], words: string[]): void {
  t.equal(devs.length, 1, `one deviation (got: ${formatDeviations(devs) || 'none'})`);
  const d = devs[0];
  if (!d) return;
  t.equal(d.kind, kind);
  t.notOk(d.message.includes('\n'), 'the message is one line');
  for (const word of words) t.match(d.message, word, `the message says ${JSON.stringify(word)}`);
}

t.test('a conforming snapshot has no deviations', async (t) => {
  t.same(check(good), []);
});

t.test('unknown-key: a key matching no pattern', async (t) => {
  expectOne(t, check([{ key: 'workers:chromium', type: 'set', ttlMs: null, value: ['a'] }]), 'unknown-key', ['workers:chromium', 'demo']);
  // A parameter restricted by `params` does not match other values.
  expectOne(t, check([{ key: 'cluster:active:x', type: 'hash', ttlMs: null, value: {} }]), 'unknown-key', ['cluster:active:x']);
  t.equal(check([{ key: 'worker:chromium:a1:extra', type: 'hash', ttlMs: 1, value: {} }])[0]?.kind, 'unknown-key', 'one more segment is another key');
});

t.test('wrong-type: a key of the wrong Redis type', async (t) => {
  expectOne(t, check([{ key: 'worker:chromium:a1', type: 'string', ttlMs: 1000, value: 'x' }]), 'wrong-type', ['worker:chromium:a1', 'is a string', 'expected a hash']);
  expectOne(t, check([{ key: 'ranking', type: 'other', redisType: 'ReJSON-RL', ttlMs: null, value: null }]), 'wrong-type', ['ReJSON-RL', 'expected a zset']);
});

t.test('missing-field: a required hash field is absent', async (t) => {
  const { port: _port, ...rest } = goodWorker.value as Record<string, string>;
  const devs = check([{ ...goodWorker, value: rest } as KeySnapshot]);
  expectOne(t, devs, 'missing-field', ['worker:chromium:a1', '"port"', 'required']);
  t.equal(devs[0]?.entry, 'worker', 'the deviation names the contract entry');
});

t.test('bad-value: hash field values are decoded by type and checked with the schema', async (t) => {
  const withField = (field: string, value: string) => check([{ ...goodWorker, value: { ...(goodWorker.value as object), [field]: value } } as KeySnapshot]);
  expectOne(t, withField('port', 'abc'), 'bad-value', ['"port"', '"abc"', 'must be integer']);
  expectOne(t, withField('port', '1.5'), 'bad-value', ['"port"', 'must be integer']);
  expectOne(t, withField('port', '70000'), 'bad-value', ['"port"', 'must be <= 65535']);
  expectOne(t, withField('port', ''), 'bad-value', ['"port"', 'must be integer']);
  expectOne(t, withField('status', 'gone'), 'bad-value', ['"status"', '"gone"', 'available', 'draining']);
  expectOne(t, withField('ratio', 'NaN'), 'bad-value', ['"ratio"', 'must be number']);
  expectOne(t, withField('busy', 'yes'), 'bad-value', ['"busy"', 'must be boolean']);
  expectOne(t, withField('meta', '{"zone":'), 'bad-value', ['"meta"', 'must be object']);
  expectOne(t, withField('meta', '{"region":"eu"}'), 'bad-value', ['"meta"', "must have required property 'zone'"]);
  expectOne(t, withField('endpoint', 'not a uri'), 'bad-value', ['"endpoint"', 'must match format "uri"']);
  t.same(withField('busy', 'true'), [], "'true' is a boolean");
  t.same(withField('ratio', '-2.5e3'), [], 'exponent notation is a number');
});

t.test('bad-value: dynamic hash fields, set members, zset members and scores, list items, string values', async (t) => {
  expectOne(t, check([{ key: 'cluster:active', type: 'hash', ttlMs: null, value: { 'chromium:a1': '-1' } }]), 'bad-value', ['"chromium:a1"', '"-1"', 'must be >= 0']);
  expectOne(t, check([{ key: 'members:x', type: 'set', ttlMs: null, value: ['abc', 'A-1'] }]), 'bad-value', ['member "A-1"', 'must match pattern']);
  expectOne(t, check([{ key: 'ranking', type: 'zset', ttlMs: null, value: [{ member: 'a', score: 1 }] }]), 'bad-value', ['member "a"', 'fewer than 2 characters']);
  expectOne(t, check([{ key: 'ranking', type: 'zset', ttlMs: null, value: [{ member: 'ab', score: 1.5 }] }]), 'bad-value', ['score 1.5', '"ab"', 'must be integer']);
  expectOne(t, check([{ key: 'ranking', type: 'zset', ttlMs: null, value: [{ member: 'ab', score: -1 }] }]), 'bad-value', ['score -1', 'must be >= 0']);
  expectOne(t, check([{ key: 'queue:q', type: 'list', ttlMs: null, value: ['[1,2]', '["x"]'] }]), 'bad-value', ['item "[\\"x\\"]"', 'at /0 must be integer']);
  expectOne(t, check([{ key: 'worker:cmd:chromium:a1', type: 'string', ttlMs: 30_000, value: 'reboot' }]), 'bad-value', ['value "reboot"', 'must be equal to constant']);
});

t.test('bad-value: stream entry fields; missing-field: a required entry field', async (t) => {
  expectOne(t, check([{ key: 'events', type: 'stream', ttlMs: null, value: [{ id: '5-0', fields: { kind: 'boom' } }] }]), 'bad-value', ['entry 5-0', '"kind"', '"boom"']);
  expectOne(t, check([{ key: 'events', type: 'stream', ttlMs: null, value: [{ id: '5-0', fields: { at: '12' } }] }]), 'missing-field', ['entry 5-0', '"kind"']);
});

t.test('unknown-field: hash fields neither named nor dynamic, stream entry fields not declared', async (t) => {
  expectOne(t, check([{ ...goodWorker, value: { ...(goodWorker.value as object), wsEndpoint: 'ws://x' } } as KeySnapshot]), 'unknown-field', [
    '"wsEndpoint"',
    'status, port',
  ]);
  expectOne(t, check([{ key: 'cluster:active', type: 'hash', ttlMs: null, value: { 'webkit:a1': '1' } }]), 'unknown-field', ['"webkit:a1"', 'matching']);
  expectOne(t, check([{ key: 'events', type: 'stream', ttlMs: null, value: [{ id: '1-0', fields: { kind: 'start', extra: 'x' } }] }]), 'unknown-field', ['entry 1-0', '"extra"']);
});

t.test('TTL rules: none, required, bounds, optional', async (t) => {
  expectOne(t, check([{ key: 'ranking', type: 'zset', ttlMs: 5000, value: [{ member: 'ab', score: 1 }] }]), 'unexpected-ttl', ['ranking', 'expires in 5 s', 'no TTL']);
  expectOne(t, check([{ ...goodWorker, ttlMs: null } as KeySnapshot]), 'missing-ttl', ['worker:chromium:a1', 'has no TTL']);
  expectOne(t, check([{ key: 'worker:cmd:chromium:a1', type: 'string', ttlMs: null, value: 'shutdown' }]), 'missing-ttl', ['between 10 s and 60 s']);
  expectOne(t, check([{ key: 'worker:cmd:chromium:a1', type: 'string', ttlMs: 120_000, value: 'shutdown' }]), 'ttl-out-of-bounds', ['expires in 120 s', 'between 10 s and 60 s']);
  expectOne(t, check([{ key: 'worker:cmd:chromium:a1', type: 'string', ttlMs: 5_000, value: 'shutdown' }]), 'ttl-out-of-bounds', ['expires in 5 s']);
  t.same(check([{ key: 'worker:cmd:chromium:a1', type: 'string', ttlMs: 60_000, value: 'shutdown' }]), [], 'exactly the max is within bounds');
  t.same(check([{ key: 'worker:cmd:chromium:a1', type: 'string', ttlMs: 9_400, value: 'shutdown' }]), [], 'a key set with EX 10, read 0.6 s later, is within bounds');
  t.same(check([{ key: 'members:x', type: 'set', ttlMs: null, value: ['a'] }, { key: 'members:y', type: 'set', ttlMs: 1, value: ['a'] }]), [], 'optional: either way');
});

t.test('stream-too-long: more entries than maxLength', async (t) => {
  const entries = [1, 2, 3, 4].map((i) => ({ id: `${i}-0`, fields: { kind: 'start' } }));
  expectOne(t, check([{ key: 'events', type: 'stream', ttlMs: null, value: entries }]), 'stream-too-long', ['has 4 entries', 'at most 3']);
  t.same(check([{ key: 'events', type: 'stream', ttlMs: null, value: entries.slice(0, 3) }]), [], 'exactly maxLength is fine');
});

t.test('several deviations of one key are all reported, in key order', async (t) => {
  const devs = check([
    { key: 'worker:chromium:b2', type: 'hash', ttlMs: null, value: { status: 'bad', extra: '1' } },
    { key: 'nope', type: 'string', ttlMs: null, value: '' },
  ]);
  t.same(
    devs.map((d) => d.kind).sort(),
    ['bad-value', 'missing-field', 'missing-ttl', 'unknown-field', 'unknown-key'],
  );
  const text = formatDeviations(devs);
  t.equal(text.split('\n').length, devs.length, 'formatDeviations writes one line per deviation');
  t.match(text, /^missing-ttl: key worker:chromium:b2 \(worker\): has no TTL/m);
});

t.test('pattern specificity: the pattern with the most literal characters wins', async (t) => {
  const loose = defineContract({
    plugin: 'spec',
    keys: {
      worker: { pattern: 'worker:{type}:{id}', type: 'hash', description: '', ttl: 'optional', writers: [], params: { id: '.+' }, fields: { a: { type: 'string' } } },
      command: { pattern: 'worker:cmd:{type}:{id}', type: 'string', description: '', ttl: 'optional', writers: [], value: { type: 'string' } },
      short: { pattern: 'worker:cmd:{id}', type: 'set', description: '', ttl: 'optional', writers: [], member: { type: 'string' } },
    },
  });
  // 'worker:cmd:chromium:a1' matches worker (type=cmd, id='chromium:a1') and command.
  t.ok(patternRegex('worker:{type}:{id}', { id: '.+' }).test('worker:cmd:chromium:a1'), 'both patterns match the key');
  t.equal(matchEntry(loose, 'worker:cmd:chromium:a1'), 'command');
  t.equal(matchEntry(loose, 'worker:cmd:a1'), 'short', 'worker:cmd:{id} beats worker:{type}:{id}');
  t.equal(matchEntry(loose, 'worker:chromium:a1'), 'worker');
  t.equal(matchEntry(loose, 'other'), undefined);
  t.same(checkSnapshot(loose, [{ key: 'worker:cmd:chromium:a1', type: 'string', ttlMs: null, value: 'shutdown' }]), [], 'checked as a command, not as a worker');
  const wrong = checkSnapshot(loose, [{ key: 'worker:cmd:chromium:a1', type: 'hash', ttlMs: null, value: { a: 'x' } }]);
  t.equal(wrong[0]?.entry, 'command', 'the specific entry is the one held to');
  t.equal(wrong[0]?.kind, 'wrong-type');
});

t.test('keyPrefix: stripped before matching; keys outside it are not ours', async (t) => {
  const prefixed = good.map((s) => ({ ...s, key: `{grid}:${s.key}` }));
  t.same(check(prefixed, '{grid}:'), [], 'the prefixed keyspace conforms');
  const foreign: KeySnapshot[] = [
    { key: 'someone:else', type: 'string', ttlMs: null, value: 'x' },
    { key: '{other}:worker:chromium:a1', type: 'string', ttlMs: null, value: 'x' },
  ];
  t.same(check([...prefixed, ...foreign], '{grid}:'), [], 'keys without the prefix are ignored');
  const devs = check([{ key: '{grid}:junk', type: 'string', ttlMs: null, value: '' }], '{grid}:');
  expectOne(t, devs, 'unknown-key', ['{grid}:junk', 'under prefix {grid}:']);
  t.equal(devs[0]?.key, '{grid}:junk', 'the deviation carries the full key');
  t.equal(check(prefixed)[0]?.kind, 'unknown-key', 'without the prefix option, prefixed keys match nothing');
});

t.test('values are decoded by the schema type', async (t) => {
  t.equal(decodeValue('42', ['integer']), 42);
  t.equal(decodeValue('-0.5', ['number']), -0.5);
  t.equal(decodeValue('inf', ['number']), Infinity);
  t.equal(decodeValue('0x10', ['integer']), '0x10', 'only decimal text is a number');
  t.equal(decodeValue(' 5', ['integer']), ' 5', 'padding is not a number');
  t.equal(decodeValue('1', ['boolean']), true);
  t.equal(decodeValue('false', ['boolean']), false);
  t.same(decodeValue('{"a":1}', ['object']), { a: 1 });
  t.same(decodeValue('[1]', ['array', 'null']), [1]);
  t.equal(decodeValue('42', ['string']), '42');
  t.equal(decodeValue('42', []), '42', 'no type: the text');
});

t.test('an invalid schema in a contract is one clear ContractError', async (t) => {
  const bad = defineContract({
    plugin: 'broken',
    keys: { k: { pattern: 'k', type: 'string', description: '', ttl: 'none', writers: [], value: { type: 'string', minLenght: 3 } } },
  });
  t.throws(() => checkSnapshot(bad, []), { name: 'ContractError', message: /contract broken, key k, value: invalid JSON Schema: .*minLenght/ });
});

t.test('validators are compiled once per contract, not per value', async (t) => {
  const many: KeySnapshot[] = Array.from({ length: 2000 }, (_, i) => ({ ...goodWorker, key: `worker:chromium:w${i}` }));
  check(good); // warm the cache
  const start = performance.now();
  t.same(check(many), []);
  t.ok(performance.now() - start < 1000, 'checking 2000 hashes takes well under a second');
});

t.test('key builders fill patterns under the prefix and reject bad parameters', async (t) => {
  const keys = keyBuilders(contract, '{grid}:');
  t.equal(keys.worker({ browserType: 'chromium', workerId: 'a1' }), '{grid}:worker:chromium:a1');
  t.equal(keys.command({ browserType: 'firefox', workerId: 7 }), '{grid}:worker:cmd:firefox:7', 'numbers are written as text');
  t.equal(keys.ranking(), '{grid}:ranking', 'a pattern without parameters takes none');
  t.ok(Object.isFrozen(keys), 'the builders are frozen');
  t.throws(() => keys.worker({ browserType: 'chromium' } as never), { name: 'ContractError', message: 'key pattern worker:{browserType}:{workerId}: parameter "workerId" is missing' });
  t.throws(() => keys.worker({ browserType: '', workerId: 'a' }), { name: 'ContractError', message: /parameter "browserType" is missing/ });
  t.throws(() => keys.worker({ browserType: 'a:b', workerId: 'x' }), { name: 'ContractError', message: /parameter browserType="a:b" does not match/ });
  t.throws(() => fillPattern('q:{name}', { name: 'x' }, { name: '[a-z]{3}' }), { message: /name="x" does not match \^\(\?:\[a-z\]\{3\}\)\$/ });
  t.equal(patternGlob('a*:{x}:[y]'), 'a\\*:*:\\[y\\]', 'the SCAN glob escapes literal glob characters');

  // Typing: a missing parameter, an unknown one, or an unknown entry does not compile.
  if (false as boolean) {
    // @ts-expect-error workerId is missing
    keys.worker({ browserType: 'chromium' });
    // @ts-expect-error unknownParam is not a parameter of the pattern
    keys.worker({ browserType: 'chromium', workerId: 'a', unknownParam: 1 });
    // @ts-expect-error no entry of that name
    keys.nothing();
    // @ts-expect-error the pattern has parameters
    keys.worker();
  }
});

t.test('defineContract rejects a malformed contract with one clear error', async (t) => {
  const base = { description: '', ttl: 'none' as const, writers: [] };
  t.throws(() => defineContract({ plugin: 'p', keys: { a: { ...base, pattern: 'has space', type: 'string', value: {} } } }), {
    name: 'ContractError',
    message: /contract p, key a: pattern "has space"/,
  });
  t.throws(() => defineContract({ plugin: 'p', keys: { a: { ...base, pattern: 'a', type: 'bitmap' as 'string', value: {} } } }), { message: /type "bitmap"/ });
  t.throws(() => defineContract({ plugin: 'p', keys: { a: { ...base, pattern: 'a:{x}', type: 'string', value: {}, params: { y: '.+' } } } }), { message: /params names "y"/ });
  t.throws(() => defineContract({ plugin: 'p', keys: { a: { ...base, pattern: 'a', type: 'string', value: {}, derivable: true } } }), { message: /derivable keys need a parameter/ });
  t.type(new ContractError('x'), Error);
});
