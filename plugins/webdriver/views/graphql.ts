// POST /graphql: Selenium Grid 4's GraphQL schema, answered from Redis, so
// what reads Selenium Grid's GraphQL reads this grid — KEDA's selenium-grid
// scaler above all (grid sessionCount/maxSession/totalSlots, nodesInfo with
// each node's sessions and stereotypes, sessionsInfo.sessionQueueRequests).
// Stereotypes are served as Selenium Grid 4 serves a node's detected drivers:
// browserName and platformName, no browserVersion — KEDA matches a stereotype
// only when the trigger's browserVersion starts with the stereotype's, so a
// version there would hide running sessions from the documented trigger
// (which has none); proxy.stereotypeVersion adds the major or full version,
// for triggers that name one. coord adds a few fields the grid page reads (marked below). Runs on
// graphql-js: an unknown field or a syntax error is a GraphQL error, never
// a crash.
import { buildSchema, graphql } from 'graphql';
import type { IncomingHttpHeaders } from 'node:http';
import type { Ctx } from '../context.ts';
import { readEnded, readGrid, type GridModel, type GridNode, type GridSlot, type Stereotype } from './grid-model.ts';
import { eventsOf } from '../se/event.ts';
import { readLogs } from '../session/log.ts';
import { readSessions, type SessionView } from './sessions.ts';
import { withRecordings } from '../storage/proxy.ts';
import { GRID_VERSION, orchestratorUri, sessionCapabilities, sessionStart, sessionTimeoutMs, sessionUri } from './status.ts';
import { capabilitySets } from '../session/capabilities.ts';
import { W3CError } from '../errors.ts';

type Reader = Pick<Ctx, 'backend' | 'keys' | 'clock' | 'config'>;

/** Longest query text taken (KEDA's is under 300 characters). */
const QUERY_LIMIT = 64 * 1024;

const schema = buildSchema(`
  schema { query: GridQuery }
  scalar Uri
  enum Status { UP DRAINING DOWN }
  type Session {
    id: String!
    capabilities: String!
    startTime: String!
    uri: Uri!
    nodeId: String!
    nodeUri: Uri!
    sessionDurationMillis: String!
    slot: Slot
    "coord: queued, pending, alive or terminated"
    state: String!
    "coord: the capabilities the client asked for (JSON)"
    requestedCapabilities: String!
    "coord: when it was queued, given its node, served, ended (RFC 3339)"
    queuedAt: String
    pendingAt: String
    aliveAt: String
    terminatedAt: String
    "coord: seconds waiting for a slot, queued until served, served so far or in all"
    queuedSeconds: Float
    startupSeconds: Float
    aliveSeconds: Float
    "coord: the last code of its log (e.g. NALIVE, CLOSED, STIMEOUT)"
    lastCode: String
    "coord: its screen recording, once stored: a path on the proxy, carrying the recording's own token when the grid has one"
    recording: String
    "coord: the events its client sent with Selenium's Session Event API (POST se/event), oldest first"
    events: [SessionEvent!]!
  }
  type SessionEvent {
    "when it was kept (RFC 3339)"
    time: String!
    eventType: String!
    "its payload (JSON; null when it had none)"
    payload: String!
    "seconds into the session's recording (null when it is not recorded)"
    offset: Float
  }
  type Slot {
    id: String!
    stereotype: String!
    lastStarted: String!
    "coord: the session holding it"
    sessionId: String
  }
  type OsInfo { arch: String! name: String! version: String! }
  type Node {
    id: ID!
    uri: Uri!
    status: Status!
    maxSession: Int!
    sessionTimeout: String!
    slotCount: Int!
    sessions: [Session]!
    sessionCount: Int!
    stereotypes: String!
    version: String!
    osInfo: OsInfo!
    "coord: the browsers it runs, with their versions (JSON: [{browserName, browserVersion, platformName}])"
    browsers: String!
    "coord: every slot, free or held"
    slots: [Slot!]!
  }
  type Sessions {
    sessionQueueRequests: [String]!
    sessions: [Session]!
    "coord: the sessions waiting for a slot, oldest first"
    queue: [Session!]!
    "coord: the sessions that ended last, newest first"
    ended(limit: Int = 20): [Session!]!
  }
  type Nodes { nodes: [Node!]! }
  type Grid {
    uri: Uri!
    totalSlots: Int!
    nodeCount: Int!
    maxSession: Int!
    sessionCount: Int!
    version: String!
    sessionQueueSize: Int!
  }
  type GridQuery {
    grid: Grid!
    sessionsInfo: Sessions!
    nodesInfo: Nodes!
    session(id: String!): Session!
  }
`);

const json = (value: unknown) => JSON.stringify(value ?? {});

type StereotypeVersion = Reader['config']['proxy']['stereotypeVersion'];

/**
 * A stereotype as Selenium Grid 4 serves a detected driver's: its browserName
 * and platformName (see the top of this file); with proxy.stereotypeVersion,
 * the browser's major or full version too, as a node configured with one
 * (docker-selenium's SE_NODE_BROWSER_VERSION) serves it.
 */
function served(stereotype: Stereotype, version: StereotypeVersion): { browserName: string; browserVersion?: string; platformName: string } {
  const browserVersion = version === 'full' ? stereotype.browserVersion : version === 'major' ? stereotype.browserVersion.split('.')[0] : '';
  return { browserName: stereotype.browserName, ...(browserVersion ? { browserVersion } : {}), platformName: stereotype.platformName };
}

function slotOf(slot: GridSlot, version: StereotypeVersion) {
  return { id: slot.id, stereotype: json(served(slot.stereotype, version)), lastStarted: slot.session?.status.queuedAt ?? '1970-01-01T00:00:00Z', sessionId: slot.session?.id ?? null };
}

function sessionOf(loaders: Loaders, s: SessionView, now: number, node?: GridNode, slot?: GridSlot) {
  const start = sessionStart(s);
  const ended = s.status.terminatedAt ? Date.parse(s.status.terminatedAt) : now;
  const orchestrator = node?.id ?? s.orchestrator ?? '';
  return {
    id: s.id,
    capabilities: json(sessionCapabilities(s)),
    startTime: start,
    uri: sessionUri(s),
    nodeId: orchestrator,
    nodeUri: orchestrator ? orchestratorUri(orchestrator) : '',
    sessionDurationMillis: String(Math.max(0, ended - Date.parse(start))),
    slot: slot ? slotOf(slot, loaders.stereotypeVersion) : null,
    state: s.state,
    requestedCapabilities: json(s.capabilities.requested),
    ...s.status,
    queuedSeconds: s.timings.queued,
    startupSeconds: s.timings.startup,
    aliveSeconds: s.timings.alive,
    lastCode: s.lastCode,
    // resolved only when a query asks for them (KEDA's does not)
    recording: () => loaders.recording(s.id),
    events: () => loaders.events(s.id),
  };
}

type Loader<T> = (sessionId: string) => Promise<T>;
interface EventView {
  time: string;
  eventType: string;
  payload: string;
  offset: number | null;
}
interface Loaders {
  /** proxy.stereotypeVersion, which every stereotype of the answer follows. */
  stereotypeVersion: StereotypeVersion;
  recording: Loader<string | null>;
  events: Loader<EventView[]>;
}

/**
 * What a query asks of many sessions, read in one pipeline per batch: graphql-js
 * resolves a list's fields in one synchronous pass, so every session of a list
 * (and of the lists beside it) lands in the same batch instead of a read each.
 */
function batchLoader<T>(read: (sessionIds: string[]) => Promise<T[]>): Loader<T> {
  let batch: { sessionId: string; resolve(value: T): void; reject(error: unknown): void }[] = [];
  const flush = async (wanted: typeof batch) => {
    try {
      const values = await read(wanted.map((w) => w.sessionId));
      wanted.forEach((w, i) => w.resolve(values[i]!));
    } catch (error) {
      for (const w of wanted) w.reject(error);
    }
  };
  return (sessionId) =>
    new Promise((resolve, reject) => {
      if (!batch.length) {
        queueMicrotask(() => {
          const wanted = batch;
          batch = [];
          void flush(wanted);
        });
      }
      batch.push({ sessionId, resolve, reject });
    });
}

/** One capability set of a queued request, as Selenium Grid lists it: alwaysMatch merged with the first firstMatch entry. */
function requestedSet(s: SessionView): string {
  try {
    return json(capabilitySets({ capabilities: s.capabilities.requested })[0]);
  } catch {
    return json(s.capabilities.requested);
  }
}

/** Each session's events, from its log. */
async function readEvents(ctx: Reader, sessionIds: string[]): Promise<EventView[][]> {
  return (await readLogs(ctx, sessionIds)).map((log) => eventsOf(log).map((e) => ({ ...e, payload: JSON.stringify(e.payload) })));
}

function rootOf(ctx: Reader, grid: GridModel, gridUri: string, timeoutMs: number, secret: string | undefined) {
  const now = ctx.clock.now();
  const version = ctx.config.proxy.stereotypeVersion;
  const loaders: Loaders = {
    stereotypeVersion: version,
    recording: batchLoader(async (ids) => (await withRecordings(ctx, secret, ids.map((id) => ({ id })))).map((s) => s.recording ?? null)),
    events: batchLoader((ids) => readEvents(ctx, ids)),
  };
  const up = grid.nodes.filter((n) => n.up);
  const nodes = grid.nodes.map((node) => {
    const held = node.slots.filter((slot) => slot.session);
    const counts = new Map<string, { slots: number; stereotype: unknown }>();
    for (const slot of node.slots) {
      const key = json(served(slot.stereotype, version));
      counts.set(key, { slots: (counts.get(key)?.slots ?? 0) + 1, stereotype: served(slot.stereotype, version) });
    }
    // Several browsers share the slots: each is offered on all of them, as a Selenium node gives each driver it found its max sessions.
    if (node.stereotypes.length > 1) {
      counts.clear();
      for (const stereotype of node.stereotypes) counts.set(json(served(stereotype, version)), { slots: node.slots.length, stereotype: served(stereotype, version) });
    }
    return {
      id: node.id,
      uri: orchestratorUri(node.id),
      status: node.up ? 'UP' : 'DOWN',
      maxSession: node.slots.length,
      sessionTimeout: String(timeoutMs),
      slotCount: node.slots.length,
      sessions: held.map((slot) => sessionOf(loaders, slot.session!, now, node, slot)),
      sessionCount: held.length,
      stereotypes: JSON.stringify([...counts.values()]),
      version: GRID_VERSION,
      osInfo: { arch: '', name: node.platformName, version: '' },
      browsers: JSON.stringify(node.stereotypes),
      slots: node.slots.map((slot) => slotOf(slot, version)),
    };
  });
  const running = nodes.flatMap((n) => n.sessions);
  return {
    grid: {
      uri: gridUri,
      totalSlots: up.reduce((n, node) => n + node.slots.length, 0),
      nodeCount: up.length,
      maxSession: up.reduce((n, node) => n + node.slots.length, 0),
      sessionCount: running.length,
      version: GRID_VERSION,
      sessionQueueSize: grid.queue.length,
    },
    nodesInfo: { nodes },
    sessionsInfo: {
      sessionQueueRequests: grid.queue.map(requestedSet),
      sessions: running,
      queue: grid.queue.map((s) => sessionOf(loaders, s, now)),
      ended: async ({ limit }: { limit: number }) => (await readEnded(ctx, Math.max(0, Math.min(limit, 200)))).map((s) => sessionOf(loaders, s, now)),
    },
    session: async ({ id }: { id: string }) => {
      // an id goes into key names: only what a session id can be
      if (!/^[A-Za-z0-9-]{1,64}$/.test(id)) throw new W3CError('invalid argument', `"${id.slice(0, 80)}" is not a session id (letters, digits and dashes)`);
      const [view] = await readSessions(ctx, [id]);
      if (!view) throw new W3CError('invalid session id', `no session ${id}`);
      const node = grid.nodes.find((n) => n.slots.some((slot) => slot.session?.id === id));
      return sessionOf(loaders, view, now, node, node?.slots.find((slot) => slot.session?.id === id));
    },
  };
}

/** The grid's own URL as the client reached it: proxy.externalUrl, else X-Forwarded-Proto/Host, else Host. */
export function gridUrl(config: Reader['config'], headers: IncomingHttpHeaders, fallbackHost: string): string {
  if (config.proxy.externalUrl) return config.proxy.externalUrl.replace(/^ws/, 'http').replace(/\/$/, '');
  const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)?.split(',')[0]?.trim();
  const proto = first(headers['x-forwarded-proto']) === 'https' ? 'https' : 'http';
  return `${proto}://${first(headers['x-forwarded-host']) || headers.host || fallbackHost}`;
}

export interface GraphqlAnswer {
  status: number;
  body: string;
}

const failure = (status: number, message: string): GraphqlAnswer => ({ status, body: JSON.stringify({ errors: [{ message }] }) });

/** Answers one POST /graphql body ({"query", "variables"?, "operationName"?}); `secret`: the grid's (access.ts), for recordings' links. */
export async function answerGraphql(ctx: Reader, method: string, body: Buffer, gridUri: string, secret: string | undefined): Promise<GraphqlAnswer> {
  if (method !== 'POST') return failure(405, `${method} /graphql: send the query with POST as {"query": "..."}`);
  let request: { query?: unknown; variables?: unknown; operationName?: unknown };
  try {
    request = JSON.parse(body.toString() || 'null') as typeof request;
  } catch {
    return failure(400, 'the body is not JSON: send {"query": "..."}');
  }
  if (!request || typeof request.query !== 'string') return failure(400, 'the body must be {"query": "...", "variables"?: {...}}');
  if (request.query.length > QUERY_LIMIT) return failure(400, `the query is longer than ${QUERY_LIMIT} characters`);
  const variables = request.variables && typeof request.variables === 'object' ? (request.variables as Record<string, unknown>) : undefined;
  const operationName = typeof request.operationName === 'string' ? request.operationName : undefined;
  const [grid, timeoutMs] = await Promise.all([readGrid(ctx), sessionTimeoutMs(ctx)]);
  const result = await graphql({ schema, source: request.query, rootValue: rootOf(ctx, grid, gridUri, timeoutMs, secret), variableValues: variables, operationName });
  return { status: 200, body: JSON.stringify(result) };
}
