// The obniz Cloud webhook on the manager (GET or POST on webhookPath, bound to
// webhookHost, 127.0.0.1 by default): a call re-reads the device list and
// synchronizes, as obniz-app-sdk does. With no device list to re-read
// (deviceSource none), install.create / install.update / install.delete
// events in a POST body are applied directly. A body over 1 MiB is answered
// 413 at once (by its Content-Length, or when the bytes read pass the limit).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deviceSourceKind } from './config.ts';
import { toDeviceInfo } from './devices.ts';
import { DeviceListError, InstanceError } from './errors.ts';
import type { Manager } from './roles/manager.ts';
import type { Ctx } from './context.ts';
import { isObject, type DeviceInfo } from './values.ts';

export interface Webhook {
  url: string;
  port: number;
  close(): Promise<void>;
}

const MAX_BODY = 1 << 20;
const TOO_LARGE = `the body is larger than 1 MiB (${MAX_BODY} bytes): a webhook call carries install events, not data`;

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
    if (Number(req.headers['content-length'] ?? 0) > MAX_BODY) return tooLarge(req, res);
    const body = req.method === 'POST' ? await readBody(req) : '';
    if (body === undefined) return tooLarge(req, res);
    if (direct && body.trim()) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        return reply(res, 400, { error: 'the body is not JSON' });
      }
      let events: ReturnType<typeof installEvents>;
      try {
        events = installEvents(parsed);
      } catch (err) {
        if (err instanceof DeviceListError) return reply(res, 400, { error: err.message });
        throw err;
      }
      if (!events) return reply(res, 400, { error: 'expected install events: {"type":"install.create|install.update|install.delete","payload":{"device":{"id":…}}} or a list of them' });
      await manager.applyEvents(events);
      return reply(res, 200, { applied: events.length });
    }
    await manager.syncNow();
    return reply(res, 200, {});
  };
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new InstanceError(`webhook port ${config.webhookPort} on ${config.webhookHost} is in use (set obniz.webhookPort)`, { code: 'COORD_ERR_OBNIZ_WEBHOOK_PORT_IN_USE' })
          : new InstanceError(`webhook: ${err.message}`, { code: 'COORD_ERR_OBNIZ_WEBHOOK_LISTEN', cause: err }),
      ),
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
    out.push({ type: e.type, device: toDeviceInfo(device, `webhook event ${out.length}: payload.device`) });
  }
  return out;
}

/** The body as text; undefined (and reading stops) once it passes MAX_BODY. */
function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) return void chunks.push(chunk);
      req.off('data', onData);
      req.pause();
      resolve(undefined);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * 413 with the reason, then the connection closes: the rest of the body is
 * not read. Closing only after the answer is out lets the client read it.
 */
function tooLarge(req: IncomingMessage, res: ServerResponse): void {
  res.shouldKeepAlive = false;
  res.once('finish', () => setTimeout(() => req.socket.destroy(), 1000).unref());
  reply(res, 413, { error: TOO_LARGE });
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
