// The obniz Cloud webhook on the manager (GET or POST on webhookPath, bound to
// webhookHost, 127.0.0.1 by default): a call re-reads the device list and
// synchronizes, as obniz-app-sdk does. With no device list to re-read
// (deviceSource none), install.create / install.update / install.delete
// events in a POST body are applied directly.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deviceSourceKind } from './config.ts';
import type { Manager } from './roles/manager.ts';
import type { Ctx } from './store.ts';
import { isObject, type DeviceInfo } from './values.ts';

export interface Webhook {
  url: string;
  port: number;
  close(): Promise<void>;
}

const MAX_BODY = 1 << 20;

export async function startWebhook(ctx: Ctx, manager: Pick<Manager, 'syncNow' | 'applyEvents'>): Promise<Webhook> {
  const { config, logger } = ctx;
  const direct = deviceSourceKind(config) === 'none';
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      logger.error('webhook call failed', { error: (err as Error).message });
      reply(res, 500, { error: (err as Error).message });
    });
  });
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://webhook');
    if (url.pathname !== config.webhookPath) return reply(res, 404, { error: `not found: the webhook is at ${config.webhookPath}` });
    if (req.method !== 'GET' && req.method !== 'POST') return reply(res, 405, { error: 'use GET or POST' });
    if (config.webhookToken !== undefined) {
      const given = url.searchParams.get('token') ?? req.headers.authorization?.replace(/^Bearer\s+/i, '');
      if (given !== config.webhookToken) return reply(res, 401, { error: 'missing or wrong token' });
    }
    const body = req.method === 'POST' ? await readBody(req) : '';
    if (direct && body.trim()) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        return reply(res, 400, { error: 'the body is not JSON' });
      }
      const events = installEvents(parsed);
      if (!events) return reply(res, 400, { error: 'expected install events: {"type":"install.create|install.update|install.delete","payload":{"device":{"id":…}}} or a list of them' });
      await manager.applyEvents(events);
      return reply(res, 200, { applied: events.length });
    }
    await manager.syncNow();
    return reply(res, 200, {});
  };
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new Error(err.code === 'EADDRINUSE' ? `webhook port ${config.webhookPort} on ${config.webhookHost} is in use (set obniz.webhookPort)` : `webhook: ${err.message}`)),
    );
    server.listen(config.webhookPort, config.webhookHost, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${config.webhookHost}:${port}${config.webhookPath}`,
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function installEvents(value: unknown): { type: string; device: DeviceInfo }[] | undefined {
  const list = Array.isArray(value) ? value : isObject(value) && Array.isArray(value.events) ? value.events : [value];
  const out: { type: string; device: DeviceInfo }[] = [];
  for (const e of list) {
    const device = isObject(e) && isObject(e.payload) ? e.payload.device : undefined;
    if (!isObject(e) || !['install.create', 'install.update', 'install.delete'].includes(e.type) || !isObject(device) || typeof device.id !== 'string') return undefined;
    out.push({ type: e.type, device: device as DeviceInfo });
  }
  return out;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(new Error('the body is larger than 1 MiB'));
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
