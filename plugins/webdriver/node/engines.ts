// The browsers an orchestrator can offer, each an engine profile: the
// browserName clients send for it (as Selenium's clients spell it), the
// capability its options go in, the driver a node starts, the browser binary
// and arguments the node fills in where the client gave none, whether it needs
// a display (the node then starts Xvfb for it), and whether the grid can
// record its sessions. Chrome/Chromium is served through chromedriver,
// WebKitGTK through WebKitWebDriver (its MiniBrowser has no headless mode),
// Firefox through geckodriver.
import { ConfigError, findExecutable } from '../../../entries/plugin.ts';
import type { WebDriverConfig } from '../config.ts';

export const ENGINE_NAMES = ['chrome', 'webkitgtk', 'firefox'] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];

export interface Engine {
  readonly name: EngineName;
  /** What clients send as browserName, and the orchestrator registers ('MiniBrowser::2.50.6'). */
  readonly browserName: string;
  /** The vendor capability the browser's binary and arguments go in. */
  readonly optionsKey: string;
  readonly driverBinary: string;
  readonly browserBinary: string;
  readonly browserArgs: readonly string[];
  /** The driver's browser draws on an X display: the node runs it under an Xvfb of its own. */
  readonly needsDisplay: boolean;
  /** Sessions can be recorded (from the browser's DevTools screencast). */
  readonly recordable: boolean;
  /** Its driver serves WebDriver BiDi (webSocketUrl); without it a client's webSocketUrl is left out, and the client goes on with classic commands. */
  readonly bidi: boolean;
  /** How to read the browser's version: its --version output, printed with or without a display. */
  readonly versionPattern: RegExp;
}

type OrchestratorConfig = WebDriverConfig['orchestrator'];

/** Each engine as this config sets it up (binaries and arguments), whether or not it is offered. */
export function engineProfiles(config: OrchestratorConfig): Record<EngineName, Engine> {
  return {
    chrome: {
      name: 'chrome',
      browserName: 'chrome',
      optionsKey: 'goog:chromeOptions',
      driverBinary: config.driverBinary,
      browserBinary: config.browserBinary,
      browserArgs: config.browserArgs,
      needsDisplay: false,
      recordable: true,
      bidi: true,
      versionPattern: /(\d+\.\d+\.\d+\.\d+)/,
    },
    webkitgtk: {
      name: 'webkitgtk',
      browserName: 'MiniBrowser',
      optionsKey: 'webkitgtk:browserOptions',
      driverBinary: config.webkitgtk.driverBinary,
      browserBinary: config.webkitgtk.browserBinary,
      browserArgs: config.webkitgtk.browserArgs,
      needsDisplay: true,
      recordable: false,
      bidi: false,
      versionPattern: /WebKitGTK (\d+(?:\.\d+)+)/,
    },
    firefox: {
      name: 'firefox',
      browserName: 'firefox',
      optionsKey: 'moz:firefoxOptions',
      driverBinary: config.firefox.driverBinary,
      browserBinary: config.firefox.browserBinary,
      browserArgs: config.firefox.browserArgs,
      needsDisplay: false,
      recordable: false,
      bidi: true,
      versionPattern: /(\d+\.\d+(?:\.\d+)?)/,
    },
  };
}

/** The engine of a matched browserName, among every profile (a node serves what its orchestrator matched). */
export function engineFor(config: OrchestratorConfig, browserName: unknown): Engine {
  const engine = Object.values(engineProfiles(config)).find((e) => e.browserName === browserName);
  if (!engine) throw new ConfigError([`webdriver: no engine serves browserName ${JSON.stringify(browserName)}; engines: ${ENGINE_NAMES.join(', ')}`]);
  return engine;
}

/** What an engine needs on this host and is missing (driver, browser, Xvfb), as words; empty when it can run. */
export function missingFor(engine: Engine, xvfb: string): string[] {
  const missing: string[] = [];
  const where = (binary: string) => (binary.includes('/') ? `at ${binary}` : `named "${binary}" on PATH`);
  if (!findExecutable(engine.driverBinary)) missing.push(`no ${engine.driverBinary.split('/').pop()} ${where(engine.driverBinary)}`);
  if (!findExecutable(engine.browserBinary)) missing.push(`no browser ${where(engine.browserBinary)}`);
  if (engine.needsDisplay && !findExecutable(xvfb)) missing.push(`no Xvfb ${where(xvfb)} (its browser needs a display)`);
  return missing;
}

/**
 * The engines this orchestrator offers: those `orchestrator.browsers` names,
 * each refused at start with what it misses; with 'auto', every engine whose
 * driver, browser (and Xvfb, where one is needed) this host has, as
 * Selenium's node offers the drivers it finds.
 */
export function offeredEngines(config: OrchestratorConfig): Engine[] {
  const profiles = engineProfiles(config);
  const auto = config.browsers.includes('auto');
  const named = config.browsers.filter((b): b is EngineName => b !== 'auto');
  const offered: Engine[] = [];
  const problems: string[] = [];
  for (const name of ENGINE_NAMES) {
    const engine = profiles[name];
    const missing = missingFor(engine, config.xvfb);
    if (named.includes(name)) {
      if (missing.length) problems.push(`webdriver.orchestrator.browsers names ${name}, but this host has ${missing.join(', ')}: install it, set its binaries (webdriver.orchestrator.${name === 'chrome' ? 'driverBinary / browserBinary' : `${name}.driverBinary / ${name}.browserBinary`}), or leave ${name} out`);
      else offered.push(engine);
    } else if (auto && !missing.length) offered.push(engine);
  }
  if (problems.length) throw new ConfigError(problems);
  if (!offered.length) {
    const each = ENGINE_NAMES.map((name) => `${name}: ${missingFor(profiles[name], config.xvfb).join(', ')}`);
    throw new ConfigError([`webdriver.orchestrator.browsers is auto and this host has no browser it can serve (${each.join('; ')}): install chromium and chromium-driver, or name the binaries`]);
  }
  return offered;
}
