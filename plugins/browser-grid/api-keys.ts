// The browser grid's API keys beside its token, as playwright-distributed's
// server has them (`pwd_…`, each of equal trust): made, listed and revoked
// with `coord grid apikey`; every proxy reads them at each heartbeat (the
// plugin kit's ApiKeys: Redis keeps only their SHA-256). A grid with neither
// a token nor a key is open.
import { ApiKeys, type Backend, type KeyBuilders } from '../../entries/plugin.ts';
import type { BrowserGridKeys } from './contract.ts';

/** playwright-distributed's prefix: a key is recognisable in a config or a log. */
export const API_KEY_PREFIX = 'pwd_';

/** The grid's keys, in its `apikeys` hash. */
export function gridApiKeys(backend: Backend, keys: KeyBuilders<BrowserGridKeys>): ApiKeys {
  return new ApiKeys(backend, keys.apiKeys(), API_KEY_PREFIX);
}
