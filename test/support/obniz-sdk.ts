// obniz-app-sdk 1.5's side of a mixed fleet, played on real Redis as the SDK
// does it (written from its documented behaviour, not its code): bare keys;
// slaves beat `slave:{name}:heartbeat` (Date.now() ms, EX 20) and SUBSCRIBE
// `app` and `app.{name}`; managers PSUBSCRIBE `app*`, write their first beat
// in Unix seconds through a script that answers isFirstManager from
// `KEYS master:*:heartbeat`, and change `workers:{name}` only through Lua that
// finds slaves with KEYS and re-encodes every entry it writes with cjson
// (so `"tags":[]` comes out as `"tags":{}`, updatedMillisecond in seconds).
// Timings default to the SDK's; tests may scale them down.
import type { Backend, Subscriber } from '../../core/backend.ts';

export interface SdkTimings {
  heartbeatMs: number;
  /** EX of a heartbeat, seconds. */
  ttlS: number;
  /** A slave whose heartbeat is older than this (or missing) is dead. */
  deadAfterMs: number;
  healthCheckMs: number;
}

export const sdkTimings: SdkTimings = { heartbeatMs: 10_000, ttlS: 20, deadAfterMs: 30_000, healthCheckMs: 10_000 };

interface Envelope {
  action: string;
  info: { sendMode: 'broadcast' | 'direct'; to?: string; toManager: boolean; from: string };
  body: Record<string, any>;
}

// ---- the SDK's Lua, with its semantics: KEYS to find slaves, cjson round trips, TIME seconds

/** Finds the distribution list holding KEYS[1]; shared head of the scripts below. */
const FIND_OWNER = `
local beats = redis.call('KEYS', 'slave:*:heartbeat')
local lists = redis.call('KEYS', 'workers:*')
local owner
for _, list in ipairs(lists) do
  if redis.call('HEXISTS', list, KEYS[1]) == 1 then owner = string.match(list, '^workers:(.+)$') break end
end`;

/** The alive slave (heartbeat key present) with the fewest entries, other than `except`; ties go to the last one. */
const LEAST_LOADED = `
local function leastLoaded(except)
  local chosen, fewest
  for _, beat in ipairs(beats) do
    local name = string.match(beat, '^slave:(.+):heartbeat$')
    if name ~= except then
      local count = redis.call('HLEN', 'workers:' .. name)
      if fewest == nil or count <= fewest then chosen, fewest = name, count end
    end
  end
  return chosen
end`;

const AUTO_CREATE = `${FIND_OWNER}${LEAST_LOADED}
if #beats == 0 then return redis.error_reply('NO_ACCEPTABLE_WORKER') end
if owner then return redis.error_reply('ALREADY_INSTALLED') end
local chosen = leastLoaded(nil)
local entry = cjson.decode(ARGV[1])
entry.instanceName = chosen
entry.updatedMillisecond = redis.call('TIME')[1]
redis.call('HSET', 'workers:' .. chosen, KEYS[1], cjson.encode(entry))
return chosen`;

const AUTO_RELOCATE = `${FIND_OWNER}${LEAST_LOADED}
if #beats == 0 then return redis.error_reply('NO_ACCEPTABLE_WORKER') end
if not owner then return redis.error_reply('NOT_INSTALLED') end
if ARGV[1] == 'false' and redis.call('EXISTS', 'slave:' .. owner .. ':heartbeat') == 1 then return redis.error_reply('NO_NEED_TO_RELOCATE') end
local chosen = leastLoaded(owner)
if not chosen then return redis.error_reply('NO_OTHER_ACCEPTABLE_WORKER') end
local entry = cjson.decode(redis.call('HGET', 'workers:' .. owner, KEYS[1]))
entry.instanceName = chosen
entry.updatedMillisecond = redis.call('TIME')[1]
redis.call('HSET', 'workers:' .. chosen, KEYS[1], cjson.encode(entry))
redis.call('HDEL', 'workers:' .. owner, KEYS[1])
return chosen`;

const UPDATE_INSTALL = `${FIND_OWNER}
if #beats == 0 then return redis.error_reply('NO_RUNNING_WORKER') end
if not owner then return redis.error_reply('NOT_INSTALLED') end
local entry = cjson.decode(redis.call('HGET', 'workers:' .. owner, KEYS[1]))
for k, v in pairs(cjson.decode(ARGV[1])) do entry[k] = v end
redis.call('HSET', 'workers:' .. owner, KEYS[1], cjson.encode(entry))
return owner`;

/** doAllRelocate: obniz-app-sdk's loop (at most ceil(n/2) rounds, largest to smallest, HSCAN picks who moves). */
const ALL_RELOCATE = `
local beats = redis.call('KEYS', 'slave:*:heartbeat')
if #beats == 0 then return redis.error_reply('NO_WORKER') end
local slaves, total = {}, 0
for _, beat in ipairs(beats) do
  local name = string.match(beat, '^slave:(.+):heartbeat$')
  local count = redis.call('HLEN', 'workers:' .. name)
  slaves[#slaves + 1] = {name = name, count = count}
  total = total + count
end
local floorShare = math.floor(total / #slaves)
for _ = 1, math.ceil(#slaves / 2) do
  table.sort(slaves, function(a, b) return a.count > b.count end)
  local most, least = slaves[1], slaves[#slaves]
  if least.count == floorShare then break end
  local moving = math.min(math.floor((most.count - least.count) / 2), floorShare)
  local page = redis.call('HSCAN', 'workers:' .. most.name, 0, 'COUNT', moving)[2]
  local moved = 0
  for i = 1, #page, 2 do
    if moved == moving then break end
    local entry = cjson.decode(page[i + 1])
    entry.instanceName = least.name
    entry.updatedMillisecond = redis.call('TIME')[1]
    redis.call('HSET', 'workers:' .. least.name, page[i], cjson.encode(entry))
    redis.call('HDEL', 'workers:' .. most.name, page[i])
    moved = moved + 1
  end
  most.count, least.count = most.count - moved, least.count + moved
end
return 1`;

const INIT_MANAGER_HEARTBEAT = `
local others = #redis.call('KEYS', 'master:*:heartbeat')
redis.call('SET', 'master:' .. KEYS[1] .. ':heartbeat', redis.call('TIME')[1], 'EX', ARGV[1])
if others == 0 then return 'true' end
return 'false'`;

async function publish(backend: Backend, channel: string, message: Envelope): Promise<void> {
  await backend.send(['PUBLISH', channel, JSON.stringify(message)]);
}

function parse(text: string): Envelope | undefined {
  try {
    const value = JSON.parse(text) as Envelope;
    return typeof value?.action === 'string' && typeof value.info === 'object' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** What an SDK worker saw of its device: `JSON.parse(this.deviceInfo.configs)` and `deviceInfo.hardware`. */
export interface SdkWorkerRecord {
  id: string;
  slave: string;
  ev: 'start' | 'end';
  configs?: unknown;
  configsError?: string;
  hardware: unknown;
}

/** An obniz-app-sdk slave: runs one worker per entry of workers:{name}, acts on synchronize, keyRequest, reportRequest. */
export class SdkSlave {
  /** obnizId → the install it runs. */
  readonly running = new Map<string, Record<string, unknown>>();
  /** Every message that reached it, with its channel (SDK envelopes and anything else). */
  readonly received: { channel: string; message: Envelope | string }[] = [];
  private sub?: Subscriber;
  private beat?: ReturnType<typeof setInterval>;
  private syncing = Promise.resolve();

  constructor(
    private readonly backend: Backend,
    readonly name: string,
    readonly records: SdkWorkerRecord[] = [],
    private readonly timings: SdkTimings = sdkTimings,
  ) {}

  async start(): Promise<this> {
    this.sub = await this.backend.subscriber();
    this.sub.onMessage(({ channel, message }) => {
      this.received.push({ channel, message: parse(message) ?? message });
      void this.onMessage(message);
    });
    await this.sub.subscribe('app', `app.${this.name}`);
    await this.heartbeat();
    this.beat = setInterval(() => void this.heartbeat().catch(() => {}), this.timings.heartbeatMs);
    await this.synchronize();
    return this;
  }

  heartbeat(): Promise<unknown> {
    return this.backend.send(['SET', `slave:${this.name}:heartbeat`, Date.now(), 'EX', this.timings.ttlS]);
  }

  /** Dies as with kill -9: no more heartbeats or answers; its keys stay until they expire or a manager deletes them. */
  async kill(): Promise<void> {
    clearInterval(this.beat);
    await this.sub?.close();
    this.running.clear();
  }

  /** Reads its list and starts, restarts (install text changed) or stops workers, as the SDK slave does on synchronize. */
  synchronize(): Promise<void> {
    this.syncing = this.syncing.then(async () => {
      const flat = (await this.backend.send(['HGETALL', `workers:${this.name}`])) as string[];
      const listed = new Map<string, Record<string, unknown>>();
      for (let i = 0; i < flat.length; i += 2) listed.set(flat[i]!, (JSON.parse(flat[i + 1]!) as { install: Record<string, unknown> }).install);
      for (const [id, install] of listed) {
        const old = this.running.get(id);
        if (old && JSON.stringify(old) === JSON.stringify(install)) continue;
        if (old) this.stopWorker(id);
        this.startWorker(id, install);
      }
      for (const id of [...this.running.keys()]) if (!listed.has(id)) this.stopWorker(id);
    });
    return this.syncing;
  }

  private startWorker(id: string, install: Record<string, unknown>): void {
    const record: SdkWorkerRecord = { id, slave: this.name, ev: 'start', hardware: install.hardware };
    try {
      record.configs = JSON.parse(install.configs as string);
    } catch (err) {
      record.configsError = (err as Error).message;
    }
    this.records.push(record);
    this.running.set(id, install);
  }

  private stopWorker(id: string): void {
    this.running.delete(id);
    this.records.push({ id, slave: this.name, ev: 'end', hardware: undefined });
  }

  private async onMessage(text: string): Promise<void> {
    const message = parse(text);
    if (!message || message.info.toManager) return;
    if (message.info.sendMode === 'direct' && message.info.to !== this.name) return;
    const reply = (action: string, body: Record<string, unknown>) =>
      publish(this.backend, `app.${this.name}`, { action, info: { sendMode: 'direct', to: message.info.from, toManager: true, from: this.name }, body });
    if (message.action === 'synchronize') await this.synchronize();
    else if (message.action === 'keyRequest') {
      // the SDK slave answers for every worker it runs
      const results = Object.fromEntries([...this.running.keys()].map((id) => [id, `sdk:${message.body.key}:${id}`]));
      await reply('keyRequestResponse', { requestId: message.body.requestId, results });
    } else if (message.action === 'reportRequest') await reply('report', { installIds: [...this.running.keys()] });
  }
}

/** An obniz-app-sdk manager on Redis, fed by the App option `fetcher` (or by nothing: then it only checks health). */
export class SdkManager {
  private first?: boolean;
  private sub?: Subscriber;
  private timers: ReturnType<typeof setInterval>[] = [];
  private readonly waiting = new Map<string, { expected: number; got: number; results: Record<string, string>; resolve: (r: Record<string, string>) => void }>();

  constructor(
    private readonly backend: Backend,
    readonly name: string,
    private readonly fetcher?: () => Record<string, unknown>[],
    private readonly timings: SdkTimings = sdkTimings,
  ) {}

  /** app.startWait(): subscribes, writes its first heartbeat (isFirstManager), syncs; then heartbeats and health checks every 10 s. */
  async startWait(opts: { loops?: boolean } = {}): Promise<this> {
    this.sub = await this.backend.subscriber();
    this.sub.onMessage(({ message }) => this.onMessage(message));
    await this.sub.psubscribe('app*');
    this.first = (await this.backend.send(['EVAL', INIT_MANAGER_HEARTBEAT, 1, this.name, this.timings.ttlS])) === 'true';
    if (this.fetcher) await this.sync();
    if (opts.loops !== false) {
      this.timers.push(
        setInterval(() => void this.heartbeat().then(() => this.healthCheck()).catch(() => {}), this.timings.healthCheckMs),
      );
    }
    return this;
  }

  isFirstManager(): boolean {
    if (this.first === undefined) throw new Error('init process has not been completed');
    return this.first;
  }

  heartbeat(): Promise<unknown> {
    return this.backend.send(['SET', `master:${this.name}:heartbeat`, Date.now(), 'EX', this.timings.ttlS]);
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    await this.sub?.close();
  }

  /** The fetcher's list against Redis: new devices created, changed ones updated (deep equality), missing ones removed; then synchronize. */
  async sync(): Promise<void> {
    const devices = this.fetcher!();
    const current = await this.installs();
    for (const device of devices) {
      const id = String(device.id);
      const entry = current.get(id);
      if (!entry) await this.autoCreate(id, device).catch(() => {});
      else if (JSON.stringify(sortKeys(device)) !== JSON.stringify(sortKeys(entry.install))) await this.updateInstall(id, device);
    }
    const listed = new Set(devices.map((d) => String(d.id)));
    for (const [id, entry] of current) if (!listed.has(id)) await this.backend.send(['HDEL', `workers:${entry.instanceName}`, id]);
    await this.synchronize();
  }

  autoCreate(id: string, install: Record<string, unknown>): Promise<unknown> {
    return this.backend.send(['EVAL', AUTO_CREATE, 1, id, JSON.stringify({ install })]);
  }

  /** The SDK's relocation of one device; rejects with its Lua error. */
  autoRelocate(id: string, force: boolean): Promise<unknown> {
    return this.backend.send(['EVAL', AUTO_RELOCATE, 1, id, force ? 'true' : 'false']);
  }

  updateInstall(id: string, install: Record<string, unknown>): Promise<unknown> {
    return this.backend.send(['EVAL', UPDATE_INSTALL, 1, id, JSON.stringify({ install })]);
  }

  async doAllRelocate(): Promise<void> {
    await this.backend.send(['EVAL', ALL_RELOCATE, 0]);
    await this.synchronize();
  }

  /** The SDK's slaves: every name with a heartbeat key or a distribution list (from KEYS), with the heartbeat in ms (0 when missing). */
  async instances(): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const key of (await this.backend.send(['KEYS', 'workers:*'])) as string[]) out.set(key.slice('workers:'.length), 0);
    for (const key of (await this.backend.send(['KEYS', 'slave:*:heartbeat'])) as string[]) {
      out.set(key.slice('slave:'.length, -':heartbeat'.length), Number(await this.backend.send(['GET', key])));
    }
    return out;
  }

  /** A dead slave (heartbeat older than 30 s, or missing): each device relocated (not forced), then its heartbeat and list deleted. */
  async healthCheck(): Promise<string[]> {
    const dead: string[] = [];
    for (const [name, beat] of await this.instances()) {
      if (beat + this.timings.deadAfterMs >= Date.now()) continue;
      dead.push(name);
      for (const id of (await this.backend.send(['HKEYS', `workers:${name}`])) as string[]) await this.autoRelocate(id, false).catch(() => {});
      await this.backend.send(['DEL', `slave:${name}:heartbeat`]);
      await this.backend.send(['DEL', `workers:${name}`]);
    }
    if (dead.length) await this.synchronize();
    return dead;
  }

  /** app.request(key): a broadcast keyRequest, resolved when every instance the SDK knows answered; rejects on timeout. */
  async request(key: string, timeoutMs = 5000): Promise<Record<string, string>> {
    const requestId = `${Date.now()} - ${Math.random().toString(36).slice(-8)}`;
    const expected = (await this.instances()).size;
    const answered = new Promise<Record<string, string>>((resolve) => this.waiting.set(requestId, { expected, got: 0, results: {}, resolve }));
    await publish(this.backend, 'app', { action: 'keyRequest', info: { sendMode: 'broadcast', toManager: false, from: this.name }, body: { requestId, key } });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_r, reject) => (timer = setTimeout(() => reject(new Error('Request timed out.')), timeoutMs)));
    try {
      return await Promise.race([answered, timeout]);
    } finally {
      clearTimeout(timer);
      this.waiting.delete(requestId);
    }
  }

  async synchronize(): Promise<void> {
    await publish(this.backend, 'app', { action: 'synchronize', info: { sendMode: 'broadcast', toManager: false, from: this.name }, body: { syncType: 'redis' } });
  }

  private async installs(): Promise<Map<string, { install: Record<string, unknown>; instanceName: string }>> {
    const out = new Map<string, { install: Record<string, unknown>; instanceName: string }>();
    for (const key of (await this.backend.send(['KEYS', 'workers:*'])) as string[]) {
      const flat = (await this.backend.send(['HGETALL', key])) as string[];
      for (let i = 0; i < flat.length; i += 2) out.set(flat[i]!, JSON.parse(flat[i + 1]!));
    }
    return out;
  }

  private onMessage(text: string): void {
    const message = parse(text);
    if (!message?.info.toManager || message.action !== 'keyRequestResponse') return;
    if (message.info.sendMode === 'direct' && message.info.to !== undefined && message.info.to !== this.name) return;
    const waiting = this.waiting.get(String(message.body.requestId));
    if (!waiting) return;
    Object.assign(waiting.results, message.body.results);
    if (++waiting.got === waiting.expected) waiting.resolve(waiting.results);
  }
}

/** Deep equality regardless of key order (the SDK compares with fast-equals' deepEqual). */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, sortKeys(v)]));
  return value;
}
