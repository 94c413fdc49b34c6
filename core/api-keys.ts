// API keys beside a deployment's token, as playwright-distributed's server
// has them: several keys of equal trust, each with a name, made, listed and
// revoked by a plugin's commands, and kept in one Redis hash only as their
// SHA-256 (whoever reads Redis learns no usable key). A server reads the
// hashes again on each heartbeat, so a revoked key stops opening it within
// one heartbeat, on every process, without a restart. Plugins choose the
// hash (a contract key) and a prefix that makes their keys recognisable.
import { createHash, randomBytes } from 'node:crypto';
import type { Backend } from './backend.ts';

/** What Redis keeps of a key, besides its hash (the field). */
export interface ApiKeyRecord {
  /** The first 12 hex digits of its hash: what `list` shows and `revoke` takes. */
  id: string;
  name: string;
  createdAt: string;
}

/**
 * A plugin's API keys in the Redis hash `key`, each starting with `prefix`:
 * `create`, `list` and `revoke` for its commands; `refresh` (each heartbeat),
 * `size` and `has` for a server checking what a request sent.
 *
 * @example
 * const apiKeys = new ApiKeys(ctx.backend, ctx.keys.apiKeys(), 'myk_');
 * const { key } = await apiKeys.create('ci-bot', Date.now()); // print it once: Redis keeps only its hash
 * await apiKeys.refresh(); // in a server, on each heartbeat
 * if (!apiKeys.has(sentKey)) refuse(401);
 */
export class ApiKeys {
  private hashes = new Set<string>();

  constructor(
    private readonly backend: Backend,
    /** The Redis hash: SHA-256 of each key → its record as JSON. */
    private readonly key: string,
    /** What every key starts with, e.g. 'pwd_'. */
    readonly prefix: string,
    /** Random bytes in each key (base64url after the prefix): 24 make 32 characters. */
    private readonly bytes = 24,
  ) {}

  /** The SHA-256 of a key, hex: the only form Redis holds it in. */
  static hash(key: string): string {
    return createHash('sha256').update(key).digest('hex');
  }

  /** Makes a key named `name`; the key itself is returned once and never stored. */
  async create(name: string, nowMs: number): Promise<{ key: string; record: ApiKeyRecord }> {
    const key = `${this.prefix}${randomBytes(this.bytes).toString('base64url')}`;
    const hash = ApiKeys.hash(key);
    const record: ApiKeyRecord = { id: hash.slice(0, 12), name, createdAt: new Date(nowMs).toISOString() };
    await this.backend.send(['HSET', this.key, hash, JSON.stringify(record)]);
    return { key, record };
  }

  /** Every key's record, oldest first. */
  async list(): Promise<ApiKeyRecord[]> {
    const flat = (await this.backend.send(['HGETALL', this.key])) as string[];
    const records: ApiKeyRecord[] = [];
    for (let i = 1; i < flat.length; i += 2) records.push(JSON.parse(flat[i]!) as ApiKeyRecord);
    return records.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** Revokes the keys whose id or name is `which`; returns what was revoked (nothing: no such key). */
  async revoke(which: string): Promise<ApiKeyRecord[]> {
    const flat = (await this.backend.send(['HGETALL', this.key])) as string[];
    const revoked: ApiKeyRecord[] = [];
    for (let i = 0; i < flat.length; i += 2) {
      const record = JSON.parse(flat[i + 1]!) as ApiKeyRecord;
      if (record.id !== which && record.name !== which) continue;
      await this.backend.send(['HDEL', this.key, flat[i]!]);
      revoked.push(record);
    }
    return revoked;
  }

  /** Reads the hashes again (a server, each heartbeat); on a failure it rejects and the last set stays. */
  async refresh(): Promise<void> {
    this.hashes = new Set((await this.backend.send(['HKEYS', this.key])) as string[]);
  }

  /** How many keys there were at the last refresh (0: none, the token alone decides). */
  get size(): number {
    return this.hashes.size;
  }

  /** Was `sent` one of the keys at the last refresh? */
  has(sent: string): boolean {
    return sent.startsWith(this.prefix) && this.hashes.has(ApiKeys.hash(sent));
  }
}
