// The obniz keyspace: obniz-app-sdk 1.5's keys exactly as the SDK reads and
// writes them (so SDK slaves and managers can share the Redis), plus coord's
// indexes and the claim that keeps one device on one slave at a time, marked
// as extensions. Extension keys live under `obniz:` so that none matches the
// SDK's own `KEYS workers:*` / `slave:*:heartbeat` scans.
import { defineContract } from '../../entries/plugin.ts';

/** Date.now() in ms (the SDK's slaves and managers) or Unix seconds (the SDK's first manager heartbeat and its Lua). */
const timestamp = { anyOf: [{ type: 'integer', minimum: 0 }, { type: 'string', pattern: '^[0-9]+$' }] };
const name = { type: 'string', pattern: '^[^:]+$' };
const obnizId = { type: 'string', minLength: 1 };

/** One entry of workers:{name}: the device as the list gave it, the slave it runs on, when that was decided. */
export const assignmentSchema = {
  type: 'object',
  required: ['install', 'instanceName', 'updatedMillisecond'],
  properties: {
    install: { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } },
    instanceName: name,
    updatedMillisecond: { anyOf: [{ type: 'number', minimum: 0 }, { type: 'string', pattern: '^[0-9]+$' }] },
    status: { description: 'written by obniz-app-sdk before 1.5 (its install state, 0); 1.5 writes none; ignored' },
  },
};

/** obniz-app-sdk 1.5's message envelope (utils/message.ts): the same on both channels. */
export const envelopeSchema = {
  type: 'object',
  required: ['action', 'info', 'body'],
  properties: {
    action: { enum: ['synchronize', 'keyRequest', 'keyRequestResponse', 'report', 'reportRequest'] },
    info: {
      type: 'object',
      required: ['sendMode', 'toManager', 'from'],
      properties: {
        sendMode: { enum: ['broadcast', 'direct'] },
        to: { type: 'string', description: 'the recipient, for sendMode direct' },
        toManager: { type: 'boolean' },
        from: { type: 'string' },
      },
    },
    body: { type: 'object', description: 'synchronize {syncType:"redis"}, keyRequest {requestId,key,obnizId?}, keyRequestResponse {requestId,results}, report {installIds}, reportRequest {}' },
  },
};

export const contract = defineContract({
  plugin: 'obniz',
  source: 'docs/layouts/obniz.md',
  keys: {
    slaveHeartbeat: {
      pattern: 'slave:{name}:heartbeat',
      type: 'string',
      description: 'A slave is alive: Date.now() in ms, written every heartbeatInterval (10 s) with EX heartbeatTtl (20 s).',
      ttl: 'required',
      writers: ['slave'],
      derivable: true,
      value: timestamp,
    },
    masterHeartbeat: {
      pattern: 'master:{name}:heartbeat',
      type: 'string',
      description: 'A manager is alive: Date.now() in ms (Unix seconds when an SDK manager first starts), EX heartbeatTtl.',
      ttl: 'required',
      writers: ['manager'],
      derivable: true,
      value: timestamp,
    },
    workers: {
      pattern: 'workers:{name}',
      type: 'hash',
      description: 'The distribution list of one slave: obnizId → {"install":{…},"instanceName":…,"updatedMillisecond":…}.',
      ttl: 'none',
      writers: ['manager'],
      derivable: true,
      dynamicFields: { pattern: '{obnizId}', value: assignmentSchema },
    },
    slaveIndex: {
      pattern: 'obniz:slaves',
      type: 'zset',
      extension: true,
      description: 'Every slave that has (or had) a distribution list, scored by when it was last seen beating (ms): scripts read it instead of KEYS. A member with neither a heartbeat nor a list (as an SDK manager leaves a dead slave) is dropped by the next coord heartbeat.',
      ttl: 'none',
      writers: ['slave', 'manager'],
      member: name,
      score: { type: 'number', minimum: 0 },
    },
    coordSlaves: {
      pattern: 'obniz:slaves:coord',
      type: 'set',
      extension: true,
      description: 'The slaves that are coord processes (they call onInstall); the others are obniz-app-sdk slaves, whose devices are never marked new.',
      ttl: 'none',
      writers: ['slave', 'manager'],
      member: name,
    },
    deviceIndex: {
      pattern: 'obniz:devices',
      type: 'hash',
      extension: true,
      description: 'obnizId → the slave whose distribution list holds it, written by coord\'s scripts with every list change: a script finds a device in O(1) instead of asking every list. obniz-app-sdk managers do not keep it, so a script confirms an entry in that list before trusting it.',
      ttl: 'none',
      writers: ['manager', 'slave'],
      dynamicFields: { pattern: '{obnizId}', value: name },
    },
    listStamps: {
      pattern: 'obniz:lists',
      type: 'hash',
      extension: true,
      description: 'slave name → a counter bumped by every coord script that changes that slave\'s distribution list: a manager re-reads only the lists whose stamp (or length) changed since its last sync.',
      ttl: 'none',
      writers: ['manager', 'slave'],
      dynamicFields: { pattern: '{name}', value: { type: 'string', pattern: '^[0-9]+$' } },
    },
    managerIndex: {
      pattern: 'obniz:managers',
      type: 'zset',
      extension: true,
      description: 'Every manager seen, scored by its last heartbeat (ms): isFirstManager() reads it instead of KEYS.',
      ttl: 'none',
      writers: ['manager'],
      member: name,
      score: { type: 'number', minimum: 0 },
    },
    claims: {
      pattern: 'obniz:claims',
      type: 'hash',
      extension: true,
      description: 'obnizId → the slave whose worker for it is running. A slave starts a worker only once it holds the claim, and gives it back after onEnd.',
      ttl: 'none',
      writers: ['slave', 'manager'],
      dynamicFields: { pattern: '{obnizId}', value: name },
    },
    newInstalls: {
      pattern: 'obniz:installs:new',
      type: 'set',
      extension: true,
      description: 'Devices added to the list and not started yet, on a coord slave: the slave that starts one calls onInstall before onStart. A device placed on (or moved to) an SDK slave is not marked: it is installed there, without onInstall.',
      ttl: 'none',
      writers: ['manager', 'slave'],
      member: obnizId,
    },
    uninstalls: {
      pattern: 'obniz:installs:removed',
      type: 'set',
      extension: true,
      description: 'Devices removed from the list whose worker still runs: the slave that stops one calls onUninstall before onEnd.',
      ttl: 'none',
      writers: ['manager', 'slave'],
      member: obnizId,
    },
  },
  channels: {
    broadcast: {
      pattern: 'app',
      description: 'obniz-app-sdk broadcasts: synchronize, keyRequest and reportRequest to every slave, report to every manager. Managers PSUBSCRIBE app*.',
      message: envelopeSchema,
      publishers: ['manager', 'slave'],
      subscribers: ['slave', 'manager'],
    },
    direct: {
      pattern: 'app.{name}',
      description: 'obniz-app-sdk direct messages: manager → slave {name}; a slave answers its managers (keyRequestResponse, report) on its own channel.',
      message: envelopeSchema,
      publishers: ['manager', 'slave'],
      subscribers: ['slave', 'manager'],
    },
  },
});

export type ObnizKeys = typeof contract.keys;
