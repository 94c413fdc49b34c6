// A simulated webdriver fleet for bench/scale/webdriver.mjs: orchestrators
// and their nodes without browsers, writing to Redis what the real ones write
// (roles/orchestrator.ts, node/session-node.ts with a warm chromedriver),
// through the plugin's own scripts and in the same order. Each orchestrator
// has its two blocking connections (backlog and slot recycling), as a real
// one has. Every node of the fleet answers on one HTTP port: /status for the
// manager and DELETE /session/{id} from the proxy, each told apart by the
// node key the proxy and the manager send (as session:{id}:upstream gives it).
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { NODE_KEY_HEADER } from '../../dist/plugins/webdriver/auth.js';
import { matchedCapabilities } from '../../dist/plugins/webdriver/node/driver-session.js';
import { announceSlot, appendLog, forgetOrchestrator, registerOrchestrator, scheduleSession, terminateSession } from '../../dist/plugins/webdriver/scripts.js';
import { recordSession } from '../../dist/plugins/webdriver/session/restore.js';
import { rfc3339 } from '../../dist/plugins/webdriver/session/time.js';
import { readTimeouts } from '../../dist/plugins/webdriver/session/timeouts.js';

/** A blocking pop's timeout when nothing comes (IDLE_BLOCK_SECONDS, the real orchestrator's). */
const BLOCK_SECONDS = 300;
const VERSION = '156.0.8078.108';
/** What chromedriver answers a new session with, cut to what the grid reads. */
const actual = { browserName: 'chrome', browserVersion: VERSION, platformName: 'linux', 'goog:chromeOptions': { debuggerAddress: 'localhost:40000' } };

/** Every simulated node's endpoint: one HTTP server on 127.0.0.1, nodes told apart by their key. */
export class Nodes {
  constructor(ctx) {
    this.ctx = ctx;
    /** node key → node */
    this.byKey = new Map();
    this.server = createServer((req, res) => void this.answer(req, res));
    this.server.keepAliveTimeout = 60_000;
  }

  async listen() {
    // a backlog for the whole fleet's nodes at once (node's default, 511, is one node's many times over)
    await new Promise((resolve) => this.server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, resolve));
    this.port = this.server.address().port;
  }

  close() {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(resolve));
  }

  async answer(req, res) {
    const node = this.byKey.get(req.headers[NODE_KEY_HEADER]);
    const send = (status, value) => res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ value }));
    for await (const _ of req); // the body, unread
    if (!node) return send(401, { error: 'unauthorized', message: 'no node has this key' });
    if (req.url === '/status') return send(200, { ready: !node.ending, message: 'serving its session' });
    if (req.method === 'DELETE' && req.url === `/session/${node.sessionId}`) {
      await node.end('CLOSED', 'DELETE /session by the client');
      return send(200, null);
    }
    send(404, { error: 'unknown command', message: `${req.method} ${req.url}: the simulated node serves /status and DELETE /session only` });
  }

  /** SessionNode.start() with a warm driver: BOOT, heartbeat, DSTART, DALIVE, LSINIT, then upstream and ready in one transaction. */
  async start(sessionId, orchestratorId) {
    const { ctx } = this;
    const s = { sessionId };
    const node = { sessionId, key: randomBytes(32).toString('base64url'), ending: undefined, record: undefined };
    const beat = async () => {
      if (node.ending) return;
      const [, active, alive] = await ctx.backend.pipeline([
        ['SET', ctx.keys.sessionNodeHeartbeat(s), rfc3339(Date.now()), 'EX', Math.ceil(ctx.config.heartbeat.nodeTtl)],
        ['SISMEMBER', ctx.keys.sessionsActive(), sessionId],
        ['HEXISTS', ctx.keys.sessionStatus(s), 'aliveAt'],
        ['EXISTS', ctx.keys.sessionManagerHeartbeat(s)],
      ]);
      if (active === 1 && alive === 1) node.record ??= await recordSession(ctx, sessionId);
    };
    node.end = (code, meta) =>
      (node.ending ??= (async () => {
        clearInterval(node.timer);
        this.byKey.delete(node.key);
        await terminateSession(ctx, sessionId, { component: 'node', code, meta });
        await appendLog(ctx, sessionId, 'node', 'HALT', meta);
        await ctx.backend.send(['DEL', ctx.keys.sessionNodeHeartbeat(s)]);
      })());
    await Promise.all([appendLog(ctx, sessionId, 'node', 'BOOT', `orchestrator ${orchestratorId}, pid ${process.pid}`), matchedCapabilities(ctx, sessionId, orchestratorId)]);
    await Promise.all([beat(), appendLog(ctx, sessionId, 'node', 'DSTART', '/usr/bin/chromedriver: a warm driver, started 1000 ms ahead')]);
    node.timer = setInterval(() => void beat().catch(() => {}), ctx.config.heartbeat.interval * 1000);
    await appendLog(ctx, sessionId, 'node', 'DALIVE', `port 40001, pid ${process.pid}, 0 ms`);
    const driverSessionId = randomUUID().replaceAll('-', '');
    await Promise.all([
      ctx.backend.send(['HSET', ctx.keys.sessionCapabilities(s), 'actual', JSON.stringify(actual)]),
      appendLog(ctx, sessionId, 'node', 'LSINIT', `driver session ${driverSessionId}`),
    ]);
    this.byKey.set(node.key, node);
    await ctx.backend.multi([
      ['HSET', ctx.keys.sessionUpstream(s), 'host', '127.0.0.1', 'port', this.port, 'driverSessionID', driverSessionId, 'key', node.key],
      ['RPUSH', ctx.keys.sessionReady(s), `127.0.0.1:${this.port}`],
    ]);
  }
}

/** One orchestrator of `slots` slots: registers and beats, takes its backlog into pending and starts nodes, recycles reclaimed slots. */
export class Orchestrator {
  constructor(ctx, nodes, id, slots) {
    Object.assign(this, { ctx, nodes, id, slots, o: { orchestratorId: id }, stopping: false });
  }

  register() {
    return registerOrchestrator(this.ctx, { orchestratorId: this.id, type: 'local', platformName: 'linux', browsers: [`chrome::${VERSION}`], slots: this.slots });
  }

  /** Its heartbeat and its loops (registered first). */
  async start() {
    const { ctx } = this;
    this.timer = setInterval(() => void this.register().catch(() => {}), ctx.config.heartbeat.interval * 1000);
    this.blocking = [await ctx.backend.blocking(), await ctx.backend.blocking()];
    this.loops = [this.backlogLoop(this.blocking[0]), this.recycleLoop(this.blocking[1])];
  }

  async backlogLoop(conn) {
    const { ctx, o } = this;
    while (!this.stopping) {
      const sessionId = await conn.send(['BRPOPLPUSH', ctx.keys.backlog(o), ctx.keys.pending(o), BLOCK_SECONDS]).catch(() => null);
      if (sessionId && !this.stopping) void this.handle(sessionId).catch((error) => console.error(`simulated orchestrator ${this.id}: ${error.message}`));
    }
  }

  async handle(sessionId) {
    const { ctx } = this;
    try {
      const [scheduled] = await Promise.all([scheduleSession(ctx, sessionId, this.id, `inline node on ${this.id}`), readTimeouts(ctx)]);
      if (scheduled !== 0) await this.nodes.start(sessionId, this.id);
    } finally {
      await ctx.backend.send(['LREM', ctx.keys.pending(this.o), 0, sessionId]);
    }
  }

  async recycleLoop(conn) {
    const { ctx, o } = this;
    while (!this.stopping) {
      const slot = await conn.send(['BLMOVE', ctx.keys.slotsReclaimed(o), ctx.keys.slotsAvailable(o), 'LEFT', 'RIGHT', BLOCK_SECONDS]).catch(() => null);
      if (!slot) continue;
      if ((await ctx.backend.send(['SISMEMBER', ctx.keys.slots(o), slot])) === 0) await ctx.backend.send(['LREM', ctx.keys.slotsAvailable(o), 0, slot]);
      else await announceSlot(ctx, this.id).catch(() => {});
    }
  }

  /** Stops, and takes every key of this orchestrator out of Redis (as gc forgets one gone for a week). */
  async stop() {
    this.stopping = true;
    clearInterval(this.timer);
    for (const conn of this.blocking ?? []) await conn.close().catch(() => {});
    await Promise.all(this.loops ?? []);
    await this.ctx.backend.send(['DEL', this.ctx.keys.orchestratorRetain(this.o)]);
    await forgetOrchestrator(this.ctx, this.id);
  }
}
