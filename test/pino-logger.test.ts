// The runtime's logger: JSON lines for machines, readable lines for people,
// chosen by the format or by whether the output is a terminal.
import { Writable } from 'node:stream';
import t from 'tap';
import { createLogger } from '../core/pino-logger.ts';

function sink() {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

t.test('JSON lines when the output is not a terminal', async (t) => {
  const out = sink();
  const log = createLogger({ level: 'info', format: 'auto', tty: false, destination: out.stream });
  log.child({ plugin: 'echo', role: 'first' }).info('role started', { port: 8080 });
  log.debug('not shown at level info');
  const lines = out.text().trim().split('\n').map((l) => JSON.parse(l));
  t.equal(lines.length, 1, 'debug is below the level');
  t.match(lines[0], { level: 30, msg: 'role started', plugin: 'echo', role: 'first', port: 8080 });
  t.match(lines[0].time, /^\d{4}-\d\d-\d\dT/, 'an ISO time');
  t.notOk('pid' in lines[0] || 'hostname' in lines[0], 'no pid or hostname noise');
});

t.test('readable lines on a terminal, or with format pretty', async (t) => {
  for (const options of [{ format: 'auto' as const, tty: true }, { format: 'pretty' as const, tty: false }]) {
    const out = sink();
    const log = createLogger({ level: 'debug', ...options, destination: out.stream });
    log.child({ role: 'proxy' }).warn('queue is full', { queued: 100 });
    log.child({ plugin: 'echo', role: 'first' }).debug('role started');
    const raw = out.text();
    t.equal(/\x1b\[/.test(raw), options.tty, options.tty ? 'colours on a terminal' : 'no colour codes in a file or pipe');
    const text = raw.replace(/\x1b\[[0-9;]*m/g, '');
    t.match(text, /^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: proxy queue is full \{"queued":100\}\n\[[\d:.]+\] DEBUG: echo\/first role started\n$/, `${options.format}: one line: time, level, who, message, fields`);
    t.throws(() => JSON.parse(text), 'not JSON');
  }
});

t.test('format json wins over a terminal', async (t) => {
  const out = sink();
  createLogger({ format: 'json', tty: true, destination: out.stream }).error('boom', { code: 7 });
  t.match(JSON.parse(out.text()), { level: 50, msg: 'boom', code: 7 });
});
