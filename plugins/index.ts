// The plugins that come with coord, imported only when used so a process
// loads just the plugin it runs. `coord run --plugin NAME` looks names up here;
// `--plugin ./path/to/plugin.js` imports a file instead (cli/load-plugin.ts).
import type { Plugin } from '../entries/plugin.ts';

export const builtinPlugins: Record<string, () => Promise<Plugin>> = {
  'browser-grid': async () => (await import('./browser-grid/index.ts')).default,
  webdriver: async () => (await import('./webdriver/index.ts')).default,
  'load-test': async () => (await import('./load-test/index.ts')).default,
  obniz: async () => (await import('./obniz/index.ts')).default,
};
