// What a Redis user needs to run the built-in plugins' roles and nothing more:
// the commands each plugin sends (its TypeScript, its Lua scripts, and what
// the adapters send on connect), and its keys and channels under its key
// prefix. Measured: test/redis-acl.test.ts runs every plugin's roles as the
// user this makes and finds ACL LOG empty. docs/deployments.md (### ACL) lists it.
import { randomBytes } from 'node:crypto';
import { escapeGlob } from '../core/snapshot.ts';
import { channels as obnizChannels } from '../plugins/obniz/messages.ts';
import { workerEventsPattern } from '../plugins/browser-grid/foreign/watch.ts';

/** What a connection of either adapter sends before any plugin does: AUTH (or HELLO), SELECT, CLIENT SETNAME, INFO (ioredis's ready check), PING; CLUSTER SLOTS/SHARDS on a cluster. */
export const CONNECTION_COMMANDS: readonly string[] = ['auth', 'hello', 'ping', 'select', 'client|setname', 'info', 'cluster|slots', 'cluster|shards'];

/** Scripts (EVALSHA, EVAL on NOSCRIPT) and MULTI … EXEC, which every plugin uses. */
const SCRIPT_COMMANDS = ['evalsha', 'eval', 'multi', 'exec', 'discard'];
const SUBSCRIBER_COMMANDS = ['subscribe', 'unsubscribe', 'psubscribe', 'punsubscribe', 'publish'];

export interface PluginAcl {
  /** Commands the plugin's roles and scripts send, lower case; `name|sub` for a subcommand. */
  readonly commands: readonly string[];
  /** Whether its roles use pub/sub channels under the prefix. */
  readonly channels: boolean;
  /** Patterns its roles PSUBSCRIBE: Redis compares these with the ACL's channel patterns literally. */
  patterns(keyPrefix: string): string[];
  /** What the operator must do besides creating the user, if anything. */
  readonly note?: string;
}

export const PLUGIN_ACLS: Readonly<Record<string, PluginAcl>> = {
  'browser-grid': {
    commands: [
      'del', 'exists', 'expire', 'get', 'set', 'hdel', 'hexists', 'hget', 'hgetall', 'hincrby', 'hkeys', 'hmget', 'hset', 'hsetnx',
      'zadd', 'zcard', 'zcount', 'zrange', 'zrangebyscore', 'zrank', 'zrem', 'zrevrangebyscore', 'zscore', 'scan', ...SUBSCRIBER_COMMANDS,
    ],
    channels: true,
    patterns: (p) => [workerEventsPattern(p)],
    note:
      'browser-grid: this user may not send CONFIG: put "notify-keyspace-events Khgx" in redis.conf and set browser-grid.keyspaceEvents: preset (or adoptForeignWorkers: false)',
  },
  webdriver: {
    commands: [
      'del', 'exists', 'get', 'set', 'incr', 'incrbyfloat', 'hdel', 'hexists', 'hget', 'hgetall', 'hincrby', 'hincrbyfloat', 'hmget', 'hset', 'hsetnx', 'hvals',
      'lindex', 'llen', 'lpop', 'lpush', 'lrange', 'lrem', 'rpop', 'rpoplpush', 'rpush', 'blmove', 'blpop', 'brpop', 'brpoplpush',
      'sadd', 'scard', 'sismember', 'smembers', 'smove', 'srem', 'xadd', 'xrange', 'xrevrange', 'zadd', 'zcount', 'zrangebyscore', 'zrem', 'zremrangebyscore',
      'memory|usage', // gc weighs each terminated session (measureSession.lua)
      'hkeys', // the proxy, API and storage roles read the API keys each heartbeat (access.ts)
      'ltrim', 'expire', // an orchestrator's notices to the managers, capped and expiring (announceSlot.lua)
    ],
    channels: false,
    patterns: () => [],
  },
  'load-test': {
    commands: [
      'del', 'exists', 'expire', 'get', 'set', 'incr', 'hget', 'hgetall', 'hmget', 'hset',
      'sadd', 'scard', 'sismember', 'smembers', 'spop', 'srem', 'xadd', 'xrange', 'xread', 'xrevrange', 'scan',
    ],
    channels: false,
    patterns: () => [],
  },
  obniz: {
    commands: [
      'del', 'exists', 'get', 'set', 'hdel', 'hexists', 'hget', 'hgetall', 'hincrby', 'hkeys', 'hlen', 'hmget', 'hscan', 'hset', 'hsetnx',
      'sadd', 'sismember', 'srem', 'zadd', 'zrange', 'zrangebyscore', 'zrem', 'scan', ...SUBSCRIBER_COMMANDS,
    ],
    channels: true,
    patterns: (p) => [obnizChannels(p).pattern],
  },
};

export interface AclRequest {
  user: string;
  /** Each plugin with the key prefix of its keys. */
  plugins: readonly { name: string; keyPrefix: string }[];
  /** The password to set; undefined: the placeholder PASSWORD. */
  password?: string;
}

/** A new random password: 32 bytes, hex. */
export function newPassword(): string {
  return randomBytes(32).toString('hex');
}

/**
 * One `ACL SETUSER` command that (re)defines the user from scratch (`reset`):
 * its password, key patterns, channel patterns and commands.
 */
export function aclSetuser(request: AclRequest): string {
  const keys = new Set<string>();
  const channels = new Set<string>();
  const commands = new Set<string>([...CONNECTION_COMMANDS, ...SCRIPT_COMMANDS]);
  for (const { name, keyPrefix } of request.plugins) {
    const acl = PLUGIN_ACLS[name]!;
    keys.add(`~${escapeGlob(keyPrefix)}*`);
    if (acl.channels) channels.add(`&${escapeGlob(keyPrefix)}*`);
    for (const pattern of acl.patterns(keyPrefix)) channels.add(`&${pattern}`);
    for (const command of acl.commands) commands.add(command);
  }
  const password = request.password === undefined ? '>PASSWORD' : `>${request.password}`;
  return ['ACL', 'SETUSER', request.user, 'reset', 'on', password, ...keys, ...channels, ...[...commands].map((c) => `+${c}`)].join(' ');
}
