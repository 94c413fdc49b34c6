// Redis as operators run it for high availability, for fault tests: a
// 3-master Redis Cluster with one replica each, and Sentinel watching a master
// and its replica. Each can fail over (its master killed -9, a replica
// promoted), pause (DEBUG SLEEP) or be lost for good, and says when.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, killAndWait, requireBinary, spawnRedisServer, waitForPing } from './redis.ts';
import { until } from './until.ts';

/** What a failover did: the port killed, the port that serves now, and when (Date.now()). */
export interface Failover {
  killedPort: number;
  promotedPort: number;
  killedAt: number;
  /** When a check first found the promotion: later than it happened by up to a check (redis-cli, synchronous: long on a loaded machine). */
  promotedAt: number;
  /** When the last check that found no promotion began: nothing was promoted before then. */
  unpromotedAt: number;
}

/** Polls `promoted` (a port, or undefined while there is none) until it names one; with when it last did not. */
async function awaitPromotion(what: string, promoted: () => number | undefined): Promise<{ promotedPort: number; unpromotedAt: number; promotedAt: number }> {
  let unpromotedAt = Date.now();
  const promotedPort = await until(
    what,
    () => {
      const began = Date.now();
      const port = promoted();
      if (port === undefined) unpromotedAt = began;
      return port;
    },
    60_000,
    50,
  );
  return { promotedPort, unpromotedAt, promotedAt: Date.now() };
}

/** Runs redis-cli against a port and returns its output (trimmed); `auth` for a server with requirepass. */
export function cli(port: number, args: string[], auth?: string): string {
  const pass = auth === undefined ? [] : ['--no-auth-warning', '-a', auth];
  return (spawnSync('redis-cli', ['-p', String(port), ...pass, ...args], { encoding: 'utf8' }).stdout ?? '').trim();
}

/**
 * DEBUG SLEEP on a server: it answers nothing for `seconds` (a stalled
 * master). Resolves when the sleep is over. The server needs --enable-debug-command yes.
 */
export function debugSleep(port: number, seconds: number, auth?: string): Promise<void> {
  const pass = auth === undefined ? [] : ['--no-auth-warning', '-a', auth];
  return new Promise((resolve, reject) => {
    const child = spawn('redis-cli', ['-p', String(port), ...pass, 'DEBUG', 'SLEEP', String(seconds)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', () => (/^OK/.test(out.trim()) ? resolve() : reject(new Error(`DEBUG SLEEP on ${port} answered "${out.trim()}" (is --enable-debug-command yes set?)`))));
  });
}

/** Free loopback ports, each with its cluster bus port (+10000) free too. */
async function freePorts(n: number, bus: boolean): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < n) {
    const port = await freePort(bus);
    if (!ports.includes(port)) ports.push(port);
  }
  return ports;
}

const DEBUG = ['--enable-debug-command', 'yes'];

export interface HaCluster {
  /** Seed list URL of every node: redis://127.0.0.1:p1,… */
  url: string;
  /** Every node's port (masters and replicas). */
  ports: number[];
  /** The port of the master serving `key`'s slot now. */
  masterOf(key: string): number;
  /** Kills -9 the master serving `key`'s slot and waits until its replica serves the slot and the cluster is ok. */
  failover(key: string): Promise<Failover>;
  /** DEBUG SLEEP on the master serving `key`; resolves when it wakes. Longer than the node timeout, the cluster fails it over meanwhile. */
  pause(key: string, seconds: number): Promise<void>;
  /** Kills -9 the master serving `key` and its replica: that slot is gone for good. */
  lose(key: string): Promise<void>;
  stop(): Promise<void>;
}

/** A 3-master Redis Cluster with one replica per master (node timeout 3 s, as operators set it), on loopback. */
export async function startHaCluster(options: { nodeTimeoutMs?: number } = {}): Promise<HaCluster> {
  requireBinary('redis-server');
  requireBinary('redis-cli');
  const dir = mkdtempSync(join(tmpdir(), 'coord-ha-cluster-'));
  const ports = await freePorts(6, true);
  const children = new Map<number, ChildProcess>();
  for (const port of ports) {
    children.set(port, spawnRedisServer(port, dir, [
      '--cluster-enabled', 'yes',
      '--cluster-config-file', join(dir, `nodes-${port}.conf`),
      '--cluster-node-timeout', String(options.nodeTimeoutMs ?? 3000),
      ...DEBUG,
    ]));
  }
  await Promise.all(ports.map((p) => waitForPing(p)));
  const create = spawnSync(
    'redis-cli',
    ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '1', '--cluster-yes'],
    { encoding: 'utf8' },
  );
  if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`);
  const alive = () => ports.filter((p) => children.get(p)!.exitCode === null && children.get(p)!.signalCode === null);
  const clusterOk = () => alive().every((p) => cli(p, ['cluster', 'info']).includes('cluster_state:ok'));
  await until('HA cluster at cluster_state:ok on every node', clusterOk, 30_000, 100);
  // A replica must hold its master's data before a failover means anything.
  const replicasSynced = () => alive().every((p) => {
    const info = cli(p, ['info', 'replication']);
    return info.includes('role:master') || info.includes('master_link_status:up');
  });
  await until('every replica in sync with its master', replicasSynced, 30_000, 100);

  /** The master port serving a slot, as a live node tells it (CLUSTER NODES: id addr flags master ping pong epoch link slots…). */
  const masterOfSlot = (slot: number, askPort = alive()[0]!): number | undefined => {
    const nodes = cli(askPort, ['cluster', 'nodes']).split('\n');
    for (const line of nodes) {
      const parts = line.split(' ');
      if (!parts[2]?.includes('master') || parts[2].includes('fail')) continue;
      for (const range of parts.slice(8)) {
        const [a, b] = range.split('-').map(Number);
        if (slot >= a! && slot <= (b ?? a!)) return Number(parts[1]!.split(':')[1]!.split('@')[0]);
      }
    }
    return undefined;
  };
  const slotOf = (key: string) => Number(cli(alive()[0]!, ['cluster', 'keyslot', key]));
  const masterOf = (key: string) => {
    const port = masterOfSlot(slotOf(key));
    if (port === undefined) throw new Error(`no master serves the slot of ${key}`);
    return port;
  };
  const kill = (port: number) => killAndWait(children.get(port)!, 'SIGKILL');

  return {
    url: `redis://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`,
    ports,
    masterOf,
    async failover(key) {
      const slot = slotOf(key);
      const killedPort = masterOf(key);
      const killedAt = Date.now();
      await kill(killedPort);
      const promotion = await awaitPromotion(`a replica promoted for slot ${slot} after ${killedPort} was killed`, () => {
        const now = masterOfSlot(slot);
        return now !== undefined && now !== killedPort && cli(now, ['role']).startsWith('master') ? now : undefined;
      });
      await until('cluster_state:ok after the failover', clusterOk, 30_000, 100);
      return { killedPort, killedAt, ...promotion };
    },
    pause: (key, seconds) => debugSleep(masterOf(key), seconds),
    async lose(key) {
      const master = masterOf(key);
      const id = cli(master, ['cluster', 'myid']);
      const replicas = alive().filter((p) => p !== master && cli(p, ['cluster', 'nodes']).split('\n').some((l) => l.includes('myself') && l.includes(id)));
      await Promise.all([master, ...replicas].map(kill));
    },
    async stop() {
      await Promise.all([...children.values()].map((c) => killAndWait(c, 'SIGKILL')));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface SentinelSet {
  /** redis+sentinel://[:password@]127.0.0.1:s1,127.0.0.1:s2,127.0.0.1:s3/MASTER_NAME (the data nodes' password, if any). */
  url: string;
  masterName: string;
  /** The sentinels' ports. */
  sentinels: number[];
  /** The data nodes' ports (master first, as started). */
  nodes: number[];
  /** The port of the master the sentinels name now. */
  master(): number;
  /** Kills -9 the master and waits until the sentinels name its replica, and it says role master. */
  failover(): Promise<Failover>;
  /** Sets every sentinel's down-after-milliseconds (how long the master may not answer before a failover). */
  downAfter(ms: number): void;
  /** DEBUG SLEEP on the master; resolves when it wakes (longer than down-after, the sentinels fail it over meanwhile). */
  pause(seconds: number): Promise<void>;
  /** Kills -9 every data node: Redis is gone for good (the sentinels stay). */
  lose(): Promise<void>;
  stop(): Promise<void>;
}

export interface SentinelOptions {
  masterName?: string;
  /** requirepass (and masterauth) of the master and replica. */
  password?: string;
  /** requirepass of the sentinels themselves. */
  sentinelPassword?: string;
  /**
   * down-after-milliseconds, 2000 unless given. Tests that need no failover give a long one: a loaded
   * machine that stalls for 2 s would otherwise have the sentinels fail the master over under them.
   */
  downAfterMs?: number;
}

/** A master, its replica and three sentinels (quorum 2, down after 2 s unless told), on loopback. */
export async function startSentinels(options: SentinelOptions = {}): Promise<SentinelSet> {
  requireBinary('redis-server');
  requireBinary('redis-cli');
  const masterName = options.masterName ?? 'coordmaster';
  const { password, sentinelPassword, downAfterMs = 2000 } = options;
  const dir = mkdtempSync(join(tmpdir(), 'coord-sentinel-'));
  const [masterPort, replicaPort, ...sentinels] = await freePorts(5, false) as [number, number, ...number[]];
  const auth = password === undefined ? [] : ['--requirepass', password, '--masterauth', password];
  const children = new Map<number, ChildProcess>();
  children.set(masterPort, spawnRedisServer(masterPort, dir, [...auth, ...DEBUG]));
  children.set(replicaPort, spawnRedisServer(replicaPort, dir, [...auth, ...DEBUG, '--replicaof', '127.0.0.1', String(masterPort)]));
  await Promise.all([masterPort, replicaPort].map((p) => waitForPing(p)));
  await until('the replica in sync with its master', () => cli(replicaPort, ['info', 'replication'], password).includes('master_link_status:up'), 30_000, 100);
  for (const port of sentinels) {
    const file = join(dir, `sentinel-${port}.conf`);
    writeFileSync(file, [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${masterName} 127.0.0.1 ${masterPort} 2`,
      `sentinel down-after-milliseconds ${masterName} ${downAfterMs}`,
      `sentinel failover-timeout ${masterName} 10000`,
      `sentinel parallel-syncs ${masterName} 1`,
      ...(password === undefined ? [] : [`sentinel auth-pass ${masterName} ${password}`]),
      ...(sentinelPassword === undefined ? [] : [`requirepass ${sentinelPassword}`]),
      '',
    ].join('\n'));
    const child = spawn('redis-server', [file, '--sentinel'], { stdio: 'ignore' });
    child.unref();
    children.set(port, child);
  }
  await Promise.all(sentinels.map((p) => waitForPing(p, undefined, sentinelPassword === undefined ? [] : ['--no-auth-warning', '-a', sentinelPassword])));
  const named = (port: number) => Number(cli(port, ['sentinel', 'get-master-addr-by-name', masterName], sentinelPassword).split('\n')[1]);
  // Each sentinel must know the replica and the other sentinels before a failover can be agreed.
  await until('the sentinels know the replica and each other', () => sentinels.every((p) => {
    const info = cli(p, ['sentinel', 'master', masterName], sentinelPassword).split('\n');
    const field = (name: string) => Number(info[info.indexOf(name) + 1]);
    return field('num-slaves') >= 1 && field('num-other-sentinels') >= 2;
  }), 30_000, 100);
  const alive = (port: number) => children.get(port)!.exitCode === null && children.get(port)!.signalCode === null;
  const master = () => named(sentinels.find(alive)!);
  const kill = (port: number) => killAndWait(children.get(port)!, 'SIGKILL');
  const userInfo = password === undefined ? '' : `:${encodeURIComponent(password)}@`;
  return {
    url: `redis+sentinel://${userInfo}${sentinels.map((p) => `127.0.0.1:${p}`).join(',')}/${masterName}`,
    masterName,
    sentinels,
    nodes: [masterPort, replicaPort],
    master,
    async failover() {
      const killedPort = master();
      const killedAt = Date.now();
      await kill(killedPort);
      const promotion = await awaitPromotion(`the sentinels promote a replica of ${killedPort}`, () => {
        const now = master();
        return now !== killedPort && cli(now, ['role'], password).startsWith('master') ? now : undefined;
      });
      return { killedPort, killedAt, ...promotion };
    },
    downAfter(ms) {
      for (const port of sentinels) {
        const reply = cli(port, ['sentinel', 'set', masterName, 'down-after-milliseconds', String(ms)], sentinelPassword);
        if (reply !== 'OK') throw new Error(`sentinel ${port} refused down-after-milliseconds ${ms}: ${reply}`);
      }
    },
    pause: (seconds) => debugSleep(master(), seconds, password),
    async lose() {
      await Promise.all([masterPort, replicaPort].map(kill));
    },
    async stop() {
      await Promise.all([...children.values()].map((c) => killAndWait(c, 'SIGKILL')));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
