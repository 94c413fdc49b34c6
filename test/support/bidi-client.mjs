// A Puppeteer WebDriver BiDi client in a process of its own, driven over
// stdin/stdout, one JSON object a line. It runs in plain Node, without the
// test runner's TypeScript loader: that loader resolves chromium-bidi's
// package exports wrongly ('BidiMapper.js.js'), and Puppeteer's BiDi code
// imports chromium-bidi.
//   node bidi-client.mjs WS_URL   prints {connected, version, ms} or {error}
//   {"cmd":"page","url":U}        opens U: {title, evaluated}
//   {"cmd":"pages"}               {urls} of its open pages
//   {"cmd":"close"|"disconnect"}  closes its browser or leaves it, then exits
import { createInterface } from 'node:readline';
import puppeteer from 'puppeteer-core';

const say = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
const started = Date.now();
let browser;
try {
  browser = await puppeteer.connect({ browserWSEndpoint: process.argv[2], protocol: 'webDriverBiDi', protocolTimeout: 120_000 });
} catch (error) {
  say({ error: error.message });
  process.exit(0);
}
say({ connected: true, version: await browser.version(), ms: Date.now() - started });
for await (const line of createInterface({ input: process.stdin })) {
  const { cmd, url } = JSON.parse(line);
  try {
    if (cmd === 'page') {
      const tab = await browser.newPage();
      await tab.goto(url);
      say({ title: await tab.title(), evaluated: await tab.evaluate(() => `${document.querySelector('h1').textContent} ${6 * 7}`) });
    } else if (cmd === 'pages') {
      say({ urls: (await browser.pages()).map((p) => p.url()) });
    } else if (cmd === 'close' || cmd === 'disconnect') {
      await browser[cmd]();
      say({ done: cmd });
      process.exit(0);
    }
  } catch (error) {
    say({ error: error.message });
  }
}
