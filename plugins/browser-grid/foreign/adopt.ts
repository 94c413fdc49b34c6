// Mixed fleets: a playwright-distributed worker registers only its hash (and
// counter fields), not coord's indexes, and no Playwright version. The proxy
// finds such workers, asks each browser server once which version it speaks
// (an upgrade with a client version no server has is answered 428 naming the
// server's own), writes it as the hash's `version` field and files the worker
// in the indexes, after which it is selected like coord's own.
import { randomBytes } from 'node:crypto';
import { patternGlob, patternRegex } from '../../../entries/plugin.ts';
import { contract } from '../contract.ts';
import { majorMinor, parseRef, workerRef } from '../refs.ts';
import { dialUpgrade } from '../relay/dial.ts';
import type { Ctx } from '../context.ts';
import { touchWorker } from '../scripts.ts';

const PROBE_TIMEOUT_MS = 3000;

/** A worker key after the prefix: built once, as every heartbeat of the fleet's passes through it (watch.ts). */
const WORKER_KEY = patternRegex(contract.keys.worker.pattern, contract.keys.worker.params);

/** The worker ref a key names, when it is a worker record (not a shutdown command). */
export function workerKeyRef(ctx: Ctx, key: string): string | undefined {
  const { keyPrefix } = ctx.global.redis;
  if (!key.startsWith(keyPrefix)) return undefined;
  const m = WORKER_KEY.exec(key.slice(keyPrefix.length));
  return m && m[2] !== 'cmd' ? workerRef(m[1]!, m[2]!) : undefined;
}

/** Indexes every worker hash the indexes do not know yet (found by a SCAN); returns the refs adopted. */
export async function adoptWorkers(ctx: Ctx): Promise<string[]> {
  const { keyPrefix } = ctx.global.redis;
  const found: string[] = [];
  for await (const key of ctx.backend.scan(keyPrefix + patternGlob(contract.keys.worker.pattern), 500)) {
    const ref = workerKeyRef(ctx, key);
    if (ref) found.push(ref);
  }
  return adoptRefs(ctx, found);
}

/** Adopts those of `refs` the indexes do not know yet; returns the refs adopted. */
export async function adoptRefs(ctx: Ctx, refs: string[]): Promise<string[]> {
  if (!refs.length) return [];
  const scores = await ctx.backend.pipeline(refs.map((ref) => ['ZSCORE', ctx.keys.workerIndex({ browserType: parseRef(ref).browserType }), ref]));
  const unknown = refs.filter((_ref, i) => scores[i] === null);
  const adopted: string[] = [];
  for (const ref of unknown) {
    const { browserType, workerId } = parseRef(ref);
    const [wsEndpoint, endpoint, version] = (await ctx.backend.send(['HMGET', ctx.keys.worker({ browserType, workerId }), 'wsEndpoint', 'endpoint', 'version'])) as (string | null)[];
    const spoken = majorMinor(version ?? undefined) || (await probeVersion(wsEndpoint ?? endpoint ?? ''));
    const { exists } = await fileVersion(ctx, ref, spoken);
    if (exists) adopted.push(ref);
  }
  return adopted;
}

/** Files a worker in the indexes, with the Playwright version it speaks when known ('' leaves it as it is). */
export function fileVersion(ctx: Ctx, ref: string, version: string): Promise<{ exists: boolean; free: boolean }> {
  return touchWorker(ctx, ref, 0, version ? ['version', version] : []);
}

/** Asks a Playwright browser server its major.minor: a client version no server has gets a 428 naming it. '' when it does not say. */
export async function probeVersion(endpoint: string): Promise<string> {
  if (!/^wss?:\/\//.test(endpoint)) return '';
  const headers = ['User-Agent', 'Playwright/0.0.0 (coord version probe)', 'Upgrade', 'websocket', 'Connection', 'Upgrade',
    'Sec-WebSocket-Key', randomBytes(16).toString('base64'), 'Sec-WebSocket-Version', '13'];
  try {
    const dialed = await dialUpgrade(endpoint, { rawHeaders: headers }, PROBE_TIMEOUT_MS);
    let text = dialed.response.toString('utf8');
    if (dialed.status === 428 && !/server version/.test(text)) {
      // the body may follow the head in a later packet
      text += await new Promise<string>((resolve) => {
        const chunks: Buffer[] = [];
        const done = () => resolve(Buffer.concat(chunks).toString('utf8'));
        dialed.socket.on('data', (c: Buffer) => chunks.push(c)).once('end', done).once('close', done).resume();
        setTimeout(done, 500).unref();
      });
    }
    dialed.socket.destroy();
    return /server version: v(\d+\.\d+)/.exec(text)?.[1] ?? '';
  } catch {
    return '';
  }
}
