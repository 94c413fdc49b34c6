// The target of bench/load.mjs, in a process of its own: answers every
// request at once with a small body and counts them; the parent asks for the
// count over IPC ({type:'count'}).
import { createServer } from 'node:http';

let count = 0;
const server = createServer((req, res) => {
  count += 1;
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }).end('ok');
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send({ type: 'listening', port: server.address().port }));
process.on('message', (msg) => {
  if (msg.type === 'count') process.send({ type: 'count', count });
});
process.on('disconnect', () => process.exit(0));
