// The cost of one EVALSHA round trip (a tiny script, calls one after another)
// through each adapter: ioredis and node-redis against a redis-server this
// bench starts on a free loopback port, and the embedded in-process backend.
//
//   npx tsc -p . && node bench/evalsha.mjs      (BENCH_CALLS=20000 for more calls)
//
// Prints a table (adapter, µs per call, ratio to ioredis) and writes it to
// bench/results/evalsha.md.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CALLS = Number(process.env.BENCH_CALLS ?? 5000);
const WARMUP = 500;
const ROUNDS = 3; // the median round is reported
const dist = new URL('../dist/adapters/', import.meta.url);
const resultFile = new URL('results/evalsha.md', import.meta.url);

const adapters = [
  { name: 'ioredis', file: 'ioredis.js', factory: 'createIoredisBackend', needsServer: true },
  { name: 'node-redis', file: 'node-redis.js', factory: 'createNodeRedisBackend', needsServer: true },
  { name: 'embedded', file: 'embedded.js', factory: 'createEmbeddedBackend', needsServer: false },
];

const lua = 'return ARGV[1]';
const script = { name: 'bench/echo', lua, sha: createHash('sha1').update(lua).digest('hex') };

if (!existsSync(new URL('ioredis.js', dist))) {
  console.error('bench/evalsha.mjs: dist/adapters/ioredis.js is missing; build first with `npx tsc -p .`');
  process.exit(2);
}

const server = await startRedisServer();
const rows = [];
const notes = [];
try {
  for (const adapter of adapters) {
    const create = await loadFactory(adapter);
    if (typeof create !== 'function') {
      notes.push(`${adapter.name}: skipped — ${create}`);
      console.log(`skipping ${adapter.name}: ${create}`);
      continue;
    }
    const backend = create(adapter.needsServer ? { url: server.url } : {});
    try {
      await backend.ready();
      const perCall = await measure(backend);
      rows.push({ name: adapter.name, perCall });
    } finally {
      await backend.close();
    }
  }
} finally {
  await server.stop();
}

const base = rows.find((row) => row.name === 'ioredis')?.perCall;
const table = [
  '| adapter | µs per call | ratio to ioredis |',
  '|---|---:|---:|',
  ...rows.map((row) => `| ${row.name} | ${row.perCall.toFixed(1)} | ${base ? (row.perCall / base).toFixed(2) : 'n/a'} |`),
].join('\n');
const context =
  `${CALLS} sequential EVALSHA calls of \`${lua}\` after ${WARMUP} warm-up calls, median of ${ROUNDS} rounds; ` +
  `Node ${process.version}, ${server.version}, loopback TCP for ioredis and node-redis.`;
console.log(`\n${table}\n\n${context}`);
for (const note of notes) console.log(note);

mkdirSync(new URL('.', resultFile), { recursive: true });
const sections = [
  '# EVALSHA round trip per adapter',
  table,
  context,
  ...(notes.length ? [notes.map((note) => `- ${note}`).join('\n')] : []),
  `Measured ${new Date().toISOString()} with \`node bench/evalsha.mjs\`.`,
];
writeFileSync(resultFile, `${sections.join('\n\n')}\n`);
console.log(`\nwritten to ${fileURLToPath(resultFile)}`);

/** Microseconds per evalScript call, the median of ROUNDS rounds. */
async function measure(backend) {
  const run = (i) => backend.evalScript(script, ['{bench}:k'], [i]);
  for (let i = 0; i < WARMUP; i++) await run(i);
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    const started = performance.now();
    for (let i = 0; i < CALLS; i++) await run(i);
    rounds.push(((performance.now() - started) * 1000) / CALLS);
  }
  return rounds.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)];
}

/** The adapter's factory, or why it cannot be used (not built yet, or not written yet). */
async function loadFactory({ file, factory }) {
  const url = new URL(file, dist);
  if (!existsSync(url)) return `dist/adapters/${file} does not exist (adapter not written or not built yet)`;
  try {
    const module = await import(url.href);
    return typeof module[factory] === 'function' ? module[factory] : `dist/adapters/${file} has no export ${factory}`;
  } catch (error) {
    return `dist/adapters/${file} failed to load: ${error instanceof Error ? error.message : error}`;
  }
}

/** A redis-server of our own on a free loopback port, stopped by stop(). */
async function startRedisServer() {
  if (spawnSync('sh', ['-c', 'command -v redis-server']).status !== 0) {
    console.error('bench/evalsha.mjs: redis-server not found (apt-get install -y redis-server)');
    process.exit(2);
  }
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'coord-bench-'));
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  const version = spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).stdout.match(/v=(\S+)/)?.[1];
  return {
    url: `redis://127.0.0.1:${port}`, // the adapters' ready() waits for it to listen
    version: `Redis ${version ?? '(unknown version)'}`,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        await new Promise((resolve) => {
          child.once('exit', resolve);
          child.kill('SIGTERM');
        });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}
