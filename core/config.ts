// The effective config of a process, from four layers merged in one place:
// defaults (the schemas) < config file (JSON or YAML) < environment < flags.
// It is validated once, against the union of the active plugins' schemas,
// and frozen. Every problem is reported as one line naming the path, the
// value, where the value came from and what was expected.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { ErrorObject } from 'ajv';
import type { Node as YamlNode } from 'yaml';
import { createAjv, namesFormat } from './ajv.ts';
import { configValidator, noteCompiles } from './config-validator.ts';
import type { JsonSchema } from './contract.ts';
import { didYouMean } from './did-you-mean.ts';
import { yaml } from './lazy-module.ts';
import type { GlobalConfig, Plugin } from './plugin.ts';
import { mask, parseRedisUrl, UrlError } from './url.ts';
import { ConfigError, type CoordErrorCode } from './errors.ts';

/**
 * The effective config of a process, as loadConfig returns it (frozen): the
 * shared settings (redis, log), the roles to start and each active plugin's
 * section.
 */
export interface CoordConfig extends GlobalConfig {
  /** Roles to start (`--role`); empty: the plugins' default roles. */
  roles: string[];
  /** Each active plugin's section, with its schema's defaults filled in. */
  plugins: Record<string, Record<string, unknown>>;
  /** Seconds a role may take to start (its factory and start()); past it the process stops the roles started and fails (default 60). */
  roleStartTimeout: number;
  /** Seconds a role may take to stop; past it the process logs it and stops the others (default 30). */
  roleStopTimeout: number;
}


/**
 * What loadConfig builds the config from, in the order it applies them:
 * schema defaults < `file` < `env` < `flags`, for the plugins named.
 */
export interface ConfigInput {
  /** The plugins of this process: their sections are validated and filled. */
  plugins: readonly Plugin[];
  /** Other plugins that exist: a file may hold their sections, which are ignored here. */
  knownPlugins?: readonly string[];
  /** Path of a JSON or YAML config file. */
  file?: string;
  env?: Readonly<Record<string, string | undefined>>;
  flags?: readonly ConfigFlag[];
  /** The names redis.adapter may take (the CLI passes its adapters'); default: any text, checked when the backend is made. */
  adapters?: readonly string[];
}

export { ConfigError } from './errors.ts';
export { type ConfigFlag, parseSetFlag, schemaAt } from './config-flags.ts';
import { type ConfigFlag, schemaAt } from './config-flags.ts';

/** Environment variables every process reads, in order (a later one wins). */
const GLOBAL_ENV: readonly [name: string, path: string][] = [
  ['REDIS_URL', 'redis.url'],
  ['COORD_REDIS_URL', 'redis.url'],
  ['COORD_ADAPTER', 'redis.adapter'],
  ['COORD_KEY_PREFIX', 'redis.keyPrefix'],
  ['COORD_REDIS_PASSWORD_FILE', 'redis.passwordFile'],
  ['COORD_REDIS_SENTINELS', 'redis.sentinels'],
  ['COORD_REDIS_MASTER_NAME', 'redis.masterName'],
  ['COORD_REDIS_SENTINEL_USERNAME', 'redis.sentinelUsername'],
  ['COORD_REDIS_SENTINEL_PASSWORD', 'redis.sentinelPassword'],
  ['COORD_REDIS_SENTINEL_PASSWORD_FILE', 'redis.sentinelPasswordFile'],
  ['COORD_REDIS_TLS_CA_FILE', 'redis.tls.caFile'],
  ['COORD_REDIS_TLS_CERT_FILE', 'redis.tls.certFile'],
  ['COORD_REDIS_TLS_KEY_FILE', 'redis.tls.keyFile'],
  ['COORD_REDIS_TLS_SERVERNAME', 'redis.tls.servername'],
  ['COORD_REDIS_TLS_REJECT_UNAUTHORIZED', 'redis.tls.rejectUnauthorized'],
  ['COORD_LOG_LEVEL', 'log.level'],
  ['COORD_LOG_FORMAT', 'log.format'],
  ['COORD_ROLE_START_TIMEOUT', 'roleStartTimeout'],
  ['COORD_ROLE_STOP_TIMEOUT', 'roleStopTimeout'],
];

/** The config's own top-level sections: no plugin may take one of these names (`--set name.x=…` would be ambiguous). */
export const CONFIG_SECTIONS: readonly string[] = Object.freeze(['redis', 'log', 'roles', 'plugins', 'modules']);

type Data = Record<string, unknown>;

/**
 * The effective config: defaults < file < environment < flags, validated once
 * against the plugins' schemas and frozen. Throws ConfigError (one line per
 * problem, naming the path, the value, where it came from and what was expected).
 *
 * @example
 * const config = loadConfig({ plugins: [plugin], file: 'coord.yaml', env: process.env, flags: [{ path: 'redis.url', value: 'redis://127.0.0.1:6379' }] });
 * config.plugins.cron; // the plugin's section, defaults filled in
 */
export function loadConfig(input: ConfigInput): Readonly<CoordConfig> {
  const schema = configSchema(input.plugins, input.adapters);
  const activeNames = input.plugins.map((p) => p.name);
  const sources = new Map<string, string>(); // internal path ('plugins/x/y') → where its value came from
  const data: Data = {};

  if (input.file !== undefined) {
    const { value, lines } = readConfigFile(input.file);
    mergeInto(data, value, [], (path) => sources.set(key(path), lines.get(key(path)) ?? `file ${basename(input.file!)}`));
    // Sections of plugins that exist but do not run in this process are not this process's business.
    const sections = data.plugins;
    if (isObject(sections)) {
      for (const name of input.knownPlugins ?? []) if (!activeNames.includes(name)) delete sections[name];
    }
  }

  const coerce = textCoercer(schema);
  const set = (path: string[], value: unknown, from: string) => {
    setPath(data, path, typeof value === 'string' || isStringArray(value) ? coerce(path, value) : value);
    sources.set(key(path), from);
  };
  const env = input.env ?? {};
  const envMap: [string, string[]][] = [
    ...GLOBAL_ENV.map(([name, path]): [string, string[]] => [name, path.split('.')]),
    ...input.plugins.flatMap((p) =>
      Object.entries(p.config.env ?? {}).map(([name, path]): [string, string[]] => [name, ['plugins', p.name, ...path.split('.')]]),
    ),
  ];
  for (const [name, path] of envMap) {
    const text = env[name];
    if (text !== undefined && text !== '') set(path, text, `env ${name}`);
  }
  for (const flag of input.flags ?? []) {
    const path = internalPath(flag.path, activeNames);
    set(path, flag.value, `flag ${flag.flag ?? `--set ${flag.path}`}`);
  }

  const problems = [...validate(schema, data, sources, activeNames), ...checkUrl(data, sources)];
  for (const plugin of input.plugins) noteCompiles(plugin.config.schema); // its section was compiled into that validator
  const config = data as unknown as CoordConfig;
  if (problems.length === 0) {
    // Cross-field checks run on a valid config only: they may rely on the schema.
    for (const plugin of input.plugins) {
      for (const message of plugin.config.check?.(config.plugins[plugin.name]) ?? []) problems.push({ text: `config: ${plugin.name}.${message}`, code: 'COORD_ERR_CONFIG_VALUE' });
    }
  }
  // The error's code is its first problem's: one condition to match on, every problem in the message.
  if (problems.length) throw new ConfigError(problems.map((p) => p.text), { code: problems[0]!.code });
  const redis = withPasswordFile(withSentinels(config.redis, sources), sources);
  // Keys in schema order, so a dump reads like the schema whatever order the layers set them in.
  const plugins = Object.fromEntries(input.plugins.map((p) => [p.name, inSchemaOrder(config.plugins[p.name]!, p.config.schema)]));
  return deepFreeze({ redis, log: config.log, roles: config.roles, roleStartTimeout: config.roleStartTimeout, roleStopTimeout: config.roleStopTimeout, plugins });
}


/**
 * The JSON Schema of a whole config file: coord's own sections plus one per
 * plugin given; `adapters` are the names redis.adapter may take. What `coord
 * config --schema` prints, for editors and for checking a file before a
 * deploy.
 *
 * @example
 * import { writeFileSync } from 'node:fs';
 * writeFileSync('coord.schema.json', JSON.stringify(configSchema([plugin]), null, 2));
 * // coord.yaml: # yaml-language-server: $schema=./coord.schema.json
 */
export function configSchema(plugins: readonly Plugin[], adapters?: readonly string[]): JsonSchema {
  const roles = [...new Set(plugins.flatMap((p) => Object.keys(p.roles)))];
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      $schema: { type: 'string', description: 'the JSON Schema of this file, for editors (coord config --schema)' },
      redis: {
        type: 'object',
        additionalProperties: false,
        default: {},
        properties: {
          url: { type: 'string', description: 'redis://, rediss://, redis://host:port,host:port (cluster), redis+sentinel://host:port,…/MASTER_NAME or embedded://; none: embedded' },
          adapter: { ...(adapters ? { enum: [...adapters] } : { type: 'string' }), description: 'client library (default: ioredis for a URL, embedded without)' },
          keyPrefix: { type: 'string', default: '', description: "prefix of every key, e.g. '{grid}:' (a hash tag keeps a deployment in one cluster slot)" },
          passwordFile: { type: 'string', minLength: 1, description: 'file whose first line is the Redis password, so it is not in the URL (nor in ps): used with redis.url' },
          sentinels: {
            type: 'array',
            minItems: 1,
            items: { type: 'string', pattern: '^(\\[[0-9a-fA-F:]+\\]|[^:,/@\\s\\[\\]]+)(:\\d{1,5})?$' },
            description: 'Sentinel instead of redis.url: the sentinels as host:port (port default 26379), with redis.masterName',
          },
          masterName: { type: 'string', minLength: 1, description: 'the name the sentinels monitor the master by (with redis.sentinels)' },
          sentinelUsername: { type: 'string', minLength: 1, description: "the sentinels' own ACL user, if they have one (the URL's user is the data nodes')" },
          sentinelPassword: { type: 'string', minLength: 1, description: "the sentinels' own password (sentinel requirepass); the URL's password (or redis.passwordFile) is the data nodes'" },
          sentinelPasswordFile: { type: 'string', minLength: 1, description: "file whose first line is the sentinels' own password (instead of redis.sentinelPassword)" },
          tls: {
            type: 'object',
            additionalProperties: false,
            description: 'TLS for rediss:// (and rediss+sentinel://) URLs; with redis.sentinels, setting it means TLS',
            properties: {
              caFile: { type: 'string', minLength: 1, description: "PEM file of the CA(s) that signed the server's certificate (default: the system's CAs and NODE_EXTRA_CA_CERTS)" },
              certFile: { type: 'string', minLength: 1, description: 'PEM client certificate, for a server with tls-auth-clients (with redis.tls.keyFile)' },
              keyFile: { type: 'string', minLength: 1, description: 'PEM private key of redis.tls.certFile' },
              servername: { type: 'string', minLength: 1, description: "the name the server's certificate must carry, if not the URL's host (also sent as SNI)" },
              rejectUnauthorized: { type: 'boolean', description: "check the server's certificate (default true; false trusts any server, e.g. a self-signed one)" },
            },
          },
        },
      },
      log: {
        type: 'object',
        additionalProperties: false,
        default: {},
        properties: {
          level: { enum: ['debug', 'info', 'warn', 'error'], default: 'info' },
          format: { enum: ['auto', 'json', 'pretty'], default: 'auto', description: 'auto: readable on a terminal, JSON lines otherwise' },
        },
      },
      roles: { type: 'array', items: roles.length ? { enum: roles } : { type: 'string' }, uniqueItems: true, default: [] },
      // A role that hangs must not hang the process (setTimeout takes up to 24.8 days; a day is plenty).
      roleStartTimeout: {
        type: 'number',
        exclusiveMinimum: 0,
        maximum: 86400,
        default: 60,
        description: 'seconds a role may take to start; past it the roles started are stopped and the process fails (COORD_ERR_ROLE_START_TIMEOUT)',
      },
      roleStopTimeout: {
        type: 'number',
        exclusiveMinimum: 0,
        maximum: 86400,
        default: 30,
        description: 'seconds a role may take to stop; past it the process logs an error naming it and stops the others',
      },
      // Read by the CLI before the config is loaded (which plugins to import); checked here, not returned.
      modules: {
        type: 'object',
        description: 'plugins that are not built in, by name: a module path (relative to this file) or an npm package',
        additionalProperties: { type: 'string', minLength: 1 },
      },
      plugins: {
        type: 'object',
        additionalProperties: false,
        default: {},
        properties: Object.fromEntries(
          plugins.map((p) => [p.name, withKeyPrefix(p.config.schema)]),
        ),
      },
    },
  };
}

/**
 * A plugin's section as the config file sees it: its own schema plus
 * `keyPrefix`, which every plugin takes (core/key-prefix.ts), so that the
 * plugins of one process can live on different masters of a cluster.
 */
function withKeyPrefix(schema: JsonSchema): JsonSchema {
  const keyPrefix = { type: 'string', description: "prefix of this plugin's keys, e.g. '{obniz-devices}:' (default: redis.keyPrefix)" };
  const properties = { ...((schema.properties as Record<string, JsonSchema> | undefined) ?? {}) };
  return { ...schema, properties: { ...properties, keyPrefix: properties.keyPrefix ?? keyPrefix }, additionalProperties: schema.additionalProperties ?? false, default: {} };
}

// ---- the config file

/** Reads and parses a config file; a file that is missing or not valid YAML/JSON is a ConfigError naming it (and the line and column). */
export function readConfigFile(file: string): { value: Data; lines: Map<string, string> } {
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8'); // '-': stdin (how a process hands a child its config without a file)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'it is a directory' : (err as Error).message;
    throw new ConfigError([`config: cannot read config file ${file}: ${why}`], { code: 'COORD_ERR_CONFIG_FILE' });
  }
  // YAML 1.2 reads JSON too, and both get the same line:column errors.
  const { LineCounter, parseDocument } = yaml();
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  const error = doc.errors[0];
  if (error) {
    const pos = error.linePos?.[0];
    const where = pos ? `${file}:${pos.line}:${pos.col}` : file;
    throw new ConfigError([`config: cannot parse ${where}: ${error.message.split(' at line ')[0]!.split('\n')[0]}`], { code: 'COORD_ERR_CONFIG_PARSE' });
  }
  const value: unknown = doc.toJS() ?? {};
  if (!isObject(value)) {
    throw new ConfigError([`config: ${file}: expected a mapping (redis:, log:, roles:, plugins:) at the top level, got ${describeValue(value)}`], { code: 'COORD_ERR_CONFIG_PARSE' });
  }
  const lines = new Map<string, string>();
  collectLines(doc.contents, [], (path, offset) => lines.set(key(path), `${basename(file)}:${lineCounter.linePos(offset).line}`));
  return { value, lines };
}

/** Records the line of every key in the file, so a problem can say where its value was written. */
function collectLines(node: YamlNode | null, path: string[], record: (path: string[], offset: number) => void): void {
  const { isMap, isScalar } = yaml();
  if (!isMap(node)) return;
  for (const pair of node.items) {
    const name = isScalar(pair.key) ? String(pair.key.value) : undefined;
    if (name === undefined) continue;
    const at = [...path, name];
    if (isScalar(pair.key) && pair.key.range) record(at, pair.key.range[0]);
    collectLines(pair.value as YamlNode | null, at, record);
  }
}

// ---- merging and coercion

/** Copies `value` into `target` key by key (objects merge, anything else replaces), calling `visit` per leaf. */
function mergeInto(target: Data, value: Data, path: string[], visit: (path: string[]) => void): void {
  for (const [name, v] of Object.entries(value)) {
    const at = [...path, name];
    if (isObject(v) && Object.keys(v).length > 0) {
      if (!isObject(target[name])) target[name] = {};
      mergeInto(target[name] as Data, v, at, visit);
    } else {
      target[name] = v;
    }
    visit(at);
  }
}

function setPath(target: Data, path: string[], value: unknown): void {
  let node = target;
  for (const name of path.slice(0, -1)) {
    if (!isObject(node[name])) node[name] = {};
    node = node[name] as Data;
  }
  node[path.at(-1)!] = value;
}

/** 'browser-grid.maxConcurrentSessions' → ['plugins', 'browser-grid', 'maxConcurrentSessions']. */
function internalPath(dotted: string, plugins: readonly string[]): string[] {
  const parts = dotted.split('.');
  if (plugins.includes(parts[0]!) && !CONFIG_SECTIONS.includes(parts[0]!)) return ['plugins', ...parts];
  return parts;
}

/**
 * Text from the environment or a flag, coerced the way the schema at its path
 * says (ajv's own coercion: "5" → 5, "true" → true). A list is written
 * comma-separated. Text that does not fit stays text, so validation names it.
 */
function textCoercer(schema: JsonSchema): (path: string[], value: string | string[]) => unknown {
  let ajv: ReturnType<typeof createAjv> | undefined; // made for the first value that may need coercing: text for a text field (--redis URL) needs none
  return (path, value) => {
    const sub = schemaAt(schema, path);
    if (!sub || (sub.type === 'string' && typeof value === 'string')) return value;
    const simple = typeof value === 'string' ? coerceText(sub, value) : undefined;
    if (simple !== undefined) return simple;
    ajv ??= createAjv({ coerceTypes: true, allErrors: false, strict: false }, namesFormat(schema));
    const isArray = sub.type === 'array';
    const holder = { v: isArray && typeof value === 'string' ? value.split(',').map((s) => s.trim()).filter(Boolean) : value };
    ajv.validate({ type: 'object', properties: { v: sub } }, holder);
    return holder.v;
  };
}

/**
 * The common cases of ajv's coercion, without loading ajv (~100 ms of CPU at
 * a command's start): text for a number, an integer or a boolean field, or for
 * a oneOf/anyOf of such fields and constants (load-test.workers: an integer or
 * 'auto'), coerced as ajv would ("5" → 5, "true" → true, "auto" stays).
 * Undefined for anything else, which ajv coerces (or leaves as text, for
 * validation to name).
 */
function coerceText(sub: JsonSchema, text: string): unknown {
  const branches = (Array.isArray(sub.oneOf) ? sub.oneOf : Array.isArray(sub.anyOf) ? sub.anyOf : [sub]) as JsonSchema[];
  if (branches.some((b) => b.const === text || (Array.isArray(b.enum) && b.enum.includes(text)))) return text;
  for (const branch of branches) {
    const value = coerceScalar(branch.type, text);
    if (value !== undefined) return value;
  }
  return undefined;
}

function coerceScalar(type: unknown, text: string): number | boolean | undefined {
  if ((type === 'number' || type === 'integer') && /^\s*-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(text)) {
    const n = Number(text);
    return type === 'integer' && !Number.isInteger(n) ? undefined : n;
  }
  if (type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return undefined;
}

// ---- validation and messages

/** One problem line of a config, and the code of its condition. */
interface Problem {
  text: string;
  code: CoordErrorCode;
}

function validate(schema: JsonSchema, data: Data, sources: Map<string, string>, plugins: readonly string[]): Problem[] {
  const check = configValidator(schema);
  if (check(data)) return [];
  const problems = new Map<string, Problem>(); // one per path: a value failing two keywords is one problem
  for (const error of check.errors ?? []) {
    const path = error.instancePath.split('/').slice(1).map(unescapePointer);
    const text = describeError(error, path, schema, data, sources, plugins);
    const unknown = error.keyword === 'additionalProperties';
    const at = key(path) + (unknown ? `/${error.params.additionalProperty}` : '');
    if (!problems.has(at)) problems.set(at, { text, code: unknown ? 'COORD_ERR_CONFIG_UNKNOWN_KEY' : 'COORD_ERR_CONFIG_VALUE' });
  }
  return [...problems.values()];
}

function describeError(error: ErrorObject, path: string[], schema: JsonSchema, data: Data, sources: Map<string, string>, plugins: readonly string[]): string {
  if (error.keyword === 'additionalProperties') {
    const name = String(error.params.additionalProperty);
    const at = [...path, name];
    const known = Object.keys((schemaAt(schema, path)?.properties as object | undefined) ?? {});
    let hint: string;
    const closePlugin = path.length === 0 ? didYouMean(name, plugins) : undefined;
    if (path.length === 0 && plugins.includes(name)) hint = `plugin sections go under plugins: (plugins.${name})`;
    else if (closePlugin && !didYouMean(name, known)) hint = `did you mean plugin "${closePlugin}"? (e.g. --set ${closePlugin}.… or plugins.${closePlugin} in a file)`;
    else if (path.length === 1 && path[0] === 'plugins' && !known.length) hint = `no plugin is active; run with --plugin ${name}`;
    else {
      const close = didYouMean(name, known);
      hint = close ? `did you mean "${close}"?` : `expected one of ${known.join(', ') || '(none)'}`;
    }
    return `config: unknown key ${display(at)}${from(sources, at)}: ${hint}`;
  }
  if (error.keyword === 'required') {
    const at = [...path, String(error.params.missingProperty)];
    return `config: ${display(at)} is missing: expected ${describeSchema(schemaAt(schema, at)) || 'a value'}`;
  }
  const sub = schemaAt(schema, path);
  const value = valueAt(data, path);
  const expected = describeSchema(sub) || error.message || 'something else';
  const close = Array.isArray(sub?.enum) && typeof value === 'string' ? didYouMean(value, sub.enum.map(String)) : undefined;
  const hint = close ? ` (did you mean "${close}"?)` : '';
  return `config: ${display(path)} = ${showValue(path, value)}${from(sources, path)}: expected ${expected}${hint}`;
}

/** redis.passwordFile read into redis.url's password (a dump masks it like any URL password). */
function withPasswordFile(redis: CoordConfig['redis'], sources: Map<string, string>): CoordConfig['redis'] {
  const file = redis.passwordFile;
  if (file === undefined) return redis;
  const at = `config: redis.passwordFile = ${JSON.stringify(file)}${from(sources, ['redis', 'passwordFile'])}`;
  if (!redis.url || parseRedisUrl(redis.url).kind === 'embedded') {
    throw new ConfigError([`${at}: needs redis.url (--redis or REDIS_URL) without the password`], { code: 'COORD_ERR_CONFIG_PASSWORD_FILE' });
  }
  const password = readPasswordFile(file, at);
  const url = redis.url.replace(/^([a-z+]+:\/\/)(?:([^@/:]*)(?::[^@/]*)?@)?/i, (_all, scheme: string, user = '') => `${scheme}${user}:${encodeURIComponent(password)}@`);
  return { ...redis, url };
}

/** The first line of a password file; `at` names the option for errors. */
function readPasswordFile(file: string, at: string): string {
  let password: string;
  try {
    password = readFileSync(file, 'utf8').split(/\r?\n/)[0]!;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
    throw new ConfigError([`${at}: cannot read it: ${why}`], { code: 'COORD_ERR_CONFIG_PASSWORD_FILE' });
  }
  if (!password) throw new ConfigError([`${at}: its first line is empty, expected the password`], { code: 'COORD_ERR_CONFIG_PASSWORD_FILE' });
  return password;
}

/**
 * Sentinel's config form: redis.sentinels and redis.masterName become the
 * redis+sentinel:// URL the adapters take (rediss+ when redis.tls is set), so
 * redis.passwordFile applies to it as to any URL; redis.sentinelPasswordFile
 * is read into redis.sentinelPassword. The sentinels' credentials are only for Sentinel.
 */
function withSentinels(redis: CoordConfig['redis'], sources: Map<string, string>): CoordConfig['redis'] {
  const at = (name: keyof CoordConfig['redis']) => `config: redis.${name} = ${showValue(['redis', name], redis[name])}${from(sources, ['redis', name])}`;
  const problems: string[] = [];
  let url = redis.url;
  if (redis.sentinels !== undefined) {
    if (url !== undefined) problems.push(`${at('sentinels')}: redis.url is set too (${JSON.stringify(mask(url))}); name the Redis in one of them`);
    else if (redis.masterName === undefined) problems.push('config: redis.masterName is missing: expected the name the sentinels monitor the master by (with redis.sentinels)');
    else url = `${redis.tls ? 'rediss' : 'redis'}+sentinel://${redis.sentinels.join(',')}/${encodeURIComponent(redis.masterName)}`;
  } else if (redis.masterName !== undefined) {
    problems.push(`${at('masterName')}: needs redis.sentinels (a redis+sentinel:// URL names the master itself)`);
  }
  const sentinel = url !== undefined && parseRedisUrl(url).kind === 'sentinel';
  for (const name of ['sentinelUsername', 'sentinelPassword', 'sentinelPasswordFile'] as const) {
    if (redis[name] !== undefined && !sentinel) problems.push(`${at(name)}: only for Sentinel (redis.sentinels, or a redis+sentinel:// URL)`);
  }
  if (redis.sentinelPassword !== undefined && redis.sentinelPasswordFile !== undefined) {
    problems.push(`${at('sentinelPasswordFile')}: redis.sentinelPassword is set too; give one of them`);
  }
  if (problems.length) throw new ConfigError(problems, { code: 'COORD_ERR_CONFIG_SENTINEL' });
  const file = redis.sentinelPasswordFile;
  const sentinelPassword = file === undefined ? redis.sentinelPassword : readPasswordFile(file, at('sentinelPasswordFile'));
  return { ...redis, url, ...(sentinelPassword === undefined ? {} : { sentinelPassword }) };
}

/** The redis URL is checked by the same parser the adapters use. */
function checkUrl(data: Data, sources: Map<string, string>): Problem[] {
  const url = isObject(data.redis) ? data.redis.url : undefined;
  if (typeof url !== 'string') return [];
  try {
    parseRedisUrl(url);
    return [];
  } catch (err) {
    if (!(err instanceof UrlError)) throw err;
    const path = ['redis', 'url'];
    const why = err.message.replace(/^bad Redis URL "[^"]*": /, '');
    return [{ text: `config: redis.url = ${showValue(path, url)}${from(sources, path)}: ${why}`, code: 'COORD_ERR_CONFIG_REDIS_URL' }];
  }
}

/** What a schema accepts, in a few words: 'integer >= 1', 'one of debug, info', 'string matching /x/'. */
function describeSchema(schema: JsonSchema | undefined): string {
  if (!schema) return '';
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ')}`;
  if ('const' in schema) return `exactly ${JSON.stringify(schema.const)}`;
  for (const alt of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(schema[alt])) return (schema[alt] as JsonSchema[]).map(describeSchema).filter(Boolean).join(' or ');
  }
  const parts: string[] = [];
  if (schema.type !== undefined) parts.push([schema.type].flat().join(' or '));
  if (schema.type === 'array' && schema.items) parts.push(`of ${describeSchema(schema.items as JsonSchema)}`);
  const bounds: [string, string][] = [
    ['minimum', '>='],
    ['exclusiveMinimum', '>'],
    ['maximum', '<='],
    ['exclusiveMaximum', '<'],
  ];
  for (const [word, sign] of bounds) if (typeof schema[word] === 'number') parts.push(`${sign} ${schema[word]}`);
  if (typeof schema.minLength === 'number') parts.push(`of at least ${schema.minLength} characters`);
  if (typeof schema.maxLength === 'number') parts.push(`of at most ${schema.maxLength} characters`);
  if (typeof schema.minItems === 'number') parts.push(`with at least ${schema.minItems} items`);
  if (typeof schema.maxItems === 'number') parts.push(`with at most ${schema.maxItems} items`);
  if (typeof schema.pattern === 'string') parts.push(`matching /${schema.pattern}/`);
  if (typeof schema.format === 'string') parts.push(`in format ${schema.format}`);
  if (schema.uniqueItems === true) parts.push('without duplicates');
  return parts.join(' ');
}

/** The path as a user writes it: 'redis.url', 'roles[0]', and plugin sections by plugin name ('browser-grid.maxConcurrentSessions'). */
function display(path: readonly string[]): string {
  const shown = path[0] === 'plugins' && path.length > 1 ? path.slice(1) : path;
  return shown.reduce((text, part) => (/^\d+$/.test(part) ? `${text}[${part}]` : text ? `${text}.${part}` : part), '');
}

/** Where a value came from: its own source, else its nearest parent's. */
function from(sources: Map<string, string>, path: readonly string[]): string {
  for (let n = path.length; n > 0; n--) {
    const source = sources.get(key(path.slice(0, n)));
    if (source) return ` (from ${source})`;
  }
  // A key set only below this one (an unknown section `--set x.y=1` made): name where that came from.
  const below = [...sources].find(([at]) => at.startsWith(`${key(path)}/`));
  return below ? ` (from ${below[1]})` : ' (from default)';
}

function showValue(path: readonly string[], value: unknown): string {
  if (path.join('.') === 'redis.url' && typeof value === 'string') return JSON.stringify(mask(value));
  if (path.join('.') === 'redis.sentinelPassword' && typeof value === 'string') return '"***"';
  return value === undefined ? 'nothing' : JSON.stringify(value);
}

function describeValue(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'nothing';
  return `${typeof value} ${JSON.stringify(value)}`;
}

function valueAt(data: unknown, path: readonly string[]): unknown {
  let node = data;
  for (const name of path) node = isObject(node) || Array.isArray(node) ? (node as Data)[name] : undefined;
  return node;
}

function key(path: readonly string[]): string {
  return path.join('/');
}

function unescapePointer(part: string): string {
  return part.replace(/~1/g, '/').replace(/~0/g, '~');
}

function isObject(value: unknown): value is Data {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

function inSchemaOrder(section: Data, schema: JsonSchema): Data {
  const order = Object.keys((schema.properties as object | undefined) ?? {});
  return Object.fromEntries(Object.entries(section).sort(([a], [b]) => order.indexOf(a) - order.indexOf(b)));
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
