// A Node module hook (module.register) that lets the compiled coord import a
// user's module written in TypeScript: Node 20 cannot run .ts files, so each
// .ts/.mts module is transpiled as it loads (types stripped, not checked) with
// sucrase, a dependency of coord — so it needs no TypeScript install and works
// whatever TypeScript version the user's project has. The module's own
// relative .ts imports load the same way. Registered by typescript-modules.ts;
// Deno, and a Node started with a TypeScript loader, never get here.
import { readFile } from 'node:fs/promises';
import type { LoadHook } from 'node:module';
import { fileURLToPath } from 'node:url';
import { transform } from 'sucrase';

const TS = /\.m?ts$/;

/**
 * The module's JavaScript: types and type-only imports removed, enums and
 * parameter properties compiled, lines kept where they were (so stack traces
 * point into the .ts file). A syntax error throws `file:line:col: what`.
 */
export function transpile(source: string, path: string): string {
  try {
    const out = transform(source, { transforms: ['typescript'], filePath: path, sourceMapOptions: { compiledFilename: path } });
    const map = Buffer.from(JSON.stringify({ ...out.sourceMap, sources: [path], sourcesContent: [source] })).toString('base64');
    return `${out.code}\n//# sourceMappingURL=data:application/json;base64,${map}`;
  } catch (err) {
    throw syntaxError(err, path);
  }
}

/** sucrase's "Error transforming F: Unexpected token (3:7)" as "F:3:7: Unexpected token". */
export function syntaxError(err: unknown, path: string): Error {
  const e = err as { message?: string; loc?: { line: number; column: number } };
  const what = (e.message ?? String(err)).replace(/^Error transforming [^:]*: /, '').replace(/ \(\d+:\d+\)$/, '');
  return new SyntaxError(e.loc ? `${path}:${e.loc.line}:${e.loc.column}: ${what}` : `${path}: ${what}`);
}

export const load: LoadHook = async (url, context, nextLoad) => {
  const path = url.startsWith('file:') ? fileURLToPath(url.split('?')[0]!) : '';
  if (!TS.test(path) || path.endsWith('.d.ts')) return nextLoad(url, context);
  return { format: 'module', source: transpile(await readFile(path, 'utf8'), path), shortCircuit: true };
};
