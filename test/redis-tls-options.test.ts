// redis.tls.* through the real CLI (coord inspect, which connects and reads
// the keyspace): a CA file given by --set, the environment or a flag; client
// certificates for a server that asks for them, on both adapters; and one
// line naming the option to check for a wrong CA, a missing file or a
// self-signed server, which rejectUnauthorized=false accepts.
import t, { type Test } from 'tap';
import { buildIfStale } from './support/build.ts';
import { coordSync, oneLineError } from './support/cli.ts';
import { startRedis } from './support/redis.ts';
import { makeTlsFiles } from './support/tls-certs.ts';

t.before(() => buildIfStale());

const files = makeTlsFiles();
const stranger = makeTlsFiles(); // a CA that signed none of the servers' certificates
t.teardown(() => (files.remove(), stranger.remove()));
const server = await startRedis({ tls: files });
t.teardown(() => server.stop());
const clients = { certFile: files.clientCertFile, keyFile: files.clientKeyFile };
const mutual = await startRedis({ tls: { ...files, clients } });
t.teardown(() => mutual.stop());
const selfSigned = await startRedis({ tls: { certFile: files.selfSignedCertFile, keyFile: files.selfSignedKeyFile, caFile: files.selfSignedCertFile } });
t.teardown(() => selfSigned.stop());

/** `coord inspect` of an empty deployment: exit 0 and "no deviations" once it has connected and scanned. */
function inspect(url: string, args: string[], env: Record<string, string> = {}) {
  return coordSync(['inspect', '--plugin', 'obniz', '--redis', url, ...args], env);
}

function connects(t: Test, r: ReturnType<typeof coordSync>, what: string): void {
  t.equal(r.status, 0, `${what}: exit 0 (${r.stderr.trim()})`);
  t.match(r.stdout, /no deviations in 0 keys on rediss:\/\/127\.0\.0\.1:\d+/, `${what}: it connected over TLS`);
}

t.test('the CA file from --set, the environment or the flag', async (t) => {
  connects(t, inspect(server.url, ['--set', `redis.tls.caFile=${files.caFile}`]), '--set redis.tls.caFile');
  connects(t, inspect(server.url, [], { COORD_REDIS_TLS_CA_FILE: files.caFile }), 'COORD_REDIS_TLS_CA_FILE');
  connects(t, inspect(server.url, ['--redis-ca-file', files.caFile, '--adapter', 'node-redis']), '--redis-ca-file on node-redis');
});

t.test('a CA that did not sign the server certificate: one line naming redis.tls.caFile', async (t) => {
  for (const adapter of ['ioredis', 'node-redis']) {
    const r = inspect(server.url, ['--set', `redis.tls.caFile=${stranger.caFile}`, '--adapter', adapter]);
    oneLineError(t, r, 1, /^coord: cannot reach Redis at rediss:\/\/127\.0\.0\.1:\d+: .*check redis\.tls\.caFile/);
  }
});

t.test('a CA file that is not there: one line naming the path and the option', async (t) => {
  const missing = `${files.caFile}.missing`;
  const r = inspect(server.url, ['--set', `redis.tls.caFile=${missing}`]);
  oneLineError(t, r, 1, new RegExp(`^coord: cannot read the TLS CA file "${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}" \\(redis\\.tls\\.caFile\\)`));
});

t.test('client certificates: accepted with certFile and keyFile, refused without', async (t) => {
  for (const adapter of ['ioredis', 'node-redis']) {
    const withCert = ['--set', `redis.tls.caFile=${files.caFile}`, '--set', `redis.tls.certFile=${clients.certFile}`, '--set', `redis.tls.keyFile=${clients.keyFile}`];
    connects(t, inspect(mutual.url, [...withCert, '--adapter', adapter]), `${adapter} with a client certificate`);
    const without = inspect(mutual.url, ['--set', `redis.tls.caFile=${files.caFile}`, '--adapter', adapter]);
    // node-redis sees the server's alert and names the options; ioredis sees only the connection reset.
    oneLineError(t, without, 1, adapter === 'node-redis' ? /^coord: cannot reach Redis at rediss:\/\/127\.0\.0\.1:\d+: .*set redis\.tls\.certFile and redis\.tls\.keyFile/ : /^coord: cannot reach Redis at rediss:\/\/127\.0\.0\.1:\d+: /);
  }
  const half = inspect(mutual.url, ['--set', `redis.tls.caFile=${files.caFile}`, '--set', `redis.tls.certFile=${clients.certFile}`]);
  oneLineError(t, half, 1, /needs both redis\.tls\.certFile and redis\.tls\.keyFile/);
});

t.test('a self-signed server: refused by default, accepted with rejectUnauthorized=false', async (t) => {
  oneLineError(t, inspect(selfSigned.url, []), 1, /check redis\.tls\.caFile/);
  connects(t, inspect(selfSigned.url, ['--set', 'redis.tls.rejectUnauthorized=false']), 'rejectUnauthorized=false');
  connects(t, inspect(selfSigned.url, ['--adapter', 'node-redis'], { COORD_REDIS_TLS_REJECT_UNAUTHORIZED: 'false' }), 'COORD_REDIS_TLS_REJECT_UNAUTHORIZED=false on node-redis');
});
