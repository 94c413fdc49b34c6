// A relayed session: the worker's 101 goes to the client, then the two are
// piped (relay/dial.ts) until either side closes, when its lease is given back.
// A session counts once the client speaks: one that hangs up before its first
// message (a churned connect) is rolled back whole, so it can neither use up
// nor recycle a worker.
import type { Socket } from 'node:net';
import type { Admitted, Protocol } from '../admission/admission.ts';
import type { Ctx } from '../context.ts';
import { parseRef } from '../refs.ts';
import type { Dialed } from '../relay/dial.ts';
import { pipeBoth } from '../relay/pipe.ts';
import { FIRST_MESSAGE_MS } from './client-limits.ts';
import type { ProxyParts } from './parts.ts';

interface Client {
  socket: Socket;
  /** What the client sent after its request head, to go to the worker first. */
  head: Buffer;
  connectionId: string;
}

/** Relays the client to the worker that accepted it; resolves when the session is over and its lease given back. */
export async function relaySession(
  parts: ProxyParts,
  client: Client,
  chosen: Extract<Admitted, { kind: 'ok' }>,
  dialed: Dialed & { lease?: Socket },
  w: { browserType: string; protocol: Protocol },
): Promise<void> {
  const { ctx, metrics, leases, relays } = parts;
  const { config } = ctx;
  const { socket, connectionId } = client;
  socket.pause();
  socket.write(dialed.response);
  metrics.connections.inc({ browser: w.browserType, result: 'relayed' });
  if (w.protocol === 'cdp') metrics.cdpSessions.inc({ path: 'lease' in dialed ? 'direct' : 'worker' });
  metrics.relays.inc();
  leases.opened(connectionId, chosen.ref);
  let used = false;
  // an upgraded client that never speaks would hold its slot: it has FIRST_MESSAGE_MS to
  const silent = setTimeout(() => socket.destroy(), FIRST_MESSAGE_MS);
  const firstMessage = () => {
    used = true;
    clearTimeout(silent);
    if (chosen.lifetime >= config.maxLifetimeSessions) void sendShutdown(ctx, chosen.ref).catch(() => {});
  };
  const relay = pipeBoth(socket, dialed.socket, client.head, config.keepaliveInterval * 1000, firstMessage).then(async () => {
    clearTimeout(silent);
    metrics.relays.dec();
    leases.closed(connectionId);
    await leases.release(chosen.ref, connectionId, !used);
  });
  relays.add(relay);
  await relay;
  relays.delete(relay);
}

/** As playwright-distributed does: once a worker reached its lifetime limit, ask it to drain (key + publish on the same name). */
async function sendShutdown(ctx: Ctx, ref: string): Promise<void> {
  const { browserType, workerId } = parseRef(ref);
  await ctx.backend.send(['SET', ctx.keys.shutdownCommand({ browserType, workerId }), 'shutdown', 'EX', Math.ceil(ctx.config.shutdownCommandTtl), 'NX']);
  await ctx.backend.send(['PUBLISH', ctx.channels.shutdown({ browserType, workerId }), 'shutdown']);
  ctx.logger.info('worker reached its lifetime limit; shutdown sent', { worker: ref });
}
