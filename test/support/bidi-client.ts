// Drives a Puppeteer WebDriver BiDi client running in a process of its own
// (bidi-client.mjs says why it is not run in the test's own process).
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { root } from './cli.ts';

const script = fileURLToPath(new URL('./bidi-client.mjs', import.meta.url));

export interface BidiClient {
  /** Puppeteer's browser.version() ('firefox/…'), and how long the connection took. */
  version: string;
  connectMs: number;
  /** Opens `url` in a new page: its title, and a script's result there ('hello 42' on the test page). */
  open(url: string): Promise<{ title: string; evaluated: string }>;
  /** The URLs of the pages it sees. */
  pages(): Promise<string[]>;
  /** browser.close() or browser.disconnect(); the client process exits after. */
  leave(how: 'close' | 'disconnect'): Promise<void>;
  child: ChildProcess;
}

/** Connects a BiDi client to `url`; rejects with the connection's error (e.g. 'Unexpected server response: 401'). */
export function connectBidi(url: string): Promise<BidiClient> {
  const child = spawn(process.execPath, [script, url], { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async (): Promise<Record<string, string>> => {
    const { value, done } = await lines.next();
    if (done) throw new Error('the BiDi client process exited');
    const answer = JSON.parse(value as string) as Record<string, string>;
    if (answer.error) throw new Error(answer.error);
    return answer;
  };
  const ask = (command: Record<string, string>) => {
    child.stdin!.write(`${JSON.stringify(command)}\n`);
    return next();
  };
  return next().then(
    (hello) => ({
      version: hello.version!,
      connectMs: Number(hello.ms),
      open: async (page) => (await ask({ cmd: 'page', url: page })) as { title: string; evaluated: string },
      pages: async () => (await ask({ cmd: 'pages' })).urls as unknown as string[],
      leave: async (how) => {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        await ask({ cmd: how });
        await exited;
      },
      child,
    }),
    (error: Error) => {
      child.kill('SIGKILL');
      throw error;
    },
  );
}
