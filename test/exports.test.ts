// Build check, as Hono keeps one: the npm package (package.json, built files in
// dist/) and the Deno one (deno.json, the sources) export the same entry
// points, at the same version, and every package the code imports at run time
// is declared for npm and mapped for Deno at the same version range.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import t from 'tap';
import { root } from './support/cli.ts';

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  version: string;
  exports: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const denoJson = JSON.parse(readFileSync(join(root, 'deno.json'), 'utf8')) as {
  version: string;
  exports: Record<string, string>;
  imports: Record<string, string>;
};

/** npm's export map with each `*` expanded over the source files it matches. */
function npmExports(): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, target] of Object.entries(pkg.exports)) {
    if (!key.includes('*')) {
      out.set(key, target);
      continue;
    }
    // './adapters/*' → './dist/adapters/*.js': one entry per adapters/*.ts source.
    const sourceDir = target.replace(/^\.\/dist\//, '').split('*')[0]!;
    for (const file of readdirSync(join(root, sourceDir)).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))) {
      const name = file.slice(0, -3);
      out.set(key.replace('*', name), target.replace('*', name));
    }
  }
  return out;
}

/** The source a built file comes from: ./dist/core/index.js → ./core/index.ts. */
function sourceOf(built: string): string {
  return built.replace(/^\.\/dist\//, './').replace(/\.js$/, '.ts');
}

t.test('npm and Deno export the same entry points', async (t) => {
  const npm = npmExports();
  t.same([...Object.keys(denoJson.exports)].sort(), [...npm.keys()].sort(), 'the same subpaths');
  for (const [key, built] of npm) {
    t.equal(denoJson.exports[key], sourceOf(built), `${key}: deno.json points at the source of ${built}`);
    t.ok(existsSync(join(root, sourceOf(built))), `${key}: ${sourceOf(built)} exists`);
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
        for (const specifier of [...statics, ...dynamics]) {
          if (specifier.startsWith('.') || specifier.startsWith('node:')) continue;
          const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
          if (!found.has(name)) found.set(name, relative(root, path));
        }
      }
    }
  };
  for (const dir of ['core', 'cli', 'adapters', 'plugins', 'conformance']) visit(join(root, dir));
  return found;
}

/**
 * Packages imported only on Node, only by one feature, and only when that
 * feature is used: projects that use the feature install them as dev
 * dependencies, and Deno never imports them.
 */
const OPTIONAL_ON_NODE: Record<string, string> = {
  tap: '`coord conformance` and the exported suites run on it',
  typescript: 'the load-test plugin transpiles .ts scenarios with it on Node',
};

t.test('every package the code imports is declared for npm and mapped for Deno', async (t) => {
  const imports = runtimeImports();
  t.ok(imports.has('cac') && imports.has('pino'), 'the scan finds the imports');
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
