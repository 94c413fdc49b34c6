// A page whose title the tests' browsers read ("coord <path>"), served on a
// free loopback port.
import { createServer, type Server } from 'node:http';
import { freePort } from './redis.ts';

export interface PageServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

export async function startPage(): Promise<PageServer> {
  const port = await freePort();
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>coord ${req.url}</title><h1>hello</h1>`);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
