// One pub/sub connection for every slave of a process: the broadcast channel
// `app` subscribed once, each slave's own `app.{name}` added as it joins, every
// message parsed once and handed to the slaves it may be for. Redis writes a
// message once per connection subscribed, so a manager's `synchronize` costs
// one write per process, not one per slave, and a process of 5,000 slaves
// holds two Redis connections instead of 5,001.
import type { Backend, Subscriber } from '../../entries/plugin.ts';
import { channels, parseEnvelope, type Envelope } from './messages.ts';

export type SlaveHandler = (message: Envelope) => void;

/** Channels a SUBSCRIBE names at most: one command stays short however many slaves join at once. */
const SUBSCRIBE_CHUNK = 500;

export class SlaveChannels {
  private readonly names: ReturnType<typeof channels>;
  /** direct channel → its slave's handler. */
  private readonly direct = new Map<string, SlaveHandler>();
  private opening?: Promise<Subscriber>;
  /** Direct channels of slaves joining now: subscribed together, a chunk a command. */
  private batch?: { channels: string[]; done: Promise<void> };

  constructor(private readonly backend: Backend, keyPrefix: string) {
    this.names = channels(keyPrefix);
  }

  /** Slaves listening now. */
  get size(): number {
    return this.direct.size;
  }

  /** The slave `name` gets the broadcasts and the messages on its own channel; resolves once both are subscribed. */
  async join(name: string, handler: SlaveHandler): Promise<void> {
    const channel = this.names.direct(name);
    this.direct.set(channel, handler);
    try {
      await this.subscribe(channel);
    } catch (err) {
      this.direct.delete(channel);
      throw err;
    }
  }

  /** The slave `name` hears nothing more. */
  async leave(name: string): Promise<void> {
    const channel = this.names.direct(name);
    if (!this.direct.delete(channel) || !this.opening) return;
    await (await this.opening).unsubscribe(channel).catch(() => {});
  }

  async close(): Promise<void> {
    const opening = this.opening;
    this.opening = undefined;
    this.direct.clear();
    await opening?.then((s) => s.close()).catch(() => {});
  }

  /** Joins arriving in the same turn of the event loop share SUBSCRIBE commands. */
  private subscribe(channel: string): Promise<void> {
    if (!this.batch) {
      const batch = { channels: [] as string[], done: Promise.resolve() };
      batch.done = (async () => {
        let subscriber: Subscriber;
        try {
          subscriber = await this.open();
          await new Promise((resolve) => setImmediate(resolve));
        } finally {
          if (this.batch === batch) this.batch = undefined;
        }
        for (let i = 0; i < batch.channels.length; i += SUBSCRIBE_CHUNK) await subscriber.subscribe(...batch.channels.slice(i, i + SUBSCRIBE_CHUNK));
      })();
      this.batch = batch;
    }
    this.batch.channels.push(channel);
    return this.batch.done;
  }

  private open(): Promise<Subscriber> {
    this.opening ??= (async () => {
      const subscriber = await this.backend.subscriber();
      subscriber.onMessage(({ channel, message }) => this.deliver(channel, message));
      await subscriber.subscribe(this.names.broadcast);
      return subscriber;
    })();
    const opening = this.opening;
    // a connection that could not open is tried again by the next join
    opening.catch(() => {
      if (this.opening === opening) this.opening = undefined;
    });
    return opening;
  }

  private deliver(channel: string, text: string): void {
    const message = parseEnvelope(text);
    if (!message) return;
    if (channel !== this.names.broadcast) {
      this.direct.get(channel)?.(message);
      return;
    }
    for (const handler of this.direct.values()) handler(message);
  }
}
