// A throwaway certificate authority and a server certificate for 127.0.0.1 and
// localhost, made with openssl in a temp folder, for tests of rediss:// URLs.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TlsFiles {
  caFile: string;
  certFile: string;
  keyFile: string;
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
  return {
    caFile: at('ca.crt'),
    certFile: at('server.crt'),
    keyFile: at('server.key'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
