// One W3C request over a keep-alive connection, as client libraries send
// them: the benches time commands with it.
import { Agent, request } from 'node:http';

export const agent = new Agent({ keepAlive: true });

/** Resolves with the status and the parsed JSON body. */
export function call(port, method, path, body) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = request({ host: '127.0.0.1', port, method, path, agent, headers: { 'content-type': 'application/json; charset=utf-8', ...(data ? { 'content-length': data.length } : {}) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(Buffer.concat(chunks).toString() || '{}') }));
    });
    req.on('error', reject);
    req.end(data);
  });
}
