// A stand-in for a real playwright-distributed (v0.3.0) worker, doing on Redis
// exactly what that worker does: it writes worker:{type}:{uuid} with `endpoint`
// (not wsEndpoint), `lastHeartbeat` in milliseconds, no version; sets its
// counter fields to 0 when absent and never deletes them; heartbeats with a
// TTL; on the shutdown command it goes `shutting-down` and deletes only its
// hash. Its browser server is a real one, of whatever playwright-core it is given.
import { randomUUID } from 'node:crypto';
import type { Backend } from '../../core/backend.ts';
import { chromiumFlags } from '../../plugins/browser-grid/worker/browser.ts';
import { chromiumBinary } from './chromium.ts';
import type { PlaywrightCore } from './playwright-versions.ts';

export interface PdWorker {
  id: string;
  ref: string;
  key: string;
  endpoint: string;
  /** As the real worker exits: status shutting-down, then its hash deleted (only its hash), browser closed. */
  stop(): Promise<void>;
  /** As a killed worker: heartbeats stop and the browser goes; its hash is left to expire. */
  kill(): Promise<void>;
}

export async function startPdWorker(opts: {
  backend: Backend;
  prefix: string;
  playwright: PlaywrightCore;
  heartbeatMs?: number;
  ttlSeconds?: number;
  /** Extra fields written once at registration (e.g. a wrong version, to test a 428). */
  extra?: Record<string, string>;
}): Promise<PdWorker> {
  const { backend, prefix } = opts;
  const id = randomUUID();
  const key = `${prefix}worker:chromium:${id}`;
  const ref = `chromium:${id}`;
  const server = await opts.playwright.chromium.launchServer({
    headless: true,
    host: '127.0.0.1',
    port: 0,
    executablePath: chromiumBinary,
    args: [...chromiumFlags],
    chromiumSandbox: false,
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  const endpoint = server.wsEndpoint();
  const ttl = opts.ttlSeconds ?? 4;
  let status = 'available';
  const write = async (extra: string[] = []) => {
    await backend.send(['HSET', key, 'id', id, 'browserType', 'chromium', 'endpoint', endpoint, 'status', status, 'startedAt', started, 'lastHeartbeat', Date.now(), ...extra]);
    await backend.send(['EXPIRE', key, ttl]);
  };
  const started = Date.now();
  await write(Object.entries(opts.extra ?? {}).flat());
  await backend.send(['HSETNX', `${prefix}cluster:active_connections`, ref, 0]);
  await backend.send(['HSETNX', `${prefix}cluster:lifetime_connections`, ref, 0]);
  const timer = setInterval(() => void write().catch(() => {}), opts.heartbeatMs ?? 1000);
  return {
    id,
    ref,
    key,
    endpoint,
    async stop() {
      clearInterval(timer);
      status = 'shutting-down';
      await backend.send(['HSET', key, 'status', status]);
      await backend.send(['DEL', key]);
      await server.close();
    },
    async kill() {
      clearInterval(timer);
      await server.close();
    },
  };
}
