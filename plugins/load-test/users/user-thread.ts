// A worker thread that runs one worker's users (thread-session.ts starts it
// when the worker starts, so it is warm when a test comes): per test it loads
// the scenario, makes the worker's TestSession and does what the worker role
// in the main thread tells it (add and remove users, the target, the rate,
// interrupt, stop). Its backend calls — metric batches included, in the same
// format as ever — go to the main thread (port-backend.ts). It says "tick"
// every TICK_MS, so the main thread knows when users' code holds it, and can
// terminate it to stop them; what its users recorded is counted in memory
// the main thread shares, so it is known even then.
import { parentPort, workerData } from 'node:worker_threads';
import { findUp, loadScriptDir, type Logger, type LogLevel, roleContext, systemClock } from '../../../entries/plugin.ts';
import { PLUGIN_NAME } from '../config.ts';
import type { Ctx } from '../context.ts';
import { contract } from '../contract.ts';
import { portBackend } from './port-backend.ts';
import { loadScenario } from '../scenario/loader.ts';
import { TICK_MS, type ToThread, type UserThreadData } from './thread-session.ts';
import { TestSession } from './worker-session.ts';

const port = parentPort!;
const data = workerData as UserThreadData;
const backend = portBackend(port, data.displayUrl);

function portLogger(bindings: Record<string, unknown>): Logger {
  const line = (level: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    // JSON-safe fields: whatever users' code put there can cross the port.
    port.postMessage({ type: 'log', level, msg, fields: JSON.parse(JSON.stringify({ ...bindings, ...fields }) ?? '{}') });
  };
  return { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error'), child: (more) => portLogger({ ...bindings, ...more }) };
}

// The plugin's keys and scripts without the rest of the plugin (its commands, orchestrator and page), so the thread starts light.
const ctx: Ctx = roleContext({
  plugin: { name: PLUGIN_NAME, contract },
  scripts: loadScriptDir(findUp(import.meta.url, 'plugins/load-test/lua'), contract),
  config: data.config,
  global: data.global,
  backend,
  logger: portLogger({}),
  clock: systemClock,
  signal: new AbortController().signal,
  roles: ['worker'],
});

let session: TestSession | undefined;

async function handle(msg: ToThread): Promise<void> {
  if (msg.type === 'reply') return backend.answer(msg);
  if (msg.type === 'start') {
    try {
      session = new TestSession(ctx, data.workerId, msg.epoch, await loadScenario(msg.scenario), msg.payload);
      session.countRequestsIn(new Int32Array(msg.counter));
      port.postMessage({ type: 'ready', mode: session.mode, writer: session.writer });
    } catch (err) {
      port.postMessage({ type: 'failed', message: (err as Error).message });
    }
    return;
  }
  if (!session) return;
  switch (msg.type) {
    case 'add':
    case 'remove': {
      let error: string | undefined;
      try {
        if (msg.type === 'add') await session.addUsers(msg.ids);
        else await session.removeUser(msg.id);
      } catch (err) {
        error = (err as Error).message;
      }
      port.postMessage({ type: 'done', seq: msg.seq, error });
      return;
    }
    case 'target':
      session.targetUsers = msg.users;
      return;
    case 'rate':
      session.setRate(msg.rate);
      return;
    case 'interrupt':
      void session.flush(); // what was gathered so far is written now, should the thread be terminated
      session.interrupt();
      return;
    case 'stop': {
      const stopping = session;
      session = undefined;
      void stopping.flush();
      await stopping.stop();
      port.postMessage({ type: 'stopped', recorded: stopping.recorded, requests: stopping.requests, writer: stopping.writer });
      return;
    }
  }
}

port.on('message', (msg: ToThread) => void handle(msg));
setInterval(() => port.postMessage({ type: 'tick' }), TICK_MS);
// Warm: the scenario a test will most likely run (load-test.scenario) is loaded before the test asks.
if (data.preload) await loadScenario(data.preload).catch(() => {});
