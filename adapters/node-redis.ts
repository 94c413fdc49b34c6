// The node-redis (@redis/client) adapter: one shared connection (a client, or
// a cluster that routes each command by its first key), plus a connection of
// its own for every subscriber and every blocking connection.
import { getKeyIndexes } from '@ioredis/commands';
import {
  ClientClosedError,
  ClientOfflineError,
  ConnectionTimeoutError,
  DisconnectsClientError,
  ErrorReply,
  MultiErrorReply,
  ReconnectStrategyError,
  RootNodesUnavailableError,
  SocketClosedUnexpectedlyError,
  SocketTimeoutError,
  TimeoutError,
} from '@redis/client';
import { ConnectionError, type BackendFactory, type BackendOptions, type Command, type Reply, type ReplyError, type Subscriber } from '../core/backend.ts';
import { NodeRedisConnection, type ClusterClient, type SentinelClient, type SingleClient } from './node-redis-connection.ts';
import type { ErrorKinds } from './support/backend-error.ts';
import { RedisClientBackend } from './support/client-backend.ts';
import { pipelineBySend } from './support/concurrent-pipeline.ts';
import { sentinelErrorText } from './support/sentinel-errors.ts';
import { toReply } from './support/reply.ts';

/** A connection's client: one server, a cluster, or the master a set of sentinels names. */
type AnyClient = SingleClient | ClusterClient | SentinelClient;

/**
 * A backend on node-redis (@redis/client): a client, a cluster client or a
 * Sentinel client underneath, with the same URLs and behaviour as the ioredis
 * adapter (the adapter suite holds both to it). For an application that
 * already depends on node-redis.
 *
 * @example
 * import { createNodeRedisBackend } from 'coordkit/adapters/node-redis';
 * const backend = createNodeRedisBackend({ url: 'rediss://cache.example:6380', tls: { caFile: '/etc/ssl/redis-ca.pem' } });
 * await backend.ready();
 * await backend.close();
 */
export const createNodeRedisBackend: BackendFactory = (options) => new NodeRedisBackend(options);

const connectionErrors = [
  ClientClosedError,
  ClientOfflineError,
  ConnectionTimeoutError,
  DisconnectsClientError,
  ReconnectStrategyError,
  RootNodesUnavailableError,
  SocketClosedUnexpectedlyError,
  SocketTimeoutError,
];

const nodeRedisErrors: ErrorKinds = {
  isReply: (error): error is Error => error instanceof ErrorReply,
  isConnection: (error) => connectionErrors.some((type) => error instanceof type),
};

class NodeRedisBackend extends RedisClientBackend<NodeRedisConnection> {
  /** The shared connection: the only one that reports state. */
  protected readonly main: NodeRedisConnection;

  constructor(options: BackendOptions) {
    super('node-redis', options, nodeRedisErrors);
    this.main = new NodeRedisConnection(this.parsed, options, options.clientName, {
      error: (error) => this.#noteError(error),
      ready: () => this.state.set('ready'),
      lost: () => this.state.lost(),
    });
  }

  /**
   * @redis/client (6) rejects a command it could not send within its command
   * timeout (5 s: not connected) with a TimeoutError that has no message; said
   * as the connection error it is.
   */
  protected override error(error: unknown): Error {
    if (error instanceof TimeoutError && !error.message) return new ConnectionError(`Redis at ${this.displayUrl}: not connected (the command could not be sent within 5 s)`, { code: 'COORD_ERR_REDIS_NOT_CONNECTED' });
    return super.error(error);
  }

  async multi(commands: readonly Command[]): Promise<Reply[]> {
    if (commands.length === 0) return [];
    await this.reachable();
    try {
      const client = await this.main.ready();
      const wire = commands.map(toWire);
      let replies: unknown[];
      if (isCluster(client)) {
        // The whole transaction goes to the node of its first key (they must share a slot).
        const transaction = client.multi(wire.map(firstKey).find((key) => key !== undefined));
        for (const args of wire) transaction.addCommand(firstKey(args), undefined, args);
        replies = await this.held(transaction.exec());
      } else if (isSentinel(client)) {
        const transaction = client.multi();
        for (const args of wire) transaction.addCommand(false, args);
        replies = await this.held(transaction.exec());
      } else {
        const transaction = client.multi();
        for (const args of wire) transaction.addCommand(args);
        replies = await this.held(transaction.exec());
      }
      return replies.map(toReply);
    } catch (error) {
      // One command's error reply rejects the call with that reply.
      throw this.error(error instanceof MultiErrorReply ? [...error.errors()][0] : error);
    }
  }

  async pipeline(commands: readonly Command[]): Promise<(Reply | ReplyError)[]> {
    // @redis/client writes the commands of one tick in one batch: concurrent sends are its pipeline.
    return pipelineBySend((command) => this.send(command), commands);
  }

  async *scan(pattern: string, count = 100): AsyncIterable<string> {
    await this.reachable();
    let client: AnyClient;
    try {
      client = await this.main.ready();
    } catch (error) {
      throw this.error(error);
    }
    if (isSentinel(client)) {
      yield* this.scanNodes([client], (sentinel) => sentinel.scanIterator({ MATCH: pattern, COUNT: count }));
      return;
    }
    const nodes = isCluster(client) ? client.masters.map((master) => () => client.nodeClient(master)) : [async () => client];
    yield* this.scanNodes(nodes, async function* (node) {
      yield* (await node()).scanIterator({ MATCH: pattern, COUNT: count });
    });
  }

  async subscriber(): Promise<Subscriber> {
    const { connection, handlers, close } = this.openSubscriber();
    // @redis/client keeps one listener per subscription; subscribing twice would deliver twice.
    const channels = new Set<string>();
    const patterns = new Set<string>();
    const run = async (call: (client: AnyClient) => Promise<unknown>, undo?: () => void) => {
      try {
        await this.reachable();
        await this.held(connection.ready().then(call));
      } catch (error) {
        undo?.();
        throw this.error(error);
      }
    };
    const fresh = (names: string[], have: Set<string>) => [...new Set(names)].filter((name) => !have.has(name));
    return {
      subscribe: (...names) => {
        const added = fresh(names, channels);
        if (added.length === 0) return Promise.resolve();
        added.forEach((name) => channels.add(name));
        return run(
          (client) => client.subscribe(added, (message, channel) => handlers.deliver({ channel, message })),
          () => added.forEach((name) => channels.delete(name)),
        );
      },
      // With no arguments these leave every channel (or pattern), as in Redis.
      unsubscribe: (...names) => {
        if (names.length === 0) channels.clear();
        names.forEach((name) => channels.delete(name));
        return run((client) => client.unsubscribe(names.length ? names : undefined));
      },
      psubscribe: (...names) => {
        const added = fresh(names, patterns);
        added.forEach((name) => patterns.add(name));
        // One subscription per pattern, so each delivery knows the pattern that matched.
        return run(
          (client) =>
            Promise.all(added.map((pattern) => client.pSubscribe(pattern, (message, channel) => handlers.deliver({ channel, message, pattern })))),
          () => added.forEach((name) => patterns.delete(name)),
        );
      },
      punsubscribe: (...names) => {
        if (names.length === 0) patterns.clear();
        names.forEach((name) => patterns.delete(name));
        return run((client) => client.pUnsubscribe(names.length ? names : undefined));
      },
      onMessage: (handler) => handlers.add(handler),
      close,
    };
  }

  /** A subscriber or blocking connection: its errors are noted, its state is not reported. */
  protected connect(name: string | undefined): NodeRedisConnection {
    return new NodeRedisConnection(this.parsed, this.options, name, {
      error: (error) => this.#noteError(error),
      ready: () => undefined,
      lost: () => undefined,
    });
  }

  protected ping(): Promise<unknown> {
    return this.main.ready().then((client) => sendOn(client, ['PING']));
  }

  protected async call(connection: NodeRedisConnection, command: Command): Promise<unknown> {
    return sendOn(await connection.ready(), toWire(command));
  }

  /** Ends a connection now: pending commands are rejected, no timer is left behind. */
  protected async end(connection: NodeRedisConnection): Promise<void> {
    connection.close(() => this.closedError());
  }

  #noteError(error: unknown): void {
    const sentinelText = this.parsed.kind === 'sentinel' ? sentinelErrorText(error, this.parsed.masterName) : undefined;
    if (sentinelText !== undefined) return this.state.noteError(sentinelText);
    // "All the root nodes are unavailable" comes after each root node's own
    // error (ECONNREFUSED, WRONGPASS…), which says why; that one stays.
    if (error instanceof RootNodesUnavailableError && this.state.lastError !== undefined) return;
    this.state.noteError(error);
  }
}

async function sendOn(client: AnyClient, args: string[]): Promise<unknown> {
  // Not read-only: every command goes to the master.
  if (isSentinel(client)) return client.sendCommand(false, args);
  if (!isCluster(client)) return client.sendCommand(args);
  // PUBLISH has no key, so the cluster would pick a node at random per call,
  // and messages sent through different nodes can overtake each other on the
  // way to a subscriber; one node per channel keeps one publisher's order.
  if (args[0]!.toUpperCase() === 'PUBLISH' && args[1] !== undefined) {
    return (await client.getNodeClientForKey(args[1])).sendCommand(args);
  }
  return client.sendCommand(firstKey(args), undefined, args);
}

function isCluster(client: AnyClient): client is ClusterClient {
  return 'masters' in client;
}

function isSentinel(client: AnyClient): client is SentinelClient {
  return 'getMasterNode' in client;
}

/** @redis/client sends strings; a number goes as its decimal text, as ioredis sends it. */
function toWire([name, ...args]: Command): string[] {
  return [name, ...args.map(String)];
}

/**
 * The key a cluster routes a command by, from Redis's own command table (as
 * ioredis keeps it): @redis/client's raw sendCommand needs it given.
 * Keyless or unknown commands go to any node, which answers for itself.
 */
function firstKey([name, ...args]: string[]): string | undefined {
  const command = name!.toLowerCase();
  // The table lists no key for a container command; its subcommands take it
  // next (XGROUP CREATE key …). Sent to any node, such a command is answered
  // MOVED, and @redis/client re-routes by the key it was given, not by the
  // answer, so it would try random nodes until it gave up.
  if (KEY_AFTER_SUBCOMMAND.has(command)) return args[1];
  try {
    const [index] = getKeyIndexes(command, args);
    return index === undefined ? undefined : args[index];
  } catch {
    return undefined;
  }
}

const KEY_AFTER_SUBCOMMAND = new Set(['xgroup', 'xinfo', 'object', 'memory']);
