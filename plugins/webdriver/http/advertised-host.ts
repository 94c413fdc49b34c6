// The host other machines reach a role's server on.
import { hostname } from 'node:os';

/** The advertised host, else the bound one (a wildcard address means this machine's name). */
export function advertisedHost(bound: string, advertise?: string): string {
  if (advertise) return advertise;
  return bound === '0.0.0.0' || bound === '::' ? hostname() : bound;
}
