// browser-grid: a Playwright browser grid coordinated through Redis.
// Clients: chromium.connect('ws://HOST:8080/?browser=chromium').
import { findUp } from '../../core/paths.ts';
import type { Plugin } from '../../core/plugin.ts';
import { checkTiming, configEnv, configSchema, type BrowserGridConfig } from './config.ts';
import { contract, type BrowserGridKeys } from './contract.ts';
import { proxyRole } from './roles/proxy.ts';
import { reaperRole } from './roles/reaper.ts';
import { workerRole } from './roles/worker.ts';
import { scenarios } from './scenarios.ts';
import { commands } from './commands.ts';

const plugin: Plugin<BrowserGridConfig, BrowserGridKeys> = {
  name: 'browser-grid',
  version: '0.1.0',
  coord: '^0.1.0',
  description: 'A Playwright browser grid: proxies, browser workers and a reaper coordinated through Redis',
  contract,
  scripts: findUp(import.meta.url, 'plugins/browser-grid/lua'),
  config: { schema: configSchema, env: configEnv, check: checkTiming },
  roles: { worker: workerRole, proxy: proxyRole, reaper: reaperRole },
  defaultRoles: ['worker', 'proxy'],
  scenarios,
  commands,
};

export default plugin;
