// Slow request heads, counted per client (slowloris): see the class.
import { realClient, type TrustedProxies } from '../http/client-address.ts';

/**
 * Slow request heads per client. Whatever holds a socket without asking
 * anything (slowloris) is capped per client; a client that sends whole
 * requests promptly is not, so one address shared by many clients (a NAT, a
 * load balancer) is never locked out by one of them. Behind a trusted proxy
 * the client is the one its X-Forwarded-For names, when that line has come.
 */
export class SlowHeads {
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly cap: number,
    private readonly trusted: TrustedProxies,
  ) {}

  /** The client of a connection whose head so far is `partial`. */
  clientOf(peer: string, partial: Buffer): string {
    if (!this.trusted.has(peer)) return peer;
    const forwarded = /\r\nx-forwarded-for:([^\r\n]*)\r\n/i.exec(partial.toString('latin1'))?.[1];
    return realClient(peer, forwarded, this.trusted);
  }

  /** Counts one more slow head of `client`; false (not counted) when it already has its cap. */
  enter(client: string): boolean {
    const count = this.counts.get(client) ?? 0;
    if (count >= this.cap) return false;
    this.counts.set(client, count + 1);
    return true;
  }

  leave(client: string): void {
    const left = (this.counts.get(client) ?? 1) - 1;
    if (left > 0) this.counts.set(client, left);
    else this.counts.delete(client);
  }

  get limit(): number {
    return this.cap;
  }
}
