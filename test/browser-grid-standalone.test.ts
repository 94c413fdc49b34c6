// The README's main job: `coord run --plugin browser-grid` with no Redis starts
// a proxy and two Chromium workers on the embedded backend, prints the ws URL,
// serves a Playwright client, and drains and exits 0 on Ctrl-C — on Node and on Deno.
import t from 'tap';
import { coord, type Runtime } from './support/cli.ts';
import { connect, startPageServer, titleOf } from './support/grid.ts';
import { freePort } from './support/redis.ts';

const page = await startPageServer();
t.teardown(() => page.close());

for (const runtime of ['node', 'deno'] as Runtime[]) {
  t.test(`standalone on ${runtime}`, async (t) => {
    const port = await freePort();
    const grid = coord(['run', '--plugin', 'browser-grid', '--set', `browser-grid.port=${port}`], {}, runtime);
    t.teardown(() => grid.kill('SIGKILL'));
    const listening = await grid.waitFor((l) => /^proxy listening on ws:\/\//.test(l.msg), 120_000);
    t.equal(listening.msg, `proxy listening on ws://127.0.0.1:${port}/?browser=chromium`, 'prints the ws URL');
    await grid.waitFor((l) => l.msg === 'ready');
    t.equal(grid.lines.filter((l) => l.msg === 'browser server registered').length, 2, 'two Chromium workers');
    t.match(String(grid.lines.find((l) => l.msg === 'ready')?.redis), /^embedded:/, 'on the embedded backend');
    const browser = await connect(port, '');
    t.equal(await titleOf(browser, `${page.url}/hello`), 'coord /hello', 'a Playwright client opens a page and reads its title');
    await browser.close();
    grid.kill('SIGINT');
    t.equal(await grid.exited, 0, 'Ctrl-C drains and exits 0');
    t.ok(grid.lines.some((l) => l.msg === 'draining'), 'the workers drained');
  });
}
