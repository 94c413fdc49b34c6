// What --plugin or modules: name: a module path, or else a plugin name or an
// npm package. Its own file so that reading a deployment file's plugin names
// (cli/deployment.ts, on every command given --config) does not load the
// plugin loader and the role runtime behind it.

/** Whether `spec` is a module path ('./x.js', '/abs', 'file:…', 'x.ts', '.') rather than a name. */
export function isPluginPath(spec: string): boolean {
  return /^(\.{1,2}[\\/]|[\\/]|file:)/.test(spec) || /\.(m?js|m?ts)$/.test(spec) || spec === '.' || spec === '..';
}
