// The least any intermediary can add: a bare Node.js HTTP proxy (no routing,
// no rewriting, keep-alive to its target), run by bench/webdriver.mjs in front
// of the same chromedriver so the grid's getTitle cost can be read against it.
// Run: node bench/webdriver-reference-proxy.mjs TARGET_PORT LISTEN_PORT
import { Agent, createServer, request } from 'node:http';

const [target, port] = process.argv.slice(2).map(Number);
const agent = new Agent({ keepAlive: true });
createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const headers = { host: `127.0.0.1:${target}`, 'content-type': 'application/json' };
    const upstream = request({ host: '127.0.0.1', port: target, method: req.method, path: req.url, agent, headers }, (answer) => {
      const body = [];
      answer.on('data', (c) => body.push(c));
      answer.on('end', () => {
        const out = Buffer.concat(body);
        res.writeHead(answer.statusCode, { 'content-type': 'application/json', 'content-length': out.length }).end(out);
      });
    });
    upstream.end(Buffer.concat(chunks));
  });
}).listen(port, '127.0.0.1', () => console.log('ready'));
