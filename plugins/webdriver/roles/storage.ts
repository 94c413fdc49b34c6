// The storage role (WebGrid's storage service): owns a folder of recordings,
// announces itself (storage:{sid}:{pid}:host with its TTL, and the providers
// index the proxy reads), indexes what nodes announce on
// storage:{sid}:metadata.pending, serves the files to the proxy
// (GET /storage/{sid}/{sessionId}.mp4, with Range), keeps the folder within
// its size and age limits (oldest deleted first) and writes
// metrics:storage:disk.bytes.total/used. Nodes write the files into the
// folder themselves (a shared mount across machines): the folder is the
// truth, so a storage process killed at any point loses nothing — on start it
// re-reads the folder, then the pending list.
import { randomUUID } from 'node:crypto';
import { mkdir, unlink } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { BlockingConnection, Role } from '../../../entries/plugin.ts';
import { GridAccess } from '../access.ts';
import { credentials, type Gate, sameSecret, UNAUTHORIZED_MESSAGE } from '../auth.ts';
import type { Ctx } from '../context.ts';
import { closeServer, listen, sendError, sendJson } from '../http/serve.ts';
import { advertisedHost } from '../http/advertised-host.ts';
import { diskBytes, pastLimits, readFolder, RECORDING_FILE, storageFolder, storageId, type PendingRecording, type Recording } from '../storage/files.ts';
import { serveFile } from '../storage/serve-file.ts';
import { announceProvider, forgetRecording, withdrawProvider, writeDiskMetrics } from '../storage/writes.ts';
import { IDLE_BLOCK_SECONDS } from '../manager/blocking-waits.ts';

/** How often the provider refreshes its host key at most (a third of its TTL). */
const BEAT_MAX_SECONDS = 20;
/** An idle pop lasts this long (stopping closes its connection rather than waiting for it). */
const BLOCK_SECONDS = IDLE_BLOCK_SECONDS;

export function storageRole(ctx: Ctx): Role {
  const { config, logger, keys, backend } = ctx;
  const sid = storageId(config);
  const pid = randomUUID().replaceAll('-', '');
  const folder = storageFolder(config);
  const index = new Map<string, Recording>();
  let port = 0;
  let stopping = false;
  let timers: ReturnType<typeof setInterval>[] = [];
  let blocking: BlockingConnection | undefined;
  let popping: Promise<void> | undefined;
  /** Folder work runs one step at a time: a rescan and an announcement never interleave. */
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(step: () => Promise<T>) => (queue = queue.then(step, step)) as Promise<T>;

  const server = createServer((req, res) => void onRequest(req, res).catch((error) => sendJson(res, 500, { error: (error as Error).message })));
  const access = new GridAccess(backend, keys, config.proxy.token);
  /** The proxy forwards with the grid secret (storage/proxy.ts): the token, or on a grid with keys alone the secret in Redis. */
  const fromProxy: Gate = {
    get closed() {
      return access.closed;
    },
    get secret() {
      return access.secret;
    },
    accepts: (sent) => access.accepts(sent) || (!!access.secret && sameSecret(sent, access.secret)),
  };

  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (credentials(fromProxy, req.headers.authorization) !== 'token') return sendError(res, 'unauthorized', UNAUTHORIZED_MESSAGE);
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendError(res, 'unknown method', 'recordings are read with GET or HEAD');
    const path = /^\/storage\/([^/]+)\/([^/?]+)$/.exec((req.url ?? '/').split('?')[0]!);
    if (!path || path[1] !== sid || !RECORDING_FILE.test(path[2]!)) return sendJson(res, 404, { error: `no such recording here (storage ${sid} serves /storage/${sid}/{sessionId}.mp4)` });
    await serveFile(req, res, join(folder, path[2]!), 'video/mp4');
  }

  /** The host key, and the API keys read again (a grid of keys alone: its secret too). */
  const announce = () => Promise.all([announceProvider(ctx, sid, pid, `${advertisedHost(config.storage.host, config.storage.advertiseHost)}:${port}`), access.refresh()]);

  /** Deletes what the limits say must go, and writes the metrics. */
  async function keepInBounds(): Promise<void> {
    const doomed = pastLimits([...index.values()].sort((a, b) => a.at - b.at), config.storage);
    for (const r of doomed) {
      await unlink(join(folder, r.file)).catch((error: NodeJS.ErrnoException) => error.code === 'ENOENT' || logger.warn('cannot delete a recording', { file: r.file, error: error.message }));
      index.delete(r.file);
      await forgetRecording(ctx, sid, r.sessionId);
    }
    if (doomed.length) logger.info('recordings deleted by the storage limits', { storage: sid, deleted: doomed.map((r) => r.file) });
    const used = [...index.values()].reduce((sum, r) => sum + r.bytes, 0);
    const total = config.storage.maxBytes > 0 ? config.storage.maxBytes : await diskBytes(folder);
    await writeDiskMetrics(ctx, sid, total, used);
  }

  /** Re-reads the folder: the truth, whatever the pending list said or missed. */
  const rescan = () =>
    serial(async () => {
      index.clear();
      for (const r of await readFolder(folder)) index.set(r.file, r);
      await keepInBounds();
    });

  /** A node announced a finished recording. */
  const indexAnnounced = (item: string) =>
    serial(async () => {
      let pending: PendingRecording;
      try {
        pending = JSON.parse(item) as PendingRecording;
      } catch {
        return logger.warn('a pending recording entry is not JSON; skipped', { storage: sid, item: item.slice(0, 200) });
      }
      const found = (await readFolder(folder)).find((r) => r.file === pending.file);
      if (!found) return logger.warn('an announced recording is not in the folder (is the folder shared with the node?)', { storage: sid, file: pending.file, folder });
      index.set(found.file, found);
      await keepInBounds();
    });

  async function popPending(): Promise<void> {
    while (!stopping && !ctx.signal.aborted) {
      try {
        const popped = (await blocking!.send(['BRPOP', keys.storagePending({ storageId: sid }), BLOCK_SECONDS])) as [string, string] | null;
        if (popped) await indexAnnounced(popped[1]);
      } catch (error) {
        if (stopping) return;
        logger.warn('storage: reading the pending list failed', { error: (error as Error).message });
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  }

  return {
    async start() {
      await mkdir(folder, { recursive: true });
      await rescan();
      port = await listen(server, config.storage.host, config.storage.port, 'webdriver storage');
      await announce();
      blocking = await backend.blocking();
      popping = popPending();
      const beat = Math.min(config.heartbeat.interval, BEAT_MAX_SECONDS) * 1000;
      timers = [
        setInterval(() => void announce().catch((error) => logger.warn('storage heartbeat failed', { error: (error as Error).message })), beat),
        setInterval(() => void rescan().catch((error) => logger.warn('storage rescan failed', { error: (error as Error).message })), config.storage.interval * 1000),
      ];
      logger.info(`storage ${sid} serving ${folder} on http://${config.storage.host}:${port}`, { storage: sid, folder, port, recordings: index.size });
    },
    async stop() {
      stopping = true;
      for (const timer of timers) clearInterval(timer);
      await blocking?.close(); // ends the blocking pop at once
      await popping;
      await withdrawProvider(ctx, sid, pid).catch(() => {});
      await closeServer(server);
    },
  };
}
