// What screen recording costs a session, in one run with real Chromium and
// ffmpeg: a standalone grid (`coord run --plugin webdriver`, every role in
// one process) serves sessions alternately without and with se:recordVideo,
// so both see the same machine load:
//  1. session creation (POST /session until the answer), median;
//  2. one cheap command (GET …/title) p50 and p90, on a page that animates
//     without pause (Chromium sends a frame for every change: the encoder's
//     worst case) and on a page that does not change;
//  3. the CPU the grid process and its ffmpeg children spend per recorded
//     second, and the size of the videos.
// Run: npx tsc -p . && node bench/webdriver-recording.mjs (ROUNDS=…, COMMANDS=… to change the counts)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { call } from './w3c-call.mjs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { coord } from '../dist/test/support/cli.js';
import { freePort } from '../dist/test/support/redis.js';
import { newSessionBody } from '../dist/test/support/webdriver.js';

const ROUNDS = Number(process.env.ROUNDS ?? 8);
const COMMANDS = Number(process.env.COMMANDS ?? 250);
const RESULT = new URL('./results/webdriver-recording.md', import.meta.url);
const folder = mkdtempSync(join(tmpdir(), 'coord-bench-rec-'));

const page = createServer((req, res) =>
  res.writeHead(200, { 'content-type': 'text/html' }).end(
    req.url === '/still'
      ? '<!doctype html><title>bench</title><h1>a page that does not change</h1>'
      : `<!doctype html><title>bench</title>
<style>html,body{margin:0;height:100%}#box{width:200px;height:200px;background:#c33;animation:spin 1s linear infinite}@keyframes spin{to{transform:translateX(400px) rotate(360deg)}}</style><div id=box></div>`,
  ),
);
const pagePort = await freePort();
await new Promise((resolve) => page.listen(pagePort, '127.0.0.1', resolve));
const port = await freePort();
const apiPort = await freePort();
const grid = coord(['run', '--plugin', 'webdriver', ...[`proxy.port=${port}`, `api.port=${apiPort}`, `storage.folder=${folder}`, 'orchestrator.slots=2'].flatMap((s) => ['--set', `webdriver.${s}`])]);
const done = async () => {
  grid.kill('SIGTERM');
  await Promise.race([grid.exited, new Promise((r) => setTimeout(r, 10_000))]);
  grid.kill('SIGKILL');
  page.close();
  rmSync(folder, { recursive: true, force: true });
};
process.once('SIGINT', () => void done().then(() => process.exit(130)));
await grid.waitFor((l) => l.msg === 'ready', 90_000);
const callGrid = (method, path, body) => call(port, method, path, body);

/** CPU ms of the grid process and of its children it has reaped (ffmpeg, chromedriver): utime, stime, cutime, cstime. */
function gridCpuMs() {
  const f = readFileSync(`/proc/${grid.child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 10;
}
const sorted = (xs) => [...xs].sort((a, b) => a - b);
const pct = (xs, p) => sorted(xs)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

const fresh = () => ({ create: [], title: [], still: [], seconds: 0 });
const results = { off: fresh(), on: fresh() };
async function oneSession(kind) {
  const caps = kind === 'on' ? { 'se:recordVideo': true } : {};
  const t0 = performance.now();
  const created = await callGrid('POST', '/session', newSessionBody(caps));
  results[kind].create.push(performance.now() - t0);
  if (created.status !== 200) throw new Error(`session not created: ${JSON.stringify(created.body)}`);
  const id = created.body.value.sessionId;
  const started = performance.now();
  for (const [path, into] of [['/animated', 'title'], ['/still', 'still']]) {
    await callGrid('POST', `/session/${id}/url`, { url: `http://127.0.0.1:${pagePort}${path}` });
    for (let i = 0; i < COMMANDS; i++) {
      const s = performance.now();
      await callGrid('GET', `/session/${id}/title`);
      results[kind][into].push(performance.now() - s);
    }
  }
  results[kind].seconds += (performance.now() - started) / 1000;
  await callGrid('DELETE', `/session/${id}`);
}

// warm-up: the first sessions start drivers and page caches for both kinds
await oneSession('off');
await oneSession('on');
for (const kind of ['off', 'on']) results[kind] = fresh();
const cpu = { off: 0, on: 0 };
for (let round = 0; round < ROUNDS; round++) {
  for (const kind of round % 2 ? ['on', 'off'] : ['off', 'on']) {
    const before = gridCpuMs();
    await oneSession(kind);
    // a recorded session's ffmpeg is reaped (and its CPU counted) once the file is finished
    if (kind === 'on') await new Promise((r) => setTimeout(r, 1500));
    cpu[kind] += gridCpuMs() - before;
  }
  console.error(`round ${round + 1}/${ROUNDS} done`);
}
const videos = readdirSync(folder).filter((f) => f.endsWith('.mp4')).map((f) => ({
  bytes: statSync(join(folder, f)).size,
  seconds: Number(execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', join(folder, f)]).toString()),
}));
const videoSeconds = videos.reduce((a, v) => a + v.seconds, 0);
const load = loadavg()[0].toFixed(1);
await done();

const ms = (x) => `${x.toFixed(Math.abs(x) < 10 ? 3 : 0)} ms`;
const m = (kind, what, p) => pct(results[kind][what], p);
const rows = [
  ['session creation (POST /session), median', m('off', 'create', 0.5), m('on', 'create', 0.5)],
  [`getTitle p50 (${COMMANDS * ROUNDS} per kind, animated page)`, m('off', 'title', 0.5), m('on', 'title', 0.5)],
  ['getTitle p90, animated page', m('off', 'title', 0.9), m('on', 'title', 0.9)],
  [`getTitle p50 (${COMMANDS * ROUNDS} per kind, still page)`, m('off', 'still', 0.5), m('on', 'still', 0.5)],
  ['getTitle p90, still page', m('off', 'still', 0.9), m('on', 'still', 0.9)],
];
const cpuPerSecond = { off: cpu.off / results.off.seconds, on: cpu.on / results.on.seconds };
const out = `# Screen recording's cost, ${new Date().toISOString().slice(0, 10)} (one run on this machine, ${cpus().length} cores, 1-min load average ${load} at the end)

| measure | recording off | recording on | added |
|---|---:|---:|---:|
${rows.map(([name, off, on]) => `| ${name} | ${ms(off)} | ${ms(on)} | ${on - off >= 0 ? '+' : ''}${ms(on - off)} |`).join('\n')}
| CPU of the grid process and its children per second of session (ffmpeg included) | ${cpuPerSecond.off.toFixed(0)} ms | ${cpuPerSecond.on.toFixed(0)} ms | +${(cpuPerSecond.on - cpuPerSecond.off).toFixed(0)} ms |
| video size per recorded second (MP4, H.264 ultrafast, 10 fps, 1280×720 max) | | ${(videos.reduce((a, v) => a + v.bytes, 0) / 1024 / videoSeconds).toFixed(0)} KiB (${videos.length} videos, ${videoSeconds.toFixed(0)} s by ffprobe) | |

- Standalone grid (\`coord run --plugin webdriver\`, embedded backend), ${ROUNDS} rounds; each round serves one
  session without and one with \`se:recordVideo: true\` (alternating which goes first); each opens a page
  whose box animates without pause (Chromium sends frames all the time: the worst case) and reads its title
  ${COMMANDS} times in a row, then a page that does not change (the usual case between commands), ${COMMANDS} times.
- The node starts recording beside the new session, not before answering it (the DevTools connection and
  Page.startScreencast take ~0.1–0.2 s), so session creation waits for nothing more; ffmpeg starts with the first frame.
- The CPU column counts Chromium's frame encoding only where it runs in the grid's process tree
  (chromedriver's Chromium is not reaped by the grid, so its screencast work is not in it).
- Run: \`npx tsc -p . && node bench/webdriver-recording.mjs\` (ROUNDS, COMMANDS to change the counts).
`;
writeFileSync(RESULT, out);
console.log(out);
