// Node module hooks (module.register) that let the compiled CLI import a
// plugin written in TypeScript: Node 20 cannot run .ts files, so each .ts/.mts
// module is transpiled as it loads (types stripped, not checked) with the
// `typescript` package — coord's own when it has one, else the one in the
// project coord runs in. The plugin's own relative .ts imports load the same
// way. Deno, and a Node started with a TypeScript loader, never get here.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface LoadResult {
  format?: string | null;
  source?: string | ArrayBuffer | Uint8Array;
  shortCircuit?: boolean;
}
type NextLoad = (url: string, context?: unknown) => LoadResult | Promise<LoadResult>;
type TypeScript = typeof import('typescript');

const TS = /\.m?ts$/;

/** The `typescript` package's entry, from coord's folder or the working directory; undefined when neither has it. */
export function typescriptUrl(): string | undefined {
  for (const base of [import.meta.url, pathToFileURL(join(process.cwd(), 'noop.js')).href]) {
    try {
      return pathToFileURL(createRequire(base).resolve('typescript')).href;
    } catch {
      // not installed there
    }
  }
  return undefined;
}

let typescript: Promise<TypeScript> | undefined;

export async function load(url: string, context: unknown, nextLoad: NextLoad): Promise<LoadResult> {
  const path = url.startsWith('file:') ? fileURLToPath(url.split('?')[0]!) : '';
  if (!TS.test(path) || path.endsWith('.d.ts')) return nextLoad(url, context);
  typescript ??= (async () => {
    const at = typescriptUrl();
    if (!at) throw new Error(`${path}: Node needs the typescript package to load .ts files (npm install --save-dev typescript)`);
    const module = (await import(at)) as TypeScript & { default?: TypeScript };
    return module.default ?? module;
  })();
  const ts = await typescript;
  const output = ts.transpileModule(await readFile(path, 'utf8'), {
    fileName: path,
    reportDiagnostics: true,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, inlineSourceMap: true, inlineSources: true, isolatedModules: true },
  });
  const problem = output.diagnostics?.find((d) => d.category === ts.DiagnosticCategory.Error);
  if (problem) {
    const at = problem.file && problem.start !== undefined ? problem.file.getLineAndCharacterOfPosition(problem.start) : undefined;
    throw new SyntaxError(`${at ? `${path}:${at.line + 1}:${at.character + 1}` : path}: ${ts.flattenDiagnosticMessageText(problem.messageText, ' ')}`);
  }
  return { format: 'module', source: output.outputText, shortCircuit: true };
}
