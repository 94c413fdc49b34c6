// GET /status answers in Selenium Grid 4's shape — value.ready, value.message,
// value.nodes[] (id, uri, maxSessions, availability, slots[] with id,
// stereotype, lastStarted and session: null or {sessionId, capabilities,
// stereotype, start, uri}) — beside coord's own capacity fields, and the
// slots follow a live session: held while it runs, free once it quits.
import t, { type Test } from 'tap';
import { createBackend } from '../adapters/index.ts';
import { freePort } from './support/redis.ts';
import { until } from './support/until.ts';
import { newSessionBody, startWebdriver, w3c } from './support/webdriver.ts';

const port = await freePort();
const grid = await startWebdriver({ redis: 'embedded://status-shape', options: { proxy: { port }, api: { port: 0 }, orchestrator: { slots: 2, id: 'orch-a' } } });
const backend = await createBackend({ url: 'embedded://status-shape' });
t.teardown(async () => {
  await grid.handle.stop('test done');
  await backend.close();
});
const base = `http://127.0.0.1:${port}`;

interface Slot {
  id: { hostId: string; id: string };
  lastStarted: string;
  stereotype: Record<string, unknown>;
  session: null | { sessionId: string; capabilities: Record<string, unknown>; stereotype: Record<string, unknown>; start: string; uri: string };
}
interface Node {
  id: string;
  uri: string;
  maxSessions: number;
  sessionTimeout: number;
  heartbeatPeriod: number;
  availability: string;
  version: string;
  osInfo: Record<string, string>;
  slots: Slot[];
}
interface Status {
  ready: boolean;
  message: string;
  nodes: Node[];
  slots: { total: number; available: number };
  sessions: { active: number };
}
const status = async () => {
  const res = await fetch(`${base}/status`);
  t.equal(res.status, 200);
  return ((await res.json()) as { value: Status }).value;
};
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** Every field Selenium Grid 4's /status gives a node and a slot, with its JSON type. */
function checkShape(t: Test, node: Node) {
  t.type(node.id, 'string');
  t.doesNotThrow(() => new URL(node.uri), 'uri is a URI');
  t.type(node.maxSessions, 'number');
  t.type(node.sessionTimeout, 'number');
  t.type(node.heartbeatPeriod, 'number');
  t.ok(['UP', 'DRAINING', 'DOWN'].includes(node.availability), 'availability is one of Selenium Grid\'s');
  t.type(node.version, 'string');
  t.same(Object.keys(node.osInfo).sort(), ['arch', 'name', 'version']);
  t.equal(node.slots.length, node.maxSessions, 'one slot per session it can run');
  for (const slot of node.slots) {
    t.same(Object.keys(slot).sort(), ['id', 'lastStarted', 'session', 'stereotype']);
    t.equal(slot.id.hostId, node.id, 'a slot id names its node');
    t.type(slot.id.id, 'string');
    t.match(slot.lastStarted, ISO);
    t.equal(slot.stereotype.browserName, 'chrome');
    t.match(String(slot.stereotype.browserVersion), /^\d+\.\d+\.\d+\.\d+$/);
    t.equal(slot.stereotype.platformName, 'linux');
    if (slot.session) t.same(Object.keys(slot.session).sort(), ['capabilities', 'sessionId', 'start', 'stereotype', 'uri']);
  }
}

t.test('an idle grid: ready, one node UP with two free slots, and coord\'s capacity fields kept', async (t) => {
  const s = await until('the orchestrator is registered', async () => {
    const v = await status();
    return v.nodes.length === 1 && v.ready ? v : undefined;
  }, 30_000);
  t.equal(s.ready, true);
  t.type(s.message, 'string');
  t.same(s.slots, { total: 2, available: 2 }, 'coord fields are still there');
  t.same(s.sessions, { active: 0 });
  const [node] = s.nodes;
  checkShape(t, node!);
  t.equal(node!.id, 'orch-a');
  t.equal(node!.availability, 'UP');
  t.equal(node!.maxSessions, 2);
  t.equal(node!.sessionTimeout, 300_000, 'the idle timeout in ms (the default 300 s)');
  t.same(node!.slots.map((s) => s.session), [null, null], 'no session in either slot');
  t.same(node!.slots.map((s) => s.lastStarted), ['1970-01-01T00:00:00Z', '1970-01-01T00:00:00Z'], 'never started: the epoch, as Selenium Grid writes it');
});

t.test('a live session sits in its slot with its capabilities, start and node URI; quitting frees the slot', async (t) => {
  const created = await w3c(base, 'POST', '/session', newSessionBody());
  t.equal(created.status, 200);
  const id = created.body.value!.sessionId!;
  const s = await status();
  const node = s.nodes[0]!;
  checkShape(t, node);
  const held = node.slots.filter((slot) => slot.session);
  t.equal(held.length, 1, 'one slot holds a session');
  const session = held[0]!.session!;
  t.equal(session.sessionId, id, 'the client\'s session id');
  t.equal(session.capabilities.browserName, 'chrome', 'the driver\'s capabilities');
  t.match(String(session.capabilities.browserVersion), /^\d+\./);
  t.equal(session.capabilities['se:cdpVersion'], session.capabilities.browserVersion, 'se:cdpVersion, as Selenium Grid shows it');
  t.equal(session.capabilities['se:cdp'], `ws://127.0.0.1:${port}/session/${id}/se/cdp`, "se:cdp: the grid's CDP endpoint of the session, at the address /status was asked on");
  t.equal(session.capabilities['se:cdp'], created.body.value!.capabilities!['se:cdp'], 'the same URL its client was handed');
  t.same(session.stereotype, held[0]!.stereotype);
  t.match(session.start, ISO);
  t.ok(Date.now() - Date.parse(session.start) < 120_000, 'started just now');
  t.match(session.uri, /^http:\/\/127\.0\.0\.1:\d+$/, 'where its node listens');
  t.not(held[0]!.lastStarted, '1970-01-01T00:00:00Z');
  t.same(s.slots, { total: 2, available: 1 });
  t.equal(s.sessions.active, 1);

  t.equal((await w3c(base, 'DELETE', `/session/${id}`)).status, 200);
  const after = await until('the slot is free again', async () => {
    const v = await status();
    return v.nodes[0]!.slots.every((slot) => slot.session === null) && v.slots.available === 2 ? v : undefined;
  }, 15_000);
  t.equal(after.nodes[0]!.slots.length, 2);
});

t.test('a node whose orchestrator stopped heartbeating is DOWN beside the live one', async (t) => {
  // another orchestrator's keys, written as a dead one leaves them: registered, no heartbeat
  await backend.send(['SADD', 'orchestrators', 'orch-gone']);
  await backend.send(['SADD', 'orchestrator:orch-gone:slots', 'orch-gone:1']);
  await backend.send(['SADD', 'orchestrator:orch-gone:capabilities:browsers', 'chrome::1.2.3.4']);
  await backend.send(['SET', 'orchestrator:orch-gone:capabilities:platformName', 'linux']);
  const s = await status();
  const gone = s.nodes.find((n) => n.id === 'orch-gone')!;
  t.equal(gone.availability, 'DOWN');
  checkShape(t, gone);
  t.equal(s.nodes.find((n) => n.id === 'orch-a')!.availability, 'UP');
});
