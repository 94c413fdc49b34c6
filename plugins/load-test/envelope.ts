// Command envelopes as vikhry documents them — {type, command_id, epoch,
// sent_at, payload} — read from a worker:<id>:commands stream entry.
import { commandTypes, type CommandType } from './contract.ts';

export interface Envelope {
  /** The stream entry id (what the worker acknowledges). */
  id: string;
  type: CommandType;
  command_id: string;
  epoch: number;
  sent_at: number;
  payload: Record<string, unknown>;
}

/** start_test's payload. */
export interface StartPayload {
  /** Absolute path of the scenario module (each worker loads it from its own disk). */
  scenario: string;
  params: Record<string, unknown>;
  target_users: number;
  /** Arrival-rate mode: iterations per second for the whole test. */
  rate?: number;
  /** false: record nothing (the bench's "metrics off"). */
  metrics?: boolean;
  /** Arrival-rate mode even while the rate is 0 (rate stages may start there); set_rate commands change the rate. */
  arrival?: boolean;
  /**
   * How long the test runs from its first users (its duration, or its stages' total), when it is known: a
   * worker that has heard no stop_test that long (and a grace) after its first users stops them by itself.
   */
  run_ms?: number;
}

/** set_rate's payload: the whole test's arrival rate from now on (iterations per second). */
export interface SetRatePayload {
  rate: number;
}

/** Decodes one entry's field list; undefined when it is not an envelope (logged and skipped by the worker). */
export function decodeEnvelope(id: string, fields: readonly string[]): Envelope | undefined {
  const map: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) map[fields[i]!] = fields[i + 1]!;
  const type = map.type as CommandType;
  if (!commandTypes.includes(type)) return undefined;
  let payload: Record<string, unknown>;
  try {
    payload = JSON.parse(map.payload ?? '{}') as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const epoch = Number(map.epoch);
  if (!Number.isInteger(epoch)) return undefined;
  return { id, type, command_id: map.command_id ?? '', epoch, sent_at: Number(map.sent_at), payload };
}

/** Stream ids compare as (ms, seq) pairs. */
export function streamIdAtLeast(a: string, b: string): boolean {
  const [am, as] = a.split('-').map(Number) as [number, number];
  const [bm, bs] = b.split('-').map(Number) as [number, number];
  return am > bm || (am === bm && as >= bs);
}
