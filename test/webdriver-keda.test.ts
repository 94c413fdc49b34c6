// KEDA's selenium-grid scaler counting this grid's GraphQL answer — with
// KEDA's own counting logic (getCountFromSeleniumResponse, ported in
// test/support/keda-selenium-grid.ts), not just the answer's shape. Two slots
// run two real chromedriver sessions and three more clients wait: one names no
// browserVersion, one the installed major version, one the full version.
// Selenium Grid 4 serves a detected driver's stereotype as browserName and
// platformName without browserVersion, and KEDA matches a stereotype (or a
// queued request) only when the trigger's browserVersion starts with its, so
// Selenium Grid's answer for this state counts, per trigger:
//   no browserVersion:   2 running + 1 queued (the request naming no version)
//   major ("156"):       0 running + 1 queued (the request for "156")
//   full ("156.0.…"):    0 running + 2 queued (both versioned requests)
// This grid's answer must count the same, for the newest KEDA scaler and an
// older one. Before, its stereotypes carried the full version and the
// documented trigger (no version) counted 0 of the 2 running sessions. With
// proxy.stereotypeVersion=major the stereotypes carry "156", and the triggers
// naming the major or the full version count the running sessions instead.
import t from 'tap';
import { kedaCount, KEDA_QUERY, type KedaResponse, type KedaTrigger } from './support/keda-selenium-grid.ts';
import { freePort } from './support/redis.ts';
import { until } from './support/until.ts';
import { newSessionBody, startWebdriver, w3c } from './support/webdriver.ts';

const TOKEN = 'keda-token-1';
const port = await freePort();
const grid = await startWebdriver({ redis: 'embedded://keda', options: { proxy: { port, token: TOKEN }, api: { port: 0 }, orchestrator: { slots: 2, id: 'orch-k' } } });
t.teardown(() => grid.handle.stop('test done'));
const base = `http://127.0.0.1:${port}`;
const bearer = { authorization: `Bearer ${TOKEN}` };

/** What KEDA reads: its query, posted with its Basic auth (username/password trigger authentication). */
async function kedaAnswer(): Promise<KedaResponse> {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`keda:${TOKEN}`).toString('base64')}` },
    body: JSON.stringify({ query: KEDA_QUERY }),
  });
  return (await res.json()) as KedaResponse;
}

await until('the orchestrator is registered', async () => (await kedaAnswer()).data.nodesInfo.nodes?.length === 1, 30_000);

t.test('2 running and 3 queued sessions: KEDA counts them as it counts Selenium Grid 4, for triggers with no, a major and a full browserVersion', async (t) => {
  const running = await Promise.all([0, 1].map(() => w3c(base, 'POST', '/session', newSessionBody({ platformName: 'linux' }), bearer)));
  t.same(running.map((r) => r.status), [200, 200], 'two sessions run on real chromedriver');
  const full = String(running[0]!.body.value!.capabilities!.browserVersion);
  const major = full.split('.')[0]!;
  t.match(full, /^\d+\.\d+\.\d+\.\d+$/, `the browser's full version: ${full}`);

  // each waiting client quits as soon as it is served, so the third gets a slot too
  const waiting = [{}, { browserVersion: major }, { browserVersion: full }].map(async (version) => {
    const made = await w3c(base, 'POST', '/session', newSessionBody({ platformName: 'linux', ...version }), bearer);
    if (made.status === 200) await w3c(base, 'DELETE', `/session/${made.body.value!.sessionId}`, undefined, bearer);
    return made.status;
  });
  const answer = await until('three requests are queued', async () => {
    const a = await kedaAnswer();
    return a.data.sessionsInfo.sessionQueueRequests?.length === 3 ? a : undefined;
  }, 30_000);

  const node = answer.data.nodesInfo.nodes![0]!;
  t.same(JSON.parse(node.stereotypes), [{ slots: 2, stereotype: { browserName: 'chrome', platformName: 'linux' } }], 'stereotypes as Selenium Grid serves a detected driver: no browserVersion');
  t.same(node.sessions!.map((s) => JSON.parse(s.slot.stereotype)), [{ browserName: 'chrome', platformName: 'linux' }, { browserName: 'chrome', platformName: 'linux' }], "each session's slot stereotype likewise");
  t.same(node.sessions!.map((s) => JSON.parse(s.capabilities).browserVersion), [full, full], 'the sessions themselves still say which browser they got');

  const trigger = (browserVersion?: string): KedaTrigger => ({ browserName: 'chrome', platformName: 'linux', ...(browserVersion ? { browserVersion } : {}) });
  const expected: [string, KedaTrigger, { running: number; queued: number }][] = [
    ['no browserVersion (the trigger docs/webdriver.md gives)', trigger(), { running: 2, queued: 1 }],
    [`the major version "${major}"`, trigger(major), { running: 0, queued: 1 }],
    [`the full version "${full}"`, trigger(full), { running: 0, queued: 2 }],
  ];
  for (const legacy of [false, true]) {
    for (const [what, tr, want] of expected) {
      const count = kedaCount(answer, { ...tr, legacy });
      const scaler = legacy ? 'the older KEDA scaler' : 'the newest KEDA scaler';
      t.same(count.errors, [], `${scaler}, ${what}: everything in the answer parses`);
      t.same({ running: count.onGoingSessions, queued: count.newRequestNodes }, want, `${scaler}, ${what}: ${want.running} running + ${want.queued} queued (metric ${want.running + want.queued})`);
    }
  }
  // the issue as it was: stereotypes with the full version hide the running sessions from the documented trigger
  const versioned = structuredClone(answer);
  for (const n of versioned.data.nodesInfo.nodes!) {
    n.stereotypes = JSON.stringify((JSON.parse(n.stereotypes) as { slots: number; stereotype: object }[]).map((s) => ({ ...s, stereotype: { ...s.stereotype, browserVersion: full } })));
    for (const s of n.sessions!) s.slot.stereotype = JSON.stringify({ ...JSON.parse(s.slot.stereotype), browserVersion: full });
  }
  t.equal(kedaCount(versioned, trigger()).onGoingSessions, 0, 'with the full version in the stereotypes (as this grid served before), the documented trigger counted 0 running');
  // one node per queued request when a node runs two sessions: KEDA's nodeMaxSessions
  t.equal(kedaCount(answer, { ...trigger(full), nodeMaxSessions: 2 }).newRequestNodes, 1, 'nodeMaxSessions 2: the two versioned requests fit one new node');
  // a trigger for another browser counts nothing of this grid
  t.same(kedaCount(answer, { browserName: 'firefox', platformName: 'linux' }), { newRequestNodes: 0, onGoingSessions: 0, errors: [] }, 'a firefox trigger counts nothing');

  for (const r of running) t.equal((await w3c(base, 'DELETE', `/session/${r.body.value!.sessionId}`, undefined, bearer)).status, 200);
  t.same(await Promise.all(waiting), [200, 200, 200], 'the three waiting clients were served once slots were free');
  const idle = await until('the grid is idle', async () => {
    const a = await kedaAnswer();
    return a.data.nodesInfo.nodes![0]!.sessionCount === 0 ? a : undefined;
  }, 30_000);
  t.same(kedaCount(idle, trigger()), { newRequestNodes: 0, onGoingSessions: 0, errors: [] }, 'an idle grid: KEDA counts 0 (it may scale to the minimum)');
});

t.test('proxy.stereotypeVersion=major (as a docker-selenium node with SE_NODE_BROWSER_VERSION): triggers naming the version count the running sessions', async (t) => {
  const vPort = await freePort();
  const versioned = await startWebdriver({ redis: 'embedded://keda-major', options: { proxy: { port: vPort, token: TOKEN, stereotypeVersion: 'major' }, api: { port: 0 }, orchestrator: { slots: 1, id: 'orch-v' } } });
  t.teardown(() => versioned.handle.stop('test done'));
  const at = `http://127.0.0.1:${vPort}`;
  const answerOf = async () => {
    const res = await fetch(`${at}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer }, body: JSON.stringify({ query: KEDA_QUERY }) });
    return (await res.json()) as KedaResponse;
  };
  await until('the orchestrator is registered', async () => (await answerOf()).data.nodesInfo.nodes?.length === 1, 30_000);
  const running = await w3c(at, 'POST', '/session', newSessionBody({ platformName: 'linux' }), bearer);
  t.equal(running.status, 200);
  const full = String(running.body.value!.capabilities!.browserVersion);
  const major = full.split('.')[0]!;
  const waiting = (async () => {
    const made = await w3c(at, 'POST', '/session', newSessionBody({ platformName: 'linux', browserVersion: major }), bearer);
    if (made.status === 200) await w3c(at, 'DELETE', `/session/${made.body.value!.sessionId}`, undefined, bearer);
    return made.status;
  })();
  const answer = await until('a request is queued', async () => {
    const a = await answerOf();
    return a.data.sessionsInfo.sessionQueueRequests?.length === 1 ? a : undefined;
  }, 30_000);
  t.same(JSON.parse(answer.data.nodesInfo.nodes![0]!.stereotypes), [{ slots: 1, stereotype: { browserName: 'chrome', browserVersion: major, platformName: 'linux' } }], 'the stereotype carries the major version');
  for (const [what, browserVersion, want] of [
    ['no browserVersion', undefined, { running: 0, queued: 0 }],
    [`the major version "${major}"`, major, { running: 1, queued: 1 }],
    [`the full version "${full}"`, full, { running: 1, queued: 1 }],
  ] as const) {
    for (const legacy of [false, true]) {
      const count = kedaCount(answer, { browserName: 'chrome', platformName: 'linux', ...(browserVersion ? { browserVersion } : {}), legacy });
      t.same({ running: count.onGoingSessions, queued: count.newRequestNodes, errors: count.errors }, { ...want, errors: [] }, `${legacy ? 'the older' : 'the newest'} KEDA scaler, ${what}: ${want.running} running + ${want.queued} queued`);
    }
  }
  t.equal((await w3c(at, 'DELETE', `/session/${running.body.value!.sessionId}`, undefined, bearer)).status, 200);
  t.equal(await waiting, 200, 'the waiting client was served');
});
