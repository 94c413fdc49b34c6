// Orchestrator-side reads and writes of the keyspace that are more than one
// command: the alive-worker snapshot, resource preparation, clearing runtime
// state, and reading metric batches back from their streams.
import type { Command, Reply } from '../../../entries/plugin.ts';
import type { Batch } from '../metrics/results.ts';
import type { CheckedScenario } from '../scenario/scenario.ts';
import type { Ctx } from '../context.ts';

export interface WorkerView {
  id: string;
  status: string;
  alive: boolean;
  lastHeartbeatAgeS: number | null;
  cpu_percent: number;
  rss_bytes: number;
  memory_percent: number;
  total_ram_bytes: number;
  host?: string;
  users: number;
  active_users: number;
}

/** Every registered worker with its health; alive = heartbeat fresher than deadAfter and not marked dead. */
export async function readWorkers(ctx: Ctx): Promise<WorkerView[]> {
  const { backend, keys, config, clock } = ctx;
  const ids = ((await backend.send(['SMEMBERS', keys.workers()])) as string[]).sort();
  if (!ids.length) return [];
  const replies = await backend.pipeline(
    ids.flatMap((workerId): Command[] => [
      ['HGETALL', keys.workerStatus({ workerId })],
      ['SCARD', keys.workerUsers({ workerId })],
      ['SCARD', keys.workerActiveUsers({ workerId })],
    ]),
  );
  const now = clock.now() / 1000;
  return ids.map((id, i) => {
    const flat = replies[i * 3] as string[] | Error;
    const h: Record<string, string> = {};
    if (Array.isArray(flat)) for (let j = 0; j + 1 < flat.length; j += 2) h[flat[j]!] = flat[j + 1]!;
    const beat = h.last_heartbeat === undefined ? null : Number(h.last_heartbeat);
    const age = beat === null ? null : Math.max(0, now - beat);
    const status = h.status ?? 'missing';
    return {
      id,
      status,
      alive: age !== null && age <= config.deadAfter && status !== 'dead',
      lastHeartbeatAgeS: age === null ? null : Math.round(age * 10) / 10,
      cpu_percent: Number(h.cpu_percent ?? 0),
      rss_bytes: Number(h.rss_bytes ?? 0),
      memory_percent: Number(h.memory_percent ?? 0),
      total_ram_bytes: Number(h.total_ram_bytes ?? 0),
      host: h.host,
      users: Number(replies[i * 3 + 1] ?? 0),
      active_users: Number(replies[i * 3 + 2] ?? 0),
    };
  });
}

/** Builds the scenario's resources with its factories and declares them for the workers' lazy pool sync. */
export async function prepareResources(ctx: Ctx, scenario: CheckedScenario, params: Record<string, unknown>): Promise<Record<string, number>> {
  const { backend, keys } = ctx;
  const declared: Record<string, number> = {};
  for (const [name, factory] of Object.entries(scenario.resources)) {
    await backend.send(['DEL', keys.resourceAvailable({ name }), keys.resourceLoaded({ name })]);
    for (let start = 1; start <= factory.count; start += 500) {
      const commands: Command[] = [];
      for (let i = start; i < Math.min(start + 500, factory.count + 1); i++) {
        const data = await factory.create(i, params);
        commands.push(['SET', keys.resource({ name, resourceId: i }), JSON.stringify(data ?? null)]);
      }
      await checked(backend.pipeline(commands));
    }
    await backend.send(['HSET', keys.resources(), name, factory.count]);
    declared[name] = factory.count;
  }
  return declared;
}

/**
 * Removes what a test leaves behind (vikhry's STOPPING step): users and
 * their hashes, the workers' user sets, resources. Metric and probe streams
 * and the timeline stay until the next start, for the page and `coord inspect`.
 */
export async function clearRuntimeState(ctx: Ctx, opts: { metrics: boolean }): Promise<void> {
  const { backend, keys } = ctx;
  const users = (await backend.send(['SMEMBERS', keys.users()])) as string[];
  const workers = (await backend.send(['SMEMBERS', keys.workers()])) as string[];
  const resources = (await backend.send(['HGETALL', keys.resources()])) as string[];
  const commands: Command[] = users.map((userId): Command => ['DEL', keys.user({ userId })]);
  for (const workerId of workers) commands.push(['DEL', keys.workerUsers({ workerId }), keys.workerActiveUsers({ workerId })]);
  for (let i = 0; i + 1 < resources.length; i += 2) {
    const name = resources[i]!;
    commands.push(['DEL', keys.resourceAvailable({ name }), keys.resourceLoaded({ name })]);
    for (let id = 1; id <= Number(resources[i + 1]); id++) commands.push(['DEL', keys.resource({ name, resourceId: id })]);
  }
  commands.push(['DEL', keys.users(), keys.resources(), keys.cursor()]);
  if (opts.metrics) {
    const metrics = (await backend.send(['SMEMBERS', keys.metrics()])) as string[];
    for (const metricId of metrics) commands.push(['DEL', keys.metric({ metricId })]);
    commands.push(['DEL', keys.metrics()]);
    const probes = (await backend.send(['SMEMBERS', keys.probes()])) as string[];
    for (const probe of probes) commands.push(['DEL', keys.probe({ probe })]);
    commands.push(['DEL', keys.probes()]);
  }
  for (let i = 0; i < commands.length; i += 1000) await checked(backend.pipeline(commands.slice(i, i + 1000)));
}

/** Reads metric batches past `cursors` (metric name → last id read), advancing them. */
export async function readBatches(ctx: Ctx, cursors: Map<string, string>): Promise<Batch[]> {
  const { backend, keys } = ctx;
  const names = (await backend.send(['SMEMBERS', keys.metrics()])) as string[];
  for (const name of names) if (!cursors.has(name)) cursors.set(name, '0-0');
  if (!cursors.size) return [];
  const batches: Batch[] = [];
  for (;;) {
    const list = [...cursors.keys()];
    const byKey = new Map(list.map((name) => [keys.metric({ metricId: name }), name]));
    const reply = (await backend.send(['XREAD', 'COUNT', 1000, 'STREAMS', ...byKey.keys(), ...list.map((n) => cursors.get(n)!)])) as
      | [string, [string, string[]][]][]
      | null;
    if (!reply) return batches;
    let more = false;
    for (const [key, entries] of reply) {
      const name = byKey.get(key)!;
      for (const [id, fields] of entries) {
        cursors.set(name, id);
        batches.push(toBatch(name, fields));
      }
      if (entries.length === 1000) more = true;
    }
    if (!more) return batches;
  }
}

function toBatch(metric: string, fields: string[]): Batch {
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
  let errorKinds: Record<string, number> = {};
  let errorSamples: Batch['errorSamples'] = {};
  try {
    errorKinds = f.error_kinds ? (JSON.parse(f.error_kinds) as Record<string, number>) : {};
    errorSamples = f.error_samples ? (JSON.parse(f.error_samples) as Batch['errorSamples']) : {};
  } catch {
    // a batch another tool wrote; its counts still hold
  }
  return {
    metric,
    kind: f.kind === 'http' ? 'http' : 'custom',
    worker: f.worker ?? '',
    epoch: Number(f.epoch),
    ts: Number(f.ts),
    count: Number(f.count ?? 0),
    errors: Number(f.errors ?? 0),
    dropped: Number(f.dropped ?? 0),
    aborted: Number(f.aborted ?? 0),
    hist: f.hist ?? '',
    sum: Number(f.sum ?? 0),
    errorKinds,
    errorSamples,
    ...(f.writer === undefined || f.seq === undefined ? {} : { writer: f.writer, seq: Number(f.seq) }),
    ...(f.total === undefined ? {} : { total: Number(f.total) }),
  };
}

async function checked(replies: Promise<(Reply | Error)[]>): Promise<void> {
  const failed = (await replies).find((r) => r instanceof Error);
  if (failed) throw failed;
}
