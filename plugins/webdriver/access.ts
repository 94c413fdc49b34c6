// The WebDriver grid's API keys (`wdk_…`, each of equal trust with
// proxy.token), and what a role checks requests against: the token, the keys
// as of its last heartbeat, and the grid secret sessions' own secrets come
// from. With a token that secret is the token, as it always was. Without one,
// it is one random secret in Redis (grid.secret), set with SET NX by the
// first `coord webdriver apikey create`, so every proxy derives the same
// session secrets; a role reads it on its heartbeat and keeps it in memory,
// so checking a session's secret costs no Redis round trip. Once it exists
// the grid stays closed, even after its last key is revoked: revoking a
// leaked key never opens the grid to everyone.
import { randomBytes } from 'node:crypto';
import { ApiKeys, type Backend, type KeyBuilders } from '../../entries/plugin.ts';
import { type Gate, sameSecret } from './auth.ts';
import type { WebDriverKeys } from './contract.ts';

/** A WebDriver key is recognisable in a config or a log. */
export const API_KEY_PREFIX = 'wdk_';
/**
 * 32 random bytes: a key of 47 characters. WebdriverIO takes a `key` of 20,
 * 32, 36 or 50 characters for BrowserStack's, TestingBot's, Sauce Labs' or
 * LambdaTest's and then speaks https to the grid; 47 is none of them.
 */
export const API_KEY_BYTES = 32;

type Keys = KeyBuilders<WebDriverKeys>;

/** The grid's keys, in its `apikeys` hash. */
export function webdriverApiKeys(backend: Backend, keys: Keys): ApiKeys {
  return new ApiKeys(backend, keys.apiKeys(), API_KEY_PREFIX, API_KEY_BYTES);
}

/** The grid secret in Redis, made now (SET NX) if there is none; `mine` is offered first, so a Redis emptied since gets back the one this process knows. */
export async function gridSecret(backend: Backend, keys: Keys, mine?: string): Promise<string> {
  const held = (await backend.send(['GET', keys.gridSecret()])) as string | null;
  if (held) return held;
  await backend.send(['SET', keys.gridSecret(), mine ?? randomBytes(32).toString('base64url'), 'NX']);
  return (await backend.send(['GET', keys.gridSecret()])) as string;
}

/** A role's gate: the token and the keys; `refresh` on each heartbeat. */
export class GridAccess implements Gate {
  readonly keys: ApiKeys;
  private stored: string | undefined;

  constructor(
    private readonly backend: Backend,
    private readonly redisKeys: Keys,
    private readonly token: string | undefined,
  ) {
    this.keys = webdriverApiKeys(backend, redisKeys);
  }

  /**
   * Reads the keys again and, without a token, the grid secret. One this role
   * knew is written back when Redis lost it (restarted empty), so the grid
   * stays closed; on a failure it rejects and the last view stays.
   */
  async refresh(): Promise<void> {
    await this.keys.refresh();
    if (this.token) return;
    const held = (await this.backend.send(['GET', this.redisKeys.gridSecret()])) as string | null;
    this.stored = held ?? (this.stored || this.keys.size ? await gridSecret(this.backend, this.redisKeys, this.stored) : undefined);
  }

  /** Requests need credentials: a token is set, or API keys are (or were) in use. */
  get closed(): boolean {
    return !!this.token || this.keys.size > 0 || !!this.stored;
  }

  get secret(): string | undefined {
    return this.token ?? this.stored;
  }

  accepts(sent: string): boolean {
    return (!!this.token && sameSecret(sent, this.token)) || this.keys.has(sent);
  }
}
