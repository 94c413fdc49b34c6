// TLS settings for a rediss:// URL from BackendOptions.tls: a CA bundle read
// once up front (a missing file is one clear error), and certificate checking
// on unless switched off.
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { ConnectionError, type BackendOptions } from '../../core/backend.ts';
import { errorText } from './error-text.ts';
import type { ServerUrl } from './server-url.ts';

/** Options for tls.connect, or undefined for a plain redis:// URL. */
export function tlsOptions(parsed: ServerUrl, tls: BackendOptions['tls']): ConnectionOptions | undefined {
  if (!parsed.tls) return undefined;
  const options: ConnectionOptions = { rejectUnauthorized: tls?.rejectUnauthorized ?? true };
  if (tls?.caFile !== undefined) {
    try {
      options.ca = readFileSync(tls.caFile);
    } catch (error) {
      throw new ConnectionError(`cannot read the TLS CA file "${tls.caFile}" for ${parsed.display}: ${errorText(error)}`);
    }
  }
  return options;
}
