// obniz-app-sdk 1.5's pub/sub messages: one envelope
// {"action","info":{"sendMode","to"?,"toManager","from"},"body"} on `app`
// (broadcast) or `app.{name}` (direct). A slave answers its managers on its
// own channel, as the SDK does, because managers PSUBSCRIBE app*.
import { channelBuilders } from '../../entries/plugin.ts';
import { contract } from './contract.ts';
import { isObject } from './values.ts';

export type Action = 'synchronize' | 'keyRequest' | 'keyRequestResponse' | 'report' | 'reportRequest';

export interface Envelope {
  action: Action;
  info: { sendMode: 'broadcast' | 'direct'; to?: string; toManager: boolean; from: string };
  body: Record<string, any>;
}

const ACTIONS: readonly string[] = ['synchronize', 'keyRequest', 'keyRequestResponse', 'report', 'reportRequest'];

/** Channel names under the deployment's key prefix. */
export function channels(keyPrefix: string) {
  const built = channelBuilders(contract, keyPrefix);
  return {
    broadcast: built.broadcast(),
    direct: (name: string) => built.direct({ name }),
    /** What managers PSUBSCRIBE: the broadcast channel and every direct one. */
    pattern: `${escapeGlob(built.broadcast())}*`,
  };
}

/** The channel a message goes out on, as the SDK picks it. */
export function channelFor(message: Envelope, keyPrefix: string, sender: 'slave' | 'manager'): string {
  const ch = channels(keyPrefix);
  if (message.info.sendMode === 'broadcast') return ch.broadcast;
  if (sender === 'slave' && message.info.toManager) return ch.direct(message.info.from);
  return ch.direct(message.info.to!);
}

export function envelope(action: Action, from: string, body: Record<string, unknown>, to?: { name?: string; toManager: boolean }): Envelope {
  const info = to?.name !== undefined
    ? { sendMode: 'direct' as const, to: to.name, toManager: to.toManager, from }
    : { sendMode: 'broadcast' as const, toManager: to?.toManager ?? false, from };
  return { action, info, body };
}

/** A message received, or undefined when it is not an SDK envelope (other traffic on app* is ignored). */
export function parseEnvelope(text: string): Envelope | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(value) || typeof value.action !== 'string' || !ACTIONS.includes(value.action) || !isObject(value.info)) return undefined;
  const info = value.info;
  if (info.sendMode !== 'broadcast' && info.sendMode !== 'direct') return undefined;
  return {
    action: value.action as Action,
    info: { sendMode: info.sendMode, to: typeof info.to === 'string' ? info.to : undefined, toManager: info.toManager === true, from: String(info.from ?? '') },
    body: isObject(value.body) ? value.body : {},
  };
}

/** Whether a slave named `name` should act on this message. */
export function forSlave(message: Envelope, name: string): boolean {
  return !message.info.toManager && (message.info.sendMode === 'broadcast' || message.info.to === name);
}

/** Whether a manager named `name` should act on this message. */
export function forManager(message: Envelope, name: string): boolean {
  return message.info.toManager && (message.info.sendMode === 'broadcast' || message.info.to === undefined || message.info.to === name);
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}
