// Real redis-server processes for tests: one standalone server, or a
// 3-master Redis Cluster, each on free loopback ports in a temp folder.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from './until.ts';

const MISSING =
  'redis-server not found: tests need the Debian package redis-server (apt-get install -y redis-server redis-tools)';

export interface RedisServer {
  url: string;
  port: number;
  /** Stops the server (SIGKILL when `hard`). */
  stop(hard?: boolean): Promise<void>;
  /** Stops and starts it again on the same port (data is not kept). */
  restart(): Promise<void>;
  /** Kills it (SIGKILL) and keeps it down until `up()`: clients see Redis unreachable. */
  down(): Promise<void>;
  /** Starts it again after `down()`, on the same port, empty. */
  up(): Promise<void>;
}

export interface RedisCluster {
  /** Seed list URL: redis://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3 */
  url: string;
  ports: number[];
  stop(): Promise<void>;
}

export function requireBinary(name: string): void {
  const found = spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
  if (!found) throw new Error(MISSING);
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A free loopback port; with `bus`, port + 10000 is free too (cluster bus). */
export async function freePort(bus = false): Promise<number> {
  for (let i = 0; i < 200; i++) {
    // Below Linux's ephemeral range (32768+), where the kernel picks ports for
    // outgoing connections and port-0 listeners (browser servers) at any time;
    // a cluster bus port (port + 10000) stays below it too.
    const port = 20000 + Math.floor(Math.random() * (bus ? 2700 : 12700));
    if ((await portIsFree(port)) && (!bus || (await portIsFree(port + 10000)))) return port;
  }
  throw new Error('no free loopback port found');
}

export function spawnRedisServer(port: number, dir: string, extra: string[] = []): ChildProcess {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extra],
    { stdio: 'ignore' },
  );
  child.unref();
  return child;
}

export async function waitForPing(port: number, timeoutMs = 10_000, cliArgs: string[] = []): Promise<void> {
  // NOAUTH: a server started with --requirepass is up, it just wants the password.
  const answers = () => /^(PONG|NOAUTH)/.test(spawnSync('redis-cli', [...cliArgs, '-p', String(port), 'ping'], { encoding: 'utf8' }).stdout?.trim() ?? '');
  await until(`redis-server on port ${port} answering PING`, answers, timeoutMs, 50);
}

export function killAndWait(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.ref(); // keep the event loop alive until the exit is seen
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

export interface StartRedisOptions {
  /** Extra redis-server arguments, e.g. ['--requirepass', 'secret']. */
  args?: string[];
  /**
   * Serve TLS only, on the port (PEM file paths); the URL becomes rediss://.
   * Clients are asked for a certificate signed by caFile only with `clients`,
   * the certificate redis-cli shows to check that the server is up.
   */
  tls?: { certFile: string; keyFile: string; caFile: string; clients?: { certFile: string; keyFile: string } };
}

/** Starts one redis-server on a free loopback port. */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisServer> {
  requireBinary('redis-server');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'coord-redis-'));
  const { tls } = options;
  const extra = [
    ...(tls
      ? ['--port', '0', '--tls-port', String(port), '--tls-cert-file', tls.certFile, '--tls-key-file', tls.keyFile,
         '--tls-ca-cert-file', tls.caFile, '--tls-auth-clients', tls.clients ? 'yes' : 'no']
      : []),
    ...(options.args ?? []),
  ];
  const cliArgs = tls ? ['--tls', '--cacert', tls.caFile, ...(tls.clients ? ['--cert', tls.clients.certFile, '--key', tls.clients.keyFile] : [])] : [];
  let child = spawnRedisServer(port, dir, extra);
  await waitForPing(port, undefined, cliArgs);
  return {
    url: `${tls ? 'rediss' : 'redis'}://127.0.0.1:${port}`,
    port,
    async stop(hard = false) {
      await killAndWait(child, hard ? 'SIGKILL' : 'SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
    async restart() {
      await killAndWait(child, 'SIGKILL');
      child = spawnRedisServer(port, dir, extra);
      await waitForPing(port, undefined, cliArgs);
    },
    async down() {
      await killAndWait(child, 'SIGKILL');
    },
    async up() {
      child = spawnRedisServer(port, dir, extra);
      await waitForPing(port, undefined, cliArgs);
    },
  };
}

/** Starts a 3-master Redis Cluster (no replicas) on free loopback ports. */
export async function startCluster(): Promise<RedisCluster> {
  requireBinary('redis-server');
  requireBinary('redis-cli');
  const dir = mkdtempSync(join(tmpdir(), 'coord-cluster-'));
  const ports: number[] = [];
  while (ports.length < 3) {
    const port = await freePort(true);
    if (!ports.includes(port)) ports.push(port);
  }
  const children = ports.map((port) =>
    spawnRedisServer(port, dir, [
      '--cluster-enabled', 'yes',
      '--cluster-config-file', join(dir, `nodes-${port}.conf`),
      '--cluster-node-timeout', '2000',
    ]),
  );
  await Promise.all(ports.map((p) => waitForPing(p)));
  const create = spawnSync(
    'redis-cli',
    ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'],
    { encoding: 'utf8' },
  );
  if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`);
  for (const port of ports) {
    const ok = () => (spawnSync('redis-cli', ['-p', String(port), 'cluster', 'info'], { encoding: 'utf8' }).stdout ?? '').includes('cluster_state:ok');
    await until(`cluster node ${port} at cluster_state:ok`, ok, 20_000, 100);
  }
  return {
    url: `redis://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`,
    ports,
    async stop() {
      await Promise.all(children.map((c) => killAndWait(c, 'SIGTERM')));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
