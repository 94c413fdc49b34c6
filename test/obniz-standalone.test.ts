// `coord run --plugin obniz --worker W --devices D` and no Redis:
// manager and slave in one process on the embedded backend, a TypeScript
// worker (Node transpiles it, Deno runs it as is), Ctrl-C stops it cleanly —
// on Node and on Deno.
import t from 'tap';
import { mkdtempSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildIfStale } from './support/build.ts';
import { coord, coordSync, type Runtime } from './support/cli.ts';
import { fixtures } from './support/obniz.ts';
import { until } from './support/until.ts';

buildIfStale();

for (const runtime of ['node', 'deno'] as Runtime[]) {
  t.test(`standalone on ${runtime}`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'obniz-standalone-'));
    const devices = join(dir, 'devices.yaml');
    writeFileSync(devices, '- id: 1234-5678\n  configs: {room: kitchen}\n- 8765-4321\n');
    const record = join(dir, 'record.jsonl');
    const p = coord(['run', '--plugin', 'obniz', '--worker', join(fixtures, 'ts-worker.ts'), '--devices', devices], { OBNIZ_TEST_RECORD: record }, runtime);
    t.teardown(() => p.kill('SIGKILL'));
    const ready = await p.waitFor((l) => l.msg === 'ready', 120_000);
    t.match(String(ready.redis), /^embedded:/, 'on the embedded backend');
    t.same(ready.roles, ['obniz/master']);
    // the worker creates the file, then writes its line: an empty file is "none yet"
    const starts = () => (existsSync(record) ? readFileSync(record, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { id: string; text: string }) : []);
    await until('two workers started', () => starts().length === 2, 30_000);
    t.same(starts().map((s) => s.text).sort(), ['hello 1234-5678', 'hello 8765-4321'], 'the TypeScript worker ran with its .ts import');
    p.kill('SIGINT');
    t.equal(await p.exited, 0, 'Ctrl-C stops and exits 0');
  });
}

t.test('coord run --help lists the run flags plugins declare', async (t) => {
  const r = coordSync(['run', '--help']);
  t.equal(r.status, 0);
  t.match(r.stdout, /--worker <value>\s+obniz: .*\(= --set obniz\.worker=…\)/, '--worker, with its schema description');
  t.match(r.stdout, /--devices <value>\s+obniz: Device list/, '--devices');
  t.match(r.stdout, /--instance-name <value>/, '--instance-name');
});

t.test('a bad value given by a plugin flag: one line that names the flag', async (t) => {
  const r = coordSync(['run', '--plugin', 'obniz', '--role', 'slave', '--instance-name', 'a b/c', '--worker', 'w.mjs']);
  t.equal(r.status, 2, 'exit 2');
  t.match(r.stderr, /^coord: config: obniz\.instanceName = "a b\/c" \(from flag --instance-name\): expected string matching/);
});
