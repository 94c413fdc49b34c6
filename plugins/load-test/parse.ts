// The command line's and the API's value syntaxes: durations ('30s', '2m',
// '1m30s', '500ms', a bare number is seconds), rates ('100/s', '600/m') and
// pacing ranges ('1..3s'). Each failure is one line saying what was expected.
import { InputError } from './errors.ts';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds of a duration; `what` names the option in the error ('--duration'). */
export function parseDuration(text: unknown, what: string): number {
  const value = String(text ?? '').trim();
  if (/^\d+(\.\d+)?$/.test(value)) return check(Number(value) * 1000, value, what);
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (!parts.length || parts.map((p) => p[0]).join('') !== value) {
    throw new InputError(`${what} "${value}" is not a duration: expected e.g. 30s, 2m, 1m30s, 500ms or a number of seconds`);
  }
  return check(parts.reduce((ms, p) => ms + Number(p[1]) * UNIT_MS[p[2]!]!, 0), value, what);
}

function check(ms: number, value: string, what: string): number {
  if (!(ms > 0) || !Number.isFinite(ms)) throw new InputError(`${what} "${value}" must be more than zero`);
  return ms;
}

/** Per second, from '100', '100/s', '6000/m', '5/h'. */
export function parseRate(text: unknown, what: string): number {
  const value = String(text ?? '').trim();
  const m = /^(\d+(?:\.\d+)?)(?:\/(s|m|h))?$/.exec(value);
  if (!m) throw new InputError(`${what} "${value}" is not a rate: expected e.g. 20, 20/s or 600/m`);
  const perSecond = Number(m[1]) / ({ s: 1, m: 60, h: 3600 }[m[2] ?? 's'] ?? 1);
  if (!(perSecond > 0)) throw new InputError(`${what} "${value}" must be more than zero`);
  return perSecond;
}

/** A whole number ≥ min, from a flag or a JSON body. */
export function parseCount(text: unknown, what: string, min = 0): number {
  const value = String(text ?? '').trim();
  if (!/^\d+$/.test(value) || Number(value) < min) throw new InputError(`${what} "${value}" is not a whole number${min > 0 ? ` ≥ ${min}` : ''}`);
  return Number(value);
}
