// A small HTTP server to point the example scenario at:
//   node examples/load-test/server.mjs 8080
// /items/<id>?delay=<ms> answers after that many milliseconds.
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 8080);
createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const delay = Number(url.searchParams.get('delay') ?? 0);
  req.resume();
  req.on('end', () => setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), delay));
}).listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}`));
