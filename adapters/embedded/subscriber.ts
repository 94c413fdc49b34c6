// A pub/sub connection of the embedded backend: its own ioredis-mock instance on
// the dataset, whose channels every instance of the dataset shares (PUBLISH from
// any backend of the same name reaches it; patterns use Redis glob rules).
import { ConnectionError, type PubSubMessage, type Subscriber } from '../../core/backend.ts';
import type { MockInstance } from './dataset.ts';

export function embeddedSubscriber(mock: MockInstance, onClose: () => void): Subscriber {
  const handlers = new Set<(msg: PubSubMessage) => void>();
  const deliver = (msg: PubSubMessage) => {
    for (const handler of [...handlers]) handler(msg);
  };
  mock.on('message', (channel: string, message: string) => deliver({ channel, message }));
  mock.on('pmessage', (pattern: string, channel: string, message: string) => deliver({ channel, message, pattern }));
  let closed = false;
  const open = () => {
    if (closed) throw new ConnectionError('the subscriber is closed');
  };
  return {
    async subscribe(...channels) {
      open();
      if (channels.length > 0) await mock.subscribe(...channels);
    },
    async unsubscribe(...channels) {
      open();
      await mock.unsubscribe(...channels);
    },
    async psubscribe(...patterns) {
      open();
      if (patterns.length > 0) await mock.psubscribe(...patterns);
    },
    async punsubscribe(...patterns) {
      open();
      await mock.punsubscribe(...patterns);
    },
    onMessage(handler) {
      handlers.add(handler);
      return () => void handlers.delete(handler);
    },
    async close() {
      if (closed) return;
      closed = true;
      handlers.clear();
      mock.disconnect();
      onClose();
    },
  };
}
