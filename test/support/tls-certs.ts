// A throwaway certificate authority, a server certificate for 127.0.0.1 and
// localhost and a client certificate signed by it, and a self-signed server
// certificate apart, made with openssl in a temp folder, for tests of rediss:// URLs.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TlsFiles {
  caFile: string;
  certFile: string;
  keyFile: string;
  /** A client certificate (and its key) signed by the CA, for a server with --tls-auth-clients yes. */
  clientCertFile: string;
  clientKeyFile: string;
  /** A server certificate (and its key) signed by no CA but itself. */
  selfSignedCertFile: string;
  selfSignedKeyFile: string;
  /** Deletes the folder. */
  remove(): void;
}

export function makeTlsFiles(): TlsFiles {
  const dir = mkdtempSync(join(tmpdir(), 'coord-tls-'));
  const at = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=coord test CA', '-keyout', at('ca.key'), '-out', at('ca.crt'));
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-keyout', at('server.key'), '-out', at('server.csr'));
  writeFileSync(at('san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl(
    'x509', '-req', '-in', at('server.csr'), '-CA', at('ca.crt'), '-CAkey', at('ca.key'), '-CAcreateserial',
    '-days', '2', '-extfile', at('san.ext'), '-out', at('server.crt'),
  );
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=coord test client', '-keyout', at('client.key'), '-out', at('client.csr'));
  openssl('x509', '-req', '-in', at('client.csr'), '-CA', at('ca.crt'), '-CAkey', at('ca.key'), '-CAcreateserial', '-days', '2', '-out', at('client.crt'));
  openssl(
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
    '-keyout', at('self.key'), '-out', at('self.crt'),
  );
  return {
    caFile: at('ca.crt'),
    certFile: at('server.crt'),
    keyFile: at('server.key'),
    clientCertFile: at('client.crt'),
    clientKeyFile: at('client.key'),
    selfSignedCertFile: at('self.crt'),
    selfSignedKeyFile: at('self.key'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
