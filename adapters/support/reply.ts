// The last step of every reply: the RESP2 shapes the Backend interface
// promises. Both clients already decode to these in RESP2 mode with string
// replies; this only guards the edges (a Buffer, an undefined).
import type { Reply } from '../../core/backend.ts';

export function toReply(value: unknown): Reply {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string' || typeof value === 'number') return value;
  if (Array.isArray(value)) return value.map(toReply);
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'boolean') return value ? 1 : null;
  return String(value);
}
