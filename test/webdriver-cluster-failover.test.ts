// The WebDriver grid on a Redis Cluster with replicas whose master (the one
// holding the deployment's hash-tag slot) is killed -9 and its replica
// promoted: on each adapter a new session is served within 10 s of the
// promotion, and /status never says ready while the grid cannot serve (it
// did on node-redis, for good: issue 30). Separate coord processes, a real
// chromedriver and Chromium.
import t from 'tap';
import { buildIfStale } from './support/build.ts';
import { coord, type CoordProcess } from './support/cli.ts';
import { startPage } from './support/page.ts';
import { startHaCluster } from './support/redis-ha.ts';
import { freePort } from './support/redis.ts';
import { ready } from './support/rig.ts';
import { until } from './support/until.ts';
import { newSessionBody, w3c } from './support/webdriver.ts';

buildIfStale();
const page = await startPage();
t.teardown(() => page.close());

/** A new session has to be served this soon after the promotion (the bound). */
const RECOVERY_MS = 10_000;

for (const adapter of ['ioredis', 'node-redis']) {
  t.test(`${adapter}: a new session within 10 s of the promotion; /status not ready while it cannot serve`, async (t) => {
    const cluster = await startHaCluster();
    const processes: CoordProcess[] = [];
    t.teardown(async () => {
      for (const p of processes) p.kill('SIGKILL');
      await Promise.all(processes.map((p) => p.exited));
      await cluster.stop();
    });
    const prefix = '{wd}:';
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const sets = ['heartbeat.interval=1', 'heartbeat.nodeTtl=4', 'heartbeat.managerTtl=4', 'timeouts.slotReclaimInterval=2'];
    const role = (name: string, extra: string[] = []) => {
      const p = coord(['run', '--plugin', 'webdriver', '--role', name, '--redis', cluster.url, '--adapter', adapter, '--prefix', prefix, ...[...sets, ...extra].flatMap((s) => ['--set', `webdriver.${s}`])]);
      processes.push(p);
      return p;
    };
    await ready(role('proxy', [`proxy.port=${port}`]), role('manager'), role('orchestrator', ['orchestrator.slots=2', 'orchestrator.id=orch-ha']));

    const first = await until('a first session', async () => {
      const a = await w3c(base, 'POST', '/session', newSessionBody());
      return a.status === 200 ? a : undefined;
    }, 60_000, 500);
    const firstId = first.body.value!.sessionId!;
    t.equal((await w3c(base, 'POST', `/session/${firstId}/url`, { url: `${page.url}/before` })).status, 200, 'the first session works');
    t.equal((await w3c(base, 'DELETE', `/session/${firstId}`)).status, 200);
    await until('both slots free again', async () => (await w3c(base, 'GET', '/status')).body.value?.slots?.available === 2, 30_000, 250);

    // /status is read all along, from just before the failover until a session is served after it
    const statuses: { at: number; done: number; ready: boolean | undefined; message: string }[] = [];
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const at = Date.now();
        const answer = await fetch(`${base}/status`, { signal: AbortSignal.timeout(5000) })
          .then(async (r) => ((await r.json()) as { value?: { ready?: boolean; message?: string } }).value)
          .catch((error: Error) => ({ ready: undefined, message: `no answer: ${error.message}` }));
        statuses.push({ at, done: Date.now(), ready: answer?.ready, message: answer?.message ?? '' });
        await new Promise((r) => setTimeout(r, 250));
      }
    })();

    const failover = await cluster.failover(`${prefix}x`);
    t.comment(`${adapter}: killed ${failover.killedPort}, ${failover.promotedPort} promoted ${failover.promotedAt - failover.killedAt} ms later`);
    // clients keep asking, each giving up after 15 s, as a CI job's retry would
    const served = await until('a new session after the failover', async () => {
      const res = await fetch(`${base}/session`, { method: 'POST', body: JSON.stringify(newSessionBody()), headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(15_000) }).catch(() => undefined);
      if (res?.status !== 200) return undefined;
      return { at: Date.now(), id: ((await res.json()) as { value: { sessionId: string } }).value.sessionId };
    }, 120_000, 250);
    watching = false;
    await watch;
    const recoveryMs = served.at - failover.promotedAt;
    t.comment(`${adapter}: promotion → first new session: ${recoveryMs} ms`);
    t.ok(recoveryMs <= RECOVERY_MS, `a new session within ${RECOVERY_MS} ms of the promotion (${recoveryMs} ms)`);
    t.equal((await w3c(base, 'POST', `/session/${served.id}/url`, { url: `${page.url}/after` })).status, 200, 'and it works');
    t.equal((await w3c(base, 'DELETE', `/session/${served.id}`)).status, 200);
    const notReady = statuses.filter((s) => s.ready !== true);
    t.comment(`${adapter}: /status not ready ${notReady.length} of ${statuses.length} reads: ${[...new Set(notReady.map((s) => s.message))].join(' | ')}`);
    // while the slot's master is dead nothing can be served: every /status read made then says so
    const whileDead = statuses.filter((s) => s.at >= failover.killedAt && s.done <= failover.promotedAt);
    t.ok(whileDead.length > 0, `/status was read while the master was dead (${whileDead.length} reads)`);
    t.same(whileDead.filter((s) => s.ready === true), [], '/status never said ready while the master was dead');
    const again = await until('/status ready again', async () => {
      const s = (await w3c(base, 'GET', '/status')).body.value;
      return s?.ready ? s : undefined;
    }, 30_000, 250);
    t.ok(again.ready, `/status ready again: ${again.message}`);
  });
}
