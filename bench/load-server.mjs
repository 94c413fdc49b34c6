// The target of bench/load.mjs, in a process of its own: answers every
// request at once with a small body and counts them, and the connections it
// accepted; the parent asks for the counts and the server's CPU time over IPC
// ({type:'count'}), and when the first request since a {type:'reset'} came
// (firstAt, Date.now(): the start-up bench compares it with a tool's spawn);
// a reset also zeroes the count.
import { createServer } from 'node:http';

let count = 0;
let connections = 0;
let firstAt;
const server = createServer((req, res) => {
  firstAt ??= Date.now();
  count += 1;
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }).end('ok');
});
server.on('connection', () => (connections += 1));
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send({ type: 'listening', port: server.address().port }));
process.on('message', (msg) => {
  if (msg.type === 'reset') {
    firstAt = undefined;
    count = 0;
    process.send({ type: 'reset' });
    return;
  }
  if (msg.type !== 'count') return;
  const cpu = process.cpuUsage();
  process.send({ type: 'count', count, connections, cpuUs: cpu.user + cpu.system, firstAt });
});
process.on('disconnect', () => process.exit(0));
