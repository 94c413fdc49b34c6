// The plugins whose scripts.gen.ts `npm run script-types` writes (see core/script-types.ts):
// folder (relative to the package) → the interface it declares.
export const SCRIPT_TYPE_TARGETS: Readonly<Record<string, string>> = {
  'plugins/browser-grid': 'BrowserGridScripts',
  'plugins/webdriver': 'WebDriverScripts',
  'plugins/load-test': 'LoadTestScripts',
  'plugins/obniz': 'ObnizScripts',
  'examples/cron': 'CronScripts',
  'templates/plugin': 'Scripts',
};
