// POST /graphql answers Selenium Grid's GraphQL — here the query KEDA's
// selenium-grid scaler sends (pkg/scalers/selenium_grid_scaler.go), word for
// word — from the live grid: the session in its slot, the node's stereotypes,
// and the queue while clients wait for a slot. Unknown fields and bad bodies
// are GraphQL errors; the token guards it as every other route.
import t from 'tap';
import { freePort } from './support/redis.ts';
import { until } from './support/until.ts';
import { newSessionBody, startWebdriver, w3c } from './support/webdriver.ts';

/** The query KEDA's selenium-grid scaler posts, as its source spells it. */
const KEDA_QUERY =
  '{ grid { sessionCount, maxSession, totalSlots }, nodesInfo { nodes { id, status, sessionCount, maxSession, slotCount, stereotypes, sessions { id, capabilities, slot { id, stereotype } } } }, sessionsInfo { sessionQueueRequests } }';

const TOKEN = 'graphql-token-1';
const port = await freePort();
const apiPort = await freePort();
const grid = await startWebdriver({ redis: 'embedded://graphql', options: { proxy: { port, token: TOKEN }, api: { port: apiPort }, orchestrator: { slots: 1, id: 'orch-g' } } });
t.teardown(() => grid.handle.stop('test done'));
const base = `http://127.0.0.1:${port}`;
const bearer = { authorization: `Bearer ${TOKEN}` };
/** KEDA's username/password trigger authentication sends Basic auth. */
const basic = { authorization: `Basic ${Buffer.from(`keda:${TOKEN}`).toString('base64')}` };

interface KedaAnswer {
  data: {
    grid: { sessionCount: number; maxSession: number; totalSlots: number };
    nodesInfo: { nodes: { id: string; status: string; sessionCount: number; maxSession: number; slotCount: number; stereotypes: string; sessions: { id: string; capabilities: string; slot: { id: string; stereotype: string } }[] }[] };
    sessionsInfo: { sessionQueueRequests: string[] };
  };
  errors?: unknown;
}

async function post(body: unknown, headers: Record<string, string> = bearer, method = 'POST') {
  const res = await fetch(`${base}/graphql`, { method, headers: { 'content-type': 'application/json', ...headers }, body: method === 'GET' ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: JSON.parse(text) as Record<string, unknown>, text };
}
const keda = async (headers: Record<string, string> = bearer) => (await post({ query: KEDA_QUERY }, headers)).json as unknown as KedaAnswer;

await until('the orchestrator is registered', async () => (await keda()).data.grid.totalSlots === 1, 30_000);

t.test("KEDA's query on an idle grid: one slot, no session, an empty queue", async (t) => {
  const answer = await keda();
  t.notOk(answer.errors, 'no errors');
  t.same(answer.data.grid, { sessionCount: 0, maxSession: 1, totalSlots: 1 });
  const [node] = answer.data.nodesInfo.nodes;
  t.equal(node!.id, 'orch-g');
  t.equal(node!.status, 'UP', 'KEDA counts free slots only on nodes that are UP');
  t.same([node!.sessionCount, node!.maxSession, node!.slotCount], [0, 1, 1]);
  const stereotypes = JSON.parse(node!.stereotypes) as { slots: number; stereotype: Record<string, string> }[];
  t.equal(stereotypes.length, 1);
  t.equal(stereotypes[0]!.slots, 1);
  t.equal(stereotypes[0]!.stereotype.browserName, 'chrome');
  t.equal(stereotypes[0]!.stereotype.platformName, 'linux');
  t.same(node!.sessions, []);
  t.same(answer.data.sessionsInfo.sessionQueueRequests, []);
});

t.test("KEDA's query while a session runs and two clients wait: the session in its slot, a queue of two; then served in turn", async (t) => {
  const created = await w3c(base, 'POST', '/session', newSessionBody(), bearer);
  t.equal(created.status, 200);
  const first = created.body.value!.sessionId!;
  const waiting = [0, 1].map(() => w3c(base, 'POST', '/session', newSessionBody({ 'coord:options': { name: 'waiting' } }), bearer));
  const busy = await until('two requests are queued', async () => {
    const a = await keda();
    return a.data.sessionsInfo.sessionQueueRequests.length === 2 ? a : undefined;
  }, 30_000);
  t.same(busy.data.grid, { sessionCount: 1, maxSession: 1, totalSlots: 1 });
  const node = busy.data.nodesInfo.nodes[0]!;
  t.equal(node.sessionCount, 1);
  t.equal(node.sessions.length, 1);
  const session = node.sessions[0]!;
  t.equal(session.id, first, "the client's session id");
  const caps = JSON.parse(session.capabilities) as Record<string, unknown>;
  t.equal(caps.browserName, 'chrome', 'capabilities are a JSON string, as KEDA parses them');
  t.equal(session.slot.id, 'orch-g:1');
  t.equal((JSON.parse(session.slot.stereotype) as Record<string, string>).browserName, 'chrome', 'the slot stereotype KEDA matches ongoing sessions by');
  for (const request of busy.data.sessionsInfo.sessionQueueRequests) {
    const requested = JSON.parse(request) as Record<string, unknown>;
    t.equal(requested.browserName, 'chrome', 'each queued request is one capability set as JSON (what KEDA matches browserName on)');
    t.ok(requested['goog:chromeOptions'], 'with its extension capabilities');
  }
  t.equal((await keda(basic)).data.sessionsInfo.sessionQueueRequests.length, 2, "KEDA's Basic auth (username/password) is taken too");

  t.equal((await w3c(base, 'DELETE', `/session/${first}`, undefined, bearer)).status, 200);
  const ended = new Set([first]);
  for (const expected of [1, 0]) {
    const answer = await until(`the queue is down to ${expected} and a waiting client holds the slot`, async () => {
      const a = await keda();
      const holder = a.data.nodesInfo.nodes[0]!.sessions[0]?.id;
      return a.data.sessionsInfo.sessionQueueRequests.length === expected && holder && !ended.has(holder) ? holder : undefined;
    }, 60_000);
    await until('its client is served', async () => (await w3c(base, 'GET', `/session/${answer}/title`, undefined, bearer)).status === 200, 60_000);
    ended.add(answer);
    t.equal((await w3c(base, 'DELETE', `/session/${answer}`, undefined, bearer)).status, 200, 'served, then quit');
  }
  const answers = await Promise.all(waiting);
  t.same(answers.map((a) => a.status), [200, 200], 'both waiting clients were served');
  const idle = await until('the grid is idle again', async () => {
    const a = await keda();
    return a.data.grid.sessionCount === 0 ? a : undefined;
  }, 15_000);
  t.same(idle.data.sessionsInfo.sessionQueueRequests, []);
});

t.test('unknown fields, syntax errors and bad bodies are GraphQL errors; the grid answers on', async (t) => {
  const unknown = await post({ query: '{ grid { sessionCount, noSuchField } }' });
  t.equal(unknown.status, 200);
  t.notOk(unknown.json.data, 'nothing executed');
  t.match((unknown.json.errors as { message: string }[])[0]!.message, /Cannot query field "noSuchField" on type "Grid"/);
  const syntax = await post({ query: '{ grid { ' });
  t.match((syntax.json.errors as { message: string }[])[0]!.message, /Syntax Error/);
  const notJson = await post('this is not json');
  t.equal(notJson.status, 400);
  t.match((notJson.json.errors as { message: string }[])[0]!.message, /not JSON/);
  const noQuery = await post({ nope: 1 });
  t.equal(noQuery.status, 400);
  const get = await post(undefined, bearer, 'GET');
  t.equal(get.status, 405);
  t.match((get.json.errors as { message: string }[])[0]!.message, /POST/);
  const variables = await post({ query: 'query One($id: String!) { session(id: $id) { id } }', variables: { id: 'no-such-session' } });
  t.match((variables.json.errors as { message: string }[])[0]!.message, /no session no-such-session/, 'a resolver error is a GraphQL error too');
  const keyish = await post({ query: '{ session(id: "x:status") { id } }' });
  t.match((keyish.json.errors as { message: string }[])[0]!.message, /"x:status" is not a session id/, 'an id that is no session id never reaches a key name');
  t.same((await keda()).data.grid, { sessionCount: 0, maxSession: 1, totalSlots: 1 }, 'the grid still answers');
});

t.test('coord fields: the grid URL, the sessions that ended with their state and timings', async (t) => {
  const answer = await post({ query: '{ grid { uri version nodeCount sessionQueueSize } sessionsInfo { ended(limit: 3) { id state lastCode queuedAt aliveAt terminatedAt aliveSeconds } } }' });
  const data = answer.json.data as { grid: Record<string, unknown>; sessionsInfo: { ended: { state: string; lastCode: string; terminatedAt: string; aliveSeconds: number }[] } };
  t.equal(data.grid.uri, base);
  t.equal(data.grid.nodeCount, 1);
  t.equal(data.grid.sessionQueueSize, 0);
  t.equal(data.sessionsInfo.ended.length, 3, 'the three sessions of the test before');
  t.ok(data.sessionsInfo.ended.every((s) => s.state === 'terminated' && s.lastCode === 'HALT' && s.aliveSeconds >= 0), 'each terminated, its log closed');
  const times = data.sessionsInfo.ended.map((s) => s.terminatedAt);
  t.same(times, [...times].sort().reverse(), 'newest first');
});

t.test('Session.recording: the link of each stored recording (its own token in it), null for a session not recorded', async (t) => {
  const ids = ((await post({ query: '{ sessionsInfo { ended(limit: 3) { id } } }' })).json.data as { sessionsInfo: { ended: { id: string }[] } }).sessionsInfo.ended.map((s) => s.id);
  const { backend, config } = grid.handle;
  const storageKey = (id: string) => `${config.redis.keyPrefix}session:${id}:storage`;
  await backend.send(['SET', storageKey(ids[0]!), 'store-a']);
  await backend.send(['SET', storageKey(ids[2]!), 'store-b']);
  t.teardown(() => backend.send(['DEL', storageKey(ids[0]!), storageKey(ids[2]!)]));
  const answer = await post({ query: '{ sessionsInfo { ended(limit: 3) { id recording } } }' });
  const ended = (answer.json.data as { sessionsInfo: { ended: { id: string; recording: string | null }[] } }).sessionsInfo.ended;
  t.same(ended.map((s) => s.id), ids, 'the same sessions');
  t.match(ended[0]!.recording, new RegExp(`^/storage/store-a/${ids[0]}\\.mp4\\?token=[A-Za-z0-9_-]+$`), 'a link to the storage that holds it, with a token');
  t.equal(ended[1]!.recording, null, 'not recorded: null');
  t.match(ended[2]!.recording, new RegExp(`^/storage/store-b/${ids[2]}\\.mp4\\?token=`));
  t.not(ended[0]!.recording!.split('token=')[1], ended[2]!.recording!.split('token=')[1], 'each recording its own token');
});

t.test('the token guards /graphql as every other route', async (t) => {
  for (const [what, headers] of [['no token', {}], ['a wrong Bearer token', { authorization: 'Bearer nope' }], ['a wrong Basic password', { authorization: `Basic ${Buffer.from('keda:nope').toString('base64')}` }]] as const) {
    const answer = await post({ query: KEDA_QUERY }, headers);
    t.equal(answer.status, 401, what);
    t.notMatch(answer.text, /orch-g|chrome/, `${what}: nothing about the grid`);
  }
});

t.test('the API serves the same /graphql (token as header or ?token=) and the grid page', async (t) => {
  const api = `http://127.0.0.1:${apiPort}`;
  const refused = await fetch(`${api}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: KEDA_QUERY }) });
  t.equal(refused.status, 401);
  const answered = await fetch(`${api}/graphql?token=${TOKEN}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: KEDA_QUERY }) });
  t.equal(answered.status, 200);
  t.same(((await answered.json()) as KedaAnswer).data.grid, { sessionCount: 0, maxSession: 1, totalSlots: 1 });
  const page = await fetch(`${api}/ui`, { headers: bearer });
  t.equal(page.status, 200);
  t.match(await page.text(), /coord webdriver grid/);
  t.equal((await fetch(`${api}/ui`)).status, 401);
});
