// TLS settings for a rediss:// URL from BackendOptions.tls: the CA bundle and
// client certificate read once up front (a missing file is one clear error
// naming the path and the config option), certificate checking on unless
// switched off; and the hint a certificate that does not verify gets.
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { ConnectionError, type BackendOptions } from '../../core/backend.ts';
import { errorText } from './error-text.ts';
import type { ServerUrl } from './server-url.ts';

type TlsSettings = NonNullable<BackendOptions['tls']>;

/** The files of BackendOptions.tls: the option's config name, and what the file is, for errors. */
const FILES = [
  ['caFile', 'ca', 'redis.tls.caFile', 'CA file'],
  ['certFile', 'cert', 'redis.tls.certFile', 'client certificate file'],
  ['keyFile', 'key', 'redis.tls.keyFile', 'client key file'],
] as const;

/** Options for tls.connect, or undefined for a plain redis:// URL. */
export function tlsOptions(parsed: ServerUrl, tls: BackendOptions['tls']): ConnectionOptions | undefined {
  if (!parsed.tls) return undefined;
  const options: ConnectionOptions = { rejectUnauthorized: tls?.rejectUnauthorized ?? true };
  if (tls?.servername !== undefined) options.servername = tls.servername;
  for (const [setting, option, configName, what] of FILES) {
    const file = tls?.[setting as keyof TlsSettings];
    if (typeof file !== 'string') continue;
    try {
      options[option] = readFileSync(file);
    } catch (error) {
      throw new ConnectionError(`cannot read the TLS ${what} "${file}" (${configName}) for ${parsed.display}: ${errorText(error)}`, { code: 'COORD_ERR_TLS_FILE' });
    }
  }
  if ((tls?.certFile === undefined) !== (tls?.keyFile === undefined)) {
    throw new ConnectionError(`a TLS client certificate needs both redis.tls.certFile and redis.tls.keyFile (${parsed.display} has only one)`, { code: 'COORD_ERR_TLS_CLIENT_CERT' });
  }
  return options;
}

/** Node's codes for a server certificate no trusted CA signed. */
const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
]);

/**
 * What to check when a TLS handshake failed on the server's certificate (the
 * library may wrap the socket's error: its causes are looked at too), or
 * undefined for any other error.
 */
export function tlsHint(error: unknown): string | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code !== 'string') continue;
    if (UNTRUSTED.has(code)) return "the server's certificate is not signed by a CA this client trusts: check redis.tls.caFile";
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return "the server's certificate is for another name: check the URL's host or redis.tls.servername";
    if (code === 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED') return 'the server asks for a client certificate: set redis.tls.certFile and redis.tls.keyFile';
  }
  return undefined;
}
