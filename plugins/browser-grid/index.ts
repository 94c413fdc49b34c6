// browser-grid: a Playwright browser grid coordinated through Redis.
// Clients: chromium.connect('ws://HOST:8080/?browser=chromium').
// The folder: roles/ (worker, proxy, reaper), proxy/ (the proxy's parts: a
// client's upgrade and session, HTTP requests, leases), admission/ (selection,
// queue, versions on demand), relay/ (dial and pipe), cdp/ (DevTools-protocol
// clients), bidi/ (WebDriver BiDi clients, each a Firefox of its own),
// worker/ (browser servers, Playwright versions, video), foreign/
// (playwright-distributed's workers); scripts.ts runs the Lua scripts of lua/.
import { findUp, type Plugin } from '../../entries/plugin.ts';
import { checkTiming, configEnv, configSchema, type BrowserGridConfig } from './config.ts';
import { contract, type BrowserGridKeys } from './contract.ts';
import { commands } from './commands.ts';

const plugin: Plugin<BrowserGridConfig, BrowserGridKeys> = {
  name: 'browser-grid',
  version: '0.1.0',
  coord: '^0.1.0',
  description: 'A Playwright browser grid: proxies, browser workers and a reaper coordinated through Redis',
  contract,
  scripts: findUp(import.meta.url, 'plugins/browser-grid/lua'),
  config: { schema: configSchema, env: configEnv, check: checkTiming },
  // Each role's code is imported when the role starts: loading the plugin (coord --help, coord plugins) stays cheap.
  roles: {
    worker: async (ctx) => (await import('./roles/worker.ts')).workerRole(ctx),
    proxy: async (ctx) => (await import('./roles/proxy.ts')).proxyRole(ctx),
    reaper: async (ctx) => (await import('./roles/reaper.ts')).reaperRole(ctx),
  },
  defaultRoles: ['worker', 'proxy'],
  scenarios: async () => (await import('./scenarios.ts')).scenarios,
  commands,
};

export default plugin;
