// Defaults that fit test runners and a port range for browser servers:
// `workerPorts: 'A-B'` binds every browser server (and a recycled server's
// replacement) inside the range; a bad range is one clear config line.
import t from 'tap';
import { loadConfig } from '../core/config.ts';
import plugin from '../plugins/browser-grid/index.ts';
import { coord, coordSync } from './support/cli.ts';
import { connect, startPageServer, titleOf } from './support/grid.ts';
import { freePort } from './support/redis.ts';

const page = await startPageServer();
t.teardown(() => page.close());

t.test('defaults: a queued client waits 300 s, as on Selenium Grid', async (t) => {
  const config = loadConfig({ plugins: [plugin], env: {}, flags: [] }) as { plugins: Record<string, Record<string, unknown>> };
  t.equal(config.plugins['browser-grid']!.queueTimeout, 300);
});

t.test('workerPorts: browser servers, and a recycled one\'s replacement, bind inside the range', async (t) => {
  const port = await freePort();
  let first = await freePort();
  first = Math.min(first, 65000);
  const range = `${first}-${first + 7}`;
  const grid = coord(['run', '--plugin', 'browser-grid', '--set', `browser-grid.port=${port}`, '--set', `browser-grid.workerPorts=${range}`,
    '--set', 'browser-grid.maxLifetimeSessions=1', '--set', 'browser-grid.drainTimeout=5']);
  t.teardown(() => grid.kill('SIGKILL'));
  await grid.waitFor((l) => l.msg === 'ready', 120_000);
  const portOf = (l: { endpoint?: unknown }) => Number(new URL(String(l.endpoint)).port);
  const registered = () => grid.lines.filter((l) => l.msg === 'browser server registered').map(portOf);
  t.equal(registered().length, 2);
  t.ok(registered().every((p) => p >= first && p <= first + 7), `ports ${registered().join(', ')} in ${range}`);
  const b = await connect(port, '');
  t.match(await titleOf(b, page.url), /coord/);
  await b.close();
  await grid.waitFor((l) => l.msg === 'browser server replaced', 30_000);
  t.equal(registered().length, 3, 'the server that served its one session was replaced');
  t.ok(registered().every((p) => p >= first && p <= first + 7), `ports ${registered().join(', ')} in ${range}`);
  grid.kill('SIGINT');
  t.equal(await grid.exited, 0);
});

t.test('a bad port range: one clear line, exit 2, nothing started', async (t) => {
  for (const [value, message] of [
    ['9000-8000', /workerPorts "9000-8000": expected FIRST-LAST with 1 <= FIRST <= LAST <= 65535/],
    ['9000-9000', /workerPorts "9000-9000" holds 1 ports, fewer than the 4 this process binds/],
    ['9000', /workerPorts/],
    // two servers and their two CDP ports, and two BiDi ports
    ['9000-9004 bidi', /workerPorts "9000-9004" holds 5 ports, fewer than the 6 this process binds/],
  ] as const) {
    const [ports, bidi] = value.split(' ');
    const r = coordSync(['run', '--plugin', 'browser-grid', '--set', `browser-grid.workerPorts=${ports}`, ...(bidi ? ['--set', 'browser-grid.bidi=true'] : [])]);
    t.equal(r.status, 2, value);
    t.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    t.match(r.stderr, message);
    t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
  }
});
