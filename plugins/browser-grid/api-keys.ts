// API keys beside the deployment token, as playwright-distributed's server
// has them (`pwd_…`, each of equal trust): created, listed and revoked with
// `coord grid apikey`, kept in Redis only as their SHA-256 (whoever reads
// Redis learns no usable key). Every proxy reads the set at each heartbeat,
// so a revoked key stops opening the grid within one heartbeat, on every
// proxy, without a restart. A grid with neither a token nor a key is open.
import { createHash, randomBytes } from 'node:crypto';
import type { Backend, KeyBuilders } from '../../entries/plugin.ts';
import type { BrowserGridKeys } from './contract.ts';

/** playwright-distributed's prefix: a key is recognisable in a config or a log. */
export const API_KEY_PREFIX = 'pwd_';

/** What Redis keeps of a key, besides its hash (the field). */
export interface ApiKeyRecord {
  /** The first 12 hex digits of its hash: what `list` shows and `revoke` takes. */
  id: string;
  name: string;
  createdAt: string;
}

type Keys = KeyBuilders<BrowserGridKeys>;

export function hashOf(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Makes a key named `name`; the key itself is returned once and never stored. */
export async function createApiKey(backend: Backend, keys: Keys, name: string, nowMs: number): Promise<{ key: string; record: ApiKeyRecord }> {
  const key = `${API_KEY_PREFIX}${randomBytes(24).toString('base64url')}`;
  const hash = hashOf(key);
  const record: ApiKeyRecord = { id: hash.slice(0, 12), name, createdAt: new Date(nowMs).toISOString() };
  await backend.send(['HSET', keys.apiKeys(), hash, JSON.stringify(record)]);
  return { key, record };
}

/** Every key's record, oldest first. */
export async function listApiKeys(backend: Backend, keys: Keys): Promise<ApiKeyRecord[]> {
  const flat = (await backend.send(['HGETALL', keys.apiKeys()])) as string[];
  const records: ApiKeyRecord[] = [];
  for (let i = 1; i < flat.length; i += 2) records.push(JSON.parse(flat[i]!) as ApiKeyRecord);
  return records.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/** Revokes the keys whose id or name is `which`; returns what was revoked. */
export async function revokeApiKeys(backend: Backend, keys: Keys, which: string): Promise<ApiKeyRecord[]> {
  const flat = (await backend.send(['HGETALL', keys.apiKeys()])) as string[];
  const revoked: ApiKeyRecord[] = [];
  for (let i = 0; i < flat.length; i += 2) {
    const record = JSON.parse(flat[i + 1]!) as ApiKeyRecord;
    if (record.id !== which && record.name !== which) continue;
    await backend.send(['HDEL', keys.apiKeys(), flat[i]!]);
    revoked.push(record);
  }
  return revoked;
}

/** A proxy's view of the keys: the hashes as of its last heartbeat. */
export class ApiKeySet {
  private hashes = new Set<string>();

  constructor(
    private readonly backend: Backend,
    private readonly keys: Keys,
  ) {}

  /** Reads the hashes again (each heartbeat); on a failure the last set stays. */
  async refresh(): Promise<void> {
    this.hashes = new Set((await this.backend.send(['HKEYS', this.keys.apiKeys()])) as string[]);
  }

  get size(): number {
    return this.hashes.size;
  }

  /** Is `sent` one of the keys? */
  has(sent: string): boolean {
    return sent.startsWith(API_KEY_PREFIX) && this.hashes.has(hashOf(sent));
  }
}
