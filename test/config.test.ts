// The config loader: four layers in order, text coerced by the schema, every
// problem one line naming path, value, source and what was expected, frozen.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ConfigError, loadConfig, parseSetFlag } from '../core/config.ts';
import type { Plugin } from '../core/plugin.ts';

const grid = {
  name: 'browser-grid',
  version: '1.0.0',
  coord: '^0.1.0',
  description: 'test plugin',
  contract: { plugin: 'browser-grid', keys: {} },
  roles: { proxy: () => ({}), worker: () => ({}) },
  config: {
    schema: {
      type: 'object',
      properties: {
        maxConcurrentSessions: { type: 'integer', minimum: 1, default: 5 },
        heartbeatInterval: { type: 'number', exclusiveMinimum: 0, default: 5 },
        redisKeyTtl: { type: 'number', exclusiveMinimum: 0, default: 60 },
        headless: { type: 'boolean', default: true },
        browsers: { type: 'array', items: { enum: ['chromium', 'firefox'] }, default: ['chromium'] },
        limits: { type: 'object', additionalProperties: false, properties: { queue: { type: 'integer', default: 10 } }, default: {} },
      },
    },
    env: {
      MAX_CONCURRENT_SESSIONS: 'maxConcurrentSessions',
      HEADLESS: 'headless',
      BROWSERS: 'browsers',
      QUEUE_SIZE: 'limits.queue',
    },
    check: (c: { heartbeatInterval: number; redisKeyTtl: number }) =>
      c.heartbeatInterval < c.redisKeyTtl ? [] : [`redisKeyTtl (${c.redisKeyTtl}) must be greater than heartbeatInterval (${c.heartbeatInterval})`],
  },
} as unknown as Plugin;

const dir = mkdtempSync(join(tmpdir(), 'coord-config-'));
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** The one-line message of the ConfigError `fn` throws. */
function problem(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error('expected a ConfigError, got none');
}

t.test('defaults fill every section', async (t) => {
  const config = loadConfig({ plugins: [grid], env: {} });
  t.same(config, {
    redis: { keyPrefix: '' },
    log: { level: 'info', format: 'auto' },
    roles: [],
    roleStartTimeout: 60,
    roleStopTimeout: 30,
    plugins: {
      'browser-grid': { maxConcurrentSessions: 5, heartbeatInterval: 5, redisKeyTtl: 60, headless: true, browsers: ['chromium'], limits: { queue: 10 } },
    },
  });
});

t.test('defaults < file < env < flags, each layer winning over the one before', async (t) => {
  const yaml = file(
    'layers.yaml',
    [
      'redis:',
      '  url: redis://file:6379',
      '  keyPrefix: "{file}:"',
      'log: { level: warn }',
      'plugins:',
      '  browser-grid:',
      '    maxConcurrentSessions: 2',
      '    heartbeatInterval: 7',
      '    headless: false',
      '',
    ].join('\n'),
  );
  const fileOnly = loadConfig({ plugins: [grid], file: yaml, env: {} });
  t.equal(fileOnly.redis.url, 'redis://file:6379', 'file over default');
  t.equal(fileOnly.log.level, 'warn');
  t.equal(fileOnly.log.format, 'auto', 'a default the file does not touch stays');
  t.equal(fileOnly.plugins['browser-grid']!.heartbeatInterval, 7);

  const env = { REDIS_URL: 'redis://env:6379', MAX_CONCURRENT_SESSIONS: '3', COORD_LOG_LEVEL: 'debug' };
  const withEnv = loadConfig({ plugins: [grid], file: yaml, env });
  t.equal(withEnv.redis.url, 'redis://env:6379', 'env over file');
  t.equal(withEnv.plugins['browser-grid']!.maxConcurrentSessions, 3, "a plugin's documented env name, coerced to integer");
  t.equal(withEnv.log.level, 'debug');
  t.equal(withEnv.redis.keyPrefix, '{file}:', 'what env does not set comes from the file');

  const withFlags = loadConfig({
    plugins: [grid],
    file: yaml,
    env,
    flags: [
      { path: 'redis.url', value: 'redis://flag:6379', flag: '--redis' },
      { path: 'roles', value: ['worker'], flag: '--role' },
      parseSetFlag('browser-grid.maxConcurrentSessions=9'),
    ],
  });
  t.equal(withFlags.redis.url, 'redis://flag:6379', 'flag over env');
  t.equal(withFlags.plugins['browser-grid']!.maxConcurrentSessions, 9, '--set over env, coerced');
  t.same(withFlags.roles, ['worker']);
  t.equal(withFlags.plugins['browser-grid']!.heartbeatInterval, 7, 'still the file');
  t.equal(withFlags.plugins['browser-grid']!.headless, false, 'still the file');
});

t.test('COORD_REDIS_URL wins over REDIS_URL; the other COORD_ variables', async (t) => {
  const config = loadConfig({
    plugins: [grid],
    env: { REDIS_URL: 'redis://a:1', COORD_REDIS_URL: 'redis://b:2', COORD_KEY_PREFIX: '{g}:', COORD_LOG_FORMAT: 'json', COORD_ADAPTER: 'node-redis' },
  });
  t.same(config.redis, { url: 'redis://b:2', keyPrefix: '{g}:', adapter: 'node-redis' });
  t.equal(config.log.format, 'json');
});

t.test('environment text is coerced by the schema type', async (t) => {
  const config = loadConfig({ plugins: [grid], env: { HEADLESS: 'false', BROWSERS: 'chromium, firefox', QUEUE_SIZE: '25', MAX_CONCURRENT_SESSIONS: '' } });
  const section = config.plugins['browser-grid']!;
  t.equal(section.headless, false, "'false' → false");
  t.same(section.browsers, ['chromium', 'firefox'], 'a list is comma-separated');
  t.same(section.limits, { queue: 25 }, 'a nested path of the env map');
  t.equal(section.maxConcurrentSessions, 5, 'an empty variable counts as unset');
});

t.test('a file value is not coerced: "5" in a file is a string', async (t) => {
  const yaml = file('typed.yaml', 'plugins:\n  browser-grid:\n    maxConcurrentSessions: "5"\n');
  t.equal(
    problem(() => loadConfig({ plugins: [grid], file: yaml, env: {} })),
    'config: browser-grid.maxConcurrentSessions = "5" (from typed.yaml:3): expected integer >= 1',
  );
});

t.test('a bad value: path, value, source and what was expected, on one line', async (t) => {
  t.equal(
    problem(() => loadConfig({ plugins: [grid], env: { MAX_CONCURRENT_SESSIONS: 'abc' } })),
    'config: browser-grid.maxConcurrentSessions = "abc" (from env MAX_CONCURRENT_SESSIONS): expected integer >= 1',
  );
  t.equal(
    problem(() => loadConfig({ plugins: [grid], flags: [parseSetFlag('browser-grid.maxConcurrentSessions=0')] })),
    'config: browser-grid.maxConcurrentSessions = 0 (from flag --set browser-grid.maxConcurrentSessions): expected integer >= 1',
  );
  t.equal(
    problem(() => loadConfig({ plugins: [grid], env: { COORD_LOG_LEVEL: 'loud' } })),
    'config: log.level = "loud" (from env COORD_LOG_LEVEL): expected one of debug, info, warn, error',
  );
  t.equal(
    problem(() => loadConfig({ plugins: [grid], flags: [{ path: 'roles', value: ['wroker'], flag: '--role' }] })),
    'config: roles[0] = "wroker" (from flag --role): expected one of proxy, worker (did you mean "worker"?)',
  );
  t.equal(
    problem(() => loadConfig({ plugins: [grid], flags: [{ path: 'redis.url', value: 'http://user:s3cret@h', flag: '--redis' }] })),
    'config: redis.url = "http://user:***@h" (from flag --redis): expected redis://[user:password@]host[:port][/db], rediss://…, redis://host:port,host:port (cluster), redis+sentinel://host:port[,host:port…]/MASTER_NAME or embedded://',
    'a bad Redis URL, its password masked',
  );
  const yaml = file('bad-value.yaml', 'log:\n  level: info\n  format: fancy\n');
  t.equal(
    problem(() => loadConfig({ plugins: [grid], file: yaml })),
    'config: log.format = "fancy" (from bad-value.yaml:3): expected one of auto, json, pretty',
    'a file value names file and line',
  );
});

t.test('several problems: all of them, still one line', async (t) => {
  const err = (() => {
    try {
      loadConfig({ plugins: [grid], env: { COORD_LOG_LEVEL: 'loud', MAX_CONCURRENT_SESSIONS: 'x' } });
    } catch (e) {
      return e as ConfigError;
    }
  })();
  t.ok(err instanceof ConfigError);
  t.equal(err!.problems.length, 2);
  t.notMatch(err!.message, /\n/, 'one line');
  t.match(err!.message, /log\.level = "loud".*; config: browser-grid\.maxConcurrentSessions = "x"|maxConcurrentSessions = "x".*; config: log\.level/);
});

t.test('unknown keys are errors, with did-you-mean when close', async (t) => {
  t.equal(
    problem(() => loadConfig({ plugins: [grid], flags: [parseSetFlag('browser-grid.maxConcurentSessions=3')] })),
    'config: unknown key browser-grid.maxConcurentSessions (from flag --set browser-grid.maxConcurentSessions): did you mean "maxConcurrentSessions"?',
  );
  const top = file('top.yaml', 'redsi:\n  url: redis://x\n');
  t.equal(problem(() => loadConfig({ plugins: [grid], file: top })), 'config: unknown key redsi (from top.yaml:1): did you mean "redis"?');
  const far = file('far.yaml', 'log:\n  colour: red\n');
  t.equal(problem(() => loadConfig({ plugins: [grid], file: far })), 'config: unknown key log.colour (from far.yaml:2): expected one of level, format');
  const misplaced = file('misplaced.yaml', 'browser-grid:\n  maxConcurrentSessions: 3\n');
  t.equal(
    problem(() => loadConfig({ plugins: [grid], file: misplaced })),
    'config: unknown key browser-grid (from misplaced.yaml:1): plugin sections go under plugins: (plugins.browser-grid)',
  );
  const typo = file('typo.yaml', 'plugins:\n  browser-gird:\n    port: 1\n');
  t.equal(problem(() => loadConfig({ plugins: [grid], file: typo })), 'config: unknown key browser-gird (from typo.yaml:2): did you mean "browser-grid"?');
});

t.test("a section of a plugin that exists but does not run here is ignored", async (t) => {
  const yaml = file('other.yaml', 'plugins:\n  load-test:\n    users: 10\n  browser-grid:\n    maxConcurrentSessions: 4\n');
  const config = loadConfig({ plugins: [grid], knownPlugins: ['browser-grid', 'load-test'], file: yaml });
  t.same(Object.keys(config.plugins), ['browser-grid']);
  t.equal(config.plugins['browser-grid']!.maxConcurrentSessions, 4);
});

t.test("the plugin's own check runs on the valid config", async (t) => {
  t.equal(
    problem(() => loadConfig({ plugins: [grid], flags: [parseSetFlag('browser-grid.heartbeatInterval=90')] })),
    'config: browser-grid.redisKeyTtl (60) must be greater than heartbeatInterval (90)',
  );
});

t.test('file errors: missing, unparsable (file:line:col), not a mapping', async (t) => {
  const missing = join(dir, 'nope.yaml');
  t.equal(problem(() => loadConfig({ plugins: [grid], file: missing })), `config: cannot read config file ${missing}: no such file`);
  const broken = file('broken.yaml', 'redis:\n  url: [redis://x\nlog: {}\n');
  t.match(problem(() => loadConfig({ plugins: [grid], file: broken })), new RegExp(`^config: cannot parse ${broken}:\\d+:\\d+: \\S`));
  const json = file('broken.json', '{\n  "redis": { "url": "redis://x" },\n  "redis": {}\n}\n');
  t.match(problem(() => loadConfig({ plugins: [grid], file: json })), `config: cannot parse ${json}:3:3: Map keys must be unique`);
  const list = file('list.yaml', '- a\n- b\n');
  t.equal(
    problem(() => loadConfig({ plugins: [grid], file: list })),
    `config: ${list}: expected a mapping (redis:, log:, roles:, plugins:) at the top level, got a list`,
  );
  t.equal(problem(() => parseSetFlag('novalue')), 'config: --set "novalue": expected path=value, e.g. --set log.level=debug');
});

t.test('JSON files read like YAML ones', async (t) => {
  const json = file('config.json', JSON.stringify({ redis: { keyPrefix: '{j}:' }, plugins: { 'browser-grid': { browsers: ['firefox'] } } }));
  const config = loadConfig({ plugins: [grid], file: json });
  t.equal(config.redis.keyPrefix, '{j}:');
  t.same(config.plugins['browser-grid']!.browsers, ['firefox']);
});

t.test('the result is deeply frozen', async (t) => {
  const config = loadConfig({ plugins: [grid], env: {} });
  t.ok(Object.isFrozen(config));
  t.ok(Object.isFrozen(config.redis));
  t.ok(Object.isFrozen(config.plugins['browser-grid']));
  t.ok(Object.isFrozen(config.plugins['browser-grid']!.browsers));
  t.throws(() => {
    (config.log as { level: string }).level = 'debug';
  }, TypeError);
});

t.test("a plugin's format keyword is checked (ajv-formats loads only for a schema that names a format)", async (t) => {
  const withUuid = { ...grid, config: { schema: { type: 'object', properties: { session: { type: 'string', format: 'uuid' } } } } } as unknown as Plugin;
  const flag = (value: string) => [{ path: 'browser-grid.session', value }];
  t.equal(loadConfig({ plugins: [withUuid], flags: flag('0b8f5c2e-9a4b-4c1e-8f3d-2a6b7c8d9e0f') }).plugins['browser-grid']!.session, '0b8f5c2e-9a4b-4c1e-8f3d-2a6b7c8d9e0f');
  t.throws(() => loadConfig({ plugins: [withUuid], flags: flag('not-a-uuid') }), { message: /browser-grid\.session = "not-a-uuid".*expected string in format uuid/ });
  const { namesFormat } = await import('../core/ajv.ts');
  t.equal(namesFormat({ type: 'object', properties: { format: { enum: ['json', 'pretty'] } } }), false, 'a property called format (log.format) is not the keyword');
  t.equal(namesFormat({ type: 'object', properties: { at: { type: 'string', format: 'date-time' } } }), true);
});
