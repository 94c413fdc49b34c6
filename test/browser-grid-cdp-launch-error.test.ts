// A worker's CDP port whose browser cannot start: the client is told why (a
// 503 whose body names the launch error) and the worker hears of it, instead
// of an empty 503.
import { connect } from 'node:net';
import t from 'tap';
import { CdpFront } from '../plugins/browser-grid/cdp/front.ts';

t.test('a browser that cannot be launched: 503 with the reason, and the worker is told', async (t) => {
  const errors: string[] = [];
  const front = new CdpFront('/nonexistent/chromium', [], '/secret-path', 60_000, (err) => errors.push(err.message));
  const port = await front.start('127.0.0.1', 0);
  t.teardown(() => front.close());
  const reply = await new Promise<string>((resolve) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.write('GET /secret-path HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n'),
    );
    let text = '';
    socket.on('data', (c) => (text += c));
    socket.on('close', () => resolve(text));
  });
  t.match(reply, /^HTTP\/1\.1 503 Service Unavailable\r\n/, '503');
  const body = reply.split('\r\n\r\n')[1]!;
  t.match(body, /^no browser for this client: .+/, `the body says why (${body})`);
  t.equal(errors.length, 1, 'the worker is told once');
  t.match(body, errors[0]!, 'the same reason');
});
