// Debian's Python Selenium (python3-selenium, run by /usr/bin/python3) against
// a standalone grid with a token, as a Selenium Grid user would drive it:
// webdriver.Remote with the token as Basic auth's password in the URL (and
// refused without it), classic commands on a local page (the page receives
// exactly the session id and text the client sent), an upload through
// LocalFileDetector (POST /session/{id}/se/file) whose bytes the page reads
// back (Python sends the zip as base64 with line breaks, which se/file
// accepts), and quit giving the slot back. The Python script is
// test/fixtures/webdriver/selenium_client.py; it prints one JSON line.
// (Python Selenium 4.8.3 has no managed-downloads API, so downloads are tested
// with selenium-webdriver in webdriver-extensions.test.ts only.)
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { foldersRoot } from '../plugins/webdriver/node/session-folder.ts';
import { freePort } from './support/redis.ts';
import { until } from './support/until.ts';
import { chromeOptions, gridId, startWebdriver, w3c } from './support/webdriver.ts';

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Debian's python3, not a pyenv or venv one earlier on PATH: only it sees python3-selenium. */
const PYTHON = '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('./fixtures/webdriver/selenium_client.py', import.meta.url));
const TOKEN = 'python-token-3';
const bearer = { authorization: `Bearer ${TOKEN}` };

interface Refusal {
  type: string;
  message: string;
}
interface Seen {
  seleniumVersion: string;
  refusedWithoutToken: Refusal | null;
  refusedWrongToken: Refusal | null;
  statusAfterRefusals: { available: number; active: number };
  sessionId: string;
  browserName: string;
  statusDuringSession: { available: number; active: number };
  title: string;
  runSeenByPage: string;
  scriptSum: number;
  heading: string;
  typed: string;
  readBack: string;
  uploadWrote: string;
  uploadRead: string;
  uploadName: string;
  uploadLocalPath: string;
  uploadGridPaths: string[];
  quit: boolean;
}

const check = spawnSync(PYTHON, ['-c', 'import selenium'], { encoding: 'utf8' });
if (check.status !== 0) {
  const why = check.error ? check.error.message : check.stderr.trim().split('\n').pop() || `exit ${check.status}`;
  t.fail(`python3-selenium is missing: ${PYTHON} -c 'import selenium' failed (${why}); install it with: bash scripts/install-deps.sh test (apt-get install python3-selenium)`);
} else {
  await pythonAgainstGrid();
}

async function pythonAgainstGrid(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'coord-wd-python-'));
  /** Every path the page server was asked for, as it arrived. */
  const requested: string[] = [];
  const pagePort = await freePort();
  const pages = createServer((req, res) => {
    requested.push(req.url ?? '');
    if (req.url === '/upload') {
      // shows the bytes of the file chosen in the input, as hex, and its name
      return res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>upload</title>
<input type="file" id="file"><pre id="out"></pre>
<script>document.getElementById('file').onchange = async (e) => {
  const file = e.target.files[0];
  const bytes = new Uint8Array(await file.arrayBuffer());
  const out = document.getElementById('out');
  out.dataset.name = file.name;
  out.dataset.hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
};</script>`);
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><title>python form</title><h1>hello Python</h1><input id="text">`);
  });
  await new Promise<void>((resolve) => pages.listen(pagePort, '127.0.0.1', resolve));

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const grid = await startWebdriver({ redis: 'embedded://webdriver-python', options: { proxy: { port, token: TOKEN }, api: { port: 0 }, orchestrator: { slots: 1 } } });
  t.teardown(async () => {
    await grid.handle.stop('test done');
    pages.closeAllConnections();
    pages.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const status = async () => {
    const value = (await w3c(base, 'GET', '/status', undefined, bearer)).body.value as { slots: { available: number }; sessions: { active: number } };
    return { available: value.slots.available, active: value.sessions.active };
  };
  await until('the grid has its one slot free', async () => (await status()).available === 1, 30_000, 100);

  /** Runs the Python client; resolves with its exit code, stdout and stderr. */
  const runPython = () =>
    new Promise<{ exit: string; stdout: string; stderr: string }>((resolve) => {
      const config = { grid: `127.0.0.1:${port}`, token: TOKEN, page: `http://127.0.0.1:${pagePort}`, binary: chromeOptions.binary, args: chromeOptions.args, dir };
      // no HTTP proxy from the environment: Selenium's client would send 127.0.0.1 traffic through it
      const env = { ...process.env, http_proxy: '', HTTP_PROXY: '', https_proxy: '', HTTPS_PROXY: '', no_proxy: '*' };
      execFile(PYTHON, [SCRIPT, JSON.stringify(config)], { env, timeout: 50_000, encoding: 'utf8' }, (error, stdout, stderr) =>
        resolve({ exit: !error ? '0' : error.killed ? `killed after 50 s (${error.signal})` : String(error.code ?? error.signal), stdout, stderr }),
      );
    });

  t.test('python3-selenium through the grid: refused without the token; with it, commands, an upload through se/file, quit', async (t) => {
    const run = await runPython();
    if (run.exit !== '0') {
      // the error's last line in the message, Python's whole stderr (its traceback) below it
      const last = run.stderr.trim().split('\n').pop() || 'no stderr';
      t.fail(`the Python Selenium client (python3-selenium) failed (exit ${run.exit}): ${last}`, { stderr: run.stderr, stdout: run.stdout });
      return;
    }
    const seen = JSON.parse(run.stdout.trim().split('\n').pop()!) as Seen;
    t.comment(`python3-selenium ${seen.seleniumVersion}`);

    for (const [what, refusal] of [
      ['no token', seen.refusedWithoutToken],
      ['a wrong token', seen.refusedWrongToken],
    ] as const) {
      t.ok(refusal, `${what}: webdriver.Remote raised`);
      t.equal(refusal?.type, 'WebDriverException', `${what}: a WebDriverException`);
      t.match(refusal?.message, /missing or wrong token/, `${what}: the message is the grid's 401 reason: ${refusal?.message}`);
    }
    t.same(seen.statusAfterRefusals, { available: 1, active: 0 }, 'the refused attempts made no session');

    t.match(seen.sessionId, /^[0-9a-f-]{36}\.[\w-]{43}$/, 'http://user:TOKEN@host made a session, handed as ID.SECRET (Basic auth)');
    t.equal(seen.browserName, 'chrome', 'a Chrome session');
    t.same(seen.statusDuringSession, { available: 0, active: 1 }, 'it holds the one slot while it runs');

    t.equal(seen.title, 'python form', 'the title of the local page');
    t.equal(seen.runSeenByPage, seen.sessionId, 'execute_script: the page saw the session id the client put in its URL');
    t.ok(requested.includes(`/form?run=${seen.sessionId}`), 'and so did the page server');
    t.equal(seen.scriptSum, 42, 'execute_script with arguments');
    t.equal(seen.heading, 'hello Python', 'find_element and its text');
    t.match(seen.typed, seen.sessionId, 'the typed text carries the session id');
    t.equal(seen.readBack, seen.typed, 'send_keys: the input holds exactly the text typed');

    t.equal(seen.uploadGridPaths.length, 1, 'send_keys of a local path uploaded it once through se/file');
    const inFolder = new RegExp(`^${escapeRegExp(foldersRoot())}/\\d+-${gridId(seen.sessionId)}/uploads/upload-[^/]+/python-upload\\.bin$`);
    t.match(seen.uploadGridPaths[0], inFolder, `and typed the path se/file answered, in the session's folder on the node: ${seen.uploadGridPaths[0]}`);
    t.not(seen.uploadGridPaths[0], seen.uploadLocalPath, 'not the local path');
    t.equal(seen.uploadName, 'python-upload.bin', 'the page got the file under its own name');
    t.ok(seen.uploadWrote.length > 512, 'the file has text and all 256 byte values');
    t.equal(seen.uploadRead, seen.uploadWrote, 'LocalFileDetector + send_keys: the page read exactly the bytes Python wrote');

    t.equal(seen.quit, true, 'driver.quit()');
    await until('the slot is free again after quit', async () => {
      const s = await status();
      return s.available === 1 && s.active === 0;
    }, 15_000, 100);
    t.pass('the slot is free again after quit');
  });
}
