// The WebDriver grid's engine profiles without a browser session: what a node
// asks each driver for (its options capability filled in, other vendors' and
// the grid's own capabilities left out, webSocketUrl only to a BiDi driver),
// which engines an orchestrator offers (named, or auto: those this host has),
// and Firefox as soon as a geckodriver is on PATH: its stereotype from the
// real firefox-esr, its options key; refused in words where there is none.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { loadConfig } from '../core/config.ts';
import plugin from '../plugins/webdriver/index.ts';
import type { WebDriverConfig } from '../plugins/webdriver/config.ts';
import { browserEntry } from '../plugins/webdriver/node/browsers.ts';
import { driverCapabilities } from '../plugins/webdriver/node/driver-capabilities.ts';
import { engineProfiles, offeredEngines } from '../plugins/webdriver/node/engines.ts';
import { findExecutable } from '../core/executable.ts';

const orchestrator = (set: Record<string, unknown> = {}): WebDriverConfig['orchestrator'] => {
  const flags = Object.entries(set).map(([path, value]) => ({ path: `webdriver.orchestrator.${path}`, value }));
  return (loadConfig({ plugins: [plugin], env: {}, flags }).plugins.webdriver as WebDriverConfig).orchestrator;
};

t.test('what a node asks each driver for', async (t) => {
  const profiles = engineProfiles(orchestrator());
  const matched = {
    browserName: 'MiniBrowser',
    browserVersion: '2.50',
    platformName: 'linux',
    webSocketUrl: true,
    'goog:chromeOptions': { args: ['--x'] },
    'se:name': 'a test',
    'webkitgtk:browserOptions': { args: ['--automation', '--extra'] },
  };
  t.same(
    driverCapabilities(matched, profiles.webkitgtk),
    { browserName: 'MiniBrowser', 'webkitgtk:browserOptions': { args: ['--automation', '--extra'], binary: profiles.webkitgtk.browserBinary } },
    'WebKitGTK: its own options with the binary filled in; no webSocketUrl (no BiDi), no other vendor, no grid-only capability',
  );
  t.same(
    driverCapabilities({ browserName: 'firefox', webSocketUrl: true, 'goog:chromeOptions': {} }, profiles.firefox),
    { browserName: 'firefox', webSocketUrl: true, 'moz:firefoxOptions': { binary: 'firefox-esr', args: ['-headless'] } },
    'Firefox: moz:firefoxOptions filled in, webSocketUrl kept (geckodriver serves BiDi)',
  );
  const chrome = driverCapabilities({ browserName: 'chrome', 'goog:chromeOptions': { args: ['--headless=old'] } }, profiles.chrome);
  t.same((chrome['goog:chromeOptions'] as { args: string[] }).args[0], '--headless=old', "Chrome: the client's flag wins over the default of the same name");
  t.notOk((chrome['goog:chromeOptions'] as { args: string[] }).args.includes('--headless=new'));
});

t.test('which engines an orchestrator offers', async (t) => {
  t.same(offeredEngines(orchestrator()).map((e) => e.name), ['chrome'], 'by default chrome, as before');
  const bin = mkdtempSync(join(tmpdir(), 'coord-engines-'));
  t.teardown(() => rmSync(bin, { recursive: true, force: true }));
  const fake = (name: string) => {
    writeFileSync(join(bin, name), '#!/bin/sh\nexit 0\n');
    chmodSync(join(bin, name), 0o755);
    return join(bin, name);
  };
  t.throws(
    () => offeredEngines(orchestrator({ browsers: ['firefox'], 'firefox.driverBinary': join(bin, 'geckodriver') })),
    { message: new RegExp(`webdriver\\.orchestrator\\.browsers names firefox, but this host has no geckodriver at ${bin}/geckodriver`) },
    'firefox named without a geckodriver: refused, naming what is missing',
  );
  const auto = offeredEngines(orchestrator({ browsers: ['auto'], 'firefox.driverBinary': join(bin, 'geckodriver') })).map((e) => e.name);
  t.notOk(auto.includes('firefox'), `auto does not advertise firefox without its driver (${auto.join(', ')})`);
  const geckodriver = fake('geckodriver');
  const firefox = findExecutable('firefox-esr');
  if (!firefox) return void t.fail('firefox-esr missing: install it with: bash scripts/install-deps.sh test (apt-get install firefox-esr)');
  const withDriver = orchestrator({ browsers: ['auto'], 'firefox.driverBinary': geckodriver });
  const engines = offeredEngines(withDriver);
  t.ok(engines.some((e) => e.name === 'firefox'), 'with a geckodriver on hand, auto offers firefox');
  const entry = await browserEntry(engines.find((e) => e.name === 'firefox')!, withDriver.xvfb);
  t.match(entry, /^firefox::\d+\.\d+(\.\d+)?$/, `its stereotype from firefox-esr --version: ${entry}`);
});

t.test('WebKitGTK stereotype: MiniBrowser --version on a display of its own', async (t) => {
  const config = orchestrator();
  if (!findExecutable(config.webkitgtk.browserBinary) || !findExecutable(config.xvfb)) {
    return void t.fail('MiniBrowser or Xvfb missing: install them with: bash scripts/install-deps.sh test (apt-get install webkit2gtk-driver xvfb)');
  }
  const previous = process.env.DISPLAY;
  delete process.env.DISPLAY;
  t.teardown(() => {
    if (previous !== undefined) process.env.DISPLAY = previous;
  });
  t.match(await browserEntry(engineProfiles(config).webkitgtk, config.xvfb), /^MiniBrowser::\d+\.\d+\.\d+$/, 'with no DISPLAY set');
});
