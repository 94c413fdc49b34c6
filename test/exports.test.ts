// Build check, as Hono keeps one: the package's public API is the list below,
// entry by entry. Each entry of package.json's export map is resolved as a
// user's import would resolve it, and every name it exports — followed through
// its re-exports by the TypeScript checker, types included — must be listed
// here: a new export fails until it is added on purpose. The npm package
// (package.json, built files in dist/) and the Deno one (deno.json, the
// sources) export the same entry points, at the same version, and every
// package the code imports at run time is declared for npm and mapped for
// Deno at the same version range.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import t from 'tap';
import ts from 'typescript';
import { buildIfStale } from './support/build.ts';
import { root } from './support/cli.ts';

t.before(() => buildIfStale());

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  exports: Record<string, { types: string; default: string }>;
  bin: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const denoJson = JSON.parse(readFileSync(join(root, 'deno.json'), 'utf8')) as {
  version: string;
  exports: Record<string, string>;
  imports: Record<string, string>;
};

/** The plugin kit: 'coordkit/plugin' exports these names, and 'coordkit' re-exports them. */
const KIT = [
  'ApiKeyCommandsOptions', 'ApiKeyRecord', 'ApiKeys', 'Arg', 'Backend', 'BlockingConnection', 'ChannelBuilders', 'ChannelSpec', 'Clock', 'Command', 'CommandTools', 'ConfigError', 'ConformanceScenario', 'ConnectionError',
  'ContractError', 'ContractSpec', 'CoordError', 'CoordErrorCode', 'CoordErrorOptions', 'GlobalConfig', 'HashKeySpec', 'JsonSchema', 'KeyBuilder', 'KeyBuilders',
  'KeyInput', 'KeyParams', 'KeySpec', 'ListKeySpec', 'LogLevel', 'Logger', 'ModuleLoadError', 'Plugin', 'PluginCommand', 'PluginError', 'PubSubMessage',
  'RedisType', 'Reply', 'ReplyError', 'Role', 'RoleContext', 'RoleContextParts', 'RoleFactory', 'ScriptArg', 'ScriptCall', 'ScriptError', 'ScriptKey',
  'ScriptRunner', 'ScriptShape', 'SetKeySpec', 'StartError', 'StopSignal', 'StreamKeySpec', 'StringKeySpec', 'Subscriber', 'TtlRule', 'TypedCall',
  'TypedContext', 'TypedScripts', 'UrlError', 'UsageError', 'ValueSchema', 'ZsetKeySpec', 'announceListener', 'apiKeyCommands', 'channelBuilders', 'defineContract',
  'environment', 'escapeGlob', 'findExecutable', 'findUp', 'importModule', 'keyBuilders', 'lazyModule', 'loadScriptDir', 'memoryLogger', 'optionList',
  'optionText', 'patternGlob', 'patternRegex', 'roleContext', 'silentLogger', 'systemClock', 'withDeadline', 'writeStderr',
];

/** The public names of each entry (values and types), sorted. */
const PUBLIC: Record<string, string[]> = {
  '.': [
    ...KIT,
    'ConfigInput', 'CoordConfig', 'RegisteredPlugin', 'createBackend', 'loadConfig', 'registerPlugin', 'scriptTypesSource', 'startProcess', 'writeScriptTypes',
  ],
  './plugin': KIT,
  './embed': [
    'AdapterName', 'ConfigFlag', 'DependencyContainer', 'LogOptions', 'OpenBackend', 'ProcessHandle', 'RunningRole', 'StartOptions', 'adapterNames',
    'configSchema', 'connectBackend', 'coordVersion', 'createLogger', 'parseSetFlag', 'processContainer', 'tokens',
  ],
  './adapter': ['BackendCapabilities', 'BackendFactory', 'BackendOptions', 'BackendState', 'HostPort', 'ParsedUrl', 'ScriptSource', 'mask', 'parseRedisUrl'],
  './load-test': ['Resource', 'ResourceFactory', 'Scenario', 'Step', 'VirtualUser', 'defineScenario'],
  './conformance': [
    'AdapterSuiteOptions', 'ContractSuiteOptions', 'Deviation', 'DeviationKind', 'KeySnapshot', 'ScenarioContextOptions', 'SectionOptions', 'SnapshotOptions',
    'SuiteTest', 'adapterSuite', 'checkSnapshot', 'contractSuite', 'formatDeviations', 'matchEntry', 'pluginConfig', 'pluginScenarios', 'scenarioContext',
    'snapshotKeyspace',
  ],
  './adapters/ioredis': ['createIoredisBackend'],
  './adapters/node-redis': ['createNodeRedisBackend'],
  './adapters/embedded': ['createEmbeddedBackend'],
};

/** Code entries of the export map (./package.json is there for tools that read it). */
const entries = Object.entries(pkg.exports).filter(([key]) => key !== './package.json');

/** The source an export-map entry's types come from: ./dist/entries/coordkit.d.ts → ./entries/coordkit.ts. */
function sourceOf(entry: { types: string }): string {
  return entry.types.replace(/^\.\/dist\//, './').replace(/\.d\.ts$/, '.ts');
}

t.test('the export map: no wildcard, an entry for each audience', async (t) => {
  t.same(Object.keys(pkg.exports).sort(), [...Object.keys(PUBLIC), './package.json'].sort(), 'the listed entries and nothing else');
  t.notOk(Object.keys(pkg.exports).some((key) => key.includes('*')), 'no wildcard: internal files are not importable');
  t.equal(pkg.name, 'coordkit');
});

t.test("each entry exports exactly its listed names, followed through every re-export, types included", async (t) => {
  const files = entries.map(([, built]) => join(root, sourceOf(built)));
  const parsed = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
  const program = ts.createProgram(files, { ...parsed.options, noEmit: true });
  const checker = program.getTypeChecker();
  for (const [key, built] of entries) {
    const source = program.getSourceFile(join(root, sourceOf(built)))!;
    const symbols = checker.getExportsOfModule(checker.getSymbolAtLocation(source)!);
    t.same(symbols.map((s) => s.name).sort(), [...PUBLIC[key]!].sort(), `${key}: the listed names (add a new export to PUBLIC on purpose)`);
    const values = symbols.filter((s) => (s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s).flags & ts.SymbolFlags.Value).map((s) => s.name);
    // Resolved as a user's `import 'coordkit/…'` is (the package imports itself by name), from dist/.
    const loaded = (await import(`coordkit${key.slice(1)}`)) as Record<string, unknown>;
    t.same(Object.keys(loaded).sort(), values.sort(), `${key}: the built module has the value exports`);
  }
});

t.test('each entry runs from the bundle (dist/bundle/, scripts/bundle.ts), and all entries share one copy of each module', async (t) => {
  for (const [key, entry] of entries) {
    t.match(entry.default, /^\.\/dist\/bundle\/[\w-]+\.js$/, `${key}: bundled`);
    t.ok(existsSync(join(root, entry.default)), `${key}: ${entry.default} is built`);
    t.ok(existsSync(join(root, entry.types)), `${key}: ${entry.types} is built`);
  }
  t.same(pkg.bin, { coord: 'dist/bundle/coord.js' }, 'the bin is the bundled CLI');
  // a plugin's error, made with the class coordkit/plugin exports, is the class the CLI and coordkit check against
  const kit = (await import('coordkit/plugin')) as Record<string, unknown>;
  const main = (await import('coordkit')) as Record<string, unknown>;
  const conformance = (await import('coordkit/conformance')) as Record<string, unknown>;
  t.equal(kit.ConfigError, main.ConfigError, 'coordkit and coordkit/plugin: one ConfigError');
  t.equal(kit.defineContract, main.defineContract, 'one defineContract');
  t.ok(typeof conformance.contractSuite === 'function', 'the conformance entry loads');
});

t.test('npm and Deno export the same entry points, and Deno maps the package name to them', async (t) => {
  t.same(Object.keys(denoJson.exports).sort(), entries.map(([key]) => key).sort(), 'the same subpaths');
  for (const [key, built] of entries) {
    t.equal(denoJson.exports[key], sourceOf(built), `${key}: deno.json points at the source of ${built}`);
    t.ok(existsSync(join(root, sourceOf(built))), `${key}: ${sourceOf(built)} exists`);
    t.equal(denoJson.imports[`coordkit${key.slice(1)}`], sourceOf(built), `coordkit${key.slice(1)}: the import map gives plugins the same module`);
  }
});

t.test("one name, one entry: no name is exported by two entries (but 'coordkit' re-exports the plugin kit)", async (t) => {
  const seen = new Map<string, string>();
  for (const [entry, names] of Object.entries(PUBLIC)) {
    if (entry === './plugin') continue;
    for (const name of names) {
      t.notOk(seen.has(name), `${name} is exported by ${entry} only`, { also: seen.get(name) });
      seen.set(name, entry);
    }
  }
});

t.test('the same version', async (t) => {
  t.equal(denoJson.version, pkg.version);
});

/** Every package imported at run time by the shipped code (type-only imports are erased). */
function runtimeImports(): Map<string, string> {
  const found = new Map<string, string>(); // package → a file that imports it
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
        const text = readFileSync(path, 'utf8');
        const statics = [...text.matchAll(/^\s*(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
        const dynamics = [...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1]!);
        // Packages core/lazy-module.ts requires on first use: lazyModule<T>('name').
        const lazy = [...text.matchAll(/\blazyModule<[^;\n]*?>\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1]!);
        for (const specifier of [...statics, ...dynamics, ...lazy]) {
          if (specifier.startsWith('.') || specifier.startsWith('node:')) continue;
          const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
          if (!found.has(name)) found.set(name, relative(root, path));
        }
      }
    }
  };
  for (const dir of ['core', 'entries', 'cli', 'adapters', 'plugins', 'conformance']) visit(join(root, dir));
  return found;
}

/**
 * Packages imported only on Node, only by one feature, and only when that
 * feature is used: projects that use the feature install them as dev
 * dependencies, and Deno never imports them.
 */
const OPTIONAL_ON_NODE: Record<string, string> = {};

t.test('every package the code imports is declared for npm and mapped for Deno', async (t) => {
  const imports = runtimeImports();
  t.ok(imports.has('cac') && imports.has('pino'), 'the scan finds the imports');
  t.ok(imports.has('pino-pretty') && imports.has('ajv-formats'), 'and the packages required on first use (lazyModule)');
  for (const [name, file] of imports) {
    if (OPTIONAL_ON_NODE[name]) {
      t.ok(pkg.devDependencies[name], `${name} (imported by ${file}) is in package.json devDependencies: ${OPTIONAL_ON_NODE[name]}`);
      continue;
    }
    const range = pkg.dependencies[name];
    t.ok(range, `${name} (imported by ${file}) is in package.json dependencies`);
    t.equal(denoJson.imports[name], `npm:${name}@${range}`, `${name} is mapped in deno.json at the same range`);
  }
});
