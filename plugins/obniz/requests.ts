// app.request(key) and app.directRequest(obnizId, key): ask the workers over
// pub/sub (keyRequest) and gather the slaves' keyRequestResponse answers, as
// an obniz-app-sdk manager does. Used by the manager role and the CLI.
import { randomUUID } from 'node:crypto';
import type { Command, Subscriber } from '../../entries/plugin.ts';
import { channelFor, channels, envelope, forManager, parseEnvelope, type Envelope } from './messages.ts';
import type { Ctx } from './context.ts';
import { RequestError } from './errors.ts';
import { indexedSlaves, slaveStates } from './fleet.ts';

interface Waiting {
  expected: Set<string>;
  results: Record<string, string>;
  resolve: (results: Record<string, string>) => void;
}

export class KeyRequester {
  private subscriber?: Subscriber;
  private readonly waiting = new Map<string, Waiting>();
  /** Called with every message meant for managers (reports, answers), after the requester's own handling. */
  onManagerMessage?: (message: Envelope) => void;

  constructor(private readonly ctx: Ctx, readonly name: string) {}

  /** PSUBSCRIBEs app* as SDK managers do. */
  async start(): Promise<void> {
    this.subscriber = await this.ctx.backend.subscriber();
    this.subscriber.onMessage(({ message }) => this.onMessage(message));
    await this.subscriber.psubscribe(channels(this.ctx.global.redis.keyPrefix).pattern);
  }

  async close(): Promise<void> {
    for (const [id, w] of this.waiting) {
      this.waiting.delete(id);
      w.resolve(w.results);
    }
    await this.subscriber?.close().catch(() => {});
  }

  /** Every running worker's onRequest(key), by obnizId; rejects when no slave is alive or an alive one does not answer in time. */
  async request(key: string, timeoutMs = this.ctx.config.requestTimeout * 1000): Promise<Record<string, string>> {
    const alive = (await slaveStates(this.ctx)).filter((s) => s.alive).map((s) => s.name);
    if (!alive.length) throw new RequestError(`request "${key}": no slave is alive to ask (none has written slave:{name}:heartbeat lately)`, {
        code: 'COORD_ERR_OBNIZ_REQUEST_NO_SLAVE',
      });
    return this.ask(envelope('keyRequest', this.name, { requestId: randomUUID(), key }), alive, timeoutMs, `request "${key}"`);
  }

  /** One device's onRequest(key): { [obnizId]: answer } (empty when its slave does not run it right now). */
  async directRequest(obnizId: string, key: string, timeoutMs = this.ctx.config.requestTimeout * 1000): Promise<Record<string, string>> {
    const names = await indexedSlaves(this.ctx);
    const found = await this.ctx.backend.pipeline(names.map((name): Command => ['HEXISTS', this.ctx.keys.workers({ name }), obnizId]));
    const owner = names.find((_n, i) => found[i] === 1);
    if (!owner) throw new RequestError(`directRequest "${key}": device ${obnizId} is not installed`, { code: 'COORD_ERR_OBNIZ_REQUEST_NOT_INSTALLED' });
    const message = envelope('keyRequest', this.name, { requestId: randomUUID(), key, obnizId }, { name: owner, toManager: false });
    return this.ask(message, [owner], timeoutMs, `directRequest "${key}" to ${obnizId}`);
  }

  private async ask(message: Envelope, slaves: string[], timeoutMs: number, what: string): Promise<Record<string, string>> {
    const requestId = message.body.requestId as string;
    const expected = new Set(slaves);
    const answered = new Promise<Record<string, string>>((resolve) => this.waiting.set(requestId, { expected, results: {}, resolve }));
    await this.ctx.backend.send(['PUBLISH', channelFor(message, this.ctx.global.redis.keyPrefix, 'manager'), JSON.stringify(message)]);
    const timer = new AbortController();
    const timedOut = this.ctx.clock.sleep(timeoutMs, timer.signal).then(
      () => 'timeout' as const,
      () => 'cancelled' as const,
    );
    const outcome = await Promise.race([answered, timedOut]);
    timer.abort();
    this.waiting.delete(requestId);
    if (outcome === 'timeout') {
      throw new RequestError(`${what}: no answer within ${timeoutMs / 1000} s from ${[...expected].join(', ')}`, { code: 'COORD_ERR_OBNIZ_REQUEST_TIMEOUT' });
    }
    return outcome as Record<string, string>;
  }

  private onMessage(text: string): void {
    const message = parseEnvelope(text);
    if (!message || !forManager(message, this.name)) return;
    if (message.action === 'keyRequestResponse') {
      const waiting = this.waiting.get(String(message.body.requestId));
      if (waiting && waiting.expected.delete(message.info.from)) {
        Object.assign(waiting.results, message.body.results ?? {});
        if (waiting.expected.size === 0) waiting.resolve(waiting.results);
      }
    }
    this.onManagerMessage?.(message);
  }
}
